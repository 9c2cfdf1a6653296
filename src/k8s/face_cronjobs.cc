// batch/v1 CronJobs (docs/kubernetes.md "CronJobs"): kept by the face as their object plus a
// private "berth" section (who made it; the controller's last events), in the store under
// kCronJobMetaPrefix + "namespace/name", so a restarted controller keeps them. Every spec field
// may change. The CronJob controller (CronPass) runs on the state thread before the Job
// controller on every batch: it makes each due Job as a batch/v1 Job of the CronJob's creator,
// owned by the CronJob, deletes what Replace and the history limits ask, and keeps the status.
#include "k8s/cronjobs.h"
#include "k8s/face.h"
#include "k8s/jobs.h"
#include "k8s/patch.h"

namespace berth::k8s {

using nlohmann::json;
using namespace http;

namespace {

json Served(const json& stored) {
  json j = stored;
  j.erase("berth");
  return j;
}

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

User OwnerOfCron(const json& stored) {
  const json& o = stored["berth"]["owner"];
  User who;
  who.known = true;
  who.uid = o.value("uid", 0u);
  who.gid = o.value("gid", 0u);
  who.name = o.value("user", "");
  who.admin = o.value("admin", false);
  return who;
}

// What the CronJob controller reads of a Job.
CronChild ChildOf(const json& job) {
  CronChild ch;
  const json& meta = job["metadata"];
  ch.name = meta.value("name", "");
  ch.uid = meta.value("uid", "");
  ch.resource_version = meta.value("resourceVersion", "");
  ch.created = ParseRfc3339(meta.value("creationTimestamp", "")).value_or(0);
  const json& status = job.contains("status") ? job["status"] : json::object();
  if (status.is_object()) {
    ch.start = ParseRfc3339(status.value("startTime", "")).value_or(0);
    ch.completion = ParseRfc3339(status.value("completionTime", "")).value_or(0);
    if (status.contains("conditions") && status["conditions"].is_array()) {
      for (const json& c : status["conditions"]) {
        if (c.value("status", "") != "True") continue;
        const std::string type = c.value("type", "");
        if (type != "Complete" && type != "Failed") continue;
        ch.finished = true;
        ch.succeeded = type == "Complete";
        if (!ch.completion) {
          ch.completion = ParseRfc3339(c.value("lastTransitionTime", "")).value_or(0);
        }
      }
    }
  }
  return ch;
}

bool OwnedBy(const json& job, const std::string& uid) {
  const json& refs =
      job["metadata"].contains("ownerReferences") ? job["metadata"]["ownerReferences"] : json();
  if (!refs.is_array()) return false;
  for (const json& r : refs) {
    if (r.is_object() && r.value("uid", "") == uid && r.value("controller", false)) return true;
  }
  return false;
}

const ResourceShape& CronJobShape() {
  static const ResourceShape kShape{"cronjobs",         "CronJobList",
                                    "batch/v1",         CronJobTableColumns(),
                                    &CronJobTableCells, &CronJobField};
  return kShape;
}

}  // namespace

Objects Face::CronJobObjects(const std::string& ns, std::string* rv) {
  Objects out;
  MutexLock l(mu_);
  *rv = std::to_string(jobs_rv_);
  for (const auto& [key, j] : cronjobs_) {
    if (!ns.empty() && key.compare(0, ns.size() + 1, ns + "/") != 0) continue;
    out[key] = Served(*j);
  }
  return out;
}

void Face::PutCronJob(const std::string& key, json cronjob, StateOps& ops) {
  jobs_rv_ += 1;
  cronjob["metadata"]["resourceVersion"] = std::to_string(jobs_rv_);
  ops.PutMeta(kCronJobMetaPrefix + key, cronjob.dump());
  cronjobs_[key] = std::make_shared<const json>(std::move(cronjob));
}

void Face::DeleteJobAndPods(const std::string& key, StateOps& ops) {
  auto it = jobs_.find(key);
  if (it == jobs_.end()) return;
  std::shared_ptr<const json> job = it->second;
  DeleteJob(key, ops);
  for (const auto& [id_text, p] : (*job)["berth"]["pods"].items()) {
    (void)p;
    ops.DeletePod(static_cast<uint32_t>(std::stoul(id_text)));
  }
}

Status Face::LoadCronJobs() {
  std::map<std::string, std::shared_ptr<const json>> loaded;
  Status st = port_.ScanMeta(kCronJobMetaPrefix, [&](const std::string& key, const std::string& v) {
    json j = json::parse(v, nullptr, false);
    if (!j.is_object()) {
      std::fprintf(stderr, "berth controller: warning: unreadable CronJob %s skipped\n",
                   key.c_str());
      return;
    }
    loaded[key.substr(std::string_view(kCronJobMetaPrefix).size())] =
        std::make_shared<const json>(std::move(j));
  });
  MutexLock l(mu_);
  for (auto& [key, c] : loaded) {
    jobs_rv_ = std::max<uint64_t>(
        jobs_rv_,
        std::strtoull((*c)["metadata"].value("resourceVersion", "0").c_str(), nullptr, 10));
    cronjobs_[key] = std::move(c);
  }
  return st;
}

void Face::CronPass(StateOps& ops) {
  const int64_t now = port_.Now();
  MutexLock l(mu_);
  std::vector<std::string> keys;
  for (const auto& [key, c] : cronjobs_) keys.push_back(key);
  for (const std::string& key : keys) {
    auto it = cronjobs_.find(key);
    if (it == cronjobs_.end()) continue;
    std::shared_ptr<const json> stored = it->second;
    const json& cj = *stored;
    const std::string ns = cj["metadata"].value("namespace", "");
    const std::string uid = cj["metadata"].value("uid", "");
    std::vector<CronChild> children;
    for (const auto& [job_key, job] : jobs_) {
      if (job_key.compare(0, ns.size() + 1, ns + "/") == 0 && OwnedBy(*job, uid)) {
        children.push_back(ChildOf(*job));
      }
    }
    CronActions act = ReconcileCronJob(cj, children, now);
    for (const std::string& name : act.delete_jobs) DeleteJobAndPods(ObjectKey(ns, name), ops);
    json status = act.status;
    if (act.create) {
      Result<TimeZone> zone = ZoneOf(cj);
      json manifest = JobForSchedule(cj, *act.create, zone.ok() ? *zone : TimeZone());
      const std::string name = manifest["metadata"].value("name", "");
      const std::string job_uid = StableUid("Job", ns + "/" + name + "/" + uid);
      const User who = OwnerOfCron(cj);
      PodContext ctx;
      ctx.containers = opt_.containers;
      ctx.uid = who.uid;
      ctx.admin = who.admin;
      ctx.resolve_refs = false;
      json job;
      if (auto problem = DefaultJob(manifest, ns, job_uid, now, &job, &ctx)) {
        act.events.push_back({"Warning", "FailedCreate",
                              "Error creating job: " + problem->field + ": " + problem->type +
                                  (problem->detail.empty() ? "" : ": " + problem->detail)});
        status.erase("lastScheduleTime");
        if (cj["status"].contains("lastScheduleTime")) {
          status["lastScheduleTime"] = cj["status"]["lastScheduleTime"];
        }
      } else {
        job["berth"] = {{"owner", cj["berth"]["owner"]}, {"pods", json::object()}};
        PutJob(ObjectKey(ns, name), job, ops);
        json ref = {{"kind", "Job"},
                    {"namespace", ns},
                    {"name", name},
                    {"uid", job_uid},
                    {"apiVersion", "batch/v1"},
                    {"resourceVersion", std::to_string(jobs_rv_)}};
        if (!status["active"].is_array()) status["active"] = json::array();
        status["active"].push_back(std::move(ref));
      }
    }
    // Events once: one the last step also made (a Forbid still waiting, a deadline still missed)
    // is not made again.
    json said = json::array();
    const json& before = cj["berth"].contains("said") ? cj["berth"]["said"] : json::array();
    for (const CronEvent& e : act.events) {
      const std::string text = e.reason + ": " + e.message;
      said.push_back(text);
      if (std::find(before.begin(), before.end(), json(text)) != before.end()) continue;
      events_.push_back(std::make_shared<const json>(
          MakeEvent(Served(cj), e.type, e.reason, e.message, now, 1, "cronjob-controller")));
      if (events_.size() > kMaxEvents) events_.pop_front();
    }
    if (status == cj["status"] && said == before) continue;
    json next = cj;
    next["status"] = std::move(status);
    next["berth"]["said"] = std::move(said);
    PutCronJob(key, std::move(next), ops);
  }
}

net::HttpResponse Face::CronJobList(const Call& c) {
  const std::string ns = c.Namespace();
  return ListOrWatch(c.req, CronJobShape(), port_,
                     [this, ns](std::string* rv) { return CronJobObjects(ns, rv); });
}

net::HttpResponse Face::CronJobCreate(const Call& c) {
  Result<json> body = WorkloadCreateBody(c.req, c.Namespace());
  if (!body.ok()) return BadRequest(body.status().message());
  return CronJobCreateFrom(c, *body);
}

net::HttpResponse Face::CronJobCreateFrom(const Call& c, const json& body) {
  const std::string& ns = c.Namespace();
  {
    MutexLock l(mu_);
    if (!namespaces_.count(ns)) return StatusResponse(NotFoundStatus("namespaces", ns));
  }
  const int64_t now = port_.Now();
  const std::string name = NameToCreate(body);
  json manifest = body;
  if (!name.empty()) manifest["metadata"]["name"] = name;
  const std::string uid = StableUid(
      "CronJob", ns + "/" + name + "/" + std::to_string(now) + "/" + GenerateNameSuffix());
  PodContext ctx;
  ctx.containers = opt_.containers;
  ctx.uid = c.who.uid;
  ctx.admin = c.who.admin;
  ctx.resolve_refs = false;
  json cj;
  if (auto problem = DefaultCronJob(manifest, ns, uid, now, &cj, &ctx)) {
    return StatusResponse(InvalidStatusOf("CronJob.batch", name, *problem));
  }
  cj["berth"] = {
      {"owner",
       {{"uid", c.who.uid}, {"gid", c.who.gid}, {"user", c.who.name}, {"admin", c.who.admin}}}};
  if (Query(c.req, "dryRun") == "All") {
    return ObjectResponse(c.req, CronJobShape(), Served(cj), 201, now);
  }
  const std::string key = ObjectKey(ns, name);
  Status st = port_.Run([&](StateOps& ops) {
    {
      MutexLock l(mu_);
      if (cronjobs_.count(key)) return Status::AlreadyExists(key);
      PutCronJob(key, cj, ops);
    }
    OnPass(ops);
    return Status::Ok();
  });
  if (auto stopping = UnavailableResponse(st)) return *stopping;
  if (st.code() == StatusCode::kAlreadyExists) {
    return StatusResponse(AlreadyExistsStatus("cronjobs.batch", name));
  }
  if (!st.ok()) return BadRequest(st.message());
  return CronJobAnswer(c, key, 201);
}

net::HttpResponse Face::CronJobAnswer(const Call& c, const std::string& key, int status) {
  std::shared_ptr<const json> found;
  {
    MutexLock l(mu_);
    if (auto it = cronjobs_.find(key); it != cronjobs_.end()) found = it->second;
  }
  if (!found) return StatusResponse(NotFoundStatus("cronjobs.batch", c.Name()));
  return ObjectResponse(c.req, CronJobShape(), Served(*found), status, port_.Now());
}

net::HttpResponse Face::CronJobItem(Endpoint e, const Call& c) {
  const std::string& m = c.req.method;
  const std::string& ns = c.Namespace();
  const std::string& name = c.Name();
  const std::string key = ObjectKey(ns, name);
  std::shared_ptr<const json> current;
  {
    MutexLock l(mu_);
    if (auto it = cronjobs_.find(key); it != cronjobs_.end()) current = it->second;
  }
  if (!current) {
    const bool apply = c.req.Header("content-type").rfind("application/apply-patch", 0) == 0;
    if (m == "PATCH" && apply && e == Endpoint::kCronJobUpdate) {
      json body = json::parse(c.req.body, nullptr, false);
      if (!body.is_object()) return BadRequest("the body is not a JSON object");
      body["metadata"]["name"] = name;
      return CronJobCreateFrom(c, body);
    }
    return StatusResponse(NotFoundStatus("cronjobs.batch", name));
  }
  if (e == Endpoint::kCronJobGet) return CronJobAnswer(c, key, 200);
  if (!Owns(c.who, (*current)["berth"]["owner"].value("uid", UINT32_MAX))) {
    return StatusResponse(ForbiddenStatus(
        "cronjobs.batch", name,
        "User \"" + c.who.name + "\" cannot " + (m == "DELETE" ? "delete" : "update") +
            " resource \"cronjobs\" in API group \"batch\" in the namespace \"" + ns +
            "\": only its creator or an operator may"));
  }
  if (e == Endpoint::kCronJobOther) return MethodNotAllowedHere();
  if (e == Endpoint::kCronJobDelete) return CronJobDelete(c, *current);
  return CronJobUpdate(c, *current);
}

net::HttpResponse Face::CronJobDelete(const Call& c, const json& current) {
  const std::string& name = c.Name();
  const std::string key = ObjectKey(c.Namespace(), name);
  std::string policy = Query(c.req, "propagationPolicy");
  if (json opts = json::parse(c.req.body, nullptr, false); opts.is_object()) {
    policy = opts.value("propagationPolicy", policy);
  }
  if (policy.empty()) policy = "Background";
  if (policy != "Background" && policy != "Foreground" && policy != "Orphan") {
    return BadRequest("propagationPolicy: Unsupported value: \"" + policy +
                      "\": supported values: \"Orphan\", \"Background\", \"Foreground\"");
  }
  const std::string uid = current["metadata"].value("uid", "");
  Status st = port_.Run([&](StateOps& ops) {
    MutexLock l(mu_);
    if (!cronjobs_.erase(key)) return Status::NotFound(key);
    jobs_rv_ += 1;
    ops.DeleteMeta(kCronJobMetaPrefix + key);
    if (policy == "Orphan") return Status::Ok();
    std::vector<std::string> owned;
    for (const auto& [job_key, job] : jobs_) {
      if (OwnedBy(*job, uid)) owned.push_back(job_key);
    }
    for (const std::string& k : owned) DeleteJobAndPods(k, ops);
    return Status::Ok();
  });
  if (auto stopping = UnavailableResponse(st)) return *stopping;
  if (st.code() == StatusCode::kNotFound) {
    return StatusResponse(NotFoundStatus("cronjobs.batch", name));
  }
  return JsonResponse(
      200, {{"kind", "Status"},
            {"apiVersion", "v1"},
            {"metadata", json::object()},
            {"status", "Success"},
            {"details", {{"name", name}, {"group", "batch"}, {"kind", "cronjobs"}, {"uid", uid}}}});
}

net::HttpResponse Face::CronJobUpdate(const Call& c, const json& current) {
  const std::string& name = c.Name();
  const json served = Served(current);
  Result<json> changed = Status::Ok();
  if (c.req.method == "PUT") {
    json body = json::parse(c.req.body, nullptr, false);
    if (!body.is_object()) return BadRequest("the body is not a JSON object");
    const std::string rv = body["metadata"].value("resourceVersion", "");
    if (!rv.empty() && rv != served["metadata"].value("resourceVersion", "")) {
      return StatusResponse(StatusBody(
          409, "Conflict",
          "Operation cannot be fulfilled on cronjobs.batch \"" + name +
              "\": the object has been modified; please apply your changes to the latest "
              "version and try again",
          {{"name", name}, {"group", "batch"}, {"kind", "cronjobs"}}));
    }
    changed = std::move(body);
  } else {
    changed = ApplyPatch(c.req.Header("content-type"), served, c.req.body);
  }
  if (!changed.ok()) return PatchFailure(changed.status());
  json want = std::move(*changed);
  if (!want.is_object()) return BadRequest("the body is not a JSON object");
  want["metadata"]["name"] = name;
  // Checked and defaulted as a new one, then given back its identity, status and berth's part.
  PodContext ctx;
  ctx.containers = opt_.containers;
  ctx.uid = c.who.uid;
  ctx.admin = c.who.admin;
  ctx.resolve_refs = false;
  json next;
  if (auto problem = DefaultCronJob(want, c.Namespace(), served["metadata"].value("uid", ""),
                                    port_.Now(), &next, &ctx)) {
    return StatusResponse(InvalidStatusOf("CronJob.batch", name, *problem));
  }
  next["metadata"]["creationTimestamp"] = served["metadata"]["creationTimestamp"];
  const std::string key = ObjectKey(c.Namespace(), name);
  Status st = port_.Run([&](StateOps& ops) {
    {
      MutexLock l(mu_);
      auto it = cronjobs_.find(key);
      if (it == cronjobs_.end()) return Status::NotFound(key);
      json stored = next;
      stored["status"] = (*it->second)["status"];
      stored["berth"] = (*it->second)["berth"];
      stored["metadata"]["generation"] = (*it->second)["metadata"].value("generation", 1) +
                                         ((*it->second)["spec"] != stored["spec"] ? 1 : 0);
      PutCronJob(key, std::move(stored), ops);
    }
    OnPass(ops);
    return Status::Ok();
  });
  if (auto stopping = UnavailableResponse(st)) return *stopping;
  if (st.code() == StatusCode::kNotFound) {
    return StatusResponse(NotFoundStatus("cronjobs.batch", name));
  }
  return CronJobAnswer(c, key, 200);
}

}  // namespace berth::k8s
