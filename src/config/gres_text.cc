#include "config/gres_text.h"

#include "common/strings.h"
#include "config/value_text.h"

namespace berth::config {
namespace {

Status BadEntry(std::string_view entry, std::string_view why) {
  return Status::InvalidArgument("bad GRES entry '" + std::string(entry) +
                                 "': " + std::string(why));
}

bool IsCount(std::string_view field) {
  return !field.empty() && field[0] >= '0' && field[0] <= '9';
}

Result<GresEntry> ParseEntry(std::string_view entry, GresSyntax syntax) {
  std::string_view body = entry;
  if (syntax == GresSyntax::kJobRequest && body.size() > 5 &&
      EqualsIgnoreCase(body.substr(0, 5), "gres/")) {
    body.remove_prefix(5);
  }
  std::vector<std::string_view> fields = Split(body, ':');
  GresEntry g;
  g.name = std::string(fields[0]);
  if (g.name.empty()) return BadEntry(entry, "empty name");
  if (fields.size() > 1 && IsCount(fields.back())) {
    Result<int64_t> count = ParseSuffixedCount(fields.back());
    if (!count.ok()) return BadEntry(entry, count.status().message());
    g.count = *count;
    fields.pop_back();
  }
  for (size_t i = 1; i < fields.size(); ++i) {
    std::string_view f = fields[i];
    if (syntax == GresSyntax::kNodeConfig && EqualsIgnoreCase(f, "no_consume")) continue;
    if (f.empty()) return BadEntry(entry, "empty field");
    if (!g.type.empty()) return BadEntry(entry, "expected name[:type][:count]");
    g.type = std::string(f);
  }
  return g;
}

}  // namespace

Result<std::vector<GresEntry>> ParseGresList(std::string_view text, GresSyntax syntax) {
  std::vector<GresEntry> out;
  for (std::string_view entry : Split(text, ',')) {
    BERTH_ASSIGN_OR_RETURN(GresEntry g, ParseEntry(entry, syntax));
    out.push_back(std::move(g));
  }
  return out;
}

}  // namespace berth::config
