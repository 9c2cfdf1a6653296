// core/v1 Events (docs/kubernetes.md): made from the Pods' jobs (scheduled or not, started,
// ended, being deleted) plus those the Job controller keeps (face_job_controller.cc).
#include "k8s/face.h"
#include "k8s/jobs.h"

namespace berth::k8s {
namespace {

using nlohmann::json;
using namespace http;

// The events berth makes of a Pod (`key`: "namespace/name"): scheduled or not, started, ended,
// being deleted.
void AddPodEvents(const std::string& key, const json& pod, Objects* out) {
  const json& st = pod["status"];
  const std::string container = ContainerName(pod);
  auto add = [&](const json& e) {
    (*out)[key + "/" + e["metadata"]["name"].get<std::string>()] = e;
  };
  const json& cond = st["conditions"];
  int64_t created = ParseRfc3339(pod["metadata"].value("creationTimestamp", "")).value_or(0);
  std::string node = pod["spec"].value("nodeName", "");
  const json& cs = st.contains("containerStatuses") ? st["containerStatuses"][0] : json();
  // Containers mode: a pod whose image could not be pulled (kubelet's events).
  if (cs.is_object() && cs["state"].contains("waiting")) {
    const json& waiting = cs["state"]["waiting"];
    const std::string reason = waiting.value("reason", "");
    const std::string image = "image \"" + cs.value("image", "") + "\"";
    if (reason == "ErrImagePull" || reason == "ImagePullBackOff") {
      add(MakeEvent(pod, "Warning", "Failed",
                    "Failed to pull " + image + ": " + waiting.value("message", ""), created, 1,
                    "berth-agent"));
    }
    if (reason == "ImagePullBackOff") {
      add(MakeEvent(pod, "Normal", "BackOff", "Back-off pulling " + image, created, 1,
                    "berth-agent"));
    }
    if (reason == "ErrImagePull" || reason == "ImagePullBackOff") return;
  }
  if (node.empty()) {
    for (const json& c : cond) {
      if (c.value("type", "") == "PodScheduled" && c.value("status", "") == "False") {
        add(MakeEvent(pod, "Warning", "FailedScheduling", c.value("message", ""), created, 1,
                      "berth-scheduler"));
      }
    }
    return;
  }
  int64_t started = ParseRfc3339(st.value("startTime", "")).value_or(created);
  add(MakeEvent(pod, "Normal", "Scheduled",
                "Successfully assigned " + pod["metadata"].value("namespace", "") + "/" +
                    pod["metadata"].value("name", "") + " to " + node,
                started, 1, "berth-scheduler"));
  // Containers mode: the node's pull, as kubelet reports it.
  const std::string pull = pod["metadata"]["annotations"].value("berth.io/image-pull", "");
  const std::string image = cs.is_object() ? "image \"" + cs.value("image", "") + "\"" : "";
  if (!pull.empty()) {
    if (pull != "present") {
      add(MakeEvent(pod, "Normal", "Pulling", "Pulling " + image, started, 1, "berth-agent"));
    }
    if (pull.rfind("pulled in ", 0) == 0) {
      add(MakeEvent(pod, "Normal", "Pulled",
                    "Successfully pulled " + image + " in " + pull.substr(10), started, 1,
                    "berth-agent"));
    } else if (pull == "present") {
      add(MakeEvent(pod, "Normal", "Pulled", "Container " + image + " already present on machine",
                    started, 1, "berth-agent"));
    }
    if (pull == "pulling") return;
  }
  add(MakeEvent(pod, "Normal", "Started", "Started container " + container, started, 1,
                "berth-agent"));
  if (cs.is_object() && cs["state"].contains("terminated")) {
    const json& term = cs["state"]["terminated"];
    int64_t ended = ParseRfc3339(term.value("finishedAt", "")).value_or(started);
    const std::string reason = term.value("reason", "");
    if (reason == "Completed") {
      add(MakeEvent(pod, "Normal", "Completed", "Container " + container + " exited with code 0",
                    ended, 1, "berth-agent"));
    } else {
      std::string message = "Container " + container + " ended: " + reason + ", exit code " +
                            std::to_string(term.value("exitCode", 0));
      if (st.contains("message")) message += " (" + st.value("message", "") + ")";
      add(MakeEvent(pod, "Warning", reason == "OOMKilled" ? "OOMKilling" : "Failed", message, ended,
                    1, "berth-agent"));
    }
  }
  if (pod["metadata"].contains("deletionTimestamp")) {
    add(MakeEvent(pod, "Normal", "Killing", "Stopping container " + container,
                  ParseRfc3339(pod["metadata"].value("deletionTimestamp", "")).value_or(started), 1,
                  "berth-agent"));
  }
}

}  // namespace

Objects Face::EventObjects(const std::string& ns, const std::string& only, std::string* rv) {
  *rv = std::to_string(port_.WatchNext());
  Objects out;
  for (const auto& [key, pod] : PodObjects(ns, only)) AddPodEvents(key, pod, &out);
  MutexLock l(mu_);
  for (const auto& e : events_) {
    const json& ev = *e;
    if (!ns.empty() && ev["metadata"].value("namespace", "") != ns) continue;
    out[ev["metadata"].value("namespace", "") + "/" + ev["metadata"].value("name", "")] = ev;
  }
  return out;
}

net::HttpResponse Face::EventList(const Call& c) {
  // A selector on one object's name narrows the pods whose events are made.
  const std::string only = SelectedField(c.req, EventShape(), "involvedObject.name");
  const std::string ns = c.Namespace();
  return ListOrWatch(c.req, EventShape(), port_,
                     [this, ns, only](std::string* rv) { return EventObjects(ns, only, rv); });
}

net::HttpResponse Face::EventGet(const Call& c) {
  const std::string only = SelectedField(c.req, EventShape(), "involvedObject.name");
  std::string rv;
  Objects all = EventObjects(c.Namespace(), only, &rv);
  for (const auto& [key, e] : all) {
    if (e["metadata"].value("name", "") == c.Name()) {
      return ObjectResponse(c.req, EventShape(), e, 200, port_.Now());
    }
  }
  return StatusResponse(NotFoundStatus("events", c.Name()));
}

}  // namespace berth::k8s
