#include "core/sched/eligibility.h"

#include <algorithm>

#include "common/time.h"

namespace berth::core {
namespace {

// Where one dependency target stands.
struct TargetState {
  bool known = false;
  bool started = false;  // started or ended (cancelled before start counts as started)
  Time start_time = kNoTime;
  bool ended = false;
  bool ok = false;  // ended COMPLETED with exit code 0
};

TargetState StateOfJob(const ClusterState& cs, JobId id) {
  TargetState t;
  if (const Job* job = cs.FindJob(id)) {
    t.known = true;
    t.started = job->state != JobState::kPending;
    t.start_time = job->start_time;
    return t;
  }
  if (const JobOutcome* o = cs.FindOutcome(id)) {
    t.known = t.started = t.ended = true;
    // A job cancelled before it started counts as started when it ended.
    t.start_time = o->start_time != kNoTime ? o->start_time : o->end_time;
    t.ok = o->state == JobState::kCompleted && o->exit_code == 0;
  }
  return t;
}

// Every instance a target names: one job, one array task, or all tasks of an array.
std::vector<TargetState> Instances(const ClusterState& cs, const DependencyTarget& t) {
  std::vector<TargetState> out;
  const ArrayInfo* arr = cs.FindArray(t.job_id);
  if (arr == nullptr) {
    out.push_back(StateOfJob(cs, t.job_id));
    return out;
  }
  const Job* master = cs.FindJob(t.job_id);
  bool master_pending = master && master->is_array_master();
  if (t.array_task >= 0) {
    auto it = arr->tasks.find(t.array_task);
    if (it != arr->tasks.end() && !(master_pending && it->second == t.job_id)) {
      out.push_back(StateOfJob(cs, it->second));
    } else {
      TargetState pending;
      pending.known = true;
      out.push_back(pending);
    }
    return out;
  }
  for (const auto& [task, id] : arr->tasks) {
    if (master_pending && id == t.job_id) continue;
    out.push_back(StateOfJob(cs, id));
  }
  if (master_pending && !master->spec->array.task_ids.empty()) {
    TargetState pending;
    pending.known = true;
    out.push_back(pending);
  }
  return out;
}

DepStatus EvaluateCondition(const PassState& pass, const JobEntry& e, const DependencyCondition& c,
                            int32_t task) {
  const ClusterState& cs = pass.cs();
  if (c.type == DependencyType::kSingleton) {
    return pass.RunningWithName(e.user, e.job.spec->name) > 0 ? DepStatus::kWaiting
                                                              : DepStatus::kSatisfied;
  }
  DepStatus result = DepStatus::kSatisfied;
  for (const DependencyTarget& t0 : c.targets) {
    DependencyTarget t = t0;
    if (c.type == DependencyType::kAfterCorr && task >= 0) t.array_task = task;
    bool any_not_ok = false, all_ended = true, any_known = false;
    for (const TargetState& s : Instances(cs, t)) {
      if (!s.known) continue;  // purged long ago: as in Slurm, the dependency is lifted
      any_known = true;
      switch (c.type) {
        case DependencyType::kAfter:
          if (!s.started) {
            result = DepStatus::kWaiting;
          } else if (t.delay > 0 && s.start_time + t.delay > pass.now()) {
            result = DepStatus::kWaiting;
            pass.WakeAt(s.start_time + t.delay);
          }
          break;
        case DependencyType::kAfterAny:
          if (!s.ended) result = DepStatus::kWaiting;
          break;
        case DependencyType::kAfterOk:
        case DependencyType::kAfterCorr:
          if (s.ended && !s.ok) return DepStatus::kNever;
          if (!s.ended) result = DepStatus::kWaiting;
          break;
        case DependencyType::kAfterNotOk:
          all_ended = all_ended && s.ended;
          any_not_ok = any_not_ok || (s.ended && !s.ok);
          break;
        case DependencyType::kSingleton:
          break;
      }
    }
    if (c.type == DependencyType::kAfterNotOk && any_known) {
      if (!all_ended) {
        result = DepStatus::kWaiting;
      } else if (!any_not_ok) {
        return DepStatus::kNever;
      }
    }
  }
  return result;
}

}  // namespace

DepStatus EvaluateDependency(const PassState& pass, const JobEntry& e, int32_t task) {
  const Dependency& d = e.job.spec->dependency;
  if (d.empty()) return DepStatus::kSatisfied;
  bool any_sat = false, any_wait = false, any_never = false;
  for (const DependencyCondition& c : d.conditions) {
    DepStatus s = EvaluateCondition(pass, e, c, task);
    any_sat = any_sat || s == DepStatus::kSatisfied;
    any_wait = any_wait || s == DepStatus::kWaiting;
    any_never = any_never || s == DepStatus::kNever;
  }
  if (d.any) {
    if (any_sat) return DepStatus::kSatisfied;
    return any_wait ? DepStatus::kWaiting : DepStatus::kNever;
  }
  if (any_never) return DepStatus::kNever;
  return any_wait ? DepStatus::kWaiting : DepStatus::kSatisfied;
}

Verdict CheckJob(const PassState& pass, const JobEntry& e, int32_t task) {
  const JobSpec& s = e.job.spec;
  if (s.hold == HoldKind::kUser) return {PendingReason::kJobHeldUser, "held by its user"};
  if (s.hold == HoldKind::kAdmin) return {PendingReason::kJobHeldAdmin, "held by an operator"};
  if (s.begin_time != kNoTime && s.begin_time > pass.now()) {
    pass.WakeAt(s.begin_time);
    return {PendingReason::kBeginTime, "starts no earlier than its --begin time"};
  }
  switch (EvaluateDependency(pass, e, task)) {
    case DepStatus::kWaiting:
      return {PendingReason::kDependency, "waiting for " + FormatDependency(s.dependency)};
    case DepStatus::kNever:
      return {PendingReason::kDependencyNeverSatisfied,
              FormatDependency(s.dependency) + " can no longer be satisfied"};
    case DepStatus::kSatisfied:
      break;
  }
  if (e.job.array_job_id != kNoJob && s.array.max_running > 0 &&
      pass.ArrayRunning(e.job.array_job_id) >= s.array.max_running) {
    return {PendingReason::kJobArrayTaskLimit,
            "array throttle %" + std::to_string(s.array.max_running) + " reached"};
  }
  return {};
}

Duration EffectiveTimeLimit(const JobEntry& e, const PartitionInfo& p) {
  if (e.job.spec->time_limit != kNoTime) return e.job.spec->time_limit;
  if (p.spec.default_time != kNoTime) return p.spec.default_time;
  return p.spec.max_time;
}

Verdict CheckPartition(const PassState& pass, const JobEntry& e, size_t slot) {
  const ClusterState& cs = pass.cs();
  const PartitionInfo& p = cs.partitions()[e.partitions[slot]];
  const JobShape& shape = cs.shape(e, slot);
  if (p.spec.state == PartitionState::kDown) {
    return {PendingReason::kPartitionDown, "partition " + p.spec.name + " is down"};
  }
  if (p.spec.state == PartitionState::kInactive) {
    return {PendingReason::kPartitionInactive, "partition " + p.spec.name + " is inactive"};
  }
  if (!p.allow_accounts.empty() && std::find(p.allow_accounts.begin(), p.allow_accounts.end(),
                                             e.account) == p.allow_accounts.end()) {
    return {PendingReason::kAccountNotAllowed,
            "partition " + p.spec.name + " does not allow account " + e.job.spec->account};
  }
  if (!p.allow_qos.empty() &&
      std::find(p.allow_qos.begin(), p.allow_qos.end(), e.qos) == p.allow_qos.end()) {
    return {PendingReason::kQosNotAllowed,
            "partition " + p.spec.name + " does not allow QoS " + e.job.spec->qos};
  }
  Duration limit = EffectiveTimeLimit(e, p);
  if (limit > p.spec.max_time) {
    return {PendingReason::kPartitionTimeLimit,
            "time limit exceeds partition " + p.spec.name + "'s MaxTime"};
  }
  if (limit > cs.qos()[e.qos].spec.max_wall) {
    return {PendingReason::kQosMaxWallDurationPerJobLimit, "time limit exceeds the QoS MaxWall"};
  }
  int32_t nodes = shape.min_nodes;
  if ((p.spec.max_nodes > 0 && nodes > p.spec.max_nodes) ||
      (p.spec.min_nodes > 0 && shape.max_nodes < p.spec.min_nodes)) {
    return {PendingReason::kPartitionNodeLimit,
            "node count is outside partition " + p.spec.name + "'s limits"};
  }
  if (e.job.spec->deadline != kNoTime) {
    Duration need = e.job.spec->time_min != kNoTime ? e.job.spec->time_min : limit;
    if (pass.now() + need > e.job.spec->deadline) {
      return {PendingReason::kDeadline, "cannot finish before its deadline"};
    }
    pass.WakeAt(e.job.spec->deadline - need + 1);
  }
  return {};
}

Verdict CheckLimits(const PassState& pass, const JobEntry& e, size_t slot) {
  const ClusterState& cs = pass.cs();
  const QosSpec& q = cs.qos()[e.qos].spec;
  ShapeTotals t = MinimumTotals(cs.shape(e, slot));
  auto over = [](int64_t used, int64_t add, int64_t limit) {
    return limit >= 0 && used + add > limit;
  };
  if (q.max_tres_per_job.gpus >= 0 && t.gpus > q.max_tres_per_job.gpus) {
    return {PendingReason::kQosMaxGresPerJob, "asks for more GPUs than the QoS allows per job"};
  }
  if (q.max_tres_per_job.cpus >= 0 && t.cpus > q.max_tres_per_job.cpus) {
    return {PendingReason::kQosMaxCpuPerJobLimit, "asks for more CPUs than the QoS allows per job"};
  }
  const UserSpec& assoc = cs.assocs()[e.assoc].spec;
  if (assoc.max_tres_per_job.gpus >= 0 && t.gpus > assoc.max_tres_per_job.gpus) {
    return {PendingReason::kAssocMaxGresPerJob, "asks for more GPUs than its association allows"};
  }
  if (assoc.max_tres_per_job.cpus >= 0 && t.cpus > assoc.max_tres_per_job.cpus) {
    return {PendingReason::kAssocMaxCpuPerJobLimit,
            "asks for more CPUs than its association allows"};
  }
  RunCounters qu = pass.QosUser(e.qos, e.user);
  if (over(qu.gpus, t.gpus, q.max_tres_per_user.gpus)) {
    return {PendingReason::kQosMaxGresPerUser, "user runs " + std::to_string(qu.gpus) +
                                                   " GPUs; QoS " + q.name + " allows " +
                                                   std::to_string(q.max_tres_per_user.gpus)};
  }
  if (over(qu.cpus, t.cpus, q.max_tres_per_user.cpus)) {
    return {PendingReason::kQosMaxCpuPerUserLimit, "user runs " + std::to_string(qu.cpus) +
                                                       " CPUs; QoS " + q.name + " allows " +
                                                       std::to_string(q.max_tres_per_user.cpus)};
  }
  if (over(qu.nodes, t.nodes, q.max_tres_per_user.nodes)) {
    return {PendingReason::kQosMaxNodePerUserLimit, "QoS per-user node limit reached"};
  }
  if (over(qu.jobs, 1, q.max_jobs_per_user)) {
    return {PendingReason::kQosMaxJobsPerUserLimit, "user runs " + std::to_string(qu.jobs) +
                                                        " jobs; QoS " + q.name + " allows " +
                                                        std::to_string(q.max_jobs_per_user)};
  }
  RunCounters qa = pass.QosAccount(e.qos, e.account);
  if (over(qa.gpus, t.gpus, q.max_tres_per_account.gpus)) {
    return {PendingReason::kQosMaxGresPerAccount, "QoS per-account GPU limit reached"};
  }
  if (over(qa.cpus, t.cpus, q.max_tres_per_account.cpus)) {
    return {PendingReason::kQosMaxCpuPerAccountLimit, "QoS per-account CPU limit reached"};
  }
  if (over(qa.jobs, 1, q.max_jobs_per_account)) {
    return {PendingReason::kQosMaxJobsPerAccountLimit, "QoS per-account job limit reached"};
  }
  if (over(pass.Assoc(e.assoc).jobs, 1, assoc.max_jobs)) {
    return {PendingReason::kAssocMaxJobsLimit, "association MaxJobs reached"};
  }
  for (int32_t a = e.account; a >= 0; a = cs.accounts()[a].parent) {
    const AccountSpec& as = cs.accounts()[a].spec;
    RunCounters r = pass.Account(a);
    if (over(r.gpus, t.gpus, as.grp_tres.gpus)) {
      return {PendingReason::kAssocGrpGres, "account " + as.name + " runs " +
                                                std::to_string(r.gpus) + " GPUs of its GrpTRES " +
                                                std::to_string(as.grp_tres.gpus)};
    }
    if (over(r.cpus, t.cpus, as.grp_tres.cpus)) {
      return {PendingReason::kAssocGrpCpuLimit, "account " + as.name + " GrpTRES cpu reached"};
    }
    if (over(r.nodes, t.nodes, as.grp_tres.nodes)) {
      return {PendingReason::kAssocGrpNodeLimit, "account " + as.name + " GrpTRES node reached"};
    }
    if (over(r.jobs, 1, as.grp_jobs)) {
      return {PendingReason::kAssocGrpJobsLimit, "account " + as.name + " GrpJobs reached"};
    }
  }
  for (const NamedCount& l : e.job.spec->licenses) {
    if (pass.LicenseUsed(l.name) + l.count > cs.license_total(l.name)) {
      return {PendingReason::kLicenses, "licence " + l.name + " in use"};
    }
  }
  return {};
}

}  // namespace berth::core
