// ClusterState: carrying out plans, and the ends of jobs.
#include <algorithm>

#include "core/state/cluster_state.h"
#include "core/state/fit.h"

namespace berth::core {
namespace {

RunCounters CountersOf(const Job& job) {
  RunCounters rc;
  for (const NodeAllocation& n : job.alloc.nodes) {
    rc.cpus += n.cpus;
    rc.mem_mib += n.mem_mib;
    rc.gpus += n.gpu_count();
  }
  rc.nodes = static_cast<int64_t>(job.alloc.nodes.size());
  rc.jobs = 1;
  return rc;
}

uint64_t PairKey(int64_t a, int64_t b) {
  return (static_cast<uint64_t>(a) << 32) | static_cast<uint32_t>(b);
}

}  // namespace

void ClusterState::ChangeCounters(const JobEntry& e, int sign) {
  RunCounters rc = CountersOf(e.job);
  qos_user_[PairKey(e.qos, e.user)].Add(rc, sign);
  qos_account_[PairKey(e.qos, e.account)].Add(rc, sign);
  assocs_[e.assoc].running.Add(rc, sign);
  for (int32_t a = e.account; a >= 0; a = accounts_[a].parent) accounts_[a].running.Add(rc, sign);
  int32_t& named = running_names_[{e.user, e.job.spec->name}];
  named += sign;
  if (named == 0) running_names_.erase({e.user, e.job.spec->name});
  for (const NamedCount& l : e.job.alloc.licenses) license_used_[l.name] += sign * l.count;
  if (e.job.array_job_id != kNoJob) arrays_[e.job.array_job_id].running += sign;
  if (e.job.spec->exclusive == ExclusiveMode::kUser) user_exclusive_running_ += sign;
}

void ClusterState::SetHoldEnds(const Job& job) {
  for (const NodeAllocation& a : job.alloc.nodes) {
    for (NodeHold& h : holds_[a.node]) {
      if (h.job == job.id) h.end = job.start_time + job.time_limit;
    }
  }
}

void ClusterState::RecomputeSoleUser(NodeInfo& n) {
  n.sole_user = -1;
  n.user_exclusive = false;
  // The node's holds name the same jobs as n.jobs, with their users (in another order, which
  // does not matter here), without a lookup per job.
  for (const NodeHold& h : holds_[n.index]) {
    int64_t user = h.user;
    if (n.sole_user == -1) {
      n.sole_user = user;
    } else if (n.sole_user != user) {
      n.sole_user = -2;
    }
    n.user_exclusive = n.user_exclusive || h.exclusive_user;
  }
}

Status ClusterState::CheckStartStillFits(const JobEntry& e, const PlannedStart& s) const {
  if (s.alloc.nodes.empty()) return Status::InvalidArgument("empty allocation");
  for (const NodeAllocation& a : s.alloc.nodes) {
    if (a.node >= nodes_.size()) return Status::InvalidArgument("no such node");
    const NodeInfo& n = nodes_[a.node];
    if (!Schedulable(n)) {
      return Status::FailedPrecondition("node " + n.spec.name + " is not usable");
    }
    if (a.cpus > n.free_cpus || a.mem_mib > n.free_mem_mib || (a.gpu_mask & ~n.free_gpus) != 0) {
      return Status::FailedPrecondition("node " + n.spec.name + " no longer has the resources");
    }
    NodeFree free = NodeFree::Of(n);
    for (const GpuShare& g : a.gpu_shares) {
      if (g.device < 0 || g.device >= n.num_gpus || g.milli <= 0 ||
          free.ShareRoom(g.device) < g.milli) {
        return Status::FailedPrecondition("node " + n.spec.name +
                                          " no longer has room for the GPU share");
      }
    }
    bool excl_user = e.job.spec->exclusive == ExclusiveMode::kUser;
    if (n.sole_user >= 0 && n.sole_user != e.user && (excl_user || n.user_exclusive)) {
      return Status::FailedPrecondition("node " + n.spec.name + " is user-exclusive");
    }
    for (const NamedCount& g : a.gres) {
      bool ok = false;
      for (size_t i = 0; i < n.spec.gres.size(); ++i) {
        ok = ok || (n.spec.gres[i].name == g.name && n.free_gres[i] >= g.count);
      }
      if (!ok) return Status::FailedPrecondition("node " + n.spec.name + " lacks gres " + g.name);
    }
  }
  for (const NamedCount& l : s.alloc.licenses) {
    if (license_used(l.name) + l.count > license_total(l.name)) {
      return Status::FailedPrecondition("license " + l.name + " is in use");
    }
  }
  return Status::Ok();
}

JobEntry& ClusterState::MaterialiseArrayTask(JobEntry& master, int32_t task) {
  std::vector<int32_t>& ids = master.job.spec.Mut().array.task_ids;
  ids.erase(std::find(ids.begin(), ids.end(), task));
  ArrayInfo& info = arrays_[master.job.id];
  if (ids.empty()) {
    // The last task takes the array's own id, as in Slurm.
    master.job.array_task_id = task;
    info.tasks[task] = master.job.id;
    return master;
  }
  JobEntry copy = master;
  copy.job.id = next_id_++;
  copy.job.spec.Mut().array.task_ids.clear();
  copy.job.array_task_id = task;
  info.tasks[task] = copy.job.id;
  JobId id = copy.job.id;
  NoteNewId(id, copy.job.spec->submit_time);
  auto [it, inserted] = jobs_.emplace(id, std::move(copy));
  pending_.insert(id);
  return it->second;
}

void ClusterState::Allocate(JobEntry& e, const PlannedStart& s, Time now) {
  Job& job = e.job;
  job.alloc = s.alloc;
  bool excl_user = job.spec->exclusive == ExclusiveMode::kUser;
  for (const NodeAllocation& a : job.alloc.nodes) {
    NodeInfo& n = nodes_[a.node];
    NodeFree f = NodeFree::Of(n);
    f.Take(n, a, e.user, excl_user);
    n.free_cpus = f.cpus;
    n.free_mem_mib = f.mem_mib;
    n.free_gpus = f.gpus;
    n.gpu_share_milli = std::move(f.gpu_milli);
    n.free_gres = f.gres;
    n.sole_user = f.sole_user;
    n.user_exclusive = f.user_exclusive;
    n.jobs.insert(std::lower_bound(n.jobs.begin(), n.jobs.end(), job.id), job.id);
    holds_[a.node].push_back({job.id, now + s.time_limit, e.user, excl_user, a});
    if (n.health == NodeHealth::kPoweredDown) {
      n.health = NodeHealth::kPoweringUp;
      n.state_since = now;
      ++node_state_generation_;
    }
    UpdateNodeIndex(a.node);
  }
  bool waiting = false;
  for (const NodeAllocation& a : job.alloc.nodes) {
    waiting = waiting || nodes_[a.node].health != NodeHealth::kUp;
  }
  job.state = waiting ? JobState::kConfiguring : JobState::kRunning;
  job.start_time = now;
  job.end_time = kNoTime;
  job.time_limit = s.time_limit;
  job.partition = s.partition;
  e.partition_index = FindPartition(s.partition).value_or(-1);
  pending_.erase(job.id);
  running_.insert(job.id);
  releases_.insert({now + s.time_limit, job.id});
  ChangeCounters(e, +1);
}

void ClusterState::Release(JobEntry& e, Time now) {
  Job& job = e.job;
  ChangeCounters(e, -1);
  releases_.erase({job.start_time + job.time_limit, job.id});
  running_.erase(job.id);
  for (const NodeAllocation& a : job.alloc.nodes) {
    NodeInfo& n = nodes_[a.node];
    NodeFree f = NodeFree::Of(n);
    f.Give(n, a);
    n.free_cpus = f.cpus;
    n.free_mem_mib = f.mem_mib;
    n.free_gpus = f.gpus;
    n.gpu_share_milli = std::move(f.gpu_milli);
    n.free_gres = f.gres;
    n.jobs.erase(std::find(n.jobs.begin(), n.jobs.end(), job.id));
    std::vector<NodeHold>& holds = holds_[a.node];
    auto hold = std::find_if(holds.begin(), holds.end(),
                             [&](const NodeHold& h) { return h.job == job.id; });
    if (hold != holds.end()) {
      *hold = std::move(holds.back());
      holds.pop_back();
    }
    if (n.jobs.empty()) n.idle_since = now;
    RecomputeSoleUser(n);
    UpdateNodeIndex(a.node);
  }
  e.partition_index = -1;
  e.preempt_requested = false;
}

ApplyResult ClusterState::Apply(const Plan& plan, Time now) {
  ApplyResult r;
  for (const PlannedPreemption& p : plan.preemptions) {
    auto it = jobs_.find(p.victim);
    if (it == jobs_.end() || !HoldsResources(it->second.job.state) ||
        it->second.preempt_requested) {
      continue;
    }
    it->second.preempt_requested = true;
    it->second.preempt_mode = p.mode;
    r.preempt.push_back(p);
  }
  for (const PlannedCancel& c : plan.cancels) {
    auto it = jobs_.find(c.job);
    if (it == jobs_.end() || it->second.job.state != JobState::kPending) continue;
    JobOutcome o;
    o.state = c.state;
    o.end_time = now;
    RecordOutcome(it->second, o);
    r.cancelled.push_back(c.job);
  }
  r.start_ids.assign(plan.starts.size(), kNoJob);
  for (size_t i = 0; i < plan.starts.size(); ++i) {
    const PlannedStart& s = plan.starts[i];
    if (!s.after_preempting.empty()) continue;  // starts once its victims have stopped
    auto it = jobs_.find(s.job);
    if (it == jobs_.end() || it->second.job.state != JobState::kPending) {
      r.rejected.emplace_back(s.job, "not pending");
      continue;
    }
    JobEntry& e = it->second;
    if (e.job.is_array_master()) {
      const auto& ids = e.job.spec->array.task_ids;
      if (std::find(ids.begin(), ids.end(), s.array_task) == ids.end()) {
        r.rejected.emplace_back(s.job, "array task not pending");
        continue;
      }
    }
    Status st = CheckStartStillFits(e, s);
    if (!st.ok()) {
      r.rejected.emplace_back(s.job, st.message());
      continue;
    }
    JobEntry& target = e.job.is_array_master() ? MaterialiseArrayTask(e, s.array_task) : e;
    Allocate(target, s, now);
    r.started.push_back(target.job.id);
    r.start_ids[i] = target.job.id;
  }
  return r;
}

void ClusterState::RecordOutcome(JobEntry& e, const JobOutcome& outcome, Job* final_record) {
  JobId id = e.job.id;
  e.job.outcome = outcome;
  outcomes_[id] = outcome;
  if (e.job.is_array_master()) {
    // Tasks that never started end with the master record.
    for (int32_t t : e.job.spec->array.task_ids) arrays_[id].tasks[t] = id;
  }
  if (final_record) *final_record = std::move(e.job);
  pending_.erase(id);
  jobs_.erase(id);
}

Status ClusterState::EndJob(JobId id, const JobOutcome& outcome, bool requeue, Job* final_record) {
  auto it = jobs_.find(id);
  if (it == jobs_.end()) return Status::NotFound("job " + std::to_string(id) + " not found");
  JobEntry& e = it->second;
  Job& job = e.job;
  if (!HoldsResources(job.state)) {
    return Status::FailedPrecondition("job " + std::to_string(id) + " is not running");
  }
  JobState next = requeue ? JobState::kPending : outcome.state;
  if (!IsValidTransition(job.state, next)) {
    return Status::FailedPrecondition("job " + std::to_string(id) + ": invalid transition " +
                                      std::string(JobStateName(job.state)) + " -> " +
                                      std::string(JobStateName(next)));
  }
  Time end = std::max(outcome.end_time, job.start_time);
  double usage = DecayedRunUsage(Billing(job.alloc), job.start_time, end, fairshare_.half_life) *
                 qos_[e.qos].spec.usage_factor;
  assocs_[e.assoc].usage.Add(usage, end, fairshare_.half_life);
  for (int32_t a = e.account; a >= 0; a = accounts_[a].parent) {
    accounts_[a].usage.Add(usage, end, fairshare_.half_life);
  }
  if (job.state == JobState::kRunning) {  // a CONFIGURING job has not run
    // Least attained service (core/sched/las.h): GPU-seconds, CPU-seconds without GPUs.
    job.attained_service += job.alloc.service_rate() * static_cast<double>(end - job.start_time);
    job.last_run = end - job.start_time;
  }
  Release(e, end);
  job.end_time = end;
  if (requeue) {
    job.state = JobState::kPending;
    job.restart_count++;
    job.alloc = Allocation();
    job.start_time = kNoTime;
    job.eligible_time = end;
    job.outcome = outcome;
    pending_.insert(id);
    return Status::Ok();
  }
  job.state = outcome.state;
  job.outcome = outcome;
  job.outcome.start_time = job.start_time;
  job.outcome.end_time = end;
  RecordOutcome(e, job.outcome, final_record);
  return Status::Ok();
}

Status ClusterState::CancelPending(JobId id, Time now) {
  auto it = jobs_.find(id);
  if (it == jobs_.end()) return Status::NotFound("job " + std::to_string(id) + " not found");
  if (it->second.job.state != JobState::kPending) {
    return Status::FailedPrecondition("job " + std::to_string(id) + " is not pending");
  }
  JobOutcome o;
  o.state = JobState::kCancelled;
  o.end_time = now;
  RecordOutcome(it->second, o);
  return Status::Ok();
}

Result<JobId> ClusterState::SplitArrayTask(JobId array_job_id, int32_t task) {
  auto info = arrays_.find(array_job_id);
  if (info != arrays_.end()) {
    auto known = info->second.tasks.find(task);
    if (known != info->second.tasks.end()) return known->second;
  }
  auto it = jobs_.find(array_job_id);
  const std::string name = std::to_string(array_job_id) + "_" + std::to_string(task);
  if (it == jobs_.end() || !it->second.job.is_array_master() ||
      it->second.job.state != JobState::kPending) {
    return Status::NotFound("job " + name + " not found");
  }
  const std::vector<int32_t>& ids = it->second.job.spec->array.task_ids;
  if (std::find(ids.begin(), ids.end(), task) == ids.end()) {
    return Status::NotFound("job " + name + " not found");
  }
  return MaterialiseArrayTask(it->second, task).job.id;
}

Status ClusterState::Hold(JobId id, HoldKind kind) {
  auto it = jobs_.find(id);
  if (it == jobs_.end()) return Status::NotFound("job " + std::to_string(id) + " not found");
  if (it->second.job.state != JobState::kPending) {
    return Status::FailedPrecondition("job " + std::to_string(id) + " is not pending");
  }
  it->second.job.spec.Mut().hold = kind;
  return Status::Ok();
}

Status ClusterState::Release(JobId id, Time now) {
  auto it = jobs_.find(id);
  if (it == jobs_.end()) return Status::NotFound("job " + std::to_string(id) + " not found");
  Job& job = it->second.job;
  if (job.state != JobState::kPending) {
    return Status::FailedPrecondition("job " + std::to_string(id) + " is not pending");
  }
  if (job.spec->hold != HoldKind::kNone) {
    job.spec.Mut().hold = HoldKind::kNone;
    job.eligible_time = std::max(now, job.spec->begin_time);
  }
  return Status::Ok();
}

Status ClusterState::FinishConfiguring(JobId id, Time now) {
  auto it = jobs_.find(id);
  if (it == jobs_.end()) return Status::NotFound("job " + std::to_string(id) + " not found");
  Job& job = it->second.job;
  if (job.state != JobState::kConfiguring) {
    return Status::FailedPrecondition("job " + std::to_string(id) + " is not configuring");
  }
  for (const NodeAllocation& a : job.alloc.nodes) {
    if (nodes_[a.node].health != NodeHealth::kUp) {
      return Status::FailedPrecondition("node " + nodes_[a.node].spec.name + " is not up yet");
    }
  }
  releases_.erase({job.start_time + job.time_limit, id});
  job.start_time = std::max(job.start_time, now);
  releases_.insert({job.start_time + job.time_limit, id});
  SetHoldEnds(job);
  job.state = JobState::kRunning;
  return Status::Ok();
}

Status ClusterState::SetTimeLimit(JobId id, Duration limit) {
  auto it = jobs_.find(id);
  if (it == jobs_.end()) return Status::NotFound("job " + std::to_string(id) + " not found");
  if (limit <= 0) return Status::InvalidArgument("Invalid time limit specification");
  Job& job = it->second.job;
  job.spec.Mut().time_limit = limit;
  if (HoldsResources(job.state)) {
    releases_.erase({job.start_time + job.time_limit, id});
    job.time_limit = limit;
    releases_.insert({job.start_time + job.time_limit, id});
    SetHoldEnds(job);
  }
  return Status::Ok();
}

Status ClusterState::SetPartitions(JobId id, const std::string& partitions) {
  auto it = jobs_.find(id);
  if (it == jobs_.end()) return Status::NotFound("job " + std::to_string(id) + " not found");
  JobEntry& old = it->second;
  if (old.job.state != JobState::kPending) {
    return Status::FailedPrecondition("job " + std::to_string(id) + " is not pending");
  }
  JobSpec spec = old.job.spec;
  spec.partitions.clear();
  size_t start = 0;
  while (start <= partitions.size()) {
    size_t comma = partitions.find(',', start);
    if (comma == std::string::npos) comma = partitions.size();
    if (comma > start) spec.partitions.push_back(partitions.substr(start, comma - start));
    start = comma + 1;
  }
  BERTH_ASSIGN_OR_RETURN(JobEntry e, PrepareEntry(std::move(spec), /*validate=*/true));
  old.partitions = std::move(e.partitions);
  old.shape_ids = std::move(e.shape_ids);
  old.job.spec.Mut().partitions = e.job.spec->partitions;
  return Status::Ok();
}

Status ClusterState::UpdatePendingSpec(JobId id, JobSpec spec) {
  auto it = jobs_.find(id);
  if (it == jobs_.end()) return Status::NotFound("job " + std::to_string(id) + " not found");
  JobEntry& old = it->second;
  if (old.job.state != JobState::kPending) {
    return Status::FailedPrecondition("job " + std::to_string(id) + " is not pending");
  }
  BERTH_ASSIGN_OR_RETURN(JobEntry e, PrepareEntry(std::move(spec), /*validate=*/true));
  old.user = e.user;
  old.assoc = e.assoc;
  old.account = e.account;
  old.qos = e.qos;
  old.partitions = std::move(e.partitions);
  old.shape_ids = std::move(e.shape_ids);
  old.nodelist = std::move(e.nodelist);
  old.exclude = std::move(e.exclude);
  old.job.spec = std::move(e.job.spec);
  return Status::Ok();
}

Status ClusterState::ReplaceExec(JobId id, std::shared_ptr<const JobExecSpec> exec) {
  auto it = jobs_.find(id);
  if (it == jobs_.end()) return Status::NotFound("job " + std::to_string(id) + " not found");
  it->second.job.exec = std::move(exec);
  return Status::Ok();
}

Status ClusterState::SetNice(JobId id, int32_t nice) {
  auto it = jobs_.find(id);
  if (it == jobs_.end()) return Status::NotFound("job " + std::to_string(id) + " not found");
  it->second.job.spec.Mut().nice = nice;
  return Status::Ok();
}

}  // namespace berth::core
