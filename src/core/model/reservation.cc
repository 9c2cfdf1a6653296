#include "core/model/reservation.h"

#include <algorithm>
#include <cctype>

namespace berth::core {
namespace {

struct FlagName {
  ResvFlag flag;
  std::string_view name;
};
constexpr FlagName kFlagNames[] = {
    {kResvMaint, "MAINT"},   {kResvIgnoreJobs, "IGNORE_JOBS"}, {kResvDaily, "DAILY"},
    {kResvWeekly, "WEEKLY"}, {kResvSpecNodes, "SPEC_NODES"},
};

std::string Upper(std::string_view s) {
  std::string out(s);
  for (char& c : out) c = static_cast<char>(std::toupper(static_cast<unsigned char>(c)));
  return out;
}

}  // namespace

Duration ResvSpec::Period() const {
  if (Has(kResvDaily)) return 86400;
  if (Has(kResvWeekly)) return 7 * 86400;
  return 0;
}

bool ResvSpec::Allows(std::string_view user, std::string_view account) const {
  return std::find(users.begin(), users.end(), user) != users.end() ||
         std::find(accounts.begin(), accounts.end(), account) != accounts.end();
}

std::string ResvFlagsText(uint32_t flags) {
  std::string out;
  for (const FlagName& f : kFlagNames) {
    if ((flags & f.flag) == 0) continue;
    if (!out.empty()) out += ',';
    out += f.name;
  }
  return out;
}

Result<uint32_t> ParseResvFlags(std::string_view text) {
  uint32_t flags = 0;
  size_t pos = 0;
  while (pos <= text.size()) {
    size_t comma = text.find(',', pos);
    if (comma == std::string_view::npos) comma = text.size();
    std::string word = Upper(text.substr(pos, comma - pos));
    pos = comma + 1;
    if (word.empty()) continue;
    if (word == "MAINTENANCE") word = "MAINT";
    bool known = false;
    for (const FlagName& f : kFlagNames) {
      if (word == f.name) {
        flags |= f.flag;
        known = true;
      }
    }
    if (!known) return Status::InvalidArgument("Error parsing reservation request: Flags=" + word);
  }
  if ((flags & kResvDaily) && (flags & kResvWeekly)) {
    return Status::InvalidArgument("Error parsing reservation request: DAILY and WEEKLY together");
  }
  return flags;
}

ResvSpec NextOccurrence(ResvSpec spec, Time now) {
  Duration period = spec.Period();
  if (period <= 0 || spec.end > now || spec.end >= kInfinite) return spec;
  int64_t steps = (now - spec.end) / period + 1;
  spec.start += steps * period;
  spec.end += steps * period;
  return spec;
}

}  // namespace berth::core
