// The agents' measured usage: rates from recent readings, jobs forgotten when their node stops
// reporting them, new attempts and stale nodes.
#include "controller/usage_table.h"

#include <gtest/gtest.h>

namespace berth::controller {
namespace {

k8s::UsageSample At(int64_t ms, double cpu, int64_t mem = 0) {
  return {ms, cpu, mem};
}

TEST(UsageTableTest, OneReadingIsNoRateTwoAre) {
  UsageTable t;
  t.Record("n1", 1000, At(1000, 10), {{7, 0, At(1000, 1, 100)}});
  EXPECT_TRUE(t.View(1000).nodes.empty());
  t.Record("n1", 6000, At(6000, 20), {{7, 0, At(6000, 3.5, 200)}});
  k8s::UsageView v = t.View(6000);
  EXPECT_EQ(v.nodes.at("n1").cpu_nanocores, 2'000'000'000);
  EXPECT_EQ(v.jobs.at(7).cpu_nanocores, 500'000'000);
  EXPECT_EQ(v.jobs.at(7).memory_bytes, 200);
  EXPECT_EQ(v.jobs.at(7).window_ms, 5000);
}

// sstat's view: the latest reading and the attempt's largest working set, even with one reading;
// a new attempt starts its peak afresh, and a stale job is left out.
TEST(UsageTableTest, LatestKeepsTheAttemptsPeakMemory) {
  UsageTable t;
  t.Record("n1", 1000, At(1000, 10), {{7, 0, At(1000, 1, 100)}});
  ASSERT_EQ(t.Latest(1000).size(), 1u);
  t.Record("n1", 6000, At(6000, 20), {{7, 0, At(6000, 3.5, 500)}});
  t.Record("n1", 11000, At(11000, 30), {{7, 0, At(11000, 6, 200)}});
  std::vector<UsageTable::JobLatest> l = t.Latest(11000);
  ASSERT_EQ(l.size(), 1u);
  EXPECT_EQ(l[0].job, 7u);
  EXPECT_EQ(l[0].node, "n1");
  EXPECT_DOUBLE_EQ(l[0].latest.cpu_seconds, 6);
  EXPECT_EQ(l[0].latest.memory_bytes, 200);
  EXPECT_EQ(l[0].max_memory_bytes, 500);
  t.Record("n1", 12000, At(12000, 31), {{7, 1, At(12000, 0.5, 50)}});
  EXPECT_EQ(t.Latest(12000)[0].max_memory_bytes, 50);
  EXPECT_TRUE(t.Latest(12000 + UsageTable::kStaleMs + 1).empty());
}

TEST(UsageTableTest, ReadingsCloserThanASecondWidenTheWindow) {
  UsageTable t;
  t.Record("n1", 0, At(0, 0), {});
  t.Record("n1", 5000, At(5000, 5), {});
  t.Record("n1", 5050, At(5050, 5.05), {});  // a report right after a job ended
  EXPECT_EQ(t.View(5050).nodes.at("n1").window_ms, 5050);
}

TEST(UsageTableTest, AJobNoLongerReportedOrOnANewAttemptStartsAfresh) {
  UsageTable t;
  t.Record("n1", 0, At(0, 0), {{7, 0, At(0, 0)}, {8, 0, At(0, 0)}});
  t.Record("n1", 5000, At(5000, 1), {{7, 0, At(5000, 1)}, {8, 0, At(5000, 1)}});
  t.Record("n1", 10000, At(10000, 2), {{7, 1, At(10000, 0.1)}});
  k8s::UsageView v = t.View(10000);
  EXPECT_FALSE(v.jobs.count(7));  // its new attempt has one reading
  EXPECT_FALSE(v.jobs.count(8));  // ended
  EXPECT_TRUE(v.nodes.count("n1"));
}

TEST(UsageTableTest, AStaleNodeShowsNothingAndForgettingDropsItsJobs) {
  UsageTable t;
  t.Record("n1", 0, At(0, 0), {{7, 0, At(0, 0)}});
  t.Record("n1", 5000, At(5000, 1), {{7, 0, At(5000, 1)}});
  EXPECT_TRUE(t.View(5000 + UsageTable::kStaleMs).nodes.count("n1"));
  EXPECT_TRUE(t.View(5001 + UsageTable::kStaleMs).nodes.empty());
  t.ForgetNode("n1");
  EXPECT_TRUE(t.View(5000).jobs.empty());
}

// GPU readings: the last report's, by node, while fresh; a report without them (the node's agent
// lost NVML) clears them, and so does forgetting the node.
TEST(UsageTableTest, GpuReadingsAreTheLastReportsWhileFresh) {
  UsageTable t;
  t.Record("n1", 1000, At(1000, 10), {}, {{0, 40, 1 << 20}, {1, 90, -1}});
  t.Record("n2", 1000, At(1000, 10), {});
  auto g = t.GpuLatest(1000);
  ASSERT_EQ(g.size(), 1u);
  ASSERT_EQ(g.at("n1").size(), 2u);
  EXPECT_EQ(g.at("n1")[1].index, 1);
  EXPECT_EQ(g.at("n1")[1].utilization, 90);
  EXPECT_EQ(g.at("n1")[0].memory_used_bytes, 1 << 20);
  t.Record("n1", 6000, At(6000, 20), {}, {{0, 5, -1}});
  EXPECT_EQ(t.GpuLatest(6000).at("n1").size(), 1u);
  EXPECT_EQ(t.GpuLatest(6000).at("n1")[0].utilization, 5);
  EXPECT_EQ(t.GpuLatest(6000 + UsageTable::kStaleMs).size(), 1u);
  EXPECT_TRUE(t.GpuLatest(6001 + UsageTable::kStaleMs).empty());
  t.Record("n1", 7000, At(7000, 30), {});
  EXPECT_TRUE(t.GpuLatest(7000).empty());
  t.Record("n1", 8000, At(8000, 40), {}, {{0, 5, -1}});
  t.ForgetNode("n1");
  EXPECT_TRUE(t.GpuLatest(8000).empty());
}

}  // namespace
}  // namespace berth::controller
