// The checks sbatch 22.05 makes of an option's value on the submit host, before it talks to the
// controller, with its messages and exit statuses word for word:
//   "sbatch: error: Invalid --time specification"                      (exit 255)
//   "sbatch: error: Invalid numeric value \"0\" for --ntasks."         (exit 1)
//   "sbatch: error: \"x\" is not a valid node count"                   (exit 255)
//   "Invalid time specification (pos=0): x\nsbatch: error: Invalid --begin specification"
// A value that passes is rewritten into the form berth's parsers take (Slurm's lenient numbers
// "+5" and " 5" become "5", --begin becomes "uts<seconds>", -N 0 becomes "0-0", --open-mode=a
// becomes "append", a user name for --uid its number, ...).
//
// What Slurm leaves to the controller (partitions, features, node names, arrays, dependencies,
// licences, GRES) passes here; SlurmSubmitError names the controller's words for those.
//
// Thread safety: all functions are pure, except that --uid and --gid read the user and group
// databases.
#ifndef BERTH_SLURM_SBATCH_VALUES_H_
#define BERTH_SLURM_SBATCH_VALUES_H_

#include <optional>
#include <string>
#include <string_view>

#include "common/time.h"
#include "config/slurm_datetime.h"
#include "slurm/sbatch_options.h"

namespace berth::slurm {

struct ValueContext {
  std::string_view prog = "sbatch";
  Time now = 0;            // for --begin/--deadline's relative forms
  config::UtcOffset zone;  // for their clock and calendar forms; null means UTC
};

// Checks `option`'s value and normalizes it in place; Slurm's failure when it is bad.
std::optional<SbatchFailure> CheckSbatchValue(OptionArg& option, const ValueContext& ctx);

// What slurmctld answers when it refuses a job for a bad value of `option` ("array" -> "Invalid
// job array specification", "partition" -> "Invalid partition name specified"); "" for options
// the controller does not judge in Slurm.
std::string_view SlurmSubmitError(std::string_view option);

// Slurm's parse_int: a decimal integer as strtol reads it (leading blanks and a sign allowed),
// nothing after it, not negative, and not zero when `positive`. nullopt when invalid.
std::optional<int> SlurmInteger(std::string_view text, bool positive);

}  // namespace berth::slurm

#endif  // BERTH_SLURM_SBATCH_VALUES_H_
