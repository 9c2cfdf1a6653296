// IANA time zones from TZif files (time_zone.h).
#include "k8s/time_zone.h"

#include <algorithm>
#include <cctype>
#include <fstream>
#include <sstream>

namespace berth::k8s {

int64_t DaysFromCivil(int64_t y, int m, int d) {
  // Howard Hinnant's days_from_civil algorithm.
  y -= m <= 2;
  const int64_t era = (y >= 0 ? y : y - 399) / 400;
  const int64_t yoe = y - era * 400;
  const int64_t doy = (153 * (m + (m > 2 ? -3 : 9)) + 2) / 5 + d - 1;
  const int64_t doe = yoe * 365 + yoe / 4 - yoe / 100 + doy;
  return era * 146097 + doe - 719468;
}

CivilTime CivilFromSeconds(int64_t seconds) {
  int64_t days = seconds / 86400, rest = seconds % 86400;
  if (rest < 0) {
    rest += 86400;
    --days;
  }
  days += 719468;
  const int64_t era = (days >= 0 ? days : days - 146096) / 146097;
  const int64_t doe = days - era * 146097;
  const int64_t yoe = (doe - doe / 1460 + doe / 36524 - doe / 146096) / 365;
  const int64_t doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
  const int64_t mp = (5 * doy + 2) / 153;
  CivilTime c;
  c.day = static_cast<int>(doy - (153 * mp + 2) / 5 + 1);
  c.month = static_cast<int>(mp < 10 ? mp + 3 : mp - 9);
  c.year = yoe + era * 400 + (c.month <= 2);
  c.hour = static_cast<int>(rest / 3600);
  c.minute = static_cast<int>(rest / 60 % 60);
  c.second = static_cast<int>(rest % 60);
  return c;
}

int64_t SecondsFromCivil(const CivilTime& c) {
  return DaysFromCivil(c.year, c.month, c.day) * 86400 + c.hour * 3600 + c.minute * 60 + c.second;
}

int Weekday(int64_t year, int month, int day) {
  int64_t w = (DaysFromCivil(year, month, day) + 4) % 7;  // 1970-01-01 was a Thursday
  return static_cast<int>(w < 0 ? w + 7 : w);
}

namespace {

bool IsLeap(int64_t y) {
  return (y % 4 == 0 && y % 100 != 0) || y % 400 == 0;
}

int DaysInMonth(int64_t y, int m) {
  static constexpr int kDays[] = {31, 28, 31, 30, 31, 30, 31, 31, 30, 31, 30, 31};
  return m == 2 && IsLeap(y) ? 29 : kDays[m - 1];
}

// A small reader over the POSIX TZ text.
struct TzText {
  std::string_view s;
  size_t i = 0;
  bool done() const { return i >= s.size(); }
  char peek() const { return done() ? '\0' : s[i]; }

  bool Name() {
    if (peek() == '<') {
      const size_t close = s.find('>', i);
      if (close == std::string_view::npos) return false;
      i = close + 1;
      return true;
    }
    const size_t start = i;
    while (!done() && std::isalpha(static_cast<unsigned char>(s[i]))) ++i;
    return i - start >= 3;
  }
  bool Number(int* out, int max) {
    if (!std::isdigit(static_cast<unsigned char>(peek()))) return false;
    int v = 0;
    while (std::isdigit(static_cast<unsigned char>(peek()))) {
      v = v * 10 + (s[i++] - '0');
      if (v > max) return false;
    }
    *out = v;
    return true;
  }
  // [+-]hh[:mm[:ss]] in seconds.
  bool Time(int32_t* out, int max_hours) {
    int sign = 1;
    if (peek() == '+' || peek() == '-') sign = s[i++] == '-' ? -1 : 1;
    int h = 0, m = 0, sec = 0;
    if (!Number(&h, max_hours)) return false;
    if (peek() == ':') {
      ++i;
      if (!Number(&m, 59)) return false;
      if (peek() == ':') {
        ++i;
        if (!Number(&sec, 59)) return false;
      }
    }
    *out = sign * (h * 3600 + m * 60 + sec);
    return true;
  }
  bool Date(PosixTz::Date* d) {
    if (peek() == 'M') {
      ++i;
      d->kind = 'M';
      if (!Number(&d->month, 12) || d->month < 1 || peek() != '.') return false;
      ++i;
      if (!Number(&d->week, 5) || d->week < 1 || peek() != '.') return false;
      ++i;
      if (!Number(&d->weekday, 6)) return false;
    } else if (peek() == 'J') {
      ++i;
      d->kind = 'J';
      if (!Number(&d->day, 365) || d->day < 1) return false;
    } else {
      d->kind = 'D';
      if (!Number(&d->day, 365)) return false;
    }
    d->time = 7200;
    if (peek() == '/') {
      ++i;
      if (!Time(&d->time, 167)) return false;
    }
    return true;
  }
};

// The UTC instant of a rule date in `year`, its time read in the local offset `offset`.
int64_t RuleInstant(const PosixTz::Date& d, int64_t year, int32_t offset) {
  int64_t day = 0;
  if (d.kind == 'M') {
    const int first = Weekday(year, d.month, 1);
    int mday = 1 + (d.weekday - first + 7) % 7 + (d.week - 1) * 7;
    while (mday > DaysInMonth(year, d.month)) mday -= 7;
    day = DaysFromCivil(year, d.month, mday);
  } else if (d.kind == 'J') {
    day = DaysFromCivil(year, 1, 1) + d.day - 1 + (IsLeap(year) && d.day >= 60 ? 1 : 0);
  } else {
    day = DaysFromCivil(year, 1, 1) + d.day;
  }
  return day * 86400 + d.time - offset;
}

}  // namespace

Result<PosixTz> ParsePosixTz(std::string_view text) {
  PosixTz tz;
  TzText t{text};
  auto bad = [&] {
    return Status::InvalidArgument("bad POSIX TZ rule \"" + std::string(text) + "\"");
  };
  int32_t west = 0;
  if (!t.Name() || !t.Time(&west, 24)) return bad();
  tz.std_offset = -west;
  if (t.done()) return tz;
  if (!t.Name()) return bad();
  tz.has_dst = true;
  tz.dst_offset = tz.std_offset + 3600;
  if (t.peek() != ',' && !t.done()) {
    if (!t.Time(&west, 24)) return bad();
    tz.dst_offset = -west;
  }
  if (t.done()) {  // no rule: the US rules of POSIX's default
    tz.start = {'M', 3, 2, 0, 0, 7200};
    tz.end = {'M', 11, 1, 0, 0, 7200};
    return tz;
  }
  if (t.peek() != ',') return bad();
  ++t.i;
  if (!t.Date(&tz.start) || t.peek() != ',') return bad();
  ++t.i;
  if (!t.Date(&tz.end) || !t.done()) return bad();
  return tz;
}

int32_t PosixTzOffset(const PosixTz& tz, int64_t utc) {
  if (!tz.has_dst) return tz.std_offset;
  const int64_t year = CivilFromSeconds(utc + tz.std_offset).year;
  // DST from its start (read in standard time) to its end (read in DST); southern zones' DST
  // spans the new year.
  for (int64_t y : {year - 1, year, year + 1}) {
    const int64_t start = RuleInstant(tz.start, y, tz.std_offset);
    const int64_t end = RuleInstant(tz.end, y, tz.dst_offset);
    if (start < end) {
      if (utc >= start && utc < end) return tz.dst_offset;
    } else {
      const int64_t next_end = RuleInstant(tz.end, y + 1, tz.dst_offset);
      if (utc >= start && utc < next_end) return tz.dst_offset;
    }
  }
  return tz.std_offset;
}

namespace {

uint32_t Be32(std::string_view d, size_t at) {
  return (uint32_t(uint8_t(d[at])) << 24) | (uint32_t(uint8_t(d[at + 1])) << 16) |
         (uint32_t(uint8_t(d[at + 2])) << 8) | uint32_t(uint8_t(d[at + 3]));
}

int64_t Be64(std::string_view d, size_t at) {
  return static_cast<int64_t>((uint64_t(Be32(d, at)) << 32) | Be32(d, at + 4));
}

bool ValidZoneName(std::string_view name) {
  if (name.empty() || name.front() == '/' || name.back() == '/' || name == "Local") return false;
  size_t start = 0;
  while (start <= name.size()) {
    size_t end = std::min(name.find('/', start), name.size());
    std::string_view part = name.substr(start, end - start);
    if (part.empty() || part == "." || part == "..") return false;
    for (char c : part) {
      if (!std::isalnum(static_cast<unsigned char>(c)) && c != '_' && c != '-' && c != '+') {
        return false;
      }
    }
    start = end + 1;
  }
  return true;
}

}  // namespace

Result<TimeZone> TimeZone::FromTzif(std::string_view name, std::string_view data) {
  auto bad = [&] { return Status::InvalidArgument("unknown time zone " + std::string(name)); };
  constexpr size_t kHeader = 44;
  if (data.size() < kHeader || data.substr(0, 4) != "TZif") return bad();
  auto counts = [&](size_t at, uint32_t c[6]) {
    for (int k = 0; k < 6; ++k) c[k] = Be32(data, at + 20 + 4 * k);
  };
  // isutcnt, isstdcnt, leapcnt, timecnt, typecnt, charcnt
  uint32_t c[6];
  counts(0, c);
  const bool v2 = data[4] >= '2';
  size_t at = kHeader;
  int time_size = 4;
  if (v2) {
    at += size_t(c[3]) * 5 + size_t(c[4]) * 6 + c[5] + size_t(c[2]) * 8 + c[1] + c[0];
    if (data.size() < at + kHeader || data.substr(at, 4) != "TZif") return bad();
    counts(at, c);
    at += kHeader;
    time_size = 8;
  }
  const size_t need = size_t(c[3]) * (time_size + 1) + size_t(c[4]) * 6 + c[5] +
                      size_t(c[2]) * (time_size + 4) + c[1] + c[0];
  if (c[4] == 0 || data.size() < at + need) return bad();
  TimeZone tz;
  tz.name_ = std::string(name);
  const size_t times = at, indices = times + size_t(c[3]) * time_size, types = indices + c[3];
  auto type_offset = [&](uint32_t k) { return static_cast<int32_t>(Be32(data, types + 6 * k)); };
  for (uint32_t k = 0; k < c[3]; ++k) {
    const uint8_t type = static_cast<uint8_t>(data[indices + k]);
    if (type >= c[4]) return bad();
    tz.transitions_.push_back(time_size == 8 ? Be64(data, times + 8 * size_t(k))
                                             : static_cast<int32_t>(Be32(data, times + 4 * k)));
    tz.offsets_.push_back(type_offset(type));
  }
  tz.before_ = type_offset(0);
  if (v2) {
    const size_t footer = at + need;
    if (footer < data.size() && data[footer] == '\n') {
      const size_t end = data.find('\n', footer + 1);
      if (end != std::string_view::npos && end > footer + 1) {
        Result<PosixTz> rule = ParsePosixTz(data.substr(footer + 1, end - footer - 1));
        if (rule.ok()) {
          tz.footer_ = *rule;
          tz.has_footer_ = true;
        }
      }
    }
  }
  return tz;
}

Result<TimeZone> TimeZone::Load(std::string_view name, const std::string& root) {
  if (!ValidZoneName(name)) {
    return Status::InvalidArgument("unknown time zone " + std::string(name));
  }
  std::ifstream in(root + "/" + std::string(name), std::ios::binary);
  if (!in) return Status::NotFound("unknown time zone " + std::string(name));
  std::ostringstream text;
  text << in.rdbuf();
  Result<TimeZone> tz = FromTzif(name, text.str());
  if (!tz.ok()) return Status::NotFound("unknown time zone " + std::string(name));
  return tz;
}

int32_t TimeZone::OffsetAt(int64_t utc) const {
  if (transitions_.empty() || utc < transitions_.front()) {
    if (transitions_.empty() && has_footer_) return PosixTzOffset(footer_, utc);
    return before_;
  }
  if (utc >= transitions_.back() && has_footer_) return PosixTzOffset(footer_, utc);
  auto it = std::upper_bound(transitions_.begin(), transitions_.end(), utc);
  return offsets_[static_cast<size_t>(it - transitions_.begin()) - 1];
}

}  // namespace berth::k8s
