// scancel as Slurm 22.05 does it (src/scancel/): its options, the job ids it takes ("12",
// "12_4", "12_[1-3]", "12_*", "12.0"), which jobs a request with filters selects, and what it
// prints and returns when a cancel fails. The command (src/cli/slurm_scancel.cc) adds the
// requests to the controller.
//
// Two ways through, as in Slurm:
//  * ids only (no filter, no --interactive, no --signal, no --batch): every id is sent as given;
//    an id the controller does not know, or a job that already ended, is not an error unless
//    -v (Slurm ignores ESLURM_INVALID_JOB_ID and ESLURM_ALREADY_DONE for a kill);
//  * otherwise the active jobs are loaded, each id is checked ("Kill job error on job id 99:
//    Invalid job id specified", exit code 1), the filters keep what matches ALL of them, and
//    pending jobs are cancelled before the others.
// Exit codes are Slurm's: the largest error seen, an ESLURM_* number truncated to 8 bits by
// exit() (Access/permission denied = 2002 -> 210), or 1 for a bad id or option.
//
// Thread safety: ParseScancelArgs uses getopt_long (process-wide state): call it from one thread
// at a time. Everything else is pure.
#ifndef BERTH_SLURM_SCANCEL_H_
#define BERTH_SLURM_SCANCEL_H_

#include <cstdint>
#include <functional>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "common/status.h"
#include "core/model/job_state.h"
#include "slurm/job_view.h"
#include "slurm/view_options.h"

namespace berth::slurm {

// One id from the command line. "12_[1-3]" becomes three of these.
struct ScancelId {
  static constexpr int32_t kWholeJob = -1;   // no "_task": the job, or the whole array
  static constexpr int32_t kAllTasks = -2;   // "12_*"
  static constexpr int32_t kBatchStep = -1;  // no ".step"

  uint32_t job_id = 0;
  int32_t array_task = kWholeJob;
  int32_t step = kBatchStep;

  // As Slurm prints it in messages: "12", "12_4", "12_*" (without the step).
  std::string JobText() const;
  // As sent to the controller: "12", "12_4" ("12_*" is sent as "12").
  std::string RequestText() const;

  friend bool operator==(const ScancelId&, const ScancelId&) = default;
};

// Parses one job id argument. Errors carry Slurm's message: "scancel: error: Invalid job id X".
Result<std::vector<ScancelId>> ParseScancelId(std::string_view text);

struct ScancelOptions {
  std::vector<ScancelId> ids;
  std::string signal_name;  // as given to -s ("" = none: cancel)
  int signal = 0;           // its number
  bool batch = false;       // -b: signal only the batch shell
  bool full = false;        // -f: the batch shell and every step
  bool hurry = false;       // -H (accepted; berth has no burst buffers)
  bool interactive = false;
  int verbose = 0;  // -v counts up; -Q sets -1
  bool me = false;
  std::string account, job_name, partition, qos, reservation, nodelist, user, wckey;
  std::optional<core::JobState> state;
  std::optional<uint32_t> uid;  // resolved from `user` or --me by the command
  bool help = false, usage = false, version = false;

  // Slurm's has_default_opt(): no filter, no -i, no -s, no -b.
  bool IdsOnly() const;
  // Whether a filter narrows the jobs (Slurm calls _filter_job_records then).
  bool HasFilters() const;
  // The signal is a kill (none given, or KILL): ended and unknown jobs are then not errors.
  bool IsKill() const { return signal == 0 || signal == 9; }
};

// What parsing produced: options to act on, or text to print and an exit code.
// done: print `out` / `err` and exit with `exit_code` (ParseExit); otherwise run `options`.
struct ScancelParse : ParseExit {
  ScancelOptions options;
};

// Parses scancel's arguments (argv[0] is the program name). Environment variables SCANCEL_*
// come in `env` lookups first, as Slurm reads them before the command line.
ScancelParse ParseScancelArgs(const std::vector<std::string>& args,
                              const std::vector<std::pair<std::string, std::string>>& env = {});

// scancel's help and usage texts.
std::string ScancelUsage();
std::string ScancelHelp();

// One job record to act on, and the ids to send for it: an array's pending tasks (one record,
// "12_[5-9]") are sent one by one ("12_5", ...), so that a filter or a task id never reaches
// tasks it did not select; the controller splits them off as Slurm does.
struct ScancelTarget {
  std::vector<std::string> request_ids;  // "12", "12_4"
  std::string display_id;                // for -v and -i: "12", "12_4", "12_[5-9]"
  // The job's view, for -i's prompt: set by the selection from a vector of views (which outlives
  // the targets), null from the one made a job at a time and for the ids-only path.
  const JobView* job = nullptr;
  uint32_t job_id = 0;  // the record's (what the targets are sorted by)
};

// The filtered path: checks the ids against the active jobs, applies the filters, and returns
// what to cancel, pending jobs first. Lines to print on stderr go to `errors`; `exit_code` gets
// 1 when an id matched no active job.
struct ScancelSelection {
  std::vector<ScancelTarget> targets;
  std::vector<std::string> errors;
  int exit_code = 0;
};
ScancelSelection SelectScancelTargets(const ScancelOptions& opt, const std::vector<JobView>& jobs);
// The same selection made one job at a time, for a caller that holds many records and need not
// keep a view of each (the controller: 10,000 views at once were most of a `scancel -u`):
// `for_each_job` calls its argument with a view of every job, the view living only during the
// call; it is called once, or twice when ids are given (their check needs every job first).
using ScancelJobWalk = std::function<void(const std::function<void(const JobView&)>&)>;
ScancelSelection SelectScancelTargets(const ScancelOptions& opt,
                                      const ScancelJobWalk& for_each_job);

// The signal a cancel request carries for these options: 0 (a cancel) when none is given, and
// for a KILL to the whole job, which slurm_kill_job() makes a cancel (pending jobs too).
int RequestSignal(const ScancelOptions& opt);

// The targets of the ids-only path: each id as given.
std::vector<ScancelTarget> IdTargets(const ScancelOptions& opt);

// "scancel: Terminating job 12", "scancel: Signal 10 to batch job 12" (printed with -v).
std::string VerboseLine(const ScancelOptions& opt, const std::string& display_id);

// The prompt of -i: "Cancel job_id=12 name=x partition=p [y/n]? ".
std::string ConfirmPrompt(const ScancelTarget& target);

// One failed cancel as the controller reported it (POST /v1/jobs/cancel's "results").
struct CancelFailure {
  int http_status = 0;
  std::string message;
};

// Slurm's view of a failure: its errno and strerror text.
struct SlurmError {
  int number = 1;
  std::string text;
};
SlurmError SlurmErrorOf(const CancelFailure& failure);

// What scancel prints for a failed cancel ("" for none) and the exit code it contributes (0 when
// ignored), as _cancel_job_id does.
struct FailureReport {
  std::string line;
  int exit_code = 0;
};
FailureReport ReportFailure(const ScancelOptions& opt, const std::string& display_id,
                            const CancelFailure& failure);

// The exit status exit(rc) gives for Slurm's rc (ESLURM numbers are above 255).
int ExitStatusOf(int rc);

}  // namespace berth::slurm

#endif  // BERTH_SLURM_SCANCEL_H_
