// batch/v1 CronJobs: defaults and checks, the Job made for a scheduled time, and the controller's
// step (missed times, starting deadlines, concurrency policies, history limits, suspend).
#include "k8s/cronjobs.h"

#include <gtest/gtest.h>

#include <functional>

namespace berth::k8s {
namespace {

using nlohmann::json;

const int64_t kT0 = SecondsFromCivil({2026, 12, 5, 3, 0, 0});

json Manifest(const std::string& schedule) {
  return json::parse(R"({"apiVersion":"batch/v1","kind":"CronJob","metadata":{"name":"nightly"},
    "spec":{"schedule":")" +
                     schedule + R"(","jobTemplate":{"metadata":{"labels":{"app":"n"}},
    "spec":{"template":{"spec":{"restartPolicy":"OnFailure","containers":[{"name":"c",
    "image":"busybox","command":["true"]}]}}}}}})");
}

json Defaulted(json manifest, int64_t created = kT0) {
  json out;
  std::optional<FieldProblem> p = DefaultCronJob(manifest, "default", "uid-1", created, &out);
  EXPECT_FALSE(p) << (p ? p->field + ": " + p->detail : "");
  return out;
}

TEST(CronJobTest, DefaultsAsTheApiServer) {
  json c = Defaulted(Manifest("*/5 * * * *"));
  EXPECT_EQ(c["spec"]["concurrencyPolicy"], "Allow");
  EXPECT_EQ(c["spec"]["suspend"], false);
  EXPECT_EQ(c["spec"]["successfulJobsHistoryLimit"], 3);
  EXPECT_EQ(c["spec"]["failedJobsHistoryLimit"], 1);
  EXPECT_EQ(c["metadata"]["uid"], "uid-1");
  EXPECT_EQ(c["metadata"]["namespace"], "default");
}

TEST(CronJobTest, RefusesWhatTheApiServerRefuses) {
  struct Case {
    std::function<void(json&)> change;
    const char* field;
  } cases[] = {
      {[](json& m) { m["spec"]["schedule"] = "61 * * * *"; }, "spec.schedule"},
      {[](json& m) { m["spec"].erase("schedule"); }, "spec.schedule"},
      {[](json& m) { m["spec"]["schedule"] = "CRON_TZ=UTC 0 * * * *"; }, "spec.schedule"},
      {[](json& m) { m["spec"]["timeZone"] = "Mars/Base"; }, "spec.timeZone"},
      {[](json& m) { m["spec"]["timeZone"] = "Local"; }, "spec.timeZone"},
      {[](json& m) { m["spec"]["concurrencyPolicy"] = "Sometimes"; }, "spec.concurrencyPolicy"},
      {[](json& m) { m["spec"]["startingDeadlineSeconds"] = -1; }, "spec.startingDeadlineSeconds"},
      {[](json& m) { m["spec"]["failedJobsHistoryLimit"] = -1; }, "spec.failedJobsHistoryLimit"},
      {[](json& m) { m["spec"].erase("jobTemplate"); }, "spec.jobTemplate"},
      {[](json& m) { m["metadata"]["name"] = std::string(53, 'a'); }, "metadata.name"},
      {[](json& m) {
         m["spec"]["jobTemplate"]["spec"]["template"]["spec"]["restartPolicy"] = "Always";
       },
       "spec.jobTemplate.spec.template.spec.restartPolicy"},
  };
  for (const Case& c : cases) {
    json m = Manifest("0 * * * *");
    c.change(m);
    json out;
    std::optional<FieldProblem> p = DefaultCronJob(m, "default", "u", kT0, &out);
    ASSERT_TRUE(p) << c.field;
    EXPECT_EQ(p->field, c.field);
  }
}

TEST(CronJobTest, TheJobOfAScheduledTime) {
  json c = Defaulted(Manifest("0 * * * *"));
  c["spec"]["timeZone"] = "Europe/Berlin";
  Result<TimeZone> berlin = TimeZone::Load("Europe/Berlin");
  if (!berlin.ok()) GTEST_SKIP() << "no tz database";
  json j = JobForSchedule(c, kT0, *berlin);
  EXPECT_EQ(j["metadata"]["name"], "nightly-" + std::to_string(kT0 / 60));
  EXPECT_EQ(j["metadata"]["labels"]["app"], "n");
  EXPECT_EQ(j["metadata"]["annotations"]["batch.kubernetes.io/cronjob-scheduled-timestamp"],
            "2026-12-05T04:00:00+01:00");
  EXPECT_EQ(j["metadata"]["ownerReferences"][0]["kind"], "CronJob");
  EXPECT_EQ(j["metadata"]["ownerReferences"][0]["uid"], "uid-1");
  EXPECT_EQ(j["metadata"]["ownerReferences"][0]["controller"], true);
  EXPECT_EQ(j["spec"]["template"]["spec"]["restartPolicy"], "OnFailure");
}

TEST(CronJobTest, MakesTheMostRecentDueJobOnce) {
  json c = Defaulted(Manifest("*/5 * * * *"));
  CronActions a = ReconcileCronJob(c, {}, kT0 + 4 * 60);
  EXPECT_FALSE(a.create);  // nothing due since the creation at 03:00
  EXPECT_EQ(a.next, kT0 + 5 * 60);
  a = ReconcileCronJob(c, {}, kT0 + 11 * 60);  // 03:05 and 03:10 due: the latest only
  ASSERT_TRUE(a.create);
  EXPECT_EQ(*a.create, kT0 + 10 * 60);
  EXPECT_EQ(a.status["lastScheduleTime"], Rfc3339(kT0 + 10 * 60));
  c["status"] = a.status;
  CronChild made{CronJobJobName("nightly", kT0 + 600), "j1", "5", kT0 + 600, kT0 + 600};
  a = ReconcileCronJob(c, {made}, kT0 + 11 * 60);
  EXPECT_FALSE(a.create);
  ASSERT_EQ(a.status["active"].size(), 1u);
  EXPECT_EQ(a.status["active"][0]["name"], made.name);
}

TEST(CronJobTest, StartingDeadlineAndTooManyMissed) {
  json c = Defaulted(Manifest("* * * * *"));
  CronActions a = ReconcileCronJob(c, {}, kT0 + 200 * 60 + 30);
  ASSERT_TRUE(a.create);
  EXPECT_EQ(*a.create, kT0 + 200 * 60);
  ASSERT_FALSE(a.events.empty());
  EXPECT_EQ(a.events[0].reason, "TooManyMissedTimes");
  // With a deadline only the last sds seconds count, and a time past its deadline is missed.
  c["spec"]["startingDeadlineSeconds"] = 10;
  a = ReconcileCronJob(c, {}, kT0 + 200 * 60 + 30);
  EXPECT_FALSE(a.create);
  a = ReconcileCronJob(Defaulted(Manifest("0 * * * *")), {}, kT0 + 3600 + 5);
  EXPECT_TRUE(a.create);
  json late = Defaulted(Manifest("0 * * * *"));
  late["spec"]["startingDeadlineSeconds"] = 3600;
  a = ReconcileCronJob(late, {}, kT0 + 3600 + 120);
  EXPECT_TRUE(a.create);
  late["spec"]["startingDeadlineSeconds"] = 60;
  a = ReconcileCronJob(late, {}, kT0 + 3600 + 59);
  EXPECT_TRUE(a.create);
  c = Defaulted(Manifest("0 * * * *"), kT0 - 3600);  // 03:00 due; its deadline 03:05
  c["spec"]["startingDeadlineSeconds"] = 300;
  a = ReconcileCronJob(c, {}, kT0 + 301);
  EXPECT_FALSE(a.create);
  a = ReconcileCronJob(c, {}, kT0 + 299);
  EXPECT_TRUE(a.create);
}

TEST(CronJobTest, ConcurrencyPolicies) {
  json c = Defaulted(Manifest("*/5 * * * *"));
  CronChild running{"nightly-1", "u1", "1", kT0, kT0};
  c["spec"]["concurrencyPolicy"] = "Forbid";
  CronActions a = ReconcileCronJob(c, {running}, kT0 + 5 * 60);
  EXPECT_FALSE(a.create);
  ASSERT_EQ(a.events.size(), 1u);
  EXPECT_EQ(a.events[0].reason, "JobAlreadyActive");
  c["spec"]["concurrencyPolicy"] = "Replace";
  a = ReconcileCronJob(c, {running}, kT0 + 5 * 60);
  EXPECT_TRUE(a.create);
  EXPECT_EQ(a.delete_jobs, std::vector<std::string>{"nightly-1"});
  c["spec"]["concurrencyPolicy"] = "Allow";
  a = ReconcileCronJob(c, {running}, kT0 + 5 * 60);
  EXPECT_TRUE(a.create);
  EXPECT_TRUE(a.delete_jobs.empty());
}

TEST(CronJobTest, SuspendMakesNothingButKeepsTheStatus) {
  json c = Defaulted(Manifest("*/5 * * * *"));
  c["spec"]["suspend"] = true;
  CronChild done{"nightly-1", "u1", "1", kT0, kT0, true, true, kT0 + 30};
  CronActions a = ReconcileCronJob(c, {done}, kT0 + 60 * 60);
  EXPECT_FALSE(a.create);
  EXPECT_EQ(a.status["lastSuccessfulTime"], Rfc3339(kT0 + 30));
  EXPECT_FALSE(a.status.contains("active"));
}

TEST(CronJobTest, HistoryLimitsDeleteTheOldestFinished) {
  json c = Defaulted(Manifest("0 0 1 1 *"));
  std::vector<CronChild> kids;
  for (int i = 0; i < 5; ++i) {
    kids.push_back({"ok-" + std::to_string(i), "u", "1", kT0 + i, kT0 + i, true, true, kT0 + i});
  }
  for (int i = 0; i < 3; ++i) {
    kids.push_back({"bad-" + std::to_string(i), "u", "1", kT0 + i, kT0 + i, true, false, 0});
  }
  c["status"]["active"] = json::array({{{"name", "bad-2"}}});
  CronActions a = ReconcileCronJob(c, kids, kT0 + 100);
  EXPECT_EQ(a.delete_jobs, (std::vector<std::string>{"ok-0", "ok-1", "bad-0", "bad-1"}));
  EXPECT_EQ(a.events.front().reason, "SawCompletedJob");
  EXPECT_EQ(a.events.front().message, "Saw completed job: bad-2, status: Failed");
}

TEST(CronJobTest, TableAsKubectlShowsIt) {
  json c = Defaulted(Manifest("*/5 * * * *"));
  c["status"]["lastScheduleTime"] = Rfc3339(kT0 + 60);
  json cells = CronJobTableCells(c, kT0 + 120);
  EXPECT_EQ(cells, json::parse(R"(["nightly","*/5 * * * *","<none>","False",0,"60s","2m","c",
      "busybox","<none>"])"));
  EXPECT_EQ(CronJobTableColumns().size(), cells.size());
}

}  // namespace
}  // namespace berth::k8s
