// JobView: one job as Slurm's commands show it, derived from the controller's job JSON (GET
// /v1/jobs, GET /v1/jobs/ID, GET /v1/accounting/jobs; src/controller/job_record.cc writes it).
// scontrol, squeue, sacct and seff read this one struct, so that they agree with each other.
//
// Two kinds of fields: raw values (numbers, times in seconds, kNoTime when unset) for callers
// that compute or sort, and text already formatted as Slurm 22.05 prints it (the `*_text`
// fields and the ones documented as "as scontrol prints it"). Text never has trailing spaces.
//
// Thread safety: all functions are pure.
#ifndef BERTH_SLURM_JOB_VIEW_H_
#define BERTH_SLURM_JOB_VIEW_H_

#include <cstdint>
#include <nlohmann/json_fwd.hpp>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "common/status.h"
#include "common/time.h"
#include "core/model/job_state.h"

namespace berth::core {
struct JobSpec;
struct JobExecSpec;
}  // namespace berth::core

namespace berth::slurm {

struct JobView {
  // ---- Identity
  uint32_t job_id = 0;
  uint32_t array_job_id = 0;   // 0 when the job is not part of an array
  int32_t array_task_id = -1;  // this task's index; -1 for a non-array job and an array master
  // An array master's tasks not yet started, as scontrol's ArrayTaskId= ("1-5%2", "0,8,16");
  // "" for other jobs (a task shows its own index: see ArrayTaskIdText).
  std::string array_pending_tasks;
  int32_t array_max_running = 0;  // the %N throttle (0 = none)
  // squeue's JOBID: "123", "123_4" (a task), "123_[1-3%2]" (a master's pending tasks).
  std::string display_id;
  std::string name;  // JobName=
  std::string user;  // "alice"
  uint32_t uid = 0;
  uint32_t gid = 0;
  std::string group;      // group name, or the number when unknown
  std::string account;    // as Slurm stores it (lower case); "" = none ("(null)")
  std::string qos;        // "" = none ("(null)"): no accounting, as in the oracle cluster
  std::string partition;  // where it runs, or while pending the requested list "a,b"
  std::string submit_host;

  // ---- State
  core::JobState state = core::JobState::kPending;
  std::string state_text;       // "PENDING", "RUNNING", "OUT_OF_MEMORY"
  int64_t cancelled_by = -1;    // the uid whose cancel ended it (-1: none)
  std::string state_compact;    // squeue's %t: "PD", "R", "CG", "CA", "OOM"
  std::string reason = "None";  // Reason=: "None", "JobHeldUser", "Resources", ...
  int64_t priority = 0;
  int32_t nice = 0;
  bool held = false;
  bool admin_held = false;            // priority 0 by an operator (JobHeldAdmin)
  std::string dependency = "(null)";  // Dependency= as scontrol prints it
  bool requeue = true;
  int32_t restarts = 0;
  bool batch = true;      // BatchFlag=: a batch script (not a direct argv)
  int32_t exit_code = 0;  // ExitCode=<exit_code>:<exit_signal>
  int32_t exit_signal = 0;
  std::string message;  // from the node, when something went wrong

  // ---- Times (kNoTime when unset)
  Time submit_time = kNoTime;
  Time eligible_time = kNoTime;
  Time begin_time = kNoTime;
  Time start_time = kNoTime;      // actual start; for a pending job the expected start if known
  Time end_time = kNoTime;        // actual end; for a running job start + time limit
  Time expected_start = kNoTime;  // the scheduler's estimate while pending (squeue --start)
  Time deadline = kNoTime;
  Duration run_time = 0;            // elapsed: (end or now) - start, 0 before it starts
  Duration time_limit = kInfinite;  // kInfinite = UNLIMITED
  Duration time_min = kNoTime;      // kNoTime = "N/A"

  // ---- Shape (as slurmctld shows a job; see JobViewFromJson for the rules)
  int32_t min_nodes = 1;
  int32_t max_nodes = 0;  // 0 = no maximum given
  int32_t num_cpus = 1;   // NumCPUs=: allocated CPUs once started, else the minimum asked
  int32_t num_tasks = 1;
  int32_t cpus_per_task = 1;
  int32_t min_cpus_node = 1;
  int32_t ntasks_per_node = 0;          // 0 = not given
  int32_t ntasks_per_socket = 0;        // 0 = not given ("*")
  int32_t ntasks_per_core = 0;          // 0 = not given ("*")
  int64_t min_memory_node_mib = -1;     // MinMemoryNode= when >= 0 (0: all of each node's memory)
  int64_t min_memory_cpu_mib = -1;      // MinMemoryCPU= when >= 0
  int64_t req_mem_mib = 0;              // total memory asked (ReqTRES mem=)
  int32_t gpus = 0;                     // GPUs asked over the whole job (0 = none)
  int64_t gpu_milli = 0;                // GPU shares asked over the whole job, thousandths
  std::string req_tres;                 // "cpu=24,mem=125G,node=1,billing=24"
  std::string alloc_tres;               // "" until it starts
  std::string tres_per_node;            // "gres:gpu:4" ("" = not asked: the field is left out)
  std::string tres_per_job;             // "gres:gpu:rtx5000:2"
  std::string tres_per_task;            // "gres:gpu:1"
  std::string tres_per_socket;          // never set by berth; kept for the field list
  std::string cpus_per_tres;            // --cpus-per-gpu: "gres:gpu:4"
  std::string mem_per_tres;             // --mem-per-gpu: "gres:gpu:10240" (MiB)
  int32_t ntasks_per_tres = 0;          // --ntasks-per-gpu
  std::string features;                 // "" = "(null)"
  std::string licenses;                 // "cfs,cscratch1" or "matlab:2"; "" = "(null)"
  std::string oversubscribe = "OK";     // OK (not asked), NO (--exclusive), YES, USER
  std::string req_nodes;                // ReqNodeList= hostlist; "" = "(null)"
  std::string exc_nodes;                // ExcNodeList=
  std::vector<std::string> node_names;  // allocated, in order
  std::string nodes;                    // NodeList= hostlist of node_names ("" while pending)
  std::string batch_host;               // the first allocated node
  std::string reservation;

  // ---- How it runs
  std::string command;  // Command=: the script's path as submitted, or "(null)"
  std::string work_dir;
  std::string std_out;  // with %j, %x, %A, %a, %u, %% expanded as scontrol does
  std::string std_err;
  std::string std_in = "/dev/null";
  std::string comment;
  std::string mail_user;
  std::string mail_type;

  // ---- Use, once it ran
  double cpu_seconds = 0;       // TotalCPU
  int64_t max_rss_mib = 0;      // MaxRSS
  double gpu_utilization = -1;  // mean % over its GPUs; -1 = unknown
  Duration cpu_time = 0;        // CPUTime: elapsed x allocated CPUs

  friend bool operator==(const JobView&, const JobView&) = default;
};

// What Slurm's commands show of a job that the request alone does not say: facts about the
// cluster the job was submitted to (the record's "slurm" object; the controller computes them).
struct ClusterFacts {
  int64_t node_mem_mib = 0;                 // RealMemory of the partition's largest node
  int64_t node_cpus = 0;                    // CPUs of the partition's largest node (0 = unknown)
  int64_t def_mem_per_cpu_mib = 0;          // DefMemPerCPU in force for the job (0 = none)
  int64_t def_mem_per_node_mib = 0;         // DefMemPerNode (0 = none)
  Duration default_time_limit = kInfinite;  // the partition's DefaultTime, else its MaxTime
  bool gpus_in_tres = true;   // AccountingStorageTRES counts GPUs (TRES= shows gres/gpu)
  bool accounting = true;     // false: accounting_storage/none (QOS=(null))
  bool account_given = true;  // false: the job named no account and got berth's "default"

  friend bool operator==(const ClusterFacts&, const ClusterFacts&) = default;
};

// A job record's own fields, besides its request, as a view reads them: from the record's JSON
// (JobViewFromJson) or straight from the controller's record in memory (its squeue), so that
// both give the same view. Times <= 0 count as unset.
struct JobRecordFacts {
  uint32_t id = 0;
  uint32_t array_job_id = 0;
  int32_t array_task_id = -1;
  core::JobState state = core::JobState::kPending;
  int64_t cancelled_by = -1;
  int64_t priority = 0;
  std::string reason;  // a pending reason's name; "" = none given
  int32_t restart_count = 0;
  int32_t exit_code = 0;
  int32_t term_signal = 0;
  std::string message;
  Time submit_time = kNoTime;
  Time eligible_time = kNoTime;
  Time expected_start = kNoTime;
  Time start_time = kNoTime;
  Time end_time = kNoTime;
  Time preempt_end = kNoTime;
  Duration time_limit = 0;  // > 0: the limit in force, over the request's
  std::string submit_host;
  std::string partition;
  struct Node {
    std::string name;
    int64_t cpus = 0;
    int64_t mem_mib = 0;
    int64_t gpus = 0;
    int64_t gpu_milli = 0;  // its GPU shares together
  };
  std::vector<Node> nodes;  // the allocation, in order
  double cpu_seconds = 0;
  int64_t max_rss_mib = 0;
  double gpu_utilization = -1;
  ClusterFacts cluster;
};

// Builds the view of one job record. `now` gives RunTime of a running job. Errors
// (kInvalidArgument) when a required key ("id", "state", "request") is missing or mistyped.
Result<JobView> JobViewFromJson(const nlohmann::json& record, Time now);
// Parts of a view that cost to make, which a caller showing only some fields (squeue's lines)
// may leave out: those not asked for stay empty. Everything else is always there.
enum ViewPart : uint32_t {
  kViewTres = 1,        // req_tres, alloc_tres, tres_per_job/node/socket/task
  kViewPaths = 2,       // std_in, std_out, std_err, work_dir
  kViewDependency = 4,  // dependency
  kViewCommand = 8,     // command
  kViewAllParts = 15,
};
// The same from a record's fields and its request (`exec`: how it runs, or null when not
// shown: a list's record has none), with the parts `parts` names (ViewPart bits).
JobView JobViewOf(const JobRecordFacts& record, const core::JobSpec& spec,
                  const core::JobExecSpec* exec, Time now, uint32_t parts = kViewAllParts);
// The same into `*v`, which must be a view as JobView{} makes it (a caller keeping views in
// place, such as squeue's table, makes each where it stays).
void FillJobView(const JobRecordFacts& record, const core::JobSpec& spec,
                 const core::JobExecSpec* exec, Time now, uint32_t parts, JobView* v);
// The views of every record of a list answer's text (`{"jobs":[...]}`), parsed one record at a
// time (api/json_scan.h) into a vector allocated once. Records that are not JSON or do not
// decode are skipped and counted in `*skipped` when given; a list whose structure is broken:
// InvalidArgument.
Result<std::vector<JobView>> JobViewsFromList(std::string_view list, Time now,
                                              int* skipped = nullptr);

// ---- Text as Slurm prints it

// A job record's id as squeue's JOBID shows it, without building the whole view: "7", an array
// task "1_3", an array's pending remainder "1_[6-9%3]" (its request's tasks in Slurm's form).
std::string DisplayJobId(const nlohmann::json& record);

// "2026-12-02T09:55:37" in the local time zone; "Unknown" for kNoTime (Slurm's slurm_make_time_str
// with the default format, as scontrol prints times).
std::string SlurmTimeText(Time t);
// "0:0" (ExitCode=, sacct ExitCode).
std::string ExitCodeText(const JobView& v);
// ArrayTaskId=: the master's pending tasks, a task's own index, "" for a non-array job.
std::string ArrayTaskIdText(const JobView& v);
// "(null)" for an empty string.
std::string OrNull(const std::string& s);

// `scontrol show job` of one job: the fields in the order Slurm 22.05 prints them, keys exactly
// as printed ("CPUs/Task", "AllocNode:Sid", "TRES"). Optional fields (ArrayJobId, TresPerNode,
// MailUser, ...) appear only where Slurm prints them. `details` adds the fields of `-d`.
std::vector<std::pair<std::string, std::string>> ScontrolJobFields(const JobView& v,
                                                                   bool details = false);

}  // namespace berth::slurm

#endif  // BERTH_SLURM_JOB_VIEW_H_
