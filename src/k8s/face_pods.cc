// core/v1 Pods (docs/kubernetes.md). A Pod is a berth job with one task: creating one submits the
// job its manifest maps to (MapPod) into the same queue as sbatch's; every berth job appears as a
// Pod, those made through this face in their namespace, Slurm jobs in "slurm" as job-ID.
// Deleting a Pod cancels its job and hides the Pod once the job has ended. Only labels and
// annotations of a Pod change.
#include "k8s/face.h"
#include "k8s/patch.h"

namespace berth::k8s {
namespace {

using nlohmann::json;
using namespace http;

// "job-123" in the slurm namespace -> 123.
std::optional<uint32_t> SlurmPodId(const std::string& name) {
  if (name.rfind("job-", 0) != 0 || name.size() < 5 || name.size() > 14) return std::nullopt;
  uint64_t id = 0;
  for (size_t i = 4; i < name.size(); ++i) {
    if (!std::isdigit(static_cast<unsigned char>(name[i]))) return std::nullopt;
    id = id * 10 + static_cast<uint64_t>(name[i] - '0');
  }
  if (id == 0 || id > UINT32_MAX) return std::nullopt;
  return static_cast<uint32_t>(id);
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

// A Pod manifest's namespace must be the path's.
std::optional<net::HttpResponse> CheckBodyNamespace(const json& body, const std::string& ns) {
  if (body.is_object() && body.contains("metadata") && body["metadata"].is_object() &&
      body["metadata"].contains("namespace") && body["metadata"]["namespace"] != ns) {
    return BadRequest(
        "the namespace of the provided object does not match the namespace sent on the "
        "request");
  }
  return std::nullopt;
}

}  // namespace

Objects Face::PodObjects(const std::string& ns, const std::string& only) {
  // The job of a named pod, looked up before the port is asked (the port never runs under mu_).
  std::vector<PodJob> chosen;
  if (!only.empty()) {
    std::optional<uint32_t> named;
    if (ns == kSlurmNamespace) {
      named = SlurmPodId(only);
    } else {
      MutexLock l(mu_);
      auto it = pods_.find(ObjectKey(ns, only));
      if (it != pods_.end()) named = it->second;
    }
    std::optional<PodJob> job = named ? port_.FindPodJob(*named) : std::nullopt;
    if (job && (ns == kSlurmNamespace) == !job->meta) chosen.push_back(std::move(*job));
  } else {
    chosen = port_.PodJobs(ns);
  }
  Objects out;
  for (const PodJob& p : chosen) {
    if (!p.Visible()) continue;
    out[ObjectKey(PodNamespace(p.facts), PodName(p.facts))] = EncodePod(p.facts);
  }
  return out;
}

Result<uint32_t> Face::SubmitPod(const User& who, const PodMapping& m, StateOps& ops) {
  const std::string key = ObjectKey(m.meta.value("namespace", ""), m.name);
  std::optional<uint32_t> holder;
  {
    MutexLock l(mu_);
    if (auto it = pods_.find(key); it != pods_.end()) holder = it->second;
  }
  if (holder) {
    std::optional<PodJob> job = ops.Job(*holder);
    if (job && job->Visible()) return Status::AlreadyExists(m.name);
    MutexLock l(mu_);
    pods_.erase(key);  // its job ended after a delete, or left the live view
  }
  BERTH_ASSIGN_OR_RETURN(uint32_t id, ops.SubmitPod(who, m));
  MutexLock l(mu_);
  pods_[key] = id;
  return id;
}

net::HttpResponse Face::PodList(const Call& c) {
  const std::string ns = c.Namespace();
  if (IsWatch(c.req)) {
    const std::string only = SelectedField(c.req, PodShape(), "metadata.name");
    return WatchResponse(c.req, PodShape(), port_, [this, ns, only](std::string* rv) {
      *rv = std::to_string(port_.WatchNext());
      return PodObjects(ns, only);
    });
  }
  // The list's resourceVersion is read first: every event it counts is already in the
  // published jobs (they are updated before their events are published).
  const std::string rv = std::to_string(port_.WatchNext());
  Objects objects = PodObjects(ns, "");
  if (auto bad = Select(c.req, PodShape(), &objects)) return *bad;
  return ListResponse(c.req, PodShape(), objects, rv, port_.Now());
}

net::HttpResponse Face::PodCreate(const Call& c) {
  const std::string& ns = c.Namespace();
  json body = json::parse(c.req.body, nullptr, false);
  if (body.is_discarded()) return BadRequest("the body is not JSON");
  if (auto bad = CheckBodyNamespace(body, ns)) return *bad;
  {
    MutexLock l(mu_);
    if (!namespaces_.count(ns)) return StatusResponse(NotFoundStatus("namespaces", ns));
  }
  if (ns == kSlurmNamespace) {
    return StatusResponse(ForbiddenStatus(
        "pods", "", "the namespace \"slurm\" shows Slurm jobs; create pods in another one"));
  }
  PodContext ctx;
  ctx.ns = ns;
  ctx.home = HomeOf(c.who.uid);
  ctx.log_dir = log_dir_;
  ctx.name_suffix = GenerateNameSuffix();
  ctx.now = port_.Now();
  ctx.containers = opt_.containers;
  ctx.uid = c.who.uid;
  ctx.admin = c.who.admin;
  ctx.find_config = ConfigLookupFor(ns, c.who);
  PodMapping mapping;
  if (auto problem = MapPod(body, ctx, &mapping)) {
    std::string name = body.is_object() && body.contains("metadata") && body["metadata"].is_object()
                           ? body["metadata"].value("name", "")
                           : "";
    return StatusResponse(InvalidStatusOf("Pod", name, *problem));
  }
  return PodSubmit(c, mapping);
}

net::HttpResponse Face::PodSubmit(const Call& c, const PodMapping& mapping) {
  const bool dry_run = Query(c.req, "dryRun") == "All";
  Status st = port_.Run([&](StateOps& ops) {
    if (dry_run) return ops.TestSubmitPod(c.who, mapping);
    Result<uint32_t> id = SubmitPod(c.who, mapping, ops);
    if (id.ok() && !mapping.missing_pull_secrets.empty()) {
      MutexLock l(mu_);
      AddPullSecretEvent(*id, mapping, port_.Now());
    }
    return id.status();
  });
  if (auto stopping = UnavailableResponse(st)) return *stopping;
  if (st.code() == StatusCode::kAlreadyExists) {
    return StatusResponse(AlreadyExistsStatus("pods", mapping.name));
  }
  if (st.code() == StatusCode::kPermissionDenied) {
    return StatusResponse(ForbiddenStatus("pods", mapping.name, st.message()));
  }
  if (!st.ok()) {
    return StatusResponse(InvalidStatusOf("Pod", mapping.name,
                                          {"spec", "Invalid value", "", "berth: " + st.message()}));
  }
  if (dry_run) {
    PodFacts f;
    f.state = "PENDING";
    f.submit_time = port_.Now();
    f.meta = &mapping.meta;
    return ObjectResponse(c.req, PodShape(), EncodePod(f), 201, port_.Now());
  }
  Objects made = PodObjects(c.Namespace(), mapping.name);
  if (made.empty()) return StatusResponse(NotFoundStatus("pods", mapping.name));
  return ObjectResponse(c.req, PodShape(), made.begin()->second, 201, port_.Now());
}

net::HttpResponse Face::PodGet(const Call& c) {
  Objects objects = PodObjects(c.Namespace(), c.Name());
  if (objects.empty()) return StatusResponse(NotFoundStatus("pods", c.Name()));
  if (c.req.method != "GET" && c.req.method != "HEAD") return MethodNotAllowedHere();
  return ObjectResponse(c.req, PodShape(), objects.begin()->second, 200, port_.Now());
}

net::HttpResponse Face::PodDelete(const Call& c) {
  const std::string& ns = c.Namespace();
  const std::string& name = c.Name();
  Objects objects = PodObjects(ns, name);
  if (objects.empty()) return StatusResponse(NotFoundStatus("pods", name));
  json pod = objects.begin()->second;
  const uint32_t id = PodJobId(pod);
  Status st = port_.Run([&](StateOps& ops) {
    std::optional<PodJob> job = ops.Job(id);
    if (!job) return Status::NotFound("gone");
    if (!Owns(c.who, job->uid)) {
      return Status::PermissionDenied("only its owner or an operator may delete it");
    }
    ops.DeletePod(id);
    return Status::Ok();
  });
  if (auto stopping = UnavailableResponse(st)) return *stopping;
  if (st.code() == StatusCode::kNotFound) return StatusResponse(NotFoundStatus("pods", name));
  if (st.code() == StatusCode::kPermissionDenied) {
    return StatusResponse(ForbiddenStatus("pods", name,
                                          "User \"" + c.who.name +
                                              "\" cannot delete resource \"pods\" in API group "
                                              "\"\" in the namespace \"" +
                                              ns + "\": " + st.message()));
  }
  if (!st.ok()) return BadRequest(st.message());
  Objects after = PodObjects(ns, name);
  if (after.empty()) {
    pod["metadata"]["deletionTimestamp"] = Rfc3339(port_.Now());
    return JsonResponse(200, pod);
  }
  return JsonResponse(200, after.begin()->second);
}

net::HttpResponse Face::PodUpdate(const Call& c) {
  const net::HttpRequest& req = c.req;
  const std::string& name = c.Name();
  Objects objects = PodObjects(c.Namespace(), name);
  if (objects.empty() && req.method == "PATCH" &&
      req.Header("content-type").rfind("application/apply-patch", 0) == 0) {
    return PodCreate(c);  // server-side apply of a new Pod
  }
  if (objects.empty()) return StatusResponse(NotFoundStatus("pods", name));
  const json& pod = objects.begin()->second;
  const uint32_t id = PodJobId(pod);
  // Pods change only in their labels and annotations (the rest is the job berth runs).
  Result<json> changed = req.method == "PUT"
                             ? json::parse(req.body, nullptr, false)
                             : ApplyPatch(req.Header("content-type"), pod, req.body);
  if (!changed.ok()) return PatchFailure(changed.status());
  if (!changed->is_object() || changed->is_discarded()) return BadRequest("the body is not a Pod");
  if (!SameSpec(*changed, pod)) {
    return StatusResponse(
        InvalidStatusOf("Pod", name,
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
  return PodSetMeta(c, id, labels, annotations);
}

net::HttpResponse Face::PodSetMeta(const Call& c, uint32_t id, const json& labels,
                                   const json& annotations) {
  const std::string& name = c.Name();
  Status st = port_.Run([&](StateOps& ops) {
    std::optional<PodJob> job = ops.Job(id);
    if (!job || !job->meta) return Status::NotFound("gone");
    if (!Owns(c.who, job->uid)) {
      return Status::PermissionDenied("only its owner or an operator may change it");
    }
    return ops.SetPodMeta(id, labels, annotations);
  });
  if (auto stopping = UnavailableResponse(st)) return *stopping;
  if (st.code() == StatusCode::kNotFound) return StatusResponse(NotFoundStatus("pods", name));
  if (st.code() == StatusCode::kPermissionDenied) {
    return StatusResponse(ForbiddenStatus("pods", name, st.message()));
  }
  if (!st.ok()) return BadRequest(st.message());
  Objects after = PodObjects(c.Namespace(), name);
  if (after.empty()) return StatusResponse(NotFoundStatus("pods", name));
  return ObjectResponse(c.req, PodShape(), after.begin()->second, 200, port_.Now());
}

}  // namespace berth::k8s
