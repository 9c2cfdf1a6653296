#include "core/sched/scheduler.h"

#include <gtest/gtest.h>

#include "core/testing/builders.h"

namespace berth::core {
namespace {

using testing::MakeCluster;
using testing::MakeJob;

const PendingInfo* FindPending(const Plan& p, JobId id) {
  for (const PendingInfo& i : p.pending) {
    if (i.job == id) return &i;
  }
  return nullptr;
}

const PlannedStart* FindStart(const Plan& p, JobId id) {
  for (const PlannedStart& s : p.starts) {
    if (s.job == id) return &s;
  }
  return nullptr;
}

TEST(SchedulerTest, PacksGpuJobsOntoOneNode) {
  ClusterState cs = MakeCluster().Nodes("g", 2, 64, 512000, 8, "h100").Build();
  JobId a = *cs.Submit(MakeJob().GpusPerNode(1).Obj(), nullptr, 0);
  JobId b = *cs.Submit(MakeJob().GpusPerNode(1).Obj(), nullptr, 0);
  Plan plan = Schedule(cs, 0, SchedulerConfig::Multifactor());
  ASSERT_EQ(plan.starts.size(), 2u);
  EXPECT_EQ(FindStart(plan, a)->alloc.nodes[0].node, 0u);
  EXPECT_EQ(FindStart(plan, b)->alloc.nodes[0].node, 0u);
  EXPECT_EQ(FindStart(plan, a)->alloc.nodes[0].gpu_mask, 0b01u);
  EXPECT_EQ(FindStart(plan, b)->alloc.nodes[0].gpu_mask, 0b10u);
}

TEST(SchedulerTest, SpreadUsesTheEmptiestNode) {
  ClusterState cs = MakeCluster().Nodes("g", 2, 64, 512000, 8, "h100").Build();
  SchedulerConfig cfg = SchedulerConfig::Multifactor();
  cfg.placement = PlacementPolicy::kSpread;
  JobId a = *cs.Submit(MakeJob().GpusPerNode(1).Obj(), nullptr, 0);
  ApplyResult r = cs.Apply(Schedule(cs, 0, cfg), 0);
  ASSERT_EQ(r.started.size(), 1u);
  JobId b = *cs.Submit(MakeJob().GpusPerNode(1).Obj(), nullptr, 1);
  Plan plan = Schedule(cs, 1, cfg);
  ASSERT_NE(FindStart(plan, b), nullptr);
  EXPECT_NE(FindStart(plan, b)->alloc.nodes[0].node, cs.FindJob(a)->alloc.nodes[0].node);
}

TEST(SchedulerTest, CpuJobsAvoidNodesWithFreeGpus) {
  ClusterState cs =
      MakeCluster().Nodes("g", 1, 64, 512000, 8, "h100").Nodes("c", 1, 64, 512000).Build();
  JobId a = *cs.Submit(MakeJob().CpusPerTask(4).Obj(), nullptr, 0);
  Plan plan = Schedule(cs, 0, SchedulerConfig::Multifactor());
  EXPECT_EQ(cs.node(FindStart(plan, a)->alloc.nodes[0].node).spec.name, "c01");
}

TEST(SchedulerTest, AHeldJobsPriorityIsZeroAsInSlurm) {
  ClusterState cs = MakeCluster().Nodes("c", 1, 4, 16000).Build();
  JobId running = *cs.Submit(MakeJob().CpusPerTask(4).Obj(), nullptr, 0);
  cs.Apply(Schedule(cs, 0, SchedulerConfig::Multifactor()), 0);
  ASSERT_EQ(cs.FindJob(running)->state, JobState::kRunning);
  JobId waiting = *cs.Submit(MakeJob().CpusPerTask(1).Obj(), nullptr, 0);
  JobId held = *cs.Submit(MakeJob().CpusPerTask(1).Hold().Obj(), nullptr, 0);
  JobId held_by_operator =
      *cs.Submit(MakeJob().CpusPerTask(1).Hold(HoldKind::kAdmin).Obj(), nullptr, 0);
  Plan plan = Schedule(cs, 3600, SchedulerConfig::Multifactor());
  ASSERT_NE(FindPending(plan, waiting), nullptr);
  EXPECT_GT(FindPending(plan, waiting)->priority, 0);
  for (JobId id : {held, held_by_operator}) {
    ASSERT_NE(FindPending(plan, id), nullptr);
    EXPECT_EQ(FindPending(plan, id)->priority, 0) << id;
  }
}

TEST(SchedulerTest, MultiNodeJobsAreAllOrNothing) {
  ClusterState cs = MakeCluster().Nodes("n", 2, 8, 8000).Build();
  JobId big = *cs.Submit(MakeJob().Nodes(2).Exclusive().Obj(), nullptr, 0);
  JobId small = *cs.Submit(MakeJob().Obj(), nullptr, 0);
  (void)cs.Apply(Schedule(cs, 0, SchedulerConfig::Fcfs()), 0);
  EXPECT_EQ(cs.FindJob(big)->alloc.nodes.size(), 2u);
  JobId big2 = *cs.Submit(MakeJob().Nodes(2).Obj(), nullptr, 1);
  Plan plan = Schedule(cs, 1, SchedulerConfig::Fcfs());
  EXPECT_TRUE(plan.starts.empty());
  EXPECT_EQ(FindPending(plan, small)->reason, PendingReason::kResources);
  EXPECT_EQ(FindPending(plan, big2)->reason, PendingReason::kPriority);
}

TEST(SchedulerTest, TopologyKeepsAMultiNodeJobInOneSwitch) {
  ClusterState cs = MakeCluster()
                        .Nodes("a", 3, 8, 8000, 0, "", {}, {"block1", "sw1"})
                        .Nodes("b", 2, 8, 8000, 0, "", {}, {"block1", "sw2"})
                        .Build();
  JobId j = *cs.Submit(MakeJob().Nodes(2).Exclusive().Obj(), nullptr, 0);
  Plan plan = Schedule(cs, 0, SchedulerConfig::Multifactor());
  const PlannedStart* s = FindStart(plan, j);
  ASSERT_NE(s, nullptr);
  // sw2 holds exactly two: the tightest group that fits.
  EXPECT_EQ(cs.node(s->alloc.nodes[0].node).spec.name, "b01");
  EXPECT_EQ(cs.node(s->alloc.nodes[1].node).spec.name, "b02");
}

TEST(SchedulerTest, EasyBackfillsShortJobsOnly) {
  ClusterState cs = MakeCluster().Nodes("n", 1, 10, 0).Build();
  JobId running = *cs.Submit(MakeJob().CpusPerTask(6).Time(100).Obj(), nullptr, 0);
  (void)cs.Apply(Schedule(cs, 0, SchedulerConfig::Easy()), 0);
  ASSERT_EQ(cs.FindJob(running)->state, JobState::kRunning);
  JobId head = *cs.Submit(MakeJob().CpusPerTask(8).Time(100).Obj(), nullptr, 1);
  JobId short_job = *cs.Submit(MakeJob().CpusPerTask(4).Time(50).Obj(), nullptr, 1);
  JobId long_job = *cs.Submit(MakeJob().CpusPerTask(4).Time(500).Obj(), nullptr, 1);
  Plan plan = Schedule(cs, 10, SchedulerConfig::Easy());
  EXPECT_NE(FindStart(plan, short_job), nullptr);
  EXPECT_EQ(FindStart(plan, long_job), nullptr);
  EXPECT_EQ(FindPending(plan, head)->reason, PendingReason::kResources);
  EXPECT_EQ(FindPending(plan, head)->expected_start, 100);
  EXPECT_EQ(FindPending(plan, long_job)->reason, PendingReason::kPriority);
}

TEST(SchedulerTest, FcfsDoesNotBackfill) {
  ClusterState cs = MakeCluster().Nodes("n", 1, 10, 0).Build();
  (void)cs.Submit(MakeJob().CpusPerTask(6).Obj(), nullptr, 0);
  (void)cs.Apply(Schedule(cs, 0, SchedulerConfig::Fcfs()), 0);
  (void)cs.Submit(MakeJob().CpusPerTask(8).Obj(), nullptr, 1);
  JobId small = *cs.Submit(MakeJob().CpusPerTask(1).Time(1).Obj(), nullptr, 1);
  Plan plan = Schedule(cs, 1, SchedulerConfig::Fcfs());
  EXPECT_TRUE(plan.starts.empty());
  EXPECT_EQ(FindPending(plan, small)->reason, PendingReason::kPriority);
}

TEST(SchedulerTest, EveryPendingJobHasAReasonAndPlansAreDeterministic) {
  ClusterState cs = MakeCluster().Nodes("g", 4, 32, 256000, 4, "a100").Build();
  for (int i = 0; i < 30; ++i) {
    (void)cs.Submit(MakeJob()
                        .User("u" + std::to_string(i % 3), 1000 + i % 3)
                        .GpusPerNode(1 + i % 4)
                        .Nodes(1 + i % 2)
                        .Time(100 + i)
                        .Obj(),
                    nullptr, i);
  }
  Plan a = Schedule(cs, 50, SchedulerConfig::Multifactor());
  Plan b = Schedule(cs, 50, SchedulerConfig::Multifactor());
  EXPECT_EQ(a.pending.size() + a.starts.size(), 30u);
  for (const PendingInfo& p : a.pending) EXPECT_NE(p.reason, PendingReason::kNone);
  ASSERT_EQ(a.starts.size(), b.starts.size());
  for (size_t i = 0; i < a.starts.size(); ++i) {
    EXPECT_EQ(a.starts[i].job, b.starts[i].job);
    EXPECT_EQ(a.starts[i].alloc, b.starts[i].alloc);
  }
}

TEST(SchedulerTest, QosPreemptionRequeuesTheFewestLowJobs) {
  QosSpec high;
  high.name = "high";
  high.priority = 100;
  high.preempt = {"normal"};
  ClusterState cs = MakeCluster().Nodes("g", 2, 64, 512000, 8, "h100").Qos(high).Build();
  SchedulerConfig cfg = SchedulerConfig::Multifactor();
  cfg.preempt_type = PreemptType::kQos;
  JobId l1 = *cs.Submit(MakeJob().GpusPerNode(8).Obj(), nullptr, 0);
  JobId l2 = *cs.Submit(MakeJob().GpusPerNode(4).Obj(), nullptr, 0);
  JobId l3 = *cs.Submit(MakeJob().GpusPerNode(4).Obj(), nullptr, 0);
  (void)cs.Apply(Schedule(cs, 0, cfg), 0);
  ASSERT_EQ(cs.running_ids().size(), 3u);
  JobId hi = *cs.Submit(MakeJob().QosName("high").GpusPerNode(8).Obj(), nullptr, 5);
  Plan plan = Schedule(cs, 5, cfg);
  ASSERT_EQ(plan.preemptions.size(), 1u) << "one 8-GPU victim beats two 4-GPU ones";
  EXPECT_EQ(plan.preemptions[0].victim, l1);
  EXPECT_EQ(plan.preemptions[0].mode, PreemptMode::kRequeue);
  const PlannedStart* s = FindStart(plan, hi);
  ASSERT_NE(s, nullptr);
  EXPECT_EQ(s->after_preempting, std::vector<JobId>{l1});
  (void)l2;
  (void)l3;
}

TEST(SchedulerTest, NeverPreemptsForAJobThatStillWouldNotFit) {
  QosSpec high;
  high.name = "high";
  high.preempt = {"normal"};
  ClusterState cs = MakeCluster().Nodes("g", 1, 64, 512000, 8, "h100").Qos(high).Build();
  SchedulerConfig cfg = SchedulerConfig::Multifactor();
  cfg.preempt_type = PreemptType::kQos;
  (void)cs.Submit(MakeJob().GpusPerNode(4).Obj(), nullptr, 0);
  (void)cs.Submit(MakeJob().QosName("high").GpusPerNode(4).Obj(), nullptr, 0);
  (void)cs.Apply(Schedule(cs, 0, cfg), 0);
  ASSERT_EQ(cs.running_ids().size(), 2u);
  // Preempting the normal job frees 4 GPUs; the high one keeps the other 4: 8 never fit.
  JobId want = *cs.Submit(MakeJob().QosName("high").GpusPerNode(8).Obj(), nullptr, 1);
  Plan plan = Schedule(cs, 1, cfg);
  EXPECT_TRUE(plan.preemptions.empty());
  EXPECT_EQ(FindPending(plan, want)->reason, PendingReason::kResources);
}

TEST(SchedulerTest, QosGpuLimitPerUser) {
  QosSpec q;
  q.name = "normal";
  q.max_tres_per_user.gpus = 4;
  ClusterState cs = MakeCluster().Nodes("g", 2, 64, 512000, 8, "h100").Qos(q).Build();
  JobId a = *cs.Submit(MakeJob().GpusPerNode(3).Obj(), nullptr, 0);
  JobId b = *cs.Submit(MakeJob().GpusPerNode(3).Obj(), nullptr, 0);
  JobId c = *cs.Submit(MakeJob().User("bob", 1001).GpusPerNode(3).Obj(), nullptr, 0);
  Plan plan = Schedule(cs, 0, SchedulerConfig::Multifactor());
  EXPECT_NE(FindStart(plan, a), nullptr);
  EXPECT_NE(FindStart(plan, c), nullptr);
  ASSERT_NE(FindPending(plan, b), nullptr);
  EXPECT_EQ(FindPending(plan, b)->reason, PendingReason::kQosMaxGresPerUser);
}

TEST(SchedulerTest, ArrayThrottle) {
  ClusterState cs = MakeCluster().Nodes("n", 1, 16, 16000).Build();
  JobId arr = *cs.Submit(MakeJob().Array({0, 1, 2, 3, 4}, 2).Obj(), nullptr, 0);
  Plan plan = Schedule(cs, 0, SchedulerConfig::Multifactor());
  ASSERT_EQ(plan.starts.size(), 2u);
  EXPECT_EQ(plan.starts[0].array_task, 0);
  EXPECT_EQ(plan.starts[1].array_task, 1);
  EXPECT_EQ(FindPending(plan, arr)->reason, PendingReason::kJobArrayTaskLimit);
}

TEST(SchedulerTest, DependencyAfterOk) {
  ClusterState cs = MakeCluster().Nodes("n", 1, 16, 16000).Build();
  JobId first = *cs.Submit(MakeJob().Obj(), nullptr, 0);
  Dependency d;
  d.conditions.push_back({DependencyType::kAfterOk, {{first, kAllArrayTasks, 0}}});
  JobId second = *cs.Submit(MakeJob().Depend(d).Obj(), nullptr, 0);
  (void)cs.Apply(Schedule(cs, 0, SchedulerConfig::Multifactor()), 0);
  EXPECT_EQ(FindPending(Schedule(cs, 1, SchedulerConfig::Multifactor()), second)->reason,
            PendingReason::kDependency);
  JobOutcome fail;
  fail.state = JobState::kFailed;
  fail.exit_code = 1;
  fail.end_time = 10;
  ASSERT_TRUE(cs.EndJob(first, fail, false).ok());
  EXPECT_EQ(FindPending(Schedule(cs, 11, SchedulerConfig::Multifactor()), second)->reason,
            PendingReason::kDependencyNeverSatisfied);
}

}  // namespace
}  // namespace berth::core
