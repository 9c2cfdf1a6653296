// batch/v1 Jobs and the Job controller (docs/kubernetes.md). A Job is kept in the store as its
// object plus a private "berth" section (who made it, its pods and their last known states);
// the Job controller runs on the state thread after every batch of commands and makes pods from
// the template (one berth job each: parallelism, completions, Indexed completion indexes), counts
// successes and failures, retries failed pods up to backoffLimit, enforces activeDeadlineSeconds,
// suspends and resumes, sets the Complete / Failed conditions, and deletes finished Jobs after
// ttlSecondsAfterFinished.
#include <algorithm>
#include <functional>
#include <random>
#include <set>

#include "controller/controller_k8s_http.h"
#include "k8s/codec.h"
#include "k8s/job_controller.h"
#include "k8s/jobs.h"
#include "k8s/patch.h"

namespace berth::controller {
namespace {

using nlohmann::json;
using namespace k8sface;

// The Job as clients see it: without berth's private section.
json Served(const json& stored) {
  json j = stored;
  j.erase("berth");
  return j;
}

// The Jobs in `ns` ("" = all) as served, with the list's resourceVersion.
Objects JobObjects(K8sFace& face, const std::string& ns, std::string* rv) {
  Objects out;
  std::lock_guard<std::mutex> l(face.mu);
  *rv = std::to_string(face.jobs_rv);
  for (const auto& [key, j] : face.jobs) {
    if (!ns.empty() && key.compare(0, ns.size() + 1, ns + "/") != 0) continue;
    out[key] = Served(*j);
  }
  return out;
}

// A Job as stored ("namespace/name"); nullopt when there is none.
std::optional<json> FindJob(K8sFace& face, const std::string& key) {
  std::lock_guard<std::mutex> l(face.mu);
  auto it = face.jobs.find(key);
  if (it == face.jobs.end()) return std::nullopt;
  return *it->second;
}

// The Job a PUT or PATCH of `served` asks for; the answer when it cannot be read.
std::optional<net::HttpResponse> JobWanted(const K8sCall& c, const json& served, json* want) {
  const std::string& name = c.Name();
  Result<json> changed = Status::Ok();
  if (c.req.method == "PUT") {
    json body = json::parse(c.req.body, nullptr, false);
    if (!body.is_object()) return BadRequest("the body is not a JSON object");
    const std::string rv = body["metadata"].value("resourceVersion", "");
    if (!rv.empty() && rv != served["metadata"].value("resourceVersion", "")) {
      return StatusResponse(k8s::StatusBody(
          409, "Conflict",
          "Operation cannot be fulfilled on jobs.batch \"" + name +
              "\": the object has been modified; please apply your changes to the latest "
              "version and try again",
          {{"name", name}, {"group", "batch"}, {"kind", "jobs"}}));
    }
    changed = std::move(body);
  } else {
    changed = k8s::ApplyPatch(c.req.Header("content-type"), served, c.req.body);
  }
  if (!changed.ok()) return PatchFailure(changed.status());
  *want = std::move(*changed);
  if (!want->is_object() || !(*want)["spec"].is_object()) {
    return StatusResponse(
        k8s::InvalidStatusOf("Job.batch", name, {"spec", "Required value", "", ""}));
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
      return StatusResponse(k8s::InvalidStatusOf(
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
      return StatusResponse(k8s::InvalidStatusOf(
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

// The Caller whose pods a Job runs: its owner.
Caller OwnerOf(const ::berth::k8s::JobOwner& owner) {
  Caller who;
  who.known = true;
  who.uid = owner.uid;
  who.gid = owner.gid;
  who.user = owner.user;
  who.admin = owner.admin;
  return who;
}

k8s::PodContext PodContextOf(const std::string& ns, const std::string& home,
                             const std::string& log_dir, int64_t now) {
  k8s::PodContext ctx;
  ctx.ns = ns;
  ctx.home = home;
  ctx.log_dir = log_dir;
  ctx.now = now;
  return ctx;
}

// Makes the pods actions->create asks for, in order, with `submit`; the first that cannot be made
// ends the round with a FailedCreate event.
void CreatePods(const json& job, const k8s::PodContext& ctx,
                const std::function<Result<core::JobId>(const k8s::PodMapping&)>& submit,
                ::berth::k8s::JobActions* actions) {
  namespace jobctl = ::berth::k8s;
  for (int index : actions->create) {
    const std::string pod_name = jobctl::JobPodName(actions->job.name, index, GenerateNameSuffix());
    json manifest = k8s::PodFromTemplate(job, index, pod_name);
    k8s::PodMapping mapping;
    std::optional<k8s::FieldProblem> problem = k8s::MapPod(manifest, ctx, &mapping);
    if (actions->job.gang) mapping.request["hold"] = true;  // released together, below
    Result<core::JobId> id =
        problem
            ? Result<core::JobId>(Status::InvalidArgument(problem->field + ": " + problem->detail))
            : submit(mapping);
    if (!id.ok()) {
      actions->events.push_back(
          {"Warning", "FailedCreate",
           "Error creating: pods \"" + pod_name + "\": " + id.status().message()});
      return;
    }
    jobctl::AddCreatedPod(*id, pod_name, index, actions);
  }
}

// berth.io/gang Jobs, all or nothing: the held pods are released together only when a trial pass
// on a copy of the cluster starts every one of them; the real pass right after this batch then
// makes the same decision. Returns how many it released.
size_t ReleaseGangIfItFits(const json& pods, const core::SchedulerConfig& config, int64_t now,
                           core::ClusterState* cs, Txn* t) {
  std::vector<core::JobId> held;
  for (const auto& [id_text, pj] : pods.items()) {
    (void)pj;
    const core::Job* job = cs->FindJob(static_cast<core::JobId>(std::stoul(id_text)));
    if (job && job->state == core::JobState::kPending && job->spec.hold != core::HoldKind::kNone) {
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

void Controller::Impl::K8sReconcileJobs(Txn& t) {
  namespace jobctl = ::berth::k8s;
  std::vector<std::pair<std::string, std::shared_ptr<const json>>> jobs;
  {
    std::lock_guard<std::mutex> l(k8s->mu);
    for (const auto& [key, j] : k8s->jobs) jobs.emplace_back(key, j);
  }
  const int64_t now = Now();
  for (const auto& [key, stored] : jobs) {
    if (!jobctl::NeedsReconcile(*stored, now)) continue;
    // A Job whose stored form surprises the controller is skipped with a message instead of
    // stopping the state thread.
    Result<jobctl::JobRecord> job = jobctl::DecodeJob(*stored);
    if (!job.ok()) {
      std::fprintf(stderr, "berth controller: Kubernetes Job %s skipped: %s\n", key.c_str(),
                   job.status().message().c_str());
      continue;
    }
    // The pods' states now (a pod no longer in the live view keeps its last known one).
    for (jobctl::JobPod& p : job->pods) {
      if (auto it = own_records().find(p.id); it != own_records().end()) {
        const core::Job& pj = it->second->job;
        p.state = std::string(core::JobStateName(pj.state));
        p.exit_code =
            pj.outcome.term_signal > 0 ? 128 + pj.outcome.term_signal : pj.outcome.exit_code;
      }
    }
    jobctl::JobActions act = jobctl::Reconcile(*job, now);
    for (core::JobId id : act.stop) K8sDeletePod(id, t);
    const Caller who = OwnerOf(act.job.owner);
    if (!act.create.empty()) {
      CreatePods(
          *stored, PodContextOf(act.job.ns, HomeOf(who.uid), k8s->log_dir, now),
          [&](const k8s::PodMapping& m) {
            state_thread.AssertHeld();  // called back by CreatePods, on this thread
            return K8sSubmitPod(who, m, t);
          },
          &act);
    }
    json j = *stored;
    jobctl::EncodeJob(act.job, &j);
    if (act.admit_gang) {
      if (size_t n = ReleaseGangIfItFits(j["berth"]["pods"], scheduler->config(), now, &*cs, &t)) {
        dirty = true;
        act.events.push_back({"Normal", "GangAdmitted",
                              "All " + std::to_string(n) + " pods fit at once: released together"});
      }
    }
    std::lock_guard<std::mutex> l(k8s->mu);
    if (act.delete_job) {
      for (const jobctl::JobPod& p : act.job.pods) K8sDeletePod(p.id, t);
      k8s->jobs.erase(key);
      k8s->jobs_rv += 1;
      t.writes.push_back({store::Write::Kind::kDeleteMeta, {}, kJobMetaPrefix + key, ""});
      continue;
    }
    for (const jobctl::JobEvent& e : act.events) {
      k8s->events.push_back(std::make_shared<const json>(
          k8s::MakeEvent(*stored, e.type, e.reason, e.message, now, 1, "job-controller")));
      if (k8s->events.size() > kMaxEvents) k8s->events.pop_front();
    }
    if (j == *stored) continue;
    k8s->jobs_rv += 1;
    j["metadata"]["resourceVersion"] = std::to_string(k8s->jobs_rv);
    t.writes.push_back({store::Write::Kind::kPutMeta, {}, kJobMetaPrefix + key, j.dump()});
    k8s->jobs[key] = std::make_shared<const json>(std::move(j));
  }
}

net::HttpResponse Controller::Impl::K8sJobList(const K8sCall& c) {
  std::shared_ptr<K8sFace> face = k8s;
  const std::string ns = c.Namespace();
  return ListOrWatch(
      c.req, JobShape(), watch_hub,
      [face, ns](std::string* rv) { return JobObjects(*face, ns, rv); }, [this] { return Now(); });
}

net::HttpResponse Controller::Impl::K8sJobCreate(const K8sCall& c) {
  json body = json::parse(c.req.body, nullptr, false);
  if (!body.is_object()) return BadRequest("the body is not a JSON object");
  if (body.contains("metadata") && body["metadata"].is_object() &&
      body["metadata"].contains("namespace") && body["metadata"]["namespace"] != c.Namespace()) {
    return BadRequest(
        "the namespace of the provided object does not match the namespace sent on the "
        "request");
  }
  return K8sJobCreateFrom(c, body);
}

net::HttpResponse Controller::Impl::K8sJobCreateFrom(const K8sCall& c, const json& body) {
  const std::string& ns = c.Namespace();
  const Caller& who = c.who;
  {
    std::lock_guard<std::mutex> l(k8s->mu);
    if (!k8s->namespaces.count(ns)) return StatusResponse(k8s::NotFoundStatus("namespaces", ns));
  }
  const int64_t now = Now();
  std::string name;
  if (body.is_object() && body.contains("metadata") && body["metadata"].is_object()) {
    name = body["metadata"].value("name", "");
    if (name.empty() && body["metadata"].contains("generateName")) {
      name = body["metadata"].value("generateName", "") + GenerateNameSuffix();
    }
  }
  json manifest = body;
  if (!name.empty()) manifest["metadata"]["name"] = name;
  const std::string uid = k8s::StableUid(
      "Job", ns + "/" + name + "/" + std::to_string(now) + "/" + GenerateNameSuffix());
  json job;
  if (auto problem = k8s::DefaultJob(manifest, ns, uid, now, &job)) {
    return StatusResponse(k8s::InvalidStatusOf("Job.batch", name, *problem));
  }
  job["berth"] = {
      {"owner", {{"uid", who.uid}, {"gid", who.gid}, {"user", who.user}, {"admin", who.admin}}},
      {"pods", json::object()}};
  if (Query(c.req, "dryRun") == "All") {
    return ObjectResponse(c.req, JobShape(), Served(job), 201, Now());
  }
  const std::string key = ObjectKey(ns, name);
  Reply r = Call([this, key, job](Txn& t, Reply* out) mutable {
    state_thread.AssertHeld();  // a command: on the state thread
    {
      std::lock_guard<std::mutex> l(k8s->mu);
      if (k8s->jobs.count(key)) {
        out->status = Status::AlreadyExists(key);
        return;
      }
      k8s->jobs_rv += 1;
      job["metadata"]["resourceVersion"] = std::to_string(k8s->jobs_rv);
      t.writes.push_back({store::Write::Kind::kPutMeta, {}, kJobMetaPrefix + key, job.dump()});
      k8s->jobs[key] = std::make_shared<const json>(job);
    }
    K8sReconcileJobs(t);
  });
  if (auto stopping = UnavailableResponse(r.status)) return *stopping;
  if (r.status.code() == StatusCode::kAlreadyExists) {
    return StatusResponse(k8s::AlreadyExistsStatus("jobs.batch", name));
  }
  if (!r.status.ok()) return BadRequest(r.status.message());
  std::optional<json> made = FindJob(*k8s, key);
  if (!made) return StatusResponse(k8s::NotFoundStatus("jobs.batch", name));
  return ObjectResponse(c.req, JobShape(), Served(*made), 201, Now());
}

net::HttpResponse Controller::Impl::K8sJobItem(K8sEndpoint e, const K8sCall& c) {
  const std::string& m = c.req.method;
  const std::string& ns = c.Namespace();
  const std::string& name = c.Name();
  std::optional<json> current = FindJob(*k8s, ObjectKey(ns, name));
  if (!current) {
    const bool apply = c.req.Header("content-type").rfind("application/apply-patch", 0) == 0;
    if (m == "PATCH" && apply && e == K8sEndpoint::kJobUpdate) {  // server-side apply: a new Job
      json body = json::parse(c.req.body, nullptr, false);
      if (!body.is_object()) return BadRequest("the body is not a JSON object");
      body["metadata"]["name"] = name;
      return K8sJobCreateFrom(c, body);
    }
    return StatusResponse(k8s::NotFoundStatus("jobs.batch", name));
  }
  if (e == K8sEndpoint::kJobGet) {
    return ObjectResponse(c.req, JobShape(), Served(*current), 200, Now());
  }
  const json& owner = (*current)["berth"]["owner"];
  const Caller& who = c.who;
  if (!who.admin && !(who.known && owner.value("uid", UINT32_MAX) == who.uid)) {
    return StatusResponse(k8s::ForbiddenStatus(
        "jobs.batch", name,
        "User \"" + who.user + "\" cannot " + (m == "DELETE" ? "delete" : "update") +
            " resource \"jobs\" in API group \"batch\" in the namespace \"" + ns +
            "\": only its creator or an operator may"));
  }
  if (e == K8sEndpoint::kJobDelete) return K8sJobDelete(c, *current);
  if (e == K8sEndpoint::kJobOther) return MethodNotAllowedHere();
  return K8sJobUpdate(c, *current);
}

net::HttpResponse Controller::Impl::K8sJobDelete(const K8sCall& c, const json& current) {
  const std::string& name = c.Name();
  const std::string key = ObjectKey(c.Namespace(), name);
  std::string policy = Query(c.req, "propagationPolicy");
  if (json opts = json::parse(c.req.body, nullptr, false); opts.is_object()) {
    policy = opts.value("propagationPolicy", policy);
  }
  if (policy.empty()) policy = "Background";  // kubectl's default (--cascade=background)
  if (policy != "Background" && policy != "Foreground" && policy != "Orphan") {
    return BadRequest("propagationPolicy: Unsupported value: \"" + policy +
                      "\": supported values: \"Orphan\", \"Background\", \"Foreground\"");
  }
  const bool cascade = policy != "Orphan";
  Reply r = Call([this, key, cascade](Txn& t, Reply* out) {
    state_thread.AssertHeld();  // a command: on the state thread
    std::lock_guard<std::mutex> l(k8s->mu);
    auto it = k8s->jobs.find(key);
    if (it == k8s->jobs.end()) {
      out->status = Status::NotFound(key);
      return;
    }
    std::shared_ptr<const json> job = it->second;
    k8s->jobs.erase(it);
    k8s->jobs_rv += 1;
    t.writes.push_back({store::Write::Kind::kDeleteMeta, {}, kJobMetaPrefix + key, ""});
    if (!cascade) return;
    for (const auto& [id_text, p] : (*job)["berth"]["pods"].items()) {
      (void)p;
      K8sDeletePod(static_cast<core::JobId>(std::stoul(id_text)), t);
    }
  });
  if (auto stopping = UnavailableResponse(r.status)) return *stopping;
  if (r.status.code() == StatusCode::kNotFound) {
    return StatusResponse(k8s::NotFoundStatus("jobs.batch", name));
  }
  json details = {{"name", name},
                  {"group", "batch"},
                  {"kind", "jobs"},
                  {"uid", current["metadata"].value("uid", "")}};
  return K8sJsonResponse(200, {{"kind", "Status"},
                               {"apiVersion", "v1"},
                               {"metadata", json::object()},
                               {"status", "Success"},
                               {"details", details}});
}

net::HttpResponse Controller::Impl::K8sJobUpdate(const K8sCall& c, const json& current) {
  const json served = Served(current);
  json want;
  if (auto refused = JobWanted(c, served, &want)) return *refused;
  json next;
  if (auto refused = JobNext(current, served, std::move(want), c.Name(), &next)) return *refused;
  return K8sJobCommit(c, std::move(next));
}

net::HttpResponse Controller::Impl::K8sJobCommit(const K8sCall& c, json next) {
  const std::string& name = c.Name();
  const std::string key = ObjectKey(c.Namespace(), name);
  Reply r = Call([this, key, next](Txn& t, Reply* out) mutable {
    state_thread.AssertHeld();  // a command: on the state thread
    {
      std::lock_guard<std::mutex> l(k8s->mu);
      auto it = k8s->jobs.find(key);
      if (it == k8s->jobs.end()) {
        out->status = Status::NotFound(key);
        return;
      }
      // The controller's fields stay the controller's.
      next["status"] = (*it->second)["status"];
      next["berth"] = (*it->second)["berth"];
      next["metadata"]["generation"] = (*it->second)["metadata"].value("generation", 1) +
                                       ((*it->second)["spec"] != next["spec"] ? 1 : 0);
      k8s->jobs_rv += 1;
      next["metadata"]["resourceVersion"] = std::to_string(k8s->jobs_rv);
      t.writes.push_back({store::Write::Kind::kPutMeta, {}, kJobMetaPrefix + key, next.dump()});
      it->second = std::make_shared<const json>(next);
    }
    K8sReconcileJobs(t);
  });
  if (auto stopping = UnavailableResponse(r.status)) return *stopping;
  if (r.status.code() == StatusCode::kNotFound) {
    return StatusResponse(k8s::NotFoundStatus("jobs.batch", name));
  }
  std::optional<json> after = FindJob(*k8s, key);
  if (!after) return StatusResponse(k8s::NotFoundStatus("jobs.batch", name));
  return ObjectResponse(c.req, JobShape(), Served(*after), 200, Now());
}

}  // namespace berth::controller
