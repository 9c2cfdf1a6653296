// Job steps on a job's other nodes: srun on the batch node asks for them here, the controller
// sends each node's agent a "step" command (a supervisor that runs `berth srun` for that node's
// tasks, in the job's user, cgroup and output files, and in the step's container when srun gave
// one), the agents report how each ended, and srun polls for that. See docs/slurm.md "srun" and
// docs/security.md (the step token).
#include <strings.h>

#include <algorithm>
#include <charconv>

#include "controller/controller_internal.h"
#include "image/container_spec.h"

namespace berth::controller {

namespace {

using nlohmann::json;

// May `who` start, watch or signal steps of this job attempt? Its owner and operators may (Unix
// socket, user token, MUNGE), and so may the attempt's own step token.
Status MayStep(const Caller& who, const JobRecord& r) {
  if (who.step_job != 0) {
    if (who.step_job == r.job.id && who.step_attempt == r.job.restart_count) return Status::Ok();
    return Status::PermissionDenied("this step token belongs to another job or an earlier run of " +
                                    std::to_string(r.job.id));
  }
  if (who.admin || (who.known && who.uid == r.job.spec->uid)) return Status::Ok();
  return Status::PermissionDenied("Access/permission denied: job " + std::to_string(r.job.id) +
                                  " belongs to another user");
}

// Whether this attempt of the job may still have steps: it runs (or is suspended, to run again).
bool StepsMayRun(const core::Job* job, int32_t attempt) {
  return job != nullptr && job->restart_count == attempt &&
         (job->state == core::JobState::kRunning || job->state == core::JobState::kSuspended);
}

// A literal path as a Slurm output pattern (the supervisor expands %j, %N, ...).
std::string LiteralPattern(const std::string& path) {
  std::string out;
  for (char c : path) {
    out += c;
    if (c == '%') out += '%';
  }
  return out;
}

json ResultJson(const agent::JobResult& r) {
  return {{"state", r.state},
          {"exit_code", r.exit_code},
          {"term_signal", r.term_signal},
          {"message", r.message},
          {"user_cpu_seconds", r.user_cpu_seconds},
          {"system_cpu_seconds", r.system_cpu_seconds},
          {"max_task_rss_kib", r.max_task_rss_kib}};
}

}  // namespace

Result<json> Controller::Impl::StartStep(const Caller& who, core::JobId id, const json& body) {
  const std::shared_ptr<const JobRecord> current = OwnRecordPtr(id);
  if (current == nullptr || cs->FindJob(id) == nullptr) {
    return Status::NotFound("Invalid job id specified: " + std::to_string(id));
  }
  const JobRecord& r = *current;
  BERTH_RETURN_IF_ERROR(MayStep(who, r));
  if (r.job.state != core::JobState::kRunning) {
    return Status::FailedPrecondition("job " + std::to_string(id) + " is not running (" +
                                      std::string(core::JobStateName(r.job.state)) + ")");
  }
  const uint32_t step_id = body.at("step_id").get<uint32_t>();
  if (steps.Contains(id, step_id)) {
    return Status::AlreadyExists("step " + std::to_string(id) + "." + std::to_string(step_id) +
                                 " exists");
  }
  std::vector<std::pair<std::string, size_t>> nodes;
  for (const json& n : body.at("nodes")) {
    const std::string name = n.get<std::string>();
    auto at = std::find(r.node_names.begin(), r.node_names.end(), name);
    if (at == r.node_names.end()) {
      return Status::InvalidArgument("node " + name + " is not in job " + std::to_string(id) +
                                     "'s allocation");
    }
    nodes.emplace_back(name, static_cast<size_t>(at - r.node_names.begin()));
  }
  // The step's own container (srun's --container-*), else the host: a step never inherits the
  // batch script's container, as with pyxis.
  std::string container;
  if (body.contains("container") && !body["container"].is_null()) {
    BERTH_ASSIGN_OR_RETURN(image::ContainerSpec c, image::DecodeContainerSpec(body["container"]));
    container = image::EncodeContainerSpec(c).dump();
  }
  StepState state;
  state.attempt = r.job.restart_count;
  const Time now = Now();
  for (const auto& [name, index] : nodes) {
    agent::LaunchSpec spec = LaunchSpecFor(r, index);
    spec.script.clear();
    spec.script_args.clear();
    spec.argv = body.at("argv").get<std::vector<std::string>>();
    spec.environment =
        body.at("environment").get<std::vector<std::pair<std::string, std::string>>>();
    spec.work_dir = body.value("work_dir", spec.work_dir);
    spec.container = container;
    // The tasks' output joins the job's files (srun's own standard output and error on the batch
    // node), appended: the batch node opened them first.
    spec.stdout_pattern = LiteralPattern(body.value("stdout", "/dev/null"));
    spec.stderr_pattern = LiteralPattern(body.value("stderr", "/dev/null"));
    spec.stdin_path.clear();
    spec.open_append = true;
    spec.signal_number = 0;  // --signal is the batch step's
    spec.signal_before = 0;
    // What is left of the job's time: the step ends with the job in any case (EndStaleSteps).
    if (r.job.time_limit < kInfinite && r.job.time_limit > 0) {
      spec.time_limit = std::max<Duration>(1, r.job.start_time + r.job.time_limit - now);
    }
    StepNode node;
    agent::StepCommand command{{id, r.job.restart_count}, step_id, std::move(spec), ""};
    // The part's srun meets its launcher's stream through the controller (srun_relay.h), over
    // TLS with the job attempt's step token.
    if (k8s && k8s->signer()) command.job_token = k8s->signer()->IssueJob(id, r.job.restart_count);
    node.command = agent::EncodeAgentCommand(command);
    state.nodes.emplace(name, std::move(node));
  }
  // Sent once every part's command is built: a request that fails part-way starts nothing.
  for (const auto& [name, node] : state.nodes) agents.SendEncoded(name, node.command);
  BERTH_RETURN_IF_ERROR(steps.Add(id, step_id, std::move(state)));
  json names = json::array();
  for (const auto& n : nodes) names.push_back(n.first);
  return json{{"job_id", id}, {"step_id", step_id}, {"nodes", names}};
}

Result<json> Controller::Impl::StepStatus(const Caller& who, core::JobId id, uint32_t step) {
  // On the caller's thread: the job's record as API threads see it, the steps under steps_mu.
  std::shared_ptr<const JobRecord> record = FindRecord(id);
  if (!record) return Status::NotFound("Invalid job id specified: " + std::to_string(id));
  const JobRecord& r = *record;
  BERTH_RETURN_IF_ERROR(MayStep(who, r));
  json out = {{"job_id", id},
              {"step_id", step},
              {"job_state", std::string(core::JobStateName(r.job.state))},
              {"attempt", r.job.restart_count}};
  const std::optional<StepState> s = steps.Find(id, step);
  if (!s) {
    // The job ended (its steps with it), or this controller restarted and the step's nodes have
    // not registered again yet: the caller tells these apart by job_state.
    if (r.job.state == core::JobState::kRunning) {
      return Status::NotFound("step " + std::to_string(id) + "." + std::to_string(step) +
                              " is not known (yet)");
    }
    out["nodes"] = json::object();
    return out;
  }
  json nodes = json::object();
  for (const auto& [name, n] : s->nodes) {
    json j = n.result ? ResultJson(*n.result) : json::object();
    j["ended"] = n.result.has_value();
    nodes[name] = std::move(j);
  }
  out["nodes"] = std::move(nodes);
  return out;
}

Status Controller::Impl::SignalStep(const Caller& who, core::JobId id, uint32_t step, int signal) {
  const JobRecord* r = OwnRecord(id);
  if (r == nullptr) return Status::NotFound("Invalid job id specified: " + std::to_string(id));
  BERTH_RETURN_IF_ERROR(MayStep(who, *r));
  const std::optional<StepState> s = steps.Find(id, step);
  if (!s) {
    return Status::NotFound("step " + std::to_string(id) + "." + std::to_string(step) +
                            " is not running");
  }
  for (const auto& [name, n] : s->nodes) {
    if (n.result) continue;
    SendCommand(name, agent::StepSignalCommand{{id, s->attempt}, step, signal});
  }
  return Status::Ok();
}

Status Controller::Impl::RecordStep(const Caller& who, core::JobId id, const api::StepRecord& step,
                                    Txn& t) {
  const std::shared_ptr<const JobRecord> current = OwnRecordPtr(id);
  if (current == nullptr || cs->FindJob(id) == nullptr) {
    return Status::NotFound("Invalid job id specified: " + std::to_string(id));
  }
  const JobRecord& r = *current;
  BERTH_RETURN_IF_ERROR(MayStep(who, r));
  if (!StepsMayRun(cs->FindJob(id), step.attempt)) {
    return Status::FailedPrecondition("job " + std::to_string(id) + " has no running attempt " +
                                      std::to_string(step.attempt) + " (" +
                                      std::string(core::JobStateName(r.job.state)) + ", restarts " +
                                      std::to_string(r.job.restart_count) + ")");
  }
  auto updated = std::make_shared<JobRecord>(r);
  std::vector<api::StepRecord>& steps = updated->run.Mut().steps;
  auto at = std::lower_bound(steps.begin(), steps.end(), step.id,
                             [](const api::StepRecord& s, uint32_t want) { return s.id < want; });
  api::StepRecord kept = step;
  kept.cancelled_by = -1;  // the controller's to say, never srun's
  if (at != steps.end() && at->id == step.id) {
    if (at->ended() && !step.ended()) return Status::Ok();  // a late start report: the end stays
    kept.cancelled_by = at->cancelled_by;
    // scancel JOB.STEP ended it: its tasks died of the KILL, srun saw a signal.
    if (kept.cancelled_by >= 0 && kept.ended() && kept.state != "COMPLETED") {
      kept.state = "CANCELLED";
    }
    *at = std::move(kept);
  } else if (steps.size() < api::kMaxStepsKept) {
    steps.insert(at, std::move(kept));
  } else {
    if (step.ended()) return Status::Ok();  // counted when it started
    ++updated->run.Mut().steps_dropped;
  }
  WriteRecord(updated, /*active=*/true, kNoTime, t);
  PutRecord(id, std::move(updated));
  return Status::Ok();
}

void Controller::Impl::NoteStep(const std::string& node, const json& report) {
  const core::JobId id = report.at("job_id").get<core::JobId>();
  const int32_t attempt = report.at("attempt").get<int32_t>();
  const uint32_t step = report.at("step_id").get<uint32_t>();
  const core::Job* job = cs->FindJob(id);
  const bool runs = StepsMayRun(job, attempt);
  if (!runs) {
    SendCommand(node, agent::EndStepsCommand{{id, attempt}});
    return;
  }
  std::optional<agent::JobResult> result;
  if (report.contains("result")) {
    Result<agent::JobResult> r = agent::DecodeJobResult(report.at("result").dump());
    if (r.ok()) {
      result = *r;
    } else {
      agent::JobResult bad;
      bad.state = "FAILED";
      bad.exit_code = 1;
      bad.message = "the node sent a result berth cannot read: " + r.status().message();
      result = bad;
    }
  }
  steps.Note(node, id, attempt, step, result);
}

void Controller::Impl::EndStaleSteps() {
  const core::ClusterState& state = *cs;
  const std::vector<StaleSteps> stale = steps.TakeStale([&state](core::JobId id, int32_t attempt) {
    return StepsMayRun(state.FindJob(id), attempt);
  });
  for (const StaleSteps& s : stale) SendCommand(s.node, agent::EndStepsCommand{{s.job, s.attempt}});
}

net::HttpResponse Controller::Impl::StepRoute(const net::HttpRequest& req, const Caller& who,
                                              const std::vector<std::string>& p, const json& body) {
  std::optional<core::JobId> id = ParseId(p[2]);
  if (!id) return Error(Status::InvalidArgument("Invalid job id specified: " + p[2]));
  const core::JobId jid = *id;
  auto answer = [&](std::function<Result<json>()> f) {
    Reply r = Call([&f](Txn&, Reply* out) {
      Result<json> res = f();
      if (res.ok()) {
        out->body = *res;
      } else {
        out->status = res.status();
      }
    });
    return r.status.ok() ? JsonResponse(200, r.body) : Error(r.status);
  };
  if (p.size() == 4 && req.method == "POST") {
    // Checked here, on this connection's thread: the state thread gets a well-formed request.
    auto strings = [](const json& a) {
      return a.is_array() &&
             std::all_of(a.begin(), a.end(), [](const json& e) { return e.is_string(); });
    };
    const json env = body.is_object() ? body.value("environment", json::array()) : json();
    const bool env_ok =
        env.is_array() && std::all_of(env.begin(), env.end(), [](const json& e) {
          return e.is_array() && e.size() == 2 && e[0].is_string() && e[1].is_string();
        });
    if (!body.is_object() || !body.contains("step_id") || !body["step_id"].is_number_unsigned() ||
        body["step_id"].get<uint64_t>() > UINT32_MAX || !strings(body.value("nodes", json())) ||
        body["nodes"].empty() || !strings(body.value("argv", json())) || body["argv"].empty() ||
        !env_ok || !body.value("work_dir", json("")).is_string() ||
        !body.value("stdout", json("")).is_string() ||
        !body.value("stderr", json("")).is_string() ||
        !(body.value("container", json()).is_null() || body["container"].is_object())) {
      return Error(Status::InvalidArgument(
          "expected {\"step_id\": N, \"nodes\": [names], \"argv\": [srun's words], "
          "\"environment\": [[name, value], ...], \"work_dir\", \"stdout\", \"stderr\", "
          "\"container\": {...} (optional)}"));
    }
    json b = body;
    b["environment"] = env;
    return answer([&] {
      state_thread.AssertHeld();  // answer() runs it in a command
      return StartStep(who, jid, b);
    });
  }
  if (p.size() == 6 && p[5] == "io" && req.method == "GET") return StepIoRoute(req, who, jid, p[4]);
  uint32_t step = 0;
  bool numbered = false;
  if (p.size() >= 5) {
    const std::string& t = p[4];
    auto [end, ec] = std::from_chars(t.data(), t.data() + t.size(), step);
    numbered = !t.empty() && ec == std::errc() && end == t.data() + t.size();
  }
  if (!numbered) {
    return Error(Status::NotFound("no such endpoint: " + req.method + " " + req.path));
  }
  if (p.size() == 5 && req.method == "GET") {
    Result<json> r = StepStatus(who, jid, step);
    return r.ok() ? JsonResponse(200, *r) : Error(r.status());
  }
  if (p.size() == 6 && p[5] == "record" && req.method == "POST") {
    // Checked here, on this connection's thread: the state thread gets a well-formed record.
    Result<api::StepRecord> rec = api::DecodeStepRecord(body);
    if (!rec.ok()) return Error(rec.status());
    if (rec->id != step) {
      return Error(Status::InvalidArgument("\"id\": " + std::to_string(rec->id) +
                                           " is not the step of the path (" + std::to_string(step) +
                                           ")"));
    }
    const api::StepRecord record = *rec;
    Reply r = Call([&](Txn& t, Reply* out) {
      state_thread.AssertHeld();  // a command: on the state thread
      out->status = RecordStep(who, jid, record, t);
    });
    return r.status.ok() ? JsonResponse(200, json::object()) : Error(r.status);
  }
  if (p.size() == 6 && p[5] == "signal" && req.method == "POST") {
    const int sig =
        body.is_object() && body.contains("signal") && body["signal"].is_number_integer()
            ? body["signal"].get<int>()
            : 0;
    if (sig <= 0 || sig >= 65) return Error(Status::InvalidArgument("Invalid signal specified"));
    return answer([&]() -> Result<json> {
      state_thread.AssertHeld();  // answer() runs it in a command
      BERTH_RETURN_IF_ERROR(SignalStep(who, jid, step, sig));
      return json::object();
    });
  }
  return Error(Status::NotFound("no such endpoint: " + req.method + " " + req.path));
}

net::HttpResponse Controller::Impl::StepIoRoute(const net::HttpRequest& req, const Caller& who,
                                                core::JobId id, const std::string& step) {
  auto query = [&req](const char* k) {
    auto it = req.query.find(k);
    return it == req.query.end() ? std::string() : it->second;
  };
  uint32_t number = 0;
  auto [end, ec] = std::from_chars(step.data(), step.data() + step.size(), number);
  if (step != "batch" && (step.empty() || ec != std::errc() || end != step.data() + step.size())) {
    return Error(Status::NotFound("no such step: " + std::to_string(id) + "." + step));
  }
  const std::string side_text = query("side");
  if (side_text != "launcher" && side_text != "part") {
    return Error(Status::InvalidArgument("?side= must be launcher or part"));
  }
  const auto side =
      side_text == "launcher" ? StepIoRendezvous::Side::kLauncher : StepIoRendezvous::Side::kPart;
  const std::string node = query("node");
  int wait_ms = 60000;
  if (const std::string w = query("wait_ms"); !w.empty()) {
    auto [e, code] = std::from_chars(w.data(), w.data() + w.size(), wait_ms);
    if (code != std::errc() || e != w.data() + w.size() || wait_ms < 0) {
      return Error(Status::InvalidArgument("?wait_ms= must be a number of milliseconds"));
    }
  }
  if (::strcasecmp(req.Header("upgrade").c_str(), "berth-step-io") != 0) {
    return Error(
        Status::InvalidArgument("a step's stream is an upgraded connection "
                                "(Upgrade: berth-step-io)"));
  }
  // Only while this attempt of the job runs, for its owner, operators and its step token; the
  // srun that submits a job may wait for the srun inside it from the submission on.
  const bool submitter = side == StepIoRendezvous::Side::kLauncher && step == "batch";
  Reply r = Call([&](Txn&, Reply* out) {
    state_thread.AssertHeld();  // a command: on the state thread
    const JobRecord* found = OwnRecord(id);
    if (found == nullptr || cs->FindJob(id) == nullptr) {
      out->status = Status::NotFound("Invalid job id specified: " + std::to_string(id));
      return;
    }
    const JobRecord& rec = *found;
    out->status = MayStep(who, rec);
    if (out->status.ok() && !submitter && !StepsMayRun(cs->FindJob(id), rec.job.restart_count)) {
      out->status = Status::FailedPrecondition("job " + std::to_string(id) + " is not running");
    }
  });
  if (!r.status.ok()) return Error(r.status);
  const std::string key = std::to_string(id) + "." + step + "/" + node;
  if (Status may = step_io.MayJoin(key, side); !may.ok()) return Error(may);
  net::HttpResponse resp;
  resp.status = 101;
  resp.headers = {{"Upgrade", "berth-step-io"}};
  resp.upgrade = [this, key, side, wait_ms](net::UpgradedConnection& conn) {
    (void)step_io.Serve(key, side, conn.fd, std::move(conn.already_read), wait_ms, *conn.stopping);
  };
  return resp;
}

}  // namespace berth::controller
