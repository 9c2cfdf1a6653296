// Where sbatch's options come from besides its command line, read as Slurm 22.05 reads them:
//   - the batch script: its sanity checks (the #! line, no NUL bytes, no DOS line breaks) and its
//     #SBATCH (or legacy #SLURM) directives, read until the first line that is neither blank nor
//     a comment, each split into words like a shell would, but Slurm's way (quotes group, a
//     backslash escapes one character, an unquoted '#' ends the line's words);
//   - --wrap, which makes the script;
//   - the input environment variables (SBATCH_ACCOUNT, SBATCH_TIMELIMIT, ... of `man sbatch`).
// Precedence is the caller's (sbatch_job.h): command line over environment over directives.
//
// Thread safety: all functions are pure.
#ifndef BERTH_SLURM_BATCH_SCRIPT_H_
#define BERTH_SLURM_BATCH_SCRIPT_H_

#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "slurm/sbatch_options.h"

namespace berth::slurm {

// The checks sbatch makes of a script before it reads its directives, in Slurm's order: empty,
// only whitespace, no "#!" at the start, a NUL byte, a "\r\n" line break. The failure carries
// Slurm's messages (exit status 1); nullopt when the script passes.
std::optional<SbatchFailure> CheckBatchScript(std::string_view script, std::string_view prog);

// The words of a script's directives, in order, as one argument list for getopt.
struct DirectiveWords {
  std::vector<std::string> words;
  std::vector<std::string> warnings;  // whole lines for stderr ("sbatch: error: Change from ...")
  bool heterogeneous = false;         // a "#SBATCH hetjob" (or "packjob") separator was found
};

// Reads the directives of `script`. `file_name` is the script as named on the command line, for
// Slurm's fatal messages ("sbatch: fatal: job.sh: line 2: Unexpected `:` in [: -N 2]").
// Directives after a "hetjob" separator (berth runs no heterogeneous jobs) are not read.
std::pair<DirectiveWords, std::optional<SbatchFailure>> ReadDirectives(std::string_view script,
                                                                       std::string_view file_name,
                                                                       std::string_view prog);

// The script sbatch makes of --wrap's command.
std::string WrapScript(std::string_view command);

// A process environment, in order ("NAME", "value").
using EnvironmentList = std::vector<std::pair<std::string, std::string>>;

// The options the input environment variables set, in the order of sbatch's table of them.
// Flags (SBATCH_REQUEUE, SBATCH_WAIT, ...) are set by an empty value, "yes" or a non-zero
// number and ignored otherwise; SBATCH_EXCLUSIVE, SBATCH_GET_USER_ENV and SBATCH_NO_KILL give
// their value (none when empty). Values are not checked here.
std::vector<OptionArg> OptionsFromEnvironment(const EnvironmentList& env);

// The variable that sets `option` ("time" -> "SBATCH_TIMELIMIT"), "" when none does; for
// messages that name the source of a value.
std::string_view EnvironmentVariableOf(std::string_view option);

}  // namespace berth::slurm

#endif  // BERTH_SLURM_BATCH_SCRIPT_H_
