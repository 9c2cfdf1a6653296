// The controller's table of job steps on a job's other nodes (srun across hosts, docs/slurm.md
// "srun"): for each job and step, the attempt it belongs to and, by node, the agent command that
// starts the node's part and, once the node reported it, how the part ended. Held in memory only:
// agents keep their steps' folders (results included) until the job ends and report them again
// when they register, so a restarted controller learns them back.
//
// Thread safety: every method may be called from any thread (one mutex inside). The controller's
// state thread is the only writer; API threads read (srun polls a step's state without a trip
// through the state thread).
// Used by Controller::Impl (controller_steps.cc, controller_agents.cc, controller_state.cc).
#ifndef BERTH_CONTROLLER_STEP_TABLE_H_
#define BERTH_CONTROLLER_STEP_TABLE_H_

#include <functional>
#include <map>
#include <optional>
#include <set>
#include <string>
#include <utility>
#include <vector>

#include "agent/launch.h"
#include "common/status.h"
#include "common/thread_annotations.h"
#include "core/model/job.h"

namespace berth::controller {

// A step's part on one node.
struct StepNode {
  std::string command;                     // the agent command that starts it (sent again after
                                           // the node registers without it)
  std::optional<agent::JobResult> result;  // once the node reported its end
};
struct StepState {
  int32_t attempt = 0;
  std::map<std::string, StepNode> nodes;  // by node name
};

// A job attempt's step parts that a node is to end.
struct StaleSteps {
  std::string node;
  core::JobId job = 0;
  int32_t attempt = 0;
  bool operator==(const StaleSteps&) const = default;
};

class StepTable {
 public:
  bool empty() const;
  bool Contains(core::JobId job, uint32_t step) const;
  // A copy of the step; nullopt when the table does not know it.
  std::optional<StepState> Find(core::JobId job, uint32_t step) const;
  // Adds a step; AlreadyExists when the job has a step of that id.
  Status Add(core::JobId job, uint32_t step, StepState state);
  // A node's report of its part of a step: the step (and part) are known from now on; the first
  // result reported is kept.
  void Note(const std::string& node, core::JobId job, int32_t attempt, uint32_t step,
            const std::optional<agent::JobResult>& result);
  // The commands of the parts on `node` that have not ended, but for the steps in `running`
  // (job, step): the node is to be sent them again.
  std::vector<std::string> CommandsToResend(
      const std::string& node, const std::set<std::pair<core::JobId, uint32_t>>& running) const;
  // Forgets the jobs whose steps may no longer run (may_run(job, attempt) is false) and returns
  // each of their nodes, to be told to end them.
  std::vector<StaleSteps> TakeStale(const std::function<bool(core::JobId, int32_t)>& may_run);

 private:
  mutable Mutex mu_;
  std::map<core::JobId, std::map<uint32_t, StepState>> steps_ GUARDED_BY(mu_);
};

}  // namespace berth::controller

#endif  // BERTH_CONTROLLER_STEP_TABLE_H_
