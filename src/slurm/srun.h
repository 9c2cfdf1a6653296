// srun as Slurm 22.05 behaves, in the parts berth has today: its options, the layout of a job
// step's tasks over an allocation (Slurm's block distribution), each task's environment
// (SLURM_PROCID, SLURM_LOCALID, SLURM_NODEID, SLURM_STEP_*, CUDA_VISIBLE_DEVICES split per task
// for --gpus-per-task), output file patterns, and how the end of tasks is reported ("srun:
// error: n1: tasks 0-1: Exited with exit code 3") and turned into srun's exit code.
//
// Where srun runs:
//  * inside an allocation (SLURM_JOB_ID in the environment, as in a batch script) it launches a
//    step of the job: the tasks of THIS node are started as child processes (srun_step.h), and
//    those of the step's other nodes through the controller, which has each node's agent start
//    a supervisor running this same srun for that node's tasks (BERTH_STEP carries the layout);
//  * outside an allocation it submits a job whose program is `berth srun <step options> --
//    COMMAND...` (the same step launch, inside the new allocation), waits for it to start,
//    copies its output to the terminal and exits with its exit code (src/cli/slurm_srun.cc).
//
// Thread safety: ParseSrunArgs uses getopt_long (process-wide state): call it from one thread at
// a time. Everything else is pure.
#ifndef BERTH_SLURM_SRUN_H_
#define BERTH_SLURM_SRUN_H_

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "common/status.h"
#include "image/container_spec.h"
#include "slurm/pyxis.h"
#include "slurm/view_options.h"

namespace berth::slurm {

using EnvList = std::vector<std::pair<std::string, std::string>>;

struct SrunOptions {
  // The step. 0 = not given.
  int32_t ntasks = 0;
  int32_t min_nodes = 0, max_nodes = 0;
  int32_t cpus_per_task = 0;
  int32_t gpus_per_task = 0;
  int32_t ntasks_per_node = 0;
  bool label = false;
  bool pty = false;                  // --pty: task 0 on a pseudo-terminal (srun_stdio.h)
  std::string output, error, input;  // patterns; "" = the terminal (or the job's files)
  std::string nodelist;              // -w: the step's nodes
  std::string chdir;                 // -D
  std::string job_name;              // -J
  std::string export_env;            // --export (outside an allocation)
  bool overcommit = false;           // -O
  int verbose = 0;
  bool quiet = false;
  // Options for a new allocation, by sbatch long name ("partition", "time", "mem", ...): they
  // shape the job srun creates outside an allocation and are ignored inside one.
  std::vector<std::pair<std::string, std::string>> job_options;
  // The step options again as command-line words, for the srun that runs inside the new job.
  std::vector<std::string> step_args;
  // pyxis's --container-* options (slurm/pyxis.h), and the same as words for the srun that runs
  // inside a job srun creates outside an allocation (that srun makes the containerised step).
  PyxisRequest pyxis;
  std::vector<std::string> container_args;
  std::vector<std::string> command;  // the program and its arguments
  bool help = false, usage = false, version = false;
};

// What parsing produced: options, or text to print and an exit code.
// done: print `out` / `err` and exit with `exit_code` (ParseExit); otherwise run `options`.
struct SrunParse : ParseExit {
  SrunOptions options;
};

// Parses srun's arguments (args[0] is the program name). Options stop at the first word that is
// not an option (the command), as srun's getopt does ("+" mode). SRUN_* / SLURM_* input variables
// are not read here: see ApplyStepDefaults.
SrunParse ParseSrunArgs(const std::vector<std::string>& args);

std::string SrunUsage();
std::string SrunHelp();

// The allocation srun runs in, read from the batch job's environment.
struct Allocation {
  uint32_t job_id = 0;
  std::string job_name;
  std::string user;
  uint32_t array_job_id = 0;
  int32_t array_task_id = -1;
  std::vector<std::string> nodes;  // SLURM_JOB_NODELIST, expanded
  std::vector<int32_t> cpus;       // per node (SLURM_JOB_CPUS_PER_NODE, "4(x2),2")
  int32_t this_node = 0;           // SLURM_NODEID
  std::vector<std::string> gpus;   // this node's GPUs (CUDA_VISIBLE_DEVICES, else SLURM_JOB_GPUS)
  int32_t env_ntasks = 0;          // SLURM_NTASKS: srun's default -n
  int32_t env_nnodes = 0;          // SLURM_NNODES: srun's default -N
  // SRUN_CPUS_PER_TASK: srun's default -c. Since 22.05 srun no longer reads
  // SLURM_CPUS_PER_TASK (sbatch -c does not pass on to steps by itself).
  int32_t env_cpus_per_task = 0;
  std::string start_time;  // SLURM_JOB_START_TIME: tells this job from an older one
                           // with the same id (berth test clusters start ids at 1)
};

// Reads the allocation; NotFound when SLURM_JOB_ID is not set (srun then makes a job).
Result<Allocation> AllocationFromEnv(const EnvList& env);

// "4(x2),2" -> {4, 4, 2}.
Result<std::vector<int32_t>> ExpandCounts(std::string_view text);

// Where each task of a step runs.
struct StepLayout {
  std::vector<std::string> nodes;       // the step's nodes, in allocation order
  std::vector<int32_t> node_index;      // their index in the allocation
  std::vector<int32_t> tasks_per_node;  // per step node
  int32_t ntasks = 0;
  int32_t cpus_per_task = 1;
  std::vector<std::string> warnings;  // "srun: Warning: can't run 1 processes on 2 nodes, ..."

  // Global task ids on step node `n` (block order: node 0 gets 0..k-1, ...).
  std::vector<int32_t> TaskIds(size_t n) const;
  // SLURM_STEP_TASKS_PER_NODE: "2(x2),1".
  std::string TasksPerNodeText() const;
};

// Lays out a step of `opt` over `alloc`, as Slurm's block distribution does: one task on each
// node, then one more per node in turn while CPUs are free. Errors use Slurm's words ("Unable
// to create step for job 12: More processors requested than permitted").
Result<StepLayout> PlanStep(const SrunOptions& opt, const Allocation& alloc);

// Which of a step's nodes is this one, and the others (srun starts their tasks through the
// controller: src/cli/slurm_srun.cc).
// `in_container`: the step runs in a container, which each node's supervisor sets up, so this
// node's part starts through the controller too: every step node is one of the "others".
struct StepSplit {
  size_t local = 0;                 // index into layout.nodes; layout.nodes.size() for none
  std::vector<std::string> others;  // the other step nodes, in layout order
};
StepSplit SplitStep(const StepLayout& layout, const Allocation& alloc, bool in_container = false);

// The variable that carries a step's layout to its other nodes: set by srun on the batch node,
// read by the srun each of those nodes' supervisors runs, given to no task.
inline constexpr char kStepVariable[] = "BERTH_STEP";
// The layout (and step id) as that variable holds it, and back; a layout that does not add up is
// an error naming what is wrong.
std::string EncodeStepLayout(const StepLayout& layout, uint32_t step_id);
Result<std::pair<StepLayout, uint32_t>> DecodeStepLayout(std::string_view text);
// Variables of srun's environment on the batch node that the other nodes must not get: each
// node's supervisor sets its own (GPUs, node name), and the step token stays on the batch node.
bool NodeSpecificVariable(std::string_view name);

// One task's environment: `base` (srun's own) with the step's variables set.
struct TaskIdentity {
  int32_t global_id = 0;
  int32_t local_id = 0;
  int32_t step_node = 0;  // SLURM_NODEID: the node's index in the step
};
EnvList TaskEnvironment(const EnvList& base, const StepLayout& layout, const TaskIdentity& task,
                        uint32_t step_id, const std::vector<std::string>& gpus);

// The GPUs of local task `local_id` with --gpus-per-task (consecutive slices of this node's),
// or an error when the node has too few.
Result<std::vector<std::string>> TaskGpus(const Allocation& alloc, const SrunOptions& opt,
                                          int32_t local_tasks, int32_t local_id);

// srun's -o/-e/-i patterns: %j %J %s %t %n %N %u %x %A %a %% with an optional width ("%3t");
// unknown letters stay. "none" is /dev/null.
struct PatternContext {
  uint32_t job_id = 0;
  uint32_t step_id = 0;
  int32_t task_id = 0;
  int32_t node_id = 0;
  std::string node_name, user, job_name;
  uint32_t array_job_id = 0;
  int32_t array_task_id = -1;
};
std::string ExpandSrunPattern(const std::string& pattern, const PatternContext& c);
// Whether a pattern gives each task its own file (it has %t).
bool PatternPerTask(const std::string& pattern);

// -l's label: the task id right-aligned to the width of the largest id, then ": ".
std::string TaskLabel(int32_t task_id, int32_t ntasks);

// How one task ended (a wait status).
struct TaskEnd {
  int32_t task_id = 0;
  int wait_status = 0;
};

// srun's lines for the tasks that did not succeed, grouped by outcome: "srun: error: n1: task 1:
// Exited with exit code 3", "srun: error: n1: tasks 0,2: Killed".
std::vector<std::string> TaskEndLines(const std::string& node, const std::vector<TaskEnd>& ends);

// srun's exit code: of the largest wait status (as srun keeps it), the exit status, or 128 +
// the signal.
int SrunExitCode(const std::vector<TaskEnd>& ends);

// The container a step's tasks run in (pyxis's options; nullopt for none: the host, also inside
// a batch job that runs in a container, as with pyxis). `cwd` is srun's working directory, `env`
// its environment. `new_job`: srun outside an allocation, whose job has no named container yet.
Result<std::optional<image::ContainerSpec>> StepContainer(const SrunOptions& opt,
                                                          const EnvList& env,
                                                          const std::string& cwd, bool new_job);

// The command line of the srun that runs inside a job created outside an allocation.
std::vector<std::string> InnerSrunArgs(const std::string& berth_binary, const SrunOptions& opt);

}  // namespace berth::slurm

#endif  // BERTH_SLURM_SRUN_H_
