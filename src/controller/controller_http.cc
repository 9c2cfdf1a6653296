// The controller's REST API (docs/api.md): serving a request (who asks, the route table's word on
// it, the body) and the /v1 handlers that change state, each a command for the state thread fed
// a typed request (requests.h). The read-only endpoints are in controller_queries.cc.

#include "api/errors.h"
#include "api/job_json.h"
#include "controller/controller_internal.h"
#include "controller/requests.h"
#include "controller/standby.h"
#include "web/ui.h"

namespace berth::controller {

using nlohmann::json;

net::HttpResponse JsonResponse(int status, const json& body) {
  net::HttpResponse r;
  r.status = status;
  r.body = body.dump();
  r.body += '\n';
  return r;
}

net::HttpResponse Error(const Status& st) {
  return JsonResponse(api::HttpStatusOf(st.code()), api::ErrorBody(st));
}

net::HttpResponse Unauthorized(const std::string& message) {
  net::HttpResponse r =
      JsonResponse(401, {{"error", {{"code", "UNAUTHENTICATED"}, {"message", message}}}});
  r.headers.emplace_back("WWW-Authenticate", "Bearer realm=\"berth\"");
  return r;
}

namespace {

Result<json> ParseBody(const net::HttpRequest& req) {
  if (req.body.empty()) return json::object();
  try {
    return json::parse(req.body);
  } catch (const std::exception& e) {
    return Status::InvalidArgument(std::string("the request body is not JSON: ") + e.what());
  }
}

net::HttpResponse ResultResponse(const Result<json>& r) {
  return r.ok() ? JsonResponse(200, *r) : Error(r.status());
}

}  // namespace

// Each endpoint's handler (in any order: Route looks an endpoint up).
const Controller::Impl::ApiBinding Controller::Impl::kApiHandlers[] = {
    {Endpoint::kHealthz,
     [](Impl&, const ApiCall&) { return JsonResponse(200, {{"status", "ok"}}); }},
    {Endpoint::kReadyz,
     [](Impl& im, const ApiCall&) {
       return im.ready ? JsonResponse(200, {{"status", "ready"}})
                       : Error(Status::Unavailable("not ready"));
     }},
    {Endpoint::kMetrics,
     [](Impl& im, const ApiCall&) {
       MetricsSources s{{}, nullptr, kNoTime, im.passes, im.metrics};
       {
         ReaderLock l(im.view_mu);
         s.jobs = CountJobs(im.records, *im.pending_view, *im.partition_view);
         s.node_view = im.node_view;
         s.last_pass = im.last_pass;
       }
       return MetricsResponse(s);
     }},
    {Endpoint::kJoinNode,
     [](Impl& im, const ApiCall& c) {
       return ResultResponse(im.JoinNode(DecodeJoin(c.body), c.req.remote));
     }},
    {Endpoint::kIssueToken,
     [](Impl& im, const ApiCall& c) {
       return ResultResponse(im.IssueToken(c.who, DecodeToken(c.body)));
     }},
    {Endpoint::kListJobs,
     [](Impl& im, const ApiCall& c) { return im.ListJobs(c.req, c.who); }},
    {Endpoint::kSqueueView,
     [](Impl& im, const ApiCall& c) { return im.SqueueView(c.body); }},
    {Endpoint::kScancelView,
     [](Impl& im, const ApiCall& c) { return im.ScancelView(c.body); }},
    {Endpoint::kSacctView,
     [](Impl& im, const ApiCall& c) { return im.SacctView(c.body); }},
    {Endpoint::kSubmitJobs,
     [](Impl& im, const ApiCall& c) { return im.SubmitRoute(c); }},
    {Endpoint::kJobsOther,
     [](Impl&, const ApiCall& c) {
       return Error(Status::InvalidArgument("Invalid job id specified: " + c.req.path));
     }},
    {Endpoint::kCancelJobs,
     [](Impl& im, const ApiCall& c) { return im.CancelManyRoute(c); }},
    {Endpoint::kGetJob,
     [](Impl& im, const ApiCall& c) {
       const std::string& id = c.match.Param("id");
       if (id.find('_') != std::string::npos) return im.GetArrayTask(c.who, id);
       std::optional<core::JobId> job = ParseId(id);
       if (!job) return Error(Status::InvalidArgument("Invalid job id specified: " + c.req.path));
       return im.GetJob(c.who, *job);
     }},
    {Endpoint::kJobSteps,
     [](Impl& im, const ApiCall& c) {
       return im.StepRoute(c.req, c.who, c.match.parts, c.body);
     }},
    {Endpoint::kJobAction,
     [](Impl& im, const ApiCall& c) { return im.JobActionRoute(c); }},
    {Endpoint::kListNodes,
     [](Impl& im, const ApiCall&) { return im.ListNodes(""); }},
    {Endpoint::kGetNode,
     [](Impl& im, const ApiCall& c) { return im.ListNodes(c.match.Param("node")); }},
    {Endpoint::kNodeAction,
     [](Impl& im, const ApiCall& c) { return im.NodeActionRoute(c); }},
    {Endpoint::kReservations,
     [](Impl& im, const ApiCall& c) { return im.ReservationsRoute(c); }},
    {Endpoint::kPower,
     [](Impl& im, const ApiCall&) { return JsonResponse(200, im.power->View()); }},
    {Endpoint::kPartitions,
     [](Impl& im, const ApiCall&) {
       std::shared_ptr<const nlohmann::json> partitions;
       {
         ReaderLock l(im.view_mu);
         partitions = im.partition_view;
       }
       return JsonResponse(200, {{"partitions", *partitions}});
     }},
    {Endpoint::kWatch,
     [](Impl& im, const ApiCall& c) { return im.Watch(c.req); }},
    {Endpoint::kPriorities,
     [](Impl& im, const ApiCall&) {
       return im.CallResponse(
           [&im](Txn&, Reply* out) {
             im.state_thread.AssertHeld();  // a command: on the state thread
             out->body = im.PriorityView();
           },
           200);
     }},
    {Endpoint::kFairshare,
     [](Impl& im, const ApiCall&) {
       return im.CallResponse(
           [&im](Txn&, Reply* out) {
             im.state_thread.AssertHeld();  // a command: on the state thread
             out->body = im.FairshareView();
           },
           200);
     }},
    {Endpoint::kJobUsage,
     [](Impl& im, const ApiCall&) { return JsonResponse(200, im.JobUsageView()); }},
    {Endpoint::kConfig,
     [](Impl& im, const ApiCall&) { return im.ConfigView(); }},
    {Endpoint::kKubeconfig,
     [](Impl& im, const ApiCall& c) { return im.Kubeconfig(c.who); }},
    {Endpoint::kAssociations,
     [](Impl& im, const ApiCall&) {
       return im.CallResponse(
           [&im](Txn&, Reply* out) {
             im.state_thread.AssertHeld();  // a command: on the state thread
             out->body = im.AssociationsView();
           },
           200);
     }},
    {Endpoint::kChangeAssociations,
     [](Impl& im, const ApiCall& c) { return im.AssociationsChangeRoute(c); }},
    {Endpoint::kAccounting,
     [](Impl& im, const ApiCall& c) { return im.Accounting(c.req); }},
    {Endpoint::kStats,
     [](Impl& im, const ApiCall&) {
       store::StoreStats s = im.store->stats();
       json out = {{"passes", im.passes.load()},
                   {"store_commits", s.commits},
                   {"store_batches", s.batches}};
       if (im.archiver) {
         ArchiverStats a = im.archiver->stats();
         out["archive"] = {{"where", im.archive->Describe()},
                           {"moved", a.moved},
                           {"rounds", a.rounds},
                           {"failures", a.failures},
                           {"error", a.last_error}};
       }
       return JsonResponse(200, out);
     }},
    {Endpoint::kGroup,
     [](Impl& im, const ApiCall&) {
       // The HA group (docs/ha.md); a controller alone says so.
       if (im.opt.group_status) return JsonResponse(200, im.opt.group_status());
       return JsonResponse(200, {{"mode", "single"}, {"store", im.store->Describe()}});
     }},
    {Endpoint::kImages,
     [](Impl& im, const ApiCall& c) {
       // Every node's image cache as its agent reported it, one entry per node and image;
       // ?node=NAME: that node's only.
       std::string only;
       if (auto it = c.req.query.find("node"); it != c.req.query.end()) only = it->second;
       nlohmann::json out = nlohmann::json::array();
       ReaderLock l(im.view_mu);
       for (const auto& [node, images] : im.node_images) {
         if (!only.empty() && node != only) continue;
         for (const nlohmann::json& image : images) {
           nlohmann::json e = image;
           e["node"] = node;
           out.push_back(std::move(e));
         }
       }
       return JsonResponse(200, {{"images", std::move(out)}});
     }},
    {Endpoint::kRegisterAgent,
     [](Impl& im, const ApiCall& c) {
       const Caller who = c.who;
       const json body = c.body;
       return im.CallResponse([&im, who, body](Txn& t, Reply* out) {
         im.state_thread.AssertHeld();  // a command: on the state thread
         Result<json> res = im.RegisterAgent(who, body, t);
         if (res.ok()) {
           out->body = *res;
         } else {
           out->status = res.status();
         }
       }, 200);
     }},
    {Endpoint::kAgentCommands,
     [](Impl& im, const ApiCall& c) { return im.AgentCommands(c); }},
    {Endpoint::kAgentStatus,
     [](Impl& im, const ApiCall& c) {
       const Caller who = c.who;
       const std::string node = c.match.Param("node");
       const json body = c.body;
       return im.CallResponse([&im, who, node, body](Txn& t, Reply* out) {
         im.state_thread.AssertHeld();  // a command: on the state thread
         out->status = im.AgentStatus(who, node, body, t);
       }, 200);
     }},
    {Endpoint::kAgentStream,
     [](Impl& im, const ApiCall& c) { return im.AgentStreamRoute(c); }},
    {Endpoint::kHistory,
     [](Impl& im, const ApiCall& c) { return im.HistoryRoute(c); }},
    {Endpoint::kWebCode,
     [](Impl& im, const ApiCall& c) { return im.WebCodeRoute(c); }},
    {Endpoint::kAgentOther,
     [](Impl&, const ApiCall& c) {
       return Error(Status::NotFound("no such endpoint: " + c.req.path));
     }},
    {Endpoint::kWhoami,
     [](Impl&, const ApiCall& c) {
       return JsonResponse(200, {{"user", c.who.user}, {"admin", c.who.admin}});
     }},
    {Endpoint::kUiPage,
     [](Impl&, const ApiCall& c) { return web::ServeAsset(c.req, c.match.Param("name")); }},
    {Endpoint::kUsageReport,
     [](Impl& im, const ApiCall& c) { return im.UsageReportRoute(c); }},
    {Endpoint::kAdviceReport,
     [](Impl& im, const ApiCall& c) { return im.AdviceReportRoute(c); }},
};

net::HttpResponse Controller::Impl::Serve(const net::HttpRequest& req) {
  // A deposed leader of an HA group (docs/ha.md) serves reads from its last state until it
  // rejoins as a standby; changes, readiness and its agents go to another member.
  if (opt.store.deposed && opt.store.deposed->load() && !ServedWhileDeposed(req)) {
    return DeposedAnswer();
  }
  // Plain TCP: a MUNGE credential names its user (as Slurm's daemons accept them); a bearer token
  // is not taken here, where anyone on the path could read and reuse it.
  if (!req.peer && !req.Header("authorization").empty()) {
    if (std::optional<Caller> munge = auth.IdentifyMunge(req)) return ServeAs(req, *munge);
  }
  return ServeAs(req, auth.Identify(req));
}

net::HttpResponse Controller::Impl::ServeAs(const net::HttpRequest& req, const Caller& who) {
  net::HttpResponse out;
  try {
    out = Route(req, who);
  } catch (const nlohmann::json::exception& e) {
    out = Error(Status::InvalidArgument(std::string("bad request: ") + e.what()));
  } catch (const std::exception& e) {
    out = Error(Status::Internal(std::string("internal error: ") + e.what()));
  }
  return out;
}

net::HttpResponse Controller::Impl::Route(const net::HttpRequest& req, const Caller& who) {
  const RouteMatch m = MatchRoute(ApiRoutes(), req.method, req.path, who);
  switch (m.verdict) {
    case Verdict::kOutsideApi:
      return Error(Status::NotFound("no such endpoint: " + req.path));
    case Verdict::kUnauthenticated:
      return Unauthorized(ScopeRefusal(who).message());
    case Verdict::kOutOfScope:
      return Error(ScopeRefusal(who));
    case Verdict::kAllowed:
    case Verdict::kRefused:
    case Verdict::kNoRoute:
      break;
  }
  // The routes open to nobody (health, readiness, metrics) read no body; a submission reads its
  // own (a batch's jobs are parsed one by one: SubmitRoute).
  Result<json> body = json::object();
  const bool reads_own_body = m.route != nullptr && m.route->endpoint == Endpoint::kSubmitJobs;
  if (!reads_own_body && (m.route == nullptr || !(m.route->allow & kAllowNobody))) {
    body = ParseBody(req);
  }
  if (!body.ok()) return Error(body.status());
  if (m.verdict == Verdict::kRefused) {
    return Error(Status::PermissionDenied(std::string(m.route->refusal)));
  }
  if (m.verdict == Verdict::kNoRoute) {
    return Error(Status::NotFound("no such endpoint: " + req.method + " " + req.path));
  }
  for (const ApiBinding& b : kApiHandlers) {
    if (b.endpoint == m.route->endpoint) return b.handler(*this, ApiCall{req, who, m, *body});
  }
  return Error(Status::Internal("no handler for the route " + std::string(m.route->pattern)));
}

net::HttpResponse Controller::Impl::CallResponse(std::function<void(Txn&, Reply*)> c,
                                                 int ok_status) {
  Reply r = Call(std::move(c));
  if (!r.status.ok()) return Error(r.status);
  if (!r.text.empty()) {
    net::HttpResponse out;
    out.status = ok_status;
    out.body = std::move(r.text);
    out.body += '\n';
    return out;
  }
  return JsonResponse(ok_status, r.body.is_null() ? json::object() : r.body);
}

net::HttpResponse Controller::Impl::SubmitRoute(const ApiCall& c) {
  const Caller who = c.who;
  if (auto it = c.req.query.find("test_only"); it != c.req.query.end() && it->second != "0") {
    Result<json> body = ParseBody(c.req);
    if (!body.ok()) return Error(body.status());
    Result<JobSubmission> job = DecodeTestSubmit(who, *body);
    if (!job.ok()) return Error(job.status());
    auto shared = std::make_shared<JobSubmission>(std::move(*job));
    Reply r = Call([this, shared](Txn&, Reply* out) {
      state_thread.AssertHeld();  // a command: on the state thread
      Result<json> res = TestSubmit(std::move(*shared));
      if (res.ok()) {
        out->body = *res;
      } else {
        out->status = res.status();
      }
    });
    return r.status.ok() ? JsonResponse(200, r.body) : Error(r.status);
  }
  std::optional<Result<SubmitRequest>> batch = DecodeSubmitText(who, c.req.body);
  if (!batch.has_value()) {  // one job, or a body to be refused as its tree says
    Result<json> body = ParseBody(c.req);
    if (!body.ok()) return Error(body.status());
    batch = DecodeSubmit(who, *body);
  }
  Result<SubmitRequest>& request = *batch;
  if (!request.ok()) return Error(request.status());
  auto shared = std::make_shared<SubmitRequest>(std::move(*request));
  return CallResponse(
      [this, shared](Txn& t, Reply* out) {
        state_thread.AssertHeld();  // a command: on the state thread
        Result<std::vector<core::JobId>> ids = SubmitJobs(std::move(*shared), t);
        if (!ids.ok()) {
          out->status = ids.status();
          return;
        }
        out->body = {{"job_ids", *ids}};
        if (ids->size() == 1) out->body["job_id"] = ids->front();
        metrics.submissions_slurm.fetch_add(ids->size(), std::memory_order_relaxed);
      },
      201);
}

net::HttpResponse Controller::Impl::CancelManyRoute(const ApiCall& c) {
  if (c.body.is_object() && c.body.contains("scancel")) return CancelSelectedRoute(c);
  Result<CancelManyRequest> request = DecodeCancelMany(c.body);
  if (!request.ok()) return Error(request.status());
  const Caller who = c.who;
  return CallResponse(
      [this, who, r = std::move(*request)](Txn& t, Reply* out) {
        state_thread.AssertHeld();  // a command: on the state thread
        out->text.reserve(16 + r.ids.size() * 16);
        JsonText w(&out->text);
        w.Open();
        CancelMany(who, r, /*failures_only=*/false, w, t);
        w.Close();
      },
      200);
}

net::HttpResponse Controller::Impl::CancelSelectedRoute(const ApiCall& c) {
  // {"scancel": {"args", "env", "uid"}}: the jobs that filtered scancel selects (as POST
  // /v1/views/scancel selects them), cancelled or signalled as its options say, in one request
  // (Slurm's scancel sends its filters to slurmctld the same way). The selection is made here,
  // from the records as they are, as a view is: a job that ends before the command runs is
  // reported as the cancel of an ended job is. The answer: {"errors": the selection's lines,
  // "exit_code": its code, "targets": [display ids] (with -v), "results": the failures only}.
  Result<slurm::ScancelOptions> o = ScancelOptionsOf(c.body.at("scancel"));
  if (!o.ok()) return Error(o.status());
  if (o->interactive) {  // scancel asks before each job: it sends the ids it was told
    return Error(Status::InvalidArgument("scancel: --interactive selects no jobs here"));
  }
  slurm::ScancelSelection sel = ScancelTargets(*o);
  CancelManyRequest request;
  request.signal = slurm::RequestSignal(*o);
  request.batch_only = o->batch;
  request.full = o->full;
  std::string head;  // the answer's keys before the results
  JsonText h(&head);
  WriteScancelSelection(sel, h);
  if (o->verbose > 0) {
    h.Key("targets");
    h.OpenArray();
    for (const slurm::ScancelTarget& t : sel.targets) {
      h.Next();
      h.String(t.display_id);
    }
    h.CloseArray();
  }
  for (slurm::ScancelTarget& t : sel.targets) {
    for (std::string& id : t.request_ids) request.ids.push_back(std::move(id));
  }
  const Caller who = c.who;
  return CallResponse(
      [this, who, r = std::move(request), head = std::move(head)](Txn& t, Reply* out) {
        state_thread.AssertHeld();  // a command: on the state thread
        out->text = "{" + head;
        JsonText w(&out->text);
        w.Next();  // the head has keys: the next one takes a comma
        CancelMany(who, r, /*failures_only=*/true, w, t);
        w.Close();
      },
      200);
}

net::HttpResponse Controller::Impl::JobActionRoute(const ApiCall& c) {
  const Caller who = c.who;
  const std::string text = c.match.Param("id");
  std::optional<core::JobId> id;
  if (text.find('_') != std::string::npos) {
    // An array task: resolved (split off its array while pending) on the state thread, then
    // the same action as for a job id.
    Reply r = Call([this, who, text](Txn& t, Reply* out) {
      state_thread.AssertHeld();  // a command: on the state thread
      Result<core::JobId> resolved = ResolveJobId(who, text, t);
      if (resolved.ok()) {
        out->body = *resolved;
      } else {
        out->status = resolved.status();
      }
    });
    if (!r.status.ok()) return Error(r.status);
    id = r.body.get<core::JobId>();
  } else {
    id = ParseId(text);
    if (!id) return Error(Status::InvalidArgument("Invalid job id specified: " + c.req.path));
  }
  const std::string action = c.match.parts.size() == 4 ? c.match.parts[3] : "";
  Result<JobActionRequest> request = DecodeJobAction(c.req.method, action, c.req.query, c.body);
  if (!request.ok()) return Error(request.status());
  return CallResponse(
      [this, who, jid = *id, r = std::move(*request)](Txn& t, Reply* out) {
        state_thread.AssertHeld();  // a command: on the state thread
        out->status = ApplyJobAction(who, jid, r, t);
      },
      200);
}

Status Controller::Impl::ApplyJobAction(const Caller& who, core::JobId id,
                                        const JobActionRequest& r, Txn& t) {
  switch (r.kind) {
    case JobActionKind::kCancel:
      return CancelJob(who, id, r.signal, {r.batch_only, r.full}, t);
    case JobActionKind::kHold:
    case JobActionKind::kRelease:
      return HoldJob(who, id, r.kind == JobActionKind::kHold, r.admin_hold, t);
    case JobActionKind::kRequeue:
      return RequeueJob(who, id, t);
    case JobActionKind::kUpdate:
      return UpdateJob(who, id, r.update, t);
  }
  return Status::Internal("unknown job action");
}

net::HttpResponse Controller::Impl::NodeActionRoute(const ApiCall& c) {
  Result<NodeActionRequest> request =
      DecodeNodeAction(c.match.Param("node"), c.match.Param("action"), c.body);
  if (!request.ok()) return Error(request.status());
  const Caller who = c.who;
  return CallResponse(
      [this, who, r = std::move(*request)](Txn& t, Reply* out) {
        state_thread.AssertHeld();  // a command: on the state thread
        out->status = NodeAction(who, r.node, r.action, r.reason, t);
      },
      200);
}

net::HttpResponse Controller::Impl::AgentCommands(const ApiCall& c) {
  const net::HttpRequest& req = c.req;
  uint64_t after = 0;
  int wait_ms = 20000;
  if (req.query.count("after") && !ParseNumber(req.query.at("after"), after)) {
    return Error(Status::InvalidArgument("\"after\" must be a number"));
  }
  if (req.query.count("wait_ms")) {
    int64_t ms = 0;
    if (!ParseNumber(req.query.at("wait_ms"), ms)) {
      return Error(Status::InvalidArgument("\"wait_ms\" must be a number"));
    }
    wait_ms = static_cast<int>(std::clamp<int64_t>(ms, 0, 60000));
  }
  json cmds = json::array();
  for (auto& [seq, text] : agent_hub.Poll(c.match.Param("node"), after, wait_ms)) {
    json cmd = json::parse(text);
    cmd["seq"] = seq;
    if (cmd.value("kind", "") == "launch") {
      // A launch is delivered only while its attempt still holds its resources. One whose job
      // was cancelled since is delivered all the same: the cancel queued after it stops it, and
      // the node reports the end the controller waits for (as a no-op, the job stayed RUNNING).
      std::shared_ptr<const JobRecord> r = FindRecord(cmd.value("job_id", 0u));
      if (!r || !core::HoldsResources(r->job.state) ||
          r->job.restart_count != cmd.value("attempt", -1)) {
        cmd = {{"kind", "noop"}, {"seq", seq}};
      }
    }
    cmds.push_back(std::move(cmd));
  }
  json reply = {{"commands", std::move(cmds)}};
  // An agent that has seen a later leader's epoch refuses these (docs/ha.md).
  if (opt.epoch > 0) reply["epoch"] = opt.epoch;
  return JsonResponse(200, reply);
}

}  // namespace berth::controller
