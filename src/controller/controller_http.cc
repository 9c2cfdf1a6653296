// The controller's REST API (docs/api.md): routing, identity, and the read-only endpoints, which
// read the published view and never wait for the state thread.
#include <malloc.h>
#include <pwd.h>

#include <algorithm>
#include <cctype>
#include <charconv>
#include <ctime>
#include <set>
#include <sstream>

#include "api/errors.h"
#include "api/job_json.h"
#include "controller/controller_internal.h"
#include "net/munge_cred.h"

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

std::optional<core::JobId> ParseId(std::string_view s) {
  core::JobId id = 0;
  auto [p, ec] = std::from_chars(s.data(), s.data() + s.size(), id);
  if (ec != std::errc() || p != s.data() + s.size() || id == 0) return std::nullopt;
  return id;
}

namespace {

std::vector<std::string> Split(std::string_view path) {
  std::vector<std::string> parts;
  size_t i = 0;
  while (i < path.size()) {
    size_t j = path.find('/', i);
    if (j == std::string_view::npos) j = path.size();
    if (j > i) parts.emplace_back(path.substr(i, j - i));
    i = j + 1;
  }
  return parts;
}

// A job's record with how to run it. The script and the environment can hold secrets: only the
// job's owner and operators see them (as only they may `scontrol write batch_script`).
json JobForCaller(const Caller& who, const JobRecord& r) {
  json v = EncodeJobRecord(r, true);
  if (!(who.admin || (who.known && who.uid == r.job.spec.uid)) && v.contains("request")) {
    v["request"].erase("script");
    v["request"].erase("environment");
  }
  return v;
}

template <typename T>
bool ParseNumber(const std::string& s, T& out) {
  auto [p, ec] = std::from_chars(s.data(), s.data() + s.size(), out);
  return ec == std::errc() && p == s.data() + s.size();
}

std::vector<std::string> CommaList(const std::string& s) {
  std::vector<std::string> out;
  std::stringstream ss(s);
  std::string item;
  while (std::getline(ss, item, ',')) {
    if (!item.empty()) out.push_back(item);
  }
  return out;
}

Result<json> ParseBody(const net::HttpRequest& req) {
  if (req.body.empty()) return json::object();
  try {
    return json::parse(req.body);
  } catch (const std::exception& e) {
    return Status::InvalidArgument(std::string("the request body is not JSON: ") + e.what());
  }
}

std::string UserName(uint32_t uid) {
  struct passwd pw, *found = nullptr;
  char buf[4096];
  if (getpwuid_r(uid, &pw, buf, sizeof(buf), &found) == 0 && found) return found->pw_name;
  return std::to_string(uid);
}

// Does a record pass GET /v1/jobs's filters?
struct JobFilter {
  std::vector<std::string> users, states, partitions;
  std::vector<core::JobId> ids;
  core::JobId array = 0;
  bool all = false;  // include ended jobs still in the live view

  bool Match(const JobRecord& r) const {
    const core::Job& j = r.job;
    if (!all && core::IsTerminal(j.state) && states.empty() && ids.empty()) return false;
    if (!users.empty() && std::find(users.begin(), users.end(), j.spec.user) == users.end()) {
      return false;
    }
    if (!states.empty()) {
      bool ok = false;
      for (const std::string& s : states) {
        std::optional<core::JobState> st = core::ParseJobState(s);
        ok = ok || (st && *st == j.state);
      }
      if (!ok) return false;
    }
    if (!partitions.empty()) {
      bool ok = false;
      for (const std::string& p : partitions) {
        ok = ok || j.partition == p ||
             std::find(j.spec.partitions.begin(), j.spec.partitions.end(), p) !=
                 j.spec.partitions.end();
      }
      if (!ok) return false;
    }
    if (!ids.empty() && std::find(ids.begin(), ids.end(), j.id) == ids.end() &&
        std::find(ids.begin(), ids.end(), j.array_job_id) == ids.end()) {
      return false;
    }
    if (array != 0 && j.array_job_id != array) return false;
    return true;
  }
};

// What a record says of its priority, reason and expected start, with the last pass's word on
// a pending job over the record's own. A job submitted held since that pass is reported held at
// once, as squeue does after `sbatch -H`.
struct SchedulerWord {
  int64_t priority = 0;
  bool has_reason = false;  // false: no "reason" and "reason_detail" keys
  core::PendingReason reason = core::PendingReason::kNone;
  const std::string* detail = nullptr;
  Time expected_start = kNoTime;
};

SchedulerWord WordOf(const JobRecord& r, const std::unordered_map<core::JobId, PendingView>& view) {
  static const std::string kHeldUser = "held by its user", kHeldAdmin = "held by an operator";
  SchedulerWord w{r.priority, r.reason != core::PendingReason::kNone, r.reason, &r.reason_detail,
                  r.expected_start};
  if (r.job.state != core::JobState::kPending) return w;
  if (auto it = view.find(r.job.id); it != view.end()) {
    w.has_reason = true;
    w.reason = it->second.reason;
    w.detail = &it->second.detail;
    if (it->second.expected_start != kNoTime) w.expected_start = it->second.expected_start;
    w.priority = it->second.priority;
  } else if (r.job.spec.hold != core::HoldKind::kNone) {
    const bool user = r.job.spec.hold == core::HoldKind::kUser;
    w.has_reason = true;
    w.reason = user ? core::PendingReason::kJobHeldUser : core::PendingReason::kJobHeldAdmin;
    w.detail = user ? &kHeldUser : &kHeldAdmin;
  }
  return w;
}

// Sets the scheduler's word in a record's JSON (EncodeJobRecord's).
void AddPendingView(const JobRecord& r, const std::unordered_map<core::JobId, PendingView>& view,
                    json& v) {
  const SchedulerWord w = WordOf(r, view);
  v["priority"] = w.priority;
  if (w.has_reason) {
    v["reason"] = std::string(core::PendingReasonName(w.reason));
    v["reason_detail"] = *w.detail;
  }
  if (w.expected_start != kNoTime) v["expected_start"] = w.expected_start;
}

// The list form of a record: its cached text, then the scheduler's word, as text.
void AppendListJson(const JobRecord& r, const std::unordered_map<core::JobId, PendingView>& view,
                    std::string& out) {
  out += r.ListJsonPrefix();
  const SchedulerWord w = WordOf(r, view);
  out += ",\"priority\":";
  out += std::to_string(w.priority);
  if (w.has_reason) {
    out += ",\"reason\":\"";
    out += core::PendingReasonName(w.reason);  // names need no escaping
    out += "\",\"reason_detail\":";
    out += json(*w.detail).dump();
  }
  if (w.expected_start != kNoTime) {
    out += ",\"expected_start\":";
    out += std::to_string(w.expected_start);
  }
  out += '}';
}

}  // namespace

net::HttpResponse Unauthorized(const std::string& message) {
  net::HttpResponse r =
      JsonResponse(401, {{"error", {{"code", "UNAUTHENTICATED"}, {"message", message}}}});
  r.headers.emplace_back("WWW-Authenticate", "Bearer realm=\"berth\"");
  return r;
}

std::optional<std::string_view> BearerToken(const net::HttpRequest& req) {
  static constexpr std::string_view kScheme = "bearer ";
  auto it = req.headers.find("authorization");
  if (it == req.headers.end() || it->second.size() <= kScheme.size()) return std::nullopt;
  std::string_view auth = it->second;
  for (size_t i = 0; i < kScheme.size(); ++i) {
    if (std::tolower(static_cast<unsigned char>(auth[i])) != kScheme[i]) return std::nullopt;
  }
  return auth.substr(kScheme.size());
}

Caller Controller::Impl::Identify(const net::HttpRequest& req) const {
  if (!req.peer) return Caller{};  // plain TCP: nobody (TLS callers come through ServeAs)
  Caller c;
  c.known = true;
  c.uid = req.peer->uid;
  c.gid = req.peer->gid;
  c.user = UserName(c.uid);
  c.admin = IsAdmin(c);
  return c;
}

bool Controller::Impl::IsAdmin(const Caller& c) const {
  return c.uid == 0 || c.uid == own_uid ||
         std::find(opt.operators.begin(), opt.operators.end(), c.user) != opt.operators.end();
}

Caller Controller::Impl::UserCaller(uint32_t uid) const {
  Caller who;
  who.known = true;
  who.uid = uid;
  struct passwd pw, *found = nullptr;
  char buf[4096];
  bool ok = getpwuid_r(uid, &pw, buf, sizeof(buf), &found) == 0 && found;
  who.user = ok ? found->pw_name : std::to_string(uid);
  who.gid = ok ? found->pw_gid : uid;
  who.admin = IsAdmin(who);
  return who;
}

std::optional<Caller> Controller::Impl::IdentifyMunge(const net::HttpRequest& req) const {
  std::string auth = req.Header("authorization");
  if (auth.size() <= 6 ||
      !(auth.compare(0, 6, "Munge ") == 0 || auth.compare(0, 6, "munge ") == 0)) {
    return std::nullopt;
  }
  const std::string cred = auth.substr(6);
  constexpr int64_t kTtlSeconds = 300;  // munge's default time-to-live
  const int64_t now = static_cast<int64_t>(::time(nullptr));
  {
    std::lock_guard<std::mutex> l(munge_mu);
    if (auto it = munge_seen.find(cred); it != munge_seen.end() && it->second.second > now) {
      return UserCaller(it->second.first);
    }
  }
  Result<net::MungeIdentity> id = net::MungeDecode(cred, opt.munge_socket);
  if (!id.ok()) {
    if (id.status().code() != StatusCode::kPermissionDenied) {
      std::fprintf(stderr, "berth controller: %s\n", id.status().message().c_str());
    }
    return std::nullopt;
  }
  std::lock_guard<std::mutex> l(munge_mu);
  if (munge_seen.size() >= 10000) {
    std::erase_if(munge_seen, [&](const auto& e) { return e.second.second <= now; });
    if (munge_seen.size() >= 10000) munge_seen.clear();
  }
  munge_seen[cred] = {id->uid, now + kTtlSeconds};
  return UserCaller(id->uid);
}

std::optional<Caller> Controller::Impl::IdentifyToken(const net::HttpRequest& req) const {
  if (std::optional<Caller> munge = IdentifyMunge(req)) return munge;
  if (!k8s || !k8s->signer) return std::nullopt;
  std::optional<std::string_view> bearer = BearerToken(req);
  if (!bearer) return std::nullopt;
  std::string_view token = *bearer;
  if (std::optional<uint32_t> uid = k8s->signer->Verify(token)) return UserCaller(*uid);
  Caller c;
  c.uid = UINT32_MAX;  // owns nothing
  c.gid = UINT32_MAX;
  if (std::optional<std::string> node = k8s->signer->VerifyNode(token)) {
    c.agent_node = *node;
    c.user = "node:" + *node;
    return c;
  }
  if (std::optional<std::pair<uint32_t, int32_t>> job = k8s->signer->VerifyJob(token)) {
    c.step_job = job->first;
    c.step_attempt = job->second;
    c.user = "job:" + std::to_string(job->first);
    return c;
  }
  if (k8s->signer->VerifyJoin(token)) {
    c.join_token = true;
    c.user = "join-token";
    return c;
  }
  return std::nullopt;
}

net::HttpResponse Controller::Impl::Serve(const net::HttpRequest& req) {
  // Plain TCP: a MUNGE credential names its user (as Slurm's daemons accept them); a bearer token
  // is not taken here, where anyone on the path could read and reuse it.
  if (!req.peer && !req.Header("authorization").empty()) {
    if (std::optional<Caller> munge = IdentifyMunge(req)) return ServeAs(req, *munge);
  }
  return ServeAs(req, Identify(req));
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
  // A large request (a batch of jobs) leaves its parsed tree's memory free but kept in this
  // connection thread's malloc arena, where no other thread reuses it: hand it back, so that the
  // controller's memory is what it holds. Rare and cheap next to parsing a megabyte.
  constexpr size_t kTrimAfterBytes = 256 << 10;
  if (req.body.size() >= kTrimAfterBytes) malloc_trim(0);
  return out;
}

net::HttpResponse Controller::Impl::Route(const net::HttpRequest& req, const Caller& who) {
  std::vector<std::string> p = Split(req.path);
  const std::string& m = req.method;
  if (p.size() == 1 && p[0] == "healthz") return JsonResponse(200, {{"status", "ok"}});
  if (p.size() == 1 && p[0] == "readyz") {
    return ready ? JsonResponse(200, {{"status", "ready"}})
                 : Error(Status::Unavailable("not ready"));
  }
  if (p.size() == 1 && p[0] == "metrics" && m == "GET") {
    return MetricsResponse(
        {view_mu, records, pending_view, node_view, partition_view, last_pass, passes, metrics});
  }
  if (p.empty() || p[0] != "v1") return Error(Status::NotFound("no such endpoint: " + req.path));
  if (!who.known && who.agent_node.empty() && !who.join_token && who.step_job == 0) {
    return Unauthorized(
        "authentication required: use the Unix socket, or HTTPS with a bearer token (berth token)");
  }
  // A node's credential is good for its own agent endpoints only; the join token for joining.
  const bool joining = p.size() == 3 && p[1] == "agents" && p[2] == "join";
  if (who.join_token && !(joining && m == "POST")) {
    return Error(
        Status::PermissionDenied("the join token may only join a node (POST /v1/agents/join)"));
  }
  if (!who.agent_node.empty() && !(p.size() >= 3 && p[1] == "agents" && !joining &&
                                   (p[2] == "register" || p[2] == who.agent_node))) {
    return Error(Status::PermissionDenied("a node credential acts for its node's agent only"));
  }
  if (who.step_job != 0 &&
      !(p.size() >= 4 && p[1] == "jobs" && p[3] == "steps" && ParseId(p[2]) == who.step_job)) {
    return Error(Status::PermissionDenied("a job's step token may only act on its steps (" +
                                          std::string("/v1/jobs/") + std::to_string(who.step_job) +
                                          "/steps)"));
  }
  Result<json> body = ParseBody(req);
  if (!body.ok()) return Error(body.status());
  if (joining && m == "POST") {
    Result<json> r = JoinNode(who, *body, req.remote);
    return r.ok() ? JsonResponse(200, *r) : Error(r.status());
  }
  if (p.size() == 2 && p[1] == "tokens" && m == "POST") {
    Result<json> r = IssueToken(who, *body);
    return r.ok() ? JsonResponse(200, *r) : Error(r.status());
  }
  auto call = [&](std::function<void(Txn&, Reply*)> f, int ok_status) {
    Reply r = Call(std::move(f));
    if (!r.status.ok()) return Error(r.status);
    return JsonResponse(ok_status, r.body.is_null() ? json::object() : r.body);
  };
  // /v1/jobs
  if (p.size() >= 2 && p[1] == "jobs") {
    if (p.size() == 2 && m == "GET") return ListJobs(req, who);
    if (p.size() == 2 && m == "POST" && req.query.count("test_only") &&
        req.query.at("test_only") != "0") {
      json b = *body;
      Reply r = Call([this, who, b](Txn&, Reply* out) {
        Result<json> res = TestSubmit(who, b);
        if (res.ok()) {
          out->body = *res;
        } else {
          out->status = res.status();
        }
      });
      return r.status.ok() ? JsonResponse(200, r.body) : Error(r.status);
    }
    if (p.size() == 3 && p[2] == "cancel" && m == "POST") {
      if (!body->is_object() || !body->contains("ids") || !body->at("ids").is_array()) {
        return Error(Status::InvalidArgument("expected {\"ids\": [\"12\", \"13_4\", ...]}"));
      }
      if (body->contains("signal") && !body->at("signal").is_string()) {
        return Error(Status::InvalidArgument("\"signal\" must be a name or number as a string"));
      }
      const std::string sig = body->value("signal", "");
      if (!sig.empty() && api::SignalNumber(sig) == 0) {
        return Error(Status::InvalidArgument("Invalid signal specified: " + sig));
      }
      json b = *body;
      return call([this, who, b](Txn& t, Reply* out) { out->body = CancelMany(who, b, t); }, 200);
    }
    if (p.size() == 2 && m == "POST") {
      json b = *body;
      return call(
          [this, who, b](Txn& t, Reply* out) {
            Result<std::vector<core::JobId>> ids = SubmitJobs(who, b, t);
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
    if (p.size() == 3 && m == "GET" && p[2].find('_') != std::string::npos) {
      return GetArrayTask(who, p[2]);
    }
    if (p.size() >= 4 && p[3] == "steps") return StepRoute(req, who, p, *body);
    static const std::set<std::string> kActions = {"cancel", "signal", "hold", "release",
                                                   "requeue"};
    const bool known_action = (p.size() == 3 && (m == "GET" || m == "DELETE" || m == "PATCH")) ||
                              (p.size() == 4 && m == "POST" && kActions.count(p[3]));
    if (p.size() >= 3 && !known_action) {
      return Error(Status::NotFound("no such endpoint: " + m + " " + req.path));
    }
    if (p.size() >= 3 && p[2].find('_') != std::string::npos) {
      // An array task: resolved (split off its array while pending) on the state thread, then
      // the same action as for a job id.
      net::HttpRequest by_id = req;
      std::string text = p[2];
      Reply r = Call([this, who, text](Txn& t, Reply* out) {
        Result<core::JobId> id = ResolveJobId(who, text, t);
        if (id.ok()) {
          out->body = *id;
        } else {
          out->status = id.status();
        }
      });
      if (!r.status.ok()) return Error(r.status);
      by_id.path = "/v1/jobs/" + std::to_string(r.body.get<core::JobId>());
      for (size_t i = 3; i < p.size(); ++i) by_id.path += "/" + p[i];
      return Route(by_id, who);
    }
    std::optional<core::JobId> id = p.size() >= 3 ? ParseId(p[2]) : std::nullopt;
    if (!id) return Error(Status::InvalidArgument("Invalid job id specified: " + req.path));
    if (p.size() == 3 && m == "GET") return GetJob(who, *id);
    std::string action = p.size() == 4 ? p[3] : (m == "DELETE" ? "cancel" : "");
    if (p.size() == 3 && m == "PATCH") action = "update";
    int sig = 0;
    bool batch_only = false;
    if (action == "signal") {
      sig = api::SignalNumber(
          body->value("signal", req.query.count("signal") ? req.query.at("signal") : ""));
      batch_only = body->value("batch_only", false);
      if (sig == 0) return Error(Status::InvalidArgument("Invalid signal specified"));
    }
    if (action == "cancel" && req.query.count("signal")) {
      sig = api::SignalNumber(req.query.at("signal"));
      if (sig == 0) return Error(Status::InvalidArgument("Invalid signal specified"));
    }
    json b = *body;
    core::JobId jid = *id;
    if (action == "cancel" || action == "signal") {
      return call(
          [=, this](Txn& t, Reply* out) { out->status = CancelJob(who, jid, sig, batch_only, t); },
          200);
    }
    if (action == "hold" || action == "release") {
      bool admin = b.value("admin", false);
      return call(
          [=, this](Txn& t, Reply* out) {
            out->status = HoldJob(who, jid, action == "hold", admin, t);
          },
          200);
    }
    if (action == "requeue") {
      return call([=, this](Txn& t, Reply* out) { out->status = RequeueJob(who, jid, t); }, 200);
    }
    if (action == "update") {
      return call([=, this](Txn& t, Reply* out) { out->status = UpdateJob(who, jid, b, t); }, 200);
    }
    return Error(Status::NotFound("no such endpoint: " + m + " " + req.path));
  }
  if (p.size() >= 2 && p[1] == "nodes") {
    if (p.size() == 2 && m == "GET") return ListNodes("");
    if (p.size() == 3 && m == "GET") return ListNodes(p[2]);
    if (p.size() == 4 && m == "POST") {
      std::string name = p[2], action = p[3], reason = body->value("reason", "");
      return call(
          [=, this](Txn& t, Reply* out) { out->status = NodeAction(who, name, action, reason, t); },
          200);
    }
  }
  if (p.size() == 2 && p[1] == "power" && m == "GET") return JsonResponse(200, PowerView());
  if (p.size() == 2 && p[1] == "partitions" && m == "GET") {
    std::shared_lock<std::shared_mutex> l(view_mu);
    return JsonResponse(200, {{"partitions", *partition_view}});
  }
  if (p.size() == 2 && p[1] == "watch" && m == "GET") return Watch(req);
  if (p.size() == 2 && p[1] == "priorities" && m == "GET") {
    Reply r = Call([this](Txn&, Reply* out) { out->body = PriorityView(); });
    return r.status.ok() ? JsonResponse(200, r.body) : Error(r.status);
  }
  if (p.size() == 2 && p[1] == "config" && m == "GET") return ConfigView();
  if (p.size() == 2 && p[1] == "kubeconfig" && m == "GET") return Kubeconfig(who);
  if (p.size() == 3 && p[1] == "accounting" && p[2] == "jobs" && m == "GET") {
    return Accounting(req);
  }
  if (p.size() == 2 && p[1] == "stats" && m == "GET") {
    store::StoreStats s = store->stats();
    return JsonResponse(
        200,
        {{"passes", passes.load()}, {"store_commits", s.commits}, {"store_batches", s.batches}});
  }
  if (p.size() >= 3 && p[1] == "agents") return AgentRoute(req, who, p, *body);
  return Error(Status::NotFound("no such endpoint: " + m + " " + req.path));
}

net::HttpResponse Controller::Impl::AgentRoute(const net::HttpRequest& req, const Caller& who,
                                               const std::vector<std::string>& p,
                                               const json& body) {
  if (!who.admin && who.agent_node.empty()) {
    return Error(
        Status::PermissionDenied("only root or a node's credential may act as a node agent"));
  }
  if (p.size() == 3 && p[2] == "register" && req.method == "POST") {
    Reply r = Call([=, this](Txn& t, Reply* out) {
      Result<json> res = RegisterAgent(who, body, t);
      if (res.ok()) {
        out->body = *res;
      } else {
        out->status = res.status();
      }
    });
    return r.status.ok() ? JsonResponse(200, r.body) : Error(r.status);
  }
  const std::string& node = p[2];
  if (p.size() == 4 && p[3] == "commands" && req.method == "GET") {
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
    for (auto& [seq, text] : agent_hub.Poll(node, after, wait_ms)) {
      json c = json::parse(text);
      c["seq"] = seq;
      if (c.value("kind", "") == "launch") {
        // A launch is delivered only while its attempt is still meant to run.
        std::shared_ptr<const JobRecord> r = FindRecord(c.value("job_id", 0u));
        if (!r || !core::HoldsResources(r->job.state) ||
            r->job.restart_count != c.value("attempt", -1) || r->cancel_requested) {
          c = {{"kind", "noop"}, {"seq", seq}};
        }
      }
      cmds.push_back(std::move(c));
    }
    return JsonResponse(200, {{"commands", cmds}});
  }
  if (p.size() == 4 && p[3] == "status" && req.method == "POST") {
    Reply r =
        Call([=, this](Txn& t, Reply* out) { out->status = AgentStatus(who, node, body, t); });
    return r.status.ok() ? JsonResponse(200, json::object()) : Error(r.status);
  }
  return Error(Status::NotFound("no such endpoint: " + req.path));
}

net::HttpResponse Controller::Impl::ListJobs(const net::HttpRequest& req, const Caller& who) {
  JobFilter f;
  auto q = [&](const char* k) { return req.query.count(k) ? req.query.at(k) : std::string(); };
  f.users = CommaList(q("user"));
  f.states = CommaList(q("state"));
  f.partitions = CommaList(q("partition"));
  for (const std::string& s : CommaList(q("ids"))) {
    if (std::optional<core::JobId> id = ParseId(s.substr(0, s.find('_')))) f.ids.push_back(*id);
  }
  if (!q("array").empty()) f.array = ParseId(q("array")).value_or(0);
  f.all = q("all") == "1" || q("all") == "true";
  const bool with_exec = q("exec") == "1" || q("exec") == "true";
  net::HttpResponse out;
  std::string& body = out.body;
  body = "{\"jobs\":[";
  {
    std::shared_lock<std::shared_mutex> l(view_mu);
    bool first = true;
    for (const auto& [id, r] : records) {
      if (!f.Match(*r)) continue;
      if (!first) body += ',';
      first = false;
      if (!with_exec) {
        AppendListJson(*r, *pending_view, body);
        continue;
      }
      json v = JobForCaller(who, *r);
      AddPendingView(*r, *pending_view, v);
      body += v.dump();
    }
  }
  body += "]}\n";
  return out;
}

net::HttpResponse Controller::Impl::GetJob(const Caller& who, core::JobId id) {
  std::shared_lock<std::shared_mutex> l(view_mu);
  auto it = records.find(id);
  if (it == records.end()) {
    l.unlock();
    Result<std::optional<store::JobRow>> row = store->GetJob(id);
    if (row.ok() && row->has_value()) {
      Result<JobRecord> r = DecodeJobRecord((*row)->record);
      if (r.ok()) return JsonResponse(200, JobForCaller(who, *r));
    }
    return Error(Status::NotFound("Invalid job id specified: " + std::to_string(id)));
  }
  json v = JobForCaller(who, *it->second);
  AddPendingView(*it->second, *pending_view, v);
  return JsonResponse(200, v);
}

net::HttpResponse Controller::Impl::GetArrayTask(const Caller& who, const std::string& text) {
  size_t underscore = text.find('_');
  std::optional<core::JobId> array = ParseId(text.substr(0, underscore));
  int32_t task = -1;
  std::string task_text = text.substr(underscore + 1);
  if (!array || !ParseNumber(task_text, task) || task < 0) {
    return Error(Status::InvalidArgument("Invalid job id specified: " + text));
  }
  std::shared_lock<std::shared_mutex> l(view_mu);
  const JobRecord* master = nullptr;
  for (auto it = records.lower_bound(*array); it != records.end(); ++it) {
    const core::Job& j = it->second->job;
    if (j.array_job_id != *array) continue;
    if (j.array_task_id == task) {
      json v = JobForCaller(who, *it->second);
      AddPendingView(*it->second, *pending_view, v);
      return JsonResponse(200, v);
    }
    if (j.is_array_master()) master = it->second.get();
  }
  // Still pending inside the array's own record: that record stands for the task.
  if (master != nullptr) {
    const std::vector<int32_t>& ids = master->job.spec.array.task_ids;
    if (std::find(ids.begin(), ids.end(), task) != ids.end()) {
      json v = JobForCaller(who, *master);
      AddPendingView(*master, *pending_view, v);
      return JsonResponse(200, v);
    }
  }
  return Error(Status::NotFound("Invalid job id specified: " + text));
}

net::HttpResponse Controller::Impl::ListNodes(const std::string& only) {
  std::shared_ptr<const std::vector<NodeView>> nodes;
  {
    std::shared_lock<std::shared_mutex> l(view_mu);
    nodes = node_view;
  }
  json out = json::array();
  for (const NodeView& n : *nodes) {
    if (!only.empty() && n.name != only) continue;
    json gres = json::object();
    for (const core::NamedCount& g : n.spec.gres) gres[g.name] = g.count;
    out.push_back({{"name", n.name},
                   {"state", n.state},
                   {"reason", n.reason},
                   {"reason_time", n.reason_time},
                   {"reason_user", n.reason_user},
                   {"cpus", n.spec.cpus},
                   {"alloc_cpus", n.alloc_cpus},
                   {"mem_mib", n.spec.mem_mib},
                   {"alloc_mem_mib", n.alloc_mem_mib},
                   {"gpus", n.spec.gpus},
                   {"alloc_gpus", n.alloc_gpus},
                   {"gres", gres},
                   {"features", n.spec.features},
                   {"partitions", n.partitions},
                   {"jobs", n.jobs},
                   {"weight", n.spec.weight},
                   {"sockets", n.spec.sockets},
                   {"cores_per_socket", n.spec.cores_per_socket},
                   {"threads_per_core", n.spec.threads_per_core},
                   {"last_seen", n.last_seen},
                   {"agent_connected", n.agent_connected}});
  }
  if (!only.empty()) {
    if (out.empty()) return Error(Status::NotFound("Invalid node name specified: " + only));
    return JsonResponse(200, out.front());
  }
  return JsonResponse(200, {{"nodes", out}});
}

net::HttpResponse Controller::Impl::Watch(const net::HttpRequest& req) {
  std::string kinds = req.query.count("kinds") ? req.query.at("kinds") : "";
  net::HttpResponse r;
  r.content_type = "application/x-ndjson";
  // kinds=node... keeps node events, any other value job events (docs/api.md).
  const std::string needle =
      kinds.empty() ? ""
                    : std::string("\"type\":\"") + (kinds.rfind("node", 0) == 0 ? "node" : "job");
  r.stream = [this, needle](net::ResponseStream& out) {
    uint64_t next = watch_hub.Next();
    if (!out.Write("{\"type\":\"hello\"}\n")) return;
    while (!out.Closed()) {
      bool lost = false;
      WatchBatch events = watch_hub.Read(next, 1000, &next, &lost);
      if (lost && !out.Write("{\"type\":\"lost\"}\n")) return;
      if (events.empty()) {
        if (!ready || !out.Write("\n")) return;  // a keep-alive line
        continue;
      }
      std::string chunk;
      for (const std::string& e : events) {
        if (!needle.empty() && e.find(needle) == std::string::npos) continue;
        chunk += e;
        chunk += '\n';
      }
      if (!chunk.empty() && !out.Write(chunk)) return;
    }
  };
  return r;
}

net::HttpResponse Controller::Impl::Accounting(const net::HttpRequest& req) {
  auto q = [&](const char* k) { return req.query.count(k) ? req.query.at(k) : std::string(); };
  Time from = 0, to = kInfinite;
  if (!q("start").empty() && !ParseNumber(q("start"), from)) {
    return Error(Status::InvalidArgument("\"start\" must be a Unix time in seconds"));
  }
  if (!q("end").empty() && !ParseNumber(q("end"), to)) {
    return Error(Status::InvalidArgument("\"end\" must be a Unix time in seconds"));
  }
  std::vector<std::string> users = CommaList(q("user"));
  json jobs = json::array();
  auto add = [&](const JobRecord& r) {
    if (!users.empty() && std::find(users.begin(), users.end(), r.job.spec.user) == users.end()) {
      return;
    }
    jobs.push_back(EncodeJobRecord(r, false));
  };
  Status st = store->ScanFinished(from, to, [&](const store::JobRow& row) {
    Result<JobRecord> r = DecodeJobRecord(row.record);
    if (r.ok()) add(*r);
  });
  if (!st.ok()) return Error(st);
  std::shared_lock<std::shared_mutex> l(view_mu);
  for (const auto& [id, r] : records) {
    if (!core::IsTerminal(r->job.state)) add(*r);
  }
  return JsonResponse(200, {{"jobs", jobs}});
}

}  // namespace berth::controller
