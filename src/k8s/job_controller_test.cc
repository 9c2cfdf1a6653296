#include "k8s/job_controller.h"

#include <gtest/gtest.h>

#include "k8s/codec.h"

namespace berth::k8s {
namespace {

constexpr int64_t kNow = 1'700'000'000;

// A Job record builder: MakeJob().Completions(3).Parallelism(2).Pod(...).Obj().
class MakeJob {
 public:
  MakeJob() {
    job_.ns = "team";
    job_.name = "train";
    job_.status.start_time = k8s::Rfc3339(kNow - 5);
  }
  MakeJob& Parallelism(int64_t n) {
    return Set([&] { job_.spec.parallelism = n; });
  }
  MakeJob& Completions(std::optional<int64_t> n) {
    return Set([&] { job_.spec.completions = n; });
  }
  MakeJob& Indexed() {
    return Set([&] { job_.spec.indexed = true; });
  }
  MakeJob& BackoffLimit(int64_t n) {
    return Set([&] { job_.spec.backoff_limit = n; });
  }
  MakeJob& Deadline(int64_t s) {
    return Set([&] { job_.spec.active_deadline_seconds = s; });
  }
  MakeJob& Suspend(bool s) {
    return Set([&] { job_.spec.suspend = s; });
  }
  MakeJob& Ttl(int64_t s) {
    return Set([&] { job_.spec.ttl_seconds_after_finished = s; });
  }
  MakeJob& StartedAt(int64_t t) {
    return Set([&] { job_.status.start_time = k8s::Rfc3339(t); });
  }
  MakeJob& FailureRule(PodFailureRule r) {
    return Set([&] {
      if (!job_.spec.pod_failure_policy) job_.spec.pod_failure_policy.emplace();
      job_.spec.pod_failure_policy->push_back(std::move(r));
    });
  }
  MakeJob& SuccessPolicy(std::optional<std::string> indexes, std::optional<int64_t> count) {
    return Set([&] {
      if (!job_.spec.success_policy) job_.spec.success_policy.emplace();
      job_.spec.success_policy->push_back({indexes, count});
    });
  }
  MakeJob& Condition(const std::string& type, const std::string& status, int64_t at = kNow - 60) {
    return Set([&] {
      const std::string t = k8s::Rfc3339(at);
      job_.status.conditions.push_back({type, status, "Reason", "message", t, t});
    });
  }
  MakeJob& FinishedAt(int64_t t) {
    return Set([&] { job_.finished_at = t; });
  }
  // A pod in berth state `state` (exit code `exit_code` once it ended), completion index `index`.
  MakeJob& Pod(const std::string& state, int index = -1, std::optional<int> exit_code = {}) {
    return Set([&] {
      JobPod p;
      p.id = static_cast<core::JobId>(100 + job_.pods.size());
      p.name = JobPodName(job_.name, index, "p" + std::to_string(job_.pods.size()));
      p.index = index;
      p.state = state;
      p.exit_code = exit_code;
      job_.pods.push_back(p);
    });
  }
  MakeJob& Pods(int n, const std::string& state) {
    for (int i = 0; i < n; ++i) Pod(state, -1, state == "COMPLETED" ? 0 : 1);
    return *this;
  }
  JobRecord Obj() const { return job_; }

 private:
  template <typename F>
  MakeJob& Set(F f) {
    f();
    return *this;
  }
  JobRecord job_;
};

PodFailureRule OnExitCodes(const std::string& action, bool in, std::vector<int64_t> codes) {
  PodFailureRule r;
  r.action = action;
  r.on_exit_codes = true;
  r.exit_codes_in = in;
  r.exit_codes = std::move(codes);
  return r;
}

PodFailureRule OnDisruption(const std::string& action) {
  PodFailureRule r;
  r.action = action;
  r.on_disruption = true;
  return r;
}

// Condition `type` of the Job; an empty one when it has none.
JobCondition ConditionOf(const JobActions& a, const std::string& type) {
  for (const JobCondition& c : a.job.status.conditions) {
    if (c.type == type) return c;
  }
  return {};
}

bool HasTrue(const JobActions& a, const std::string& type) {
  return ConditionOf(a, type).status == "True";
}

std::vector<std::string> Reasons(const JobActions& a) {
  std::vector<std::string> out;
  for (const JobEvent& e : a.events) out.push_back(e.reason);
  return out;
}

// --- parallelism and completions -----------------------------------------------------------

TEST(JobControllerTest, CreatesUpToParallelism) {
  JobActions a = Reconcile(MakeJob().Completions(5).Parallelism(2).Obj(), kNow);
  EXPECT_EQ(a.create, (std::vector<int>{-1, -1}));
  EXPECT_EQ(a.job.status.active, 0);  // the applier counts the pods it makes
  EXPECT_TRUE(a.events.empty());
}

TEST(JobControllerTest, NeverMoreThanParallelismActive) {
  JobActions a = Reconcile(MakeJob().Completions(5).Parallelism(2).Pods(2, "RUNNING").Obj(), kNow);
  EXPECT_TRUE(a.create.empty());
  EXPECT_EQ(a.job.status.active, 2);
  EXPECT_EQ(a.job.status.ready, 2);
  a = Reconcile(MakeJob().Completions(5).Parallelism(3).Pod("PENDING").Pod("RUNNING").Obj(), kNow);
  EXPECT_EQ(a.create.size(), 1u);
  EXPECT_EQ(a.job.status.active, 2);
  EXPECT_EQ(a.job.status.ready, 1);
}

TEST(JobControllerTest, FewerPodsWhenFewerCompletionsRemain) {
  JobActions a =
      Reconcile(MakeJob().Completions(5).Parallelism(3).Pods(4, "COMPLETED").Obj(), kNow);
  EXPECT_EQ(a.create, (std::vector<int>{-1}));
  EXPECT_EQ(a.job.status.succeeded, 4);
}

TEST(JobControllerTest, CompleteAtCompletions) {
  JobActions a = Reconcile(MakeJob().Completions(3).Pods(3, "COMPLETED").Obj(), kNow);
  EXPECT_TRUE(a.create.empty());
  EXPECT_TRUE(HasTrue(a, "Complete"));
  EXPECT_TRUE(HasTrue(a, "SuccessCriteriaMet"));
  EXPECT_EQ(ConditionOf(a, "Complete").reason, "CompletionsReached");
  EXPECT_EQ(ConditionOf(a, "Complete").message, "Reached expected number of succeeded pods");
  EXPECT_EQ(a.job.status.completion_time, k8s::Rfc3339(kNow));
  EXPECT_EQ(a.job.finished_at, kNow);
  ASSERT_EQ(a.events.size(), 1u);
  EXPECT_EQ(a.events[0], (JobEvent{"Normal", "Completed", "Job completed"}));
}

TEST(JobControllerTest, NotCompleteWhileFewerSucceeded) {
  JobActions a =
      Reconcile(MakeJob().Completions(3).Pods(2, "COMPLETED").Pod("RUNNING").Obj(), kNow);
  EXPECT_FALSE(HasTrue(a, "Complete"));
  EXPECT_TRUE(a.create.empty());
  EXPECT_FALSE(a.job.finished_at.has_value());
}

TEST(JobControllerTest, WorkQueueDoneWhenOneSucceededAndNoneRuns) {
  const MakeJob queue = MakeJob().Completions(std::nullopt).Parallelism(3);
  EXPECT_EQ(Reconcile(MakeJob(queue).Obj(), kNow).create.size(), 3u);
  JobActions a = Reconcile(MakeJob(queue).Pod("COMPLETED", -1, 0).Pod("RUNNING").Obj(), kNow);
  EXPECT_TRUE(a.create.empty());  // a success: no new pods, wait for the others
  EXPECT_FALSE(HasTrue(a, "Complete"));
  a = Reconcile(MakeJob(queue).Pod("COMPLETED", -1, 0).Obj(), kNow);
  EXPECT_TRUE(HasTrue(a, "Complete"));
}

TEST(JobControllerTest, StartTimeSetWhenMissing) {
  JobRecord job = MakeJob().Obj();
  job.status.start_time.reset();
  EXPECT_EQ(Reconcile(job, kNow).job.status.start_time, k8s::Rfc3339(kNow));
}

// --- Indexed -------------------------------------------------------------------------------

TEST(JobControllerTest, IndexedCreatesMissingIndexesOnce) {
  JobRecord job = MakeJob()
                      .Indexed()
                      .Completions(5)
                      .Parallelism(5)
                      .Pod("COMPLETED", 0, 0)
                      .Pod("RUNNING", 1)
                      .Pod("COMPLETED", 2, 0)
                      .Pod("FAILED", 3, 1)
                      .Obj();
  JobActions a = Reconcile(job, kNow);
  EXPECT_EQ(a.create, (std::vector<int>{3, 4}));
  EXPECT_EQ(a.job.status.completed_indexes, "0,2");
  EXPECT_EQ(a.job.status.failed, 1);
}

TEST(JobControllerTest, IndexedRespectsParallelism) {
  JobActions a = Reconcile(MakeJob()
                               .Indexed()
                               .Completions(5)
                               .Parallelism(2)
                               .Pod("COMPLETED", 0, 0)
                               .Pod("RUNNING", 1)
                               .Obj(),
                           kNow);
  EXPECT_EQ(a.create, (std::vector<int>{2}));
}

TEST(JobControllerTest, IndexedCompleteWhenEveryIndexSucceeded) {
  MakeJob job = MakeJob().Indexed().Completions(5).Parallelism(5);
  for (int i : {0, 1, 2, 4}) job.Pod("COMPLETED", i, 0);
  job.Pod("COMPLETED", 1, 0);  // an index that succeeded twice counts once
  JobActions a = Reconcile(job.Obj(), kNow);
  EXPECT_EQ(a.job.status.completed_indexes, "0-2,4");
  EXPECT_FALSE(HasTrue(a, "Complete"));
  EXPECT_EQ(a.create, (std::vector<int>{3}));
  job.Pod("COMPLETED", 3, 0);
  a = Reconcile(job.Obj(), kNow);
  EXPECT_EQ(a.job.status.completed_indexes, "0-4");
  EXPECT_TRUE(HasTrue(a, "Complete"));
}

TEST(JobControllerTest, IndexRangesBothWays) {
  EXPECT_EQ(IndexRanges({}), "");
  EXPECT_EQ(IndexRanges({0, 1, 2, 4, 6, 7}), "0-2,4,6-7");
  EXPECT_EQ(ParseIndexRanges("0-2,4,6-7"), (std::set<int>{0, 1, 2, 4, 6, 7}));
  EXPECT_EQ(ParseIndexRanges(""), std::set<int>{});
  EXPECT_FALSE(ParseIndexRanges("3-1").has_value());
  EXPECT_FALSE(ParseIndexRanges("a").has_value());
  EXPECT_FALSE(ParseIndexRanges("1,,2").has_value());
}

// --- backoffLimit and activeDeadlineSeconds --------------------------------------------------

TEST(JobControllerTest, BackoffLimitExceededAfterLimitPlusOneFailures) {
  JobActions a = Reconcile(MakeJob().Completions(1).BackoffLimit(2).Pods(2, "FAILED").Obj(), kNow);
  EXPECT_FALSE(HasTrue(a, "Failed"));
  EXPECT_EQ(a.create, (std::vector<int>{-1}));  // a retry
  EXPECT_EQ(a.job.status.failed, 2);
  a = Reconcile(MakeJob()
                    .Completions(2)
                    .Parallelism(2)
                    .BackoffLimit(2)
                    .Pods(3, "FAILED")
                    .Pod("RUNNING")
                    .Obj(),
                kNow);
  EXPECT_TRUE(HasTrue(a, "Failed"));
  EXPECT_TRUE(HasTrue(a, "FailureTarget"));
  EXPECT_EQ(ConditionOf(a, "Failed").reason, "BackoffLimitExceeded");
  EXPECT_EQ(ConditionOf(a, "Failed").message, "Job has reached the specified backoff limit");
  EXPECT_EQ(a.stop, (std::vector<core::JobId>{103}));
  EXPECT_TRUE(a.job.pods[3].stopped);
  EXPECT_EQ(a.job.status.active, 0);
  EXPECT_FALSE(a.job.status.completion_time.has_value());
  EXPECT_EQ(a.job.finished_at, kNow);
  EXPECT_EQ(a.events, (std::vector<JobEvent>{{"Warning", "BackoffLimitExceeded",
                                              "Job has reached the specified backoff limit"}}));
  EXPECT_TRUE(a.create.empty());
}

TEST(JobControllerTest, SignalledPodsCountAsFailures) {
  JobActions a = Reconcile(MakeJob().BackoffLimit(0).Pod("CANCELLED", -1, 137).Obj(), kNow);
  EXPECT_EQ(ConditionOf(a, "Failed").reason, "BackoffLimitExceeded");
}

TEST(JobControllerTest, DeadlineExceededStopsActivePods) {
  const MakeJob job = MakeJob().Completions(2).Parallelism(2).Deadline(10).Pods(2, "RUNNING");
  JobActions a = Reconcile(MakeJob(job).StartedAt(kNow - 9).Obj(), kNow);
  EXPECT_FALSE(HasTrue(a, "Failed"));
  EXPECT_TRUE(a.stop.empty());
  a = Reconcile(MakeJob(job).StartedAt(kNow - 10).Obj(), kNow);
  EXPECT_EQ(ConditionOf(a, "Failed").reason, "DeadlineExceeded");
  EXPECT_EQ(ConditionOf(a, "Failed").message, "Job was active longer than specified deadline");
  EXPECT_EQ(a.stop, (std::vector<core::JobId>{100, 101}));
  EXPECT_EQ(a.job.status.active, 0);
  EXPECT_EQ(Reasons(a), (std::vector<std::string>{"DeadlineExceeded"}));
}

TEST(JobControllerTest, StoppedPodsAreNotFailures) {
  JobRecord job = MakeJob().BackoffLimit(0).Pod("CANCELLED", -1, 137).Obj();
  job.pods[0].stopped = true;
  JobActions a = Reconcile(job, kNow);
  EXPECT_EQ(a.job.status.failed, 0);
  EXPECT_FALSE(HasTrue(a, "Failed"));
}

// --- suspend -------------------------------------------------------------------------------

TEST(JobControllerTest, SuspendStopsActivePods) {
  JobActions a = Reconcile(MakeJob()
                               .Completions(3)
                               .Parallelism(3)
                               .Suspend(true)
                               .Pod("RUNNING")
                               .Pod("PENDING")
                               .Pod("COMPLETED", -1, 0)
                               .Obj(),
                           kNow);
  EXPECT_EQ(a.stop, (std::vector<core::JobId>{100, 101}));
  EXPECT_TRUE(a.job.pods[0].stopped && a.job.pods[1].stopped);
  EXPECT_FALSE(a.job.pods[2].stopped);
  EXPECT_TRUE(HasTrue(a, "Suspended"));
  EXPECT_EQ(ConditionOf(a, "Suspended").reason, "JobSuspended");
  EXPECT_EQ(a.events, (std::vector<JobEvent>{{"Normal", "Suspended", "Job suspended"}}));
  EXPECT_FALSE(a.job.status.start_time.has_value());
  EXPECT_EQ(a.job.status.active, 0);
  EXPECT_EQ(a.job.status.succeeded, 1);
  EXPECT_TRUE(a.create.empty());
}

TEST(JobControllerTest, SuspendedTwiceSaysItOnce) {
  JobActions a = Reconcile(MakeJob().Suspend(true).Condition("Suspended", "True").Obj(), kNow);
  EXPECT_TRUE(a.events.empty());
  EXPECT_EQ(ConditionOf(a, "Suspended").last_probe_time, k8s::Rfc3339(kNow - 60));
}

TEST(JobControllerTest, ResumeRestartsWithNewStartTime) {
  JobRecord job = MakeJob().Completions(2).Parallelism(2).Condition("Suspended", "True").Obj();
  job.status.start_time.reset();
  JobActions a = Reconcile(job, kNow);
  const JobCondition c = ConditionOf(a, "Suspended");
  EXPECT_EQ(c.status, "False");
  EXPECT_EQ(c.reason, "JobResumed");
  EXPECT_EQ(c.last_transition_time, k8s::Rfc3339(kNow));
  EXPECT_EQ(a.job.status.start_time, k8s::Rfc3339(kNow));
  EXPECT_EQ(a.events, (std::vector<JobEvent>{{"Normal", "Resumed", "Job resumed"}}));
  EXPECT_EQ(a.create.size(), 2u);
  // A suspended pod that berth stopped is not a failure once resumed.
  job.pods.push_back({100, "train-x", -1, "CANCELLED", 137, true, {}, {}});
  EXPECT_EQ(Reconcile(job, kNow).job.status.failed, 0);
}

// --- podFailurePolicy ----------------------------------------------------------------------

TEST(JobControllerTest, FailJobRuleOnExitCode) {
  JobActions a = Reconcile(MakeJob()
                               .Completions(2)
                               .Parallelism(2)
                               .FailureRule(OnExitCodes("FailJob", true, {42}))
                               .Pod("FAILED", -1, 42)
                               .Pod("RUNNING")
                               .Obj(),
                           kNow);
  const std::string why =
      "Container for pod team/train-p0 failed with exit code 42 matching FailJob rule at index 0";
  EXPECT_EQ(ConditionOf(a, "Failed").reason, "PodFailurePolicy");
  EXPECT_EQ(ConditionOf(a, "Failed").message, why);
  EXPECT_EQ(ConditionOf(a, "FailureTarget").message, why);
  EXPECT_EQ(a.job.pods[0].policy, "FailJob");
  EXPECT_EQ(a.job.pods[0].policy_message, why);
  EXPECT_EQ(a.stop, (std::vector<core::JobId>{101}));
  EXPECT_EQ(a.events, (std::vector<JobEvent>{{"Warning", "PodFailurePolicy", why}}));
}

TEST(JobControllerTest, IgnoreRuleDoesNotCountTheFailure) {
  JobActions a = Reconcile(MakeJob()
                               .BackoffLimit(0)
                               .FailureRule(OnExitCodes("Ignore", true, {3, 4}))
                               .Pod("FAILED", -1, 4)
                               .Obj(),
                           kNow);
  EXPECT_EQ(a.job.status.failed, 0);
  EXPECT_EQ(a.job.pods[0].policy, "Ignore");
  EXPECT_FALSE(HasTrue(a, "Failed"));
  EXPECT_EQ(a.create.size(), 1u);  // a replacement
}

TEST(JobControllerTest, CountRuleAndNoMatchCountTheFailure) {
  const MakeJob job = MakeJob()
                          .BackoffLimit(5)
                          .FailureRule(OnExitCodes("Count", true, {1}))
                          .FailureRule(OnExitCodes("FailJob", false, {1, 2}));
  JobActions a = Reconcile(MakeJob(job).Pod("FAILED", -1, 1).Obj(), kNow);
  EXPECT_EQ(a.job.status.failed, 1);
  EXPECT_EQ(a.job.pods[0].policy, "Count");
  a = Reconcile(MakeJob(job).Pod("FAILED", -1, 2).Obj(), kNow);  // NotIn {1,2}: no rule
  EXPECT_EQ(a.job.pods[0].policy, "Count");
  EXPECT_FALSE(HasTrue(a, "Failed"));
  a = Reconcile(MakeJob(job).Pod("FAILED", -1, 7).Obj(), kNow);  // NotIn {1,2}: FailJob
  EXPECT_EQ(ConditionOf(a, "Failed").reason, "PodFailurePolicy");
}

TEST(JobControllerTest, ExitCodeZeroNeverMatches) {
  JobActions a = Reconcile(
      MakeJob().FailureRule(OnExitCodes("FailJob", false, {1})).Pod("NODE_FAIL", -1, 0).Obj(),
      kNow);
  EXPECT_EQ(a.job.pods[0].policy, "Count");
  EXPECT_FALSE(HasTrue(a, "Failed"));
}

TEST(JobControllerTest, DisruptionRuleMatchesNodeFailureAndPreemption) {
  const MakeJob job = MakeJob().BackoffLimit(0).FailureRule(OnDisruption("Ignore"));
  for (const char* state : {"NODE_FAIL", "PREEMPTED"}) {
    JobActions a = Reconcile(MakeJob(job).Pod(state, -1, 1).Obj(), kNow);
    EXPECT_EQ(a.job.pods[0].policy, "Ignore") << state;
    EXPECT_EQ(a.job.status.failed, 0) << state;
  }
  JobActions a = Reconcile(MakeJob(job).Pod("FAILED", -1, 1).Obj(), kNow);
  EXPECT_EQ(a.job.pods[0].policy, "Count");
  EXPECT_EQ(ConditionOf(a, "Failed").reason, "BackoffLimitExceeded");
}

TEST(JobControllerTest, PolicyDecidedOncePerPod) {
  JobRecord job = MakeJob()
                      .BackoffLimit(0)
                      .FailureRule(OnExitCodes("FailJob", true, {1}))
                      .Pod("FAILED", -1, 1)
                      .Obj();
  job.pods[0].policy = "Ignore";  // decided before (the rules may have changed since)
  JobActions a = Reconcile(job, kNow);
  EXPECT_EQ(a.job.status.failed, 0);
  EXPECT_FALSE(HasTrue(a, "Failed"));
}

// --- successPolicy -------------------------------------------------------------------------

TEST(JobControllerTest, SuccessPolicyByIndexes) {
  const MakeJob job = MakeJob().Indexed().Completions(4).Parallelism(4).SuccessPolicy("0-1", {});
  JobActions a = Reconcile(MakeJob(job).Pod("COMPLETED", 0, 0).Pod("RUNNING", 1).Obj(), kNow);
  EXPECT_FALSE(HasTrue(a, "Complete"));
  a = Reconcile(MakeJob(job).Pod("COMPLETED", 0, 0).Pod("COMPLETED", 1, 0).Pod("RUNNING", 2).Obj(),
                kNow);
  EXPECT_TRUE(HasTrue(a, "Complete"));
  EXPECT_TRUE(HasTrue(a, "SuccessCriteriaMet"));
  EXPECT_EQ(ConditionOf(a, "Complete").reason, "SuccessPolicy");
  EXPECT_EQ(ConditionOf(a, "Complete").message, "Matched rules at index 0");
  EXPECT_EQ(a.stop, (std::vector<core::JobId>{102}));
  EXPECT_EQ(a.job.status.completion_time, k8s::Rfc3339(kNow));
  EXPECT_EQ(
      a.events,
      (std::vector<JobEvent>{{"Normal", "Completed", "Job completed: Matched rules at index 0"}}));
  EXPECT_TRUE(a.create.empty());
}

TEST(JobControllerTest, SuccessPolicyByCount) {
  const MakeJob job =
      MakeJob().Indexed().Completions(4).Parallelism(4).SuccessPolicy("0,1", 5).SuccessPolicy("0-3",
                                                                                              2);
  JobActions a = Reconcile(MakeJob(job).Pod("COMPLETED", 3, 0).Obj(), kNow);
  EXPECT_FALSE(HasTrue(a, "Complete"));
  a = Reconcile(MakeJob(job).Pod("COMPLETED", 0, 0).Pod("COMPLETED", 3, 0).Obj(), kNow);
  EXPECT_EQ(ConditionOf(a, "Complete").message, "Matched rules at index 1");
  a = Reconcile(
      MakeJob().Indexed().Completions(4).SuccessPolicy({}, 1).Pod("COMPLETED", 2, 0).Obj(), kNow);
  EXPECT_EQ(ConditionOf(a, "Complete").message, "Matched rules at index 0");
}

TEST(JobControllerTest, SuccessPolicyBeatsBackoffButNotFailJob) {
  const MakeJob job = MakeJob()
                          .Indexed()
                          .Completions(3)
                          .Parallelism(3)
                          .BackoffLimit(0)
                          .SuccessPolicy("0", {})
                          .Pod("COMPLETED", 0, 0)
                          .Pod("FAILED", 1, 1);
  EXPECT_EQ(ConditionOf(Reconcile(job.Obj(), kNow), "Complete").reason, "SuccessPolicy");
  JobActions a = Reconcile(MakeJob(job).FailureRule(OnExitCodes("FailJob", true, {1})).Obj(), kNow);
  EXPECT_EQ(ConditionOf(a, "Failed").reason, "PodFailurePolicy");
  EXPECT_FALSE(HasTrue(a, "Complete"));
}

// --- finished Jobs and ttlSecondsAfterFinished ------------------------------------------------

TEST(JobControllerTest, FinishedJobHasNoActions) {
  for (const char* type : {"Complete", "Failed"}) {
    JobRecord job = MakeJob()
                        .Completions(3)
                        .Condition(type, "True")
                        .FinishedAt(kNow - 10)
                        .Pod("RUNNING")
                        .Pod("FAILED", -1, 1)
                        .Obj();
    JobActions a = Reconcile(job, kNow);
    EXPECT_TRUE(a.stop.empty() && a.create.empty() && a.events.empty()) << type;
    EXPECT_FALSE(a.delete_job || a.admit_gang) << type;
    EXPECT_EQ(a.job.status.conditions, job.status.conditions) << type;
    EXPECT_EQ(a.job.status.active, job.status.active) << type;
    EXPECT_FALSE(a.job.pods[1].policy.has_value()) << type;
  }
}

TEST(JobControllerTest, DeletedAfterTtlNotBefore) {
  const MakeJob job = MakeJob().Ttl(100).Condition("Complete", "True").Pod("COMPLETED", -1, 0);
  EXPECT_FALSE(Reconcile(MakeJob(job).FinishedAt(kNow - 99).Obj(), kNow).delete_job);
  EXPECT_TRUE(Reconcile(MakeJob(job).FinishedAt(kNow - 100).Obj(), kNow).delete_job);
  EXPECT_FALSE(Reconcile(MakeJob().Condition("Failed", "True").FinishedAt(0).Obj(), kNow)
                   .delete_job);  // no TTL: kept
  // A running Job is never deleted, whatever its TTL.
  EXPECT_FALSE(Reconcile(MakeJob().Ttl(0).Pod("RUNNING").Obj(), kNow).delete_job);
}

// --- what the applier reports ----------------------------------------------------------------

TEST(JobControllerTest, AddCreatedPodCountsItAndSaysSo) {
  JobActions a = Reconcile(MakeJob().Indexed().Completions(2).Parallelism(2).Obj(), kNow);
  ASSERT_EQ(a.create, (std::vector<int>{0, 1}));
  EXPECT_EQ(JobPodName("train", 0, "abcde"), "train-0-abcde");
  EXPECT_EQ(JobPodName("train", -1, "abcde"), "train-abcde");
  AddCreatedPod(7, "train-0-abcde", 0, &a);
  EXPECT_EQ(a.job.status.active, 1);
  ASSERT_EQ(a.job.pods.size(), 1u);
  EXPECT_EQ(a.job.pods[0].id, 7u);
  EXPECT_EQ(a.job.pods[0].index, 0);
  EXPECT_EQ(a.job.pods[0].state, "PENDING");
  EXPECT_EQ(a.events,
            (std::vector<JobEvent>{{"Normal", "SuccessfulCreate", "Created pod: train-0-abcde"}}));
}

TEST(JobControllerTest, GangJobsAskForAdmission) {
  JobRecord job = MakeJob().Completions(2).Parallelism(2).Obj();
  EXPECT_FALSE(Reconcile(job, kNow).admit_gang);
  job.gang = true;
  EXPECT_TRUE(Reconcile(job, kNow).admit_gang);
}

}  // namespace
}  // namespace berth::k8s
