#include "slurm/report_format.h"

#include <algorithm>
#include <cmath>
#include <cstdio>

#include "common/strings.h"
#include "slurm/view_options.h"

namespace berth::slurm {
namespace {

std::string CsvField(const std::string& s) {
  if (s.find_first_of(",\"\r\n") == std::string::npos) return s;
  std::string out = "\"";
  for (char c : s) {
    if (c == '"') out += '"';
    out += c;
  }
  return out + "\"";
}

std::string Joined(const std::vector<std::string>& cells, ReportFormat format) {
  std::string out;
  for (size_t i = 0; i < cells.size(); ++i) {
    if (i > 0) out += format == ReportFormat::kCsv ? "," : "|";
    out += format == ReportFormat::kCsv ? CsvField(cells[i]) : cells[i];
  }
  return out + "\n";
}

std::string Aligned(const ReportTable& t, bool noheader) {
  std::vector<size_t> width(t.header.size(), 0);
  auto measure = [&](const std::vector<std::string>& cells) {
    for (size_t i = 0; i < cells.size() && i < width.size(); ++i) {
      width[i] = std::max(width[i], cells[i].size());
    }
  };
  measure(t.header);
  for (const auto& row : t.rows) measure(row);
  auto line = [&](const std::vector<std::string>& cells) {
    std::string out;
    for (size_t i = 0; i < width.size(); ++i) {
      const std::string cell = i < cells.size() ? cells[i] : "";
      const std::string pad(width[i] - std::min(width[i], cell.size()), ' ');
      if (i > 0) out += "  ";
      const bool right = i < t.right.size() && t.right[i];
      out += right ? pad + cell : cell + pad;
    }
    while (!out.empty() && out.back() == ' ') out.pop_back();
    return out + "\n";
  };
  std::string out;
  if (!noheader) {
    out += line(t.header);
    std::vector<std::string> dashes;
    for (size_t w : width) dashes.emplace_back(w, '-');
    out += line(dashes);
  }
  for (const auto& row : t.rows) out += line(row);
  return out;
}

}  // namespace

std::optional<ReportFormat> ParseReportFormat(std::string_view name) {
  const std::string lower = ToLower(name);
  if (lower == "table") return ReportFormat::kTable;
  if (lower == "csv") return ReportFormat::kCsv;
  if (lower == "json") return ReportFormat::kJson;
  return std::nullopt;
}

std::string RenderReportTable(const ReportTable& t, ReportFormat format, bool noheader) {
  if (format == ReportFormat::kTable) return Aligned(t, noheader);
  std::string out = noheader ? "" : Joined(t.header, format);
  for (const auto& row : t.rows) out += Joined(row, format);
  return out;
}

std::string FixedTwo(double x) {
  if (std::fabs(x) < 0.005) x = 0;  // no "-0.00"
  char buf[64];
  std::snprintf(buf, sizeof(buf), "%.2f", x);
  return buf;
}

std::string Percent(double fraction, ReportFormat format) {
  char buf[64];
  std::snprintf(buf, sizeof(buf), "%.1f", fraction * 100.0);
  return format == ReportFormat::kCsv ? std::string(buf) : std::string(buf) + "%";
}

double RoundForJson(double x) {
  return std::round(x * 1e4) / 1e4;
}

}  // namespace berth::slurm
