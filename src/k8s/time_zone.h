// IANA time zones from the system's tz database (/usr/share/zoneinfo), for CronJobs' `timeZone`
// (docs/kubernetes.md "CronJobs"): a zone file (TZif, versions 1-4) read into its transitions
// and the POSIX TZ rule of its footer, which gives the offsets after the last transition (zic's
// "slim" files end their table early and rely on it). Civil-time helpers beside it.
//
// Thread safety: a TimeZone is immutable once loaded; every function is pure but Load, which
// reads the file.
#ifndef BERTH_K8S_TIME_ZONE_H_
#define BERTH_K8S_TIME_ZONE_H_

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "common/status.h"

namespace berth::k8s {

// A civil (wall-clock) time, proleptic Gregorian.
struct CivilTime {
  int64_t year = 1970;
  int month = 1, day = 1, hour = 0, minute = 0, second = 0;
};
// Days since 1970-01-01 of a civil date, and back.
int64_t DaysFromCivil(int64_t year, int month, int day);
CivilTime CivilFromSeconds(int64_t seconds);  // seconds since the epoch, as if UTC
int64_t SecondsFromCivil(const CivilTime& c);
// 0 = Sunday.
int Weekday(int64_t year, int month, int day);

// A POSIX TZ rule ("CET-1CEST,M3.5.0,M10.5.0/3", "<+03>-3", "EST5EDT,M3.2.0,M11.1.0").
struct PosixTz {
  int32_t std_offset = 0;  // seconds east of UTC (the POSIX text counts west)
  bool has_dst = false;
  int32_t dst_offset = 0;
  struct Date {
    char kind = 'M';  // 'M' (month.week.day), 'J' (Julian 1..365, no Feb 29), 'D' (0..365)
    int month = 0, week = 0, weekday = 0, day = 0;
    int32_t time = 7200;  // seconds after local midnight (may be negative or above 24 h)
  } start, end;
};
Result<PosixTz> ParsePosixTz(std::string_view text);
// The offset (seconds east of UTC) the rule gives at a UTC instant.
int32_t PosixTzOffset(const PosixTz& tz, int64_t utc);

class TimeZone {
 public:
  // UTC (what an empty timeZone means: Kubernetes' controller uses its own local zone, berth's
  // is UTC).
  TimeZone() = default;
  // The zone `name` from `root` (an IANA name such as "Europe/Berlin" or "UTC"). NOT_FOUND, as
  // Go's time.LoadLocation says it ("unknown time zone NAME"), for a name that is not a zone
  // file there; INVALID_ARGUMENT for a name that is no zone name ("Local", "../x", "/abs").
  static Result<TimeZone> Load(std::string_view name,
                               const std::string& root = "/usr/share/zoneinfo");
  // A zone from the bytes of a TZif file.
  static Result<TimeZone> FromTzif(std::string_view name, std::string_view data);

  const std::string& name() const { return name_; }
  // The offset from UTC (seconds east) at a UTC instant.
  int32_t OffsetAt(int64_t utc) const;

 private:
  std::string name_ = "UTC";
  std::vector<int64_t> transitions_;  // UTC instants, ascending
  std::vector<int32_t> offsets_;      // the offset from each transition on
  int32_t before_ = 0;                // before the first transition
  bool has_footer_ = false;
  PosixTz footer_;
};

}  // namespace berth::k8s

#endif  // BERTH_K8S_TIME_ZONE_H_
