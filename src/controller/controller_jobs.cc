// The controller's commands on jobs and nodes (run on the state thread).
#include <pwd.h>

#include <vector>

#include "api/job_json.h"
#include "controller/controller_internal.h"

namespace berth::controller {

namespace {

using nlohmann::json;

bool MayActOn(const Caller& who, const JobRecord& r) {
  return who.admin || (who.known && r.job.spec.uid == who.uid);
}

Status NotYours(core::JobId id) {
  return Status::PermissionDenied("Access/permission denied: job " + std::to_string(id) +
                                  " belongs to another user");
}

// Fills the job's user from the caller: users submit as themselves; root may submit for a named
// user.
Status SetOwner(const Caller& who, core::JobSpec& spec) {
  if (!who.admin || spec.user.empty()) {
    if (!who.admin && !spec.user.empty() && spec.user != who.user) {
      return Status::PermissionDenied("you may submit only as yourself (" + who.user + ")");
    }
    spec.user = who.user;
    spec.uid = who.uid;
    spec.gid = who.gid;
    return Status::Ok();
  }
  if (spec.uid == 0 && spec.user != "root") {
    struct passwd pw, *found = nullptr;
    char buf[4096];
    if (getpwnam_r(spec.user.c_str(), &pw, buf, sizeof(buf), &found) == 0 && found) {
      spec.uid = found->pw_uid;
      spec.gid = found->pw_gid;
    }
  }
  return Status::Ok();
}

}  // namespace

Result<std::vector<core::JobId>> Controller::Impl::SubmitJobs(const Caller& who, const json& body,
                                                              Txn& t) {
  std::vector<const json*> items;
  std::string submit_host;
  if (body.is_object() && body.contains("jobs")) {
    if (!body.at("jobs").is_array()) return Status::InvalidArgument("\"jobs\" must be an array");
    for (const json& j : body.at("jobs")) items.push_back(&j);
    submit_host = body.value("submit_host", "");
  } else {
    items.push_back(&body);
  }
  if (items.empty()) return Status::InvalidArgument("no jobs to submit");
  // Decode and check every job before submitting any, so a bad one in a batch loses nothing.
  std::vector<std::pair<core::JobSpec, std::shared_ptr<core::JobExecSpec>>> jobs;
  for (size_t i = 0; i < items.size(); ++i) {
    core::JobSpec spec;
    auto exec = std::make_shared<core::JobExecSpec>();
    Status st = api::DecodeJob(*items[i], &spec, exec.get());
    if (st.ok()) st = SetOwner(who, spec);
    if (!st.ok()) {
      return items.size() == 1 ? st : st.WithContext("job " + std::to_string(i + 1));
    }
    if (exec->script.empty() && exec->argv.empty()) {
      return Status::InvalidArgument("job " + std::to_string(i + 1) +
                                     ": nothing to run (give \"script\" or \"argv\")");
    }
    jobs.emplace_back(std::move(spec), std::move(exec));
  }
  std::vector<core::JobId> ids;
  const Time now = Now();
  for (size_t i = 0; i < jobs.size(); ++i) {
    Result<core::JobId> id = cs->Submit(std::move(jobs[i].first), jobs[i].second, now);
    if (!id.ok()) {
      if (ids.empty()) return items.size() == 1 ? id.status() : id.status().WithContext("job 1");
      // Jobs before it are in (and durable with this batch); say which one failed.
      return id.status().WithContext("job " + std::to_string(i + 1) +
                                     " (jobs before it: " + std::to_string(ids.front()) + "-" +
                                     std::to_string(ids.back()) + " submitted)");
    }
    ids.push_back(*id);
    t.touched.insert(*id);
  }
  for (core::JobId id : ids) {
    auto r = std::make_shared<JobRecord>(BuildRecord(*cs->FindJob(id), nullptr));
    r->submit_host = submit_host;
    std::unique_lock<std::shared_mutex> l(view_mu);
    records[id] = std::move(r);
  }
  t.writes.push_back(
      {store::Write::Kind::kPutMeta, {}, "next_job_id", std::to_string(cs->next_job_id())});
  // A pass is due unless every new job is held (it could not start anyway).
  for (core::JobId id : ids) {
    if (cs->FindJob(id)->spec.hold == core::HoldKind::kNone) dirty = true;
  }
  return ids;
}

Status Controller::Impl::CancelJob(const Caller& who, core::JobId id, int signal, bool batch_only,
                                   Txn& t) {
  auto it = records.find(id);
  if (it == records.end())
    return Status::NotFound("Invalid job id specified: " + std::to_string(id));
  const JobRecord& r = *it->second;
  if (!MayActOn(who, r)) return NotYours(id);
  if (core::IsTerminal(r.job.state)) {
    return Status::FailedPrecondition("Job has already finished: " + std::to_string(id));
  }
  // Cancelling an array cancels its running tasks too (scancel 123).
  if (r.job.is_array_master() && signal == 0) {
    if (const core::ArrayInfo* a = cs->FindArray(id)) {
      for (const auto& [task, task_id] : a->tasks) {
        if (task_id != id) (void)CancelJob(who, task_id, 0, false, t);
      }
    }
  }
  if (r.job.state == core::JobState::kPending) {
    if (signal != 0) return Status::FailedPrecondition("job " + std::to_string(id) + " is pending");
    core::Job final_job = r.job;
    BERTH_RETURN_IF_ERROR(cs->CancelPending(id, Now()));
    final_job.state = core::JobState::kCancelled;
    final_job.end_time = Now();
    final_job.outcome.state = core::JobState::kCancelled;
    final_job.outcome.end_time = final_job.end_time;
    FinishRecord(final_job, t);
    dirty = true;
    return Status::Ok();
  }
  if (signal != 0) {
    SendCancel(r, signal, batch_only, /*cancel=*/false);
    return Status::Ok();
  }
  auto updated = std::make_shared<JobRecord>(r);
  updated->cancel_requested = true;
  SendCancel(*updated, 0, false, /*cancel=*/true);
  {
    std::unique_lock<std::shared_mutex> l(view_mu);
    records[id] = updated;
  }
  t.touched.insert(id);
  return Status::Ok();
}

Status Controller::Impl::HoldJob(const Caller& who, core::JobId id, bool hold, bool admin_hold,
                                 Txn& t) {
  auto it = records.find(id);
  if (it == records.end())
    return Status::NotFound("Invalid job id specified: " + std::to_string(id));
  const JobRecord& r = *it->second;
  if (!MayActOn(who, r)) return NotYours(id);
  if (r.job.state != core::JobState::kPending) {
    return Status::FailedPrecondition("Job is no longer pending execution: " + std::to_string(id));
  }
  if (hold) {
    if (admin_hold && !who.admin) return Status::PermissionDenied("only operators hold as admin");
    BERTH_RETURN_IF_ERROR(
        cs->Hold(id, admin_hold ? core::HoldKind::kAdmin : core::HoldKind::kUser));
  } else {
    if (r.job.spec.hold == core::HoldKind::kAdmin && !who.admin) {
      return Status::PermissionDenied("the job is held by an operator");
    }
    BERTH_RETURN_IF_ERROR(cs->Release(id, Now()));
  }
  t.touched.insert(id);
  dirty = true;
  return Status::Ok();
}

Status Controller::Impl::RequeueJob(const Caller& who, core::JobId id, Txn& t) {
  auto it = records.find(id);
  if (it == records.end())
    return Status::NotFound("Invalid job id specified: " + std::to_string(id));
  const JobRecord& r = *it->second;
  if (!MayActOn(who, r)) return NotYours(id);
  if (!core::HoldsResources(r.job.state)) {
    return Status::FailedPrecondition("only a running job can be requeued: " + std::to_string(id));
  }
  preempting[id] = core::PreemptMode::kRequeue;  // it ends, then goes back to the queue
  auto updated = std::make_shared<JobRecord>(r);
  updated->cancel_requested = true;
  SendCancel(*updated, 0, false, true);
  std::unique_lock<std::shared_mutex> l(view_mu);
  records[id] = updated;
  (void)t;
  return Status::Ok();
}

Status Controller::Impl::UpdateJob(const Caller& who, core::JobId id, const json& body, Txn& t) {
  auto it = records.find(id);
  if (it == records.end())
    return Status::NotFound("Invalid job id specified: " + std::to_string(id));
  const JobRecord& r = *it->second;
  if (!MayActOn(who, r)) return NotYours(id);
  if (core::IsTerminal(r.job.state)) return Status::FailedPrecondition("Job has already finished");
  for (const auto& [key, value] : body.items()) {
    if (key == "time_limit") {
      Duration limit = value.get<Duration>();
      Duration current =
          r.job.state == core::JobState::kPending ? r.job.spec.time_limit : r.job.time_limit;
      if (!who.admin && (current == kNoTime || limit > current)) {
        return Status::PermissionDenied("only operators may raise a time limit");
      }
      BERTH_RETURN_IF_ERROR(cs->SetTimeLimit(id, limit));
    } else if (key == "nice") {
      int32_t nice = value.get<int32_t>();
      if (nice < 0 && !who.admin)
        return Status::PermissionDenied("only operators may set nice < 0");
      BERTH_RETURN_IF_ERROR(cs->SetNice(id, nice));
    } else if (key == "partition") {
      if (r.job.state != core::JobState::kPending) {
        return Status::FailedPrecondition("the partition of a started job cannot change");
      }
      BERTH_RETURN_IF_ERROR(cs->SetPartitions(id, value.get<std::string>()));
    } else {
      return Status::InvalidArgument("cannot update \"" + key +
                                     "\" (time_limit, nice and partition can change)");
    }
  }
  t.touched.insert(id);
  dirty = true;
  return Status::Ok();
}

Status Controller::Impl::NodeAction(const Caller& who, const std::string& name,
                                    const std::string& action, const std::string& reason, Txn& t) {
  if (!who.admin) return Status::PermissionDenied("only operators may change nodes");
  std::optional<uint32_t> index = cs->FindNode(name);
  if (!index) return Status::NotFound("Invalid node name specified: " + name);
  const Time now = Now();
  if (action == "drain") {
    if (reason.empty()) return Status::InvalidArgument("a drain needs a reason");
    BERTH_RETURN_IF_ERROR(cs->SetNodeDrain(*index, true, reason, now));
  } else if (action == "resume") {
    BERTH_RETURN_IF_ERROR(cs->SetNodeDrain(*index, false, "", now));
    if (cs->node(*index).health == core::NodeHealth::kDown && agents[name].registered) {
      BERTH_RETURN_IF_ERROR(cs->SetNodeHealth(*index, core::NodeHealth::kUp, "", now));
    }
  } else if (action == "down") {
    BERTH_RETURN_IF_ERROR(cs->SetNodeHealth(*index, core::NodeHealth::kDown,
                                            reason.empty() ? "set down" : reason, now));
    std::vector<core::JobId> running = cs->node(*index).jobs;
    for (core::JobId id : running) {
      const core::Job* job = cs->FindJob(id);
      if (job == nullptr) continue;
      auto rec = records.find(id);
      if (rec != records.end()) SendCancel(*rec->second, 0, false, true);
      bool requeue = job->spec.requeue;
      core::JobOutcome o;
      o.state = core::JobState::kNodeFail;
      o.end_time = now;
      core::Job final_job;
      if (!cs->EndJob(id, o, requeue, &final_job).ok()) continue;
      if (requeue) {
        t.touched.insert(id);
      } else {
        FinishRecord(final_job, t);
      }
    }
  } else {
    return Status::InvalidArgument("unknown node action '" + action + "'");
  }
  t.nodes_changed = true;
  dirty = true;
  return Status::Ok();
}

}  // namespace berth::controller
