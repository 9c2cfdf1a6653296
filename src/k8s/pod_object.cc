// How a berth job looks as a core/v1 Pod (k8s/pods.h): its metadata, spec, conditions and
// container statuses, its Table row and its field-selector fields.
#include <algorithm>
#include <cstdio>
#include <string>

#include "k8s/codec.h"
#include "k8s/fields.h"
#include "k8s/pods.h"

namespace berth::k8s {
namespace {

using nlohmann::json;
using namespace fields;

// Kubernetes' QoS class of a pod: Guaranteed when every container has cpu and memory limits
// equal to its requests, BestEffort when none asks for anything, else Burstable.
std::string QosClass(const json& spec) {
  bool any = false, guaranteed = true;
  for (const char* list : {"initContainers", "containers"}) {
    const json& cs = At(spec, {list});
    if (!cs.is_array()) continue;
    for (const json& c : cs) {
      const json& limits = At(c, {"resources", "limits"});
      const json& requests = At(c, {"resources", "requests"});
      any |= (limits.is_object() && !limits.empty()) || (requests.is_object() && !requests.empty());
      for (const char* r : {"cpu", "memory"}) {
        const json& l = At(limits, {r});
        const json& q = At(requests, {r});
        if (l.is_null()) {
          guaranteed = false;
        } else if (!q.is_null() && ParseQuantity(q) != ParseQuantity(l)) {
          guaranteed = false;
        }
      }
    }
  }
  return !any ? "BestEffort" : guaranteed ? "Guaranteed" : "Burstable";
}

// The Pod's spec, labels and annotations: from the manifest berth kept, or for a Slurm job its
// request as one container.
struct PodShape {
  json labels = json::object();
  json annotations = json::object();
  json spec;
};

PodShape ShapeOf(const PodFacts& f) {
  PodShape s;
  if (f.meta) {
    s.labels = At(*f.meta, {"labels"}).is_object() ? At(*f.meta, {"labels"}) : json::object();
    s.annotations =
        At(*f.meta, {"annotations"}).is_object() ? At(*f.meta, {"annotations"}) : json::object();
    s.spec = At(*f.meta, {"spec"});
  } else {
    // A Slurm job: its request as a container.
    json requests = {{"cpu", std::to_string(std::max(f.cpus, 1))}};
    if (f.mem_mib > 0) requests["memory"] = MemoryQuantity(f.mem_mib);
    if (f.gpus > 0) requests["nvidia.com/gpu"] = std::to_string(f.gpus);
    if (f.gpu_milli > 0) requests["berth.io/gpu-milli"] = std::to_string(f.gpu_milli);
    json limits = requests;
    s.spec = {{"restartPolicy", "Never"},
              {"schedulerName", "berth"},
              {"containers",
               json::array({{{"name", "batch"},
                             {"image", "slurm-batch-script"},
                             {"resources", {{"requests", requests}, {"limits", limits}}}}})}};
    if (f.time_limit > 0) s.spec["activeDeadlineSeconds"] = f.time_limit;
    s.labels = {{"berth.io/user", f.user}, {"berth.io/account", f.account}};
  }
  s.labels["berth.io/job-id"] = std::to_string(f.job_id);
  s.annotations["berth.io/job-id"] = std::to_string(f.job_id);
  s.annotations["berth.io/state"] = f.state;
  if (!f.image_pull.empty()) {
    char seconds[32];
    std::snprintf(seconds, sizeof(seconds), "%.3f", f.pull_seconds);
    s.annotations["berth.io/image-pull"] =
        f.image_pull == "pulled" ? "pulled in " + std::string(seconds) + "s" : f.image_pull;
  }
  if (!f.partition.empty()) s.annotations["berth.io/partition"] = f.partition;
  if (!f.node.empty()) s.spec["nodeName"] = f.node;
  return s;
}

json PodMetadata(const PodFacts& f, const std::string& ns, const std::string& name,
                 const PodShape& shape) {
  const std::string uid = PodUid(f.job_id, ns, name);
  json metadata = {{"name", name},
                   {"namespace", ns},
                   {"uid", uid},
                   {"resourceVersion", f.resource_version},
                   {"creationTimestamp",
                    Rfc3339(f.meta ? At(*f.meta, {"created"}).get<int64_t>() : f.submit_time)},
                   {"labels", shape.labels},
                   {"annotations", shape.annotations}};
  if (f.meta) {
    if (const json& g = At(*f.meta, {"generateName"}); g.is_string()) metadata["generateName"] = g;
    if (const json& o = At(*f.meta, {"ownerReferences"}); o.is_array()) {
      metadata["ownerReferences"] = o;
    }
  }
  if (f.deleted_at > 0) {
    metadata["deletionTimestamp"] = Rfc3339(f.deleted_at);
    metadata["deletionGracePeriodSeconds"] = 30;
  }
  return metadata;
}

// Where the pod is in its life, as the status fields need it.
struct PodProgress {
  bool started = false;
  bool running = false;
  bool ended = false;
  int64_t placed = 0;           // when it started (0 = not yet)
  bool pulling_failed = false;  // pending after its image could not be pulled
  bool pulling = false;         // started on its node, which is pulling its image
};

// The pending reasons the node gives a job whose image it could not pull (as kubelet names
// them): the container waits with that reason and the registry's message.
bool IsPullFailure(const std::string& reason) {
  return reason == "ErrImagePull" || reason == "ImagePullBackOff";
}

json Condition(const char* type, bool status, int64_t since, const std::string& reason,
               const std::string& message) {
  json c = {{"type", type},
            {"status", status ? "True" : "False"},
            {"lastProbeTime", nullptr},
            {"lastTransitionTime", Rfc3339(since)}};
  if (!reason.empty()) c["reason"] = reason;
  if (!message.empty()) c["message"] = message;
  return c;
}

json PodConditions(const PodFacts& f, const PodProgress& p, const std::string& cname) {
  json conditions = json::array();
  const int64_t created = f.submit_time;
  if (p.pulling_failed) {
    // Placed, its image not pulled: as kubelet reports a pod whose container waits.
    const std::string why = "containers with unready status: [" + cname + "]";
    conditions.push_back(Condition("PodReadyToStartContainers", true, created, "", ""));
    conditions.push_back(Condition("Initialized", true, created, "", ""));
    conditions.push_back(Condition("Ready", false, created, "ContainersNotReady", why));
    conditions.push_back(Condition("ContainersReady", false, created, "ContainersNotReady", why));
    conditions.push_back(Condition("PodScheduled", true, created, "", ""));
  } else if (!p.started) {
    std::string message =
        f.reason.empty() ? "waiting for the scheduler's next pass" : "berth: " + f.reason;
    if (!f.reason_detail.empty()) message += " (" + f.reason_detail + ")";
    if (p.ended) {
      conditions.push_back(Condition("PodScheduled", false, f.end_time, "Unschedulable",
                                     "the pod ended (" + f.state + ") before it was placed"));
    } else {
      conditions.push_back(Condition("PodScheduled", false, created, "Unschedulable", message));
    }
  } else {
    const std::string done_reason = p.ended ? "PodCompleted" : "";
    const int64_t ready_since = p.ended ? f.end_time : p.placed;
    conditions.push_back(Condition("PodReadyToStartContainers", p.running, p.placed, "", ""));
    conditions.push_back(Condition("Initialized", true, p.placed, done_reason, ""));
    conditions.push_back(Condition("Ready", p.running, ready_since, done_reason, ""));
    conditions.push_back(Condition("ContainersReady", p.running, ready_since, done_reason, ""));
    conditions.push_back(Condition("PodScheduled", true, p.placed, "", ""));
  }
  return conditions;
}

// The terminated state of an ended pod's containers; the pod's own reason and message for the
// states Kubernetes gives one.
json TerminatedState(const PodFacts& f, bool started, std::string* pod_reason,
                     std::string* pod_message) {
  std::string reason = "Error";
  int32_t code = f.term_signal > 0 ? 128 + f.term_signal : f.exit_code;
  if (f.state == "COMPLETED") {
    reason = "Completed";
  } else if (f.state == "OUT_OF_MEMORY") {
    reason = "OOMKilled";
    if (code == 0) code = 137;
  } else if (f.state == "TIMEOUT" || f.state == "DEADLINE") {
    reason = "DeadlineExceeded";
    *pod_reason = "DeadlineExceeded";
    *pod_message = "Pod was active on the node longer than the specified deadline";
  } else if (f.state == "PREEMPTED") {
    *pod_reason = "Preempted";
    *pod_message = "berth preempted the pod for a job of higher priority";
  } else if (f.state == "NODE_FAIL") {
    *pod_reason = "NodeLost";
    *pod_message = "the node " + f.node + " was lost";
  } else if (f.state == "CANCELLED") {
    *pod_message = "cancelled";
  }
  if (f.state != "COMPLETED" && code == 0) code = 1;
  json terminated = {{"exitCode", code},
                     {"reason", reason},
                     {"startedAt", Rfc3339(started ? f.start_time : f.end_time)},
                     {"finishedAt", Rfc3339(f.end_time)},
                     {"containerID", "berth://" + std::to_string(f.job_id)}};
  if (f.term_signal > 0) terminated["signal"] = f.term_signal;
  if (!f.message.empty()) terminated["message"] = f.message;
  return {{"terminated", terminated}};
}

// Every container shares the job's state (berth runs them as one job).
json ContainerStatuses(const PodFacts& f, const json& spec, const json& state, bool running) {
  std::string cname = "main", image;
  if (const json& cs = At(spec, {"containers"});
      cs.is_array() && !cs.empty() && cs[0].is_object()) {
    cname = cs[0].value("name", "main");
    image = cs[0].value("image", "");
  }
  json statuses = json::array();
  const json& cs_spec = At(spec, {"containers"});
  const size_t n = cs_spec.is_array() && !cs_spec.empty() ? cs_spec.size() : 1;
  for (size_t i = 0; i < n; ++i) {
    const json& c = cs_spec.is_array() && i < cs_spec.size() ? cs_spec[i] : json();
    statuses.push_back({{"name", c.is_object() ? c.value("name", cname) : cname},
                        {"image", c.is_object() ? c.value("image", image) : image},
                        {"imageID", f.image_id},
                        {"containerID", "berth://" + std::to_string(f.job_id)},
                        {"ready", running},
                        {"started", running},
                        {"restartCount", f.restart_count},
                        {"state", state}});
  }
  return statuses;
}

json PodStatus(const PodFacts& f, const std::string& name, const json& spec) {
  // A container whose image the node is still pulling: Pending, waiting in ContainerCreating,
  // as kubelet shows it.
  const bool pulling = f.image_pull == "pulling" && PodPhase(f.state) == "Running";
  const std::string phase = pulling ? "Pending" : PodPhase(f.state);
  PodProgress p;
  p.started = f.start_time > 0 && !pulling;
  p.pulling = pulling;
  p.running = phase == "Running";
  p.ended = phase == "Succeeded" || phase == "Failed";
  p.placed = p.started ? f.start_time : 0;
  p.pulling_failed = phase == "Pending" && !p.started && IsPullFailure(f.reason);
  const json& containers = At(spec, {"containers"});
  const std::string cname =
      containers.is_array() && !containers.empty() && containers[0].is_object()
          ? containers[0].value("name", "main")
          : "main";
  json status = {
      {"phase", phase}, {"conditions", PodConditions(f, p, cname)}, {"qosClass", QosClass(spec)}};
  if (p.started) {
    status["startTime"] = Rfc3339(f.start_time);
    status["hostIP"] = "127.0.0.1";
    status["hostIPs"] = json::array({{{"ip", "127.0.0.1"}}});
  }
  json state;
  std::string pod_reason, pod_message;
  const bool restarting = !p.started && !p.ended && f.restart_count > 0;
  if (p.pulling_failed) {
    json waiting = {{"reason", f.reason}};
    if (!f.reason_detail.empty()) waiting["message"] = f.reason_detail;
    state = {{"waiting", std::move(waiting)}};
  } else if (restarting) {
    // Requeued by its restartPolicy, waiting out the back-off (or for room again).
    state = {{"waiting",
              {{"reason", "CrashLoopBackOff"},
               {"message", "back-off restarting the container of pod " + name}}}};
  } else if (!p.started && !p.ended) {
    state = {{"waiting", {{"reason", "ContainerCreating"}}}};
  } else if (p.running) {
    state = {{"running", {{"startedAt", Rfc3339(f.start_time)}}}};
  } else if (p.ended) {
    state = TerminatedState(f, p.started, &pod_reason, &pod_message);
  }
  if (!pod_reason.empty()) status["reason"] = pod_reason;
  if (!pod_message.empty()) status["message"] = pod_message;
  if (p.started || p.ended || restarting || p.pulling_failed || p.pulling) {
    status["containerStatuses"] = ContainerStatuses(f, spec, state, p.running);
  }
  return status;
}

}  // namespace

std::string PodUid(uint32_t job_id, const std::string& ns, const std::string& name) {
  return StableUid("Pod", std::to_string(job_id) + "/" + ns + "/" + name);
}

std::string PodNamespace(const PodFacts& f) {
  return f.meta ? Str(*f.meta, {"namespace"}) : kSlurmNamespace;
}

std::string PodName(const PodFacts& f) {
  return f.meta ? Str(*f.meta, {"name"}) : "job-" + std::to_string(f.job_id);
}

std::string PodPhase(std::string_view state) {
  if (state == "PENDING" || state == "REQUEUED") return "Pending";
  if (state == "COMPLETED") return "Succeeded";
  // A suspended job keeps its node: still Running to Kubernetes.
  if (state == "RUNNING" || state == "CONFIGURING" || state == "COMPLETING" || state == "STOPPED" ||
      state == "SUSPENDED") {
    return "Running";
  }
  return "Failed";
}

json EncodePod(const PodFacts& f) {
  const std::string ns = PodNamespace(f), name = PodName(f);
  PodShape shape = ShapeOf(f);
  json metadata = PodMetadata(f, ns, name, shape);
  json status = PodStatus(f, name, shape.spec);
  return {{"apiVersion", "v1"},
          {"kind", "Pod"},
          {"metadata", std::move(metadata)},
          {"spec", std::move(shape.spec)},
          {"status", std::move(status)}};
}

json PodTableColumns() {
  return json::array(
      {TableColumn("Name", "string", "name", "the pod's name (job-ID for a Slurm job)", 0),
       TableColumn("Ready", "string", "", "ready containers / containers", 0),
       TableColumn("Status", "string", "", "what the pod is doing", 0),
       TableColumn("Restarts", "integer", "", "how often berth requeued the job", 0),
       TableColumn("Age", "string", "", "since the pod was created", 0),
       TableColumn("IP", "string", "", "the pod's address (its node's: no pod network)", 1),
       TableColumn("Node", "string", "", "the node it runs or ran on", 1),
       TableColumn("Nominated Node", "string", "", "not used by berth", 1),
       TableColumn("Readiness Gates", "string", "", "not used by berth", 1)});
}

json PodTableCells(const json& pod, int64_t now) {
  const json& status = At(pod, {"status"});
  const std::string phase = Str(status, {"phase"});
  std::string shown = phase;
  const json& cs = At(status, {"containerStatuses"});
  int restarts = 0;
  size_t ready = 0;
  const json& spec_containers = At(pod, {"spec", "containers"});
  const size_t total = spec_containers.is_array() ? spec_containers.size() : 1;
  if (cs.is_array() && !cs.empty()) {
    restarts = cs[0].value("restartCount", 0);
    for (const json& c : cs) ready += c.value("ready", false) ? 1 : 0;
    if (const json& w = At(cs[0], {"state", "waiting", "reason"}); w.is_string()) {
      shown = w.get<std::string>();
    }
    if (const json& t = At(cs[0], {"state", "terminated", "reason"}); t.is_string()) {
      shown = t.get<std::string>();
    }
  }
  if (const json& r = At(status, {"reason"}); r.is_string()) shown = r.get<std::string>();
  if (At(pod, {"metadata", "deletionTimestamp"}).is_string() && phase != "Succeeded" &&
      phase != "Failed") {
    shown = "Terminating";
  }
  const std::string node = Str(pod, {"spec", "nodeName"});
  const std::string ip = Str(status, {"podIP"});
  return json::array({Str(pod, {"metadata", "name"}),
                      std::to_string(ready) + "/" + std::to_string(total), shown, restarts,
                      AgeCell(pod, now), ip.empty() ? "<none>" : ip, node.empty() ? "<none>" : node,
                      "<none>", "<none>"});
}

std::optional<std::string> PodField(const json& pod, const std::string& field) {
  if (field == "metadata.name") return Str(pod, {"metadata", "name"});
  if (field == "metadata.namespace") return Str(pod, {"metadata", "namespace"});
  if (field == "spec.nodeName") return Str(pod, {"spec", "nodeName"});
  if (field == "spec.restartPolicy") return Str(pod, {"spec", "restartPolicy"});
  if (field == "spec.schedulerName") return Str(pod, {"spec", "schedulerName"});
  if (field == "spec.serviceAccountName") return Str(pod, {"spec", "serviceAccountName"});
  if (field == "status.phase") return Str(pod, {"status", "phase"});
  if (field == "status.podIP") return Str(pod, {"status", "podIP"});
  if (field == "status.nominatedNodeName") return Str(pod, {"status", "nominatedNodeName"});
  return std::nullopt;
}

}  // namespace berth::k8s
