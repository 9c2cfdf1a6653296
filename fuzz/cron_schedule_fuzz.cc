// A CronJob's schedule and time zone data (k8s/cron_schedule.h, k8s/time_zone.h) on any input.
// The first byte picks: 0 the schedule parser, then the next time after a time taken from the
// input, in UTC; 1 a POSIX TZ rule (a zone file's footer); 2 a TZif file. Invariants: errors
// carry a message; a schedule's next time is a whole minute after the time asked about (or
// @every's interval after it), and asking again from just before it gives it back.
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <string_view>

#include "k8s/cron_schedule.h"
#include "k8s/time_zone.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  namespace k8s = berth::k8s;
  if (size < 1) return 0;
  const uint8_t pick = data[0] % 3;
  std::string_view text(reinterpret_cast<const char*>(data + 1), size - 1);
  if (pick == 0) {
    int64_t after = 1'700'000'000;
    if (text.size() >= 4) {
      uint32_t raw = 0;
      std::memcpy(&raw, text.data(), 4);
      after += raw;
      text.remove_prefix(4);
    }
    berth::Result<k8s::CronSchedule> s = k8s::ParseCronSchedule(text);
    if (!s.ok()) {
      if (s.status().message().empty()) std::abort();
      return 0;
    }
    std::optional<int64_t> next = k8s::NextScheduleTime(*s, k8s::TimeZone(), after);
    if (!next) return 0;
    if (*next <= after) std::abort();
    if (s->every_s > 0) {
      if (*next != after + s->every_s) std::abort();
      return 0;
    }
    if (*next % 60 != 0) std::abort();
    if (k8s::NextScheduleTime(*s, k8s::TimeZone(), *next - 1) != next) std::abort();
  } else if (pick == 1) {
    berth::Result<k8s::PosixTz> tz = k8s::ParsePosixTz(text);
    if (!tz.ok()) {
      if (tz.status().message().empty()) std::abort();
      return 0;
    }
    const int32_t offset = k8s::PosixTzOffset(*tz, 1'700'000'000);
    if (offset != tz->std_offset && offset != tz->dst_offset) std::abort();
  } else {
    berth::Result<k8s::TimeZone> zone = k8s::TimeZone::FromTzif("Fuzz/Zone", text);
    if (!zone.ok()) {
      if (zone.status().message().empty()) std::abort();
      return 0;
    }
    (void)zone->OffsetAt(1'700'000'000);
    (void)zone->OffsetAt(-1);
  }
  return 0;
}
