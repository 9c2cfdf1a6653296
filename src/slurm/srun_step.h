// Runs the tasks of a job step that belong to this node as child processes of srun: each with
// its environment (srun.h TaskEnvironment), its output to the terminal, a file (-o/-e patterns)
// or labelled line by line (-l); signals srun receives are passed on to every task; srun waits
// for all of them and reports the ones that failed as Slurm's srun does.
//
// Thread safety: RunLocalStep changes the process's signal mask and waits for its children; call
// it from the main thread of a single-threaded program (the CLI).
#ifndef BERTH_SLURM_SRUN_STEP_H_
#define BERTH_SLURM_SRUN_STEP_H_

#include <sys/ioctl.h>
#include <unistd.h>

#include <cstdint>
#include <functional>
#include <optional>
#include <vector>

#include "slurm/srun.h"
#include "slurm/step_usage.h"

namespace berth::slurm {

// The step's tasks on the other nodes, as srun on the batch node drives them (through the
// controller, src/cli/slurm_srun.cc).
class RemoteNodes {
 public:
  virtual ~RemoteNodes() = default;
  // Starts them; false (the reason printed) when they cannot be. Called once this node's output
  // files are open (and truncated), before this node's tasks start.
  virtual bool Start() = 0;
  // Passes a signal on to them.
  virtual void Signal(int signal) = 0;
  // Once every other node's part has ended: one TaskEnd per node (task_id -1, the wait status
  // that stands for its srun's exit), its error lines already printed; nothing while any runs.
  virtual std::optional<std::vector<TaskEnd>> Ended() = 0;
};

// Told when a step's tasks have started and when the step has ended: the batch node's srun
// records the step with the controller through it (sacct's JOB.N rows).
class StepObserver {
 public:
  virtual ~StepObserver() = default;
  virtual void Started() = 0;
  // `local`: what this node's tasks used; `ends`: every task of the step, other nodes' too;
  // `ending_signal_passed`: srun passed on a signal that ends a step (step_usage.h, EndsStep).
  virtual void Ended(const std::vector<TaskUsage>& local, const std::vector<TaskEnd>& ends,
                     bool ending_signal_passed) = 0;
};

struct LocalStep {
  SrunOptions options;
  Allocation alloc;
  StepLayout layout;
  // Index into layout.nodes; layout.nodes.size() when this node runs none of the step's tasks.
  size_t local_node = 0;
  uint32_t step_id = 0;
  EnvList base_env;  // srun's own environment
  // On the step's other nodes: output files are opened for appending (the batch node truncated
  // them first), and the layout's warnings were printed there.
  bool part_of_remote_step = false;
  RemoteNodes* remote = nullptr;  // on the batch node: the other nodes' tasks, if any
  StepObserver* observer = nullptr;
  // What srun copies to the tasks that read its input (-i, --pty): its standard input, which is
  // also the terminal --pty puts in raw mode.
  int input_fd = STDIN_FILENO;
  // --pty: the window size task 0's terminal starts with (the caller's terminal's).
  std::optional<winsize> window = std::nullopt;
  // --pty: the caller's window size after a SIGWINCH, where input_fd is not the caller's terminal
  // (the srun inside a job srun created: src/cli/srun_relay.h). Unset: input_fd's size.
  std::function<std::optional<winsize>()> window_now = nullptr;
};

// Launches the local tasks, forwards signals, waits for them and returns srun's exit code.
// Problems before any task starts (a GPU split that does not fit, an output file that cannot be
// opened) are printed and give exit code 1.
int RunLocalStep(const LocalStep& step);

// The next step id of the allocation's job on this node (0, 1, ...): a counter in a file under
// $TMPDIR (else /tmp) named by uid, job id and start time, locked while it is read and written,
// so that sruns running at once get different ids. Counter files of the user untouched for a
// week are removed on the way.
uint32_t NextStepId(const Allocation& alloc);

}  // namespace berth::slurm

#endif  // BERTH_SLURM_SRUN_STEP_H_
