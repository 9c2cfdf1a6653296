#include "k8s/jobs.h"

#include <algorithm>
#include <set>

#include "k8s/codec.h"
#include "k8s/fields.h"
#include "k8s/manifest_meta.h"

namespace berth::k8s {
namespace {

using nlohmann::json;
using namespace fields;

// The shapes of a Job's successPolicy and podFailurePolicy (the Job controller reads them).
std::optional<FieldProblem> CheckPolicies(const json& spec) {
  if (const json& sp = At(spec, {"successPolicy"}); !sp.is_null()) {
    const json& rules = At(sp, {"rules"});
    if (!rules.is_array() || rules.empty() || rules.size() > 20) {
      return Invalid("spec.successPolicy.rules", Text(rules), "must have between 1 and 20 rules");
    }
    for (size_t i = 0; i < rules.size(); ++i) {
      const std::string f = "spec.successPolicy.rules[" + std::to_string(i) + "]";
      const json& r = rules[i];
      const json& idx = At(r, {"succeededIndexes"});
      const json& count = At(r, {"succeededCount"});
      if (idx.is_null() && count.is_null()) {
        return Required(f, "at least one of succeededCount or succeededIndexes must be specified");
      }
      if (!idx.is_null() && !idx.is_string())
        return Invalid(f + ".succeededIndexes", Text(idx), "must be a string");
      if (!count.is_null() && (!count.is_number_integer() || count.get<int64_t>() < 0)) {
        return Invalid(f + ".succeededCount", Text(count), "must be greater than or equal to 0");
      }
    }
  }
  if (const json& pf = At(spec, {"podFailurePolicy"}); !pf.is_null()) {
    const json& rules = At(pf, {"rules"});
    if (!rules.is_array() || rules.size() > 20) {
      return Invalid("spec.podFailurePolicy.rules", Text(rules),
                     "must be a list of at most 20 rules");
    }
    for (size_t i = 0; i < rules.size(); ++i) {
      const std::string f = "spec.podFailurePolicy.rules[" + std::to_string(i) + "]";
      const json& r = rules[i];
      const std::string action = Str(r, {"action"});
      if (action != "FailJob" && action != "Ignore" && action != "Count" && action != "FailIndex") {
        return Unsupported(f + ".action", Text(At(r, {"action"})),
                           "supported values: \"Count\", \"FailIndex\", \"FailJob\", \"Ignore\"");
      }
      const json& codes = At(r, {"onExitCodes"});
      const json& conds = At(r, {"onPodConditions"});
      if (codes.is_null() == conds.is_null()) {
        return Invalid(f, "", "specifying one of OnExitCodes and OnPodConditions is required");
      }
      if (!codes.is_null()) {
        const std::string op = Str(codes, {"operator"});
        if (op != "In" && op != "NotIn") {
          return Unsupported(f + ".onExitCodes.operator", Text(At(codes, {"operator"})),
                             "supported values: \"In\", \"NotIn\"");
        }
        const json& values = At(codes, {"values"});
        if (!values.is_array() || values.empty()) return Required(f + ".onExitCodes.values");
        for (const json& v : values) {
          if (!v.is_number_integer())
            return Invalid(f + ".onExitCodes.values", Text(v), "must be an integer");
        }
      } else if (!conds.is_array()) {
        return Invalid(f + ".onPodConditions", Text(conds), "must be a list");
      } else {
        for (const json& c : conds) {
          if (!At(c, {"type"}).is_string()) return Required(f + ".onPodConditions[].type");
        }
      }
    }
  }
  return std::nullopt;
}

// kind, apiVersion and the name of a Job manifest.
std::optional<FieldProblem> CheckJobKind(const json& job) {
  if (!job.is_object()) return Invalid("", Text(job), "the body must be a Job object");
  if (job.contains("kind") && job["kind"] != "Job") {
    return Invalid("kind", Text(job["kind"]), "the body must be a Job");
  }
  if (job.contains("apiVersion") && job["apiVersion"] != "batch/v1") {
    return Invalid("apiVersion", Text(job["apiVersion"]), "Jobs are in batch/v1");
  }
  const std::string name = Str(job, {"metadata", "name"});
  if (name.empty()) return Required("metadata.name", "name or generateName is required");
  if (std::string p = SubdomainNameProblem(name); !p.empty()) {
    return Invalid("metadata.name", name, p);
  }
  return std::nullopt;
}

// The counts, completion mode and suspension of a Job's spec, checked and defaulted as the API
// server does.
std::optional<FieldProblem> DefaultCounts(json& spec) {
  auto count = [&](const char* key, int64_t dflt, int64_t min) -> std::optional<FieldProblem> {
    if (!spec.contains(key) || spec[key].is_null()) {
      if (dflt >= 0) spec[key] = dflt;
      return std::nullopt;
    }
    if (!spec[key].is_number_integer() || spec[key].get<int64_t>() < min) {
      return Invalid(std::string("spec.") + key, Text(spec[key]),
                     min > 0 ? "must be greater than 0" : "must be greater than or equal to 0");
    }
    return std::nullopt;
  };
  // As the API server: neither given -> both 1; parallelism alone -> completions stays null (a
  // work queue: done once a pod has succeeded and none is left running).
  const bool completions_given = spec.contains("completions") && !spec["completions"].is_null();
  const bool parallelism_given = spec.contains("parallelism") && !spec["parallelism"].is_null();
  if (auto p = count("parallelism", 1, 0)) return p;
  if (auto p = count("completions", completions_given ? 0 : -1, 0)) return p;
  if (!completions_given) spec["completions"] = parallelism_given ? json() : json(1);
  if (auto p = count("backoffLimit", 6, 0)) return p;
  if (spec.contains("activeDeadlineSeconds") && !spec["activeDeadlineSeconds"].is_null()) {
    if (auto p = count("activeDeadlineSeconds", -1, 1)) return p;
  }
  if (spec.contains("ttlSecondsAfterFinished") && !spec["ttlSecondsAfterFinished"].is_null()) {
    if (auto p = count("ttlSecondsAfterFinished", -1, 0)) return p;
  }
  const json& given_mode = At(spec, {"completionMode"});
  const std::string mode = given_mode.is_null() ? "NonIndexed" : Text(given_mode);
  if (mode != "NonIndexed" && mode != "Indexed") {
    return Unsupported("spec.completionMode", mode,
                       "supported values: \"NonIndexed\", \"Indexed\"");
  }
  spec["completionMode"] = mode;
  if (mode == "Indexed" && !completions_given) {
    return Required("spec.completions", "when completion mode is Indexed");
  }
  if (mode == "Indexed" && spec["completions"].get<int64_t>() > 100000) {
    return Invalid("spec.completions", Text(spec["completions"]),
                   "must be less than or equal to 100000 when completion mode is Indexed");
  }
  if (!spec.contains("suspend")) spec["suspend"] = false;
  if (!spec["suspend"].is_boolean())
    return Invalid("spec.suspend", Text(spec["suspend"]), "must be a boolean");
  return std::nullopt;
}

// spec.template.spec.restartPolicy: a Job's pods may only be Never or OnFailure.
std::optional<FieldProblem> TemplateRestart(const json& tmpl, std::string* restart) {
  *restart = At(tmpl, {"spec", "restartPolicy"}).is_string()
                 ? tmpl["spec"]["restartPolicy"].get<std::string>()
                 : "";
  if (*restart != "Never" && *restart != "OnFailure") {
    if (restart->empty()) {
      return Required("spec.template.spec.restartPolicy",
                      "supported values: \"OnFailure\", \"Never\"");
    }
    return Unsupported("spec.template.spec.restartPolicy", *restart,
                       "supported values: \"OnFailure\", \"Never\"");
  }
  return std::nullopt;
}

// Labels the template with the Job's, and checks it is a valid Pod.
std::optional<FieldProblem> LabelTemplate(json& tmpl, const std::string& ns,
                                          const std::string& name, const std::string& uid,
                                          const PodContext* template_ctx) {
  json labels = {{"batch.kubernetes.io/controller-uid", uid},
                 {"batch.kubernetes.io/job-name", name},
                 {"controller-uid", uid},
                 {"job-name", name}};
  if (!tmpl.contains("metadata") || !tmpl["metadata"].is_object())
    tmpl["metadata"] = json::object();
  json& tl = tmpl["metadata"]["labels"];
  if (!tl.is_object()) tl = json::object();
  for (const auto& [k, v] : labels.items()) tl[k] = v;
  // The template must itself be a valid Pod.
  PodMapping probe;
  PodContext ctx = template_ctx ? *template_ctx : PodContext{};
  ctx.ns = ns;
  ctx.home = "/";
  ctx.name_suffix = "xxxxx";
  json pod = {{"apiVersion", "v1"},
              {"kind", "Pod"},
              {"metadata", tmpl["metadata"]},
              {"spec", tmpl["spec"]}};
  pod["metadata"]["name"] = name + "-0-xxxxx";
  if (auto p = MapPod(pod, ctx, &probe)) {
    p->field = "spec.template." + p->field;
    return p;
  }
  return std::nullopt;
}

}  // namespace

std::optional<FieldProblem> DefaultJob(const json& job, const std::string& ns,
                                       const std::string& uid, int64_t now, json* out,
                                       const PodContext* template_ctx) {
  if (auto p = CheckJobKind(job)) return p;
  const std::string name = Str(job, {"metadata", "name"});
  json j = job;
  j["apiVersion"] = "batch/v1";
  j["kind"] = "Job";
  json& meta = j["metadata"];
  meta["namespace"] = ns;
  meta["uid"] = uid;
  meta["creationTimestamp"] = Rfc3339(now);
  meta["generation"] = 1;
  if (!meta.contains("labels") || !meta["labels"].is_object()) meta["labels"] = json::object();
  if (!j.contains("spec") || !j["spec"].is_object()) return Required("spec");
  json& spec = j["spec"];
  if (auto p = DefaultCounts(spec)) return p;
  const std::string mode = spec["completionMode"];
  spec["manualSelector"] = false;
  spec["podReplacementPolicy"] = "TerminatingOrFailed";
  json& tmpl = spec["template"];
  if (!tmpl.is_object() || !tmpl.contains("spec")) return Required("spec.template");
  std::string restart;
  if (auto p = TemplateRestart(tmpl, &restart)) return p;
  if (auto p = CheckMetadataMaps(meta)) return p;
  if (spec.contains("podFailurePolicy") && restart != "Never") {
    return Invalid("spec.template.spec.restartPolicy", restart,
                   "only \"Never\" is supported when podFailurePolicy is specified");
  }
  if (spec.contains("successPolicy") && mode != "Indexed") {
    return Invalid("spec.successPolicy", Text(spec["successPolicy"]),
                   "requires indexed completion mode");
  }
  if (auto p = CheckPolicies(spec)) return p;
  spec["selector"] = {{"matchLabels", {{"batch.kubernetes.io/controller-uid", uid}}}};
  if (auto p = LabelTemplate(tmpl, ns, name, uid, template_ctx)) return p;
  if (!j.contains("status") || !j["status"].is_object()) j["status"] = json::object();
  *out = std::move(j);
  return std::nullopt;
}

json PodFromTemplate(const json& job, int index, const std::string& name) {
  const json& tmpl = At(job, {"spec", "template"});
  json pod = {
      {"apiVersion", "v1"},
      {"kind", "Pod"},
      {"metadata", At(tmpl, {"metadata"}).is_object() ? At(tmpl, {"metadata"}) : json::object()},
      {"spec", At(tmpl, {"spec"})}};
  json& meta = pod["metadata"];
  meta["name"] = name;
  meta["generateName"] = Str(job, {"metadata", "name"}) + "-";
  meta["ownerReferences"] = json::array({{{"apiVersion", "batch/v1"},
                                          {"kind", "Job"},
                                          {"name", Str(job, {"metadata", "name"})},
                                          {"uid", Str(job, {"metadata", "uid"})},
                                          {"controller", true},
                                          {"blockOwnerDeletion", true}}});
  if (!meta.contains("annotations") || !meta["annotations"].is_object()) {
    meta["annotations"] = json::object();
  }
  if (Str(job, {"metadata", "annotations", "berth.io/gang"}) == "true") {
    meta["annotations"]["berth.io/gang"] = "true";  // its pods say why they wait
  }
  if (index >= 0) {
    const std::string i = std::to_string(index);
    // As the Job controller: an indexed pod's host name is $(job-name)-$(index).
    const std::string host = Str(job, {"metadata", "name"}) + "-" + i;
    if ((!pod["spec"].contains("hostname") || pod["spec"]["hostname"] == "") && host.size() <= 63) {
      pod["spec"]["hostname"] = host;
    }
    meta["labels"]["batch.kubernetes.io/job-completion-index"] = i;
    meta["annotations"]["batch.kubernetes.io/job-completion-index"] = i;
    // Every container and init container knows its index, as in Kubernetes.
    for (const char* list : {"initContainers", "containers"}) {
      if (!pod["spec"].contains(list) || !pod["spec"][list].is_array()) continue;
      for (json& c : pod["spec"][list]) {
        if (!c.is_object()) continue;
        if (!c.contains("env") || !c["env"].is_array()) c["env"] = json::array();
        bool has = false;  // the container's own JOB_COMPLETION_INDEX wins, as in Kubernetes
        for (const json& e : c["env"])
          has |= e.is_object() && e.value("name", "") == "JOB_COMPLETION_INDEX";
        if (!has) c["env"].push_back(json{{"name", "JOB_COMPLETION_INDEX"}, {"value", i}});
      }
    }
  }
  return pod;
}

json JobTableColumns() {
  return json::array(
      {TableColumn("Name", "string", "name", "the job's name", 0),
       TableColumn("Status", "string", "", "Running, Complete, Failed, Suspended", 0),
       TableColumn("Completions", "string", "", "succeeded / desired completions", 0),
       TableColumn("Duration", "string", "", "from start to completion (or now)", 0),
       TableColumn("Age", "string", "", "since the job was created", 0),
       TableColumn("Containers", "string", "", "the template's containers", 1),
       TableColumn("Images", "string", "", "the template's images", 1),
       TableColumn("Selector", "string", "", "the pods' label selector", 1)});
}

json JobTableCells(const json& job, int64_t now) {
  const json& status = At(job, {"status"});
  std::string shown = "Running";
  if (At(job, {"spec", "suspend"}) == true) shown = "Suspended";
  if (const json& conds = At(status, {"conditions"}); conds.is_array()) {
    for (const json& c : conds) {
      if (Str(c, {"status"}) != "True") continue;
      const std::string type = Str(c, {"type"});
      if (type == "Complete") shown = "Complete";
      if (type == "Failed") shown = "Failed";
    }
  }
  // At, not value(): a Job as a client wrote it may have no status yet.
  const int64_t succeeded =
      At(status, {"succeeded"}).is_number_integer() ? At(status, {"succeeded"}).get<int64_t>() : 0;
  const json& completions = At(job, {"spec", "completions"});
  std::string comp = std::to_string(succeeded) + "/";
  if (completions.is_number()) {
    comp += std::to_string(completions.get<int64_t>());
  } else if (const json& par = At(job, {"spec", "parallelism"}); par.is_number()) {
    comp += "1 of " + std::to_string(par.get<int64_t>());  // a work queue, as kubectl shows it
  } else {
    comp += "1";
  }
  auto time_of = [&](const char* key) -> int64_t {
    const json& t = At(status, {key});
    return t.is_string() ? ParseRfc3339(t.get<std::string>()).value_or(0) : 0;
  };
  const int64_t start = time_of("startTime"), done = time_of("completionTime");
  std::string duration =
      start ? HumanDuration(std::max<int64_t>(0, (done ? done : now) - start)) : "";
  std::string containers, images;
  if (const json& cs = At(job, {"spec", "template", "spec", "containers"}); cs.is_array()) {
    for (const json& c : cs) {
      containers += (containers.empty() ? "" : ",") + c.value("name", "");
      images += (images.empty() ? "" : ",") + c.value("image", "");
    }
  }
  std::string selector;
  if (const json& m = At(job, {"spec", "selector", "matchLabels"}); m.is_object()) {
    for (const auto& [k, v] : m.items()) {
      selector += (selector.empty() ? "" : ",") + k + "=" + Text(v);
    }
  }
  return json::array({Str(job, {"metadata", "name"}), shown, comp, duration, AgeCell(job, now),
                      containers, images, selector});
}

std::optional<std::string> JobField(const json& job, const std::string& field) {
  if (field == "metadata.name") return Str(job, {"metadata", "name"});
  if (field == "metadata.namespace") return Str(job, {"metadata", "namespace"});
  if (field == "status.successful") {
    const json& succeeded = At(job, {"status", "succeeded"});
    return std::to_string(succeeded.is_number_integer() ? succeeded.get<int64_t>() : 0);
  }
  return std::nullopt;
}

json EventTableColumns() {
  return json::array({TableColumn("Last Seen", "string", "", "when it last happened", 0),
                      TableColumn("Type", "string", "", "Normal or Warning", 0),
                      TableColumn("Reason", "string", "", "why", 0),
                      TableColumn("Object", "string", "", "what it is about", 0),
                      TableColumn("Message", "string", "", "what happened", 0)});
}

json EventTableCells(const json& event, int64_t now) {
  int64_t last = 0;
  if (const json& t = At(event, {"lastTimestamp"}); t.is_string()) {
    last = ParseRfc3339(t.get<std::string>()).value_or(now);
  }
  std::string kind = Str(event, {"involvedObject", "kind"});
  for (char& ch : kind) ch = static_cast<char>(std::tolower(static_cast<unsigned char>(ch)));
  return json::array({HumanDuration(std::max<int64_t>(0, now - last)), Str(event, {"type"}),
                      Str(event, {"reason"}), kind + "/" + Str(event, {"involvedObject", "name"}),
                      Str(event, {"message"})});
}

std::optional<std::string> EventField(const json& event, const std::string& field) {
  if (field == "metadata.name") return Str(event, {"metadata", "name"});
  if (field == "metadata.namespace") return Str(event, {"metadata", "namespace"});
  if (field == "type") return Str(event, {"type"});
  if (field == "reason") return Str(event, {"reason"});
  constexpr std::string_view kInvolved = "involvedObject.";
  if (field.rfind(kInvolved, 0) == 0) {
    const std::string key = field.substr(kInvolved.size());
    if (key == "name" || key == "namespace" || key == "kind" || key == "uid" ||
        key == "apiVersion" || key == "fieldPath" || key == "resourceVersion") {
      return Str(event, {"involvedObject", key.c_str()});
    }
  }
  if (field == "source") return Str(event, {"source", "component"});
  return std::nullopt;
}

json MakeEvent(const json& object, const std::string& type, const std::string& reason,
               const std::string& message, int64_t time, int count, const std::string& component) {
  const json& meta = At(object, {"metadata"});
  const std::string ns = Str(meta, {"namespace"});
  const std::string name = Str(meta, {"name"});
  const std::string uid = Str(meta, {"uid"});
  const std::string id = StableUid("Event", uid + "/" + reason + "/" + message);
  return {{"apiVersion", "v1"},
          {"kind", "Event"},
          {"metadata",
           {{"name", name + "." + id.substr(0, 8)},
            {"namespace", ns.empty() ? "default" : ns},
            {"uid", id},
            {"resourceVersion", "1"},
            {"creationTimestamp", Rfc3339(time)}}},
          {"involvedObject",
           {{"apiVersion", Str(object, {"apiVersion"})},
            {"kind", Str(object, {"kind"})},
            {"namespace", ns},
            {"name", name},
            {"uid", uid}}},
          {"reason", reason},
          {"message", message},
          {"type", type},
          {"source", {{"component", component}}},
          {"reportingComponent", component},
          {"reportingInstance", ""},
          {"firstTimestamp", Rfc3339(time)},
          {"lastTimestamp", Rfc3339(time)},
          {"eventTime", nullptr},
          {"count", count}};
}

}  // namespace berth::k8s
