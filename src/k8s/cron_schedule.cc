// CronJob schedules (cron_schedule.h).
#include "k8s/cron_schedule.h"

#include <algorithm>
#include <cctype>
#include <charconv>
#include <cmath>
#include <map>
#include <span>
#include <string>
#include <vector>

namespace berth::k8s {

namespace {

struct Name {
  std::string_view name;
  int value;
};

struct Bounds {
  int min, max;
  std::span<const Name> names;
};

// Constant tables: nothing of them is built when a berth process starts.
constexpr Name kMonths[] = {{"jan", 1}, {"feb", 2},  {"mar", 3},  {"apr", 4},
                            {"may", 5}, {"jun", 6},  {"jul", 7},  {"aug", 8},
                            {"sep", 9}, {"oct", 10}, {"nov", 11}, {"dec", 12}};
constexpr Name kWeekdays[] = {{"sun", 0}, {"mon", 1}, {"tue", 2}, {"wed", 3},
                              {"thu", 4}, {"fri", 5}, {"sat", 6}};

std::vector<std::string_view> SplitOn(std::string_view s, char sep) {
  std::vector<std::string_view> out;
  size_t start = 0;
  while (true) {
    size_t at = s.find(sep, start);
    out.push_back(s.substr(start, at == std::string_view::npos ? s.npos : at - start));
    if (at == std::string_view::npos) return out;
    start = at + 1;
  }
}

Result<int> ParseInt(std::string_view text) {
  int v = 0;
  auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), v);
  if (text.empty() || ec != std::errc() || end != text.data() + text.size()) {
    return Status::InvalidArgument("failed to parse int from " + std::string(text) +
                                   ": strconv.Atoi: parsing \"" + std::string(text) +
                                   "\": invalid syntax");
  }
  if (v < 0) {
    return Status::InvalidArgument("negative number (" + std::to_string(v) +
                                   ") not allowed: " + std::string(text));
  }
  return v;
}

Result<int> ParseIntOrName(std::string_view text, const Bounds& b) {
  if (!b.names.empty()) {
    std::string lower(text);
    for (char& c : lower) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
    for (const Name& n : b.names) {
      if (n.name == lower) return n.value;
    }
  }
  return ParseInt(text);
}

// One comma-separated term, robfig's getRange; `star` is set for `*` or `?` without a step > 1.
Status ParseRange(std::string_view expr, const Bounds& b, uint64_t* bits, bool* star) {
  std::vector<std::string_view> range_and_step = SplitOn(expr, '/');
  std::vector<std::string_view> low_and_high = SplitOn(range_and_step[0], '-');
  const bool single = low_and_high.size() == 1;
  int start = 0, end = 0, step = 1;
  bool is_star = false;
  if (low_and_high[0] == "*" || low_and_high[0] == "?") {
    start = b.min;
    end = b.max;
    is_star = true;
  } else {
    BERTH_ASSIGN_OR_RETURN(start, ParseIntOrName(low_and_high[0], b));
    if (low_and_high.size() == 1) {
      end = start;
    } else if (low_and_high.size() == 2) {
      BERTH_ASSIGN_OR_RETURN(end, ParseIntOrName(low_and_high[1], b));
    } else {
      return Status::InvalidArgument("too many hyphens: " + std::string(expr));
    }
  }
  if (range_and_step.size() == 2) {
    BERTH_ASSIGN_OR_RETURN(step, ParseInt(range_and_step[1]));
    if (single) end = b.max;  // "N/step" is "N-max/step"
    if (step > 1) is_star = false;
  } else if (range_and_step.size() > 2) {
    return Status::InvalidArgument("too many slashes: " + std::string(expr));
  }
  const std::string e(expr);
  if (start < b.min) {
    return Status::InvalidArgument("beginning of range (" + std::to_string(start) +
                                   ") below minimum (" + std::to_string(b.min) + "): " + e);
  }
  if (end > b.max) {
    return Status::InvalidArgument("end of range (" + std::to_string(end) + ") above maximum (" +
                                   std::to_string(b.max) + "): " + e);
  }
  if (start > end) {
    return Status::InvalidArgument("beginning of range (" + std::to_string(start) +
                                   ") beyond end of range (" + std::to_string(end) + "): " + e);
  }
  if (step == 0) return Status::InvalidArgument("step of range should be a positive number: " + e);
  for (int v = start; v <= end; v += step) *bits |= uint64_t{1} << v;
  *star = *star || is_star;
  return Status::Ok();
}

Result<uint64_t> ParseField(std::string_view field, const Bounds& b, bool* star) {
  uint64_t bits = 0;
  for (std::string_view term : SplitOn(field, ',')) {
    BERTH_RETURN_IF_ERROR(ParseRange(term, b, &bits, star));
  }
  return bits;
}

// Go's time.ParseDuration, in seconds (fractions of a second dropped, as robfig drops them).
Result<int64_t> ParseGoDurationSeconds(std::string_view text) {
  const std::string orig(text);
  auto bad = [&] { return Status::InvalidArgument("time: invalid duration \"" + orig + "\""); };
  if (text.empty()) return bad();
  bool negative = false;
  if (text[0] == '-' || text[0] == '+') {
    negative = text[0] == '-';
    text.remove_prefix(1);
  }
  if (text == "0") return int64_t{0};
  if (text.empty()) return bad();
  long double total_ns = 0;
  while (!text.empty()) {
    size_t i = 0;
    while (i < text.size() &&
           (std::isdigit(static_cast<unsigned char>(text[i])) || text[i] == '.')) {
      ++i;
    }
    if (i == 0) return bad();
    const std::string number(text.substr(0, i));
    if (number == "." || std::count(number.begin(), number.end(), '.') > 1) return bad();
    text.remove_prefix(i);
    size_t u = 0;
    while (u < text.size() && !std::isdigit(static_cast<unsigned char>(text[u])) &&
           text[u] != '.') {
      ++u;
    }
    const std::string unit(text.substr(0, u));
    text.remove_prefix(u);
    static const std::map<std::string, long double> kUnits = {
        {"ns", 1},   {"us", 1e3}, {"\xC2\xB5s", 1e3}, {"\xCE\xBCs", 1e3},
        {"ms", 1e6}, {"s", 1e9},  {"m", 60e9},        {"h", 3600e9}};
    auto it = kUnits.find(unit);
    if (it == kUnits.end()) {
      if (unit.empty())
        return Status::InvalidArgument("time: missing unit in duration \"" + orig + "\"");
      return Status::InvalidArgument("time: unknown unit \"" + unit + "\" in duration \"" + orig +
                                     "\"");
    }
    total_ns += std::stold(number) * it->second;
    if (total_ns > 9.2e18L) return bad();
  }
  const int64_t s = static_cast<int64_t>(total_ns / 1e9L);
  return negative ? -s : s;
}

Result<CronSchedule> FromFields(std::string_view minute, std::string_view hour,
                                std::string_view dom, std::string_view month,
                                std::string_view dow) {
  CronSchedule s;
  bool star = false;
  BERTH_ASSIGN_OR_RETURN(uint64_t m, ParseField(minute, {0, 59, {}}, &star));
  BERTH_ASSIGN_OR_RETURN(uint64_t h, ParseField(hour, {0, 23, {}}, &star));
  BERTH_ASSIGN_OR_RETURN(uint64_t d, ParseField(dom, {1, 31, {}}, &s.any_day));
  BERTH_ASSIGN_OR_RETURN(uint64_t mo, ParseField(month, {1, 12, kMonths}, &star));
  BERTH_ASSIGN_OR_RETURN(uint64_t w, ParseField(dow, {0, 6, kWeekdays}, &s.any_weekday));
  s.minutes = std::bitset<60>(m);
  s.hours = std::bitset<24>(h);
  s.days = std::bitset<32>(d);
  s.months = std::bitset<13>(mo);
  s.weekdays = std::bitset<7>(w);
  return s;
}

bool DayMatches(const CronSchedule& s, const CivilTime& c) {
  const bool dom = s.days[static_cast<size_t>(c.day)];
  const bool dow = s.weekdays[static_cast<size_t>(Weekday(c.year, c.month, c.day))];
  if (s.any_day || s.any_weekday) return dom && dow;
  return dom || dow;
}

}  // namespace

Result<CronSchedule> ParseCronSchedule(std::string_view text) {
  if (text.find("TZ") != std::string_view::npos) {
    return Status::InvalidArgument(
        "cannot use TZ or CRON_TZ in schedule, use timeZone field instead");
  }
  std::vector<std::string_view> fields;
  size_t i = 0;
  while (i < text.size()) {
    while (i < text.size() && std::isspace(static_cast<unsigned char>(text[i]))) ++i;
    size_t start = i;
    while (i < text.size() && !std::isspace(static_cast<unsigned char>(text[i]))) ++i;
    if (i > start) fields.push_back(text.substr(start, i - start));
  }
  if (fields.empty()) return Status::InvalidArgument("empty spec string");
  if (fields[0].front() == '@') {
    const std::string_view d = fields[0];
    if (d == "@every") {
      const size_t at = text.find("@every") + 6;
      std::string_view rest = text.substr(at);
      while (!rest.empty() && std::isspace(static_cast<unsigned char>(rest.front()))) {
        rest.remove_prefix(1);
      }
      while (!rest.empty() && std::isspace(static_cast<unsigned char>(rest.back()))) {
        rest.remove_suffix(1);
      }
      Result<int64_t> every = ParseGoDurationSeconds(rest);
      if (!every.ok()) {
        return Status::InvalidArgument("failed to parse duration " + std::string(text) + ": " +
                                       every.status().message());
      }
      CronSchedule s;
      s.every_s = std::max<int64_t>(1, *every);
      return s;
    }
    if (fields.size() == 1) {
      if (d == "@yearly" || d == "@annually") return FromFields("0", "0", "1", "1", "*");
      if (d == "@monthly") return FromFields("0", "0", "1", "*", "*");
      if (d == "@weekly") return FromFields("0", "0", "*", "*", "0");
      if (d == "@daily" || d == "@midnight") return FromFields("0", "0", "*", "*", "*");
      if (d == "@hourly") return FromFields("0", "*", "*", "*", "*");
    }
    return Status::InvalidArgument("unrecognized descriptor: " + std::string(text));
  }
  if (fields.size() != 5) {
    std::string list;
    for (std::string_view f : fields) list += (list.empty() ? "" : " ") + std::string(f);
    return Status::InvalidArgument("expected exactly 5 fields, found " +
                                   std::to_string(fields.size()) + ": [" + list + "]");
  }
  return FromFields(fields[0], fields[1], fields[2], fields[3], fields[4]);
}

std::optional<int64_t> NextScheduleTime(const CronSchedule& s, const TimeZone& zone,
                                        int64_t after) {
  if (s.every_s > 0) return after + s.every_s;
  // Walk instants (minute-aligned) and test each one's wall-clock time. A jump to the next wall
  // time that can match stops 3 hours short (more than any DST change moves the wall clock), so
  // it never passes a matching instant; from there it goes minute by minute.
  constexpr int64_t kSlack = 3 * 3600;
  int64_t t = after - (((after % 60) + 60) % 60) + 60;
  const int64_t limit = after + int64_t{5} * 366 * 86400;
  while (t <= limit) {
    const int64_t local = t + zone.OffsetAt(t);
    const CivilTime c = CivilFromSeconds(local);
    CivilTime target = c;
    target.second = 0;
    if (!s.months[static_cast<size_t>(c.month)]) {
      target = {c.month == 12 ? c.year + 1 : c.year, c.month == 12 ? 1 : c.month + 1, 1, 0, 0, 0};
    } else if (!DayMatches(s, c)) {
      target = CivilFromSeconds(DaysFromCivil(c.year, c.month, c.day) * 86400 + 86400);
    } else if (!s.hours[static_cast<size_t>(c.hour)]) {
      target = CivilFromSeconds(local - c.minute * 60 - c.second + 3600);
    } else if (!s.minutes[static_cast<size_t>(c.minute)]) {
      target = CivilFromSeconds(local - c.second + 60);
    } else {
      return t;
    }
    const int64_t delta = SecondsFromCivil(target) - local;
    t += delta > kSlack + 60 ? (delta - kSlack) / 60 * 60 : 60;
  }
  return std::nullopt;
}

}  // namespace berth::k8s
