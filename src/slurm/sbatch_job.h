// sbatch from its arguments to the job it submits, without a daemon: the command line, the
// script's #SBATCH directives and the SBATCH_* environment read in Slurm 22.05's order (command
// line first for errors; directives, then environment, then command line for values, the later
// overriding), the checks sbatch makes before it submits, and the job (core::JobSpec and
// core::JobExecSpec) that results, with Slurm's defaults:
//   - job name: the script's file name, "wrap" for --wrap, "sbatch" for a script on stdin;
//   - work dir: -D (relative to the submit dir) or the submit dir; -o/-e/-i relative to it;
//   - stdout: slurm-%j.out, or slurm-%A_%a.out for an array, in the work dir; stderr unset
//     means the same file;
//   - environment: --export (ALL by default), --export-file, and the SLURM_* variables sbatch
//     sets for the job from its request (SLURM_NTASKS, SLURM_CPUS_PER_TASK, SLURM_GPUS_PER_NODE,
//     SLURM_SUBMIT_DIR, ..., man sbatch's OUTPUT ENVIRONMENT VARIABLES that come from options).
// pyxis's --container-* options make the job's container (exec.container, slurm/pyxis.h).
// Options that Slurm accepts and berth has no use for (--hint, --switches, --mem-bind, ...) are
// checked and then ignored (listed in SbatchRequest::ignored).
//
// Thread safety: ParseSbatch is pure apart from the callbacks in SbatchInputs.
#ifndef BERTH_SLURM_SBATCH_JOB_H_
#define BERTH_SLURM_SBATCH_JOB_H_

#include <functional>
#include <string>
#include <variant>
#include <vector>

#include "common/status.h"
#include "common/time.h"
#include "config/slurm_datetime.h"
#include "core/model/job.h"
#include "slurm/batch_script.h"
#include "slurm/sbatch_options.h"

namespace berth::slurm {

// Everything sbatch reads from its surroundings.
struct SbatchInputs {
  std::string prog = "sbatch";
  std::vector<std::string> args;  // argv without argv[0]
  EnvironmentList env;            // sbatch's environment
  std::string cwd;                // the submit dir
  std::string host;               // the submit host (short name)
  int nice = 0;                   // sbatch's own nice value (SLURM_PRIO_PROCESS)
  Time now = 0;
  config::UtcOffset zone;  // the submit host's time zone; null means UTC
  // Reads a file (the script, --export-file); NotFound when it cannot be opened.
  std::function<Result<std::string>(const std::string& path)> read_file;
  // Reads the script from standard input when no script file is named.
  std::function<Result<std::string>()> read_stdin;
};

// The job sbatch would submit, and what sbatch itself does around it.
struct SbatchRequest {
  core::JobSpec spec;
  core::JobExecSpec exec;
  std::vector<std::string> script_args;  // the script's $1...; berth's job JSON has no place
                                         // for them yet
  bool parsable = false;
  bool test_only = false;
  bool wait = false;
  int verbose = 0;
  bool quiet = false;
  std::string clusters;              // -M as given ("" = this cluster)
  std::vector<std::string> ignored;  // options accepted and ignored ("--hint", ...)
  std::string warnings;              // lines for stderr before submitting
};

// --help, --usage, --version: printed to stdout, exit 0.
struct SbatchInfo {
  std::string text;
};

using SbatchOutcome = std::variant<SbatchRequest, SbatchInfo, SbatchFailure>;

// Reads sbatch's options as Slurm 22.05 does and builds the job.
SbatchOutcome ParseSbatch(const SbatchInputs& in);

// The environment --export selects from `env` (Slurm's rules: ALL, NONE, NAME, NAME=value,
// "ALL,..."; SLURM_* always pass), after the variables of an --export-file (`from_file`, in
// order). `value` empty means --export was not given (ALL).
EnvironmentList ExportEnvironment(const std::string& value, const EnvironmentList& env,
                                  const EnvironmentList& from_file);

// The variables of an --export-file: NAME=value entries separated by NUL bytes (or newlines when
// there is no NUL).
EnvironmentList ParseExportFile(std::string_view text);

// Applies one of the options that say how a job runs (berth submit shares these with sbatch):
// output, error, input, chdir, open-mode, signal, comment, mail-type, mail-user, gpu-bind.
// NotFound for any other name. Paths are stored as given.
Status ApplyExecOption(std::string_view name, const std::string& value, core::JobExecSpec& exec);

}  // namespace berth::slurm

#endif  // BERTH_SLURM_SBATCH_JOB_H_
