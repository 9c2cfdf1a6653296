// Test fixtures the Pod, Job and Event tests share (pods_test.cc, pod_object_test.cc,
// jobs_test.cc): a fixed "now", the request context, a typical GPU Pod and a typical Job, and
// the mapping and defaulting that must succeed. Test code only.
#ifndef BERTH_K8S_POD_TEST_FIXTURES_H_
#define BERTH_K8S_POD_TEST_FIXTURES_H_

#include <gtest/gtest.h>

#include <functional>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>

#include "k8s/jobs.h"
#include "k8s/pods.h"

namespace berth::k8s::podtest {

using nlohmann::json;

inline constexpr int64_t kNow = 1796270518;  // 2026-12-03T04:01:58Z

inline PodContext Ctx() {
  PodContext ctx;
  ctx.ns = "ml";
  ctx.home = "/home/alice";
  ctx.log_dir = "/var/log/berth/pods";
  ctx.name_suffix = "x7k2q";
  ctx.now = kNow;
  return ctx;
}

// A typical GPU training pod, valid as it stands.
inline json GpuPod() {
  return json::parse(R"json({
    "apiVersion": "v1", "kind": "Pod",
    "metadata": {"name": "train", "labels": {"app": "llm", "team": "vision"},
                 "annotations": {"berth.io/account": "ml-research", "note": "first try"}},
    "spec": {
      "containers": [{
        "name": "main", "image": "pytorch:2.3",
        "command": ["python", "train.py"],
        "args": ["--out=$(OUT_DIR)/$(POD_NAME)", "--price=$$(OUT_DIR)", "$(UNDEFINED)", "$$$$",
                 "--team=$(TEAM)", "$(OUT_DIR"],
        "env": [
          {"name": "OUT_DIR", "value": "/scratch"},
          {"name": "POD_NAME", "valueFrom": {"fieldRef": {"fieldPath": "metadata.name"}}},
          {"name": "POD_NS", "valueFrom": {"fieldRef": {"fieldPath": "metadata.namespace"}}},
          {"name": "TEAM", "valueFrom": {"fieldRef": {"fieldPath": "metadata.labels['team']"}}},
          {"name": "NOTE",
           "valueFrom": {"fieldRef": {"fieldPath": "metadata.annotations['note']"}}},
          {"name": "CKPT", "value": "$(OUT_DIR)/ckpt"},
          {"name": "EMPTY"}
        ],
        "resources": {
          "requests": {"cpu": "1500m", "memory": "1G", "nvidia.com/gpu": 2},
          "limits": {"cpu": "2", "memory": "16Gi", "nvidia.com/gpu": "2",
                     "ephemeral-storage": "10Gi"}
        }
      }],
      "activeDeadlineSeconds": 3600,
      "priorityClassName": "high"
    }
  })json");
}

inline PodMapping MustMap(const json& pod, const PodContext& ctx = Ctx()) {
  PodMapping m;
  std::optional<FieldProblem> p = MapPod(pod, ctx, &m);
  EXPECT_EQ(p, std::nullopt) << (p ? p->field + ": " + p->type + ": " + p->detail : "");
  return m;
}

// A problem as one line, for comparisons that print well.
inline std::string Show(const FieldProblem& p) {
  return p.field + " | " + p.type + " | " + p.value + " | " + p.detail;
}

inline json JobManifest() {
  return json::parse(R"json({
    "apiVersion": "batch/v1", "kind": "Job",
    "metadata": {"name": "train"},
    "spec": {"template": {
      "metadata": {"labels": {"app": "llm"}},
      "spec": {"restartPolicy": "Never",
               "containers": [{"name": "main", "image": "pytorch:2.3",
                               "command": ["python", "train.py",
                                           "--shard=$(JOB_COMPLETION_INDEX)"],
                               "env": [{"name": "A", "value": "1"}],
                               "resources": {"limits": {"nvidia.com/gpu": 1}}}]}}}
  })json");
}

inline constexpr const char* kUid = "6a1f7c1e-3b1d-4c5e-9f00-0123456789ab";

inline json MustDefault(const json& manifest) {
  json out;
  std::optional<FieldProblem> p = DefaultJob(manifest, "ml", kUid, kNow, &out);
  EXPECT_EQ(p, std::nullopt) << (p ? p->field + ": " + p->type + ": " + p->detail : "");
  return out;
}

// A pod with a sidecar: GpuPod's trainer and a logger.
inline json TwoContainerPod() {
  json pod = GpuPod();
  pod["spec"]["containers"].push_back(
      json{{"name", "logger"},
           {"image", "busybox"},
           {"command", {"sh", "-c", "echo it's up"}},
           {"workingDir", "/scratch/logs"},
           {"env", json::array({json{{"name", "LEVEL"}, {"value", "info"}}})},
           {"resources", {{"requests", {{"cpu", "1"}, {"memory", "512Mi"}}}}}});
  return pod;
}

// A manifest change that must be refused with `type` at `field`.
struct Refusal {
  const char* what;
  std::function<void(json&)> change;
  const char* field;
  const char* type;
};

// The facts of the GPU pod in `state`, submitted at kNow - 100.
struct PodJob {
  json meta = MustMap(GpuPod()).meta;
  PodFacts Facts(const std::string& state) const {
    PodFacts f;
    f.job_id = 42;
    f.state = state;
    f.submit_time = kNow - 100;
    f.resource_version = "17";
    f.user = "alice";
    f.account = "ml-research";
    f.partition = "gpu";
    f.meta = &meta;
    if (state != "PENDING") {
      f.node = "gpu07";
      f.start_time = kNow - 60;
    }
    if (PodPhase(state) != "Pending" && PodPhase(state) != "Running") f.end_time = kNow - 10;
    return f;
  }
};

}  // namespace berth::k8s::podtest

#endif  // BERTH_K8S_POD_TEST_FIXTURES_H_
