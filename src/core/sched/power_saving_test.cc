// Power saving in the core: powered-down nodes take jobs only with power saving on, up nodes
// come first, a job placed on a powered-down node waits CONFIGURING while the node powers up,
// and the jobs of one pass pack onto the nodes it already woke.
#include <gtest/gtest.h>

#include "core/sched/candidates.h"
#include "core/sched/scheduler.h"
#include "core/testing/builders.h"

namespace berth::core {
namespace {

using testing::MakeCluster;
using testing::MakeJob;

NodeSpec Cloud(const std::string& name, int cpus, int gpus = 0) {
  NodeSpec n;
  n.name = name;
  n.cpus = cpus;
  n.mem_mib = 64000;
  n.gpus.assign(gpus, "h100");
  n.cloud = true;
  return n;
}

ClusterState OneUpTwoCloud() {
  return MakeCluster()
      .Nodes("up", 1, 4, 64000)
      .Node(Cloud("cloud01", 8))
      .Node(Cloud("cloud02", 8))
      .Build();
}

const PlannedStart* FindStart(const Plan& p, JobId id) {
  for (const PlannedStart& s : p.starts) {
    if (s.job == id) return &s;
  }
  return nullptr;
}

TEST(PowerSavingTest, WithoutItPoweredDownNodesTakeNothing) {
  ClusterState cs = OneUpTwoCloud();
  JobId big = *cs.Submit(MakeJob().CpusPerTask(8).Obj(), nullptr, 0);
  Plan plan = Schedule(cs, 0, SchedulerConfig::Multifactor());
  EXPECT_EQ(FindStart(plan, big), nullptr);
  EXPECT_TRUE(cs.asleep_nodes().Count() == 0);
}

TEST(PowerSavingTest, UpNodesFirstThenTheFewestPoweredDownOnes) {
  ClusterState cs = OneUpTwoCloud();
  cs.SetPowerSaving(true);
  EXPECT_EQ(cs.asleep_nodes().Count(), 2u);
  JobId small = *cs.Submit(MakeJob().CpusPerTask(2).Obj(), nullptr, 0);
  JobId a = *cs.Submit(MakeJob().CpusPerTask(4).Obj(), nullptr, 1);
  JobId b = *cs.Submit(MakeJob().CpusPerTask(4).Obj(), nullptr, 2);
  Plan plan = Schedule(cs, 10, SchedulerConfig::Multifactor());
  ASSERT_EQ(plan.starts.size(), 3u);
  // The 2-CPU job fits on the node that is up; the two 4-CPU jobs do not, and share one woken
  // node rather than waking both.
  EXPECT_EQ(cs.node(FindStart(plan, small)->alloc.nodes[0].node).spec.name, "up01");
  uint32_t na = FindStart(plan, a)->alloc.nodes[0].node;
  EXPECT_NE(cs.node(na).spec.name, "up01");
  EXPECT_EQ(FindStart(plan, b)->alloc.nodes[0].node, na);

  ApplyResult r = cs.Apply(plan, 10);
  EXPECT_EQ(cs.FindJob(small)->state, JobState::kRunning);
  EXPECT_EQ(cs.FindJob(a)->state, JobState::kConfiguring);
  EXPECT_EQ(cs.FindJob(b)->state, JobState::kConfiguring);
  EXPECT_EQ(cs.node(na).health, NodeHealth::kPoweringUp);
  EXPECT_EQ(cs.asleep_nodes().Count(), 1u);
  // Not up yet: the job keeps waiting.
  EXPECT_FALSE(cs.FinishConfiguring(a, 20).ok());
  ASSERT_TRUE(cs.SetNodeHealth(na, NodeHealth::kUp, "", 70).ok());
  ASSERT_TRUE(cs.FinishConfiguring(a, 70).ok());
  EXPECT_EQ(cs.FindJob(a)->state, JobState::kRunning);
  EXPECT_EQ(cs.FindJob(a)->start_time, 70);  // the time limit counts from the boot's end
  EXPECT_FALSE(cs.FinishConfiguring(a, 71).ok());
}

TEST(PowerSavingTest, AMultiNodeJobWaitsForAllItsNodes) {
  ClusterState cs = OneUpTwoCloud();
  cs.SetPowerSaving(true);
  JobId j = *cs.Submit(MakeJob().Nodes(3).CpusPerTask(4).Obj(), nullptr, 0);
  cs.Apply(Schedule(cs, 0, SchedulerConfig::Multifactor()), 0);
  ASSERT_EQ(cs.FindJob(j)->state, JobState::kConfiguring);
  ASSERT_EQ(cs.FindJob(j)->alloc.nodes.size(), 3u);
  EXPECT_EQ(cs.asleep_nodes().Count(), 0u);
  ASSERT_TRUE(cs.SetNodeHealth(*cs.FindNode("cloud01"), NodeHealth::kUp, "", 30).ok());
  EXPECT_FALSE(cs.FinishConfiguring(j, 30).ok());
  ASSERT_TRUE(cs.SetNodeHealth(*cs.FindNode("cloud02"), NodeHealth::kUp, "", 40).ok());
  EXPECT_TRUE(cs.FinishConfiguring(j, 40).ok());
}

TEST(PowerSavingTest, DrainedAndPoweringDownNodesAreNotWoken) {
  ClusterState cs = OneUpTwoCloud();
  cs.SetPowerSaving(true);
  ASSERT_TRUE(cs.SetNodeDrain(*cs.FindNode("cloud01"), true, "maint", 0).ok());
  ASSERT_TRUE(cs.SetNodeHealth(*cs.FindNode("cloud02"), NodeHealth::kPoweringDown, "", 0).ok());
  JobId first = *cs.Submit(MakeJob().CpusPerTask(4).Obj(), nullptr, 0);
  JobId second = *cs.Submit(MakeJob().CpusPerTask(4).Obj(), nullptr, 1);
  Plan plan = Schedule(cs, 0, SchedulerConfig::Multifactor());
  ASSERT_NE(FindStart(plan, first), nullptr);
  EXPECT_EQ(FindStart(plan, second), nullptr);
  ASSERT_EQ(plan.pending.size(), 1u);
  EXPECT_EQ(plan.pending[0].detail, "3 nodes: 1 lack 4 free CPUs, 1 powered down, 1 powering down");
}

}  // namespace
}  // namespace berth::core
