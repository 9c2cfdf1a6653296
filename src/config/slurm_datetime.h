// Points in time as sbatch --begin and --deadline take them, limited to Slurm's forms that need
// no time zone (berth's core and simulator have none):
//   now                    `now`
//   now+N[unit], now-N[unit]
//                          N seconds, or N of a unit: second(s), minute(s), hour(s), day(s),
//                          week(s), any case ("now+60", "now+1hour", "now+2days")
//   uts<N>                 N seconds since the epoch, N >= 1000000 (as Slurm's parse_time)
//   YYYY-MM-DD[THH:MM[:SS]]
//                          a date and time in UTC; a date alone is its midnight. Slurm reads
//                          this in the local time zone; berth has none, so it reads UTC.
// Slurm's other forms (today, tomorrow, midnight, noon, elevenses, fika, teatime, HH:MM[:SS]
// [AM|PM], MMDD[YY], MM/DD[/YY], MM.DD[.YY]) depend on the local time zone and are refused with
// a message that says so.
//
// Thread safety: all functions are pure.
#ifndef BERTH_CONFIG_SLURM_DATETIME_H_
#define BERTH_CONFIG_SLURM_DATETIME_H_

#include <cstdint>
#include <functional>
#include <string_view>

#include "common/status.h"
#include "common/time.h"

namespace berth::config {

// Parses `text`; `now` resolves the relative forms. Errors (kInvalidArgument) give the reason
// only ("unknown unit 'hrs' ..."), for the caller to put after the option and value.
Result<Time> ParseSlurmDateTime(std::string_view text, Time now);

// A time zone: the offset of local time from UTC, in seconds east, at a UTC instant.
using UtcOffset = std::function<int64_t(Time utc)>;

// The zone of this host (localtime_r's tm_gmtoff), as sbatch reads times on the submit host.
UtcOffset HostTimeZone();

// Every form of Slurm 22.05's parse_time (src/common/parse_time.c), with the local forms read in
// `zone`, as sbatch reads --begin and --deadline on the submit host:
//   today, tomorrow, midnight, noon, fika (15:00), teatime (16:00)
//   HH:MM[:SS] [AM|PM]      today, or tomorrow when that time has passed
//   MMDD[YY], MM/DD[/YY], MM.DD[.YY]   this year, or the next when that day has passed
//   YYYY-MM-DD[THH:MM[:SS]]
//   now[{+|-}count[seconds|minutes|hours|days|weeks]]   (seconds when no unit)
//   uts<seconds since the epoch>
// and Slurm's combinations of them ("noon tomorrow", "MM/DD-HH:MM"); a date without a time is
// its midnight. Errors: Slurm's "Invalid time specification (pos=N): text" has *error_pos = N;
// text that names no time at all (Slurm's parse_time returns 0 without a message) gives
// *error_pos = kNoTimePosition.
inline constexpr int kNoTimePosition = -1000;
Result<Time> ParseSlurmDateTime(std::string_view text, Time now, const UtcOffset& zone,
                                int* error_pos);

}  // namespace berth::config

#endif  // BERTH_CONFIG_SLURM_DATETIME_H_
