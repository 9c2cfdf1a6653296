// The exact SWF semantics of `berth sim --policy fcfs|easy` (docs/sim.md) on tiny traces whose
// metrics are computed by hand in the comments: a backfill allowed by the shadow rule, one
// allowed by the extra rule, one refused, a job cut at its request, and ties in estimated end.
#include <gtest/gtest.h>

#include "sim/driver.h"
#include "sim/metrics.h"
#include "sim/trace.h"

namespace berth::sim {
namespace {

// One SWF line: id submit wait run procs avgcpu mem reqprocs reqtime ... (18 fields).
std::string Line(int id, int submit, int run, int procs, int req) {
  return std::to_string(id) + " " + std::to_string(submit) + " -1 " + std::to_string(run) + " " +
         std::to_string(procs) + " -1 -1 " + std::to_string(procs) + " " + std::to_string(req) +
         " -1 1 1 1 -1 -1 -1 -1 -1\n";
}

Metrics RunTrace(const std::string& body, const std::string& policy) {
  Result<Trace> trace = ParseTrace("; MaxProcs: 10\n" + body, "tiny.swf", ReadOptions());
  EXPECT_TRUE(trace.ok()) << trace.status().ToString();
  core::ClusterSpec cluster;
  core::NodeSpec pool;
  pool.name = "pool";
  pool.cpus = static_cast<int32_t>(trace->pool_procs);
  cluster.nodes.push_back(pool);
  SimOptions options;
  options.scheduler = *core::SchedulerConfig::Preset(policy);
  options.shape.single_pool = true;
  options.shape.pool_procs = trace->pool_procs;
  Result<SimResult> r = Simulate(*trace, cluster, options);
  EXPECT_TRUE(r.ok()) << r.status().ToString();
  return ComputeMetrics(r->jobs, r->capacity_procs, r->capacity_gpus);
}

// The KTH excerpt bundled with berth.
Result<Trace> BundledTrace() {
  return ReadTrace(
      std::string(BERTH_SOURCE_DIR) + "/data/traces/KTH-SP2-1996-2.1-cln.first2000.swf",
      ReadOptions());
}

struct Expected {
  double avg_wait, median_wait, max_wait, avg_bsld, utilization, makespan;
};

void ExpectMetrics(const Metrics& m, const Expected& e) {
  EXPECT_NEAR(m.avg_wait_s, e.avg_wait, 1e-9);
  EXPECT_NEAR(m.median_wait_s, e.median_wait, 1e-9);
  EXPECT_NEAR(m.max_wait_s, e.max_wait, 1e-9);
  EXPECT_NEAR(m.avg_bsld, e.avg_bsld, 1e-9);
  EXPECT_NEAR(m.utilization, e.utilization, 1e-9);
  EXPECT_NEAR(m.makespan_s, e.makespan, 1e-9);
}

// Job 1 (6 of 10 CPUs, 0-100); job 2 (8 CPUs) is the head at 10 with shadow 100 and extra 2;
// job 3 (4 CPUs, request 90) ends by the shadow time (10 + 90 <= 100): it backfills and runs
// 10-60. Waits 0, 90, 0. Bounded slowdowns 1, 1.9, 1. Work 600 + 800 + 200 over 10 x 200.
TEST(SwfSemanticsTest, BackfillByTheShadowRule) {
  std::string t = Line(1, 0, 100, 6, 100) + Line(2, 10, 100, 8, 100) + Line(3, 10, 50, 4, 90);
  ExpectMetrics(RunTrace(t, "easy"), {30, 0, 90, 1.3, 0.8, 200});
  // FCFS: job 3 waits behind job 2 and runs 200-250: waits 0, 90, 190.
  ExpectMetrics(RunTrace(t, "fcfs"), {280.0 / 3, 90, 190, (1 + 1.9 + 4.8) / 3, 1600.0 / 2500, 250});
}

// Job 3 (2 CPUs, runs to 510) ends after the shadow time, but 2 <= extra (2): it starts at 10.
// Job 2 then starts at 100 on the 8 CPUs left. Work 600 + 800 + 1000 over 10 x 510.
TEST(SwfSemanticsTest, BackfillByTheExtraRule) {
  std::string t = Line(1, 0, 100, 6, 100) + Line(2, 10, 100, 8, 100) + Line(3, 10, 500, 2, 500);
  ExpectMetrics(RunTrace(t, "easy"), {30, 0, 90, 1.3, 2400.0 / 5100, 510});
}

// Job 3 (3 CPUs, to 510) fits the 4 free CPUs but neither rule allows it (3 > extra 2): it
// waits until job 2 ends at 200 and runs 200-700. Waits 0, 90, 190; slowdowns 1, 1.9, 1.38.
TEST(SwfSemanticsTest, BackfillRefused) {
  std::string t = Line(1, 0, 100, 6, 100) + Line(2, 10, 100, 8, 100) + Line(3, 10, 500, 3, 500);
  ExpectMetrics(RunTrace(t, "easy"),
                {280.0 / 3, 90, 190, (1 + 1.9 + 1.38) / 3, 2900.0 / 7000, 700});
}

// Job 1 runs 200 s but requested 100: cut at 100. Job 2 waits for it: 100-150.
// Waits 0, 100; slowdowns 1, 3; work 10 x 100 + 10 x 50 over 10 x 150.
TEST(SwfSemanticsTest, JobCutAtItsRequest) {
  std::string t = Line(1, 0, 200, 10, 100) + Line(2, 0, 50, 10, 50);
  for (const char* policy : {"fcfs", "easy"})
    ExpectMetrics(RunTrace(t, policy), {50, 50, 100, 2, 1, 150});
}

// Jobs 1 and 2 both end at 100 (a tie): both count at the shadow time, so extra = 2 + 3 + 3 - 4
// = 4 and job 5 (2 CPUs, to 410) backfills; counting only job 1 would give extra 1 and refuse it.
// Waits 0, 0, 0, 90, 0; slowdowns 1, 1, 1, 1.9, 1; work 2400 over 10 x 410.
TEST(SwfSemanticsTest, TiesInEstimatedEnd) {
  std::string t = Line(1, 0, 100, 3, 100) + Line(2, 0, 100, 3, 100) + Line(3, 0, 300, 2, 300) +
                  Line(4, 10, 100, 4, 100) + Line(5, 10, 400, 2, 400);
  ExpectMetrics(RunTrace(t, "easy"), {18, 0, 90, 5.9 / 5, 2400.0 / 4100, 410});
}

TEST(SwfSemanticsTest, DeterministicAndEasyNoWorseOnTheBundledTrace) {
  Result<Trace> trace = BundledTrace();
  ASSERT_TRUE(trace.ok()) << trace.status().ToString();
  core::ClusterSpec cluster;
  core::NodeSpec pool;
  pool.name = "pool";
  pool.cpus = static_cast<int32_t>(trace->pool_procs);
  cluster.nodes.push_back(pool);
  auto run = [&](const char* policy) {
    SimOptions options;
    options.scheduler = *core::SchedulerConfig::Preset(policy);
    options.shape.single_pool = true;
    return std::move(Simulate(*trace, cluster, options)).value();
  };
  SimResult a = run("easy"), b = run("easy");
  ASSERT_EQ(a.jobs.size(), b.jobs.size());
  for (size_t i = 0; i < a.jobs.size(); ++i) {
    EXPECT_EQ(a.jobs[i].job_id, b.jobs[i].job_id);
    EXPECT_EQ(a.jobs[i].start, b.jobs[i].start);
  }
  Metrics easy = ComputeMetrics(a.jobs, a.capacity_procs, 0);
  Metrics fcfs = ComputeMetrics(run("fcfs").jobs, a.capacity_procs, 0);
  EXPECT_LE(easy.avg_wait_s, fcfs.avg_wait_s);
}

// Without node lists (`berth sim` without --jobs-out) a replay is the same job for job; only
// the lists are left out.
TEST(SwfSemanticsTest, NodeListsOffChangeNothingElse) {
  Result<Trace> trace = BundledTrace();
  ASSERT_TRUE(trace.ok()) << trace.status().ToString();
  core::ClusterSpec cluster;
  for (int i = 0; i < 30; ++i) {
    core::NodeSpec n;
    n.name = "n" + std::to_string(i);
    n.cpus = 4;
    n.mem_mib = 16 * 1024;
    cluster.nodes.push_back(n);
  }
  auto run = [&](bool lists) {
    SimOptions options;
    options.node_lists = lists;
    return std::move(Simulate(*trace, cluster, options)).value();
  };
  SimResult with = run(true), without = run(false);
  ASSERT_EQ(with.jobs.size(), without.jobs.size());
  ASSERT_GT(with.jobs.size(), 1000u);
  size_t multi = 0;
  for (size_t i = 0; i < with.jobs.size(); ++i) {
    const JobResult& a = with.jobs[i];
    const JobResult& b = without.jobs[i];
    EXPECT_EQ(a.job_id, b.job_id);
    EXPECT_EQ(a.start, b.start);
    EXPECT_EQ(a.end, b.end);
    EXPECT_EQ(a.procs, b.procs);
    EXPECT_EQ(a.nodes, b.nodes);
    EXPECT_EQ(a.state, b.state);
    EXPECT_FALSE(a.node_list.empty());
    EXPECT_TRUE(b.node_list.empty());
    multi += a.nodes > 1 ? 1 : 0;
  }
  EXPECT_GT(multi, 0u) << "no multi-node job: the lists would be trivial";
}

}  // namespace
}  // namespace berth::sim
