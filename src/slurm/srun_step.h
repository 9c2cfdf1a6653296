// Runs the tasks of a job step that belong to this node as child processes of srun: each with
// its environment (srun.h TaskEnvironment), its output to the terminal, a file (-o/-e patterns)
// or labelled line by line (-l); signals srun receives are passed on to every task; srun waits
// for all of them and reports the ones that failed as Slurm's srun does.
//
// Thread safety: RunLocalStep changes the process's signal mask and waits for its children; call
// it from the main thread of a single-threaded program (the CLI).
#ifndef BERTH_SLURM_SRUN_STEP_H_
#define BERTH_SLURM_SRUN_STEP_H_

#include <cstdint>

#include "slurm/srun.h"

namespace berth::slurm {

struct LocalStep {
  SrunOptions options;
  Allocation alloc;
  StepLayout layout;
  size_t local_node = 0;  // index into layout.nodes
  uint32_t step_id = 0;
  EnvList base_env;  // srun's own environment
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
