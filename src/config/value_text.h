// Small parsers shared by the cluster configuration file and the job options: bounded integers,
// Slurm's booleans, comma lists, counts with binary suffixes, configuration durations and licence
// lists. Errors are kInvalidArgument with a short reason that does not repeat the value: the
// caller knows which key or option was bad and says so (see InvalidValue).
//
// Thread safety: all functions are pure.
#ifndef BERTH_CONFIG_VALUE_TEXT_H_
#define BERTH_CONFIG_VALUE_TEXT_H_

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "common/status.h"
#include "common/time.h"
#include "core/model/resources.h"

namespace berth::config {

// "invalid <what> value '<value>': <reason>", the one shape of every bad-value message.
Status InvalidValue(std::string_view what, std::string_view value, std::string_view reason);

// The reason in `s`'s message without a leading "invalid ... '<text>': " that a lower-level
// parser added, so that it can be passed to InvalidValue without quoting the value twice.
std::string Reason(const Status& s);

// A decimal integer in [min, max]. A leading '-' only when min < 0; no '+', blanks or suffixes.
Result<int64_t> ParseInteger(std::string_view s, int64_t min, int64_t max);

// A non-negative decimal number with an optional fraction ("2", "0.25", ".5"); no exponent.
Result<double> ParseDecimal(std::string_view s);

// Slurm's configuration booleans (parse_config.c): YES/NO, TRUE/FALSE, UP/DOWN, 1/0, any case.
Result<bool> ParseBool(std::string_view s);

// A count with an optional binary suffix K, M, G, T or P (each x1024), as Slurm takes GRES counts:
// "16", "4K" = 4096. At most 2^62.
Result<int64_t> ParseSuffixedCount(std::string_view s);

// A duration as Slurm keeps configuration times (time_str2mins: MaxTime=, PriorityMaxAge=,
// MaxWall=): any format of ParseTimeSeconds, rounded UP to whole minutes, in seconds. "0" is
// zero; INFINITE, UNLIMITED and -1 give kInfinite.
Result<Duration> ParseConfigMinutes(std::string_view s);

// A licence list as slurm.conf's Licenses= and sbatch --licenses take it: comma-separated
// "name", "name:count" or "name*count" (count 1 when omitted); names may carry "@server".
// Repeated names are added together, as Slurm's license list does. Counts must be at least
// `min_count` (0 for the cluster's pools, 1 for a job's request). Order of first appearance.
Result<std::vector<core::NamedCount>> ParseLicenses(std::string_view s, int64_t min_count);

}  // namespace berth::config

#endif  // BERTH_CONFIG_VALUE_TEXT_H_
