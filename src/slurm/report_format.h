// The output formats of `berth report`: one table of text cells printed as an aligned table, as
// CSV (RFC 4180) or as sreport's -P lines ('|' between fields, none at the end).
//
// Thread safety: all functions are pure.
#ifndef BERTH_SLURM_REPORT_FORMAT_H_
#define BERTH_SLURM_REPORT_FORMAT_H_

#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace berth::slurm {

enum class ReportFormat { kTable, kCsv, kParsable, kJson };

// "table", "csv", "json" (any case); nullopt for anything else. (kParsable comes from -P.)
std::optional<ReportFormat> ParseReportFormat(std::string_view name);

struct ReportTable {
  std::vector<std::string> header;
  std::vector<bool> right;  // per column: right-justified in the aligned table (numbers)
  std::vector<std::vector<std::string>> rows;
};

// The table in `format` (not kJson), each line ending in '\n'; without the header line(s) when
// `noheader`. kTable: columns two spaces apart, a dashed line under the header, no trailing
// spaces. kCsv: fields quoted when they hold ',', '"' or a line break. kParsable: fields joined
// by '|' as they are.
std::string RenderReportTable(const ReportTable& t, ReportFormat format, bool noheader);

// Numbers as the reports print them: "12.50" (two decimals), "12.5%" (one decimal, with the sign
// in the table and -P, without it in CSV).
std::string FixedTwo(double x);
std::string Percent(double fraction, ReportFormat format);

// A number rounded to 4 decimals, for JSON (keeps 1/3 from printing as 0.3333333333333333).
double RoundForJson(double x);

}  // namespace berth::slurm

#endif  // BERTH_SLURM_REPORT_FORMAT_H_
