// core/v1 Pods, pods/log and Events (docs/kubernetes.md). A Pod is a berth job with one task:
// creating one submits the job its manifest maps to (k8s::MapPod) into the same queue as
// sbatch's; every berth job appears as a Pod, those made through this API in their namespace,
// Slurm jobs in "slurm" as job-ID. Deleting a Pod cancels its job and hides the Pod once the job
// has ended. Events are made from the jobs' records (scheduled, started, ended) plus those the
// Job controller keeps.
#include <fcntl.h>
#include <pwd.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>

#include "agent/output_path.h"
#include "controller/controller_k8s_http.h"
#include "k8s/codec.h"
#include "k8s/jobs.h"
#include "k8s/patch.h"

namespace berth::controller {
namespace {

using nlohmann::json;
using namespace k8sface;

bool Ended(const JobRecord& r) {
  return core::IsTerminal(r.job.state);
}

// A pod that exists for Kubernetes: not ended after a delete.
bool Visible(const JobRecord& r) {
  return !(r.k8s_deleted > 0 && Ended(r));
}

// "job-123" in the slurm namespace -> 123.
std::optional<core::JobId> SlurmPodId(const std::string& name) {
  if (name.rfind("job-", 0) != 0 || name.size() < 5 || name.size() > 14) return std::nullopt;
  uint64_t id = 0;
  for (size_t i = 4; i < name.size(); ++i) {
    if (!std::isdigit(static_cast<unsigned char>(name[i]))) return std::nullopt;
    id = id * 10 + static_cast<uint64_t>(name[i] - '0');
  }
  if (id == 0 || id > UINT32_MAX) return std::nullopt;
  return static_cast<core::JobId>(id);
}

// The file a job's output goes to (its stdout pattern expanded as the agent does).
std::string OutputFileOf(const JobRecord& r) {
  const core::Job& j = r.job;
  agent::OutputPatternFields f;
  f.job_id = j.id;
  if (j.array_job_id != core::kNoJob) {
    f.array_job_id = j.array_job_id;
    f.array_task_id = j.array_task_id;
  }
  f.job_name = j.spec.name;
  f.user = j.spec.user;
  f.node_name = r.node_names.empty() ? "" : r.node_names.front();
  const std::string pattern = j.exec ? j.exec->stdout_pattern : "";
  return agent::OutputPath(pattern, agent::DefaultStdoutPattern(j.array_job_id != core::kNoJob), f,
                           j.exec ? j.exec->work_dir : "");
}

std::string ContainerName(const json& pod) {
  const json& cs = pod["spec"]["containers"];
  if (cs.is_array() && !cs.empty()) return cs[0].value("name", "main");
  return "main";
}

// The berth job of a Pod (its berth.io/job-id label).
core::JobId PodJobId(const json& pod) {
  return static_cast<core::JobId>(
      std::stoul(pod["metadata"]["labels"].value("berth.io/job-id", "0")));
}

// Whether a changed Pod keeps the Pod's spec (all but labels, annotations, status and the
// server's metadata).
bool SameSpec(const json& changed, const json& pod) {
  json want = changed;
  json before = pod;
  for (json* o : {&want, &before}) {
    (*o)["metadata"].erase("labels");
    (*o)["metadata"].erase("annotations");
    (*o)["metadata"].erase("resourceVersion");
    (*o)["metadata"].erase("managedFields");
    o->erase("status");
  }
  return want["spec"] == before["spec"];
}

// Appends what is in `path` from *offset (at most about 64 MiB) to `out`; false when it cannot
// be opened.
bool ReadFrom(const std::string& path, off_t* offset, std::string* out) {
  int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0) return false;
  char buf[65536];
  while (true) {
    ssize_t n = ::pread(fd, buf, sizeof(buf), *offset);
    if (n <= 0) break;
    out->append(buf, static_cast<size_t>(n));
    *offset += n;
    if (out->size() > (64u << 20)) break;
  }
  ::close(fd);
  return true;
}

// Keeps the last `tail` lines of `text` (all of it when tail < 0).
void KeepTail(int64_t tail, std::string* text) {
  std::string& first = *text;
  if (tail < 0) return;
  size_t pos = first.size();
  int64_t lines = 0;
  if (pos > 0 && first[pos - 1] == '\n') --pos;
  while (pos > 0) {
    if (first[pos - 1] == '\n' && ++lines == tail) break;
    --pos;
  }
  if (tail == 0) pos = first.size();
  first.erase(0, pos);
}

// The events berth makes of a Pod (`key`: "namespace/name"): scheduled or not, started, ended,
// being deleted.
void AddPodEvents(const std::string& key, const json& pod, Objects* out) {
  const json& st = pod["status"];
  const std::string container = ContainerName(pod);
  auto add = [&](const json& e) {
    (*out)[key + "/" + e["metadata"]["name"].get<std::string>()] = e;
  };
  const json& cond = st["conditions"];
  int64_t created = k8s::ParseRfc3339(pod["metadata"].value("creationTimestamp", "")).value_or(0);
  std::string node = pod["spec"].value("nodeName", "");
  const json& cs = st.contains("containerStatuses") ? st["containerStatuses"][0] : json();
  if (node.empty()) {
    for (const json& c : cond) {
      if (c.value("type", "") == "PodScheduled" && c.value("status", "") == "False") {
        add(k8s::MakeEvent(pod, "Warning", "FailedScheduling", c.value("message", ""), created, 1,
                           "berth-scheduler"));
      }
    }
    return;
  }
  int64_t started = k8s::ParseRfc3339(st.value("startTime", "")).value_or(created);
  add(k8s::MakeEvent(pod, "Normal", "Scheduled",
                     "Successfully assigned " + pod["metadata"].value("namespace", "") + "/" +
                         pod["metadata"].value("name", "") + " to " + node,
                     started, 1, "berth-scheduler"));
  add(k8s::MakeEvent(pod, "Normal", "Started", "Started container " + container, started, 1,
                     "berth-agent"));
  if (cs.is_object() && cs["state"].contains("terminated")) {
    const json& term = cs["state"]["terminated"];
    int64_t ended = k8s::ParseRfc3339(term.value("finishedAt", "")).value_or(started);
    const std::string reason = term.value("reason", "");
    if (reason == "Completed") {
      add(k8s::MakeEvent(pod, "Normal", "Completed",
                         "Container " + container + " exited with code 0", ended, 1,
                         "berth-agent"));
    } else {
      std::string message = "Container " + container + " ended: " + reason + ", exit code " +
                            std::to_string(term.value("exitCode", 0));
      if (st.contains("message")) message += " (" + st.value("message", "") + ")";
      add(k8s::MakeEvent(pod, "Warning", reason == "OOMKilled" ? "OOMKilling" : "Failed", message,
                         ended, 1, "berth-agent"));
    }
  }
  if (pod["metadata"].contains("deletionTimestamp")) {
    add(k8s::MakeEvent(
        pod, "Normal", "Killing", "Stopping container " + container,
        k8s::ParseRfc3339(pod["metadata"].value("deletionTimestamp", "")).value_or(started), 1,
        "berth-agent"));
  }
}

// What a Pod shows of a job's record (`pending`: the pending jobs' reasons).
k8s::PodFacts PodFactsOf(const JobRecord& r,
                         const std::unordered_map<core::JobId, PendingView>& pending) {
  const core::Job& j = r.job;
  k8s::PodFacts f;
  f.job_id = j.id;
  f.state = std::string(core::JobStateName(j.state));
  if (j.state == core::JobState::kPending) {
    if (auto it = pending.find(j.id); it != pending.end()) {
      f.reason = std::string(core::PendingReasonName(it->second.reason));
      f.reason_detail = it->second.detail;
    } else if (j.spec.hold != core::HoldKind::kNone) {
      f.reason = "JobHeldUser";
    }
    if (j.spec.hold != core::HoldKind::kNone && r.k8s &&
        r.k8s->value("annotations", json::object()).value("berth.io/gang", "") == "true") {
      f.reason = "WaitingForGang";
      f.reason_detail = "the Job's pods start together, once all of them fit at once";
    }
  }
  f.node = r.node_names.empty() ? "" : r.node_names.front();
  f.submit_time = j.spec.submit_time;
  f.start_time = j.start_time == kNoTime ? 0 : j.start_time;
  f.end_time = j.end_time == kNoTime ? 0 : j.end_time;
  f.exit_code = j.outcome.exit_code;
  f.term_signal = j.outcome.term_signal;
  f.restart_count = j.restart_count;
  f.message = r.message;
  f.user = j.spec.user;
  f.account = j.spec.account;
  f.partition = j.partition;
  f.job_name = j.spec.name;
  for (const core::NodeAllocation& a : j.alloc.nodes) {
    f.cpus += a.cpus;
    f.mem_mib += a.mem_mib;
    f.gpus += a.gpu_count();
  }
  if (j.alloc.nodes.empty()) {
    f.cpus = std::max(j.spec.cpus_per_task, 1) * std::max(j.spec.ntasks, 1);
    f.mem_mib = std::max<int64_t>(j.spec.mem_per_node_mib, 0);
    f.gpus = j.spec.gpus;
  }
  f.time_limit = j.time_limit >= kInfinite ? 0 : j.time_limit;
  f.deleted_at = r.k8s_deleted;
  f.resource_version = std::to_string(r.event_seq + 1);
  f.meta = r.k8s.get();
  return f;
}

}  // namespace

std::map<std::string, json> Controller::Impl::K8sPodObjects(const std::string& ns,
                                                            const std::string& only) {
  std::vector<std::shared_ptr<const JobRecord>> chosen;
  std::shared_ptr<const std::unordered_map<core::JobId, PendingView>> pending;
  // The job of a named pod, looked up before view_mu is taken (the state thread takes k8s->mu
  // first and view_mu inside it).
  std::optional<core::JobId> named;
  if (!only.empty() && ns == k8s::kSlurmNamespace) {
    named = SlurmPodId(only);
  } else if (!only.empty()) {
    std::lock_guard<std::mutex> fl(k8s->mu);
    auto it = k8s->pods.find(ObjectKey(ns, only));
    if (it != k8s->pods.end()) named = it->second;
  }
  {
    ReaderLock l(view_mu);
    pending = pending_view;
    if (!only.empty()) {
      if (named) {
        auto it = records.find(*named);
        const bool slurm_ns = ns == k8s::kSlurmNamespace;
        if (it != records.end() && slurm_ns == !it->second->k8s) chosen.push_back(it->second);
      }
    } else {
      for (const auto& [id, r] : records) {
        if (!ns.empty()) {
          const bool slurm = !r->k8s;
          if (slurm != (ns == k8s::kSlurmNamespace)) continue;
          if (!slurm && (*r->k8s).value("namespace", "") != ns) continue;
        }
        chosen.push_back(r);
      }
    }
  }
  std::map<std::string, json> out;
  for (const auto& rp : chosen) {
    const JobRecord& r = *rp;
    if (!Visible(r)) continue;
    k8s::PodFacts f = PodFactsOf(r, *pending);
    json pod = k8s::EncodePod(f);
    out[ObjectKey(k8s::PodNamespace(f), k8s::PodName(f))] = std::move(pod);
  }
  return out;
}

Result<core::JobId> Controller::Impl::K8sSubmitPod(const Caller& who, const k8s::PodMapping& m,
                                                   Txn& t) {
  const std::string ns = m.meta.value("namespace", "");
  const std::string key = ObjectKey(ns, m.name);
  {
    std::lock_guard<std::mutex> l(k8s->mu);
    auto it = k8s->pods.find(key);
    if (it != k8s->pods.end()) {
      auto rec = own_records().find(it->second);
      if (rec != own_records().end() && Visible(*rec->second)) {
        return Status::AlreadyExists(m.name);
      }
      k8s->pods.erase(it);  // its job ended after a delete, or left the live view
    }
  }
  BERTH_ASSIGN_OR_RETURN(std::vector<core::JobId> ids, SubmitJobs(who, m.request, t));
  metrics.submissions_kubernetes.fetch_add(1, std::memory_order_relaxed);
  const core::JobId id = ids.front();
  auto r = std::make_shared<JobRecord>(*own_records().at(id));
  json meta = m.meta;
  std::string log = r->job.exec ? r->job.exec->stdout_pattern : "";
  if (size_t at = log.find("%j"); at != std::string::npos) log.replace(at, 2, std::to_string(id));
  meta["log"] = log;
  r->k8s = std::make_shared<const json>(std::move(meta));
  {
    MutexLock<SharedMutex> l(view_mu);
    records[id] = std::move(r);
  }
  std::lock_guard<std::mutex> l(k8s->mu);
  k8s->pods[key] = id;
  return id;
}

void Controller::Impl::K8sDeletePod(core::JobId id, Txn& t) {
  auto it = own_records().find(id);
  if (it == own_records().end() || it->second->k8s_deleted > 0) return;
  Caller op;
  op.known = true;
  op.admin = true;
  op.user = own_user;
  op.uid = own_uid;
  if (!Ended(*it->second)) (void)CancelJob(op, id, 0, false, t);
  it = own_records().find(id);
  auto r = std::make_shared<JobRecord>(*it->second);
  r->k8s_deleted = Now();
  const bool ended = Ended(*r);
  if (ended) WriteRecord(*r, /*active=*/false, r->job.end_time, t);
  {
    MutexLock<SharedMutex> l(view_mu);
    records[id] = r;
  }
  if (!ended) t.touched.insert(id);  // written with the batch (the cancel's record change)
}

net::HttpResponse Controller::Impl::K8sPodList(const K8sCall& c) {
  const std::string ns = c.Namespace();
  if (IsWatch(c.req)) {
    const std::string only = SelectedField(c.req, PodShape(), "metadata.name");
    return WatchResponse(
        c.req, PodShape(), watch_hub,
        [this, ns, only](std::string* rv) {
          *rv = std::to_string(watch_hub.Next());
          return K8sPodObjects(ns, only);
        },
        [this] { return Now(); });
  }
  // The list's resourceVersion is read first: every event it counts is already in the
  // records (they are updated before their events are published).
  const std::string rv = std::to_string(watch_hub.Next());
  Objects objects = K8sPodObjects(ns, "");
  if (auto bad = Select(c.req, PodShape(), &objects)) return *bad;
  return ListResponse(c.req, PodShape(), objects, rv, Now());
}

net::HttpResponse Controller::Impl::K8sPodCreate(const K8sCall& c) {
  const std::string& ns = c.Namespace();
  json body = json::parse(c.req.body, nullptr, false);
  if (body.is_discarded()) return BadRequest("the body is not JSON");
  if (body.is_object() && body.contains("metadata") && body["metadata"].is_object() &&
      body["metadata"].contains("namespace") && body["metadata"]["namespace"] != ns) {
    return BadRequest(
        "the namespace of the provided object does not match the namespace sent on the "
        "request");
  }
  {
    std::lock_guard<std::mutex> l(k8s->mu);
    if (!k8s->namespaces.count(ns)) {
      return StatusResponse(k8s::NotFoundStatus("namespaces", ns));
    }
  }
  if (ns == k8s::kSlurmNamespace) {
    return StatusResponse(k8s::ForbiddenStatus(
        "pods", "", "the namespace \"slurm\" shows Slurm jobs; create pods in another one"));
  }
  k8s::PodContext ctx;
  ctx.ns = ns;
  ctx.home = HomeOf(c.who.uid);
  ctx.log_dir = k8s->log_dir;
  ctx.name_suffix = GenerateNameSuffix();
  ctx.now = Now();
  k8s::PodMapping mapping;
  if (auto problem = k8s::MapPod(body, ctx, &mapping)) {
    std::string name = body.is_object() && body.contains("metadata") && body["metadata"].is_object()
                           ? body["metadata"].value("name", "")
                           : "";
    return StatusResponse(k8s::InvalidStatusOf("Pod", name, *problem));
  }
  return K8sPodSubmit(c, mapping);
}

net::HttpResponse Controller::Impl::K8sPodSubmit(const K8sCall& c, const k8s::PodMapping& mapping) {
  const bool dry_run = Query(c.req, "dryRun") == "All";
  const Caller who = c.who;
  Reply r = Call([this, who, mapping, dry_run](Txn& t, Reply* out) {
    state_thread.AssertHeld();  // a command: on the state thread
    if (dry_run) {
      Result<json> test = TestSubmit(who, mapping.request);
      out->status = test.status();
      return;
    }
    Result<core::JobId> id = K8sSubmitPod(who, mapping, t);
    out->status = id.status();
    if (id.ok()) out->body = {{"id", *id}};
  });
  if (auto stopping = UnavailableResponse(r.status)) return *stopping;
  if (r.status.code() == StatusCode::kAlreadyExists) {
    return StatusResponse(k8s::AlreadyExistsStatus("pods", mapping.name));
  }
  if (r.status.code() == StatusCode::kPermissionDenied) {
    return StatusResponse(k8s::ForbiddenStatus("pods", mapping.name, r.status.message()));
  }
  if (!r.status.ok()) {
    return StatusResponse(k8s::InvalidStatusOf(
        "Pod", mapping.name, {"spec", "Invalid value", "", "berth: " + r.status.message()}));
  }
  if (dry_run) {
    k8s::PodFacts f;
    f.state = "PENDING";
    f.submit_time = Now();
    f.meta = &mapping.meta;
    return ObjectResponse(c.req, PodShape(), k8s::EncodePod(f), 201, Now());
  }
  Objects made = K8sPodObjects(c.Namespace(), mapping.name);
  if (made.empty()) return StatusResponse(k8s::NotFoundStatus("pods", mapping.name));
  return ObjectResponse(c.req, PodShape(), made.begin()->second, 201, Now());
}

net::HttpResponse Controller::Impl::K8sPodGet(const K8sCall& c) {
  Objects objects = K8sPodObjects(c.Namespace(), c.Name());
  if (objects.empty()) return StatusResponse(k8s::NotFoundStatus("pods", c.Name()));
  if (c.req.method != "GET" && c.req.method != "HEAD") return MethodNotAllowedHere();
  return ObjectResponse(c.req, PodShape(), objects.begin()->second, 200, Now());
}

net::HttpResponse Controller::Impl::K8sPodDelete(const K8sCall& c) {
  const std::string& ns = c.Namespace();
  const std::string& name = c.Name();
  Objects objects = K8sPodObjects(ns, name);
  if (objects.empty()) return StatusResponse(k8s::NotFoundStatus("pods", name));
  json pod = objects.begin()->second;
  const core::JobId id = PodJobId(pod);
  const Caller who = c.who;
  Reply r = Call([this, who, id](Txn& t, Reply* out) {
    state_thread.AssertHeld();  // a command: on the state thread
    auto it = own_records().find(id);
    if (it == own_records().end()) {
      out->status = Status::NotFound("gone");
      return;
    }
    if (!who.admin && !(who.known && it->second->job.spec.uid == who.uid)) {
      out->status = Status::PermissionDenied("only its owner or an operator may delete it");
      return;
    }
    K8sDeletePod(id, t);
  });
  if (auto stopping = UnavailableResponse(r.status)) return *stopping;
  if (r.status.code() == StatusCode::kNotFound) {
    return StatusResponse(k8s::NotFoundStatus("pods", name));
  }
  if (r.status.code() == StatusCode::kPermissionDenied) {
    return StatusResponse(
        k8s::ForbiddenStatus("pods", name,
                             "User \"" + who.user +
                                 "\" cannot delete resource \"pods\" in API group \"\" in the "
                                 "namespace \"" +
                                 ns + "\": " + r.status.message()));
  }
  if (!r.status.ok()) return BadRequest(r.status.message());
  Objects after = K8sPodObjects(ns, name);
  if (after.empty()) {
    pod["metadata"]["deletionTimestamp"] = k8s::Rfc3339(Now());
    return K8sJsonResponse(200, pod);
  }
  return K8sJsonResponse(200, after.begin()->second);
}

net::HttpResponse Controller::Impl::K8sPodUpdate(const K8sCall& c) {
  const net::HttpRequest& req = c.req;
  const std::string& name = c.Name();
  Objects objects = K8sPodObjects(c.Namespace(), name);
  if (objects.empty() && req.method == "PATCH" &&
      req.Header("content-type").rfind("application/apply-patch", 0) == 0) {
    return K8sPodCreate(c);  // server-side apply of a new Pod
  }
  if (objects.empty()) return StatusResponse(k8s::NotFoundStatus("pods", name));
  const json& pod = objects.begin()->second;
  const core::JobId id = PodJobId(pod);
  // Pods change only in their labels and annotations (the rest is the job berth runs).
  Result<json> changed = req.method == "PUT"
                             ? json::parse(req.body, nullptr, false)
                             : k8s::ApplyPatch(req.Header("content-type"), pod, req.body);
  if (!changed.ok()) return PatchFailure(changed.status());
  if (!changed->is_object() || changed->is_discarded()) return BadRequest("the body is not a Pod");
  if (!SameSpec(*changed, pod)) {
    return StatusResponse(k8s::InvalidStatusOf(
        "Pod", name,
        {"spec", "Forbidden", "",
         "pod updates may not change fields other than metadata.labels and "
         "metadata.annotations (berth runs the pod's job as it was submitted)"}));
  }
  json labels = (*changed)["metadata"].value("labels", json::object());
  json annotations = (*changed)["metadata"].value("annotations", json::object());
  for (const char* key : {"berth.io/job-id", "berth.io/state", "berth.io/partition"}) {
    labels.erase(key);
    annotations.erase(key);
  }
  return K8sPodSetMeta(c, id, labels, annotations);
}

net::HttpResponse Controller::Impl::K8sPodSetMeta(const K8sCall& c, core::JobId id,
                                                  const json& labels, const json& annotations) {
  const std::string& name = c.Name();
  const Caller who = c.who;
  Reply r = Call([this, who, id, labels, annotations](Txn& t, Reply* out) {
    state_thread.AssertHeld();  // a command: on the state thread
    auto it = own_records().find(id);
    if (it == own_records().end() || !it->second->k8s) {
      out->status = Status::NotFound("gone");
      return;
    }
    if (!who.admin && !(who.known && it->second->job.spec.uid == who.uid)) {
      out->status = Status::PermissionDenied("only its owner or an operator may change it");
      return;
    }
    auto rec = std::make_shared<JobRecord>(*it->second);
    json meta = *rec->k8s;
    meta["labels"] = labels;
    meta["annotations"] = annotations;
    rec->k8s = std::make_shared<const json>(std::move(meta));
    if (Ended(*rec)) {
      WriteRecord(*rec, false, rec->job.end_time, t);
    } else {
      t.touched.insert(id);
    }
    MutexLock<SharedMutex> l(view_mu);
    records[id] = std::move(rec);
  });
  if (auto stopping = UnavailableResponse(r.status)) return *stopping;
  if (r.status.code() == StatusCode::kNotFound) {
    return StatusResponse(k8s::NotFoundStatus("pods", name));
  }
  if (r.status.code() == StatusCode::kPermissionDenied) {
    return StatusResponse(k8s::ForbiddenStatus("pods", name, r.status.message()));
  }
  if (!r.status.ok()) return BadRequest(r.status.message());
  Objects after = K8sPodObjects(c.Namespace(), name);
  if (after.empty()) return StatusResponse(k8s::NotFoundStatus("pods", name));
  return ObjectResponse(c.req, PodShape(), after.begin()->second, 200, Now());
}

net::HttpResponse Controller::Impl::K8sPodLog(const K8sCall& c) {
  const net::HttpRequest& req = c.req;
  const Caller& who = c.who;
  const std::string& name = c.Name();
  Objects objects = K8sPodObjects(c.Namespace(), name);
  if (objects.empty()) return StatusResponse(k8s::NotFoundStatus("pods", name));
  const json pod = objects.begin()->second;
  const core::JobId id = PodJobId(pod);
  std::shared_ptr<const JobRecord> rec = FindRecord(id);
  if (!rec) return StatusResponse(k8s::NotFoundStatus("pods", name));
  if (!who.admin && !(who.known && rec->job.spec.uid == who.uid)) {
    return StatusResponse(
        k8s::ForbiddenStatus("pods/log", name,
                             "User \"" + who.user +
                                 "\" cannot get resource \"pods/log\": the output of another "
                                 "user's job"));
  }
  const std::string container = ContainerName(pod);
  if (std::string q = Query(req, "container"); !q.empty() && q != container) {
    return StatusResponse(k8s::StatusBody(
        400, "BadRequest", "container " + q + " is not valid for pod " + name, nullptr));
  }
  if (rec->job.start_time == kNoTime || rec->job.state == core::JobState::kPending) {
    return StatusResponse(k8s::StatusBody(400, "BadRequest",
                                          "container \"" + container + "\" in pod \"" + name +
                                              "\" is waiting to start: ContainerCreating",
                                          nullptr));
  }
  const std::string path = OutputFileOf(*rec);
  const bool follow = k8s::ParseBool(Query(req, "follow")).value_or(false);
  int64_t tail = -1;
  if (std::string t = Query(req, "tailLines"); !t.empty()) tail = std::atoll(t.c_str());
  int64_t limit = -1;
  if (std::string l = Query(req, "limitBytes"); !l.empty()) limit = std::atoll(l.c_str());
  // What is there now, after tailLines and limitBytes.
  off_t offset = 0;
  std::string first;
  ReadFrom(path, &offset, &first);
  KeepTail(tail, &first);
  if (limit >= 0 && static_cast<int64_t>(first.size()) > limit) first.resize(limit);
  net::HttpResponse r;
  r.content_type = "text/plain";
  if (!follow) {
    r.body = std::move(first);
    return r;
  }
  r.stream = [this, id, path, offset, first, limit](net::ResponseStream& out) mutable {
    int64_t sent = static_cast<int64_t>(first.size());
    if (!first.empty() && !out.Write(first)) return;
    uint64_t next = watch_hub.Next();
    while (!out.Closed()) {
      std::shared_ptr<const JobRecord> now = FindRecord(id);
      const bool done = !now || core::IsTerminal(now->job.state);
      std::string more;
      ReadFrom(path, &offset, &more);
      if (limit >= 0 && sent + static_cast<int64_t>(more.size()) > limit) {
        more.resize(static_cast<size_t>(limit - sent));
      }
      if (!more.empty()) {
        sent += static_cast<int64_t>(more.size());
        if (!out.Write(more)) return;
      }
      if (done || (limit >= 0 && sent >= limit)) return;
      bool lost = false;
      watch_hub.Read(next, 250, &next, &lost);
    }
  };
  return r;
}

std::map<std::string, json> Controller::Impl::K8sEventObjects(const std::string& ns,
                                                              const std::string& only,
                                                              std::string* rv) {
  *rv = std::to_string(watch_hub.Next());
  Objects out;
  for (const auto& [key, pod] : K8sPodObjects(ns, only)) AddPodEvents(key, pod, &out);
  std::lock_guard<std::mutex> l(k8s->mu);
  for (const auto& e : k8s->events) {
    const json& ev = *e;
    if (!ns.empty() && ev["metadata"].value("namespace", "") != ns) continue;
    out[ev["metadata"].value("namespace", "") + "/" + ev["metadata"].value("name", "")] = ev;
  }
  return out;
}

net::HttpResponse Controller::Impl::K8sEventList(const K8sCall& c) {
  const ResourceShape& shape = EventShape();
  // A selector on one object's name narrows the pods whose events are made.
  const std::string only = SelectedField(c.req, shape, "involvedObject.name");
  const std::string ns = c.Namespace();
  auto snapshot = [this, ns, only](std::string* rv) { return K8sEventObjects(ns, only, rv); };
  if (IsWatch(c.req)) {
    return WatchResponse(c.req, shape, watch_hub, snapshot, [this] { return Now(); });
  }
  std::string rv;
  Objects objects = snapshot(&rv);
  if (auto bad = Select(c.req, shape, &objects)) return *bad;
  return ListResponse(c.req, shape, objects, rv, Now());
}

net::HttpResponse Controller::Impl::K8sEventGet(const K8sCall& c) {
  const std::string only = SelectedField(c.req, EventShape(), "involvedObject.name");
  std::string rv;
  Objects all = K8sEventObjects(c.Namespace(), only, &rv);
  for (const auto& [key, e] : all) {
    if (e["metadata"].value("name", "") == c.Name()) {
      return ObjectResponse(c.req, EventShape(), e, 200, Now());
    }
  }
  return StatusResponse(k8s::NotFoundStatus("events", c.Name()));
}

Status Controller::Impl::K8sLoad() {
  k8s->log_dir = opt.state_dir + "/pod-logs";
  if (::mkdir(k8s->log_dir.c_str(), 01777) != 0 && errno != EEXIST) {
    return Status::Internal("cannot create " + k8s->log_dir + ": " + std::strerror(errno));
  }
  (void)::chmod(k8s->log_dir.c_str(), 01777);  // past the umask
  for (const auto& [id, r] : own_records()) {
    if (!r->k8s || !Visible(*r)) continue;
    k8s->pods[ObjectKey(r->k8s->value("namespace", ""), r->k8s->value("name", ""))] = id;
  }
  Status st = store->ScanMeta(kJobMetaPrefix, [&](const std::string& key, const std::string& v) {
    json j = json::parse(v, nullptr, false);
    if (!j.is_object()) {
      std::fprintf(stderr, "berth controller: warning: unreadable Kubernetes Job %s skipped\n",
                   key.c_str());
      return;
    }
    k8s->jobs[key.substr(std::string_view(kJobMetaPrefix).size())] =
        std::make_shared<const json>(std::move(j));
  });
  return st;
}

}  // namespace berth::controller
