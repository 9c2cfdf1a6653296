// RandomRun: a cluster driven by random events in virtual time, for property tests (header-only,
// test code only). Built on the generators and checks of random_cluster.h.
#ifndef BERTH_CORE_TESTING_RANDOM_RUN_H_
#define BERTH_CORE_TESTING_RANDOM_RUN_H_

#include <functional>
#include <set>
#include <string>
#include <tuple>
#include <vector>

#include "core/testing/random_cluster.h"

namespace berth::core::testing {

// ---- RandomRun: a cluster driven by random events in virtual time
//
// The production ClusterState and Scheduler with a simulated clock, as sim::VirtualCluster
// drives them (core tests cannot link the simulator): plans applied with ClusterState::Apply, a
// job runs for min(its run time, its limit), preemption victims stop at once and another pass
// runs at the same time. Events: submissions, the clock moving (jobs end), early ends, drain and
// resume, node failure (its jobs end NODE_FAIL) and return, hold and release, cancellation.
// Every event is logged, so a failure can print how the run got there.

struct RunOptions {
  ClusterOptions cluster;
  JobOptions jobs;
  std::vector<std::string> configs = {"fcfs",        "easy",   "conservative",
                                      "multifactor", "spread", "preempt"};
  bool node_events = true;  // drain/resume, down/up
  bool hold_events = true;
  bool cancel_events = true;
  // Every other node starts powered down (State=CLOUD) and power saving is on: jobs placed there
  // wait CONFIGURING until a "up" node event boots the node; idle nodes taken "down" are powered
  // down instead.
  bool power_saving = false;
};

inline ClusterSpec WithCloudNodes(ClusterSpec spec, bool on) {
  for (size_t i = 1; on && i < spec.nodes.size(); i += 2) spec.nodes[i].cloud = true;
  return spec;
}

class RandomRun {
 public:
  // Called after every pass: the state the plan was computed from, the plan, what Apply did,
  // and the state after it (before preemption victims stop).
  using PassHook = std::function<void(const ClusterState& before, const Plan& plan,
                                      const ApplyResult& applied, const ClusterState& after)>;

  RandomRun(uint64_t seed, const RunOptions& opt)
      : rng_(seed),
        opt_(opt),
        spec_(WithCloudNodes(RandomClusterSpec(rng_, opt.cluster), opt.power_saving)),
        cs_(BuildState(spec_)),
        cfg_(NamedConfig(Pick(rng_, opt.configs))),
        sched_(cfg_) {
    cs_.SetFairshareConfig(cfg_.fairshare);
    cs_.SetPowerSaving(opt.power_saving);
    if (cfg_.preempt_type != PreemptType::kNone) opt_.jobs.qos_high = true;
    Log("config " + cfg_.name + "\n  " + DescribeCluster(spec_));
  }

  void set_hook(PassHook hook) { hook_ = std::move(hook); }
  ClusterState& state() { return cs_; }
  Time now() const { return now_; }
  const SchedulerConfig& config() const { return cfg_; }
  int64_t submitted() const { return submitted_; }
  int64_t finished() const { return finished_; }
  std::string log() const { return JoinLines(log_); }
  // A check asks the run to stop at its first violation (one clear report, not hundreds).
  void Stop() { stopped_ = true; }
  bool stopped() const { return stopped_; }
  // Set when the run itself went wrong (a call into the state failed); the run has stopped.
  const std::string& error() const { return error_; }

  void Step() {
    RandomEvent();
    SchedulePasses();
  }

  // One random event at the current time (or a move of the clock).
  void RandomEvent() {
    const int64_t roll = Uniform(rng_, 0, 99);
    if (roll < 40) {
      SubmitSome();
    } else if (roll < 65) {
      AdvanceTime();
    } else if (roll < 75) {
      EndEarly();
    } else if (roll < 83) {
      if (opt_.node_events) ToggleDrain();
    } else if (roll < 87) {
      if (opt_.node_events) ToggleDown();
    } else if (roll < 95) {
      if (opt_.hold_events) ToggleHold();
    } else if (opt_.cancel_events) {
      CancelOne();
    }
  }

  // Passes at the current time, as VirtualCluster::Schedule runs them: one, plus one more after
  // each pass that preempted (the victims stop at once).
  void SchedulePasses() {
    for (int round = 0; round < 64 && !stopped_; ++round) {
      ClusterState before = cs_;
      Plan plan = sched_.Schedule(cs_, now_);
      wake_at_ = plan.wake_at;
      std::map<JobId, int64_t> cancel_counts;
      for (const PlannedCancel& c : plan.cancels) {
        if (const Job* job = cs_.FindJob(c.job)) cancel_counts[c.job] = JobCount(*job);
      }
      ApplyResult applied = cs_.Apply(plan, now_);
      for (JobId id : applied.cancelled) finished_ += cancel_counts[id];
      for (JobId id : applied.started) PlanEnd(id);
      if (hook_) hook_(before, plan, applied, cs_);
      if (applied.preempt.empty()) break;
      for (const PlannedPreemption& p : applied.preempt) {
        End(p.victim, JobState::kPreempted, now_, p.mode == PreemptMode::kRequeue);
      }
    }
  }

  // Lets everything run out: holds released, every node back, no new jobs; the clock moves from
  // end to end (and to --begin times) until nothing runs and no pass is due.
  void Quiesce() {
    Log("t=" + std::to_string(now_) + " quiesce");
    std::vector<JobId> pending(cs_.pending_ids().begin(), cs_.pending_ids().end());
    for (JobId id : pending) (void)cs_.Release(id, now_);
    for (uint32_t n = 0; n < cs_.num_nodes(); ++n) {
      (void)cs_.SetNodeDrain(n, false, "", now_);
      (void)cs_.SetNodeHealth(n, NodeHealth::kUp, "", now_);
    }
    std::vector<JobId> held(cs_.running_ids().begin(), cs_.running_ids().end());
    for (JobId id : held) {
      if (cs_.FindJob(id)->state == JobState::kConfiguring &&
          cs_.FinishConfiguring(id, now_).ok()) {
        PlanEnd(id);
      }
    }
    SchedulePasses();
    for (int guard = 0; guard < 10000 && !stopped_; ++guard) {
      Time next = NextEnd();
      if (wake_at_ != kNoTime && wake_at_ > now_) next = std::min(next, wake_at_);
      if (next >= kInfinite) break;
      AdvanceTo(next);
      SchedulePasses();
    }
  }

 private:
  struct RunInfo {
    Duration run = 0;
    int32_t exit_code = 0;
  };

  void Log(std::string line) { log_.push_back(std::move(line)); }
  std::string At() const { return "t=" + std::to_string(now_) + " "; }

  Duration RunOf(const Job& job) const {
    auto it = runs_.find(job.id);
    if (it == runs_.end()) it = runs_.find(job.array_job_id);
    return it == runs_.end() ? kInfinite : it->second.run;
  }
  int32_t ExitOf(const Job& job) const {
    auto it = runs_.find(job.id);
    if (it == runs_.end()) it = runs_.find(job.array_job_id);
    return it == runs_.end() ? 0 : it->second.exit_code;
  }

  void PlanEnd(JobId id) {
    const Job* job = cs_.FindJob(id);
    Duration d = std::min(RunOf(*job), job->time_limit);
    ends_.insert({job->start_time + d, id, job->restart_count});
  }

  // The next planned end of a job still running as planned (stale entries are dropped).
  Time NextEnd() {
    while (!ends_.empty()) {
      auto [end, id, restarts] = *ends_.begin();
      const Job* job = cs_.FindJob(id);
      // A CONFIGURING job's run starts when its nodes are up (then its end is planned again).
      if (job && HoldsResources(job->state) && job->state != JobState::kConfiguring &&
          job->restart_count == restarts) {
        return end;
      }
      ends_.erase(ends_.begin());
    }
    return kInfinite;
  }

  // Ends every job whose run is over by t, each at its own end time, then sets the clock to t.
  void AdvanceTo(Time t) {
    while (!stopped_ && NextEnd() <= t) {
      auto [end, id, restarts] = *ends_.begin();
      ends_.erase(ends_.begin());
      const Job* job = cs_.FindJob(id);
      JobState state = RunOf(*job) > job->time_limit ? JobState::kTimeout
                       : ExitOf(*job) != 0           ? JobState::kFailed
                                                     : JobState::kCompleted;
      End(id, state, end, /*requeue=*/false);
    }
    now_ = std::max(now_, t);
  }

  void End(JobId id, JobState state, Time at, bool requeue) {
    JobOutcome o;
    o.state = state;
    o.end_time = at;
    o.exit_code = state == JobState::kFailed ? 1 : 0;
    Status st = cs_.EndJob(id, o, requeue);
    if (!st.ok()) {
      error_ = "EndJob(" + std::to_string(id) + "): " + st.ToString();
      Stop();
      return;
    }
    if (!requeue) ++finished_;
  }

  void SubmitSome() {
    const int64_t count = Uniform(rng_, 1, 3);
    for (int64_t i = 0; i < count; ++i) {
      JobSpec spec = RandomJobSpec(rng_, spec_, opt_.jobs, now_, submitted_ids_);
      RunInfo run;
      // Some jobs run into their limit; the others end on their own before it.
      run.run = Chance(rng_, 30) ? spec.time_limit + 100 : Uniform(rng_, 1, spec.time_limit);
      run.exit_code = Chance(rng_, 10) ? 1 : 0;
      std::string text = DescribeJob(spec);
      const int64_t jobs =
          spec.array.empty() ? 1 : static_cast<int64_t>(spec.array.task_ids.size());
      Result<JobId> id = cs_.Submit(std::move(spec), nullptr, now_);
      if (!id.ok()) {
        Log(At() + "refused: " + text + " (" + id.status().message() + ")");
        continue;
      }
      runs_[*id] = run;
      submitted_ids_.push_back(*id);
      submitted_ += jobs;
      Log(At() + "submit job " + std::to_string(*id) + ": " + text +
          " run=" + std::to_string(run.run));
    }
  }

  void AdvanceTime() {
    Time next = NextEnd();
    Time t = (next < kInfinite && Chance(rng_, 50)) ? next : now_ + Uniform(rng_, 1, 300);
    Log(At() + "advance to " + std::to_string(t));
    AdvanceTo(t);
  }

  void EndEarly() {
    if (cs_.running_ids().empty()) return;
    std::vector<JobId> running;
    for (JobId r : cs_.running_ids()) {
      if (cs_.FindJob(r)->state != JobState::kConfiguring) running.push_back(r);
    }
    if (running.empty()) return;
    JobId id = Pick(rng_, running);
    JobState state = Chance(rng_, 30) ? JobState::kFailed : JobState::kCompleted;
    Log(At() + "job " + std::to_string(id) + " ends early");
    End(id, state, now_, /*requeue=*/false);
  }

  uint32_t RandomNode() {
    return static_cast<uint32_t>(Uniform(rng_, 0, static_cast<int64_t>(cs_.num_nodes()) - 1));
  }

  void ToggleDrain() {
    uint32_t n = RandomNode();
    bool drain = !cs_.node(n).drain;
    Log(At() + (drain ? "drain " : "resume ") + cs_.node(n).spec.name);
    (void)cs_.SetNodeDrain(n, drain, drain ? "test" : "", now_);
  }

  // A node fails (its jobs end with NODE_FAIL) or comes back.
  void ToggleDown() {
    uint32_t n = RandomNode();
    if (cs_.node(n).health == NodeHealth::kUp) {
      if (opt_.power_saving && cs_.node(n).jobs.empty()) {
        Log(At() + "power down " + cs_.node(n).spec.name);
        (void)cs_.SetNodeHealth(n, NodeHealth::kPoweredDown, "", now_);
        return;
      }
      Log(At() + "down " + cs_.node(n).spec.name);
      std::vector<JobId> jobs = cs_.node(n).jobs;
      for (JobId id : jobs) End(id, JobState::kNodeFail, now_, /*requeue=*/false);
      (void)cs_.SetNodeHealth(n, NodeHealth::kDown, "test", now_);
    } else {
      Log(At() + "up " + cs_.node(n).spec.name);
      (void)cs_.SetNodeHealth(n, NodeHealth::kUp, "", now_);
      // Jobs that waited for it (and for no other node) run now.
      std::vector<JobId> jobs = cs_.node(n).jobs;
      for (JobId id : jobs) {
        const Job* job = cs_.FindJob(id);
        if (job != nullptr && job->state == JobState::kConfiguring &&
            cs_.FinishConfiguring(id, now_).ok()) {
          PlanEnd(id);
        }
      }
    }
  }

  JobId RandomPending() {
    if (cs_.pending_ids().empty()) return kNoJob;
    std::vector<JobId> pending(cs_.pending_ids().begin(), cs_.pending_ids().end());
    return Pick(rng_, pending);
  }

  void ToggleHold() {
    JobId id = RandomPending();
    if (id == kNoJob) return;
    if (cs_.FindJob(id)->spec->hold == HoldKind::kNone) {
      Log(At() + "hold " + std::to_string(id));
      (void)cs_.Hold(id, HoldKind::kUser);
    } else {
      Log(At() + "release " + std::to_string(id));
      (void)cs_.Release(id, now_);
    }
  }

  void CancelOne() {
    JobId id = RandomPending();
    if (id == kNoJob) return;
    int64_t count = JobCount(*cs_.FindJob(id));
    Log(At() + "cancel " + std::to_string(id));
    if (cs_.CancelPending(id, now_).ok()) finished_ += count;
  }

  Rng rng_;
  RunOptions opt_;
  ClusterSpec spec_;
  ClusterState cs_;
  SchedulerConfig cfg_;
  Scheduler sched_;
  PassHook hook_;
  Time now_ = 0;
  Time wake_at_ = kNoTime;
  std::map<JobId, RunInfo> runs_;                    // by job id, or array id for every task
  std::set<std::tuple<Time, JobId, int32_t>> ends_;  // (end, job, restart count)
  std::vector<JobId> submitted_ids_;
  int64_t submitted_ = 0;
  int64_t finished_ = 0;
  bool stopped_ = false;
  std::string error_;
  std::vector<std::string> log_;
};

}  // namespace berth::core::testing

#endif  // BERTH_CORE_TESTING_RANDOM_RUN_H_
