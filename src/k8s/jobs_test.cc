// Jobs and Events as berth serves them: Job defaulting and its refusals, the Pods made from a
// Job's template, the Table cells and field selectors of Jobs and Events.
#include "k8s/jobs.h"

#include <gtest/gtest.h>

#include <functional>
#include <nlohmann/json.hpp>
#include <random>
#include <string>
#include <vector>

#include "k8s/codec.h"
#include "k8s/pod_test_fixtures.h"

namespace berth::k8s {
namespace {

using nlohmann::json;
using namespace podtest;

// ---- Jobs -----------------------------------------------------------------------------------

TEST(K8sJobDefaultTest, Defaults) {
  json job = MustDefault(JobManifest());
  EXPECT_EQ(job["apiVersion"], "batch/v1");
  EXPECT_EQ(job["kind"], "Job");
  const json& md = job["metadata"];
  EXPECT_EQ(md["name"], "train");
  EXPECT_EQ(md["namespace"], "ml");
  EXPECT_EQ(md["uid"], kUid);
  EXPECT_EQ(md["creationTimestamp"], Rfc3339(kNow));
  EXPECT_EQ(md["generation"], 1);
  EXPECT_TRUE(md["labels"].is_object());
  const json& spec = job["spec"];
  EXPECT_EQ(spec["parallelism"], 1);
  EXPECT_EQ(spec["completions"], 1);
  EXPECT_EQ(spec["backoffLimit"], 6);
  EXPECT_EQ(spec["completionMode"], "NonIndexed");
  EXPECT_EQ(spec["suspend"], false);
  EXPECT_EQ(spec["manualSelector"], false);
  EXPECT_EQ(spec["podReplacementPolicy"], "TerminatingOrFailed");
  EXPECT_EQ(spec["selector"],
            json::object({{"matchLabels", {{"batch.kubernetes.io/controller-uid", kUid}}}}));
  EXPECT_EQ(spec["template"]["metadata"]["labels"],
            json({{"app", "llm"},
                  {"batch.kubernetes.io/controller-uid", kUid},
                  {"batch.kubernetes.io/job-name", "train"},
                  {"controller-uid", kUid},
                  {"job-name", "train"}}));
  EXPECT_EQ(job["status"], json::object());
  EXPECT_FALSE(spec.contains("activeDeadlineSeconds"));
  EXPECT_FALSE(spec.contains("ttlSecondsAfterFinished"));
}

TEST(K8sJobDefaultTest, ParallelismAloneMakesAWorkQueue) {
  json m = JobManifest();
  m["spec"]["parallelism"] = 3;
  json job = MustDefault(m);
  EXPECT_EQ(job["spec"]["parallelism"], 3);
  EXPECT_TRUE(job["spec"]["completions"].is_null());  // as the API server leaves it
  EXPECT_EQ(JobTableCells(job, kNow)[2], "0/1 of 3");
  m["spec"]["completions"] = 10;
  job = MustDefault(m);
  EXPECT_EQ(job["spec"]["completions"], 10);
  m = JobManifest();
  m["spec"]["completions"] = 4;
  job = MustDefault(m);
  EXPECT_EQ(job["spec"]["parallelism"], 1);
  EXPECT_EQ(job["spec"]["completions"], 4);
}

TEST(K8sJobDefaultTest, GivenValuesAreKept) {
  json m = JobManifest();
  m["spec"]["backoffLimit"] = 0;
  m["spec"]["suspend"] = true;
  m["spec"]["completionMode"] = "Indexed";
  m["spec"]["completions"] = 5;
  m["spec"]["activeDeadlineSeconds"] = 600;
  m["spec"]["ttlSecondsAfterFinished"] = 0;
  m["metadata"]["labels"] = {{"team", "vision"}};
  json job = MustDefault(m);
  EXPECT_EQ(job["spec"]["backoffLimit"], 0);
  EXPECT_EQ(job["spec"]["suspend"], true);
  EXPECT_EQ(job["spec"]["completionMode"], "Indexed");
  EXPECT_EQ(job["spec"]["completions"], 5);
  EXPECT_EQ(job["spec"]["activeDeadlineSeconds"], 600);
  EXPECT_EQ(job["spec"]["ttlSecondsAfterFinished"], 0);
  EXPECT_EQ(job["metadata"]["labels"], json::object({{"team", "vision"}}));
}

TEST(K8sJobDefaultTest, RefusalsNameTheField) {
  auto tspec = [](json& j) -> json& { return j["spec"]["template"]["spec"]; };
  const std::vector<Refusal> cases = {
      {"not an object", [](json& j) { j = "job"; }, "", "Invalid value"},
      {"wrong kind", [](json& j) { j["kind"] = "Pod"; }, "kind", "Invalid value"},
      {"wrong apiVersion", [](json& j) { j["apiVersion"] = "v1"; }, "apiVersion", "Invalid value"},
      {"no name", [](json& j) { j["metadata"].erase("name"); }, "metadata.name", "Required value"},
      {"bad name", [](json& j) { j["metadata"]["name"] = "Train"; }, "metadata.name",
       "Invalid value"},
      {"no spec", [](json& j) { j.erase("spec"); }, "spec", "Required value"},
      {"negative parallelism", [](json& j) { j["spec"]["parallelism"] = -1; }, "spec.parallelism",
       "Invalid value"},
      {"text parallelism", [](json& j) { j["spec"]["parallelism"] = "2"; }, "spec.parallelism",
       "Invalid value"},
      {"negative completions", [](json& j) { j["spec"]["completions"] = -2; }, "spec.completions",
       "Invalid value"},
      {"negative backoffLimit", [](json& j) { j["spec"]["backoffLimit"] = -1; },
       "spec.backoffLimit", "Invalid value"},
      {"activeDeadlineSeconds 0", [](json& j) { j["spec"]["activeDeadlineSeconds"] = 0; },
       "spec.activeDeadlineSeconds", "Invalid value"},
      {"negative ttl", [](json& j) { j["spec"]["ttlSecondsAfterFinished"] = -1; },
       "spec.ttlSecondsAfterFinished", "Invalid value"},
      {"Indexed without completions", [](json& j) { j["spec"]["completionMode"] = "Indexed"; },
       "spec.completions", "Required value"},
      {"Indexed, too many completions",
       [](json& j) {
         j["spec"]["completionMode"] = "Indexed";
         j["spec"]["completions"] = 100001;
       },
       "spec.completions", "Invalid value"},
      {"bad completionMode", [](json& j) { j["spec"]["completionMode"] = "Sometimes"; },
       "spec.completionMode", "Unsupported value"},
      {"non-string completionMode", [](json& j) { j["spec"]["completionMode"] = 1; },
       "spec.completionMode", "Unsupported value"},
      {"podFailurePolicy without restartPolicy Never",
       [&](json& j) {
         tspec(j)["restartPolicy"] = "OnFailure";
         j["spec"]["podFailurePolicy"] = {{"rules", json::array()}};
       },
       "spec.template.spec.restartPolicy", "Invalid value"},
      {"successPolicy of a NonIndexed Job",
       [](json& j) {
         j["spec"]["successPolicy"] = {{"rules", json::array()}};
       },
       "spec.successPolicy", "Invalid value"},
      {"non-boolean suspend", [](json& j) { j["spec"]["suspend"] = "yes"; }, "spec.suspend",
       "Invalid value"},
      {"no template", [](json& j) { j["spec"].erase("template"); }, "spec.template",
       "Required value"},
      {"restartPolicy Always", [&](json& j) { tspec(j)["restartPolicy"] = "Always"; },
       "spec.template.spec.restartPolicy", "Unsupported value"},
      {"no restartPolicy", [&](json& j) { tspec(j).erase("restartPolicy"); },
       "spec.template.spec.restartPolicy", "Required value"},
      {"template without image", [&](json& j) { tspec(j)["containers"][0].erase("image"); },
       "spec.template.spec.containers[0].image", "Required value"},
      {"template without containers", [&](json& j) { tspec(j).erase("containers"); },
       "spec.template.spec.containers", "Required value"},
      {"template gpu request without limit",
       [&](json& j) {
         tspec(j)["containers"][0]["resources"] = {{"requests", {{"nvidia.com/gpu", 1}}}};
       },
       "spec.template.spec.containers[0].resources.limits[nvidia.com/gpu]", "Required value"},
      {"template label not a string",
       [](json& j) { j["spec"]["template"]["metadata"]["labels"]["n"] = 1; },
       "spec.template.metadata.labels[n]", "Invalid value"},
  };
  for (const Refusal& r : cases) {
    json m = JobManifest();
    r.change(m);
    json out = "untouched";
    std::optional<FieldProblem> p;
    try {
      p = DefaultJob(m, "ml", kUid, kNow, &out);
    } catch (const std::exception& e) {
      ADD_FAILURE() << r.what << ": threw " << e.what();
      continue;
    }
    if (!p.has_value()) {
      ADD_FAILURE() << r.what << ": accepted";
      continue;
    }
    EXPECT_EQ(p->field, r.field) << r.what;
    EXPECT_EQ(p->type, r.type) << r.what << " (" << p->field << ")";
    EXPECT_EQ(out, "untouched") << r.what;
  }
}

TEST(K8sJobPodTest, PodFromTemplate) {
  json job = MustDefault(JobManifest());
  json pod = PodFromTemplate(job, -1, "train-x7k2q");
  EXPECT_EQ(pod["apiVersion"], "v1");
  EXPECT_EQ(pod["kind"], "Pod");
  const json& md = pod["metadata"];
  EXPECT_EQ(md["name"], "train-x7k2q");
  EXPECT_EQ(md["generateName"], "train-");
  EXPECT_EQ(md["labels"]["job-name"], "train");
  EXPECT_EQ(md["labels"]["batch.kubernetes.io/controller-uid"], kUid);
  EXPECT_EQ(md["labels"]["app"], "llm");
  EXPECT_FALSE(md["labels"].contains("batch.kubernetes.io/job-completion-index"));
  EXPECT_FALSE(md["annotations"].contains("batch.kubernetes.io/job-completion-index"));
  EXPECT_FALSE(pod["spec"].contains("hostname"));  // the pod's name serves
  ASSERT_EQ(md["ownerReferences"].size(), 1u);
  EXPECT_EQ(md["ownerReferences"][0], json({{"apiVersion", "batch/v1"},
                                            {"kind", "Job"},
                                            {"name", "train"},
                                            {"uid", kUid},
                                            {"controller", true},
                                            {"blockOwnerDeletion", true}}));
  EXPECT_EQ(pod["spec"], job["spec"]["template"]["spec"]);
  // It maps: the Job's pods are ordinary pods.
  PodMapping m = MustMap(pod);
  EXPECT_EQ(m.name, "train-x7k2q");
  EXPECT_EQ(m.meta["ownerReferences"][0]["uid"], kUid);
  EXPECT_EQ(m.meta["spec"]["restartPolicy"], "Never");
  EXPECT_EQ(m.request["argv"][2], "--shard=$(JOB_COMPLETION_INDEX)");  // not defined: kept
}

TEST(K8sJobPodTest, IndexedPodsKnowTheirIndex) {
  json m = JobManifest();
  m["spec"]["completionMode"] = "Indexed";
  m["spec"]["completions"] = 4;
  json job = MustDefault(m);
  json pod = PodFromTemplate(job, 3, "train-3-x7k2q");
  EXPECT_EQ(pod["metadata"]["labels"]["batch.kubernetes.io/job-completion-index"], "3");
  EXPECT_EQ(pod["metadata"]["annotations"]["batch.kubernetes.io/job-completion-index"], "3");
  EXPECT_EQ(pod["spec"]["hostname"], "train-3");  // $(job-name)-$(index), as the Job controller
  const json& env = pod["spec"]["containers"][0]["env"];
  ASSERT_EQ(env.size(), 2u);
  EXPECT_EQ(env[0]["name"], "A");
  EXPECT_EQ(env[1], json({{"name", "JOB_COMPLETION_INDEX"}, {"value", "3"}}));  // appended
  // A container that sets the variable itself keeps its own.
  json own = job;
  own["spec"]["template"]["spec"]["containers"][0]["env"] =
      json::array({{{"name", "JOB_COMPLETION_INDEX"}, {"value", "mine"}}});
  const json own_pod = PodFromTemplate(own, 3, "train-3-y");
  const json& own_env = own_pod["spec"]["containers"][0]["env"];
  ASSERT_EQ(own_env.size(), 1u);
  EXPECT_EQ(own_env[0]["value"], "mine");
  PodMapping mapped = MustMap(pod);
  EXPECT_EQ(mapped.request["environment"]["JOB_COMPLETION_INDEX"], "3");
  EXPECT_EQ(mapped.request["argv"][2], "--shard=3");
  // The job itself is not changed.
  EXPECT_EQ(job["spec"]["template"]["spec"]["containers"][0]["env"].size(), 1u);
  // Every container and init container gets it.
  json several = m;
  json& tspec = several["spec"]["template"]["spec"];
  tspec["containers"].push_back(
      json{{"name", "logger"}, {"image", "busybox"}, {"command", json::array({"log"})}});
  tspec["initContainers"] = json::array(
      {json{{"name", "fetch"}, {"image", "busybox"}, {"command", json::array({"fetch"})}}});
  json pod2 = PodFromTemplate(MustDefault(several), 2, "train-2-x7k2q");
  EXPECT_EQ(pod2["spec"]["containers"][1]["env"],
            json::array({json{{"name", "JOB_COMPLETION_INDEX"}, {"value", "2"}}}));
  EXPECT_EQ(pod2["spec"]["initContainers"][0]["env"][0]["value"], "2");
  // A container without env gets one.
  job["spec"]["template"]["spec"]["containers"][0].erase("env");
  EXPECT_EQ(PodFromTemplate(job, 0, "p")["spec"]["containers"][0]["env"],
            json::array({json{{"name", "JOB_COMPLETION_INDEX"}, {"value", "0"}}}));
}

TEST(K8sJobTableTest, Columns) {
  std::vector<std::string> names;
  for (const json& c : JobTableColumns()) names.push_back(c["name"]);
  EXPECT_EQ(names, (std::vector<std::string>{"Name", "Status", "Completions", "Duration", "Age",
                                             "Containers", "Images", "Selector"}));
}

TEST(K8sJobTableTest, Cells) {
  json job = MustDefault(JobManifest());
  const std::string selector = std::string("batch.kubernetes.io/controller-uid=") + kUid;
  EXPECT_EQ(JobTableCells(job, kNow + 30),
            json({"train", "Running", "0/1", "", "30s", "main", "pytorch:2.3", selector}));
  job["status"] = {{"startTime", Rfc3339(kNow + 5)}, {"active", 1}};
  EXPECT_EQ(JobTableCells(job, kNow + 30)[3], "25s");  // still going: up to now
  job["status"]["succeeded"] = 1;
  job["status"]["completionTime"] = Rfc3339(kNow + 15);
  job["status"]["conditions"] =
      json::array({json{{"type", "SuccessCriteriaMet"}, {"status", "True"}},
                   json{{"type", "Complete"}, {"status", "True"}}});
  json cells = JobTableCells(job, kNow + 200);
  EXPECT_EQ(cells[1], "Complete");
  EXPECT_EQ(cells[2], "1/1");
  EXPECT_EQ(cells[3], "10s");
  EXPECT_EQ(cells[4], "3m20s");
  job["status"]["conditions"] = json::array({json{{"type", "Failed"}, {"status", "True"}},
                                             json{{"type", "Complete"}, {"status", "False"}}});
  EXPECT_EQ(JobTableCells(job, kNow)[1], "Failed");
  job["status"] = json::object();
  job["spec"]["suspend"] = true;
  EXPECT_EQ(JobTableCells(job, kNow)[1], "Suspended");
  job["spec"]["completions"] = 8;
  job["status"]["succeeded"] = 3;
  EXPECT_EQ(JobTableCells(job, kNow)[2], "3/8");
}

TEST(K8sJobTableTest, FieldSelectors) {
  json job = MustDefault(JobManifest());
  EXPECT_EQ(JobField(job, "metadata.name"), "train");
  EXPECT_EQ(JobField(job, "metadata.namespace"), "ml");
  EXPECT_EQ(JobField(job, "status.successful"), "0");
  job["status"]["succeeded"] = 2;
  EXPECT_EQ(JobField(job, "status.successful"), "2");
  EXPECT_EQ(JobField(job, "spec.completions"), std::nullopt);
  EXPECT_EQ(JobField(job, "status.phase"), std::nullopt);
}

// A Job as a client wrote it (no status yet) still has cells and fields.
TEST(K8sJobTableTest, JobWithoutStatus) {
  json job = JobManifest();
  std::optional<std::string> succeeded;
  ASSERT_NO_THROW(succeeded = JobField(job, "status.successful"));
  EXPECT_EQ(succeeded, "0");
  json cells;
  ASSERT_NO_THROW(cells = JobTableCells(job, kNow));
  EXPECT_EQ(cells[2], "0/1");
}

// ---- Events ---------------------------------------------------------------------------------

TEST(K8sEventTest, MakeEventShape) {
  json pod = EncodePod(PodJob().Facts("PENDING"));
  json e = MakeEvent(pod, "Warning", "FailedScheduling", "berth: Resources", kNow - 40, 3,
                     "berth-scheduler");
  EXPECT_EQ(e["apiVersion"], "v1");
  EXPECT_EQ(e["kind"], "Event");
  EXPECT_EQ(e["metadata"]["namespace"], "ml");
  EXPECT_EQ(e["metadata"]["name"].get<std::string>().rfind("train.", 0), 0u);
  EXPECT_EQ(e["metadata"]["creationTimestamp"], Rfc3339(kNow - 40));
  EXPECT_EQ(e["involvedObject"], json({{"apiVersion", "v1"},
                                       {"kind", "Pod"},
                                       {"namespace", "ml"},
                                       {"name", "train"},
                                       {"uid", pod["metadata"]["uid"]}}));
  EXPECT_EQ(e["type"], "Warning");
  EXPECT_EQ(e["reason"], "FailedScheduling");
  EXPECT_EQ(e["message"], "berth: Resources");
  EXPECT_EQ(e["source"], json::object({{"component", "berth-scheduler"}}));
  EXPECT_EQ(e["count"], 3);
  EXPECT_EQ(e["firstTimestamp"], Rfc3339(kNow - 40));
  EXPECT_EQ(e["lastTimestamp"], Rfc3339(kNow - 40));
  // The same happening on the same object is the same event (its count goes up).
  json again =
      MakeEvent(pod, "Warning", "FailedScheduling", "berth: Resources", kNow, 4, "berth-scheduler");
  EXPECT_EQ(again["metadata"]["name"], e["metadata"]["name"]);
  EXPECT_EQ(again["metadata"]["uid"], e["metadata"]["uid"]);
  EXPECT_NE(MakeEvent(pod, "Normal", "Scheduled", "on gpu07", kNow, 1, "b")["metadata"]["name"],
            e["metadata"]["name"]);
}

TEST(K8sEventTest, EventsAboutNodesLiveInDefault) {
  json node = {
      {"apiVersion", "v1"}, {"kind", "Node"}, {"metadata", {{"name", "gpu07"}, {"uid", "n-uid"}}}};
  json e = MakeEvent(node, "Normal", "NodeNotReady", "agent lost", kNow, 1, "berth-controller");
  EXPECT_EQ(e["metadata"]["namespace"], "default");
  EXPECT_EQ(e["involvedObject"]["namespace"], "");
  EXPECT_EQ(e["involvedObject"]["kind"], "Node");
}

TEST(K8sEventTest, TableAndFields) {
  std::vector<std::string> names;
  for (const json& c : EventTableColumns()) names.push_back(c["name"]);
  EXPECT_EQ(names, (std::vector<std::string>{"Last Seen", "Type", "Reason", "Object", "Message"}));
  json job = MustDefault(JobManifest());
  json e = MakeEvent(job, "Normal", "SuccessfulCreate", "Created pod: train-x7k2q", kNow - 125, 1,
                     "job-controller");
  EXPECT_EQ(EventTableCells(e, kNow),
            json({"2m5s", "Normal", "SuccessfulCreate", "job/train", "Created pod: train-x7k2q"}));
  EXPECT_EQ(EventField(e, "involvedObject.name"), "train");
  EXPECT_EQ(EventField(e, "involvedObject.namespace"), "ml");
  EXPECT_EQ(EventField(e, "involvedObject.kind"), "Job");
  EXPECT_EQ(EventField(e, "involvedObject.uid"), kUid);
  EXPECT_EQ(EventField(e, "involvedObject.apiVersion"), "batch/v1");
  EXPECT_EQ(EventField(e, "involvedObject.fieldPath"), "");
  EXPECT_EQ(EventField(e, "metadata.namespace"), "ml");
  EXPECT_EQ(EventField(e, "metadata.name"), e["metadata"]["name"].get<std::string>());
  EXPECT_EQ(EventField(e, "reason"), "SuccessfulCreate");
  EXPECT_EQ(EventField(e, "type"), "Normal");
  EXPECT_EQ(EventField(e, "source"), "job-controller");
  EXPECT_EQ(EventField(e, "involvedObject.labels"), std::nullopt);
  EXPECT_EQ(EventField(e, "message"), std::nullopt);
}

TEST(K8sJobDefaultTest, PolicyShapesAreChecked) {
  auto problem = [](const json& spec_changes) {
    json m = JobManifest();
    m["spec"]["completionMode"] = "Indexed";
    m["spec"]["completions"] = 3;
    for (const auto& [k, v] : spec_changes.items()) m["spec"][k] = v;
    json out;
    std::optional<FieldProblem> p = DefaultJob(m, "default", "uid-1", kNow, &out);
    return p ? p->field : std::string();
  };
  EXPECT_EQ(problem({{"successPolicy", {{"rules", json::array()}}}}), "spec.successPolicy.rules");
  EXPECT_EQ(problem({{"successPolicy", {{"rules", json::array({json::object()})}}}}),
            "spec.successPolicy.rules[0]");
  EXPECT_EQ(problem({{"successPolicy", {{"rules", json::array({{{"succeededCount", "x"}}})}}}}),
            "spec.successPolicy.rules[0].succeededCount");
  EXPECT_EQ(problem({{"successPolicy", {{"rules", json::array({{{"succeededIndexes", "0-1"}}})}}}}),
            "");
  json never = JobManifest()["spec"]["template"];
  never["spec"]["restartPolicy"] = "Never";
  EXPECT_EQ(problem({{"template", never},
                     {"podFailurePolicy", {{"rules", json::array({{{"action", "Explode"}}})}}}}),
            "spec.podFailurePolicy.rules[0].action");
  EXPECT_EQ(problem({{"template", never},
                     {"podFailurePolicy", {{"rules", json::array({{{"action", "FailJob"}}})}}}}),
            "spec.podFailurePolicy.rules[0]");
  EXPECT_EQ(
      problem({{"template", never},
               {"podFailurePolicy",
                {{"rules",
                  json::array({{{"action", "FailJob"},
                                {"onExitCodes", {{"operator", "In"}, {"values", {"1"}}}}}})}}}}),
      "spec.podFailurePolicy.rules[0].onExitCodes.values");
  EXPECT_EQ(
      problem({{"template", never},
               {"podFailurePolicy",
                {{"rules", json::array({{{"action", "Ignore"},
                                         {"onPodConditions",
                                          json::array({{{"type", "DisruptionTarget"}}})}}})}}}}),
      "");
}

}  // namespace
}  // namespace berth::k8s
