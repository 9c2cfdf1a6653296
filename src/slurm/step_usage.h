// A job step's accounting as the batch node's srun sees it: what its tasks used (the kernel's
// count for a waited child: peak RSS, user and system CPU time, the task's waited descendants
// included) and how the step ended, folded into the api::StepRecord srun reports to the
// controller for sacct's JOB.N rows (docs/slurm.md "Step accounting").
//
// Thread safety: pure functions. Used by srun (src/slurm/srun_step.cc, src/cli/slurm_srun.cc).
#ifndef BERTH_SLURM_STEP_USAGE_H_
#define BERTH_SLURM_STEP_USAGE_H_

#include <cstdint>
#include <string>
#include <vector>

#include "api/step_record.h"
#include "common/time.h"
#include "slurm/srun.h"

namespace berth::slurm {

struct TaskUsage {
  int32_t task_id = 0;
  int64_t max_rss_kib = 0;
  double user_seconds = 0;
  double system_seconds = 0;
};

// What a step's part on another node used (its supervisor's count of the tasks it ran there):
// folded into the step's CPU times and MaxRSS; AveRSS and MinCPU stay the batch node's tasks'.
struct NodeUsage {
  std::string node;
  int32_t first_task = 0;  // the node's first task id (MaxRSSTask when its peak is the step's)
  int64_t max_rss_kib = 0;
  double user_seconds = 0;
  double system_seconds = 0;
};

// Completes `s` (its identity, start, tasks and nodes already set) for a step that ended at
// `end`: the state (CANCELLED when srun passed on a signal that ends a step, SIGINT, SIGTERM,
// SIGHUP or SIGQUIT, and a task then died of a signal; FAILED when a task exited non-zero or died
// of a signal; COMPLETED otherwise), the exit code and signal as srun's own exit code reads them
// (the worst task), and the usage of the tasks this node ran (`local`, run on `node`).
void FinishStepRecord(const std::vector<TaskUsage>& local, const std::vector<TaskEnd>& ends,
                      bool ending_signal_passed, const std::string& node, Time end,
                      api::StepRecord* s, const std::vector<NodeUsage>& remote = {});

// Whether srun passing on `sig` means the step is being ended (Ctrl-C, scancel, a hang-up).
bool EndsStep(int sig);

}  // namespace berth::slurm

#endif  // BERTH_SLURM_STEP_USAGE_H_
