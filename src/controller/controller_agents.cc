// The controller's side of the agents: launch and cancel commands, registration (which
// reconciles what a node runs with what the controller believes), and status reports.
#include <algorithm>
#include <variant>

#include "controller/controller_internal.h"

namespace berth::controller {

namespace {

using nlohmann::json;

agent::LaunchSpec MakeLaunchSpec(const JobRecord& r, const core::ClusterState& cs,
                                 const ControllerOptions& opt, size_t node_index) {
  const core::Job& j = r.job;
  agent::LaunchSpec s;
  s.job_id = j.id;
  s.attempt = j.restart_count;
  if (j.array_job_id != core::kNoJob) {
    s.array_job_id = j.array_job_id;
    s.array_task_id = j.array_task_id;
    if (const core::ArrayInfo* a = cs.FindArray(j.array_job_id); a && !a->submitted.empty()) {
      const std::vector<int32_t>& ids = a->submitted.task_ids;
      s.array_task_count = static_cast<int32_t>(ids.size());
      s.array_task_min = ids.front();
      s.array_task_max = ids.back();
      s.array_task_step = ids.size() > 1 ? ids[1] - ids[0] : 1;
    }
  }
  s.name = j.spec->name;
  s.user = j.spec->user;
  s.uid = j.spec->uid;
  s.gid = j.spec->gid;
  s.account = j.spec->account;
  s.partition = j.partition;
  s.qos = j.spec->qos;
  s.cluster_name = opt.config.cluster.name;
  if (j.exec) {
    s.script = j.exec->script;
    s.argv = j.exec->argv;
    s.script_args = j.exec->script_args;
    s.work_dir = j.exec->work_dir;
    s.stdout_pattern = j.exec->stdout_pattern;
    s.stderr_pattern = j.exec->stderr_pattern;
    s.stdin_path = j.exec->stdin_path;
    s.open_append = j.exec->open_append;
    s.environment = j.exec->environment;
    s.signal_number = j.exec->signal_number;
    s.signal_before = j.exec->signal_before;
    s.signal_batch_only = j.exec->signal_batch_only;
    s.container = j.exec->container;
    s.hostname = j.exec->hostname;
    s.open_stdin = j.exec->open_stdin;
    s.stdin_once = j.exec->stdin_once;
    s.tty = j.exec->tty;
  }
  s.node_names = r.node_names;
  int32_t ntasks = 0;
  for (const core::NodeAllocation& a : j.alloc.nodes) {
    s.cpus_per_node.push_back(a.cpus);
    ntasks += a.tasks;
  }
  const core::NodeAllocation& here = j.alloc.nodes.at(node_index);
  s.node_index = static_cast<int32_t>(node_index);
  s.cpus = here.cpus;
  s.mem_mib = here.mem_mib;
  for (int g = 0; g < 64; ++g) {
    if (here.gpu_mask >> g & 1) s.gpu_indices.push_back(g);
  }
  for (const core::GpuShare& g : here.gpu_shares) {
    s.gpu_indices.push_back(g.device);
    s.gpu_share_milli += g.milli;
    s.gpu_mps = j.spec->gpu_mps;
  }
  const std::vector<std::string>& uuids = cs.node(here.node).spec.gpu_uuids;
  for (int32_t g : s.gpu_indices) {
    s.gpu_uuids.push_back(static_cast<size_t>(g) < uuids.size() &&
                                  uuids[static_cast<size_t>(g)].starts_with("MIG-")
                              ? uuids[static_cast<size_t>(g)]
                              : "");
  }
  s.tasks = here.tasks;
  s.ntasks = std::max(ntasks, 1);
  s.cpus_per_task = std::max(j.spec->cpus_per_task, 1);
  if (j.spec->mem_per_cpu_mib > 0) {
    s.mem_per_cpu_mib = j.spec->mem_per_cpu_mib;
  } else {
    s.mem_per_node_mib = here.mem_mib;
  }
  // A pod's memory limit above its request: the cgroup gets the limit (the scheduler placed the
  // request).
  if (r.k8s && r.k8s->contains("mem_limit_mib")) {
    s.mem_mib = std::max(s.mem_mib, r.k8s->at("mem_limit_mib").get<int64_t>());
  }
  // Its cpu limit: a CPU-time quota (cgroup cpu.max / cpu.cfs_quota_us).
  if (r.k8s && r.k8s->contains("cpu_limit") && r.k8s->at("cpu_limit").is_number()) {
    s.cpu_quota_millis =
        std::max<int64_t>(1, std::llround(r.k8s->at("cpu_limit").get<double>() * 1000));
  }
  s.time_limit = j.time_limit >= kInfinite ? 0 : j.time_limit;
  s.kill_wait = opt.kill_wait_s;
  s.submit_dir = j.exec ? j.exec->work_dir : "";
  s.submit_host = r.submit_host;
  s.submit_time = j.spec->submit_time;
  s.start_time = j.start_time;
  return s;
}

bool IsImagePullError(const std::string& reason) {
  return reason == "ErrImagePull" || reason == "ErrImageNeverPull" || reason == "InvalidImageName";
}

core::JobState StateOfResult(const std::string& state) {
  std::optional<core::JobState> s = core::ParseJobState(state);
  if (!s || !core::IsTerminal(*s)) return core::JobState::kFailed;
  // A job that could not be started at all fails (the node reports NODE_FAIL for it).
  if (*s == core::JobState::kNodeFail) return core::JobState::kFailed;
  return *s;
}

}  // namespace

agent::LaunchSpec Controller::Impl::LaunchSpecFor(const JobRecord& r, size_t node_index) const {
  return MakeLaunchSpec(r, *cs, opt, node_index);
}

void Controller::Impl::SendLaunch(const JobRecord& r) {
  if (r.node_names.empty()) return;
  agent::LaunchCommand launch{{r.job.id, r.job.restart_count}, LaunchSpecFor(r, 0), ""};
  // srun in the job asks for steps on the other nodes with this, and the srun inside a job that
  // an srun elsewhere created meets its stream (over TLS, where the Unix socket's peer
  // credentials do not reach).
  if (k8s && k8s->signer()) {
    launch.job_token = k8s->signer()->IssueJob(r.job.id, r.job.restart_count);
  }
  SendCommand(r.node_names.front(), launch);
}

void Controller::Impl::SendCommand(const std::string& node, const agent::AgentCommand& command) {
  agents.Send(node, command);
}

void Controller::Impl::SendCancel(const JobRecord& r, int signal, agent::SignalScope scope,
                                  bool cancel) {
  if (r.node_names.empty()) return;
  const agent::CommandTarget target{r.job.id, r.job.restart_count};
  if (cancel) {
    SendCommand(r.node_names.front(), agent::CancelCommand{target});
  } else {
    SendCommand(r.node_names.front(),
                agent::SignalCommand{target, signal, scope.batch_only, scope.full});
  }
}

void Controller::Impl::EndOnNode(core::JobId id, const agent::JobResult& result, Txn& t) {
  const core::Job* job = cs->FindJob(id);
  if (job == nullptr || !core::HoldsResources(job->state) || job->restart_count != result.attempt) {
    return;  // already ended (a repeated report), or a report about an older attempt
  }
  core::JobOutcome o;
  o.state = result.fenced ? core::JobState::kNodeFail : StateOfResult(result.state);
  o.exit_code = result.exit_code;
  o.term_signal = result.term_signal;
  o.end_time = std::max(result.end_time, job->start_time);
  // A job its node fenced off requeues as one on a node the controller finds down does.
  bool requeue = result.fenced && job->spec->requeue;
  if (auto p = preempting.find(id); p != preempting.end()) {
    o.state = core::JobState::kPreempted;
    requeue = p->second == core::PreemptMode::kRequeue;
  }
  if (const JobRecord* current = OwnRecord(id)) {
    auto r = std::make_shared<JobRecord>(*current);
    RunFacts& run = r->run.Mut();
    run.cpu_seconds = result.cpu_seconds;
    run.max_rss_mib = result.max_rss_mib;
    run.gpu_utilization = result.gpu_utilization;
    run.message = result.message;
    // A Pod's image: its digest for status.containerStatuses[].imageID, and a pull that failed
    // for the waiting reason (docs/containers.md).
    if (r->k8s && (!result.image_digest.empty() || IsImagePullError(result.image_error) ||
                   r->k8s->contains("image_error"))) {
      auto k = std::make_shared<nlohmann::json>(*r->k8s);
      if (!result.image_digest.empty()) (*k)["image_id"] = result.image_digest;
      k->erase("image_error");
      if (IsImagePullError(result.image_error)) {
        (*k)["image_error"] = {{"reason", result.image_error}, {"message", result.message}};
      }
      r->k8s = std::move(k);
    }
    PutRecord(id, std::move(r));
  }
  // A Pod whose image could not be pulled waits and tries again, whatever its restartPolicy,
  // as the kubelet does (ImagePullBackOff: 10 s, doubling, at most 5 min); a Slurm job fails,
  // as with pyxis.
  const std::shared_ptr<const JobRecord> ended = OwnRecordPtr(id);
  if (!requeue && ended != nullptr && ended->k8s && ended->k8s_deleted == 0 &&
      IsImagePullError(result.image_error)) {
    requeue = true;
    core::Job final_job;
    if (!cs->EndJob(id, o, requeue, &final_job).ok()) return;
    if (const core::Job* again = cs->FindJob(id); again != nullptr) {
      core::JobSpec spec = again->spec;
      spec.begin_time =
          Now() + std::min<Duration>(Duration{10} << std::min(job->restart_count, 5), 300);
      (void)cs->UpdatePendingSpec(id, std::move(spec));
    }
    preempting.erase(id);
    dirty = true;
    t.nodes_changed = true;
    t.touched.insert(id);
    return;
  }
  // A bare pod's restartPolicy (docs/kubernetes.md): OnFailure runs a failed container again,
  // Always any that ended, after a back-off (10 s, doubling, at most 5 min) as the kubelet does.
  // Pods of a Job are replaced by the Job controller instead.
  Duration backoff = 0;
  if (!requeue && ended != nullptr && ended->k8s && ended->k8s_deleted == 0 &&
      !ended->k8s->contains("ownerReferences")) {
    const nlohmann::json& pod_spec = ended->k8s->value("spec", nlohmann::json::object());
    const std::string policy = pod_spec.value("restartPolicy", "Always");
    const bool failed =
        o.state == core::JobState::kFailed || o.state == core::JobState::kOutOfMemory;
    if ((policy == "Always" && (failed || o.state == core::JobState::kCompleted)) ||
        (policy == "OnFailure" && failed)) {
      requeue = true;
      backoff = std::min<Duration>(Duration{10} << std::min(job->restart_count, 5), 300);
    }
  }
  core::Job final_job;
  if (!cs->EndJob(id, o, requeue, &final_job).ok()) return;
  if (backoff > 0) {
    if (const core::Job* again = cs->FindJob(id); again != nullptr) {
      core::JobSpec spec = again->spec;
      spec.begin_time = Now() + backoff;
      (void)cs->UpdatePendingSpec(id, std::move(spec));
    }
  }
  preempting.erase(id);
  dirty = true;
  t.nodes_changed = true;
  if (requeue) {
    t.touched.insert(id);
  } else {
    FinishRecord(final_job, t);
  }
}

Result<uint32_t> Controller::Impl::AddAgentNode(const std::string& name, const json& n, Txn& t) {
  if (!opt.allow_dynamic_nodes) {
    return Status::NotFound("node " + name + " is not in the configuration");
  }
  core::NodeSpec spec;
  spec.name = name;
  spec.cpus = n.at("cpus").get<int32_t>();
  spec.mem_mib = n.at("mem_mib").get<int64_t>();
  spec.gpus = n.value("gpus", std::vector<std::string>{});
  spec.features = n.value("features", std::vector<std::string>{});
  BERTH_ASSIGN_OR_RETURN(uint32_t index, cs->AddNode(spec, {}, Now()));
  std::vector<std::string> parts;
  for (int16_t p : cs->node(index).partitions) parts.push_back(cs->partitions()[p].spec.name);
  json rec = {{"name", name},      {"cpus", spec.cpus},         {"mem_mib", spec.mem_mib},
              {"gpus", spec.gpus}, {"features", spec.features}, {"partitions", parts}};
  t.writes.push_back({store::Write::Kind::kPutNode, {}, name, rec.dump()});
  return index;
}

Result<json> Controller::Impl::RegisterAgent(const Caller& who, const json& body, Txn& t) {
  const json& n = body.at("node");
  std::string name = n.at("name").get<std::string>();
  if (!who.admin && who.agent_node != name) {
    return Status::PermissionDenied(who.agent_node.empty()
                                        ? "only root may register a node agent"
                                        : "this credential is node " + who.agent_node + "'s, not " +
                                              name + "'s");
  }
  // What the reconciliation reads, read once before anything changes: a malformed entry
  // throws here (a bad request) rather than half-way through.
  for (const json& j : body.value("jobs", json::array())) {
    (void)j.at("job_id").get<core::JobId>();
    (void)j.at("attempt").get<int32_t>();
  }
  for (const json& st : body.value("steps", json::array())) {
    (void)st.at("job_id").get<core::JobId>();
    (void)st.at("attempt").get<int32_t>();
    (void)st.at("step_id").get<uint32_t>();
  }
  const json images = body.value("images", json::array());
  if (!images.is_array()) return Status::InvalidArgument("\"images\" must be an array");
  const Time now = Now();
  std::optional<uint32_t> index = cs->FindNode(name);
  if (!index) {
    BERTH_ASSIGN_OR_RETURN(index, AddAgentNode(name, n, t));
  }
  // A node an operator set down stays down until `resume`, however often its agent registers.
  bool admin_down = node_admin.contains(name) && node_admin[name].value("down", false);
  if (!admin_down) (void)cs->SetNodeHealth(*index, core::NodeHealth::kUp, "", now);
  // Whatever was queued for the node is superseded by this reconciliation.
  const std::vector<agent::AgentCommand> dropped = agents.Register(name, now);
  ReconcileAgentJobs(name, *index, body.value("jobs", json::array()), dropped, t);
  ReconcileAgentSteps(name, body.value("steps", json::array()));
  PutNodeImages(name, images);
  t.nodes_changed = true;
  dirty = true;
  json reply{{"node", name},
             {"heartbeat_s", opt.heartbeat_s},
             {"kill_wait_s", opt.kill_wait_s},
             {"fence_s", FenceSeconds()},
             {"image_cache_bytes", opt.config.image_cache_mib * 1024 * 1024},
             {"commands_after", 0}};
  if (opt.epoch > 0) reply["epoch"] = opt.epoch;
  return reply;
}

void Controller::Impl::ReconcileAgentJobs(const std::string& name, uint32_t index, const json& jobs,
                                          const std::vector<agent::AgentCommand>& dropped, Txn& t) {
  const Time now = Now();
  std::map<core::JobId, int32_t> running_there;
  for (const json& j : jobs) {
    core::JobId id = j.at("job_id").get<core::JobId>();
    int32_t attempt = j.at("attempt").get<int32_t>();
    if (j.contains("result")) {
      Result<agent::JobResult> r = agent::DecodeJobResult(j.at("result").dump());
      if (r.ok()) EndOnNode(id, *r, t);
      continue;
    }
    running_there[id] = attempt;
    const core::Job* job = cs->FindJob(id);
    bool ours = job && core::HoldsResources(job->state) && job->restart_count == attempt &&
                !job->alloc.nodes.empty() && job->alloc.nodes.front().node == index;
    if (!ours) {
      SendCommand(name, agent::CancelCommand{{id, attempt}});
    } else {
      ResendToRunningJob(name, *job, dropped);
      ResendCancel(name, id, attempt);
    }
  }
  std::vector<core::JobId> expected = cs->node(index).jobs;
  for (core::JobId id : expected) {
    const core::Job* job = cs->FindJob(id);
    if (job == nullptr || job->alloc.nodes.empty() || job->alloc.nodes.front().node != index) {
      continue;
    }
    if (running_there.count(id)) continue;
    if (job->state == core::JobState::kConfiguring) continue;  // launched once all nodes are up
    if (job->state == core::JobState::kRunning && job->start_time + 10 > now) {
      // Started moments ago: its launch command may have been lost with the old agent.
      if (const JobRecord* r = OwnRecord(id)) SendLaunch(*r);
      ResendCancel(name, id, job->restart_count);
      continue;
    }
    // The node does not know a job it should run: it was lost with the node.
    FailNodeJob(id, t);
  }
}

void Controller::Impl::ResendCancel(const std::string& node, core::JobId id, int32_t attempt) {
  // A cancel (scancel, requeue, preemption) queued before the agent registered was dropped with
  // its queue: the job would run on with cancel_requested set. A preemption still in its grace
  // time gets its cancel when the grace ends (GraceTick).
  const JobRecord* r = OwnRecord(id);
  if (r == nullptr || !r->cancel_requested || grace_ends.contains(id)) return;
  SendCommand(node, agent::CancelCommand{{id, attempt}});
}

void Controller::Impl::ResendToRunningJob(const std::string& node, const core::Job& job,
                                          const std::vector<agent::AgentCommand>& dropped) {
  const agent::CommandTarget target{job.id, job.restart_count};
  // A time limit changed (scontrol update TimeLimit=) while the command waited in the dropped
  // queue would otherwise never reach the node that enforces it; the supervisor also moves a
  // --signal=SIG@TIME warning that has not gone off with it.
  if (job.time_limit < kInfinite) {
    SendCommand(node, agent::TimeLimitCommand{target, job.time_limit});
  }
  // A signal is not idempotent: only those no agent acknowledged are sent again (as slurmctld
  // retries a signal RPC its slurmd did not answer). One the old agent acted on just before it
  // died, unacknowledged, arrives twice.
  for (const agent::AgentCommand& c : dropped) {
    const auto* s = std::get_if<agent::SignalCommand>(&c);
    if (s != nullptr && s->target == target) SendCommand(node, *s);
    // A pod stream (kubectl exec, attach, port-forward) the face still waits for: asked for in
    // the moment the agent registered, it would leave kubectl waiting for nothing.
    const auto* st = std::get_if<agent::StreamCommand>(&c);
    if (st != nullptr && st->target == target && streams.Waiting(st->stream_id, node).ok()) {
      SendCommand(node, *st);
    }
  }
}

void Controller::Impl::ReconcileAgentSteps(const std::string& name, const json& reported) {
  std::set<std::pair<core::JobId, uint32_t>> steps_there;
  for (const json& st : reported) {
    steps_there.emplace(st.at("job_id").get<core::JobId>(), st.at("step_id").get<uint32_t>());
    NoteStep(name, st);
  }
  // Cleared by the registration, or lost with the agent: sent again.
  for (const std::string& command : steps.CommandsToResend(name, steps_there)) {
    agents.SendEncoded(name, command);
  }
}

// A node's report of a running attempt's container (docs/containers.md): its image being pulled,
// then started. Kept with a Pod's record ("image_pull") for its status and events.
void Controller::Impl::NoteContainer(const json& e, Txn& t) {
  const core::JobId id = e.at("job_id").get<core::JobId>();
  const int32_t attempt = e.at("attempt").get<int32_t>();
  const core::Job* job = cs->FindJob(id);
  const JobRecord* current = OwnRecord(id);
  if (job == nullptr || job->restart_count != attempt || !core::HoldsResources(job->state) ||
      current == nullptr || !current->k8s) {
    return;  // not a Pod, or an older attempt's
  }
  auto r = std::make_shared<JobRecord>(*current);
  auto k = std::make_shared<json>(*r->k8s);
  json pull = e.at("container");
  pull["attempt"] = attempt;
  (*k)["image_pull"] = std::move(pull);
  r->k8s = std::move(k);
  PutRecord(id, std::move(r));
  t.touched.insert(id);
}

namespace {

// An agent's "usage" event: {"time_ms", "node": {"cpu_seconds", "memory_bytes"}, "jobs":
// [{"job_id", "attempt", "cpu_seconds", "memory_bytes"}], "gpus": [{"index", "utilization",
// "memory_used_bytes"}]} ("gpus" only from a node whose GPUs NVML measures). Throws when
// malformed, as the other events do; kInvalidArgument for a GPU reading out of range.
struct UsageEvent {
  k8s::UsageSample node;
  std::vector<UsageTable::JobReading> jobs;
  std::vector<UsageTable::GpuReading> gpus;
};
Result<UsageEvent> DecodeUsage(const json& e, size_t node_gpus) {
  auto sample = [&](const json& j) {
    k8s::UsageSample s;
    s.time_ms = e.at("time_ms").get<int64_t>();
    s.cpu_seconds = j.at("cpu_seconds").get<double>();
    s.memory_bytes = j.at("memory_bytes").get<int64_t>();
    return s;
  };
  UsageEvent out;
  out.node = sample(e.at("node"));
  for (const json& j : e.value("jobs", json::array())) {
    out.jobs.push_back({j.at("job_id").get<uint32_t>(), j.at("attempt").get<int32_t>(), sample(j)});
  }
  for (const json& g : e.value("gpus", json::array())) {
    UsageTable::GpuReading r;
    r.index = g.at("index").get<int32_t>();
    r.utilization = g.at("utilization").get<int32_t>();
    r.memory_used_bytes = g.value("memory_used_bytes", int64_t{-1});
    if (r.index < 0 || static_cast<size_t>(r.index) >= node_gpus) {
      return Status::InvalidArgument("a usage event's GPU " + std::to_string(r.index) +
                                     " is not one of the node's " + std::to_string(node_gpus) +
                                     " GPUs");
    }
    if (r.utilization < 0 || r.utilization > 100) {
      return Status::InvalidArgument("a usage event's GPU utilisation " +
                                     std::to_string(r.utilization) + " is not a percentage");
    }
    out.gpus.push_back(r);
  }
  return out;
}

}  // namespace

Status Controller::Impl::AgentStatus(const Caller& who, const std::string& node, const json& body,
                                     Txn& t) {
  if (!who.admin && who.agent_node != node) {
    return Status::PermissionDenied("only root or node " + node +
                                    "'s credential may report for it");
  }
  std::optional<uint32_t> index = cs->FindNode(node);
  if (!index) return Status::NotFound("node " + node + " is not registered");
  BERTH_RETURN_IF_ERROR(agents.Heard(node, Now()));
  // Every event is read before any is applied: a report with a bad event changes nothing.
  // The copy outlives both loops: the step events below point into it.
  const json reported = body.value("events", json::array());
  std::vector<std::variant<agent::JobResult, const json*>> events;
  std::vector<const json*> containers;
  const json* images = nullptr;
  std::optional<UsageEvent> usage;
  for (const json& e : reported) {
    std::string kind = e.at("kind").get<std::string>();
    if (kind == "ended") {
      Result<agent::JobResult> r = agent::DecodeJobResult(e.at("result").dump());
      if (!r.ok()) return r.status();
      events.emplace_back(std::move(*r));
    } else if (kind == "container") {
      (void)e.at("job_id").get<core::JobId>();  // what NoteContainer reads: throws when malformed
      (void)e.at("attempt").get<int32_t>();
      (void)e.at("container").at("phase").get<std::string>();
      containers.push_back(&e);
    } else if (kind == "images") {
      // The node's image cache changed: its whole list (the last one in a report counts).
      if (!e.at("images").is_array()) {
        return Status::InvalidArgument("an \"images\" event needs an \"images\" array");
      }
      images = &e.at("images");
    } else if (kind == "usage") {
      Result<UsageEvent> u = DecodeUsage(e, cs->node(*index).spec.gpus.size());
      if (!u.ok()) return u.status();
      usage = std::move(*u);
    } else if (kind == "step") {
      (void)e.at("job_id").get<core::JobId>();  // what NoteStep reads: throws when malformed
      (void)e.at("attempt").get<int32_t>();
      (void)e.at("step_id").get<uint32_t>();
      events.emplace_back(&e);
    }
  }
  for (const json* e : containers) NoteContainer(*e, t);
  if (images != nullptr) PutNodeImages(node, *images);
  if (usage) {
    const int64_t now_ms = UsageTable::ClockMs();
    this->usage.Record(node, now_ms, usage->node, usage->jobs, std::move(usage->gpus));
  }
  for (const auto& e : events) {
    if (const auto* ended = std::get_if<agent::JobResult>(&e)) {
      EndOnNode(ended->job_id, *ended, t);
    } else {
      NoteStep(node, *std::get<const json*>(e));
    }
  }
  return Status::Ok();
}

}  // namespace berth::controller
