// batch/v1 Jobs (docs/kubernetes.md): kept by the face as their object plus a private "berth"
// section (who made it, its pods and their last known states), in the store under
// kJobMetaPrefix + "namespace/name". Creating or changing one runs the Job controller
// (face_job_controller.cc) in the same command; labels, annotations and a few spec fields change,
// the template and completions do not.
#include "k8s/face.h"
#include "k8s/jobs.h"
#include "k8s/patch.h"

namespace berth::k8s {
namespace {

using nlohmann::json;
using namespace http;

// The Job as clients see it: without berth's private section.
json Served(const json& stored) {
  json j = stored;
  j.erase("berth");
  return j;
}

// The Job a PUT or PATCH of `served` asks for; the answer when it cannot be read.
std::optional<net::HttpResponse> JobWanted(const Call& c, const json& served, json* want) {
  const std::string& name = c.Name();
  Result<json> changed = Status::Ok();
  if (c.req.method == "PUT") {
    json body = json::parse(c.req.body, nullptr, false);
    if (!body.is_object()) return BadRequest("the body is not a JSON object");
    const std::string rv = body["metadata"].value("resourceVersion", "");
    if (!rv.empty() && rv != served["metadata"].value("resourceVersion", "")) {
      return StatusResponse(StatusBody(
          409, "Conflict",
          "Operation cannot be fulfilled on jobs.batch \"" + name +
              "\": the object has been modified; please apply your changes to the latest "
              "version and try again",
          {{"name", name}, {"group", "batch"}, {"kind", "jobs"}}));
    }
    changed = std::move(body);
  } else {
    changed = ApplyPatch(c.req.Header("content-type"), served, c.req.body);
  }
  if (!changed.ok()) return PatchFailure(changed.status());
  *want = std::move(*changed);
  if (!want->is_object() || !(*want)["spec"].is_object()) {
    return StatusResponse(InvalidStatusOf("Job.batch", name, {"spec", "Required value", "", ""}));
  }
  return std::nullopt;
}

// The stored Job `current` changed as `want` asks: labels, annotations, and of the spec
// parallelism, suspend, activeDeadlineSeconds, backoffLimit and ttlSecondsAfterFinished (the
// template and the completions are immutable, as in Kubernetes); the answer when refused.
std::optional<net::HttpResponse> JobNext(const json& current, const json& served, json want,
                                         const std::string& name, json* next) {
  for (const char* field : {"template", "completions", "completionMode", "selector"}) {
    if (want["spec"].contains(field) && want["spec"][field] != served["spec"][field]) {
      return StatusResponse(InvalidStatusOf(
          "Job.batch", name,
          {std::string("spec.") + field, "Invalid value", "", "field is immutable"}));
    }
  }
  *next = current;
  for (const char* field : {"parallelism", "suspend", "activeDeadlineSeconds", "backoffLimit",
                            "ttlSecondsAfterFinished"}) {
    if (!want["spec"].contains(field) || want["spec"][field].is_null()) {
      if (std::string_view(field) == "activeDeadlineSeconds" ||
          std::string_view(field) == "ttlSecondsAfterFinished") {
        (*next)["spec"].erase(field);
      }
      continue;
    }
    const json& v = want["spec"][field];
    const bool ok = std::string_view(field) == "suspend"
                        ? v.is_boolean()
                        : v.is_number_integer() && v.get<int64_t>() >= 0;
    if (!ok) {
      return StatusResponse(InvalidStatusOf(
          "Job.batch", name,
          {std::string("spec.") + field, "Invalid value", v.dump(),
           std::string_view(field) == "suspend" ? "must be a boolean"
                                                : "must be greater than or equal to 0"}));
    }
    (*next)["spec"][field] = v;
  }
  for (const char* key_name : {"labels", "annotations"}) {
    if (want["metadata"].contains(key_name) && want["metadata"][key_name].is_object()) {
      (*next)["metadata"][key_name] = want["metadata"][key_name];
    } else {
      (*next)["metadata"].erase(key_name);
    }
  }
  return std::nullopt;
}

// The name a create asks for (generateName gets a suffix).
std::string NameToCreate(const json& body) {
  std::string name;
  if (body.is_object() && body.contains("metadata") && body["metadata"].is_object()) {
    name = body["metadata"].value("name", "");
    if (name.empty() && body["metadata"].contains("generateName")) {
      name = body["metadata"].value("generateName", "") + GenerateNameSuffix();
    }
  }
  return name;
}

// The propagationPolicy of a delete (query or DeleteOptions body); "" with the answer for one
// not supported.
std::string DeletePolicy(const net::HttpRequest& req) {
  std::string policy = Query(req, "propagationPolicy");
  if (json opts = json::parse(req.body, nullptr, false); opts.is_object()) {
    policy = opts.value("propagationPolicy", policy);
  }
  if (policy.empty()) policy = "Background";  // kubectl's default (--cascade=background)
  return policy;
}

}  // namespace

Objects Face::JobObjects(const std::string& ns, std::string* rv) {
  Objects out;
  MutexLock l(mu_);
  *rv = std::to_string(jobs_rv_);
  for (const auto& [key, j] : jobs_) {
    if (!ns.empty() && key.compare(0, ns.size() + 1, ns + "/") != 0) continue;
    out[key] = Served(*j);
  }
  return out;
}

std::optional<json> Face::FindJob(const std::string& key) {
  MutexLock l(mu_);
  auto it = jobs_.find(key);
  if (it == jobs_.end()) return std::nullopt;
  return *it->second;
}

void Face::PutJob(const std::string& key, json job, StateOps& ops) {
  jobs_rv_ += 1;
  job["metadata"]["resourceVersion"] = std::to_string(jobs_rv_);
  ops.PutMeta(kJobMetaPrefix + key, job.dump());
  jobs_[key] = std::make_shared<const json>(std::move(job));
}

void Face::DeleteJob(const std::string& key, StateOps& ops) {
  jobs_.erase(key);
  jobs_rv_ += 1;
  ops.DeleteMeta(kJobMetaPrefix + key);
}

net::HttpResponse Face::JobList(const Call& c) {
  const std::string ns = c.Namespace();
  return ListOrWatch(c.req, JobShape(), port_,
                     [this, ns](std::string* rv) { return JobObjects(ns, rv); });
}

net::HttpResponse Face::JobCreate(const Call& c) {
  Result<json> body = WorkloadCreateBody(c.req, c.Namespace());
  if (!body.ok()) return BadRequest(body.status().message());
  return JobCreateFrom(c, *body);
}

net::HttpResponse Face::JobCreateFrom(const Call& c, const json& body) {
  const std::string& ns = c.Namespace();
  const User& who = c.who;
  {
    MutexLock l(mu_);
    if (!namespaces_.count(ns)) return StatusResponse(NotFoundStatus("namespaces", ns));
  }
  const int64_t now = port_.Now();
  const std::string name = NameToCreate(body);
  json manifest = body;
  if (!name.empty()) manifest["metadata"]["name"] = name;
  const std::string uid =
      StableUid("Job", ns + "/" + name + "/" + std::to_string(now) + "/" + GenerateNameSuffix());
  json job;
  // The template is checked as a Pod of the Job's creator would be (its Secrets and ConfigMaps are
  // read only when the pods are made).
  PodContext template_ctx;
  template_ctx.containers = opt_.containers;
  template_ctx.uid = who.uid;
  template_ctx.admin = who.admin;
  template_ctx.resolve_refs = false;
  if (auto problem = DefaultJob(manifest, ns, uid, now, &job, &template_ctx)) {
    return StatusResponse(InvalidStatusOf("Job.batch", name, *problem));
  }
  job["berth"] = {
      {"owner", {{"uid", who.uid}, {"gid", who.gid}, {"user", who.name}, {"admin", who.admin}}},
      {"pods", json::object()}};
  if (Query(c.req, "dryRun") == "All") {
    return ObjectResponse(c.req, JobShape(), Served(job), 201, port_.Now());
  }
  const std::string key = ObjectKey(ns, name);
  Status st = port_.Run([&](StateOps& ops) {
    {
      MutexLock l(mu_);
      if (jobs_.count(key)) return Status::AlreadyExists(key);
      PutJob(key, job, ops);
    }
    OnPass(ops);
    return Status::Ok();
  });
  if (auto stopping = UnavailableResponse(st)) return *stopping;
  if (st.code() == StatusCode::kAlreadyExists) {
    return StatusResponse(AlreadyExistsStatus("jobs.batch", name));
  }
  if (!st.ok()) return BadRequest(st.message());
  std::optional<json> made = FindJob(key);
  if (!made) return StatusResponse(NotFoundStatus("jobs.batch", name));
  return ObjectResponse(c.req, JobShape(), Served(*made), 201, port_.Now());
}

net::HttpResponse Face::JobItem(Endpoint e, const Call& c) {
  const std::string& m = c.req.method;
  const std::string& ns = c.Namespace();
  const std::string& name = c.Name();
  std::optional<json> current = FindJob(ObjectKey(ns, name));
  if (!current) {
    const bool apply = c.req.Header("content-type").rfind("application/apply-patch", 0) == 0;
    if (m == "PATCH" && apply && e == Endpoint::kJobUpdate) {  // server-side apply: a new Job
      json body = json::parse(c.req.body, nullptr, false);
      if (!body.is_object()) return BadRequest("the body is not a JSON object");
      body["metadata"]["name"] = name;
      return JobCreateFrom(c, body);
    }
    return StatusResponse(NotFoundStatus("jobs.batch", name));
  }
  if (e == Endpoint::kJobGet) {
    return ObjectResponse(c.req, JobShape(), Served(*current), 200, port_.Now());
  }
  const json& owner = (*current)["berth"]["owner"];
  const User& who = c.who;
  if (!Owns(who, owner.value("uid", UINT32_MAX))) {
    return StatusResponse(ForbiddenStatus(
        "jobs.batch", name,
        "User \"" + who.name + "\" cannot " + (m == "DELETE" ? "delete" : "update") +
            " resource \"jobs\" in API group \"batch\" in the namespace \"" + ns +
            "\": only its creator or an operator may"));
  }
  if (e == Endpoint::kJobDelete) return JobDelete(c, *current);
  if (e == Endpoint::kJobOther) return MethodNotAllowedHere();
  return JobUpdate(c, *current);
}

net::HttpResponse Face::JobDelete(const Call& c, const json& current) {
  const std::string& name = c.Name();
  const std::string key = ObjectKey(c.Namespace(), name);
  const std::string policy = DeletePolicy(c.req);
  if (policy != "Background" && policy != "Foreground" && policy != "Orphan") {
    return BadRequest("propagationPolicy: Unsupported value: \"" + policy +
                      "\": supported values: \"Orphan\", \"Background\", \"Foreground\"");
  }
  const bool cascade = policy != "Orphan";
  Status st = port_.Run([&](StateOps& ops) {
    MutexLock l(mu_);
    auto it = jobs_.find(key);
    if (it == jobs_.end()) return Status::NotFound(key);
    std::shared_ptr<const json> job = it->second;
    DeleteJob(key, ops);
    if (!cascade) return Status::Ok();
    for (const auto& [id_text, p] : (*job)["berth"]["pods"].items()) {
      (void)p;
      ops.DeletePod(static_cast<uint32_t>(std::stoul(id_text)));
    }
    return Status::Ok();
  });
  if (auto stopping = UnavailableResponse(st)) return *stopping;
  if (st.code() == StatusCode::kNotFound) {
    return StatusResponse(NotFoundStatus("jobs.batch", name));
  }
  json details = {{"name", name},
                  {"group", "batch"},
                  {"kind", "jobs"},
                  {"uid", current["metadata"].value("uid", "")}};
  return JsonResponse(200, {{"kind", "Status"},
                            {"apiVersion", "v1"},
                            {"metadata", json::object()},
                            {"status", "Success"},
                            {"details", details}});
}

net::HttpResponse Face::JobUpdate(const Call& c, const json& current) {
  const json served = Served(current);
  json want;
  if (auto refused = JobWanted(c, served, &want)) return *refused;
  json next;
  if (auto refused = JobNext(current, served, std::move(want), c.Name(), &next)) return *refused;
  return JobCommit(c, std::move(next));
}

net::HttpResponse Face::JobCommit(const Call& c, json next) {
  const std::string& name = c.Name();
  const std::string key = ObjectKey(c.Namespace(), name);
  Status st = port_.Run([&](StateOps& ops) {
    {
      MutexLock l(mu_);
      auto it = jobs_.find(key);
      if (it == jobs_.end()) return Status::NotFound(key);
      // The controller's fields stay the controller's.
      json stored = next;
      stored["status"] = (*it->second)["status"];
      stored["berth"] = (*it->second)["berth"];
      stored["metadata"]["generation"] = (*it->second)["metadata"].value("generation", 1) +
                                         ((*it->second)["spec"] != stored["spec"] ? 1 : 0);
      PutJob(key, std::move(stored), ops);
    }
    OnPass(ops);
    return Status::Ok();
  });
  if (auto stopping = UnavailableResponse(st)) return *stopping;
  if (st.code() == StatusCode::kNotFound) {
    return StatusResponse(NotFoundStatus("jobs.batch", name));
  }
  std::optional<json> after = FindJob(key);
  if (!after) return StatusResponse(NotFoundStatus("jobs.batch", name));
  return ObjectResponse(c.req, JobShape(), Served(*after), 200, port_.Now());
}

}  // namespace berth::k8s
