// batch/v1 Jobs and the Job controller (docs/kubernetes.md). A Job is kept in the store as its
// object plus a private "berth" section (who made it, its pods and their last known states);
// the Job controller runs on the state thread after every batch of commands and makes pods from
// the template (one berth job each: parallelism, completions, Indexed completion indexes), counts
// successes and failures, retries failed pods up to backoffLimit, enforces activeDeadlineSeconds,
// suspends and resumes, sets the Complete / Failed conditions, and deletes finished Jobs after
// ttlSecondsAfterFinished.
#include <algorithm>
#include <random>

#include "controller/controller_k8s_http.h"
#include "k8s/codec.h"
#include "k8s/jobs.h"
#include "k8s/patch.h"

namespace berth::controller {
namespace {

using nlohmann::json;
using namespace k8sface;

std::optional<std::string> JobFieldOf(const json& job, const std::string& field) {
  return k8s::JobField(job, field);
}

const ResourceShape& JobShape() {
  static const ResourceShape kShape{
      "jobs", "JobList", "batch/v1", k8s::JobTableColumns(), &k8s::JobTableCells, &JobFieldOf};
  return kShape;
}

// The Job as clients see it: without berth's private section.
json Served(const json& stored) {
  json j = stored;
  j.erase("berth");
  return j;
}

bool HasCondition(const json& job, const char* type) {
  auto status = job.find("status");
  if (status == job.end() || !status->is_object()) return false;
  auto conds = status->find("conditions");
  if (conds == status->end() || !conds->is_array()) return false;
  for (const json& c : *conds) {
    if (c.is_object() && c.value("type", "") == type && c.value("status", "") == "True") {
      return true;
    }
  }
  return false;
}

void SetCondition(json& job, const std::string& type, bool status, const std::string& reason,
                  const std::string& message, int64_t now) {
  json& conds = job["status"]["conditions"];
  if (!conds.is_array()) conds = json::array();
  for (json& c : conds) {
    if (c.value("type", "") != type) continue;
    const std::string s = status ? "True" : "False";
    if (c.value("status", "") != s) c["lastTransitionTime"] = k8s::Rfc3339(now);
    c["status"] = s;
    c["reason"] = reason;
    c["message"] = message;
    c["lastProbeTime"] = k8s::Rfc3339(now);
    return;
  }
  conds.push_back({{"type", type},
                   {"status", status ? "True" : "False"},
                   {"reason", reason},
                   {"message", message},
                   {"lastProbeTime", k8s::Rfc3339(now)},
                   {"lastTransitionTime", k8s::Rfc3339(now)}});
}

// "0-2,4,6-7" from a sorted set of indexes.
std::string IndexRanges(const std::set<int>& indexes) {
  std::string out;
  for (auto it = indexes.begin(); it != indexes.end();) {
    int first = *it, last = *it;
    ++it;
    while (it != indexes.end() && *it == last + 1) last = *it++;
    out += (out.empty() ? "" : ",") + std::to_string(first);
    if (last > first) out += "-" + std::to_string(last);
  }
  return out;
}

// "0,2-3" -> {0, 2, 3}; nullopt for bad text.
std::optional<std::set<int>> ParseIndexRanges(const std::string& text) {
  std::set<int> out;
  size_t i = 0;
  while (i < text.size()) {
    size_t comma = std::min(text.find(',', i), text.size());
    const std::string part = text.substr(i, comma - i);
    const size_t dash = part.find('-');
    char* end = nullptr;
    const long a = std::strtol(part.c_str(), &end, 10);
    long b = a;
    if (dash != std::string::npos) b = std::strtol(part.c_str() + dash + 1, &end, 10);
    if (part.empty() || *end != '\0' || a < 0 || b < a || b - a > 100000) return std::nullopt;
    for (long k = a; k <= b; ++k) out.insert(static_cast<int>(k));
    i = comma + 1;
  }
  return out;
}

// The podFailurePolicy rule that matches a failed pod, as (action, index); nullopt for none.
// A pod berth stopped for a node failure or a preemption carries the DisruptionTarget condition.
std::optional<std::pair<std::string, size_t>> FailureRule(const json& policy, const json& pod) {
  const json& rules = policy.value("rules", json::array());
  const int exit_code = pod.value("exit_code", 1);
  const std::string state = pod.value("state", "");
  const bool disrupted = state == "NODE_FAIL" || state == "PREEMPTED";
  for (size_t i = 0; i < rules.size(); ++i) {
    const json& r = rules[i];
    bool match = false;
    if (r.contains("onExitCodes") && r["onExitCodes"].is_object()) {
      const json& on = r["onExitCodes"];
      const json& values = on.value("values", json::array());
      bool in = false;
      for (const json& v : values) in |= v.is_number_integer() && v.get<int>() == exit_code;
      match = on.value("operator", "In") == "In" ? in : !in;
      if (exit_code == 0) match = false;
    } else if (r.contains("onPodConditions") && r["onPodConditions"].is_array()) {
      for (const json& c : r["onPodConditions"]) {
        if (c.value("type", "") == "DisruptionTarget" && c.value("status", "True") == "True") {
          match |= disrupted;
        }
      }
    }
    if (match) return std::pair{r.value("action", "Count"), i};
  }
  return std::nullopt;
}

}  // namespace

void Controller::Impl::K8sReconcileJobs(Txn& t) {
  std::vector<std::pair<std::string, std::shared_ptr<const json>>> jobs;
  {
    std::lock_guard<std::mutex> l(k8s->mu);
    for (const auto& [key, j] : k8s->jobs) jobs.emplace_back(key, j);
  }
  const int64_t now = Now();
  for (const auto& [key, stored] : jobs) {
    // A Job whose stored form surprises the controller (a type no check foresaw) is skipped
    // with a message instead of stopping the state thread.
    try {
      // A finished Job has nothing to do until its TTL (if any) is due: skip it without a copy.
      if (HasCondition(*stored, "Complete") || HasCondition(*stored, "Failed")) {
        static const json kNone;
        const json& spec = stored->contains("spec") ? (*stored)["spec"] : kNone;
        const json& b = stored->contains("berth") ? (*stored)["berth"] : kNone;
        const json ttl = spec.is_object() && spec.contains("ttlSecondsAfterFinished")
                             ? spec["ttlSecondsAfterFinished"]
                             : json();
        const int64_t at = b.is_object() ? b.value("finished_at", now) : now;
        if (!ttl.is_number_integer() || at + ttl.get<int64_t>() > now) {
          continue;
        }
      }
      json j = *stored;
      const json before = j;
      std::vector<json> events;  // (type, reason, message)
      auto event = [&](const char* type, const std::string& reason, const std::string& message) {
        events.push_back({type, reason, message});
      };
      json& spec = j["spec"];
      json& status = j["status"];
      json& berth = j["berth"];
      if (!berth["pods"].is_object()) berth["pods"] = json::object();
      json& pods = berth["pods"];
      // The pods' states now (a pod no longer in the live view keeps its last known one).
      int active = 0, running = 0, succeeded = 0, failed = 0;
      std::set<int> done_indexes, active_indexes;
      std::vector<core::JobId> active_ids;
      std::string policy_failure;  // a pod matched a FailJob rule
      for (auto& [id_text, p] : pods.items()) {
        const core::JobId id = static_cast<core::JobId>(std::stoul(id_text));
        if (auto it = records.find(id); it != records.end()) {
          const core::Job& pj = it->second->job;
          p["state"] = std::string(core::JobStateName(pj.state));
          p["exit_code"] =
              pj.outcome.term_signal > 0 ? 128 + pj.outcome.term_signal : pj.outcome.exit_code;
        }
        const std::string state = p.value("state", "PENDING");
        const int index = p.value("index", -1);
        if (state == "COMPLETED") {
          ++succeeded;
          if (index >= 0) done_indexes.insert(index);
        } else if (k8s::PodPhase(state) == "Failed") {
          // A pod berth stopped for the Job itself (suspend, deadline) is not a failure; the pod
          // failure policy may ignore it or fail the Job at once.
          if (p.value("stopped", false)) continue;
          if (!p.contains("policy") && spec.contains("podFailurePolicy")) {
            std::optional<std::pair<std::string, size_t>> rule =
                FailureRule(spec["podFailurePolicy"], p);
            p["policy"] = rule ? rule->first : "Count";
            if (rule && rule->first == "FailJob") {
              p["policy_message"] = "Container for pod " + j["metadata"].value("namespace", "") +
                                    "/" + p.value("name", "") + " failed with exit code " +
                                    std::to_string(p.value("exit_code", 1)) +
                                    " matching FailJob rule at index " +
                                    std::to_string(rule->second);
            }
          }
          const std::string action = p.value("policy", "Count");
          if (action == "Ignore") continue;
          ++failed;
          if (action == "FailJob" && policy_failure.empty()) {
            policy_failure = p.value("policy_message", "");
          }
        } else {
          ++active;
          if (state == "RUNNING") ++running;
          if (index >= 0) active_indexes.insert(index);
          active_ids.push_back(id);
        }
      }
      const bool finished = HasCondition(j, "Complete") || HasCondition(j, "Failed");
      auto stop_active = [&] {
        for (core::JobId id : active_ids) {
          pods[std::to_string(id)]["stopped"] = true;
          K8sDeletePod(id, t);
        }
      };
      bool remove = false;
      if (finished) {
        const json& ttl = spec["ttlSecondsAfterFinished"];
        const int64_t at = berth.value("finished_at", now);
        if (ttl.is_number_integer() && at + ttl.get<int64_t>() <= now) remove = true;
      } else if (spec.value("suspend", false)) {
        if (active > 0) stop_active();
        if (!HasCondition(j, "Suspended")) {
          SetCondition(j, "Suspended", true, "JobSuspended", "Job suspended", now);
          event("Normal", "Suspended", "Job suspended");
        }
        status.erase("startTime");
        active = 0;
      } else {
        if (HasCondition(j, "Suspended")) {
          SetCondition(j, "Suspended", false, "JobResumed", "Job resumed", now);
          event("Normal", "Resumed", "Job resumed");
        }
        if (!status.contains("startTime")) status["startTime"] = k8s::Rfc3339(now);
        const int64_t started = k8s::ParseRfc3339(status.value("startTime", "")).value_or(now);
        // completions null: a work queue (done when a pod succeeded and none is left running).
        const bool work_queue = !spec.contains("completions") || spec["completions"].is_null();
        const int64_t completions =
            work_queue ? std::max(1, succeeded) : spec.value("completions", int64_t{1});
        const int64_t parallelism = spec.value("parallelism", int64_t{1});
        const bool indexed = spec.value("completionMode", "") == "Indexed";
        const json& deadline = spec["activeDeadlineSeconds"];
        std::string fail_reason, fail_message;
        // successPolicy (Indexed Jobs): a rule met ends the Job successfully.
        std::string success_rule;
        if (indexed && spec.contains("successPolicy")) {
          const json& rules = spec["successPolicy"].value("rules", json::array());
          for (size_t i = 0; i < rules.size() && success_rule.empty(); ++i) {
            const json& r = rules[i];
            std::set<int> want;
            bool all = true;
            if (r.contains("succeededIndexes")) {
              want = ParseIndexRanges(r.value("succeededIndexes", "")).value_or(std::set<int>{});
              all = false;
            }
            int64_t have = 0;
            bool every = true;
            for (int idx : want) {
              if (done_indexes.count(idx)) {
                ++have;
              } else {
                every = false;
              }
            }
            if (all) have = static_cast<int64_t>(done_indexes.size());
            const bool met = r.contains("succeededCount")
                                 ? have >= r.value("succeededCount", int64_t{0})
                                 : (!all && every && !want.empty());
            if (met) success_rule = "Matched rules at index " + std::to_string(i);
          }
        }
        if (!policy_failure.empty()) {
          fail_reason = "PodFailurePolicy";
          fail_message = policy_failure;
        } else if (!success_rule.empty()) {
          stop_active();
          active = 0;
          SetCondition(j, "SuccessCriteriaMet", true, "SuccessPolicy", success_rule, now);
          SetCondition(j, "Complete", true, "SuccessPolicy", success_rule, now);
          status["completionTime"] = k8s::Rfc3339(now);
          berth["finished_at"] = now;
          event("Normal", "Completed", "Job completed: " + success_rule);
        } else if (deadline.is_number_integer() && started + deadline.get<int64_t>() <= now) {
          fail_reason = "DeadlineExceeded";
          fail_message = "Job was active longer than specified deadline";
        } else if (failed > spec.value("backoffLimit", int64_t{6})) {
          fail_reason = "BackoffLimitExceeded";
          fail_message = "Job has reached the specified backoff limit";
        }
        const bool complete = indexed ? static_cast<int64_t>(done_indexes.size()) >= completions
                                      : succeeded >= completions;
        if (!success_rule.empty()) {
          // done above
        } else if (!fail_reason.empty()) {
          stop_active();
          active = 0;
          SetCondition(j, "FailureTarget", true, fail_reason, fail_message, now);
          SetCondition(j, "Failed", true, fail_reason, fail_message, now);
          berth["finished_at"] = now;
          event("Warning", fail_reason, fail_message);
        } else if (complete && active == 0) {
          SetCondition(j, "SuccessCriteriaMet", true, "CompletionsReached",
                       "Reached expected number of succeeded pods", now);
          SetCondition(j, "Complete", true, "CompletionsReached",
                       "Reached expected number of succeeded pods", now);
          status["completionTime"] = k8s::Rfc3339(now);
          berth["finished_at"] = now;
          event("Normal", "Completed", "Job completed");
        } else if (!complete) {
          // New pods: up to parallelism at once, never more than the completions still missing.
          std::vector<int> indexes;
          if (indexed) {
            for (int i = 0;
                 i < completions && static_cast<int64_t>(active + indexes.size()) < parallelism;
                 ++i) {
              if (!done_indexes.count(i) && !active_indexes.count(i)) indexes.push_back(i);
            }
          } else {
            const int64_t want =
                work_queue ? (succeeded > 0 ? 0 : parallelism - active)
                           : std::min<int64_t>(parallelism, completions - succeeded) - active;
            for (int64_t i = 0; i < want; ++i) indexes.push_back(-1);
          }
          // berth.io/gang: "true" asks for the pods as one all-or-nothing gang.
          const bool gang = j["metadata"]["annotations"].is_object() &&
                            j["metadata"]["annotations"].value("berth.io/gang", "") == "true";
          const json& owner = berth["owner"];
          Caller who;
          who.known = true;
          who.uid = owner.value("uid", 0u);
          who.gid = owner.value("gid", 0u);
          who.user = owner.value("user", "");
          who.admin = owner.value("admin", false);
          const std::string ns = j["metadata"].value("namespace", "");
          const std::string name = j["metadata"].value("name", "");
          for (int index : indexes) {
            const std::string pod_name =
                name + "-" + (index >= 0 ? std::to_string(index) + "-" : "") + GenerateNameSuffix();
            json manifest = k8s::PodFromTemplate(Served(j), index, pod_name);
            k8s::PodContext ctx;
            ctx.ns = ns;
            ctx.home = HomeOf(who.uid);
            ctx.log_dir = k8s->log_dir;
            ctx.now = now;
            k8s::PodMapping mapping;
            std::optional<k8s::FieldProblem> problem = k8s::MapPod(manifest, ctx, &mapping);
            if (gang) mapping.request["hold"] = true;  // released together, below
            Result<core::JobId> id = problem ? Result<core::JobId>(Status::InvalidArgument(
                                                   problem->field + ": " + problem->detail))
                                             : K8sSubmitPod(who, mapping, t);
            if (!id.ok()) {
              event("Warning", "FailedCreate",
                    "Error creating: pods \"" + pod_name + "\": " + id.status().message());
              break;
            }
            json p = {{"state", "PENDING"}, {"name", pod_name}};
            if (index >= 0) p["index"] = index;
            pods[std::to_string(*id)] = p;
            ++active;
            event("Normal", "SuccessfulCreate", "Created pod: " + pod_name);
          }
          if (gang) {
            // All or nothing: the held pods are released together only when a trial pass on a
            // copy of the cluster starts every one of them; the real pass right after this batch
            // then makes the same decision.
            std::vector<core::JobId> held;
            for (const auto& [id_text, pj] : pods.items()) {
              (void)pj;
              const core::Job* job = cs->FindJob(static_cast<core::JobId>(std::stoul(id_text)));
              if (job && job->state == core::JobState::kPending &&
                  job->spec.hold != core::HoldKind::kNone) {
                held.push_back(job->id);
              }
            }
            if (!held.empty()) {
              core::ClusterState trial = *cs;
              bool ok = true;
              for (core::JobId id : held) ok = ok && trial.Release(id, now).ok();
              std::set<core::JobId> starting;
              if (ok) {
                for (const core::PlannedStart& st :
                     core::Schedule(trial, now, scheduler->config()).starts) {
                  starting.insert(st.job);
                }
              }
              ok = ok && std::all_of(held.begin(), held.end(),
                                     [&](core::JobId id) { return starting.count(id) > 0; });
              if (ok) {
                for (core::JobId id : held) {
                  (void)cs->Release(id, now);
                  t.touched.insert(id);
                }
                dirty = true;
                event(
                    "Normal", "GangAdmitted",
                    "All " + std::to_string(held.size()) + " pods fit at once: released together");
              }
            }
          }
        }
      }
      status["active"] = active;
      status["ready"] = running;
      status["succeeded"] = succeeded;
      status["failed"] = failed;
      status["terminating"] = 0;
      status["uncountedTerminatedPods"] = json::object();
      if (spec.value("completionMode", "") == "Indexed") {
        status["completedIndexes"] = IndexRanges(done_indexes);
      }
      const std::string key_copy = key;
      std::lock_guard<std::mutex> l(k8s->mu);
      if (remove) {
        for (auto& [id_text, p] : pods.items()) {
          (void)p;
          K8sDeletePod(static_cast<core::JobId>(std::stoul(id_text)), t);
        }
        k8s->jobs.erase(key_copy);
        k8s->jobs_rv += 1;
        t.writes.push_back({store::Write::Kind::kDeleteMeta, {}, kJobMetaPrefix + key_copy, ""});
        continue;
      }
      json served = Served(j);
      for (const json& e : events) {
        k8s->events.push_back(std::make_shared<const json>(
            k8s::MakeEvent(served, e[0], e[1], e[2], now, 1, "job-controller")));
        if (k8s->events.size() > kMaxEvents) k8s->events.pop_front();
      }
      if (j == before) continue;
      k8s->jobs_rv += 1;
      j["metadata"]["resourceVersion"] = std::to_string(k8s->jobs_rv);
      t.writes.push_back({store::Write::Kind::kPutMeta, {}, kJobMetaPrefix + key_copy, j.dump()});
      k8s->jobs[key_copy] = std::make_shared<const json>(std::move(j));
    } catch (const std::exception& e) {
      std::fprintf(stderr, "berth controller: Kubernetes Job %s skipped: %s\n", key.c_str(),
                   e.what());
    }
  }
}

net::HttpResponse Controller::Impl::K8sJobs(const net::HttpRequest& req, const Caller& who,
                                            const std::string& ns,
                                            const std::vector<std::string>& rest) {
  const std::string& m = req.method;
  const ResourceShape& shape = JobShape();
  auto snapshot = [this, ns](std::string* rv) {
    Objects out;
    std::lock_guard<std::mutex> l(k8s->mu);
    *rv = std::to_string(k8s->jobs_rv);
    for (const auto& [key, j] : k8s->jobs) {
      if (!ns.empty() && key.compare(0, ns.size() + 1, ns + "/") != 0) continue;
      out[key] = Served(*j);
    }
    return out;
  };
  auto one = [this](const std::string& key) -> std::optional<json> {
    std::lock_guard<std::mutex> l(k8s->mu);
    auto it = k8s->jobs.find(key);
    if (it == k8s->jobs.end()) return std::nullopt;
    return *it->second;
  };
  // Creates the Job `body` (already known to be in `ns`); 201 with the object.
  auto create = [&](const json& body) -> net::HttpResponse {
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
    if (Query(req, "dryRun") == "All") return ObjectResponse(req, shape, Served(job), 201, Now());
    const std::string key = ObjectKey(ns, name);
    Reply r = Call([this, key, job](Txn& t, Reply* out) mutable {
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
    std::optional<json> made = one(key);
    if (!made) return StatusResponse(k8s::NotFoundStatus("jobs.batch", name));
    return ObjectResponse(req, shape, Served(*made), 201, Now());
  };
  if (rest.empty()) {
    if (m == "GET") return ListOrWatch(req, shape, watch_hub, snapshot, [this] { return Now(); });
    if (m != "POST" || ns.empty()) return MethodNotAllowedHere();
    json body = json::parse(req.body, nullptr, false);
    if (!body.is_object()) return BadRequest("the body is not a JSON object");
    if (body.contains("metadata") && body["metadata"].is_object() &&
        body["metadata"].contains("namespace") && body["metadata"]["namespace"] != ns) {
      return BadRequest(
          "the namespace of the provided object does not match the namespace sent on the "
          "request");
    }
    return create(body);
  }
  const std::string name = rest[0];
  const std::string key = ObjectKey(ns, name);
  const bool status_sub = rest.size() == 2 && rest[1] == "status";
  if (rest.size() > 2 || (rest.size() == 2 && !status_sub)) {
    return StatusResponse(k8s::StatusBody(
        404, "NotFound", "the server could not find the requested resource", json::object()));
  }
  std::optional<json> current = one(key);
  const std::string content_type = req.Header("content-type");
  const bool apply = content_type.rfind("application/apply-patch", 0) == 0;
  if (!current) {
    if (m == "PATCH" && apply && !status_sub) {  // server-side apply of a new object
      json body = json::parse(req.body, nullptr, false);
      if (!body.is_object()) return BadRequest("the body is not a JSON object");
      body["metadata"]["name"] = name;
      return create(body);
    }
    return StatusResponse(k8s::NotFoundStatus("jobs.batch", name));
  }
  if (m == "GET" || m == "HEAD") return ObjectResponse(req, shape, Served(*current), 200, Now());
  const json& owner = (*current)["berth"]["owner"];
  const bool may = who.admin || (who.known && owner.value("uid", UINT32_MAX) == who.uid);
  if (!may) {
    return StatusResponse(k8s::ForbiddenStatus(
        "jobs.batch", name,
        "User \"" + who.user + "\" cannot " + (m == "DELETE" ? "delete" : "update") +
            " resource \"jobs\" in API group \"batch\" in the namespace \"" + ns +
            "\": only its creator or an operator may"));
  }
  if (m == "DELETE") {
    std::string policy = Query(req, "propagationPolicy");
    if (json opts = json::parse(req.body, nullptr, false); opts.is_object()) {
      policy = opts.value("propagationPolicy", policy);
    }
    if (policy.empty()) policy = "Background";  // kubectl's default (--cascade=background)
    if (policy != "Background" && policy != "Foreground" && policy != "Orphan") {
      return BadRequest("propagationPolicy: Unsupported value: \"" + policy +
                        "\": supported values: \"Orphan\", \"Background\", \"Foreground\"");
    }
    const bool cascade = policy != "Orphan";
    Reply r = Call([this, key, cascade](Txn& t, Reply* out) {
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
                    {"uid", (*current)["metadata"].value("uid", "")}};
    return K8sJsonResponse(200, {{"kind", "Status"},
                                 {"apiVersion", "v1"},
                                 {"metadata", json::object()},
                                 {"status", "Success"},
                                 {"details", details}});
  }
  if (m != "PATCH" && m != "PUT") return MethodNotAllowedHere();
  const json served = Served(*current);
  Result<json> changed = Status::Ok();
  if (m == "PUT") {
    json body = json::parse(req.body, nullptr, false);
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
    changed = k8s::ApplyPatch(content_type, served, req.body);
  }
  if (!changed.ok()) {
    const bool unsupported = k8s::IsUnsupportedPatchType(changed.status());
    return StatusResponse(k8s::StatusBody(unsupported ? 415 : 422,
                                          unsupported ? "UnsupportedMediaType" : "Invalid",
                                          changed.status().message(), nullptr));
  }
  json want = std::move(*changed);
  if (!want.is_object() || !want["spec"].is_object()) {
    return StatusResponse(
        k8s::InvalidStatusOf("Job.batch", name, {"spec", "Required value", "", ""}));
  }
  // What may change: labels, annotations, and of the spec parallelism, suspend,
  // activeDeadlineSeconds, backoffLimit and ttlSecondsAfterFinished (the template and the
  // completions are immutable, as in Kubernetes).
  for (const char* field : {"template", "completions", "completionMode", "selector"}) {
    if (want["spec"].contains(field) && want["spec"][field] != served["spec"][field]) {
      return StatusResponse(k8s::InvalidStatusOf(
          "Job.batch", name,
          {std::string("spec.") + field, "Invalid value", "", "field is immutable"}));
    }
  }
  json next = *current;
  for (const char* field : {"parallelism", "suspend", "activeDeadlineSeconds", "backoffLimit",
                            "ttlSecondsAfterFinished"}) {
    if (!want["spec"].contains(field) || want["spec"][field].is_null()) {
      if (std::string_view(field) == "activeDeadlineSeconds" ||
          std::string_view(field) == "ttlSecondsAfterFinished") {
        next["spec"].erase(field);
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
    next["spec"][field] = v;
  }
  for (const char* key_name : {"labels", "annotations"}) {
    if (want["metadata"].contains(key_name) && want["metadata"][key_name].is_object()) {
      next["metadata"][key_name] = want["metadata"][key_name];
    } else {
      next["metadata"].erase(key_name);
    }
  }
  Reply r = Call([this, key, next](Txn& t, Reply* out) mutable {
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
  std::optional<json> after = one(key);
  if (!after) return StatusResponse(k8s::NotFoundStatus("jobs.batch", name));
  return ObjectResponse(req, shape, Served(*after), 200, Now());
}

}  // namespace berth::controller
