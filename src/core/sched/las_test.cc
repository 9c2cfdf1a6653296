#include "core/sched/las.h"

#include <gtest/gtest.h>

#include "core/sched/scheduler.h"
#include "core/testing/builders.h"

namespace berth::core {
namespace {

using testing::MakeCluster;
using testing::MakeJob;

LasConfig Limits(std::vector<double> limits, double knob = 0, Duration min_run = 0) {
  LasConfig c;
  c.queue_limits = std::move(limits);
  c.promote_knob = knob;
  c.min_run_time = min_run;
  return c;
}

Allocation Gpus(int per_node, int nodes = 1) {
  Allocation a;
  for (int i = 0; i < nodes; ++i) {
    NodeAllocation n;
    n.node = static_cast<uint32_t>(i);
    n.cpus = 4;
    n.gpu_mask = (uint64_t{1} << per_node) - 1;
    a.nodes.push_back(n);
  }
  return a;
}

TEST(LasTest, QueueByThresholds) {
  const std::vector<double> limits = {3600, 36000};
  EXPECT_EQ(LasQueueOf(0, limits), 0);
  EXPECT_EQ(LasQueueOf(3599.5, limits), 0);
  EXPECT_EQ(LasQueueOf(3600, limits), 1);  // reaching a threshold moves it down
  EXPECT_EQ(LasQueueOf(35999, limits), 1);
  EXPECT_EQ(LasQueueOf(36000, limits), 2);
  EXPECT_EQ(LasQueueOf(1e12, limits), 2);
  EXPECT_EQ(LasQueueOf(1e12, {}), 0);  // one queue: plain FIFO
}

TEST(LasTest, ServiceIsGpuSecondsElseCpuSeconds) {
  Job j;
  j.state = JobState::kRunning;
  j.start_time = 100;
  j.attained_service = 500;
  j.alloc = Gpus(4, 2);  // 8 GPUs
  EXPECT_DOUBLE_EQ(j.alloc.service_rate(), 8);
  EXPECT_DOUBLE_EQ(AttainedService(j, 110), 500 + 8 * 10);
  Allocation cpu_only;
  cpu_only.nodes.push_back({0, 6, 1000, 0, 1, {}, {}});
  EXPECT_DOUBLE_EQ(cpu_only.service_rate(), 6);
  Allocation share;  // a 250/1000 share of a GPU accrues a quarter of a GPU-second a second
  share.nodes.push_back({0, 4, 1000, 0, 1, {}, {{2, 250}}});
  EXPECT_DOUBLE_EQ(share.service_rate(), 0.25);
  j.state = JobState::kConfiguring;  // nothing accrues before its nodes are up
  EXPECT_DOUBLE_EQ(AttainedService(j, 110), 500);
}

TEST(LasTest, RankOfFreshRequeuedAndPromotedJobs) {
  const LasConfig cfg = Limits({3600, 36000}, /*knob=*/2);
  Job fresh;
  fresh.spec.Mut().submit_time = 50;
  fresh.eligible_time = 60;
  LasRank r = LasRankOf(fresh, 1000, cfg);
  EXPECT_EQ(r.queue, 0);
  EXPECT_EQ(r.entered, 50);  // never ran: FIFO by submission
  EXPECT_FALSE(r.promoted);

  Job requeued;
  requeued.spec.Mut().submit_time = 0;
  requeued.restart_count = 1;
  requeued.attained_service = 4 * 1000;  // 4 GPUs for 1000 s: queue 1
  requeued.last_run = 1000;
  requeued.eligible_time = 1000;  // back in the queue at the end of that run
  r = LasRankOf(requeued, 2000, cfg);
  EXPECT_EQ(r.queue, 1);
  EXPECT_EQ(r.entered, 1000);
  EXPECT_EQ(LasPromotionTime(requeued, cfg), 3000);  // waited 2 x its last run
  r = LasRankOf(requeued, 2999, cfg);
  EXPECT_FALSE(r.promoted);
  r = LasRankOf(requeued, 3000, cfg);
  EXPECT_TRUE(r.promoted);
  EXPECT_EQ(r.queue, 0);
  EXPECT_EQ(r.entered, 3000);

  // Knob 0 turns promotion off; a job already in queue 0 is not "promoted".
  EXPECT_EQ(LasPromotionTime(requeued, Limits({3600, 36000}, 0)), kNoTime);
  requeued.attained_service = 100;
  EXPECT_EQ(LasPromotionTime(requeued, cfg), kNoTime);
}

TEST(LasTest, WhoMayBePreempted) {
  const LasConfig cfg = Limits({3600, 36000}, 0, /*min_run=*/600);
  Job v;
  v.state = JobState::kRunning;
  v.start_time = 0;
  v.alloc = Gpus(8);  // 8 GPU-s a second: queue 1 from t=450, queue 2 from t=4500
  EXPECT_FALSE(LasMayPreempt(v, 0, 500, cfg));  // queue 1 but has not run min_run_time
  EXPECT_TRUE(LasMayPreempt(v, 0, 600, cfg));
  EXPECT_FALSE(LasMayPreempt(v, 1, 600, cfg));  // same queue: never
  EXPECT_TRUE(LasMayPreempt(v, 1, 4500, cfg));
  v.spec.Mut().requeue = false;  // --no-requeue: never preempted by LAS
  EXPECT_FALSE(LasMayPreempt(v, 0, 4500, cfg));
}

TEST(LasTest, PreemptibleFromMinRunAndThreshold) {
  const LasConfig cfg = Limits({3600, 36000}, 0, 600);
  Job v;
  v.state = JobState::kRunning;
  v.start_time = 1000;
  v.alloc = Gpus(8);
  // For queue 0: 3600 GPU-s are reached at 1000 + 450, but min_run_time only at 1600.
  EXPECT_EQ(LasPreemptibleFrom(v, 0, cfg), 1600);
  // For queue 1: 36000 GPU-s at 1000 + 4500.
  EXPECT_EQ(LasPreemptibleFrom(v, 1, cfg), 5500);
  EXPECT_TRUE(LasMayPreempt(v, 1, 5500, cfg));
  EXPECT_FALSE(LasMayPreempt(v, 1, 5499, cfg));
  EXPECT_EQ(LasPreemptibleFrom(v, 2, cfg), kNoTime);  // nobody is below the last queue
  v.attained_service = 40000;                         // served before: only min_run_time counts
  EXPECT_EQ(LasPreemptibleFrom(v, 1, cfg), 1600);
  v.spec.Mut().requeue = false;
  EXPECT_EQ(LasPreemptibleFrom(v, 0, cfg), kNoTime);
}

// The scheduler with SchedulerPolicy=las: thresholds 100 and 1000 GPU-seconds (queues 0, 1, 2).
SchedulerConfig LasPolicy(Duration min_run = 0, double knob = 0) {
  SchedulerConfig cfg = SchedulerConfig::Las();
  cfg.las = Limits({100, 1000}, knob, min_run);
  return cfg;
}

// Two 8-GPU nodes: A (8 GPUs) alone on one, B and C (4 GPUs each) on the other; C started 10 s
// after B. At t=200: A has 1600 GPU-s (queue 2), B 800 and C 760 (queue 1).
struct ThreeRunning {
  ClusterState cs = MakeCluster().Nodes("g", 2, 64, 512000, 8, "h100").Build();
  JobId a = 0, b = 0, c = 0;
  explicit ThreeRunning(const SchedulerConfig& cfg, bool a_requeues = true) {
    MakeJob ja = MakeJob().GpusPerNode(8);
    if (!a_requeues) ja.NoRequeue();
    a = *cs.Submit(ja.Obj(), nullptr, 0);
    b = *cs.Submit(MakeJob().GpusPerNode(4).Obj(), nullptr, 0);
    (void)cs.Apply(Schedule(cs, 0, cfg), 0);
    c = *cs.Submit(MakeJob().GpusPerNode(4).Obj(), nullptr, 10);
    (void)cs.Apply(Schedule(cs, 10, cfg), 10);
  }
};

TEST(LasSchedulerTest, PreemptsTheMostServedQueueFirst) {
  const SchedulerConfig cfg = LasPolicy();
  ThreeRunning r(cfg);
  ASSERT_EQ(r.cs.running_ids().size(), 3u);
  ASSERT_NE(r.cs.FindJob(r.a)->alloc.nodes[0].node, r.cs.FindJob(r.b)->alloc.nodes[0].node);
  // D (queue 0) needs 4 GPUs: one victim on either node; A's queue (2) is below B's and C's (1).
  JobId d = *r.cs.Submit(MakeJob().GpusPerNode(4).Obj(), nullptr, 200);
  Plan plan = Schedule(r.cs, 200, cfg);
  ASSERT_EQ(plan.preemptions.size(), 1u);
  EXPECT_EQ(plan.preemptions[0].victim, r.a);
  EXPECT_EQ(plan.preemptions[0].mode, PreemptMode::kRequeue);
  const PlannedStart* s = nullptr;
  for (const PlannedStart& p : plan.starts) {
    if (p.job == d) s = &p;
  }
  ASSERT_NE(s, nullptr);
  EXPECT_EQ(s->after_preempting, std::vector<JobId>{r.a});
}

TEST(LasSchedulerTest, WithinAQueueTheLeastServedAndNeverANoRequeueJob) {
  const SchedulerConfig cfg = LasPolicy();
  ThreeRunning r(cfg, /*a_requeues=*/false);
  (void)r.cs.Submit(MakeJob().GpusPerNode(4).Obj(), nullptr, 200);
  Plan plan = Schedule(r.cs, 200, cfg);
  // A is --no-requeue: of B (800) and C (760), both queue 1, C has received less.
  ASSERT_EQ(plan.preemptions.size(), 1u);
  EXPECT_EQ(plan.preemptions[0].victim, r.c);
}

TEST(LasSchedulerTest, NoVictimInTheSameQueue) {
  // With thresholds 2000 and 10000, A (1600), B (800) and C (760) are still in queue 0 with D.
  SchedulerConfig cfg = LasPolicy();
  cfg.las.queue_limits = {2000, 10000};
  ThreeRunning r(cfg);
  JobId d = *r.cs.Submit(MakeJob().GpusPerNode(4).Obj(), nullptr, 200);
  Plan plan = Schedule(r.cs, 200, cfg);
  EXPECT_TRUE(plan.preemptions.empty());
  ASSERT_EQ(plan.pending.size(), 1u);
  EXPECT_EQ(plan.pending[0].job, d);
  EXPECT_EQ(plan.pending[0].reason, PendingReason::kResources);
  // A reaches 2000 GPU-s at 250: the pass asks to be woken then, and preempts it.
  EXPECT_EQ(plan.wake_at, 250);
  plan = Schedule(r.cs, 250, cfg);
  ASSERT_EQ(plan.preemptions.size(), 1u);
  EXPECT_EQ(plan.preemptions[0].victim, r.a);
}

TEST(LasSchedulerTest, NoVictimBeforeMinRunTime) {
  const SchedulerConfig cfg = LasPolicy(/*min_run=*/300);
  ThreeRunning r(cfg);
  (void)r.cs.Submit(MakeJob().GpusPerNode(4).Obj(), nullptr, 200);
  Plan plan = Schedule(r.cs, 200, cfg);
  EXPECT_TRUE(plan.preemptions.empty()) << "nobody has run 300 s yet";
  // A and B may be preempted from 300 (C from 310): the pass asks to be woken then.
  EXPECT_EQ(plan.wake_at, 300);
  // At 300 all three are in queue 2 (A 2400, B 1200, C 1160 GPU-s): C, the least served, has
  // run only 290 s, so B, the next least served, is the victim.
  plan = Schedule(r.cs, 300, cfg);
  ASSERT_EQ(plan.preemptions.size(), 1u);
  EXPECT_EQ(plan.preemptions[0].victim, r.b);
}

TEST(LasSchedulerTest, QueueOrderAndPromotion) {
  // One 8-GPU node. R ran 100 s on 8 GPUs (800 GPU-s: queue 1) and was requeued at 100; F, a
  // fresh job (queue 0), arrives at 350. Both need the whole node.
  for (double knob : {0.0, 2.0}) {
    SchedulerConfig cfg = LasPolicy(0, knob);
    ClusterState cs = MakeCluster().Nodes("g", 1, 64, 512000, 8, "h100").Build();
    JobId r = *cs.Submit(MakeJob().GpusPerNode(8).Obj(), nullptr, 0);
    (void)cs.Apply(Schedule(cs, 0, cfg), 0);
    JobOutcome o;
    o.state = JobState::kPreempted;
    o.end_time = 100;
    ASSERT_TRUE(cs.EndJob(r, o, /*requeue=*/true).ok());
    EXPECT_DOUBLE_EQ(cs.FindJob(r)->attained_service, 800);
    EXPECT_EQ(cs.FindJob(r)->last_run, 100);
    JobId f = *cs.Submit(MakeJob().GpusPerNode(8).Obj(), nullptr, 350);
    Plan plan = Schedule(cs, 400, cfg);
    ASSERT_EQ(plan.starts.size(), 1u);
    // Without promotion F (queue 0) goes first; with knob 2, R went back to queue 0 at
    // 100 + 2 x 100 = 300, before F entered it at 350.
    EXPECT_EQ(plan.starts[0].job, knob == 0 ? f : r) << "knob " << knob;
  }
}

}  // namespace
}  // namespace berth::core
