// Slurm's duration formats: what `sbatch --time`/`--time-min` accept and what scontrol and
// squeue print. All durations are berth::Duration seconds; kInfinite stands for UNLIMITED.
//
// Parsing follows Slurm 22.05 src/common/parse_time.c (time_str2secs, time_str2mins) and
// src/common/slurm_opt.c (arg_set_time_limit):
//   "M"          minutes                 "M:S"       minutes:seconds
//   "H:M:S"      hours:minutes:seconds   "D-H"       days-hours
//   "D-H:M"      days-hours:minutes      "D-H:M:S"   days-hours:minutes:seconds
//   "UNLIMITED", "INFINITE", "-1" (any case): no limit.
// Fields are not range checked ("90" minutes, "1:99:99" are fine); "D-" alone means D days, as
// in Slurm. Nothing else is allowed: no spaces, signs, or units.
//
// Thread safety: all functions are pure.
#ifndef BERTH_COMMON_SLURM_TIME_H_
#define BERTH_COMMON_SLURM_TIME_H_

#include <string>
#include <string_view>

#include "common/status.h"
#include "common/time.h"

namespace berth {

// The largest duration either parser accepts: Slurm computes seconds in an int, so longer
// values (about 24855 days) overflow there. berth rejects them instead.
inline constexpr Duration kMaxSlurmDuration = 2147483647;

// A job time limit (--time, --time-min) as Slurm stores it: whole minutes, a partial minute
// rounded UP ("0:30" and "1:01" become 1 and 2 minutes), returned in seconds (a multiple of 60).
// A limit of zero ("0", "0:0", "0-0") means no limit, as in Slurm, and gives kInfinite.
// Errors (kInvalidArgument) quote the text: "invalid time limit '1:2:3:4'".
Result<Duration> ParseTimeLimit(std::string_view text);

// The same syntax as an exact number of seconds (Slurm's time_str2secs): no rounding, and "0"
// is zero. "UNLIMITED"/"INFINITE"/"-1" give kInfinite.
Result<Duration> ParseTimeSeconds(std::string_view text);

// A duration as scontrol prints TimeLimit=, TimeMin=, RunTime=, DelayBoot= (Slurm's
// secs2time_str): "00:30:00", "02:00:00", "1-00:00:00", "14-00:00:00"; kInfinite (or more) is
// "UNLIMITED", a negative value "INVALID". (scontrol shows an unset TimeMin as "N/A"; that is the
// caller's choice.)
std::string FormatTimeLimit(Duration seconds);

// A duration as squeue's TIME column prints it (_print_secs): "0:00", "5:03", "1:02:03",
// "1-02:03:04". Negative values and values over 365 days are "INVALID", as in squeue.
std::string FormatElapsed(Duration seconds);

// A time limit as squeue's TIME_LIMIT column prints it: "UNLIMITED" for kInfinite, otherwise as
// FormatElapsed ("30:00", "1:00:00", "2-12:00:00").
std::string FormatTimeLimitSqueue(Duration seconds);

}  // namespace berth

#endif  // BERTH_COMMON_SLURM_TIME_H_
