// Follows Slurm's src/common/parse_time.c (parse_time, _get_delta, _get_date, _get_time) for the
// forms it keeps; see the header for the forms it refuses and why.
#include "config/slurm_datetime.h"

#include <time.h>

#include <cctype>
#include <climits>
#include <string>

#include "common/slurm_time.h"
#include "common/strings.h"
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
    if (StartsWithIgnoreCase(s, form)) return true;
  }
  return !s.empty() && IsDigit(s[0]);  // HH:MM, MMDD[YY], MM/DD[/YY], MM.DD[.YY]
}

}  // namespace

Result<Time> ParseSlurmDateTime(std::string_view text, Time now) {
  if (StartsWithIgnoreCase(text, "now")) {
    return ParseRelative(text.substr(3), now);
  }
  if (StartsWithIgnoreCase(text, "uts")) {
    return ParseEpoch(text.substr(3));
  }
  if (text.size() >= 5 && IsDigit(text[0]) && text[4] == '-') return ParseCalendar(text);
  if (NeedsTimeZone(text)) {
    return Bad("this form depends on the local time zone, which berth does not use; " +
               std::string(kSupported));
  }
  return Bad(std::string("unknown time format; ") + std::string(kSupported));
}

namespace {

// A broken-down local time (month 0-11, year as tm_year: years since 1900), as parse_time keeps
// it.
struct Civil {
  int year = -1, month = -1, mday = -1, hour = -1, minute = -1, second = 0;
};

Civil CivilOf(Time local) {
  int64_t days = local >= 0 ? local / 86400 : (local - 86399) / 86400;
  int64_t secs = local - days * 86400;
  // Howard Hinnant's civil_from_days.
  int64_t z = days + 719468;
  const int64_t era = (z >= 0 ? z : z - 146096) / 146097;
  const int64_t doe = z - era * 146097;
  const int64_t yoe = (doe - doe / 1460 + doe / 36524 - doe / 146096) / 365;
  const int64_t doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
  const int64_t mp = (5 * doy + 2) / 153;
  const int64_t d = doy - (153 * mp + 2) / 5 + 1;
  const int64_t m = mp < 10 ? mp + 3 : mp - 9;
  const int64_t y = yoe + era * 400 + (m <= 2 ? 1 : 0);
  Civil c;
  c.year = static_cast<int>(y - 1900);
  c.month = static_cast<int>(m - 1);
  c.mday = static_cast<int>(d);
  c.hour = static_cast<int>(secs / 3600);
  c.minute = static_cast<int>(secs / 60 % 60);
  c.second = static_cast<int>(secs % 60);
  return c;
}

// slurm_mktime: local broken-down time to UTC (fields may overflow, as mktime allows).
Time ToUtc(const Civil& c, const UtcOffset& zone) {
  Time local = DaysFromCivil(c.year + 1900, c.month + 1, 1) * 86400 +
               (c.mday - 1) * int64_t{86400} + c.hour * int64_t{3600} + c.minute * 60 + c.second;
  Time guess = local - zone(local);
  return local - zone(guess);
}

// Slurm's parse_time, step by step; positions are ints because Slurm reports -1 for some
// errors.
class LocalTimeParser {
 public:
  LocalTimeParser(std::string_view text, Time now, const UtcOffset& zone)
      : s_(text), now_(now), zone_(zone), today_(CivilOf(now + zone(now))) {}

  Result<Time> Parse(int* error_pos) {
    if (StartsWithIgnoreCase(s_, "uts")) return Epoch(error_pos);
    for (pos_ = 0; At(pos_) != '\0' && At(pos_) != '\n'; ++pos_) {
      if (!Token()) return Fail(error_pos);
    }
    if (t_.hour == -1 && t_.month == -1) {
      *error_pos = kNoTimePosition;
      return Status::InvalidArgument("no time given");
    }
    Complete();
    return ToUtc(t_, zone_);
  }

 private:
  char At(int i) const { return i >= 0 && static_cast<size_t>(i) < s_.size() ? s_[i] : '\0'; }
  static bool Digit(char c) { return c >= '0' && c <= '9'; }

  Result<Time> Fail(int* error_pos) {
    *error_pos = pos_;
    return Status::InvalidArgument("Invalid time specification (pos=" + std::to_string(pos_) +
                                   "): " + std::string(s_));
  }

  Result<Time> Epoch(int* error_pos) {
    Result<int64_t> v = ParseInteger(s_.substr(3), 1000000, INT64_C(1) << 52);
    if (!v.ok()) {
      pos_ = 0;
      return Fail(error_pos);
    }
    return *v;
  }

  void SetDate(const Civil& c) {
    t_.month = c.month;
    t_.mday = c.mday;
    t_.year = c.year;
  }
  void SetClock(int hour) {
    t_.hour = hour;
    t_.minute = 0;
    t_.second = 0;
  }

  // One token at pos_; leaves pos_ on its last character. False on an error.
  bool Token() {
    char c = At(pos_);
    if (c == ' ' || c == '\t' || c == '-' || c == 'T') return true;
    struct Word {
      std::string_view name;
      int hour;  // -1: a day, not a time
    };
    static constexpr Word kWords[] = {{"today", -1}, {"tomorrow", -2}, {"midnight", 0},
                                      {"noon", 12},  {"fika", 15},     {"teatime", 16}};
    for (const Word& w : kWords) {
      if (!StartsWithIgnoreCase(s_, w.name, static_cast<size_t>(pos_))) continue;
      if (w.hour == -1) {
        SetDate(today_);
      } else if (w.hour == -2) {
        SetDate(CivilOf(now_ + 86400 + zone_(now_ + 86400)));
      } else {
        SetClock(w.hour);
      }
      pos_ += static_cast<int>(w.name.size()) - 1;
      return true;
    }
    if (StartsWithIgnoreCase(s_, "now", static_cast<size_t>(pos_))) return Now();
    if (!Digit(c)) return false;
    if (At(pos_ + 1) == ':' || At(pos_ + 2) == ':') return Clock();
    return Date();
  }

  // "now", "now+N[unit]", "now-N[unit]" (Slurm advances its position oddly here; kept).
  bool Now() {
    int64_t delta = 0;
    for (int i = pos_ + 3;; ++i) {
      char c = At(i);
      if (c == '+' || c == '-') {
        pos_ += i;
        if (!Delta(&delta)) return false;
        if (c == '-') delta = -delta;
        break;
      }
      if (c == ' ' || c == '\t') continue;
      if (c == '\0' || c == '\n') {
        pos_ += i - 1;
        break;
      }
      pos_ += i;
      return false;
    }
    Civil later = CivilOf(now_ + delta + zone_(now_ + delta));
    t_ = Civil{later.year, later.month, later.mday, later.hour, later.minute, later.second};
    return true;
  }

  // The count and unit after "now+" (Slurm's _get_delta).
  bool Delta(int64_t* delta) {
    struct Unit {
      std::string_view name;
      int64_t seconds;
    };
    static constexpr Unit kDeltaUnits[] = {
        {"seconds", 1}, {"second", 1},   {"minutes", 60}, {"minute", 60},    {"hours", 3600},
        {"hour", 3600}, {"days", 86400}, {"day", 86400},  {"weeks", 604800}, {"week", 604800}};
    int64_t count = 0;
    int digits = 0;
    int offset = pos_ + 1;
    for (; At(offset) != '\0' && At(offset) != '\n'; ++offset) {
      if (IsSpace(At(offset))) continue;
      bool unit = false;
      for (const Unit& u : kDeltaUnits) {
        if (StartsWithIgnoreCase(s_, u.name, static_cast<size_t>(offset))) {
          offset += static_cast<int>(u.name.size());
          count *= u.seconds;
          unit = true;
          break;
        }
      }
      if (unit) break;
      if (Digit(At(offset)) && count < kMaxSlurmDuration) {
        count = count * 10 + (At(offset) - '0');
        ++digits;
        continue;
      }
      pos_ = offset - 1;
      return false;
    }
    if (digits == 0) return false;
    pos_ = offset - 1;
    *delta = count;
    return true;
  }

  // "HH:MM[:SS] [AM|PM]" (Slurm's _get_time).
  bool Clock() {
    int offset = pos_;
    auto fail = [&](int back) {
      pos_ = offset - back;
      return false;
    };
    int hour = At(offset++) - '0';
    if (At(offset) != ':') {
      if (!Digit(At(offset))) return fail(0);
      hour = hour * 10 + (At(offset++) - '0');
    }
    if (hour > 23) return fail(2);
    if (At(offset) != ':') return fail(0);
    ++offset;
    int minute = 0, second = 0;
    if (!TwoDigits(offset, &minute)) return fail(0);
    if (minute > 59) return fail(2);
    if (At(offset) == ':') {
      ++offset;
      if (!TwoDigits(offset, &second)) return fail(0);
      if (second > 59) return fail(2);
    }
    while (IsSpace(At(offset))) ++offset;
    if (StartsWithIgnoreCase(s_, "pm", static_cast<size_t>(offset))) {
      hour += 12;
      if (hour > 23) {
        if (hour != 24) return fail(0);
        hour = 12;
      }
      offset += 2;
    } else if (StartsWithIgnoreCase(s_, "am", static_cast<size_t>(offset))) {
      if (hour > 11) {
        if (hour != 12) return fail(0);
        hour = 0;
      }
      offset += 2;
    }
    pos_ = offset - 1;
    t_.hour = hour;
    t_.minute = minute;
    t_.second = second;
    return true;
  }

  bool TwoDigits(int& offset, int* out) {
    if (!Digit(At(offset))) return false;
    int v = At(offset++) - '0';
    if (!Digit(At(offset))) return false;
    *out = v * 10 + (At(offset++) - '0');
    return true;
  }

  // One or two digits of a month or day; Slurm checks the first digit of a day only.
  int MonthOrDay(int& offset, bool check_first) {
    if (check_first && !Digit(At(offset))) return -1;
    int v = At(offset++) - '0';
    if (Digit(At(offset))) v = v * 10 + (At(offset++) - '0');
    return v;
  }

  // "YYYY-MM-DD", or "MMDD[YY]" with optional '/' or '.' between (Slurm's _get_date).
  bool Date() {
    int offset = pos_;
    auto fail = [&](int back) {
      pos_ = offset - back;
      return false;
    };
    if (s_.size() >= static_cast<size_t>(offset) + 7 && At(offset + 4) == '-' &&
        At(offset + 7) == '-') {
      int year = 0;
      for (int i = 0; i < 4; ++i) {
        if (!Digit(At(offset))) return fail(0);
        year = year * 10 + (At(offset++) - '0');
      }
      ++offset;  // '-'
      int month = MonthOrDay(offset, false);
      if (month < 1 || month > 12) return fail(2);
      ++offset;  // '-'
      int day = MonthOrDay(offset, true);
      if (day == -1) return fail(0);
      if (day < 1 || day > 31) return fail(2);
      pos_ = offset - 1;
      t_.month = month - 1;
      t_.mday = day;
      t_.year = year - 1900;
      return true;
    }
    int month = MonthOrDay(offset, false);
    if (month < 1 || month > 12) return fail(2);
    if (At(offset) == '.' || At(offset) == '/') ++offset;
    int day = MonthOrDay(offset, true);
    if (day == -1) return fail(0);
    if (day < 1 || day > 31) return fail(2);
    if (At(offset) == '.' || At(offset) == '/') ++offset;
    int year = 0;
    if (Digit(At(offset))) {
      year = At(offset++) - '0';
      if (!Digit(At(offset))) return fail(0);
      year = year * 10 + (At(offset++) - '0');
    }
    pos_ = offset - 1;
    t_.month = month - 1;
    t_.mday = day;
    if (year != 0) t_.year = year + 100;
    return true;
  }

  static bool Later(const Civil& a, const Civil& b) {  // a after b, by month/day/hour/minute
    if (a.month != b.month) return a.month > b.month;
    if (a.mday != b.mday) return a.mday > b.mday;
    if (a.hour != b.hour) return a.hour > b.hour;
    return a.minute > b.minute;
  }

  // Fills in what the text left out: a date's midnight, a time's next day, a date's next year.
  void Complete() {
    if (t_.hour == -1) {
      t_.hour = 0;
      t_.minute = 0;
    } else if (t_.month == -1) {
      bool today = t_.hour > today_.hour || (t_.hour == today_.hour && t_.minute > today_.minute);
      SetDate(today ? today_ : CivilOf(now_ + 86400 + zone_(now_ + 86400)));
    }
    if (t_.year == -1) t_.year = Later(t_, today_) ? today_.year : today_.year + 1;
  }

  std::string_view s_;
  Time now_;
  const UtcOffset& zone_;
  Civil today_;
  Civil t_;
  int pos_ = 0;
};

}  // namespace

UtcOffset HostTimeZone() {
  return [](Time utc) -> int64_t {
    time_t t = static_cast<time_t>(utc);
    struct tm local;
    if (localtime_r(&t, &local) == nullptr) return 0;
    return local.tm_gmtoff;
  };
}

Result<Time> ParseSlurmDateTime(std::string_view text, Time now, const UtcOffset& zone,
                                int* error_pos) {
  int ignored = 0;
  return LocalTimeParser(text, now, zone).Parse(error_pos != nullptr ? error_pos : &ignored);
}

}  // namespace berth::config
