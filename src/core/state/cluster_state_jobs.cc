// ClusterState: the job lifecycle (submit, apply a plan, end, cancel, hold, requeue).
#include <algorithm>

#include "core/state/cluster_state.h"
#include "core/state/fit.h"

namespace berth::core {

Result<int32_t> ClusterState::ResolveAssoc(const std::string& user, const std::string& account) {
  int32_t uid = InternUser(user);
  if (account.empty()) {
    if (default_assoc_of_user_[uid] >= 0) return default_assoc_of_user_[uid];
  } else {
    std::optional<int32_t> acct = FindAccount(account);
    if (acct) {
      for (int32_t a : accounts_[*acct].assocs) {
        if (assocs_[a].user == uid) return a;
      }
    }
  }
  if (spec_.enforce_associations) {
    return Status::PermissionDenied(
        "Invalid account or account/partition combination specified" +
        (account.empty() ? std::string(" (user '" + user + "' has no default account)")
                         : " ('" + account + "')"));
  }
  // Not enforcing: add the association (and the account, under root) on first use.
  std::string name = account.empty() ? std::string("default") : account;
  std::optional<int32_t> acct = FindAccount(name);
  if (!acct) {
    AccountInfo info;
    info.spec.name = name;
    info.index = static_cast<int32_t>(accounts_.size());
    info.parent = 0;
    info.implicit = true;
    accounts_[0].children.push_back(info.index);
    accounts_.push_back(std::move(info));
    acct = static_cast<int32_t>(accounts_.size() - 1);
  }
  AssocInfo a;
  a.spec.name = user;
  a.spec.account = name;
  a.index = static_cast<int32_t>(assocs_.size());
  a.account = *acct;
  a.user = uid;
  a.implicit = true;
  accounts_[*acct].assocs.push_back(a.index);
  if (default_assoc_of_user_[uid] < 0) default_assoc_of_user_[uid] = a.index;
  assocs_.push_back(std::move(a));
  return static_cast<int32_t>(assocs_.size() - 1);
}

bool ClusterState::NodeHasFeature(const NodeInfo& node, std::string_view feature) const {
  std::optional<int32_t> id = FindFeature(feature);
  return id && std::binary_search(node.feature_ids.begin(), node.feature_ids.end(), *id);
}

bool ClusterState::FeasibleIn(const JobEntry& e, size_t slot, const JobShape& shape,
                              std::string_view alternative) const {
  const PartitionInfo& p = partitions_[e.partitions[slot]];
  const Constraint& c = e.job.spec->constraint;
  auto usable_for_job = [&](const NodeInfo& node) {
    if (!c.empty() && !c.Matches([&](std::string_view f) { return NodeHasFeature(node, f); })) {
      return false;
    }
    if (!alternative.empty() && !NodeHasFeature(node, alternative)) return false;
    return NodeCanEverHost(shape, node);
  };
  // Every -w node must be able to take (a share of) the job.
  for (uint32_t n : e.nodelist) {
    if (!p.nodes.Test(n) || !usable_for_job(nodes_[n])) return false;
  }
  int64_t hosts = 0;
  int64_t tasks = 0;
  for (const NodeClass& cls : classes_) {
    const NodeInfo& node = nodes_[cls.representative];
    if (!usable_for_job(node)) continue;
    Bitset in = cls.nodes;
    in &= p.nodes;
    for (uint32_t x : e.exclude) in.Reset(x);
    int64_t count = static_cast<int64_t>(in.Count());
    hosts += count;
    if (shape.task_mode && count > 0) {
      tasks += count * FitTasks(shape, node, NodeFree::Full(node), 0, shape.tasks, nullptr);
    }
  }
  return shape.task_mode ? (tasks >= shape.tasks && hosts > 0) : hosts >= shape.min_nodes;
}

bool ClusterState::AnyNodeMatches(const Constraint& c) const {
  if (c.empty()) return true;
  return std::any_of(classes_.begin(), classes_.end(), [&](const NodeClass& cls) {
    const NodeInfo& node = nodes_[cls.representative];
    return c.Matches([&](std::string_view f) { return NodeHasFeature(node, f); });
  });
}

Status ClusterState::ValidateFeasible(const JobEntry& e,
                                      const SmallVector<JobShape, 2>& shapes) const {
  // The request must be satisfiable by the configured nodes of at least one of its partitions,
  // as Slurm checks at submission ("Requested node configuration is not available"). Nodes are
  // looked at one configuration class at a time, so this costs little on large clusters. A
  // matching OR ("[a|b]") needs every node to share one alternative.
  const std::vector<std::string>& alternatives = e.job.spec->constraint.MatchingAlternatives();
  for (size_t i = 0; i < e.partitions.size(); ++i) {
    if (alternatives.empty()) {
      if (FeasibleIn(e, i, shapes[i], "")) return Status::Ok();
      continue;
    }
    for (const std::string& alt : alternatives) {
      if (FeasibleIn(e, i, shapes[i], alt)) return Status::Ok();
    }
  }
  return Status::InvalidArgument("Requested node configuration is not available");
}

Result<JobId> ClusterState::Submit(JobSpec spec, std::shared_ptr<const JobExecSpec> exec,
                                   Time now) {
  return SubmitWithId(next_id_, std::move(spec), std::move(exec), now);
}

Result<JobEntry> ClusterState::PrepareEntry(JobSpec spec, bool validate) {
  JobEntry e;
  SmallVector<JobShape, 2> shapes;  // parallel to e.partitions; kept by id at the end
  if (spec.user.empty()) spec.user = "nobody";
  BERTH_ASSIGN_OR_RETURN(e.assoc, ResolveAssoc(spec.user, spec.account));
  e.user = assocs_[e.assoc].user;
  e.account = assocs_[e.assoc].account;
  spec.account = accounts_[e.account].spec.name;
  std::optional<int16_t> qos = FindQos(spec.qos.empty() ? kDefaultQos : spec.qos);
  if (!qos && spec_.accept_unknown_qos) qos = FindQos(kDefaultQos);
  if (!qos) return Status::InvalidArgument("Invalid qos specification: '" + spec.qos + "'");
  e.qos = *qos;
  spec.qos = qos_[*qos].spec.name;
  if (spec.partitions.empty()) spec.partitions.push_back(partitions_[default_partition_].spec.name);
  for (const std::string& name : spec.partitions) {
    std::optional<int16_t> p = FindPartition(name);
    if (!p) return Status::InvalidArgument("invalid partition specified: " + name);
    if (std::find(e.partitions.begin(), e.partitions.end(), *p) != e.partitions.end()) continue;
    BERTH_ASSIGN_OR_RETURN(JobShape shape, ComputeShape(spec, partitions_[*p]));
    e.partitions.push_back(*p);
    shapes.push_back(std::move(shape));
  }
  if (validate && std::all_of(e.partitions.begin(), e.partitions.end(), [&](int16_t p) {
        PartitionState st = partitions_[p].spec.state;
        return st == PartitionState::kDrain || st == PartitionState::kInactive;
      })) {
    return Status::FailedPrecondition("Required partition not available (inactive or drain)");
  }
  for (const auto* list : {&spec.nodelist, &spec.exclude}) {
    for (const std::string& name : *list) {
      std::optional<uint32_t> n = FindNode(name);
      if (!n) return Status::InvalidArgument("Invalid node name specified: " + name);
      (list == &spec.nodelist ? e.nodelist : e.exclude).push_back(*n);
    }
  }
  for (uint32_t n : e.nodelist) {
    if (std::find(e.exclude.begin(), e.exclude.end(), n) != e.exclude.end()) {
      return Status::InvalidArgument("node " + nodes_[n].spec.name +
                                     " is both required and excluded");
    }
  }
  if (validate) {
    for (const NamedCount& l : spec.licenses) {
      if (l.count > license_total(l.name)) {
        return Status::InvalidArgument("Invalid license specification: " + l.name);
      }
    }
    for (const DependencyCondition& c : spec.dependency.conditions) {
      for (const DependencyTarget& t : c.targets) {
        if (!jobs_.count(t.job_id) && !outcomes_.count(t.job_id) && !arrays_.count(t.job_id)) {
          return Status::InvalidArgument("Job dependency problem: job " + std::to_string(t.job_id) +
                                         " does not exist");
        }
      }
    }
    for (int32_t t : spec.array.task_ids) {
      if (t < 0 || t >= spec_.max_array_size) {
        return Status::InvalidArgument("Invalid job array specification: task " +
                                       std::to_string(t) + " is outside 0.." +
                                       std::to_string(spec_.max_array_size - 1));
      }
    }
    if (spec.time_limit != kNoTime && spec.time_limit <= 0) {
      return Status::InvalidArgument("Invalid time limit specification");
    }
    if (!spec.reservation.empty()) {
      const ResvInfo* r = FindReservation(spec.reservation);
      if (r == nullptr) return Status::InvalidArgument("Requested reservation is invalid");
      if (!r->spec.Allows(spec.user, spec.account)) {
        return Status::PermissionDenied("Access denied to requested reservation");
      }
    }
  }
  e.job.spec = std::move(spec);
  // A held job is not matched against the nodes until it is released (Slurm's select_nodes
  // returns ESLURM_JOB_HELD before it looks at them): `sbatch --hold -c 300` on 256-CPU nodes
  // is accepted, and once released waits as BadConstraints.
  if (validate && !e.job.spec->wait_if_infeasible) {
    if (e.job.spec->hold == HoldKind::kNone) {
      BERTH_RETURN_IF_ERROR(ValidateFeasible(e, shapes));
    } else {
      // What Slurm's job_create checks before any hold: the features exist, and the node count
      // fits the partition.
      if (!AnyNodeMatches(e.job.spec->constraint)) {
        return Status::InvalidArgument("Invalid feature specification");
      }
      bool enough_nodes = false;
      for (size_t i = 0; i < e.partitions.size(); ++i) {
        enough_nodes =
            enough_nodes || shapes[i].min_nodes <= partitions_[e.partitions[i]].total_nodes;
      }
      if (!enough_nodes) {
        return Status::InvalidArgument("Requested node configuration is not available");
      }
    }
  }
  for (size_t i = 0; i < e.partitions.size(); ++i) {
    e.shape_ids.push_back(
        ShapeId(e.partitions[i], e.job.spec->constraint.text(), shapes[i], e.exclude));
  }
  return e;
}

int32_t ClusterState::ShapeId(int16_t partition, const std::string& constraint,
                              const JobShape& shape, const std::vector<uint32_t>& exclude) {
  LastShape& last = last_shape_;
  if (last.id >= 0 && last.partition == partition && last.shape == shape &&
      last.constraint == constraint && last.exclude == exclude) {
    return last.id;
  }
  auto [it, added] = shape_ids_.emplace(ShapeKeyText(partition, constraint, shape, exclude),
                                        static_cast<int32_t>(shape_ids_.size()));
  if (added) shapes_.push_back(shape);
  last = {partition, constraint, shape, exclude, it->second};
  return it->second;
}

Result<JobEntry> ClusterState::PrepareSubmit(JobSpec spec) {
  if (spec.user.empty()) spec.user = "nobody";
  return PrepareEntry(std::move(spec), /*validate=*/true);
}

Status ClusterState::IdFree(JobId id) const {
  if (id == kNoJob || jobs_.count(id) || outcomes_.count(id) || arrays_.count(id)) {
    return Status::InvalidArgument("job id " + std::to_string(id) + " is in use");
  }
  return Status::Ok();
}

Result<JobId> ClusterState::SubmitWithId(JobId id, JobSpec spec,
                                         std::shared_ptr<const JobExecSpec> exec, Time now) {
  BERTH_RETURN_IF_ERROR(IdFree(id));
  BERTH_ASSIGN_OR_RETURN(JobEntry e, PrepareSubmit(std::move(spec)));
  return Insert(id, std::move(e), std::move(exec), now);
}

Result<JobId> ClusterState::SubmitPrepared(JobEntry entry, std::shared_ptr<const JobExecSpec> exec,
                                           Time now) {
  BERTH_RETURN_IF_ERROR(IdFree(next_id_));
  return Insert(next_id_, std::move(entry), std::move(exec), now);
}

JobId ClusterState::Insert(JobId id, JobEntry e, std::shared_ptr<const JobExecSpec> exec,
                           Time now) {
  e.job.id = id;
  e.job.exec = std::move(exec);
  e.job.spec.Mut().submit_time = now;
  e.job.state = JobState::kPending;
  e.job.eligible_time = std::max(now, e.job.spec->begin_time);
  if (!e.job.spec->array.empty()) {
    e.job.array_job_id = id;
    arrays_[id].total = static_cast<int32_t>(e.job.spec->array.task_ids.size());
    arrays_[id].submitted = e.job.spec->array;
  }
  next_id_ = std::max(next_id_, id + 1);
  NoteNewId(id, e.job.spec->submit_time);
  pending_.insert(id);
  jobs_.emplace_hint(jobs_.end(), id, std::move(e));  // ids mostly grow
  return id;
}

void ClusterState::NoteNewId(JobId id, Time submit) {
  if (id <= last_new_id_ || submit < last_new_submit_) ids_follow_submit_ = false;
  if (id > last_new_id_) {
    last_new_id_ = id;
    last_new_submit_ = submit;
  }
}

Status ClusterState::Restore(Job job) {
  JobId id = job.id;
  // Where it goes: jobs are restored in id order, so mostly at the end (no search again below).
  const auto place = jobs_.lower_bound(id);
  if (id == kNoJob || (place != jobs_.end() && place->first == id)) {
    return Status::InvalidArgument("job id " + std::to_string(id) + " is in use");
  }
  // The spec goes through PrepareEntry and comes back with its account and QoS resolved.
  BERTH_ASSIGN_OR_RETURN(JobEntry e, PrepareEntry(std::move(job.spec), /*validate=*/false));
  JobSpec spec = std::move(e.job.spec);
  e.job = std::move(job);
  e.job.spec = std::move(spec);
  if (e.job.is_array_master()) {
    arrays_[id].total = std::max<int32_t>(arrays_[id].total,
                                          static_cast<int32_t>(e.job.spec->array.task_ids.size()));
    if (arrays_[id].submitted.empty()) arrays_[id].submitted = e.job.spec->array;
  } else if (e.job.array_job_id != kNoJob) {
    arrays_[e.job.array_job_id].tasks[e.job.array_task_id] = id;
  }
  next_id_ = std::max(next_id_, id + 1);
  NoteNewId(id, e.job.spec->submit_time);
  JobState state = e.job.state;
  auto it = jobs_.emplace_hint(place, id, std::move(e));
  JobEntry& entry = it->second;
  if (!HoldsResources(state)) {
    entry.job.state = JobState::kPending;
    pending_.insert(id);
    return Status::Ok();
  }
  PlannedStart start;
  start.job = id;
  start.partition = entry.job.partition;
  start.alloc = entry.job.alloc;
  start.time_limit = entry.job.time_limit;
  for (const NodeAllocation& a : start.alloc.nodes) {
    if (a.node >= nodes_.size()) {
      jobs_.erase(id);
      return Status::InvalidArgument("job " + std::to_string(id) + " ran on an unknown node");
    }
  }
  pending_.insert(id);  // Allocate moves it to running
  Allocate(entry, start, entry.job.start_time);
  entry.job.state = state;
  return Status::Ok();
}

void ClusterState::RestoreOutcome(JobId id, JobId array_job_id, int32_t array_task_id,
                                  const JobOutcome& outcome) {
  outcomes_[id] = outcome;
  if (array_job_id != kNoJob && array_task_id >= 0) arrays_[array_job_id].tasks[array_task_id] = id;
  next_id_ = std::max(next_id_, id + 1);
}

const Job* ClusterState::FindJob(JobId id) const {
  auto it = jobs_.find(id);
  return it == jobs_.end() ? nullptr : &it->second.job;
}

const JobEntry* ClusterState::FindEntry(JobId id) const {
  auto it = jobs_.find(id);
  return it == jobs_.end() ? nullptr : &it->second;
}

const JobOutcome* ClusterState::FindOutcome(JobId id) const {
  auto it = outcomes_.find(id);
  return it == outcomes_.end() ? nullptr : &it->second;
}

const ArrayInfo* ClusterState::FindArray(JobId array_job_id) const {
  auto it = arrays_.find(array_job_id);
  return it == arrays_.end() ? nullptr : &it->second;
}

void ClusterState::PurgeOutcomes(Time before) {
  for (auto it = outcomes_.begin(); it != outcomes_.end();) {
    it = it->second.end_time < before ? outcomes_.erase(it) : std::next(it);
  }
}

}  // namespace berth::core
