#include "sim/metrics.h"

#include <gtest/gtest.h>

#include <string>
#include <vector>

namespace berth::sim {
namespace {

JobResult Ran(std::string user, Time submit, Time start, Time end, int64_t procs,
              int64_t gpus = 0) {
  JobResult j;
  j.user = std::move(user);
  j.submit = submit;
  j.start = start;
  j.end = end;
  j.procs = procs;
  j.gpus = gpus;
  return j;
}

TEST(MetricsTest, HandComputedGpuExample) {
  // wait / actual / bounded slowdown / completion time:
  //   a: 0 / 100 / 1             / 100
  //   b: 40 / 5  / 45/10 = 4.5   / 45
  //   a: 80 / 200 / 280/200 = 1.4 / 280
  //   b: 0 / 1   / max(1, 0.1) = 1 / 1
  const std::vector<JobResult> jobs = {
      Ran("a", 0, 0, 100, 4, 2),
      Ran("b", 10, 50, 55, 2),
      Ran("a", 20, 100, 300, 10, 8),
      Ran("b", 30, 30, 31, 1),
  };
  const Metrics m = ComputeMetrics(jobs, 10, 8);
  EXPECT_EQ(m.jobs, 4);
  EXPECT_DOUBLE_EQ(m.avg_wait_s, 30);
  EXPECT_DOUBLE_EQ(m.median_wait_s, 20);  // (0 + 40) / 2
  EXPECT_DOUBLE_EQ(m.max_wait_s, 80);
  EXPECT_DOUBLE_EQ(m.avg_bsld, 7.9 / 4);
  EXPECT_DOUBLE_EQ(m.makespan_s, 300);
  EXPECT_DOUBLE_EQ(m.utilization, 2411.0 / 3000);  // (400 + 10 + 2000 + 1) / (10 x 300)
  EXPECT_TRUE(m.has_gpus);
  EXPECT_DOUBLE_EQ(m.avg_jct_s, 426.0 / 4);
  EXPECT_DOUBLE_EQ(m.p95_jct_s, 280);
  EXPECT_DOUBLE_EQ(m.gpu_utilization, 0.75);  // (2 x 100 + 8 x 200) / (8 x 300)
  EXPECT_TRUE(m.has_users);
  // Users' mean slowdowns 1.2 and 2.75: (3.95)^2 / (2 x (1.44 + 7.5625)).
  EXPECT_DOUBLE_EQ(m.fairness_jain, 15.6025 / 18.005);
}

TEST(MetricsTest, CpuTraceWithOneUserHasNoGpuOrFairnessFigures) {
  const std::vector<JobResult> jobs = {
      Ran("u1", 100, 100, 200, 2), Ran("u1", 100, 150, 160, 1),
      Ran("", 120, 300, 400, 4),  // no user: left out of fairness only
  };
  const Metrics m = ComputeMetrics(jobs, 4, 0);
  EXPECT_DOUBLE_EQ(m.median_wait_s, 50);  // odd count: the middle one
  EXPECT_DOUBLE_EQ(m.avg_wait_s, (0 + 50 + 180) / 3.0);
  EXPECT_DOUBLE_EQ(m.makespan_s, 300);
  EXPECT_DOUBLE_EQ(m.utilization, (200 + 10 + 400) / (4.0 * 300));
  EXPECT_DOUBLE_EQ(m.avg_bsld, (1 + 6 + 2.8) / 3);
  EXPECT_FALSE(m.has_gpus);
  EXPECT_EQ(m.avg_jct_s, 0);
  EXPECT_EQ(m.gpu_utilization, 0);
  EXPECT_FALSE(m.has_users);
  EXPECT_EQ(m.fairness_jain, 0);
}

TEST(MetricsTest, P95IsTheNearestRank) {
  struct Case {
    int count;
    double p95;  // of completion times 1..count
  };
  const Case cases[] = {{1, 1}, {2, 2}, {19, 19}, {20, 19}, {21, 20}, {100, 95}, {101, 96}};
  for (const Case& c : cases) {
    std::vector<JobResult> jobs;
    for (int i = c.count; i >= 1; --i) jobs.push_back(Ran("u", 0, 0, i, 1, 1));
    EXPECT_DOUBLE_EQ(ComputeMetrics(jobs, 1, 1).p95_jct_s, c.p95) << c.count;
  }
}

TEST(MetricsTest, EqualUsersAreFair) {
  const std::vector<JobResult> jobs = {Ran("a", 0, 10, 20, 1), Ran("b", 0, 10, 20, 1),
                                       Ran("c", 5, 15, 25, 1)};
  const Metrics m = ComputeMetrics(jobs, 1, 0);
  EXPECT_TRUE(m.has_users);
  EXPECT_DOUBLE_EQ(m.fairness_jain, 1.0);
}

TEST(MetricsTest, DegenerateInputsGiveZerosNotNaN) {
  const Metrics empty = ComputeMetrics({}, 10, 8);
  EXPECT_EQ(empty.jobs, 0);
  EXPECT_EQ(empty.avg_wait_s, 0);
  EXPECT_EQ(empty.utilization, 0);

  const std::vector<JobResult> instant = {Ran("a", 5, 5, 5, 1, 1)};
  const Metrics m = ComputeMetrics(instant, 0, 0);  // no capacity, zero makespan
  EXPECT_EQ(m.utilization, 0);
  EXPECT_EQ(m.gpu_utilization, 0);
  EXPECT_DOUBLE_EQ(m.avg_bsld, 1);
}

TEST(MetricsTest, SumsStayExactOverManyJobs) {
  // A million one-second jobs next to one huge one: naive double sums lose the small ones.
  std::vector<JobResult> jobs;
  jobs.push_back(Ran("a", 0, 1'000'000'000'000, 1'000'000'000'001, 1));
  for (int i = 0; i < 1'000'000; ++i) jobs.push_back(Ran("b", 0, 1, 2, 1));
  const Metrics m = ComputeMetrics(jobs, 1, 0);
  EXPECT_DOUBLE_EQ(m.avg_wait_s, (1e12 + 1e6) / 1'000'001);
}

}  // namespace
}  // namespace berth::sim
