// A CronJob's `schedule` as the Kubernetes API server accepts it (it parses with robfig/cron v3's
// standard parser; docs/kubernetes.md "CronJobs"): five fields (minute, hour, day of month,
// month, day of week) of `*`, `?`, numbers, ranges `a-b`, steps `*/n`, `a-b/n` and `a/n` (a to
// the field's end), lists with `,`, month names JAN-DEC and day names SUN-SAT (any case); the
// descriptors @yearly, @annually, @monthly, @weekly, @daily, @midnight, @hourly and
// `@every DURATION` (Go's duration syntax, rounded down to whole seconds; at least 1 s).
// Day of month and day of week: when either is `*` (or `?`) both must match, else either.
// `TZ=`/`CRON_TZ=` prefixes are refused here as the API server refuses them on create (the
// CronJob's `timeZone` says the zone).
//
// Times are Unix seconds; a schedule's times are the minutes (seconds 0) whose wall-clock time in
// its zone matches: a wall time skipped by a DST change never comes, one repeated comes twice
// (robfig/cron's rule, which Kubernetes' controller follows).
//
// Thread safety: pure functions and immutable values.
#ifndef BERTH_K8S_CRON_SCHEDULE_H_
#define BERTH_K8S_CRON_SCHEDULE_H_

#include <bitset>
#include <cstdint>
#include <optional>
#include <string_view>

#include "common/status.h"
#include "k8s/time_zone.h"

namespace berth::k8s {

struct CronSchedule {
  std::bitset<60> minutes;
  std::bitset<24> hours;
  std::bitset<32> days;      // 1..31
  std::bitset<13> months;    // 1..12
  std::bitset<7> weekdays;   // 0 = Sunday
  bool any_day = false;      // day of month was * or ?
  bool any_weekday = false;  // day of week was * or ?
  int64_t every_s = 0;       // @every: a fixed interval instead of the fields
};

// INVALID_ARGUMENT with a message in robfig/cron's words for what the API server refuses.
Result<CronSchedule> ParseCronSchedule(std::string_view text);

// The first time of the schedule strictly after `after` in `zone`; nullopt when none comes
// within five years (e.g. "0 0 30 2 *"). @every: `after` + the interval, as robfig's constant
// delay schedule (whole seconds).
std::optional<int64_t> NextScheduleTime(const CronSchedule& s, const TimeZone& zone, int64_t after);

}  // namespace berth::k8s

#endif  // BERTH_K8S_CRON_SCHEDULE_H_
