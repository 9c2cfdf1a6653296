// Berth jobs encoded as Pods: phases, conditions, container states, QoS class, Table cells and
// field selectors.
#include <gtest/gtest.h>

#include <functional>
#include <nlohmann/json.hpp>
#include <random>
#include <string>
#include <vector>

#include "k8s/codec.h"
#include "k8s/jobs.h"
#include "k8s/pod_test_fixtures.h"

namespace berth::k8s {
namespace {

using nlohmann::json;
using namespace podtest;

// ---- Berth jobs as Pods ---------------------------------------------------------------------

const json& Condition(const json& pod, const std::string& type) {
  static const json kNone;
  for (const json& c : pod["status"]["conditions"]) {
    if (c["type"] == type) return c;
  }
  return kNone;
}

std::string TableStatus(const json& pod) {
  return PodTableCells(pod, kNow)[2];
}

TEST(K8sPodEncodeTest, Phases) {
  EXPECT_EQ(PodPhase("PENDING"), "Pending");
  EXPECT_EQ(PodPhase("SUSPENDED"), "Running");  // it keeps its node
  EXPECT_EQ(PodPhase("CONFIGURING"), "Running");
  EXPECT_EQ(PodPhase("RUNNING"), "Running");
  EXPECT_EQ(PodPhase("COMPLETING"), "Running");
  EXPECT_EQ(PodPhase("COMPLETED"), "Succeeded");
  for (const char* s : {"FAILED", "CANCELLED", "TIMEOUT", "OUT_OF_MEMORY", "NODE_FAIL", "PREEMPTED",
                        "BOOT_FAIL", "DEADLINE"}) {
    EXPECT_EQ(PodPhase(s), "Failed") << s;
  }
}

TEST(K8sPodEncodeTest, ObjectAndMetadata) {
  PodJob j;
  json pod = EncodePod(j.Facts("RUNNING"));
  EXPECT_EQ(pod["apiVersion"], "v1");
  EXPECT_EQ(pod["kind"], "Pod");
  const json& md = pod["metadata"];
  EXPECT_EQ(md["name"], "train");
  EXPECT_EQ(md["namespace"], "ml");
  EXPECT_EQ(md["resourceVersion"], "17");
  EXPECT_EQ(md["creationTimestamp"], Rfc3339(kNow));  // when the manifest was mapped
  EXPECT_EQ(md["uid"].get<std::string>().size(), 36u);
  EXPECT_EQ(md["uid"], EncodePod(j.Facts("COMPLETED"))["metadata"]["uid"]);  // stable
  PodFacts other = j.Facts("RUNNING");
  other.job_id = 43;
  EXPECT_NE(md["uid"], EncodePod(other)["metadata"]["uid"]);
  EXPECT_EQ(md["labels"]["app"], "llm");
  EXPECT_EQ(md["labels"]["berth.io/job-id"], "42");
  EXPECT_EQ(md["annotations"]["note"], "first try");
  EXPECT_EQ(md["annotations"]["berth.io/job-id"], "42");
  EXPECT_EQ(md["annotations"]["berth.io/state"], "RUNNING");
  EXPECT_EQ(md["annotations"]["berth.io/partition"], "gpu");
  EXPECT_FALSE(md.contains("deletionTimestamp"));
  EXPECT_EQ(pod["spec"]["containers"][0]["name"], "main");
  EXPECT_EQ(pod["spec"]["restartPolicy"], "Always");
  EXPECT_EQ(PodNamespace(j.Facts("RUNNING")), "ml");
  EXPECT_EQ(PodName(j.Facts("RUNNING")), "train");
}

TEST(K8sPodEncodeTest, Pending) {
  PodJob j;
  PodFacts f = j.Facts("PENDING");
  f.reason = "Resources";
  f.reason_detail = "2 GPUs free, 4 asked";
  json pod = EncodePod(f);
  EXPECT_EQ(pod["status"]["phase"], "Pending");
  const json& sched = Condition(pod, "PodScheduled");
  EXPECT_EQ(sched["status"], "False");
  EXPECT_EQ(sched["reason"], "Unschedulable");
  EXPECT_EQ(sched["message"], "berth: Resources (2 GPUs free, 4 asked)");
  EXPECT_EQ(sched["lastTransitionTime"], Rfc3339(kNow - 100));
  EXPECT_TRUE(Condition(pod, "Ready").is_null());
  EXPECT_FALSE(pod["status"].contains("containerStatuses"));
  EXPECT_FALSE(pod["status"].contains("startTime"));
  EXPECT_FALSE(pod["spec"].contains("nodeName"));
  EXPECT_EQ(PodTableCells(pod, kNow),
            json({"train", "0/1", "Pending", 0, "0s", "<none>", "<none>", "<none>", "<none>"}));
  f.reason = "";
  f.reason_detail = "";
  EXPECT_EQ(Condition(EncodePod(f), "PodScheduled")["message"],
            "waiting for the scheduler's next pass");
}

TEST(K8sPodEncodeTest, WhileItsImageIsPulledTheContainerIsCreating) {
  PodJob j;
  PodFacts f = j.Facts("RUNNING");
  f.image_pull = "pulling";
  json pod = EncodePod(f);
  EXPECT_EQ(pod["status"]["phase"], "Pending");
  EXPECT_EQ(pod["status"]["containerStatuses"][0]["state"]["waiting"]["reason"],
            "ContainerCreating");
  EXPECT_EQ(TableStatus(pod), "ContainerCreating");
  EXPECT_EQ(pod["metadata"]["annotations"]["berth.io/image-pull"], "pulling");
  f.image_pull = "pulled";
  f.pull_seconds = 1.25;
  pod = EncodePod(f);
  EXPECT_EQ(pod["status"]["phase"], "Running");
  EXPECT_TRUE(pod["status"]["containerStatuses"][0]["state"].contains("running"));
  EXPECT_EQ(pod["metadata"]["annotations"]["berth.io/image-pull"], "pulled in 1.250s");
  f.image_pull = "present";
  EXPECT_EQ(EncodePod(f)["metadata"]["annotations"]["berth.io/image-pull"], "present");
}

TEST(K8sPodEncodeTest, Running) {
  PodJob j;
  json pod = EncodePod(j.Facts("RUNNING"));
  const json& st = pod["status"];
  EXPECT_EQ(st["phase"], "Running");
  EXPECT_EQ(st["startTime"], Rfc3339(kNow - 60));
  EXPECT_EQ(st["hostIP"], "127.0.0.1");
  EXPECT_EQ(pod["spec"]["nodeName"], "gpu07");
  for (const char* type :
       {"PodReadyToStartContainers", "Initialized", "Ready", "ContainersReady", "PodScheduled"}) {
    EXPECT_EQ(Condition(pod, type)["status"], "True") << type;
  }
  ASSERT_EQ(st["containerStatuses"].size(), 1u);
  const json& cs = st["containerStatuses"][0];
  EXPECT_EQ(cs["name"], "main");
  EXPECT_EQ(cs["image"], "pytorch:2.3");
  EXPECT_EQ(cs["ready"], true);
  EXPECT_EQ(cs["started"], true);
  EXPECT_EQ(cs["state"], json::object({{"running", {{"startedAt", Rfc3339(kNow - 60)}}}}));
  EXPECT_FALSE(st.contains("reason"));
  const json cells = PodTableCells(pod, kNow + 20);
  EXPECT_EQ(cells[0], "train");
  EXPECT_EQ(cells[1], "1/1");
  EXPECT_EQ(cells[2], "Running");
  EXPECT_EQ(cells[3], 0);
  EXPECT_EQ(cells[4], "20s");
  EXPECT_EQ(cells[6], "gpu07");
  for (const char* s : {"CONFIGURING", "COMPLETING"}) {
    EXPECT_EQ(EncodePod(j.Facts(s))["status"]["phase"], "Running") << s;
  }
}

TEST(K8sPodEncodeTest, Completed) {
  PodJob j;
  json pod = EncodePod(j.Facts("COMPLETED"));
  EXPECT_EQ(pod["status"]["phase"], "Succeeded");
  const json& cs = pod["status"]["containerStatuses"][0];
  EXPECT_EQ(cs["ready"], false);
  const json& t = cs["state"]["terminated"];
  EXPECT_EQ(t["exitCode"], 0);
  EXPECT_EQ(t["reason"], "Completed");
  EXPECT_EQ(t["startedAt"], Rfc3339(kNow - 60));
  EXPECT_EQ(t["finishedAt"], Rfc3339(kNow - 10));
  EXPECT_FALSE(t.contains("signal"));
  EXPECT_EQ(Condition(pod, "Ready")["status"], "False");
  EXPECT_EQ(Condition(pod, "Ready")["reason"], "PodCompleted");
  EXPECT_EQ(Condition(pod, "PodScheduled")["status"], "True");
  EXPECT_EQ(TableStatus(pod), "Completed");
  EXPECT_EQ(PodTableCells(pod, kNow)[1], "0/1");
}

TEST(K8sPodEncodeTest, FailedCarriesTheExitCode) {
  PodJob j;
  PodFacts f = j.Facts("FAILED");
  f.exit_code = 3;
  json pod = EncodePod(f);
  EXPECT_EQ(pod["status"]["phase"], "Failed");
  const json& t = pod["status"]["containerStatuses"][0]["state"]["terminated"];
  EXPECT_EQ(t["exitCode"], 3);
  EXPECT_EQ(t["reason"], "Error");
  EXPECT_EQ(TableStatus(pod), "Error");
  // A failure is never exit code 0.
  f.exit_code = 0;
  EXPECT_EQ(EncodePod(f)["status"]["containerStatuses"][0]["state"]["terminated"]["exitCode"], 1);
}

TEST(K8sPodEncodeTest, OutOfMemory) {
  PodJob j;
  PodFacts f = j.Facts("OUT_OF_MEMORY");
  f.message = "out of memory: 16384 MiB";
  json pod = EncodePod(f);
  const json& t = pod["status"]["containerStatuses"][0]["state"]["terminated"];
  EXPECT_EQ(t["reason"], "OOMKilled");
  EXPECT_EQ(t["exitCode"], 137);
  EXPECT_EQ(t["message"], "out of memory: 16384 MiB");
  EXPECT_EQ(pod["status"]["phase"], "Failed");
  EXPECT_EQ(TableStatus(pod), "OOMKilled");
}

TEST(K8sPodEncodeTest, Timeout) {
  PodJob j;
  json pod = EncodePod(j.Facts("TIMEOUT"));
  EXPECT_EQ(pod["status"]["phase"], "Failed");
  EXPECT_EQ(pod["status"]["reason"], "DeadlineExceeded");
  EXPECT_EQ(pod["status"]["message"],
            "Pod was active on the node longer than the specified deadline");
  EXPECT_EQ(TableStatus(pod), "DeadlineExceeded");
}

TEST(K8sPodEncodeTest, CancelledBySignal) {
  PodJob j;
  PodFacts f = j.Facts("CANCELLED");
  f.term_signal = 15;
  json pod = EncodePod(f);
  const json& t = pod["status"]["containerStatuses"][0]["state"]["terminated"];
  EXPECT_EQ(t["exitCode"], 143);
  EXPECT_EQ(t["signal"], 15);
  EXPECT_EQ(t["reason"], "Error");
  EXPECT_EQ(pod["status"]["phase"], "Failed");
  EXPECT_EQ(pod["status"]["message"], "cancelled");
}

TEST(K8sPodEncodeTest, EndedBeforeItWasPlaced) {
  PodJob j;
  PodFacts f = j.Facts("CANCELLED");
  f.start_time = 0;
  f.node = "";
  json pod = EncodePod(f);
  EXPECT_EQ(pod["status"]["phase"], "Failed");
  const json& sched = Condition(pod, "PodScheduled");
  EXPECT_EQ(sched["status"], "False");
  EXPECT_EQ(sched["lastTransitionTime"], Rfc3339(kNow - 10));
  EXPECT_FALSE(pod["status"].contains("startTime"));
  const json& t = pod["status"]["containerStatuses"][0]["state"]["terminated"];
  EXPECT_EQ(t["startedAt"], Rfc3339(kNow - 10));
  EXPECT_EQ(t["finishedAt"], Rfc3339(kNow - 10));
}

TEST(K8sPodEncodeTest, OtherEndings) {
  PodJob j;
  json preempted = EncodePod(j.Facts("PREEMPTED"));
  EXPECT_EQ(preempted["status"]["reason"], "Preempted");
  EXPECT_EQ(TableStatus(preempted), "Preempted");
  json lost = EncodePod(j.Facts("NODE_FAIL"));
  EXPECT_EQ(lost["status"]["reason"], "NodeLost");
  EXPECT_EQ(lost["status"]["message"], "the node gpu07 was lost");
}

TEST(K8sPodEncodeTest, DeletionShowsTerminatingWhileRunning) {
  PodJob j;
  PodFacts f = j.Facts("RUNNING");
  f.deleted_at = kNow - 5;
  json pod = EncodePod(f);
  EXPECT_EQ(pod["metadata"]["deletionTimestamp"], Rfc3339(kNow - 5));
  EXPECT_EQ(pod["metadata"]["deletionGracePeriodSeconds"], 30);
  EXPECT_EQ(TableStatus(pod), "Terminating");
  PodFacts pending = j.Facts("PENDING");
  pending.deleted_at = kNow - 5;
  EXPECT_EQ(TableStatus(EncodePod(pending)), "Terminating");
  // Once it has ended, it shows how it ended.
  PodFacts done = j.Facts("COMPLETED");
  done.deleted_at = kNow - 5;
  EXPECT_EQ(TableStatus(EncodePod(done)), "Completed");
}

TEST(K8sPodEncodeTest, RestartsAreCounted) {
  PodJob j;
  PodFacts f = j.Facts("RUNNING");
  f.restart_count = 2;
  json pod = EncodePod(f);
  EXPECT_EQ(pod["status"]["containerStatuses"][0]["restartCount"], 2);
  EXPECT_EQ(PodTableCells(pod, kNow)[3], 2);
}

// The Python client refuses a containerStatus without these.
// (SUSPENDED is left out: nothing in berth suspends a job yet, and a started job in the Pending
// phase would get a container state of null.)
TEST(K8sPodEncodeTest, EveryContainerStatusHasTheRequiredFields) {
  PodJob j;
  for (const char* state :
       {"PENDING", "CONFIGURING", "RUNNING", "COMPLETING", "COMPLETED", "FAILED", "CANCELLED",
        "TIMEOUT", "OUT_OF_MEMORY", "NODE_FAIL", "PREEMPTED", "BOOT_FAIL", "DEADLINE"}) {
    json pod = EncodePod(j.Facts(state));
    for (const json& c : pod["status"]["conditions"]) {
      EXPECT_TRUE(c["type"].is_string()) << state;
      EXPECT_TRUE(c["status"].is_string()) << state;
    }
    const json& list = pod["status"]["containerStatuses"];
    if (list.is_null()) continue;
    for (const json& cs : list) {
      EXPECT_TRUE(cs["name"].is_string()) << state;
      EXPECT_TRUE(cs["image"].is_string()) << state;
      EXPECT_TRUE(cs["imageID"].is_string()) << state;
      EXPECT_TRUE(cs["ready"].is_boolean()) << state;
      EXPECT_TRUE(cs["restartCount"].is_number_integer()) << state;
      EXPECT_TRUE(cs["state"].is_object()) << state;
    }
  }
}

TEST(K8sPodEncodeTest, EveryContainerHasAStatus) {
  PodJob j;
  j.meta = MustMap(TwoContainerPod()).meta;
  json pod = EncodePod(j.Facts("RUNNING"));
  const json& list = pod["status"]["containerStatuses"];
  ASSERT_EQ(list.size(), 2u);
  EXPECT_EQ(list[0]["name"], "main");
  EXPECT_EQ(list[0]["image"], "pytorch:2.3");
  EXPECT_EQ(list[1]["name"], "logger");
  EXPECT_EQ(list[1]["image"], "busybox");
  EXPECT_EQ(list[1]["state"], list[0]["state"]);  // one berth job: one state
  EXPECT_EQ(PodTableCells(pod, kNow)[1], "2/2");
  EXPECT_EQ(PodTableCells(EncodePod(j.Facts("PENDING")), kNow)[1], "0/2");
  EXPECT_EQ(PodTableCells(EncodePod(j.Facts("COMPLETED")), kNow)[1], "0/2");
}

TEST(K8sPodEncodeTest, SlurmJobAsAPod) {
  PodFacts f;
  f.job_id = 1234;
  f.state = "RUNNING";
  f.node = "cpu03";
  f.submit_time = kNow - 300;
  f.start_time = kNow - 200;
  f.user = "bob";
  f.account = "physics";
  f.cpus = 4;
  f.mem_mib = 16384;
  f.gpus = 2;
  f.time_limit = 7200;
  EXPECT_EQ(PodNamespace(f), kSlurmNamespace);
  EXPECT_EQ(PodName(f), "job-1234");
  json pod = EncodePod(f);
  const json& md = pod["metadata"];
  EXPECT_EQ(md["namespace"], "slurm");
  EXPECT_EQ(md["name"], "job-1234");
  EXPECT_EQ(md["creationTimestamp"], Rfc3339(kNow - 300));
  EXPECT_EQ(md["labels"]["berth.io/user"], "bob");
  EXPECT_EQ(md["labels"]["berth.io/account"], "physics");
  EXPECT_EQ(md["labels"]["berth.io/job-id"], "1234");
  const json& spec = pod["spec"];
  EXPECT_EQ(spec["restartPolicy"], "Never");
  EXPECT_EQ(spec["schedulerName"], "berth");
  EXPECT_EQ(spec["nodeName"], "cpu03");
  EXPECT_EQ(spec["activeDeadlineSeconds"], 7200);
  ASSERT_EQ(spec["containers"].size(), 1u);
  const json& c = spec["containers"][0];
  EXPECT_EQ(c["name"], "batch");
  const json requests = {{"cpu", "4"}, {"memory", "16Gi"}, {"nvidia.com/gpu", "2"}};
  EXPECT_EQ(c["resources"]["requests"], requests);
  EXPECT_EQ(c["resources"]["limits"], requests);
  EXPECT_EQ(pod["status"]["containerStatuses"][0]["name"], "batch");
  EXPECT_EQ(pod["status"]["phase"], "Running");
  // No memory or GPUs asked: neither appears; no CPUs counted: one.
  PodFacts small;
  small.job_id = 7;
  small.state = "PENDING";
  json s = EncodePod(small);
  EXPECT_EQ(s["spec"]["containers"][0]["resources"]["requests"], json::object({{"cpu", "1"}}));
  EXPECT_FALSE(s["spec"].contains("activeDeadlineSeconds"));
}

TEST(K8sPodTableTest, Columns) {
  json cols = PodTableColumns();
  std::vector<std::string> names;
  for (const json& c : cols) names.push_back(c["name"]);
  EXPECT_EQ(names, (std::vector<std::string>{"Name", "Ready", "Status", "Restarts", "Age", "IP",
                                             "Node", "Nominated Node", "Readiness Gates"}));
  for (size_t i = 0; i < cols.size(); ++i) EXPECT_EQ(cols[i]["priority"], i < 5 ? 0 : 1) << i;
  EXPECT_EQ(cols[0]["format"], "name");
  EXPECT_EQ(cols[3]["type"], "integer");
  EXPECT_EQ(PodTableCells(EncodePod(PodJob().Facts("RUNNING")), kNow).size(), cols.size());
}

TEST(K8sPodTableTest, CellsOfAForeignPod) {
  // A pod as another server would write it: podIP, and a waiting container.
  json pod = json::parse(R"json({
    "metadata": {"name": "p", "creationTimestamp": "2026-12-03T03:59:53Z"},
    "spec": {"nodeName": "n1"},
    "status": {"phase": "Pending", "podIP": "10.0.0.7",
               "containerStatuses": [{"ready": false, "restartCount": 1,
                                      "state": {"waiting": {"reason": "ContainerCreating"}}}]}
  })json");
  EXPECT_EQ(PodTableCells(pod, kNow), json({"p", "0/1", "ContainerCreating", 1, "2m5s", "10.0.0.7",
                                            "n1", "<none>", "<none>"}));
}

TEST(K8sPodTableTest, FieldSelectors) {
  PodJob j;
  json pod = EncodePod(j.Facts("RUNNING"));
  EXPECT_EQ(PodField(pod, "metadata.name"), "train");
  EXPECT_EQ(PodField(pod, "metadata.namespace"), "ml");
  EXPECT_EQ(PodField(pod, "spec.nodeName"), "gpu07");
  EXPECT_EQ(PodField(pod, "status.phase"), "Running");
  EXPECT_EQ(PodField(pod, "spec.restartPolicy"), "Always");
  EXPECT_EQ(PodField(pod, "spec.schedulerName"), "berth");
  EXPECT_EQ(PodField(pod, "spec.serviceAccountName"), "");
  EXPECT_EQ(PodField(pod, "status.podIP"), "");
  EXPECT_EQ(PodField(pod, "status.nominatedNodeName"), "");
  EXPECT_EQ(PodField(EncodePod(j.Facts("PENDING")), "spec.nodeName"), "");
  for (const char* other :
       {"metadata.uid", "metadata.labels", "spec.containers", "status", "", "status.phase.x"}) {
    EXPECT_EQ(PodField(pod, other), std::nullopt) << other;
  }
}

json PodWithResources(const json& resources) {
  PodFacts f;
  f.job_id = 7;
  f.state = "RUNNING";
  f.start_time = kNow;
  json meta = {{"namespace", "default"},
               {"name", "q"},
               {"created", kNow},
               {"spec",
                {{"containers",
                  json::array({{{"name", "main"}, {"image", "i"}, {"resources", resources}}})}}}};
  f.meta = &meta;
  return EncodePod(f);
}

TEST(K8sPodEncodeTest, QosClassFollowsRequestsAndLimits) {
  EXPECT_EQ(PodWithResources(json::object())["status"]["qosClass"], "BestEffort");
  EXPECT_EQ(PodWithResources({{"requests", {{"cpu", "1"}}}})["status"]["qosClass"], "Burstable");
  EXPECT_EQ(PodWithResources({{"limits", {{"cpu", "1"}, {"memory", "1Gi"}}}})["status"]["qosClass"],
            "Guaranteed");
  EXPECT_EQ(PodWithResources({{"requests", {{"cpu", "1000m"}, {"memory", "1024Mi"}}},
                              {"limits", {{"cpu", "1"}, {"memory", "1Gi"}}}})["status"]["qosClass"],
            "Guaranteed");  // equal quantities written differently
  EXPECT_EQ(PodWithResources({{"requests", {{"cpu", "500m"}, {"memory", "1Gi"}}},
                              {"limits", {{"cpu", "1"}, {"memory", "1Gi"}}}})["status"]["qosClass"],
            "Burstable");
}

}  // namespace
}  // namespace berth::k8s
