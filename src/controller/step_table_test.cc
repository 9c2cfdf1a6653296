#include "controller/step_table.h"

#include <gtest/gtest.h>

namespace berth::controller {
namespace {

StepState TwoNodes(int32_t attempt) {
  StepState s;
  s.attempt = attempt;
  s.nodes["n2"].command = "start on n2";
  s.nodes["n3"].command = "start on n3";
  return s;
}

agent::JobResult Ended(const std::string& state) {
  agent::JobResult r;
  r.state = state;
  return r;
}

TEST(StepTableTest, AStepIdIsTakenOncePerJob) {
  StepTable t;
  EXPECT_TRUE(t.empty());
  ASSERT_TRUE(t.Add(7, 0, TwoNodes(1)).ok());
  EXPECT_EQ(t.Add(7, 0, TwoNodes(1)).code(), StatusCode::kAlreadyExists);
  EXPECT_TRUE(t.Add(7, 1, TwoNodes(1)).ok());
  EXPECT_TRUE(t.Add(8, 0, TwoNodes(0)).ok());
  EXPECT_TRUE(t.Contains(7, 1));
  EXPECT_FALSE(t.Contains(7, 2));
  EXPECT_FALSE(t.Find(9, 0).has_value());
  EXPECT_EQ(t.Find(7, 0)->nodes.at("n2").command, "start on n2");
}

TEST(StepTableTest, TheFirstResultANodeReportsIsKept) {
  StepTable t;
  ASSERT_TRUE(t.Add(7, 0, TwoNodes(1)).ok());
  t.Note("n2", 7, 1, 0, std::nullopt);
  EXPECT_FALSE(t.Find(7, 0)->nodes.at("n2").result.has_value());
  t.Note("n2", 7, 1, 0, Ended("COMPLETED"));
  t.Note("n2", 7, 1, 0, Ended("FAILED"));
  EXPECT_EQ(t.Find(7, 0)->nodes.at("n2").result->state, "COMPLETED");
  EXPECT_FALSE(t.Find(7, 0)->nodes.at("n3").result.has_value());
}

TEST(StepTableTest, ARestartedControllerLearnsStepsFromReports) {
  StepTable t;
  t.Note("n4", 9, 2, 5, Ended("FAILED"));
  std::optional<StepState> s = t.Find(9, 5);
  ASSERT_TRUE(s.has_value());
  EXPECT_EQ(s->attempt, 2);
  EXPECT_EQ(s->nodes.at("n4").result->state, "FAILED");
  EXPECT_EQ(s->nodes.at("n4").command, "");  // never sent again: its start is not known
}

TEST(StepTableTest, PartsNotRunningOnARegisteredNodeAreSentAgainUnlessEnded) {
  StepTable t;
  ASSERT_TRUE(t.Add(7, 0, TwoNodes(1)).ok());
  ASSERT_TRUE(t.Add(7, 1, TwoNodes(1)).ok());
  ASSERT_TRUE(t.Add(8, 0, TwoNodes(0)).ok());
  t.Note("n2", 8, 0, 0, Ended("COMPLETED"));
  // n2 runs 7.1; 7.0 is lost with its agent; 8.0 ended there.
  EXPECT_EQ(t.CommandsToResend("n2", {{7, 1}}), std::vector<std::string>{"start on n2"});
  EXPECT_EQ(t.CommandsToResend("n3", {}).size(), 3u);
  EXPECT_TRUE(t.CommandsToResend("n9", {}).empty());
}

TEST(StepTableTest, StaleJobsAreForgottenAndTheirNodesNamedOnce) {
  StepTable t;
  ASSERT_TRUE(t.Add(7, 0, TwoNodes(1)).ok());
  ASSERT_TRUE(t.Add(7, 1, TwoNodes(1)).ok());
  ASSERT_TRUE(t.Add(8, 0, TwoNodes(0)).ok());
  std::vector<StaleSteps> stale =
      t.TakeStale([](core::JobId job, int32_t attempt) { return job == 8 && attempt == 0; });
  EXPECT_EQ(stale, (std::vector<StaleSteps>{{"n2", 7, 1}, {"n3", 7, 1}}));
  EXPECT_FALSE(t.Contains(7, 0));
  EXPECT_TRUE(t.Contains(8, 0));
  EXPECT_TRUE(t.TakeStale([](core::JobId, int32_t) { return true; }).empty());
  EXPECT_EQ(t.TakeStale([](core::JobId, int32_t) { return false; }).size(), 2u);
  EXPECT_TRUE(t.empty());
}

}  // namespace
}  // namespace berth::controller
