// The Kubernetes face's port over Controller::Impl (k8s_port.h), and the controller's wiring of
// the face: start, stop, and GET /v1/kubeconfig.
#include "controller/k8s_port.h"

#include <unistd.h>

#include <set>
#include <string_view>

#include "agent/output_path.h"
#include "controller/controller_internal.h"

namespace berth::controller {
namespace {

using nlohmann::json;

// The pending jobs' reasons (none before the first pass).
const PendingMap& PendingOf(const std::shared_ptr<const PendingMap>& pending) {
  static const PendingMap kNone;
  return pending ? *pending : kNone;
}

Caller CallerOf(const k8s::User& u) {
  Caller c;
  c.uid = u.uid;
  c.gid = u.gid;
  c.user = u.name;
  c.admin = u.admin;
  c.known = u.known;
  return c;
}

// What a Pod shows of a job's pending reason (`pending`: the pending jobs' reasons).
void PendingFacts(const JobRecord& r, const PendingMap& pending, k8s::PodFacts* f) {
  const core::Job& j = r.job;
  if (auto it = pending.find(j.id); it != pending.end()) {
    f->reason = std::string(core::PendingReasonName(it->second.reason));
    f->reason_detail = it->second.detail;
  } else if (j.spec->hold != core::HoldKind::kNone) {
    f->reason = "JobHeldUser";
  }
  // Its image could not be pulled last time (controller_agents.cc): waiting in kubelet's back-off.
  if (r.k8s && r.k8s->is_object() && r.k8s->contains("image_error")) {
    const json& e = (*r.k8s)["image_error"];
    const std::string why = e.value("reason", "");
    f->reason = why == "ErrImagePull" ? "ImagePullBackOff" : why;
    f->reason_detail = e.value("message", "");
  }
  if (j.spec->hold != core::HoldKind::kNone && r.k8s &&
      r.k8s->value("annotations", json::object()).value("berth.io/gang", "") == "true") {
    f->reason = "WaitingForGang";
    f->reason_detail = "the Job's pods start together, once all of them fit at once";
  }
}

// A job's record as the face sees it.
k8s::PodJob PodJobOf(const JobRecord& r, const PendingMap& pending) {
  const core::Job& j = r.job;
  k8s::PodJob p;
  p.id = j.id;
  p.uid = j.spec->uid;
  p.ended = core::IsTerminal(j.state);
  p.started = j.start_time != kNoTime && j.state != core::JobState::kPending;
  p.deleted = r.k8s_deleted > 0;
  p.meta = r.k8s;
  k8s::PodFacts& f = p.facts;
  f.job_id = j.id;
  f.state = std::string(core::JobStateName(j.state));
  if (j.state == core::JobState::kPending) PendingFacts(r, pending, &f);
  f.node = r.node_names.empty() ? "" : r.node_names.front();
  f.submit_time = j.spec->submit_time;
  f.start_time = j.start_time == kNoTime ? 0 : j.start_time;
  f.end_time = j.end_time == kNoTime ? 0 : j.end_time;
  f.exit_code = j.outcome.exit_code;
  f.term_signal = j.outcome.term_signal;
  f.restart_count = j.restart_count;
  f.message = r.run->message;
  f.user = j.spec->user;
  f.account = j.spec->account;
  f.partition = j.partition;
  f.job_name = j.spec->name;
  for (const core::NodeAllocation& a : j.alloc.nodes) {
    f.cpus += a.cpus;
    f.mem_mib += a.mem_mib;
    f.gpus += a.gpu_count();
  }
  if (j.alloc.nodes.empty()) {
    f.cpus = std::max(j.spec->cpus_per_task, 1) * std::max(j.spec->ntasks, 1);
    f.mem_mib = std::max<int64_t>(j.spec->mem_per_node_mib, 0);
    f.gpus = j.spec->gpus;
  }
  f.gpu_milli = j.spec->gpu_milli;
  f.time_limit = j.time_limit >= kInfinite ? 0 : j.time_limit;
  f.deleted_at = r.k8s_deleted;
  f.resource_version = std::to_string(r.event_seq + 1);
  // Containers mode: the image the node resolved, once it reported it (the k8s meta's
  // "image_id", "repo@sha256:...").
  if (r.k8s && r.k8s->is_object()) {
    auto id = r.k8s->find("image_id");
    if (id != r.k8s->end() && id->is_string()) f.image_id = id->get<std::string>();
    // The node's report of this attempt's pull (controller_agents.cc, "container" events).
    auto pull = r.k8s->find("image_pull");
    if (pull != r.k8s->end() && pull->is_object() &&
        pull->value("attempt", -1) == j.restart_count) {
      const std::string phase = pull->value("phase", "");
      f.image_pull = phase == "pulling"   ? "pulling"
                     : phase == "started" ? (pull->value("pulled", false) ? "pulled" : "present")
                                          : "";
      f.pull_seconds = pull->value("seconds", 0.0);
    }
  }
  f.meta = p.meta.get();
  return p;
}

// Whether a record is shown as a Pod in namespace `ns` ("" = all).
bool InNamespace(const JobRecord& r, const std::string& ns) {
  if (ns.empty()) return true;
  const bool slurm = !r.k8s;
  if (slurm != (ns == k8s::kSlurmNamespace)) return false;
  return slurm || r.k8s->value("namespace", "") == ns;
}

// berth.io/gang Jobs, all or nothing: the held jobs among `ids` are released together only when a
// trial pass on a copy of the cluster starts every one of them; the real pass right after this
// batch then makes the same decision. Returns how many it released.
size_t ReleaseGangIfItFits(const std::vector<uint32_t>& ids, const core::SchedulerConfig& config,
                           int64_t now, core::ClusterState* cs, Txn* t) {
  std::vector<core::JobId> held;
  for (uint32_t id : ids) {
    const core::Job* job = cs->FindJob(id);
    if (job && job->state == core::JobState::kPending && job->spec->hold != core::HoldKind::kNone) {
      held.push_back(job->id);
    }
  }
  if (held.empty()) return 0;
  core::ClusterState trial = *cs;
  for (core::JobId id : held) {
    if (!trial.Release(id, now).ok()) return 0;
  }
  std::set<core::JobId> starting;
  for (const core::PlannedStart& st : core::Schedule(trial, now, config).starts) {
    starting.insert(st.job);
  }
  for (core::JobId id : held) {
    if (!starting.count(id)) return 0;
  }
  for (core::JobId id : held) {
    (void)cs->Release(id, now);
    t->touched.insert(id);
  }
  return held.size();
}

}  // namespace

// The face's commands over one command's (or pass's) transaction. State thread only: it reads
// and replaces Impl's records as the state thread does (reads without view_mu, swaps under it).
// Its methods override StateOps's, so they cannot REQUIRE the role: each asserts it, since an Ops
// is made only by Run's command and OnPass, both on the state thread.
class K8sPort::Ops : public k8s::StateOps {
 public:
  Ops(Controller::Impl& im, Txn& t) : im_(im), t_(t) {}

  std::optional<k8s::PodJob> Job(uint32_t id) override {
    im_.state_thread.AssertHeld();
    const JobRecord* r = im_.OwnRecord(id);
    if (r == nullptr) return std::nullopt;
    std::shared_ptr<const PendingMap> pending;
    {
      ReaderLock l(im_.view_mu);
      pending = im_.pending_view;
    }
    return PodJobOf(*r, PendingOf(pending));
  }

  std::optional<k8s::PodOutcome> Outcome(uint32_t id) override {
    im_.state_thread.AssertHeld();
    const JobRecord* r = im_.OwnRecord(id);
    if (r == nullptr) return std::nullopt;
    const core::JobOutcome& o = r->job.outcome;
    return k8s::PodOutcome{std::string(core::JobStateName(r->job.state)),
                           o.term_signal > 0 ? 128 + o.term_signal : o.exit_code};
  }

  Result<uint32_t> SubmitPod(const k8s::User& who, const k8s::PodMapping& m) override {
    im_.state_thread.AssertHeld();
    BERTH_ASSIGN_OR_RETURN(std::vector<core::JobId> ids,
                           im_.SubmitJobs(CallerOf(who), m.request, t_));
    im_.metrics.submissions_kubernetes.fetch_add(1, std::memory_order_relaxed);
    const core::JobId id = ids.front();
    auto r = std::make_shared<JobRecord>(*im_.OwnRecord(id));
    json meta = m.meta;
    std::string log = r->job.exec ? r->job.exec->stdout_pattern : "";
    if (size_t at = log.find("%j"); at != std::string::npos) log.replace(at, 2, std::to_string(id));
    meta["log"] = log;
    r->k8s = std::make_shared<const json>(std::move(meta));
    im_.PutRecord(id, std::move(r));
    return id;
  }

  Status TestSubmitPod(const k8s::User& who, const k8s::PodMapping& m) override {
    im_.state_thread.AssertHeld();
    return im_.TestSubmit(CallerOf(who), m.request).status();
  }

  void DeletePod(uint32_t id) override;
  Status SetPodMeta(uint32_t id, const json& labels, const json& annotations) override;

  Result<std::string> NodeAction(const k8s::User& who, const std::string& node,
                                 const std::string& action, const std::string& reason) override {
    im_.state_thread.AssertHeld();
    BERTH_RETURN_IF_ERROR(im_.NodeAction(CallerOf(who), node, action, reason, t_));
    std::optional<uint32_t> index = im_.cs->FindNode(node);
    if (!index) return std::string();
    return std::string(core::NodeStateLongName(im_.cs->node(*index).state()));
  }

  void PutMeta(const std::string& key, const std::string& value) override {
    t_.writes.push_back({store::Write::Kind::kPutMeta, {}, key, value});
  }
  void DeleteMeta(const std::string& key) override {
    t_.writes.push_back({store::Write::Kind::kDeleteMeta, {}, key, ""});
  }

  size_t ReleaseGang(const std::vector<uint32_t>& ids) override {
    im_.state_thread.AssertHeld();
    size_t n = ReleaseGangIfItFits(ids, im_.scheduler->config(), im_.Now(), &*im_.cs, &t_);
    if (n > 0) im_.dirty = true;
    return n;
  }

 private:
  Controller::Impl& im_;
  Txn& t_;
};

void K8sPort::Ops::DeletePod(uint32_t id) {
  im_.state_thread.AssertHeld();
  const JobRecord* current = im_.OwnRecord(id);
  if (current == nullptr || current->k8s_deleted > 0) return;
  Caller op;
  op.known = true;
  op.admin = true;
  op.user = im_.own_user;
  op.uid = im_.own_uid;
  if (!core::IsTerminal(current->job.state)) (void)im_.CancelJob(op, id, 0, {}, t_);
  auto r = std::make_shared<JobRecord>(*im_.OwnRecord(id));  // as the cancel left it
  r->k8s_deleted = im_.Now();
  const bool ended = core::IsTerminal(r->job.state);
  if (ended) im_.WriteRecord(r, /*active=*/false, r->job.end_time, t_);
  im_.PutRecord(id, r);
  if (!ended) t_.touched.insert(id);  // written with the batch (the cancel's record change)
}

Status K8sPort::Ops::SetPodMeta(uint32_t id, const json& labels, const json& annotations) {
  im_.state_thread.AssertHeld();
  const JobRecord* current = im_.OwnRecord(id);
  if (current == nullptr || !current->k8s) return Status::NotFound("gone");
  auto rec = std::make_shared<JobRecord>(*current);
  json meta = *rec->k8s;
  meta["labels"] = labels;
  meta["annotations"] = annotations;
  rec->k8s = std::make_shared<const json>(std::move(meta));
  if (core::IsTerminal(rec->job.state)) {
    im_.WriteRecord(rec, false, rec->job.end_time, t_);
  } else {
    t_.touched.insert(id);
  }
  im_.PutRecord(id, std::move(rec));
  return Status::Ok();
}

namespace {

std::string Base64(std::string_view in) {
  static constexpr char kAlphabet[] =
      "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
  std::string out;
  out.reserve((in.size() + 2) / 3 * 4);
  for (size_t i = 0; i < in.size(); i += 3) {
    uint32_t v = static_cast<uint8_t>(in[i]) << 16;
    if (i + 1 < in.size()) v |= static_cast<uint8_t>(in[i + 1]) << 8;
    if (i + 2 < in.size()) v |= static_cast<uint8_t>(in[i + 2]);
    out += kAlphabet[(v >> 18) & 63];
    out += kAlphabet[(v >> 12) & 63];
    out += i + 1 < in.size() ? kAlphabet[(v >> 6) & 63] : '=';
    out += i + 2 < in.size() ? kAlphabet[v & 63] : '=';
  }
  return out;
}

}  // namespace

int64_t K8sPort::Now() const {
  return im_.Now();
}

uint64_t K8sPort::WatchNext() const {
  return im_.watch_hub.Next();
}

uint64_t K8sPort::WatchWait(uint64_t after, int wait_ms) {
  uint64_t next = after;
  bool lost = false;
  im_.watch_hub.Read(after, wait_ms, &next, &lost);
  return next;
}

std::vector<k8s::PodJob> K8sPort::PodJobsWhere(
    const std::function<bool(const JobRecord&)>& chosen_if) const {
  std::vector<std::shared_ptr<const JobRecord>> chosen;
  std::shared_ptr<const PendingMap> pending;
  {
    ReaderLock l(im_.view_mu);
    pending = im_.pending_view;
    for (const auto& [id, r] : im_.records) {
      if (chosen_if(*r)) chosen.push_back(r);
    }
  }
  std::vector<k8s::PodJob> out;
  out.reserve(chosen.size());
  for (const auto& r : chosen) out.push_back(PodJobOf(*r, PendingOf(pending)));
  return out;
}

std::vector<k8s::PodJob> K8sPort::PodJobs(const std::string& ns) const {
  return PodJobsWhere([&ns](const JobRecord& r) { return InNamespace(r, ns); });
}

std::vector<k8s::PodJob> K8sPort::FacePodJobs() const {
  return PodJobsWhere([](const JobRecord& r) { return r.k8s != nullptr; });
}

std::optional<k8s::PodJob> K8sPort::FindPodJob(uint32_t id) const {
  std::shared_ptr<const JobRecord> r;
  std::shared_ptr<const PendingMap> pending;
  {
    ReaderLock l(im_.view_mu);
    pending = im_.pending_view;
    auto it = im_.records.find(id);
    if (it == im_.records.end()) return std::nullopt;
    r = it->second;
  }
  return PodJobOf(*r, PendingOf(pending));
}

std::string K8sPort::OutputFile(uint32_t id) const {
  std::shared_ptr<const JobRecord> r = im_.FindRecord(id);
  if (!r) return "";
  const core::Job& j = r->job;
  agent::OutputPatternFields f;
  f.job_id = j.id;
  if (j.array_job_id != core::kNoJob) {
    f.array_job_id = j.array_job_id;
    f.array_task_id = j.array_task_id;
  }
  f.job_name = j.spec->name;
  f.user = j.spec->user;
  f.node_name = r->node_names.empty() ? "" : r->node_names.front();
  const std::string pattern = j.exec ? j.exec->stdout_pattern : "";
  return agent::OutputPath(pattern, agent::DefaultStdoutPattern(j.array_job_id != core::kNoJob), f,
                           j.exec ? j.exec->work_dir : "");
}

k8s::UsageView K8sPort::Usage() const {
  return im_.usage.View(UsageTable::ClockMs());
}

std::vector<k8s::NodeFacts> K8sPort::Nodes() const {
  std::shared_ptr<const std::vector<NodeView>> nodes;
  {
    ReaderLock l(im_.view_mu);
    nodes = im_.node_view;
  }
  std::vector<k8s::NodeFacts> out;
  if (!nodes) return out;
  for (const NodeView& n : *nodes) {
    k8s::NodeFacts f;
    f.name = n.name;
    f.cpus = n.spec.cpus;
    f.mem_mib = n.spec.mem_mib;
    f.gpus = n.spec.gpus;
    f.features = n.spec.features;
    f.partitions = n.partitions;
    f.state = n.state;
    f.reason = n.reason;
    f.agent_connected = n.agent_connected;
    f.last_seen = n.last_seen == kNoTime ? 0 : n.last_seen;
    f.state_since = n.reason_time == kNoTime ? 0 : n.reason_time;
    f.resource_version = std::to_string(n.event_seq + 1);
    out.push_back(std::move(f));
  }
  return out;
}

std::optional<k8s::User> K8sPort::IdentifyUser(const net::HttpRequest& req) const {
  std::optional<Caller> c = im_.auth.IdentifyUserToken(req);
  if (!c) c = im_.WebSessionReader(req);  // the web console's reads: a Pod's log and object
  if (!c) return std::nullopt;
  k8s::User u;
  u.uid = c->uid;
  u.gid = c->gid;
  u.name = c->user;
  u.admin = c->admin;
  u.known = c->known;
  return u;
}

net::HttpResponse K8sPort::ServeApi(const net::HttpRequest& req) {
  return im_.ServeHttps(req);  // a bearer token, else a web session's cookie (controller_web.cc)
}

Result<std::optional<std::string>> K8sPort::GetMeta(const std::string& key) {
  return im_.store->GetMeta(key);
}

Status K8sPort::ScanMeta(const std::string& prefix,
                         const std::function<void(const std::string&, const std::string&)>& fn) {
  return im_.store->ScanMeta(prefix, fn);
}

Status K8sPort::PutMetaNow(const std::string& key, const std::string& value) {
  return im_.store->Commit({{store::Write::Kind::kPutMeta, {}, key, value}});
}

Status K8sPort::Run(const std::function<Status(k8s::StateOps&)>& fn) {
  Reply r = im_.Call([this, &fn](Txn& t, Reply* out) {
    Ops ops(im_, t);
    out->status = fn(ops);
  });
  return r.status;
}

void K8sPort::OnPass(k8s::Face& face, Txn& t) {
  Ops ops(im_, t);
  face.OnPass(ops);
}

Status Controller::Impl::StartK8s() {
  k8s::FaceOptions fo;
  fo.state_dir = opt.state_dir;
  fo.listen = opt.k8s_listen;
  fo.listen_required = opt.k8s_listen_required;
  fo.tls_cert = opt.tls_cert;
  fo.tls_key = opt.tls_key;
  fo.tls_ca = opt.tls_ca;
  fo.tls_san = opt.tls_san;
  fo.version = BERTH_CONTROLLER_VERSION;
  fo.containers = opt.container_pods;
  k8s_port = std::make_unique<K8sPort>(*this);
  k8s = std::make_unique<k8s::Face>(*k8s_port, std::move(fo));
  return k8s->Start();
}

void Controller::Impl::StopK8s() {
  if (k8s) k8s->Stop();
}

net::HttpResponse Controller::Impl::Kubeconfig(const Caller& who) const {
  if (who.web_session) return Error(Status::PermissionDenied(std::string(kWebSessionMintsNothing)));
  if (!who.known) {
    return Error(Status::PermissionDenied(
        "a kubeconfig is given only on the Unix socket, for the user connected to it"));
  }
  if (!k8s || !k8s->serving()) {
    return Error(Status::Unavailable(
        "this controller serves no Kubernetes API (berth controller --k8s-listen HOST:PORT)"));
  }
  json cluster = {{"server", k8s->server_url()}};
  if (!k8s->ca_pem().empty()) cluster["certificate-authority-data"] = Base64(k8s->ca_pem());
  const std::string context = who.user + "@berth";
  json config = {
      {"apiVersion", "v1"},
      {"kind", "Config"},
      {"preferences", json::object()},
      {"clusters", json::array({{{"name", "berth"}, {"cluster", cluster}}})},
      {"users",
       json::array({{{"name", who.user}, {"user", {{"token", k8s->signer()->Issue(who.uid)}}}}})},
      {"contexts",
       json::array(
           {{{"name", context},
             {"context", {{"cluster", "berth"}, {"user", who.user}, {"namespace", "default"}}}}})},
      {"current-context", context}};
  return k8s::http::JsonResponse(200, config);
}

}  // namespace berth::controller
