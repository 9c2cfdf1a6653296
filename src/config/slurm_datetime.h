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

#include <string_view>

#include "common/status.h"
#include "common/time.h"

namespace berth::config {

// Parses `text`; `now` resolves the relative forms. Errors (kInvalidArgument) give the reason
// only ("unknown unit 'hrs' ..."), for the caller to put after the option and value.
Result<Time> ParseSlurmDateTime(std::string_view text, Time now);

}  // namespace berth::config

#endif  // BERTH_CONFIG_SLURM_DATETIME_H_
