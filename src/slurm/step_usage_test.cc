#include "slurm/step_usage.h"

#include <gtest/gtest.h>
#include <sys/wait.h>

#include <csignal>

namespace berth::slurm {
namespace {

int Exited(int code) {
  return code << 8;
}  // as wait() reports an exit
int Signalled(int sig) {
  return sig;
}  // as wait() reports death by a signal

api::StepRecord Started() {
  api::StepRecord s;
  s.id = 1;
  s.name = "train";
  s.state = "RUNNING";
  s.start = 1000;
  s.ntasks = 3;
  return s;
}

TEST(StepUsageTest, WaitStatusEncodingMatchesTheKernel) {
  EXPECT_TRUE(WIFEXITED(Exited(3)));
  EXPECT_EQ(WEXITSTATUS(Exited(3)), 3);
  EXPECT_TRUE(WIFSIGNALED(Signalled(SIGKILL)));
  EXPECT_EQ(WTERMSIG(Signalled(SIGKILL)), SIGKILL);
}

TEST(StepUsageTest, StateAndExitCodeFollowTheWorstTask) {
  api::StepRecord s = Started();
  FinishStepRecord({}, {{0, Exited(0)}, {1, Exited(0)}}, false, "n1", 1010, &s);
  EXPECT_EQ(s.state, "COMPLETED");
  EXPECT_EQ(s.exit_code, 0);
  EXPECT_EQ(s.end, 1010);

  s = Started();
  FinishStepRecord({}, {{0, Exited(0)}, {1, Exited(3)}, {2, Exited(1)}}, false, "n1", 1010, &s);
  EXPECT_EQ(s.state, "FAILED");
  EXPECT_EQ(s.exit_code, 3);
  EXPECT_EQ(s.term_signal, 0);

  s = Started();  // a task that crashed, nobody asked: FAILED with the signal
  FinishStepRecord({}, {{0, Exited(0)}, {1, Signalled(SIGSEGV)}}, false, "n1", 1010, &s);
  EXPECT_EQ(s.state, "FAILED");
  EXPECT_EQ(s.exit_code, 0);
  EXPECT_EQ(s.term_signal, SIGSEGV);

  s = Started();  // Ctrl-C passed on, the tasks died of it: CANCELLED
  FinishStepRecord({}, {{0, Signalled(SIGINT)}}, true, "n1", 1010, &s);
  EXPECT_EQ(s.state, "CANCELLED");
  EXPECT_EQ(s.term_signal, SIGINT);

  s = Started();  // a signal passed on that the tasks handled: they exit as they choose
  FinishStepRecord({}, {{0, Exited(0)}}, true, "n1", 1010, &s);
  EXPECT_EQ(s.state, "COMPLETED");

  s = Started();  // a clock step back never ends it before it started
  FinishStepRecord({}, {{0, Exited(0)}}, false, "n1", 900, &s);
  EXPECT_EQ(s.end, 1000);
}

TEST(StepUsageTest, UsageIsTheLocalTasks) {
  api::StepRecord s = Started();
  FinishStepRecord({{0, 1000, 1.0, 0.5}, {1, 4000, 0.25, 0.25}, {2, 2500, 3.0, 0.0}},
                   {{0, Exited(0)}, {1, Exited(0)}, {2, Exited(0)}}, false, "n7", 1010, &s);
  EXPECT_EQ(s.max_rss_kib, 4000);
  EXPECT_EQ(s.max_rss_task, 1);
  EXPECT_EQ(s.max_rss_node, "n7");
  EXPECT_EQ(s.ave_rss_kib, 2500);
  EXPECT_DOUBLE_EQ(s.user_cpu_seconds, 4.25);
  EXPECT_DOUBLE_EQ(s.system_cpu_seconds, 0.75);
  EXPECT_DOUBLE_EQ(s.min_cpu_seconds, 0.5);
  EXPECT_EQ(s.min_cpu_task, 1);
  // No task ran here (a step wholly on other nodes): no usage, no node.
  api::StepRecord none = Started();
  FinishStepRecord({}, {{0, Exited(0)}}, false, "n7", 1010, &none);
  EXPECT_EQ(none.max_rss_kib, 0);
  EXPECT_EQ(none.max_rss_node, "");
}

TEST(StepUsageTest, TheOtherNodesPartsJoinTheCpuTimesAndMaxRss) {
  api::StepRecord s = Started();
  const std::vector<TaskUsage> local = {{0, 5000, 1.0, 0.5}, {1, 7000, 2.0, 0.5}};
  std::vector<NodeUsage> remote = {{"n2", 2, 9000, 3.0, 1.0}, {"n3", 4, 100, 0.5, 0.25}};
  FinishStepRecord(local, {{0, Exited(0)}}, false, "n1", 1010, &s, remote);
  EXPECT_EQ(s.max_rss_kib, 9000);  // the largest, wherever it ran
  EXPECT_EQ(s.max_rss_node, "n2");
  EXPECT_EQ(s.max_rss_task, 2);
  EXPECT_DOUBLE_EQ(s.user_cpu_seconds, 1.0 + 2.0 + 3.0 + 0.5);
  EXPECT_DOUBLE_EQ(s.system_cpu_seconds, 0.5 + 0.5 + 1.0 + 0.25);
  EXPECT_EQ(s.ave_rss_kib, 6000);  // the batch node's tasks only
  EXPECT_EQ(s.min_cpu_task, 0);
  // The batch node's tasks hold the peak: theirs, and a tie is theirs too.
  remote = {{"n2", 2, 7000, 0, 0}};
  FinishStepRecord(local, {{0, Exited(0)}}, false, "n1", 1010, &s, remote);
  EXPECT_EQ(s.max_rss_kib, 7000);
  EXPECT_EQ(s.max_rss_node, "n1");
  EXPECT_EQ(s.max_rss_task, 1);
  // No task on the batch node (a step on other nodes only).
  FinishStepRecord({}, {{0, Exited(0)}}, false, "n1", 1010, &s, {{"n2", 0, 300, 1, 1}});
  EXPECT_EQ(s.max_rss_kib, 300);
  EXPECT_EQ(s.max_rss_node, "n2");
  EXPECT_DOUBLE_EQ(s.user_cpu_seconds, 1);
}

TEST(StepUsageTest, EndingSignals) {
  for (int sig : {SIGINT, SIGTERM, SIGHUP, SIGQUIT}) EXPECT_TRUE(EndsStep(sig)) << sig;
  for (int sig : {SIGUSR1, SIGUSR2, SIGCONT}) EXPECT_FALSE(EndsStep(sig)) << sig;
}

}  // namespace
}  // namespace berth::slurm
