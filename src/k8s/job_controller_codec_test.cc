#include <gtest/gtest.h>

#include "k8s/job_controller.h"

namespace berth::k8s {
namespace {

using nlohmann::json;

// A Job as the store holds it after the controller's first rounds.
json StoredJob() {
  return json::parse(R"({
    "apiVersion": "batch/v1", "kind": "Job",
    "metadata": {"name": "train", "namespace": "team", "uid": "u-1",
                 "annotations": {"berth.io/gang": "true"}},
    "spec": {"parallelism": 2, "completions": 3, "completionMode": "Indexed",
             "backoffLimit": 1, "activeDeadlineSeconds": 60, "ttlSecondsAfterFinished": 30,
             "suspend": false, "template": {"spec": {"restartPolicy": "Never"}},
             "podFailurePolicy": {"rules": [
               {"action": "FailJob", "onExitCodes": {"operator": "NotIn", "values": [0, 3]}},
               {"action": "Ignore", "onPodConditions": [{"type": "DisruptionTarget"}]}]},
             "successPolicy": {"rules": [{"succeededIndexes": "0-1", "succeededCount": 1}]}},
    "status": {"startTime": "2023-11-14T22:13:20Z", "active": 1, "ready": 1, "succeeded": 1,
               "failed": 0, "terminating": 0, "uncountedTerminatedPods": {},
               "completedIndexes": "0",
               "conditions": [{"type": "Suspended", "status": "False", "reason": "JobResumed",
                               "message": "Job resumed",
                               "lastProbeTime": "2023-11-14T22:13:20Z",
                               "lastTransitionTime": "2023-11-14T22:13:20Z"}]},
    "berth": {"owner": {"uid": 1000, "gid": 100, "user": "ada", "admin": false},
              "pods": {"12": {"name": "train-0-abcde", "index": 0, "state": "COMPLETED",
                              "exit_code": 0},
                       "13": {"name": "train-1-fghij", "index": 1, "state": "RUNNING"}}}
  })");
}

TEST(JobCodecTest, DecodesEveryField) {
  Result<JobRecord> job = DecodeJob(StoredJob());
  ASSERT_TRUE(job.ok()) << job.status().message();
  EXPECT_EQ(job->ns, "team");
  EXPECT_EQ(job->name, "train");
  EXPECT_TRUE(job->gang);
  EXPECT_EQ(job->spec.parallelism, 2);
  EXPECT_EQ(job->spec.completions, 3);
  EXPECT_TRUE(job->spec.indexed);
  EXPECT_EQ(job->spec.backoff_limit, 1);
  EXPECT_EQ(job->spec.active_deadline_seconds, 60);
  EXPECT_EQ(job->spec.ttl_seconds_after_finished, 30);
  EXPECT_FALSE(job->spec.suspend);
  ASSERT_EQ(job->spec.pod_failure_policy->size(), 2u);
  const PodFailureRule& fail = (*job->spec.pod_failure_policy)[0];
  EXPECT_EQ(fail.action, "FailJob");
  EXPECT_TRUE(fail.on_exit_codes);
  EXPECT_FALSE(fail.exit_codes_in);
  EXPECT_EQ(fail.exit_codes, (std::vector<int64_t>{0, 3}));
  const PodFailureRule& ignore = (*job->spec.pod_failure_policy)[1];
  EXPECT_FALSE(ignore.on_exit_codes);
  EXPECT_TRUE(ignore.on_disruption);  // status defaults to True
  ASSERT_EQ(job->spec.success_policy->size(), 1u);
  EXPECT_EQ((*job->spec.success_policy)[0].succeeded_indexes, "0-1");
  EXPECT_EQ((*job->spec.success_policy)[0].succeeded_count, 1);
  EXPECT_EQ(job->status.start_time, "2023-11-14T22:13:20Z");
  ASSERT_EQ(job->status.conditions.size(), 1u);
  EXPECT_EQ(job->status.conditions[0].reason, "JobResumed");
  EXPECT_EQ(job->owner.uid, 1000u);
  EXPECT_EQ(job->owner.user, "ada");
  ASSERT_EQ(job->pods.size(), 2u);
  EXPECT_EQ(job->pods[0].id, 12u);
  EXPECT_EQ(job->pods[0].exit_code, 0);
  EXPECT_EQ(job->pods[1].index, 1);
  EXPECT_FALSE(job->pods[1].exit_code.has_value());
  EXPECT_FALSE(job->finished_at.has_value());
}

TEST(JobCodecTest, WorkQueueAndDefaults) {
  json j = {{"spec", {{"completions", nullptr}}}};
  Result<JobRecord> job = DecodeJob(j);
  ASSERT_TRUE(job.ok()) << job.status().message();
  EXPECT_FALSE(job->spec.completions.has_value());
  EXPECT_EQ(job->spec.parallelism, 1);
  EXPECT_EQ(job->spec.backoff_limit, 6);
  EXPECT_FALSE(job->spec.indexed);
  EXPECT_FALSE(job->spec.pod_failure_policy.has_value());
  EXPECT_FALSE(job->gang);
}

TEST(JobCodecTest, EncodingWhatWasDecodedChangesNothing) {
  const json stored = StoredJob();
  json j = stored;
  EncodeJob(*DecodeJob(stored), &j);
  EXPECT_EQ(j, stored) << j.dump(2);
}

TEST(JobCodecTest, EncodeWritesStatusAndPodsKeepingTheRest) {
  json j = StoredJob();
  j["status"]["conditions"].push_back("not a condition");
  JobRecord job = *DecodeJob(j);
  job.status.start_time.reset();
  job.status.active = 0;
  job.status.conditions[0].status = "True";
  job.status.conditions.push_back({"Failed", "True", "DeadlineExceeded", "late", "t1", "t2"});
  job.pods[1].stopped = true;
  job.pods.push_back({14, "train-2-klmno", 2, "PENDING", {}, false, {}, {}});
  job.finished_at = 99;
  EncodeJob(job, &j);
  EXPECT_FALSE(j["status"].contains("startTime"));
  EXPECT_EQ(j["status"]["active"], 0);
  ASSERT_EQ(j["status"]["conditions"].size(), 3u);
  EXPECT_EQ(j["status"]["conditions"][0]["status"], "True");
  EXPECT_EQ(j["status"]["conditions"][1], "not a condition");
  EXPECT_EQ(j["status"]["conditions"][2]["reason"], "DeadlineExceeded");
  EXPECT_EQ(j["berth"]["pods"]["13"]["stopped"], true);
  EXPECT_EQ(j["berth"]["pods"]["14"],
            json({{"name", "train-2-klmno"}, {"index", 2}, {"state", "PENDING"}}));
  EXPECT_EQ(j["berth"]["finished_at"], 99);
  EXPECT_EQ(j["berth"]["owner"]["user"], "ada");
  EXPECT_EQ(j["spec"], StoredJob()["spec"]);
}

TEST(JobCodecTest, RefusesFieldsOfTheWrongType) {
  for (const char* patch :
       {R"({"spec": "x"})", R"({"spec": {"parallelism": "2"}})", R"({"spec": {"suspend": 1}})",
        R"({"spec": {"completionMode": 1}})", R"({"status": {"startTime": 5}})",
        R"({"berth": {"pods": {"x": {}}}})", R"({"berth": {"pods": {"12": {"index": "0"}}}})",
        R"({"berth": {"finished_at": "now"}})", R"({"spec": {"podFailurePolicy": {"rules": [1]}}})",
        R"({"spec": {"successPolicy": {"rules": [{"succeededIndexes": 1}]}}})"}) {
    json j = StoredJob();
    j.merge_patch(json::parse(patch));
    EXPECT_FALSE(DecodeJob(j).ok()) << patch;
  }
  EXPECT_FALSE(DecodeJob(json::array()).ok());
}

TEST(JobCodecTest, OnlyUnfinishedOrDueJobsNeedWork) {
  json j = StoredJob();
  EXPECT_TRUE(NeedsReconcile(j, 0));
  j["status"]["conditions"].push_back({{"type", "Complete"}, {"status", "True"}});
  j["berth"]["finished_at"] = 1000;
  EXPECT_FALSE(NeedsReconcile(j, 1029));
  EXPECT_TRUE(NeedsReconcile(j, 1030));
  j["spec"].erase("ttlSecondsAfterFinished");
  EXPECT_FALSE(NeedsReconcile(j, 1'000'000));
  j["status"]["conditions"].back()["status"] = "False";
  EXPECT_TRUE(NeedsReconcile(j, 0));
}

}  // namespace
}  // namespace berth::k8s
