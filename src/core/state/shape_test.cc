#include "core/state/shape.h"

#include <gtest/gtest.h>

#include "core/state/cluster_state.h"
#include "core/testing/builders.h"

namespace berth::core {
namespace {

using testing::MakeCluster;
using testing::MakeJob;

struct ShapeCase {
  const char* name;
  JobSpec spec;
  bool task_mode;
  int32_t min_nodes, max_nodes, cpus, gpus, tasks;
  int64_t mem_mib;  // -1: not given (default applies)
};

class ShapeTest : public ::testing::TestWithParam<ShapeCase> {};

TEST_P(ShapeTest, Normalises) {
  ClusterState cs = MakeCluster().Nodes("gpu", 4, 64, 512 * 1024, 8, "h100").Build();
  const ShapeCase& c = GetParam();
  Result<JobShape> s = cs.ComputeShape(c.spec, cs.partitions()[0]);
  ASSERT_TRUE(s.ok()) << s.status().ToString();
  EXPECT_EQ(s->task_mode, c.task_mode) << c.name;
  EXPECT_EQ(s->min_nodes, c.min_nodes) << c.name;
  EXPECT_EQ(s->max_nodes, c.max_nodes) << c.name;
  EXPECT_EQ(s->cpus, c.cpus) << c.name;
  EXPECT_EQ(s->gpus, c.gpus) << c.name;
  EXPECT_EQ(s->tasks, c.tasks) << c.name;
  if (c.mem_mib >= 0) {
    EXPECT_TRUE(s->mem_given) << c.name;
    EXPECT_EQ(s->mem_mib, c.mem_mib) << c.name;
  } else {
    EXPECT_FALSE(s->mem_given) << c.name;
  }
}

INSTANTIATE_TEST_SUITE_P(
    Table, ShapeTest,
    ::testing::Values(
        ShapeCase{"default", MakeJob().Obj(), false, 1, 1, 1, 0, 1, -1},
        ShapeCase{"cpus per task", MakeJob().CpusPerTask(8).Obj(), false, 1, 1, 8, 0, 1, -1},
        ShapeCase{"tasks spread freely", MakeJob().Tasks(16).CpusPerTask(2).Obj(), true, 1, 16, 2,
                  0, 16, -1},
        ShapeCase{"tasks per node", MakeJob().Nodes(2).TasksPerNode(4).CpusPerTask(2).Obj(), false,
                  2, 2, 8, 0, 4, -1},
        ShapeCase{"tasks over nodes", MakeJob().Nodes(2).Tasks(6).Obj(), false, 2, 2, 3, 0, 3, -1},
        ShapeCase{"ntasks with ntasks-per-node", MakeJob().Tasks(8).TasksPerNode(4).Obj(), false, 2,
                  2, 4, 0, 4, -1},
        ShapeCase{"node range grows", MakeJob().Nodes(2, 4).Obj(), false, 2, 4, 1, 0, 1, -1},
        ShapeCase{"node range fixed by ntasks", MakeJob().Nodes(2, 4).Tasks(4).Obj(), false, 2, 2,
                  2, 0, 2, -1},
        ShapeCase{"gpus per node", MakeJob().Nodes(2).GpusPerNode(8).Obj(), false, 2, 2, 1, 8, 1,
                  -1},
        ShapeCase{"gpus total over nodes", MakeJob().Nodes(2).Gpus(12).Obj(), false, 2, 2, 1, 6, 1,
                  -1},
        ShapeCase{"gpus total single node", MakeJob().Gpus(4).Obj(), false, 1, 1, 1, 4, 1, -1},
        ShapeCase{"gpus per task", MakeJob().Nodes(1).TasksPerNode(4).GpusPerTask(1).Obj(), false,
                  1, 1, 4, 4, 4, -1},
        ShapeCase{"gpus per task, task mode", MakeJob().Tasks(4).GpusPerTask(2).Obj(), true, 1, 4,
                  1, 2, 4, -1},
        // -n 2 --gpus-per-node=2 without -N: one node with both tasks and two GPUs (task mode
        // would drop the per-node GPUs).
        ShapeCase{"tasks with gpus per node", MakeJob().Tasks(2).GpusPerNode(2).Obj(), false, 1, 1,
                  2, 2, 2, -1},
        ShapeCase{"cpus per gpu", MakeJob().GpusPerNode(4).CpusPerGpu(8).Obj(), false, 1, 1, 32, 4,
                  1, -1},
        ShapeCase{"mem per node", MakeJob().Mem(4096).Obj(), false, 1, 1, 1, 0, 1, 4096},
        ShapeCase{"mem per cpu", MakeJob().CpusPerTask(4).MemPerCpu(1000).Obj(), false, 1, 1, 4, 0,
                  1, 4000},
        ShapeCase{"mem per gpu", MakeJob().GpusPerNode(2).MemPerGpu(10000).Obj(), false, 1, 1, 1, 2,
                  1, 20000}));

TEST(ShapeTest, WholeNodeAndWholeMemory) {
  ClusterState cs = MakeCluster().Nodes("n", 2, 8, 8000).Build();
  Result<JobShape> ex = cs.ComputeShape(MakeJob().Exclusive().Obj(), cs.partitions()[0]);
  ASSERT_TRUE(ex.ok());
  EXPECT_TRUE(ex->whole_node);
  Result<JobShape> mem0 = cs.ComputeShape(MakeJob().Mem(0).Obj(), cs.partitions()[0]);
  ASSERT_TRUE(mem0.ok());
  EXPECT_TRUE(mem0->whole_mem);
}

// man sbatch, -O/--overcommit: "one CPU per task normally ... will be allocated one CPU per
// node" -- here one task's CPUs a node, with every task on the job's nodes.
TEST(ShapeTest, OvercommitAsksOneTasksCpusANode) {
  ClusterState cs = MakeCluster().Nodes("n", 2, 8, 8000).Build();
  JobSpec spec = MakeJob().Nodes(2).Tasks(8).CpusPerTask(2).Obj();
  spec.overcommit = true;
  Result<JobShape> s = cs.ComputeShape(spec, cs.partitions()[0]);
  ASSERT_TRUE(s.ok());
  EXPECT_FALSE(s->task_mode);
  EXPECT_EQ(s->min_nodes, 2);
  EXPECT_EQ(s->tasks, 4);
  EXPECT_EQ(s->cpus, 2);
  spec = MakeJob().Tasks(8).Obj();
  spec.overcommit = true;
  s = cs.ComputeShape(spec, cs.partitions()[0]);
  ASSERT_TRUE(s.ok());
  EXPECT_FALSE(s->task_mode);  // all eight tasks on one node, on one CPU
  EXPECT_EQ(s->min_nodes, 1);
  EXPECT_EQ(s->tasks, 8);
  EXPECT_EQ(s->cpus, 1);
}

TEST(ShapeTest, RejectsImpossibleRequests) {
  ClusterState cs = MakeCluster().Nodes("n", 2, 8, 8000, 2, "a100").Build();
  EXPECT_FALSE(cs.ComputeShape(MakeJob().Nodes(3, 2).Obj(), cs.partitions()[0]).ok());
  EXPECT_FALSE(cs.ComputeShape(MakeJob().GpusPerNode(1, "h100").Obj(), cs.partitions()[0]).ok());
  EXPECT_FALSE(cs.ComputeShape(MakeJob().Gres("shard", 1).Obj(), cs.partitions()[0]).ok());
  JobSpec neg = MakeJob().Obj();
  neg.cpus_per_task = -1;
  EXPECT_FALSE(cs.ComputeShape(neg, cs.partitions()[0]).ok());
}

TEST(ShapeTest, MinimumTotals) {
  JobShape s;
  s.min_nodes = 3;
  s.cpus = 4;
  s.gpus = 2;
  ShapeTotals t = MinimumTotals(s);
  EXPECT_EQ(t.cpus, 12);
  EXPECT_EQ(t.gpus, 6);
  EXPECT_EQ(t.nodes, 3);
  s.task_mode = true;
  s.tasks = 5;
  t = MinimumTotals(s);
  EXPECT_EQ(t.cpus, 20);
  EXPECT_EQ(t.gpus, 10);
  EXPECT_EQ(t.nodes, 1);
}

}  // namespace
}  // namespace berth::core
