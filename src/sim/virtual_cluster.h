// VirtualCluster: the production ClusterState and Scheduler with a simulated clock and simulated
// processes, shared by the trace driver and the scenario runner. Plans are applied with
// ClusterState::Apply, exactly as the controller applies them; what differs is only that a job
// "runs" until min(its run time, its time limit), and preempted jobs stop at once.
// With LasConfig::restart_delay set (the `las` preset sets it), a requeued job resumes where it
// stopped, after that delay, as a trainer restoring its checkpoint; otherwise it starts over.
#ifndef BERTH_SIM_VIRTUAL_CLUSTER_H_
#define BERTH_SIM_VIRTUAL_CLUSTER_H_

#include <cstdint>
#include <functional>
#include <queue>
#include <unordered_map>
#include <vector>

#include "common/status.h"
#include "core/config.h"
#include "core/plan.h"
#include "core/sched/scheduler.h"
#include "core/state/cluster_state.h"

namespace berth::sim {

class VirtualCluster {
 public:
  using EndFn = std::function<void(const core::Job& final_record)>;
  using PassFn = std::function<void(const core::Plan&, const core::ApplyResult&)>;

  static Result<VirtualCluster> Create(const core::ClusterSpec& cluster,
                                       const core::SchedulerConfig& scheduler);

  core::ClusterState& state() { return state_; }
  const core::ClusterState& state() const { return state_; }

  // How long a job (every task, for an array) runs once started, and how it exits.
  // kInfinite: until ended explicitly (EndNow).
  void SetRunTime(core::JobId id, Duration run, int32_t exit_code);

  // The earliest time a running job ends by itself; kInfinite when none will.
  Time NextEnd();
  // The next time something happens by itself: a job's end, or the time the last pass asked
  // to be woken at (a --begin time, an after:+MIN delay passing). kInfinite when none.
  Time NextEvent();

  // Ends every job whose run is over at `t` (COMPLETED, FAILED by exit code, or TIMEOUT when
  // cut at its limit), calling on_end with each final record.
  void EndJobsAt(Time t, const EndFn& on_end);

  // Ends one running job now with the given outcome (requeue puts it back in the queue).
  Status EndNow(core::JobId id, const core::JobOutcome& outcome, bool requeue, const EndFn& on_end);

  // Runs scheduling passes at `t`: one, plus one more after each pass that preempted (victims
  // stop at once, requeued or ended), at most 64. Returns the number of passes.
  int Schedule(Time t, const PassFn& on_pass, const EndFn& on_end);

  // A job that started running at `t` (by a pass, or a CONFIGURING job whose nodes came up):
  // schedules its end.
  void Started(core::JobId id, Time t);

  int64_t preemptions() const { return preemptions_; }

  // Whether passes write blocked jobs' reason details (core::Scheduler::set_explain_details):
  // the scenario runner's decision log prints them; a trace replay reports none and turns them
  // off. Decisions are the same either way.
  void SetExplainDetails(bool on) { scheduler_.set_explain_details(on); }
  // Whether passes list every pending job's reason (core::Scheduler::set_pending_reasons):
  // likewise off for a trace replay, whose passes may then stop early in a long queue.
  void SetPendingReasons(bool on) { scheduler_.set_pending_reasons(on); }

 private:
  struct EndEvent {
    Time time = 0;
    core::JobId job = core::kNoJob;
    int32_t restart = 0;
    bool operator>(const EndEvent& o) const { return time != o.time ? time > o.time : job > o.job; }
  };
  struct RunInfo {
    Duration run = kInfinite;
    int32_t exit_code = 0;
  };

  VirtualCluster(core::ClusterState state, const core::SchedulerConfig& scheduler)
      : state_(std::move(state)),
        scheduler_(scheduler),
        restart_delay_(scheduler.las.restart_delay) {}
  const RunInfo* RunOf(const core::Job& job) const;
  // How long the job's current attempt runs (before its time limit): its run time, less the
  // work done in earlier attempts plus the restart delay when requeued jobs resume.
  Duration AttemptLength(const core::Job& job, const RunInfo& run) const;
  // A job is stopping (preempted or requeued) at `t`: keeps the work its attempt did.
  void NoteStopped(const core::Job& job, Time t);

  // Work each requeued job did in its ended attempts, and the restart delay of its current one.
  struct Progress {
    Duration done = 0;
    Duration delay = 0;
  };

  core::ClusterState state_;
  core::Scheduler scheduler_;
  std::unordered_map<core::JobId, RunInfo> runs_;
  std::priority_queue<EndEvent, std::vector<EndEvent>, std::greater<>> ends_;
  int64_t preemptions_ = 0;
  Time wake_at_ = kNoTime;
  Duration restart_delay_ = kNoTime;  // kNoTime: requeued jobs start over
  std::unordered_map<core::JobId, Progress> progress_;
};

}  // namespace berth::sim

#endif  // BERTH_SIM_VIRTUAL_CLUSTER_H_
