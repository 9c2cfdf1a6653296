#include "sim/virtual_cluster.h"

#include <algorithm>

namespace berth::sim {

using core::JobId;

Result<VirtualCluster> VirtualCluster::Create(const core::ClusterSpec& cluster,
                                              const core::SchedulerConfig& scheduler) {
  BERTH_ASSIGN_OR_RETURN(core::ClusterState state, core::ClusterState::Create(cluster));
  state.SetFairshareConfig(scheduler.fairshare);
  return VirtualCluster(std::move(state), scheduler);
}

void VirtualCluster::SetRunTime(JobId id, Duration run, int32_t exit_code) {
  runs_[id] = {run, exit_code};
}

const VirtualCluster::RunInfo* VirtualCluster::RunOf(const core::Job& job) const {
  auto it = runs_.find(job.id);
  if (it == runs_.end() && job.array_job_id != core::kNoJob) it = runs_.find(job.array_job_id);
  return it == runs_.end() ? nullptr : &it->second;
}

Time VirtualCluster::NextEnd() {
  // Drop ends that no longer apply (the job was preempted, requeued or ended by hand).
  while (!ends_.empty()) {
    const EndEvent& ev = ends_.top();
    const core::Job* job = state_.FindJob(ev.job);
    if (job && job->state == core::JobState::kRunning && job->restart_count == ev.restart) {
      return ev.time;
    }
    ends_.pop();
  }
  return kInfinite;
}

Time VirtualCluster::NextEvent() {
  Time t = NextEnd();
  if (wake_at_ != kNoTime) t = std::min(t, wake_at_);
  return t;
}

void VirtualCluster::EndJobsAt(Time t, const EndFn& on_end) {
  while (NextEnd() == t) {
    EndEvent ev = ends_.top();
    ends_.pop();
    const core::Job* job = state_.FindJob(ev.job);
    const RunInfo* run = RunOf(*job);
    core::JobOutcome outcome;
    outcome.end_time = t;
    outcome.exit_code = run ? run->exit_code : 0;
    if (run && AttemptLength(*job, *run) > job->time_limit) {
      outcome.state = core::JobState::kTimeout;
    } else {
      outcome.state = outcome.exit_code == 0 ? core::JobState::kCompleted : core::JobState::kFailed;
    }
    (void)EndNow(ev.job, outcome, /*requeue=*/false, on_end);
  }
}

Duration VirtualCluster::AttemptLength(const core::Job& job, const RunInfo& run) const {
  if (restart_delay_ == kNoTime || run.run >= kInfinite) return run.run;
  auto it = progress_.find(job.id);
  if (it == progress_.end()) return run.run;
  return std::max<Duration>(run.run - it->second.done, 0) + it->second.delay;
}

void VirtualCluster::NoteStopped(const core::Job& job, Time t) {
  if (restart_delay_ == kNoTime || job.state != core::JobState::kRunning) return;
  Progress& p = progress_[job.id];
  p.done += std::max<Duration>(0, t - job.start_time - p.delay);
}

Status VirtualCluster::EndNow(JobId id, const core::JobOutcome& outcome, bool requeue,
                              const EndFn& on_end) {
  if (requeue) {
    if (const core::Job* job = state_.FindJob(id)) NoteStopped(*job, outcome.end_time);
  }
  core::Job final_record;
  BERTH_RETURN_IF_ERROR(state_.EndJob(id, outcome, requeue, &final_record));
  if (!requeue) {
    progress_.erase(id);
    if (on_end) on_end(final_record);
  }
  return Status::Ok();
}

void VirtualCluster::Started(JobId id, Time t) {
  const core::Job* job = state_.FindJob(id);
  if (job == nullptr) return;
  const RunInfo* run = RunOf(*job);
  if (auto it = progress_.find(id); it != progress_.end()) {
    // Resuming from a checkpoint costs the delay; starting from nothing costs nothing more.
    it->second.delay = it->second.done > 0 ? restart_delay_ : 0;
  }
  Duration d = std::min(run ? AttemptLength(*job, *run) : kInfinite, job->time_limit);
  if (d < kInfinite) ends_.push({t + d, id, job->restart_count});
}

int VirtualCluster::Schedule(Time t, const PassFn& on_pass, const EndFn& on_end) {
  int passes = 0;
  for (int round = 0; round < 64; ++round) {
    core::Plan plan = scheduler_.Schedule(state_, t);
    ++passes;
    wake_at_ = plan.wake_at;
    core::ApplyResult applied = state_.Apply(plan, t);
    for (JobId id : applied.started) {
      // A job placed on powered-down nodes waits CONFIGURING: it starts when they are up.
      if (state_.FindJob(id)->state == core::JobState::kRunning) Started(id, t);
    }
    if (on_pass) on_pass(plan, applied);
    if (applied.preempt.empty()) break;
    for (const core::PlannedPreemption& p : applied.preempt) {
      ++preemptions_;
      core::JobOutcome outcome;
      outcome.state = core::JobState::kPreempted;
      outcome.end_time = t;
      (void)EndNow(p.victim, outcome, p.mode == core::PreemptMode::kRequeue, on_end);
    }
  }
  return passes;
}

}  // namespace berth::sim
