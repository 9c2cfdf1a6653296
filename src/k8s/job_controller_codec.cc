// The stored Job object <-> JobRecord (job_controller.h). A Job was checked when it was made
// (k8s::DefaultJob), so a field of another type than expected means a damaged object: it is
// refused, and the controller skips that Job with a message.
#include <string>

#include "k8s/job_controller.h"

namespace berth::k8s {
namespace {

using nlohmann::json;

const json& MemberOf(const json& obj, const char* key) {
  static const json kNull;
  if (!obj.is_object()) return kNull;
  auto it = obj.find(key);
  return it == obj.end() ? kNull : *it;
}

// Lenient text: a field that is not text reads as empty.
std::string TextOf(const json& obj, const char* key) {
  const json& v = MemberOf(obj, key);
  return v.is_string() ? v.get<std::string>() : "";
}

Status Wrong(const std::string& where, const char* what) {
  return Status::InvalidArgument(where + ": not " + what);
}

// A number that may be absent (its default then); of another type, an error.
Result<int64_t> Number(const json& obj, const char* key, int64_t dflt, const std::string& where) {
  const json& v = MemberOf(obj, key);
  if (v.is_null() && !(obj.is_object() && obj.contains(key))) return dflt;
  if (!v.is_number()) return Wrong(where + key, "a number");
  return v.get<int64_t>();
}

// An integer read only when it is one (activeDeadlineSeconds, ttlSecondsAfterFinished).
std::optional<int64_t> IntegerIfAny(const json& obj, const char* key) {
  const json& v = MemberOf(obj, key);
  if (!v.is_number_integer()) return std::nullopt;
  return v.get<int64_t>();
}

Result<std::optional<std::string>> OptionalText(const json& obj, const char* key,
                                                const std::string& where) {
  if (!obj.is_object() || !obj.contains(key)) return std::optional<std::string>();
  const json& v = obj.at(key);
  if (!v.is_string()) return Wrong(where + key, "text");
  return std::optional<std::string>(v.get<std::string>());
}

Result<PodFailureRule> DecodeFailureRule(const json& r, const std::string& where) {
  if (!r.is_object()) return Wrong(where, "an object");
  PodFailureRule rule;
  const json& action = MemberOf(r, "action");
  if (!action.is_null() && !action.is_string()) return Wrong(where + ".action", "text");
  if (action.is_string()) rule.action = action.get<std::string>();
  if (const json& on = MemberOf(r, "onExitCodes"); on.is_object()) {
    rule.on_exit_codes = true;
    rule.exit_codes_in = MemberOf(on, "operator").is_null() || TextOf(on, "operator") == "In";
    const json& values = MemberOf(on, "values");
    if (values.is_array()) {
      for (const json& v : values) {
        if (v.is_number_integer()) rule.exit_codes.push_back(v.get<int64_t>());
      }
    }
  } else if (const json& conds = MemberOf(r, "onPodConditions"); conds.is_array()) {
    for (const json& c : conds) {
      const json& status = MemberOf(c, "status");
      rule.on_disruption |= TextOf(c, "type") == "DisruptionTarget" &&
                            (status.is_null() || TextOf(c, "status") == "True");
    }
  }
  return rule;
}

Result<SuccessRule> DecodeSuccessRule(const json& r, const std::string& where) {
  if (!r.is_object()) return Wrong(where, "an object");
  SuccessRule rule;
  BERTH_ASSIGN_OR_RETURN(rule.succeeded_indexes, OptionalText(r, "succeededIndexes", where + "."));
  if (r.contains("succeededCount")) {
    if (!r["succeededCount"].is_number()) return Wrong(where + ".succeededCount", "a number");
    rule.succeeded_count = r["succeededCount"].get<int64_t>();
  }
  return rule;
}

// The rules of a podFailurePolicy or successPolicy at `where`, each read with `decode`.
template <typename Rule>
Status DecodeRules(const json& policy, const std::string& where,
                   Result<Rule> (*decode)(const json&, const std::string&),
                   std::optional<std::vector<Rule>>* out) {
  const json& rules = MemberOf(policy, "rules");
  out->emplace();
  for (size_t i = 0; rules.is_array() && i < rules.size(); ++i) {
    BERTH_ASSIGN_OR_RETURN(Rule rule,
                           decode(rules[i], where + ".rules[" + std::to_string(i) + "]"));
    (*out)->push_back(std::move(rule));
  }
  return Status::Ok();
}

Status DecodePolicies(const json& spec, JobSpec* out) {
  if (spec.contains("podFailurePolicy")) {
    BERTH_RETURN_IF_ERROR(DecodeRules(spec["podFailurePolicy"], "spec.podFailurePolicy",
                                      &DecodeFailureRule, &out->pod_failure_policy));
  }
  if (spec.contains("successPolicy")) {
    BERTH_RETURN_IF_ERROR(DecodeRules(spec["successPolicy"], "spec.successPolicy",
                                      &DecodeSuccessRule, &out->success_policy));
  }
  return Status::Ok();
}

Result<JobSpec> DecodeSpec(const json& spec) {
  if (!spec.is_object()) return Wrong("spec", "an object");
  JobSpec out;
  BERTH_ASSIGN_OR_RETURN(out.parallelism, Number(spec, "parallelism", 1, "spec."));
  if (!MemberOf(spec, "completions").is_null()) {
    BERTH_ASSIGN_OR_RETURN(out.completions, Number(spec, "completions", 1, "spec."));
  }
  BERTH_ASSIGN_OR_RETURN(std::optional<std::string> mode,
                         OptionalText(spec, "completionMode", "spec."));
  out.indexed = mode == "Indexed";
  BERTH_ASSIGN_OR_RETURN(out.backoff_limit, Number(spec, "backoffLimit", 6, "spec."));
  out.active_deadline_seconds = IntegerIfAny(spec, "activeDeadlineSeconds");
  out.ttl_seconds_after_finished = IntegerIfAny(spec, "ttlSecondsAfterFinished");
  if (spec.contains("suspend")) {
    if (!spec["suspend"].is_boolean()) return Wrong("spec.suspend", "a boolean");
    out.suspend = spec["suspend"].get<bool>();
  }
  BERTH_RETURN_IF_ERROR(DecodePolicies(spec, &out));
  return out;
}

Result<JobStatus> DecodeStatus(const json& status) {
  JobStatus out;
  if (status.is_null()) return out;
  if (!status.is_object()) return Wrong("status", "an object");
  BERTH_ASSIGN_OR_RETURN(out.start_time, OptionalText(status, "startTime", "status."));
  if (MemberOf(status, "completionTime").is_string()) {
    out.completion_time = status["completionTime"].get<std::string>();
  }
  for (auto [key, count] : {std::pair{"active", &out.active},
                            {"ready", &out.ready},
                            {"succeeded", &out.succeeded},
                            {"failed", &out.failed}}) {
    *count = IntegerIfAny(status, key).value_or(0);
  }
  if (MemberOf(status, "completedIndexes").is_string()) {
    out.completed_indexes = status["completedIndexes"].get<std::string>();
  }
  const json& conds = MemberOf(status, "conditions");
  for (size_t i = 0; conds.is_array() && i < conds.size(); ++i) {
    const json& c = conds[i];
    if (!c.is_object()) continue;
    out.conditions.push_back({TextOf(c, "type"), TextOf(c, "status"), TextOf(c, "reason"),
                              TextOf(c, "message"), TextOf(c, "lastProbeTime"),
                              TextOf(c, "lastTransitionTime")});
  }
  return out;
}

Result<JobPod> DecodePod(const std::string& id_text, const json& p) {
  const std::string where = "berth.pods." + id_text;
  char* end = nullptr;
  const unsigned long id = std::strtoul(id_text.c_str(), &end, 10);
  if (id_text.empty() || *end != '\0' || id > UINT32_MAX) return Wrong(where, "a job id");
  if (!p.is_object()) return Wrong(where, "an object");
  JobPod pod;
  pod.id = static_cast<core::JobId>(id);
  pod.name = TextOf(p, "name");
  BERTH_ASSIGN_OR_RETURN(int64_t index, Number(p, "index", -1, where + "."));
  pod.index = static_cast<int>(index);
  BERTH_ASSIGN_OR_RETURN(pod.state, OptionalText(p, "state", where + "."));
  if (p.contains("exit_code")) {
    BERTH_ASSIGN_OR_RETURN(int64_t code, Number(p, "exit_code", 1, where + "."));
    pod.exit_code = static_cast<int>(code);
  }
  if (p.contains("stopped")) {
    if (!p["stopped"].is_boolean()) return Wrong(where + ".stopped", "a boolean");
    pod.stopped = p["stopped"].get<bool>();
  }
  BERTH_ASSIGN_OR_RETURN(pod.policy, OptionalText(p, "policy", where + "."));
  BERTH_ASSIGN_OR_RETURN(pod.policy_message, OptionalText(p, "policy_message", where + "."));
  return pod;
}

Status DecodeBerth(const json& berth, JobRecord* out) {
  if (berth.is_null()) return Status::Ok();
  if (!berth.is_object()) return Wrong("berth", "an object");
  const json& owner = MemberOf(berth, "owner");
  out->owner.uid = MemberOf(owner, "uid").is_number_unsigned() ? owner["uid"].get<uint32_t>() : 0;
  out->owner.gid = MemberOf(owner, "gid").is_number_unsigned() ? owner["gid"].get<uint32_t>() : 0;
  out->owner.user = TextOf(owner, "user");
  out->owner.admin = MemberOf(owner, "admin").is_boolean() && owner["admin"].get<bool>();
  if (const json& pods = MemberOf(berth, "pods"); pods.is_object()) {
    for (const auto& [id_text, p] : pods.items()) {
      BERTH_ASSIGN_OR_RETURN(JobPod pod, DecodePod(id_text, p));
      out->pods.push_back(std::move(pod));
    }
  }
  if (berth.contains("finished_at")) {
    BERTH_ASSIGN_OR_RETURN(int64_t at, Number(berth, "finished_at", 0, "berth."));
    out->finished_at = at;
  }
  return Status::Ok();
}

bool HasCondition(const json& job, const char* type) {
  const json& conds = MemberOf(MemberOf(job, "status"), "conditions");
  if (!conds.is_array()) return false;
  for (const json& c : conds) {
    if (TextOf(c, "type") == type && TextOf(c, "status") == "True") return true;
  }
  return false;
}

void EncodeConditions(const std::vector<JobCondition>& conditions, json* status) {
  json& conds = (*status)["conditions"];
  if (!conds.is_array()) conds = json::array();
  for (const JobCondition& c : conditions) {
    json* entry = nullptr;
    for (json& e : conds) {
      if (e.is_object() && TextOf(e, "type") == c.type) entry = &e;
      if (entry) break;
    }
    if (!entry) entry = &conds.emplace_back(json{{"type", c.type}});
    (*entry)["status"] = c.status;
    (*entry)["reason"] = c.reason;
    (*entry)["message"] = c.message;
    (*entry)["lastProbeTime"] = c.last_probe_time;
    (*entry)["lastTransitionTime"] = c.last_transition_time;
  }
}

void EncodePod(const JobPod& pod, json* entry) {
  if (!entry->is_object()) *entry = json::object();
  json& p = *entry;
  if (!pod.name.empty()) p["name"] = pod.name;
  if (pod.index >= 0) p["index"] = pod.index;
  if (pod.state) p["state"] = *pod.state;
  if (pod.exit_code) p["exit_code"] = *pod.exit_code;
  if (pod.stopped) p["stopped"] = true;
  if (pod.policy) p["policy"] = *pod.policy;
  if (pod.policy_message) p["policy_message"] = *pod.policy_message;
}

}  // namespace

Result<JobRecord> DecodeJob(const json& stored) {
  if (!stored.is_object()) return Wrong("job", "an object");
  JobRecord out;
  const json& meta = MemberOf(stored, "metadata");
  out.ns = TextOf(meta, "namespace");
  out.name = TextOf(meta, "name");
  const json& gang = MemberOf(MemberOf(meta, "annotations"), "berth.io/gang");
  out.gang = gang.is_string() && gang.get<std::string>() == "true";
  BERTH_ASSIGN_OR_RETURN(out.spec, DecodeSpec(MemberOf(stored, "spec")));
  BERTH_ASSIGN_OR_RETURN(out.status, DecodeStatus(MemberOf(stored, "status")));
  BERTH_RETURN_IF_ERROR(DecodeBerth(MemberOf(stored, "berth"), &out));
  return out;
}

void EncodeJob(const JobRecord& job, json* stored) {
  json& status = (*stored)["status"];
  if (!status.is_object()) status = json::object();
  if (job.status.start_time) {
    status["startTime"] = *job.status.start_time;
  } else {
    status.erase("startTime");
  }
  if (job.status.completion_time) status["completionTime"] = *job.status.completion_time;
  status["active"] = job.status.active;
  status["ready"] = job.status.ready;
  status["succeeded"] = job.status.succeeded;
  status["failed"] = job.status.failed;
  status["terminating"] = 0;
  status["uncountedTerminatedPods"] = json::object();
  if (job.status.completed_indexes) status["completedIndexes"] = *job.status.completed_indexes;
  if (!job.status.conditions.empty()) EncodeConditions(job.status.conditions, &status);
  json& berth = (*stored)["berth"];
  if (!berth.is_object()) berth = json::object();
  json& pods = berth["pods"];
  if (!pods.is_object()) pods = json::object();
  for (const JobPod& pod : job.pods) EncodePod(pod, &pods[std::to_string(pod.id)]);
  if (job.finished_at) berth["finished_at"] = *job.finished_at;
}

bool NeedsReconcile(const json& stored, int64_t now) {
  if (!HasCondition(stored, "Complete") && !HasCondition(stored, "Failed")) return true;
  const std::optional<int64_t> ttl =
      IntegerIfAny(MemberOf(stored, "spec"), "ttlSecondsAfterFinished");
  const std::optional<int64_t> at = IntegerIfAny(MemberOf(stored, "berth"), "finished_at");
  return ttl && at.value_or(now) + *ttl <= now;
}

}  // namespace berth::k8s
