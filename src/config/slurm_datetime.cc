// Follows Slurm's src/common/parse_time.c (parse_time, _get_delta, _get_date, _get_time) for the
// forms it keeps; see the header for the forms it refuses and why.
#include "config/slurm_datetime.h"

#include <string>

#include "common/slurm_time.h"
#include "config/value_text.h"

namespace berth::config {
namespace {

struct Unit {
  const char* name;
  int64_t seconds;
};

// Slurm's unit names; like Slurm, no abbreviations ("h", "min").
constexpr Unit kUnits[] = {
    {"seconds", 1}, {"second", 1},   {"minutes", 60}, {"minute", 60},    {"hours", 3600},
    {"hour", 3600}, {"days", 86400}, {"day", 86400},  {"weeks", 604800}, {"week", 604800},
};

constexpr const char* kZoneForms[] = {"today",     "tomorrow", "midnight", "noon",
                                      "elevenses", "fika",     "teatime"};

constexpr std::string_view kSupported =
    "use now[+N[seconds|minutes|hours|days|weeks]], uts<seconds since the epoch> or "
    "YYYY-MM-DD[THH:MM[:SS]] (UTC)";

Status Bad(std::string why) {
  return Status::InvalidArgument(std::move(why));
}

bool IsDigit(char c) {
  return c >= '0' && c <= '9';
}

// Reads exactly `min`..`max` digits at `pos`; advances `pos`. -1 when there are too few.
int64_t Digits(std::string_view s, size_t& pos, size_t min, size_t max) {
  size_t start = pos;
  int64_t v = 0;
  while (pos < s.size() && pos - start < max && IsDigit(s[pos])) v = v * 10 + (s[pos++] - '0');
  return pos - start < min ? -1 : v;
}

// Days since 1970-01-01 of a proleptic Gregorian date (Howard Hinnant's days_from_civil). A day
// past the month's end rolls over into the next month, as mktime does for Slurm.
int64_t DaysFromCivil(int64_t y, int64_t m, int64_t d) {
  y -= m <= 2 ? 1 : 0;
  const int64_t era = (y >= 0 ? y : y - 399) / 400;
  const int64_t yoe = y - era * 400;
  const int64_t doy = (153 * (m + (m > 2 ? -3 : 9)) + 2) / 5 + d - 1;
  const int64_t doe = yoe * 365 + yoe / 4 - yoe / 100 + doy;
  return era * 146097 + doe - 719468;
}

// "now", "now+N[unit]", "now-N[unit]"; `rest` is what follows "now".
Result<Time> ParseRelative(std::string_view rest, Time now) {
  if (rest.empty()) return now;
  if (rest[0] != '+' && rest[0] != '-') return Bad("expected '+' or '-' after 'now'");
  int64_t sign = rest[0] == '-' ? -1 : 1;
  size_t pos = 1;
  int64_t count = Digits(rest, pos, 1, 12);
  if (count < 0) return Bad("expected a number after 'now" + std::string(1, rest[0]) + "'");
  if (pos < rest.size() && IsDigit(rest[pos])) return Bad("number too large");
  std::string_view unit = rest.substr(pos);
  int64_t seconds = 1;
  if (!unit.empty()) {
    seconds = 0;
    for (const Unit& u : kUnits) {
      if (EqualsIgnoreCase(unit, u.name)) seconds = u.seconds;
    }
    if (seconds == 0) {
      return Bad("unknown unit '" + std::string(unit) +
                 "' (use seconds, minutes, hours, days or weeks)");
    }
  }
  if (count > kMaxSlurmDuration / seconds) return Bad("too far from now");
  return now + sign * count * seconds;
}

// "uts<N>": seconds since the epoch; Slurm wants at least 1000000.
Result<Time> ParseEpoch(std::string_view digits) {
  Result<int64_t> v = ParseInteger(digits, 1000000, INT64_C(1) << 52);
  if (!v.ok()) return Bad("expected uts and at least 1000000 seconds since the epoch");
  return *v;
}

// "YYYY-MM-DD[THH:MM[:SS]]" in UTC.
Result<Time> ParseCalendar(std::string_view s) {
  size_t pos = 0;
  int64_t year = Digits(s, pos, 4, 4);
  bool ok = year >= 0 && pos < s.size() && s[pos++] == '-';
  int64_t month = ok ? Digits(s, pos, 2, 2) : -1;
  ok = ok && month >= 1 && month <= 12 && pos < s.size() && s[pos++] == '-';
  int64_t day = ok ? Digits(s, pos, 1, 2) : -1;
  ok = ok && day >= 1 && day <= 31;
  if (!ok) return Bad("expected YYYY-MM-DD with a month 01-12 and a day 1-31");
  int64_t hour = 0, minute = 0, second = 0;
  if (pos < s.size()) {
    if (s[pos] != 'T' && s[pos] != 't' && s[pos] != ' ') return Bad("expected 'T' after the date");
    ++pos;
    hour = Digits(s, pos, 1, 2);
    ok = hour >= 0 && hour <= 23 && pos < s.size() && s[pos++] == ':';
    minute = ok ? Digits(s, pos, 2, 2) : -1;
    ok = ok && minute >= 0 && minute <= 59;
    if (ok && pos < s.size()) {
      ok = s[pos++] == ':';
      second = ok ? Digits(s, pos, 2, 2) : -1;
      ok = ok && second >= 0 && second <= 59;
    }
    if (!ok || pos != s.size()) return Bad("expected HH:MM or HH:MM:SS after 'T'");
  }
  return DaysFromCivil(year, month, 1) * 86400 + (day - 1) * 86400 + hour * 3600 + minute * 60 +
         second;
}

bool NeedsTimeZone(std::string_view s) {
  for (const char* form : kZoneForms) {
    if (s.size() >= std::string_view(form).size() &&
        EqualsIgnoreCase(s.substr(0, std::string_view(form).size()), form)) {
      return true;
    }
  }
  return !s.empty() && IsDigit(s[0]);  // HH:MM, MMDD[YY], MM/DD[/YY], MM.DD[.YY]
}

}  // namespace

Result<Time> ParseSlurmDateTime(std::string_view text, Time now) {
  if (text.size() >= 3 && EqualsIgnoreCase(text.substr(0, 3), "now")) {
    return ParseRelative(text.substr(3), now);
  }
  if (text.size() >= 3 && EqualsIgnoreCase(text.substr(0, 3), "uts")) {
    return ParseEpoch(text.substr(3));
  }
  if (text.size() >= 5 && IsDigit(text[0]) && text[4] == '-') return ParseCalendar(text);
  if (NeedsTimeZone(text)) {
    return Bad("this form depends on the local time zone, which berth does not use; " +
               std::string(kSupported));
  }
  return Bad(std::string("unknown time format; ") + std::string(kSupported));
}

}  // namespace berth::config
