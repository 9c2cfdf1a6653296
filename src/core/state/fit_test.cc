#include "core/state/fit.h"

#include <gtest/gtest.h>

#include <functional>
#include <string>
#include <utility>
#include <vector>

#include "core/state/cluster_state.h"
#include "core/testing/builders.h"

namespace berth::core {
namespace {

using testing::MakeCluster;
using testing::MakeJob;

// One GPU node g01: 16 CPUs, 64000 MiB (4000 MiB per CPU by share), GPUs 0-3 a100 and 4-7 h100,
// 16 "shard" gres. One CPU node c01: 8 CPUs, 8000 MiB, no GPUs, no gres.
ClusterState GpuCluster(int64_t def_mem_per_cpu = 0) {
  NodeSpec g;
  g.name = "g01";
  g.cpus = 16;
  g.mem_mib = 64000;
  g.gpus = {"a100", "a100", "a100", "a100", "h100", "h100", "h100", "h100"};
  g.gres = {{"shard", 16}};
  NodeSpec c;
  c.name = "c01";
  c.cpus = 8;
  c.mem_mib = 8000;
  ClusterSpec spec = MakeCluster().Node(g).Node(c).Spec();
  spec.def_mem_per_cpu_mib = def_mem_per_cpu;
  return *ClusterState::Create(spec);
}

JobShape ShapeOf(const ClusterState& cs, const JobSpec& spec) {
  Result<JobShape> s = cs.ComputeShape(spec, cs.partitions()[0]);
  EXPECT_TRUE(s.ok()) << s.status().ToString();
  return s.ok() ? *s : JobShape();
}

// ---- GpuTypeMask
TEST(GpuTypeMaskTest, MasksByType) {
  ClusterState cs = GpuCluster();
  const NodeInfo& g = cs.node(0);
  EXPECT_EQ(GpuTypeMask(g, kAnyGpuType), 0xFFu);
  EXPECT_EQ(GpuTypeMask(g, *cs.FindGpuType("a100")), 0x0Fu);  // devices 0-3
  EXPECT_EQ(GpuTypeMask(g, *cs.FindGpuType("h100")), 0xF0u);  // devices 4-7
  EXPECT_EQ(GpuTypeMask(cs.node(1), kAnyGpuType), 0u);        // no GPUs
  EXPECT_EQ(GpuTypeMask(cs.node(1), *cs.FindGpuType("h100")), 0u);

  // Interleaved types; and a node with the full 64 devices (the mask's every bit).
  NodeSpec mixed;
  mixed.name = "m01";
  mixed.gpus = {"h100", "a100", "h100", "a100"};
  ClusterState big =
      MakeCluster().Node(mixed).Nodes("x", 1, 64, 64000, kMaxGpusPerNode, "l4").Build();
  EXPECT_EQ(GpuTypeMask(big.node(0), *big.FindGpuType("h100")), 0b0101u);
  EXPECT_EQ(GpuTypeMask(big.node(0), *big.FindGpuType("a100")), 0b1010u);
  EXPECT_EQ(GpuTypeMask(big.node(1), kAnyGpuType), ~uint64_t{0});
  EXPECT_EQ(GpuTypeMask(big.node(1), *big.FindGpuType("l4")), ~uint64_t{0});
}

// ---- FitNode (node mode) on g01.
struct FitCase {
  const char* name;
  JobSpec spec;
  // Changes to g01's free resources before fitting (none: the node is empty).
  std::function<void(NodeFree&)> used;
  bool fits;
  int32_t cpus = 0;
  int64_t mem = 0;
  uint64_t gpus = 0;
  int64_t shards = 0;  // gres "shard" given
};

void Nothing(NodeFree&) {}

class FitNodeTest : public ::testing::TestWithParam<FitCase> {};

TEST_P(FitNodeTest, Allocates) {
  const FitCase& c = GetParam();
  ClusterState cs = GpuCluster();
  const NodeInfo& g = cs.node(0);
  JobShape s = ShapeOf(cs, c.spec);
  NodeFree f = NodeFree::Of(g);
  c.used(f);
  NodeAllocation a;
  ASSERT_EQ(FitNode(s, g, f, 7, &a), c.fits) << c.name;
  if (!c.fits) return;
  EXPECT_EQ(a.node, 0u) << c.name;
  EXPECT_EQ(a.cpus, c.cpus) << c.name;
  EXPECT_EQ(a.mem_mib, c.mem) << c.name;
  EXPECT_EQ(a.gpu_mask, c.gpus) << c.name;
  std::vector<NamedCount> want_gres;
  if (c.shards > 0) want_gres.push_back({"shard", c.shards});
  EXPECT_EQ(a.gres, want_gres) << c.name;
}

INSTANTIATE_TEST_SUITE_P(
    Table, FitNodeTest,
    ::testing::Values(
        // CPUs; memory by default = the CPUs' share: 4 x 64000/16.
        FitCase{"4 cpus, default memory share", MakeJob().CpusPerTask(4).Obj(), Nothing, true, 4,
                16000},
        FitCase{"every cpu", MakeJob().CpusPerTask(16).Obj(), Nothing, true, 16, 64000},
        FitCase{"17 cpus", MakeJob().CpusPerTask(17).Obj(), Nothing, false},
        FitCase{"4 cpus, 3 free", MakeJob().CpusPerTask(4).Obj(), [](NodeFree& f) { f.cpus = 3; },
                false},
        // Memory: given per node, per CPU (x CPUs), per GPU (x GPUs).
        FitCase{"--mem", MakeJob().Mem(10000).Obj(), Nothing, true, 1, 10000},
        FitCase{"--mem too large", MakeJob().Mem(64001).Obj(), Nothing, false},
        FitCase{"--mem, 9999 free", MakeJob().Mem(10000).Obj(),
                [](NodeFree& f) { f.mem_mib = 9999; }, false},
        FitCase{"--mem-per-cpu 1000 x 4", MakeJob().CpusPerTask(4).MemPerCpu(1000).Obj(), Nothing,
                true, 4, 4000},
        FitCase{"--mem-per-gpu 5000 x 2", MakeJob().GpusPerNode(2).MemPerGpu(5000).Obj(), Nothing,
                true, 1, 10000, 0b11},
        // Default share with too little free: 2 x 4000 = 8000 > 7999.
        FitCase{"default share, too little free", MakeJob().CpusPerTask(2).Obj(),
                [](NodeFree& f) { f.mem_mib = 7999; }, false},
        // --mem=0: the whole memory of the node, only when all of it is free.
        FitCase{"--mem=0", MakeJob().Mem(0).Obj(), Nothing, true, 1, 64000},
        FitCase{"--mem=0, 1 MiB used", MakeJob().Mem(0).Obj(),
                [](NodeFree& f) { f.mem_mib = 63999; }, false},
        // GPUs: the lowest free device indices (of the type asked for).
        FitCase{"2 GPUs of any type", MakeJob().GpusPerNode(2).Obj(), Nothing, true, 1, 4000, 0x03},
        FitCase{"2 GPUs, devices 0 and 2 busy", MakeJob().GpusPerNode(2).Obj(),
                [](NodeFree& f) { f.gpus = 0xFA; }, true, 1, 4000, 0x0A},
        FitCase{"2 h100", MakeJob().GpusPerNode(2, "h100").Obj(), Nothing, true, 1, 4000, 0x30},
        FitCase{"2 h100, device 4 busy", MakeJob().GpusPerNode(2, "h100").Obj(),
                [](NodeFree& f) { f.gpus = 0xEF; }, true, 1, 4000, 0x60},
        FitCase{"4 a100", MakeJob().GpusPerNode(4, "a100").Obj(), Nothing, true, 1, 4000, 0x0F},
        FitCase{"5 h100: only 4 exist", MakeJob().GpusPerNode(5, "h100").Obj(), Nothing, false},
        FitCase{"3 a100, 2 free (h100s free do not count)", MakeJob().GpusPerNode(3, "a100").Obj(),
                [](NodeFree& f) { f.gpus = 0xF3; }, false},
        FitCase{"8 GPUs of any type", MakeJob().GpusPerNode(8).Obj(), Nothing, true, 1, 4000, 0xFF},
        FitCase{"cpus per gpu: 3 GPUs x 4", MakeJob().GpusPerNode(3).CpusPerGpu(4).Obj(), Nothing,
                true, 12, 48000, 0x07},
        // Gres.
        FitCase{"4 shards", MakeJob().Gres("shard", 4).Obj(), Nothing, true, 1, 4000, 0, 4},
        FitCase{"4 shards, 3 free", MakeJob().Gres("shard", 4).Obj(),
                [](NodeFree& f) { f.gres = {3}; }, false},
        FitCase{"17 shards", MakeJob().Gres("shard", 17).Obj(), Nothing, false},
        // Whole node (--exclusive): every CPU, all memory and every GPU, only on an empty node.
        FitCase{"exclusive", MakeJob().Exclusive().Obj(), Nothing, true, 16, 64000, 0xFF},
        FitCase{"exclusive with 2 h100: still the whole node",
                MakeJob().Exclusive().GpusPerNode(2, "h100").Obj(), Nothing, true, 16, 64000, 0xFF},
        FitCase{"exclusive, one cpu used", MakeJob().Exclusive().Obj(),
                [](NodeFree& f) { f.cpus = 15; }, false},
        FitCase{"exclusive, one GPU used", MakeJob().Exclusive().Obj(),
                [](NodeFree& f) { f.gpus = 0x7F; }, false},
        FitCase{"exclusive, 1 MiB used", MakeJob().Exclusive().Obj(),
                [](NodeFree& f) { f.mem_mib = 63999; }, false},
        FitCase{"exclusive, --mem over the node", MakeJob().Exclusive().Mem(70000).Obj(), Nothing,
                false},
        // --exclusive=user and sharing (this job's user is 7).
        FitCase{"another user's job: sharing allowed", MakeJob().Obj(),
                [](NodeFree& f) { f.sole_user = 3; }, true, 1, 4000},
        FitCase{"several users' jobs: sharing allowed", MakeJob().Obj(),
                [](NodeFree& f) { f.sole_user = -2; }, true, 1, 4000},
        FitCase{"user-exclusive job, another user there",
                MakeJob().Exclusive(ExclusiveMode::kUser).Obj(),
                [](NodeFree& f) { f.sole_user = 3; }, false},
        FitCase{"user-exclusive job, several users there",
                MakeJob().Exclusive(ExclusiveMode::kUser).Obj(),
                [](NodeFree& f) { f.sole_user = -2; }, false},
        FitCase{"user-exclusive job, own jobs there",
                MakeJob().Exclusive(ExclusiveMode::kUser).Obj(),
                [](NodeFree& f) { f.sole_user = 7; }, true, 1, 4000},
        FitCase{"another user's user-exclusive job there", MakeJob().Obj(),
                [](NodeFree& f) {
                  f.sole_user = 3;
                  f.user_exclusive = true;
                },
                false},
        FitCase{"own user-exclusive job there", MakeJob().Obj(),
                [](NodeFree& f) {
                  f.sole_user = 7;
                  f.user_exclusive = true;
                },
                true, 1, 4000}));

// Default memory per CPU from the cluster (DefMemPerCPU) or the partition replaces the share.
TEST(FitNodeTest, DefaultMemoryPerCpu) {
  ClusterState cs = GpuCluster(1500);
  NodeAllocation a;
  ASSERT_TRUE(FitNode(ShapeOf(cs, MakeJob().CpusPerTask(2).Obj()), cs.node(0),
                      NodeFree::Of(cs.node(0)), 0, &a));
  EXPECT_EQ(a.mem_mib, 3000);  // 2 x 1500, not 2 x 4000

  PartitionSpec p = testing::MakePartition("p", {"n01"}, true);
  p.def_mem_per_cpu_mib = 700;
  ClusterState part = MakeCluster().Nodes("n", 1, 8, 8000).Partition(p).Build();
  ASSERT_TRUE(FitNode(ShapeOf(part, MakeJob().CpusPerTask(4).Obj()), part.node(0),
                      NodeFree::Of(part.node(0)), 0, &a));
  EXPECT_EQ(a.mem_mib, 2800);  // 4 x 700
}

// A CPU-only node: GPUs and gres it lacks.
TEST(FitNodeTest, NodeWithoutGpusOrGres) {
  ClusterState cs = GpuCluster();
  const NodeInfo& c = cs.node(1);
  EXPECT_FALSE(
      FitNode(ShapeOf(cs, MakeJob().GpusPerNode(1).Obj()), c, NodeFree::Of(c), 0, nullptr));
  EXPECT_FALSE(
      FitNode(ShapeOf(cs, MakeJob().Gres("shard", 1).Obj()), c, NodeFree::Of(c), 0, nullptr));
  NodeAllocation a;
  ASSERT_TRUE(FitNode(ShapeOf(cs, MakeJob().CpusPerTask(8).Obj()), c, NodeFree::Of(c), 0, &a));
  EXPECT_EQ(a.node, 1u);
  EXPECT_EQ(a.mem_mib, 8000);  // 8 x 8000/8
}

// ---- FitTasks (task mode) on g01: how many tasks, and what they get together.
struct TaskCase {
  const char* name;
  JobSpec spec;
  std::function<void(NodeFree&)> used;
  int32_t limit;
  int32_t tasks;
  int32_t cpus = 0;
  int64_t mem = 0;
  uint64_t gpus = 0;
  int64_t shards = 0;
};

class FitTasksTest : public ::testing::TestWithParam<TaskCase> {};

TEST_P(FitTasksTest, Counts) {
  const TaskCase& c = GetParam();
  ClusterState cs = GpuCluster();
  const NodeInfo& g = cs.node(0);
  JobShape s = ShapeOf(cs, c.spec);
  ASSERT_TRUE(s.task_mode) << c.name;
  NodeFree f = NodeFree::Of(g);
  c.used(f);
  NodeAllocation a;
  ASSERT_EQ(FitTasks(s, g, f, 7, c.limit, &a), c.tasks) << c.name;
  EXPECT_EQ(FitTasks(s, g, f, 7, c.limit, nullptr), c.tasks) << c.name;
  if (c.tasks == 0) return;
  EXPECT_EQ(a.tasks, c.tasks) << c.name;
  EXPECT_EQ(a.cpus, c.cpus) << c.name;
  EXPECT_EQ(a.mem_mib, c.mem) << c.name;
  EXPECT_EQ(a.gpu_mask, c.gpus) << c.name;
  std::vector<NamedCount> want_gres;
  if (c.shards > 0) want_gres.push_back({"shard", c.shards});
  EXPECT_EQ(a.gres, want_gres) << c.name;
}

INSTANTIATE_TEST_SUITE_P(
    Table, FitTasksTest,
    ::testing::Values(
        // 2 CPUs per task: 16/2 = 8 tasks by CPUs; memory share 2 x 4000 per task: 64000/8000 = 8.
        TaskCase{"cpus bound", MakeJob().Tasks(10).CpusPerTask(2).Obj(), Nothing, 10, 8, 16, 64000},
        TaskCase{"limit bound", MakeJob().Tasks(10).CpusPerTask(2).Obj(), Nothing, 3, 3, 6, 24000},
        TaskCase{"limit 0", MakeJob().Tasks(10).Obj(), Nothing, 0, 0},
        TaskCase{"partly used: 5 cpus free -> 2 tasks", MakeJob().Tasks(10).CpusPerTask(2).Obj(),
                 [](NodeFree& f) { f.cpus = 5; }, 10, 2, 4, 16000},
        // Memory per task given (--mem-per-cpu 1000 x 2 CPUs = 2000): 5000 free -> 2 tasks.
        TaskCase{"memory bound", MakeJob().Tasks(10).CpusPerTask(2).MemPerCpu(1000).Obj(),
                 [](NodeFree& f) { f.mem_mib = 5000; }, 10, 2, 4, 4000},
        // --mem in task mode is per node used, whatever the task count.
        TaskCase{"--mem per node", MakeJob().Tasks(4).Mem(10000).Obj(), Nothing, 4, 4, 4, 10000},
        TaskCase{"--mem per node, 9999 free", MakeJob().Tasks(4).Mem(10000).Obj(),
                 [](NodeFree& f) { f.mem_mib = 9999; }, 4, 0},
        TaskCase{"--mem=0: the node's memory", MakeJob().Tasks(4).Mem(0).Obj(), Nothing, 4, 4, 4,
                 64000},
        TaskCase{"--mem=0, 1 MiB used", MakeJob().Tasks(4).Mem(0).Obj(),
                 [](NodeFree& f) { f.mem_mib = 63999; }, 4, 0},
        // GPUs per task: 8 / 3 = 2 tasks, the 6 lowest devices.
        TaskCase{"gpus bound", MakeJob().Tasks(4).GpusPerTask(3).Obj(), Nothing, 4, 2, 2, 8000,
                 0x3F},
        TaskCase{"gpus, devices 0 and 1 busy", MakeJob().Tasks(4).GpusPerTask(2).Obj(),
                 [](NodeFree& f) { f.gpus = 0xFC; }, 4, 3, 3, 12000, 0xFC},
        // Gres per task: 16 shards / 5 = 3 tasks, 15 shards.
        TaskCase{"gres bound", MakeJob().Tasks(8).Gres("shard", 5).Obj(), Nothing, 8, 3, 3, 12000,
                 0, 15},
        // Whole node: only an empty node, and it gets all of it.
        TaskCase{"exclusive", MakeJob().Tasks(4).Exclusive().Obj(), Nothing, 4, 4, 16, 64000, 0xFF},
        TaskCase{"exclusive, one cpu used", MakeJob().Tasks(4).Exclusive().Obj(),
                 [](NodeFree& f) { f.cpus = 15; }, 4, 0},
        TaskCase{"another user's user-exclusive job", MakeJob().Tasks(4).Obj(),
                 [](NodeFree& f) {
                   f.sole_user = 3;
                   f.user_exclusive = true;
                 },
                 4, 0},
        TaskCase{"user-exclusive tasks, another user there",
                 MakeJob().Tasks(4).Exclusive(ExclusiveMode::kUser).Obj(),
                 [](NodeFree& f) { f.sole_user = 3; }, 4, 0}));

// ---- NodeCanEverHost: static capability, ignoring what is free, features and node state.
struct HostCase {
  const char* name;
  JobSpec spec;
  bool gpu_node;  // g01 (else c01)
  bool can;
};

class NodeCanEverHostTest : public ::testing::TestWithParam<HostCase> {};

TEST_P(NodeCanEverHostTest, Decides) {
  const HostCase& c = GetParam();
  ClusterState cs = GpuCluster();
  uint32_t n = c.gpu_node ? 0 : 1;
  // Busy and drained: neither matters.
  ASSERT_TRUE(cs.SetNodeDrain(n, true, "test", 0).ok());
  EXPECT_EQ(NodeCanEverHost(ShapeOf(cs, c.spec), cs.node(n)), c.can) << c.name;
}

INSTANTIATE_TEST_SUITE_P(
    Table, NodeCanEverHostTest,
    ::testing::Values(
        HostCase{"16 cpus on 16", MakeJob().CpusPerTask(16).Obj(), true, true},
        HostCase{"17 cpus on 16", MakeJob().CpusPerTask(17).Obj(), true, false},
        HostCase{"9 cpus on 8", MakeJob().CpusPerTask(9).Obj(), false, false},
        HostCase{"memory over the node", MakeJob().Mem(8001).Obj(), false, false},
        HostCase{"memory fits", MakeJob().Mem(8000).Obj(), false, true},
        HostCase{"GPU on a CPU node", MakeJob().GpusPerNode(1).Obj(), false, false},
        HostCase{"4 h100 on g01", MakeJob().GpusPerNode(4, "h100").Obj(), true, true},
        HostCase{"5 h100 on g01", MakeJob().GpusPerNode(5, "h100").Obj(), true, false},
        HostCase{"gres on a node without", MakeJob().Gres("shard", 1).Obj(), false, false},
        HostCase{"16 shards", MakeJob().Gres("shard", 16).Obj(), true, true},
        // Task mode: one task is enough, however many are asked for.
        HostCase{"100 tasks of 2 cpus", MakeJob().Tasks(100).CpusPerTask(2).Obj(), false, true},
        HostCase{"tasks of 9 cpus on 8", MakeJob().Tasks(2).CpusPerTask(9).Obj(), false, false},
        HostCase{"exclusive with 9 GPUs", MakeJob().Exclusive().GpusPerNode(9).Obj(), true, false},
        HostCase{"exclusive", MakeJob().Exclusive().Obj(), false, true}));

// NodeFree bookkeeping: Take, Subtract and Give are exact inverses on resources.
TEST(NodeFreeTest, TakeAndGive) {
  ClusterState cs = GpuCluster();
  const NodeInfo& g = cs.node(0);
  NodeFree f = NodeFree::Full(g);
  EXPECT_EQ(f.cpus, 16);
  EXPECT_EQ(f.mem_mib, 64000);
  EXPECT_EQ(f.gpus, 0xFFu);
  EXPECT_EQ(f.gres, std::vector<int64_t>{16});
  EXPECT_EQ(f.sole_user, -1);
  NodeAllocation a{0, 4, 1000, 0x30, 1, {{"shard", 3}}, {}};
  f.Take(g, a, 5, false);
  EXPECT_EQ(f.cpus, 12);
  EXPECT_EQ(f.mem_mib, 63000);
  EXPECT_EQ(f.gpus, 0xCFu);
  EXPECT_EQ(f.gres, std::vector<int64_t>{13});
  EXPECT_EQ(f.sole_user, 5);
  EXPECT_FALSE(f.user_exclusive);
  f.Take(g, NodeAllocation{0, 1, 0, 0, 1, {}, {}}, 6, true);
  EXPECT_EQ(f.sole_user, -2);
  EXPECT_TRUE(f.user_exclusive);
  f.Give(g, a);
  EXPECT_EQ(f.cpus, 15);
  EXPECT_EQ(f.gpus, 0xFFu);
  EXPECT_EQ(f.gres, std::vector<int64_t>{16});
  f.Subtract(g, a);
  EXPECT_EQ(f.cpus, 11);
  EXPECT_EQ(f.sole_user, -2);  // Subtract leaves the sharing fields alone
}

}  // namespace
}  // namespace berth::core
