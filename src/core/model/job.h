// Jobs: what a user asked for (JobSpec: everything `sbatch` can express that affects scheduling),
// how to run it (JobExecSpec: stored and passed to the node, never read by the scheduler), and
// the record the cluster keeps while the job lives (Job).
#ifndef BERTH_CORE_MODEL_JOB_H_
#define BERTH_CORE_MODEL_JOB_H_

#include <cstdint>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "common/copy_on_write.h"
#include "common/time.h"
#include "core/model/array_spec.h"
#include "core/model/constraint.h"
#include "core/model/dependency.h"
#include "core/model/job_state.h"
#include "core/model/reason.h"
#include "core/model/resources.h"

namespace berth::core {

using JobId = uint32_t;
inline constexpr JobId kNoJob = 0;

enum class HoldKind : uint8_t { kNone, kUser, kAdmin };

enum class ExclusiveMode : uint8_t {
  kNo,    // share nodes (the default; CPUs and GPUs are never shared)
  kNode,  // --exclusive: whole nodes
  kUser,  // --exclusive=user: share nodes only with the same user's jobs
};

// The scheduling-relevant request. Fields left at their "not given" values take Slurm's
// defaults when the job is normalised into a JobShape (see core/state/shape.h).
struct JobSpec {
  std::string name;
  std::string user;
  uint32_t uid = 0;
  uint32_t gid = 0;
  std::string account;                  // "" = the user's default account
  std::vector<std::string> partitions;  // empty = the default partition
  std::string qos;                      // "" = "normal"

  Time submit_time = 0;
  Time begin_time = kNoTime;      // --begin
  Time deadline = kNoTime;        // --deadline
  Duration time_limit = kNoTime;  // --time; kNoTime = the partition's default
  Duration time_min = kNoTime;    // --time-min

  int32_t nice = 0;
  int64_t admin_priority = -1;  // --priority (operators); -1 = computed by the scheduler
  HoldKind hold = HoldKind::kNone;
  bool requeue = true;

  int32_t min_nodes = 0;  // -N min[-max]; 0 = not given
  int32_t max_nodes = 0;
  int32_t ntasks = 0;  // -n; 0 = not given
  int32_t ntasks_per_node = 0;
  int32_t ntasks_per_gpu = 0;
  int32_t ntasks_per_socket = 0;  // shown (NtasksPerN:B:S:C); placement does not use it
  int32_t ntasks_per_core = 0;    // likewise
  int32_t cpus_per_task = 0;      // -c; 0 = not given (1)
  int32_t cpus_per_gpu = 0;
  int64_t mem_per_node_mib = -1;  // --mem; -1 = not given, 0 = all memory of each node
  int64_t mem_per_cpu_mib = -1;   // --mem-per-cpu
  int64_t mem_per_gpu_mib = -1;   // --mem-per-gpu
  int32_t gpus = 0;               // -G/--gpus: total over the job
  int32_t gpus_per_node = 0;      // --gpus-per-node, --gres=gpu:N
  int32_t gpus_per_task = 0;
  std::string gpu_type;          // "h100"; "" = any type
  std::vector<NamedCount> gres;  // other per-node generic resources ("shard", 2)
  std::vector<NamedCount> licenses;
  // A share of ONE GPU device on each node, in thousandths of a device (1..1000; --gres=mps:N,
  // nvidia.com/gpu.shared); 0 = none. Excludes whole GPUs (gpus, gpus_per_node, gpus_per_task).
  int32_t gpu_milli = 0;
  bool gpu_mps = false;  // the share is CUDA MPS's (--gres=mps:N): its processes get a thread limit
  ExclusiveMode exclusive = ExclusiveMode::kNo;
  bool oversubscribe = false;
  bool overcommit = false;  // -O: one task's CPUs a node, however many tasks (Slurm's min_cpus)
  Constraint constraint;
  std::vector<std::string> nodelist;  // -w: nodes the job must include (expanded)
  std::vector<std::string> exclude;   // -x
  Dependency dependency;
  bool kill_on_invalid_dep = false;
  // Accepted even when no configured node could ever hold it (Kubernetes pods: they wait as
  // unschedulable); otherwise such a job is refused at submission, as Slurm does.
  bool wait_if_infeasible = false;
  ArraySpec array;
  std::string reservation;  // --reservation: runs only in that advance reservation
};

// How the job runs on its node(s). Stored and handed to the agent; the scheduler never reads it.
struct JobExecSpec {
  std::string script;                    // batch script text (or the --wrap command line)
  std::vector<std::string> argv;         // a command to exec directly (Kubernetes pods)
  std::vector<std::string> script_args;  // $1... of the batch script (`sbatch job.sh ARGS...`)
  std::string work_dir;
  std::string stdout_pattern;  // Slurm's %j %A %a %x %u %N %n %t %% patterns
  std::string stderr_pattern;
  std::string stdin_path;
  bool open_append = false;                                      // --open-mode=append
  std::vector<std::pair<std::string, std::string>> environment;  // exported variables
  int32_t signal_number = 0;                                     // --signal=[B:]SIG@SECS
  Duration signal_before = 0;
  bool signal_batch_only = false;
  std::string comment;
  std::string command;  // the batch script's path as submitted (scontrol's Command=)
  std::string mail_type;
  std::string mail_user;
  std::string gpu_bind;
  std::string cpu_bind;
  // The host name the job's processes see ($HOSTNAME, and in a container the UTS name): a Pod's
  // (its spec.hostname, else its name); "" = the node's.
  std::string hostname;
  // A Pod's stdin/stdinOnce/tty (docs/adr/0006-pod-streams.md, attach): the main process reads
  // a pipe the node holds open (open_stdin), closed after the first attached client's stdin ends
  // (stdin_once); tty: it runs on a pseudo-terminal the node holds (needs open_stdin).
  bool open_stdin = false;
  bool stdin_once = false;
  bool tty = false;
  // The container the job runs in: the canonical JSON text of an image::ContainerSpec (the job
  // request's "container" object, docs/containers.md); "" = the node's own system.
  std::string container;

  friend bool operator==(const JobExecSpec&, const JobExecSpec&) = default;
};

// What one GPU device holds in all, in thousandths; shares on a device add up to at most this.
inline constexpr int32_t kGpuMilliPerDevice = 1000;

// A share of one GPU device: the node's device index and the thousandths of it held.
struct GpuShare {
  int32_t device = 0;
  int32_t milli = 0;
  friend bool operator==(const GpuShare&, const GpuShare&) = default;
};

// Resources a job holds on one node.
struct NodeAllocation {
  uint32_t node = 0;  // index of the node in the cluster
  int32_t cpus = 0;
  int64_t mem_mib = 0;
  uint64_t gpu_mask = 0;  // bit i = the node's GPU device i
  int32_t tasks = 0;
  std::vector<NamedCount> gres;  // other per-node generic resources
  // Shares of devices not held whole (a device is either in gpu_mask or shared, never both).
  std::vector<GpuShare> gpu_shares;

  int gpu_count() const { return __builtin_popcountll(gpu_mask); }
  // Whole devices and shares together, in thousandths of a device.
  int64_t gpu_milli() const {
    int64_t m = int64_t{gpu_count()} * kGpuMilliPerDevice;
    for (const GpuShare& s : gpu_shares) m += s.milli;
    return m;
  }
  friend bool operator==(const NodeAllocation&, const NodeAllocation&) = default;
};

struct Allocation {
  std::vector<NodeAllocation> nodes;  // in the order the job sees them (node 0 runs the script)
  std::vector<NamedCount> licenses;

  bool empty() const { return nodes.empty(); }
  // Service units per second it accrues for least attained service (core/sched/las.h): its
  // GPUs, a share counting as its fraction of a device, or its CPUs when it has no GPU.
  double service_rate() const {
    int64_t milli = 0, cpus = 0;
    for (const NodeAllocation& a : nodes) {
      milli += a.gpu_milli();
      cpus += a.cpus;
    }
    return milli > 0 ? static_cast<double>(milli) / kGpuMilliPerDevice : static_cast<double>(cpus);
  }
  friend bool operator==(const Allocation&, const Allocation&) = default;
};

// Why the job last ended, for dependencies and accounting.
struct JobOutcome {
  JobState state = JobState::kPending;
  int32_t exit_code = 0;
  int32_t term_signal = 0;
  Time start_time = kNoTime;  // kNoTime when it never started
  Time end_time = kNoTime;
};

// The cluster's record of one job. Array jobs: while tasks remain to start, one record (the
// "master", array_task_id == -1) holds the tasks not yet started in spec.array.task_ids; each
// task that starts gets a record of its own with its own id.
struct Job {
  JobId id = kNoJob;
  // The request, shared by the copies of the job (the scheduler's, each record of it) until one
  // is changed: read it as job.spec->field, change it through job.spec->Mut().
  CopyOnWrite<JobSpec> spec;
  std::shared_ptr<const JobExecSpec> exec;  // may be null (the simulator)
  JobState state = JobState::kPending;

  JobId array_job_id = kNoJob;  // the array's id (== id for the master); kNoJob if no array
  int32_t array_task_id = -1;   // this task's index; -1 for the master and for non-array jobs

  Time eligible_time = kNoTime;  // when it became eligible to run (drives the age factor)
  Time start_time = kNoTime;
  Time end_time = kNoTime;
  Duration time_limit = kNoTime;  // the limit in force once started
  std::string partition;          // where it runs (or ran)
  Allocation alloc;
  int32_t restart_count = 0;
  // Service of its ended attempts (GPU-seconds; CPU-seconds when it held no GPU), and how long
  // the last one ran: what the least-attained-service policy ranks by (core/sched/las.h).
  double attained_service = 0;
  Duration last_run = 0;
  JobOutcome outcome;  // set when the job ends

  bool is_array_master() const { return array_job_id == id && array_task_id < 0; }
};

}  // namespace berth::core

#endif  // BERTH_CORE_MODEL_JOB_H_
