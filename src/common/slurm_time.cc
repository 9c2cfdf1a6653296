#include "common/slurm_time.h"

#include <array>
#include <cstdint>
#include <cstdio>

#include "common/strings.h"

namespace berth {
namespace {

// More digits than this in one field is certainly over kMaxSlurmDuration.
constexpr size_t kMaxFieldDigits = 12;

Status Invalid(std::string_view text, std::string_view why) {
  return Status::InvalidArgument("invalid time limit '" + std::string(text) +
                                 "': " + std::string(why));
}

// Slurm's _is_valid_timespec(): digits, at most one '-' (before any ':'), at most two ':', and
// enough digit runs for the separators.
bool IsValidTimespec(std::string_view s) {
  int digit_runs = 0;
  int dashes = 0;
  int colons = 0;
  bool in_digits = false;
  for (char c : s) {
    if (IsDigit(c)) {
      if (!in_digits) ++digit_runs;
      in_digits = true;
    } else if (c == '-') {
      in_digits = false;
      ++dashes;
      if (colons > 0) return false;
    } else if (c == ':') {
      in_digits = false;
      ++colons;
    } else {
      return false;
    }
  }
  if (digit_runs == 0 || dashes > 1 || colons > 2) return false;
  int needed = colons == 0 ? 1 : colons + 1;
  if (dashes > 0 && colons > 0) ++needed;
  return digit_runs >= needed;
}

// Splits "A-B:C:D" style text into up to four numbers. Empty fields (only "D-") read as zero.
struct Fields {
  bool has_days = false;
  int count = 0;  // numbers after the '-', or in total when there is no '-'
  std::array<int64_t, 4> value{};
};

Result<int64_t> ParseField(std::string_view field, std::string_view text) {
  if (field.size() > kMaxFieldDigits) return Invalid(text, "value too large");
  int64_t v = 0;
  for (char c : field) v = v * 10 + (c - '0');
  return v;
}

Result<Fields> SplitFields(std::string_view text) {
  Fields f;
  std::string_view rest = text;
  size_t dash = text.find('-');
  if (dash != std::string_view::npos) {
    if (dash == 0) return Invalid(text, "negative values are not allowed");
    f.has_days = true;
    BERTH_ASSIGN_OR_RETURN(f.value[0], ParseField(text.substr(0, dash), text));
    rest = text.substr(dash + 1);
    if (rest.empty()) return f;  // "D-": Slurm reads D days
  }
  size_t base = f.has_days ? 1 : 0;
  size_t start = 0;
  while (true) {
    size_t colon = rest.find(':', start);
    BERTH_ASSIGN_OR_RETURN(f.value[base + f.count],
                           ParseField(rest.substr(start, colon - start), text));
    ++f.count;
    if (colon == std::string_view::npos) break;
    start = colon + 1;
  }
  return f;
}

// Slurm's time_str2secs() after validation.
int64_t FieldsToSeconds(const Fields& f) {
  if (f.has_days) {  // days-hours:minutes:seconds, missing fields are zero
    return f.value[0] * 86400 + f.value[1] * 3600 + f.value[2] * 60 + f.value[3];
  }
  if (f.count == 3) return f.value[0] * 3600 + f.value[1] * 60 + f.value[2];
  return f.value[0] * 60 + f.value[1];  // minutes[:seconds]
}

std::string TwoDigits(int64_t v) {
  if (v >= 0 && v < 100) {  // what every clock field is: no printf (squeue prints 100,000s)
    return std::string{static_cast<char>('0' + v / 10), static_cast<char>('0' + v % 10)};
  }
  std::array<char, 24> buf{};
  std::snprintf(buf.data(), buf.size(), "%02lld", static_cast<long long>(v));
  return buf.data();
}

}  // namespace

Result<Duration> ParseTimeSeconds(std::string_view text) {
  if (text.empty()) return Invalid(text, "empty");
  if (text == "-1" || EqualsIgnoreCase(text, "INFINITE") || EqualsIgnoreCase(text, "UNLIMITED")) {
    return kInfinite;
  }
  if (!IsValidTimespec(text)) {
    return Invalid(text,
                   "expected minutes, minutes:seconds, hours:minutes:seconds, days-hours, "
                   "days-hours:minutes, days-hours:minutes:seconds or UNLIMITED");
  }
  BERTH_ASSIGN_OR_RETURN(Fields fields, SplitFields(text));
  int64_t seconds = FieldsToSeconds(fields);
  if (seconds > kMaxSlurmDuration) return Invalid(text, "value too large");
  return seconds;
}

Result<Duration> ParseTimeLimit(std::string_view text) {
  BERTH_ASSIGN_OR_RETURN(Duration seconds, ParseTimeSeconds(text));
  if (seconds == kInfinite || seconds == 0) return kInfinite;
  return (seconds + 59) / 60 * 60;
}

std::string FormatTimeLimit(Duration seconds) {
  if (seconds >= kInfinite) return "UNLIMITED";
  if (seconds < 0) return "INVALID";
  int64_t days = seconds / 86400;
  std::string hms = TwoDigits(seconds / 3600 % 24) + ":" + TwoDigits(seconds / 60 % 60) + ":" +
                    TwoDigits(seconds % 60);
  return days > 0 ? std::to_string(days) + "-" + hms : hms;
}

std::string FormatElapsed(Duration seconds) {
  constexpr Duration kYear = Duration{365} * 24 * 3600;
  if (seconds < 0 || seconds > kYear) return "INVALID";
  int64_t days = seconds / 86400;
  int64_t hours = seconds / 3600 % 24;
  std::string ms = TwoDigits(seconds / 60 % 60) + ":" + TwoDigits(seconds % 60);
  if (days > 0) return std::to_string(days) + "-" + TwoDigits(hours) + ":" + ms;
  if (hours > 0) return std::to_string(hours) + ":" + ms;
  return std::to_string(seconds / 60 % 60) + ":" + TwoDigits(seconds % 60);
}

std::string FormatTimeLimitSqueue(Duration seconds) {
  if (seconds >= kInfinite) return "UNLIMITED";
  return FormatElapsed(seconds);
}

}  // namespace berth
