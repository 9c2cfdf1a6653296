// The controller's commands on jobs and nodes (run on the state thread).
#include <pwd.h>

#include <algorithm>
#include <charconv>
#include <csignal>
#include <cstdlib>
#include <limits>
#include <map>
#include <optional>
#include <vector>

#include "api/errors.h"
#include "api/job_json.h"
#include "config/job_options.h"
#include "controller/controller_internal.h"
#include "controller/json_text.h"
#include "core/sched/scheduler.h"
#include "core/state/shape.h"

namespace berth::controller {

namespace {

using nlohmann::json;

bool MayActOn(const Caller& who, const JobRecord& r) {
  return who.admin || (who.known && r.job.spec->uid == who.uid);
}

Status NotYours(core::JobId id) {
  return Status::PermissionDenied("Access/permission denied: job " + std::to_string(id) +
                                  " belongs to another user");
}

// The record of job `id` when `who` may act on it.
Result<std::shared_ptr<const JobRecord>> OwnedRecord(std::shared_ptr<const JobRecord> record,
                                                     const Caller& who, core::JobId id) {
  if (record == nullptr) {
    return Status::NotFound("Invalid job id specified: " + std::to_string(id));
  }
  if (!MayActOn(who, *record)) return NotYours(id);
  return record;
}

}  // namespace

Result<core::JobId> Controller::Impl::ResolveJobId(const Caller& who, const std::string& text,
                                                   Txn& t) {
  size_t underscore = text.find('_');
  auto number = [](std::string_view s) -> std::optional<int64_t> {
    int64_t v = 0;
    auto [p, ec] = std::from_chars(s.data(), s.data() + s.size(), v);
    if (ec != std::errc() || p != s.data() + s.size() || v < 0) return std::nullopt;
    return v;
  };
  std::optional<int64_t> id = number(std::string_view(text).substr(0, underscore));
  if (!id || *id == 0 || *id > std::numeric_limits<core::JobId>::max()) {
    return Status::InvalidArgument("Invalid job id specified: " + text);
  }
  if (underscore == std::string::npos) return static_cast<core::JobId>(*id);
  std::optional<int64_t> task = number(std::string_view(text).substr(underscore + 1));
  if (!task || *task > std::numeric_limits<int32_t>::max()) {
    return Status::InvalidArgument("Invalid job id specified: " + text);
  }
  const core::JobId master = static_cast<core::JobId>(*id);
  // Splitting changes the array's record: only its owner (or an operator) may cause it.
  if (const JobRecord* rec = OwnRecord(master); rec != nullptr && !MayActOn(who, *rec)) {
    return NotYours(master);
  }
  const core::Job* before = cs->FindJob(master);
  const size_t pending_tasks =
      before != nullptr && before->is_array_master() ? before->spec->array.task_ids.size() : 0;
  Result<core::JobId> found = cs->SplitArrayTask(master, static_cast<int32_t>(*task));
  if (!found.ok()) {
    // A task that ended and left the live view can still be in the store; callers report
    // NotFound either way.
    return Status::NotFound("Invalid job id specified: " + text);
  }
  const core::Job* after = cs->FindJob(master);
  if (after != nullptr && after->is_array_master() &&
      after->spec->array.task_ids.size() != pending_tasks) {
    TouchRecord(master, t);  // the array lost a pending task
  }
  if (*found != master) TouchRecord(*found, t);
  return found;
}

void Controller::Impl::CancelMany(const Caller& who, const CancelManyRequest& request,
                                  bool failures_only, JsonText& w, Txn& t) {
  // Written as text (a tree of 10,000 results was a tenth of a scancel -u).
  w.Key("results");
  w.OpenArray();
  for (const std::string& text : request.ids) {
    // "JOB.STEP" (scancel 12.0): that step of the job.
    const size_t dot = text.find('.');
    std::optional<uint32_t> step;
    if (dot != std::string::npos) {
      uint32_t n = 0;
      const char* end = text.data() + text.size();
      auto [p, ec] = std::from_chars(text.data() + dot + 1, end, n);
      if (ec == std::errc() && p == end && dot + 1 < text.size()) step = n;
    }
    Result<core::JobId> id =
        dot != std::string::npos && !step
            ? Result<core::JobId>(Status::InvalidArgument("Invalid job id specified: " + text))
            : ResolveJobId(who, text.substr(0, dot), t);
    Status st = !id.ok() ? id.status()
                : step   ? CancelStep(who, *id, *step, request.signal, t)
                       : CancelJob(who, *id, request.signal, {request.batch_only, request.full}, t);
    if (st.ok() && failures_only) continue;
    w.Next();
    w.Open();
    if (!st.ok()) {
      w.Key("code");
      w.Int(api::HttpStatusOf(st.code()));
      w.Key("error");
      w.String(st.message());
    }
    w.Key("id");
    w.String(text);
    w.Close();
  }
  w.CloseArray();
}

Result<json> Controller::Impl::TestSubmit(const Caller& who, const json& body) {
  BERTH_ASSIGN_OR_RETURN(JobSubmission job, DecodeTestSubmit(who, body));
  return TestSubmit(std::move(job));
}

Result<json> Controller::Impl::TestSubmit(JobSubmission job) {
  core::JobSpec spec = std::move(job.spec);
  std::shared_ptr<core::JobExecSpec> exec = std::move(job.exec);
  spec.hold = core::HoldKind::kNone;  // where it would start once released
  const Time now = Now();
  // A what-if pass on a copy: the live state is not touched, and no id is used up.
  core::ClusterState trial = *cs;
  BERTH_ASSIGN_OR_RETURN(core::JobId id, trial.Submit(std::move(spec), exec, now));
  core::Plan plan = core::Schedule(trial, now, scheduler->config());
  const core::JobEntry& entry = *trial.FindEntry(id);
  json out = {{"job_id", id},
              {"expected_start", nullptr},
              {"nodes", json::array()},
              {"cpus", 0},
              {"partition", trial.partitions()[entry.partitions.front()].spec.name}};
  for (const core::PlannedStart& s : plan.starts) {
    if (s.job != id) continue;
    int64_t cpus = 0;
    for (const core::NodeAllocation& a : s.alloc.nodes) {
      out["nodes"].push_back(trial.node(a.node).spec.name);
      cpus += a.cpus;
    }
    out["expected_start"] = now;
    out["cpus"] = cpus;
    out["partition"] = s.partition;
    return out;
  }
  for (const core::PendingInfo& p : plan.pending) {
    if (p.job != id) continue;
    if (p.expected_start != kNoTime) out["expected_start"] = p.expected_start;
    out["reason"] = std::string(core::PendingReasonName(p.reason));
    out["reason_detail"] = p.detail;
  }
  out["cpus"] = core::MinimumTotals(trial.shape(entry, 0)).cpus;
  return out;
}

Result<std::vector<core::JobId>> Controller::Impl::SubmitJobs(const Caller& who, const json& body,
                                                              Txn& t) {
  BERTH_ASSIGN_OR_RETURN(SubmitRequest request, DecodeSubmit(who, body));
  return SubmitJobs(std::move(request), t);
}

Result<std::vector<core::JobId>> Controller::Impl::SubmitJobs(SubmitRequest request, Txn& t) {
  // Every job was decoded and checked before it came here, so a bad one in a batch loses nothing.
  std::vector<std::pair<core::JobSpec, std::shared_ptr<const core::JobExecSpec>>> jobs;
  for (JobSubmission& job : request.jobs) {
    jobs.emplace_back(std::move(job.spec), exec_pool.Intern(std::move(job.exec)));
  }
  const size_t count = jobs.size();
  // The cluster's checks for all of them first: a batch goes in whole or not at all. What they
  // prepare goes in as it is.
  std::vector<core::JobEntry> prepared;
  if (jobs.size() > 1) {
    prepared.reserve(jobs.size());
    for (size_t i = 0; i < jobs.size(); ++i) {
      Result<core::JobEntry> entry = cs->PrepareSubmit(std::move(jobs[i].first));
      if (!entry.ok()) return entry.status().WithContext("job " + std::to_string(i + 1));
      prepared.push_back(std::move(*entry));
    }
  }
  std::vector<core::JobId> ids;
  const Time now = Now();
  for (size_t i = 0; i < jobs.size(); ++i) {
    Result<core::JobId> id = prepared.empty()
                                 ? cs->Submit(std::move(jobs[i].first), jobs[i].second, now)
                                 : cs->SubmitPrepared(std::move(prepared[i]), jobs[i].second, now);
    if (!id.ok()) {
      if (ids.empty()) return count == 1 ? id.status() : id.status().WithContext("job 1");
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
    r->submit_host = request.submit_host;
    PutRecord(id, std::move(r));
  }
  t.writes.push_back(
      {store::Write::Kind::kPutMeta, {}, "next_job_id", std::to_string(cs->next_job_id())});
  // A pass is due unless every new job is held (it could not start anyway).
  for (core::JobId id : ids) {
    if (cs->FindJob(id)->spec->hold == core::HoldKind::kNone) dirty = true;
  }
  return ids;
}

Status Controller::Impl::CancelJob(const Caller& who, core::JobId id, int signal,
                                   agent::SignalScope scope, Txn& t) {
  BERTH_ASSIGN_OR_RETURN(std::shared_ptr<const JobRecord> record,
                         OwnedRecord(OwnRecordPtr(id), who, id));
  const JobRecord& r = *record;
  if (core::IsTerminal(r.job.state)) {
    return Status::FailedPrecondition("Job has already finished: " + std::to_string(id));
  }
  // Cancelling an array cancels its running tasks too (scancel 123).
  if (r.job.is_array_master() && signal == 0) {
    if (const core::ArrayInfo* a = cs->FindArray(id)) {
      for (const auto& [task, task_id] : a->tasks) {
        if (task_id != id) (void)CancelJob(who, task_id, 0, {}, t);
      }
    }
  }
  // Who cancels it is kept for sacct's "CANCELLED by UID": by the record that ends it (a job
  // that never ran), or by the one its end will build on.
  if (r.job.state == core::JobState::kPending) {
    if (signal != 0) return Status::FailedPrecondition("job " + std::to_string(id) + " is pending");
    core::Job final_job = r.job;
    BERTH_RETURN_IF_ERROR(cs->CancelPending(id, Now()));
    final_job.state = core::JobState::kCancelled;
    final_job.end_time = Now();
    final_job.outcome.state = core::JobState::kCancelled;
    final_job.outcome.end_time = final_job.end_time;
    FinishRecord(final_job, t, who.uid);
    dirty = true;
    return Status::Ok();
  }
  if (r.job.state == core::JobState::kConfiguring) {
    // Its nodes are still powering up: nothing runs yet, so it ends now.
    if (signal != 0)
      return Status::FailedPrecondition("job " + std::to_string(id) + " is not running yet");
    core::JobOutcome o;
    o.state = core::JobState::kCancelled;
    o.end_time = Now();
    core::Job final_job;
    BERTH_RETURN_IF_ERROR(cs->EndJob(id, o, false, &final_job));
    power->JobEnded(id);
    FinishRecord(final_job, t, who.uid);
    t.nodes_changed = true;
    dirty = true;
    return Status::Ok();
  }
  if (signal != 0) {
    SendCancel(r, signal, scope, /*cancel=*/false);
    return Status::Ok();
  }
  auto updated = std::make_shared<JobRecord>(r);
  updated->run.Mut().cancelled_by = who.uid;
  updated->cancel_requested = true;
  SendCancel(*updated, 0, {}, /*cancel=*/true);
  PutRecord(id, updated);
  t.touched.insert(id);
  return Status::Ok();
}

Status Controller::Impl::CancelStep(const Caller& who, core::JobId id, uint32_t step, int signal,
                                    Txn& t) {
  BERTH_ASSIGN_OR_RETURN(std::shared_ptr<const JobRecord> record,
                         OwnedRecord(OwnRecordPtr(id), who, id));
  const JobRecord& r = *record;
  if (core::IsTerminal(r.job.state)) {
    return Status::FailedPrecondition("Job/step already completing or completed: " +
                                      std::to_string(id) + "." + std::to_string(step));
  }
  if (r.job.state != core::JobState::kRunning && r.job.state != core::JobState::kSuspended) {
    return Status::FailedPrecondition("job " + std::to_string(id) + " is pending");
  }
  // The step as its srun reported it for this run of the job.
  auto at = std::find_if(r.run->steps.begin(), r.run->steps.end(), [&](const api::StepRecord& s) {
    return s.id == step && s.attempt == r.job.restart_count;
  });
  if (at == r.run->steps.end()) {
    return Status::NotFound("Invalid job id specified: " + std::to_string(id) + "." +
                            std::to_string(step));
  }
  if (at->ended()) {
    return Status::FailedPrecondition("Job/step already completing or completed: " +
                                      std::to_string(id) + "." + std::to_string(step));
  }
  // Without --signal the step is killed (as slurm_kill_job_step(..., SIGKILL)); the job goes on.
  const int sig = signal != 0 ? signal : SIGKILL;
  if (signal == 0 && at->cancelled_by < 0) {
    auto updated = std::make_shared<JobRecord>(r);
    for (api::StepRecord& s : updated->run.Mut().steps) {
      if (s.id == step && s.attempt == r.job.restart_count) s.cancelled_by = who.uid;
    }
    WriteRecord(updated, /*active=*/true, kNoTime, t);
    PutRecord(id, std::move(updated));
  }
  const agent::CommandTarget target{id, r.job.restart_count};
  if (!r.node_names.empty()) {
    SendCommand(r.node_names.front(),
                agent::SignalCommand{target, sig, false, false, static_cast<int32_t>(step)});
  }
  // Its parts on the job's other nodes (srun across hosts).
  if (const std::optional<StepState> parts = steps.Find(id, step)) {
    for (const auto& [name, n] : parts->nodes) {
      if (!n.result) SendCommand(name, agent::StepSignalCommand{target, step, sig});
    }
  }
  return Status::Ok();
}

Status Controller::Impl::HoldJob(const Caller& who, core::JobId id, bool hold, bool admin_hold,
                                 Txn& t) {
  BERTH_ASSIGN_OR_RETURN(std::shared_ptr<const JobRecord> record,
                         OwnedRecord(OwnRecordPtr(id), who, id));
  const JobRecord& r = *record;
  if (r.job.state != core::JobState::kPending) {
    return Status::FailedPrecondition("Job is no longer pending execution: " + std::to_string(id));
  }
  if (hold) {
    if (admin_hold && !who.admin) return Status::PermissionDenied("only operators hold as admin");
    BERTH_RETURN_IF_ERROR(
        cs->Hold(id, admin_hold ? core::HoldKind::kAdmin : core::HoldKind::kUser));
  } else {
    if (r.job.spec->hold == core::HoldKind::kAdmin && !who.admin) {
      return Status::PermissionDenied("the job is held by an operator");
    }
    BERTH_RETURN_IF_ERROR(cs->Release(id, Now()));
  }
  t.touched.insert(id);
  dirty = true;
  return Status::Ok();
}

Status Controller::Impl::RequeueJob(const Caller& who, core::JobId id, Txn& t) {
  BERTH_ASSIGN_OR_RETURN(std::shared_ptr<const JobRecord> record,
                         OwnedRecord(OwnRecordPtr(id), who, id));
  const JobRecord& r = *record;
  if (!core::HoldsResources(r.job.state)) {
    return Status::FailedPrecondition("only a running job can be requeued: " + std::to_string(id));
  }
  preempting[id] = core::PreemptMode::kRequeue;  // it ends, then goes back to the queue
  auto updated = std::make_shared<JobRecord>(r);
  updated->cancel_requested = true;
  SendCancel(*updated, 0, {}, true);
  PutRecord(id, updated);
  (void)t;
  return Status::Ok();
}

Status Controller::Impl::UpdateJob(const Caller& who, core::JobId id, const JobUpdate& update,
                                   Txn& t) {
  BERTH_ASSIGN_OR_RETURN(std::shared_ptr<const JobRecord> record,
                         OwnedRecord(OwnRecordPtr(id), who, id));
  const JobRecord& r = *record;
  const core::Job* job = cs->FindJob(id);
  if (core::IsTerminal(r.job.state) || job == nullptr) {
    return Status::FailedPrecondition("Job has already finished");
  }
  // Everything is checked first and applied after, so a bad field changes nothing.
  const bool pending = r.job.state == core::JobState::kPending;
  if (update.time_limit) {
    const Duration current = pending ? r.job.spec->time_limit : r.job.time_limit;
    if (!who.admin && (current == kNoTime || *update.time_limit > current)) {
      return Status::PermissionDenied("only operators may raise a time limit");
    }
  }
  if (update.nice && *update.nice < 0 && !who.admin) {
    return Status::PermissionDenied("only operators may set nice < 0");
  }
  core::JobSpec spec = job->spec;
  for (const auto& [field, text] : update.request) {
    if (!pending) {
      return Status::FailedPrecondition("\"" + field + "\" of a started job cannot change");
    }
    const std::string option = JobUpdateOption(field);
    // An empty value clears features and dependencies, as `scontrol update Features=` does.
    if (text.empty() && option == "constraint") {
      spec.constraint = {};
    } else if (text.empty() && option == "dependency") {
      spec.dependency = {};
    } else {
      BERTH_RETURN_IF_ERROR(config::ApplyJobOption(option, text, 0, spec));
    }
  }
  if (!update.request.empty()) BERTH_RETURN_IF_ERROR(cs->UpdatePendingSpec(id, std::move(spec)));
  if (update.time_limit) {
    BERTH_RETURN_IF_ERROR(cs->SetTimeLimit(id, *update.time_limit));
    // A running job's node enforces its limit: tell it.
    if (!pending && !r.node_names.empty()) {
      SendCommand(r.node_names.front(),
                  agent::TimeLimitCommand{{id, r.job.restart_count}, *update.time_limit});
    }
  }
  if (update.nice) BERTH_RETURN_IF_ERROR(cs->SetNice(id, *update.nice));
  if (update.comment) {
    auto exec = std::make_shared<core::JobExecSpec>(job->exec ? *job->exec : core::JobExecSpec{});
    exec->comment = *update.comment;
    BERTH_RETURN_IF_ERROR(cs->ReplaceExec(id, exec_pool.Intern(std::move(exec))));
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
    node_admin[name] = {{"drain", true}, {"down", false}, {"reason", reason}, {"user", who.user}};
  } else if (action == "resume") {
    BERTH_RETURN_IF_ERROR(cs->SetNodeDrain(*index, false, "", now));
    if (cs->node(*index).health == core::NodeHealth::kDown && agents.Registered(name)) {
      BERTH_RETURN_IF_ERROR(cs->SetNodeHealth(*index, core::NodeHealth::kUp, "", now));
    }
    node_admin.erase(name);
  } else if (action == "down") {
    const std::string why = reason.empty() ? "set down" : reason;
    BERTH_RETURN_IF_ERROR(cs->SetNodeHealth(*index, core::NodeHealth::kDown, why, now));
    node_admin[name] = {{"drain", false}, {"down", true}, {"reason", why}, {"user", who.user}};
    FailNodeJobs(*index, t);
  } else {
    return Status::InvalidArgument("unknown node action '" + action + "'");
  }
  t.writes.push_back({store::Write::Kind::kPutMeta, {}, "node_admin", node_admin.dump()});
  t.nodes_changed = true;
  dirty = true;
  return Status::Ok();
}

}  // namespace berth::controller
