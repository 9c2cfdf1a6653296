// sacct as Slurm 22.05 prints it: options, which jobs a query selects, Slurm's field names and
// widths (all 109 of 22.05's `sacct --helpformat`; the ones berth has no data for print empty),
// and print_fields' layout: a header and a "---" line, values padded to the field width (a
// negative width left-justifies), text cut with a '+' at the end, numbers and times never cut,
// one space after each field; `-p`/`-P` give delimited fields (with/without a trailing one).
//
// Rows: one per job, and, unless -X, one "ID.batch" row per job that started: berth runs each
// job's script (or command) as Slurm's batch step; it has no other steps (srun's steps run
// inside the batch step and are not recorded), and no ".extern" step (Slurm has one only with
// PrologFlags=Contain). Usage (TotalCPU, MaxRSS) is measured over the whole job: TotalCPU shows
// on both rows, MaxRSS on the batch row only, as in Slurm.
//
// Thread safety: ParseSacctArgs uses getopt_long (process-wide state); the rest is pure (times
// print in the local time zone).
#ifndef BERTH_SLURM_SACCT_VIEW_H_
#define BERTH_SLURM_SACCT_VIEW_H_

#include <cstdint>
#include <nlohmann/json_fwd.hpp>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "api/step_record.h"
#include "common/status.h"
#include "common/time.h"
#include "core/model/job_state.h"
#include "slurm/job_view.h"
#include "slurm/view_options.h"

namespace berth::slurm {

// One job from GET /v1/accounting/jobs, with what the batch row needs of its first node.
struct SacctJob {
  JobView view;
  int32_t batch_cpus = 0;
  int64_t batch_mem_mib = 0;
  int32_t batch_gpus = 0;
  std::string gpu_type;
  // The steps srun recorded (JOB.0, JOB.1, ...), by id; of an ended job, a step still RUNNING
  // was ended with it (api::StepAfterJobEnd).
  std::vector<api::StepRecord> steps;
  Time now = 0;  // a running step's Elapsed counts to this
};
Result<SacctJob> SacctJobFromJson(const nlohmann::json& record, Time now);

// A -j item: "12", "12_3", "12.batch" (step -1 = the job, -2 = batch).
struct SacctJobId {
  static constexpr int32_t kAnyTask = -1;
  static constexpr int32_t kJob = -1;
  static constexpr int32_t kBatch = -2;
  static constexpr int32_t kOtherStep = -3;
  uint32_t job_id = 0;
  int32_t task = kAnyTask;
  int32_t step = kJob;
  uint32_t step_id = 0;  // with kOtherStep: "12.3" -> 3
};

// One field of the output: Slurm's name and the width it prints with.
struct SacctField {
  std::string name;
  int width = 0;  // negative: left-justified
};

struct SacctOptions {
  std::vector<SacctJobId> jobs;
  std::vector<std::string> users;  // names or uids; empty: see all_users
  bool all_users = false;
  std::vector<core::JobState> states;
  std::vector<std::string> partitions, accounts, names, nodelist;
  std::optional<Time> start, end;
  bool allocations = false;  // -X
  bool parsable = false;     // -p
  bool parsable2 = false;    // -P
  bool noheader = false;
  bool json = false;
  std::string delimiter = "|";
  std::vector<SacctField> fields;
  bool helpformat = false, help = false, usage = false, version = false;
};

// done: print `out` / `err` and exit with `exit_code` (ParseExit); otherwise run `options`.
struct SacctParse : ParseExit {
  SacctOptions options;
};

// Parses sacct's arguments (args[0] is the program name); `now` resolves -S/-E ("now-1hour",
// "today", "10:30", "2024-03-01T10:00", "03/01", ...) in the local time zone. `format_env` is
// $SACCT_FORMAT.
SacctParse ParseSacctArgs(const std::vector<std::string>& args, Time now,
                          const std::string& format_env = "");

// -S/-E times as Slurm's parse_time() reads them (local time zone).
Result<Time> ParseSacctTime(std::string_view text, Time now);

// "JobID,JobName%20,state%-5" -> fields, by Slurm's rules: a case-insensitive prefix picks the
// first field of 22.05's list that starts with it; "%N" sets the width. Errors:
// 'Invalid field requested: "x"'.
Result<std::vector<SacctField>> ParseSacctFormat(std::string_view text);

// The default format (JobID JobName Partition Account AllocCPUS State ExitCode).
std::vector<SacctField> DefaultSacctFields();

// `sacct -e`: every field name, four to a line.
std::string SacctHelpFormat();
std::string SacctUsage();
std::string SacctHelp();

// Who asks: root sees every user's jobs, others their own unless -a or -u.
struct SacctCaller {
  uint32_t uid = 0;
  std::string user;
};

// The jobs the query selects, sorted by job id (array tasks by array and task), with the time
// window Slurm uses: -S (default midnight today; the epoch with -j; now with -s) to -E (now).
std::vector<const SacctJob*> SelectSacctJobs(const SacctOptions& opt,
                                             const std::vector<SacctJob>& jobs,
                                             const SacctCaller& caller, Time now);

// The window start the controller is asked for (finished jobs that ended after it).
Time SacctWindowStart(const SacctOptions& opt, Time now);

// SelectSacctJobs' test of one job, for the window [from, to] (SacctWindowStart, -E or now).
bool SacctSelects(const SacctOptions& opt, const JobView& v, const SacctCaller& caller, Time from,
                  Time to);
// The part of it that reads only the job's ids (job_id, array_job_id, array_task_id), user and
// uid: false when no other field could make the job selected.
bool SacctSelectsWho(const SacctOptions& opt, const JobView& v, const SacctCaller& caller);
// SelectSacctJobs' order: by job id, array tasks by array and task; each job once.
void SortSacctJobs(std::vector<const SacctJob*>* jobs);
// With -j, the lowest job id asked for (0 without -j): no job below it can match, as an array's
// tasks get their ids after the array's own (core::ClusterState).
uint32_t SacctLowestId(const SacctOptions& opt);

// The table (or -p/-P lines), header included unless -n.
std::string RenderSacct(const SacctOptions& opt, const std::vector<const SacctJob*>& jobs,
                        const std::string& cluster);

// `sacct --json`: Slurm 22.05's shape ({"meta", "errors", "jobs": [...]}, each job with its
// steps), with the keys berth can fill.
nlohmann::json SacctJson(const std::vector<const SacctJob*>& jobs, const std::string& cluster,
                         bool allocations);

// The value of one field of step `step`'s row (JOB.N) of `job`.
std::string StepValue(const std::string& field, const SacctJob& job, const api::StepRecord& step,
                      const std::string& cluster);
// The value of one field for a row (exposed for tests): `batch` picks the ID.batch row.
std::string SacctValue(const std::string& field, const SacctJob& job, bool batch,
                       const std::string& cluster);

// Slurm's print_fields for one value; `kind` tells how it fits (see the file comment).
enum class SacctKind { kText, kNumber, kTime, kDate };
std::string FitSacct(const std::string& value, int width, SacctKind kind);

// Shared with seff: Slurm's sizes (convert_num_unit with CONVERT_NUM_UNIT_EXACT) from MiB:
// 4000 -> "4000M", 4096 -> "4G", 0 -> "0".
std::string SacctMemory(int64_t mib);
// TotalCPU-style time: "01:23.500" under an hour, "01:02:03", "1-02:03:04".
std::string SacctCpuTime(double seconds);

}  // namespace berth::slurm

#endif  // BERTH_SLURM_SACCT_VIEW_H_
