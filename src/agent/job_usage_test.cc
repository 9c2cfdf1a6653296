// /proc/PID/stat's usage fields, and the agent's own process tree as a job's.
#include "agent/job_usage.h"

#include <gtest/gtest.h>
#include <sys/wait.h>
#include <unistd.h>

#include <csignal>

namespace berth::agent {
namespace {

TEST(JobUsageTest, ReadsCpuTimesAndResidentPagesPastAParenthesisedName) {
  const std::string stat =
      "4242 (a (weird) name) S 17 4242 4242 0 -1 4194560 100 0 0 0 250 50 30 20 20 0 1 0 "
      "12345 1000000 777 18446744073709551615";
  std::optional<ProcStatUsage> u = ParseProcStatUsage(stat, 100);
  ASSERT_TRUE(u);
  EXPECT_EQ(u->ppid, 17);
  EXPECT_DOUBLE_EQ(u->own_cpu_seconds, 3.0);
  EXPECT_DOUBLE_EQ(u->children_cpu_seconds, 0.5);
  EXPECT_EQ(u->rss_pages, 777);
}

TEST(JobUsageTest, RefusesWhatIsNoStatLine) {
  EXPECT_FALSE(ParseProcStatUsage("", 100));
  EXPECT_FALSE(ParseProcStatUsage("12 (x) S 1 2 3", 100));
  EXPECT_FALSE(
      ParseProcStatUsage("no parenthesis at all 1 2 3 4 5 6 7 8 9 10 11 12 13 14 15 16 "
                         "17 18 19 20 21 22 23",
                         100));
}

TEST(JobUsageTest, ATreeCountsItsDescendantsNotItsRoot) {
  const pid_t child = fork();
  ASSERT_GE(child, 0);
  if (child == 0) {
    pause();
    _exit(0);
  }
  std::map<pid_t, TreeUsage> u = ProcessTreeUsage({getpid(), 999'999'999});
  kill(child, SIGKILL);
  waitpid(child, nullptr, 0);
  ASSERT_TRUE(u.count(getpid()));
  EXPECT_FALSE(u.count(999'999'999));
  EXPECT_GT(u[getpid()].memory_bytes, 0);  // the child's resident pages
  std::optional<TreeUsage> node = NodeUsage();
  ASSERT_TRUE(node);
  EXPECT_GT(node->cpu_seconds, 0);
  EXPECT_GT(node->memory_bytes, 0);
}

}  // namespace
}  // namespace berth::agent
