#include "core/sched/placement.h"

#include <gtest/gtest.h>

#include <string>
#include <utility>
#include <vector>

#include "core/sched/pass_state.h"
#include "core/testing/builders.h"

namespace berth::core {
namespace {

using testing::MakeCluster;
using testing::MakeJob;

// Runs a job on `node` holding `cpus` CPUs and the GPU devices in `gpus` (a hand-made plan).
void Occupy(ClusterState& cs, const char* node, int32_t cpus, uint64_t gpus = 0) {
  JobId id = *cs.Submit(MakeJob().User("other", 99).Obj(), nullptr, 0);
  Plan plan;
  PlannedStart s;
  s.job = id;
  s.partition = cs.partitions()[0].spec.name;
  NodeAllocation a;
  a.node = *cs.FindNode(node);
  a.cpus = cpus;
  a.gpu_mask = gpus;
  a.tasks = 1;
  s.alloc.nodes.push_back(a);
  s.time_limit = 3600;
  plan.starts.push_back(s);
  ASSERT_EQ(cs.Apply(plan, 0).started.size(), 1u) << node;
}

struct Options {
  PlacementPolicy policy = PlacementPolicy::kPack;
  bool topology_aware = true;
  const std::vector<uint32_t>* required = nullptr;
  const std::vector<Bitset>* alternatives = nullptr;
  bool use_index = true;  // the pass's free-GPU buckets and free-CPU set
};

// Places `spec` (shaped for the first partition) on every usable node as the pass sees them now;
// returns the chosen node names in allocation order (empty when it cannot be placed).
std::vector<std::string> PlaceJob(const ClusterState& cs, const JobSpec& spec,
                                  const Options& o = {}, Allocation* alloc_out = nullptr) {
  Result<JobShape> shape = cs.ComputeShape(spec, cs.partitions()[0]);
  EXPECT_TRUE(shape.ok()) << shape.status().ToString();
  PassState pass(cs, 0);
  PlaceRequest req;
  req.shape = &*shape;
  req.user = 0;
  req.required = o.required;
  req.alternatives = o.alternatives;
  req.policy = o.policy;
  req.topology_aware = o.topology_aware;
  NodeIndex index;
  if (o.use_index) index = NodeIndex{&pass.gpu_buckets(), &pass.cpu_free()};
  FreeFn free_of = [&](uint32_t n) { return pass.FreeNow(n); };
  Allocation alloc;
  alloc.nodes.push_back({});  // must be cleared on failure
  bool ok = Place(cs, req, cs.usable_nodes(), index, free_of, &alloc);
  std::vector<std::string> names;
  for (const NodeAllocation& a : alloc.nodes) names.push_back(cs.node(a.node).spec.name);
  EXPECT_EQ(ok, !names.empty());
  if (!ok) {
    EXPECT_TRUE(alloc.nodes.empty());
  }
  if (alloc_out) *alloc_out = alloc;
  return names;
}

using Names = std::vector<std::string>;

NodeSpec WeightedNode(const std::string& name, int32_t weight) {
  NodeSpec n;
  n.name = name;
  n.cpus = 8;
  n.mem_mib = 8000;
  n.weight = weight;
  return n;
}

// ---- Weight classes: lighter nodes first, whatever their index.
TEST(PlacementTest, LighterWeightFirst) {
  ClusterState cs = MakeCluster()
                        .Node(WeightedNode("heavy01", 10))
                        .Node(WeightedNode("heavy02", 10))
                        .Node(WeightedNode("light01", 1))
                        .Node(WeightedNode("light02", 1))
                        .Build();
  EXPECT_EQ(PlaceJob(cs, MakeJob().Obj()), Names{"light01"});
  EXPECT_EQ(PlaceJob(cs, MakeJob().Nodes(3).Obj()), (Names{"light01", "light02", "heavy01"}));
  // A full light node: the other light one, still before the heavy ones.
  Occupy(cs, "light01", 8);
  EXPECT_EQ(PlaceJob(cs, MakeJob().Obj()), Names{"light02"});
}

// Spread orders by free resources within a weight class; the lighter class still comes first.
// light01 has 4 of 8 CPUs free; heavy01 is empty. Expected light01 (docs/scheduling.md: "per node
// weight class (lighter first): ... spread: the most free GPUs, then the most free CPUs").
TEST(PlacementTest, SpreadKeepsWeightClassesFirst) {
  ClusterState cs =
      MakeCluster().Node(WeightedNode("heavy01", 10)).Node(WeightedNode("light01", 1)).Build();
  Occupy(cs, "light01", 4);
  Options spread;
  spread.policy = PlacementPolicy::kSpread;
  EXPECT_EQ(PlaceJob(cs, MakeJob().Obj(), spread), Names{"light01"});
}

// ---- Pack: fewest free GPUs that still fit. g01 8 free, g02 2 free (devices 0-5 busy),
// g03 5 free (devices 0-2 busy).
class PackTest : public ::testing::Test {
 protected:
  void SetUp() override {
    Occupy(cs_, "g02", 1, 0x3F);
    Occupy(cs_, "g03", 1, 0x07);
  }
  ClusterState cs_ = MakeCluster().Nodes("g", 3, 32, 256000, 8, "h100").Build();
};

TEST_F(PackTest, FewestFreeGpusThatFit) {
  struct Row {
    int32_t gpus;
    const char* node;
    uint64_t mask;
  } rows[] = {
      {1, "g02", 0x40},  // 2 free: the fullest node; its lowest free device is 6
      {2, "g02", 0xC0},  // exactly 2 free
      {3, "g03", 0x38},  // 5 free: devices 3, 4, 5
      {5, "g03", 0xF8},  // exactly 5
      {6, "g01", 0x3F},  // only the empty node
      {8, "g01", 0xFF},
  };
  for (const Row& r : rows) {
    Allocation a;
    EXPECT_EQ(PlaceJob(cs_, MakeJob().GpusPerNode(r.gpus).Obj(), {}, &a), Names{r.node})
        << r.gpus << " GPUs";
    if (!a.nodes.empty()) {
      EXPECT_EQ(a.nodes[0].gpu_mask, r.mask) << r.gpus << " GPUs";
    }
  }
  EXPECT_TRUE(PlaceJob(cs_, MakeJob().GpusPerNode(9).Obj()).empty());
}

TEST_F(PackTest, MultiNodeGpuJobs) {
  // 2 nodes x 2 GPUs: the two fullest that fit, in bucket order.
  EXPECT_EQ(PlaceJob(cs_, MakeJob().Nodes(2).GpusPerNode(2).Obj()), (Names{"g02", "g03"}));
  EXPECT_EQ(PlaceJob(cs_, MakeJob().Nodes(2).GpusPerNode(4).Obj()), (Names{"g03", "g01"}));
  // All or nothing: two nodes with 6 free GPUs do not exist.
  EXPECT_TRUE(PlaceJob(cs_, MakeJob().Nodes(2).GpusPerNode(6).Obj()).empty());
}

TEST_F(PackTest, WithoutAnIndexNodeOrder) {
  Options plain;
  plain.use_index = false;
  EXPECT_EQ(PlaceJob(cs_, MakeJob().GpusPerNode(1).Obj(), plain), Names{"g01"});
}

TEST(PlacementTest, CpuJobsGoToNodesWithoutFreeGpus) {
  ClusterState cs =
      MakeCluster().Nodes("g", 1, 32, 256000, 8, "h100").Nodes("c", 1, 32, 256000).Build();
  EXPECT_EQ(PlaceJob(cs, MakeJob().CpusPerTask(4).Obj()), Names{"c01"});
  // A GPU node whose GPUs are all busy has no free GPUs either: node order between the two.
  Occupy(cs, "g01", 1, 0xFF);
  EXPECT_EQ(PlaceJob(cs, MakeJob().CpusPerTask(4).Obj()), Names{"g01"});
  // The CPU node full: the CPU job takes a GPU node after all.
  ClusterState cs2 =
      MakeCluster().Nodes("g", 1, 32, 256000, 8, "h100").Nodes("c", 1, 32, 256000).Build();
  Occupy(cs2, "c01", 32);
  EXPECT_EQ(PlaceJob(cs2, MakeJob().CpusPerTask(4).Obj()), Names{"g01"});
}

// ---- Spread: the most free GPUs, then the most free CPUs.
TEST_F(PackTest, SpreadTakesTheEmptiest) {
  Options spread;
  spread.policy = PlacementPolicy::kSpread;
  Allocation a;
  EXPECT_EQ(PlaceJob(cs_, MakeJob().GpusPerNode(1).Obj(), spread, &a), Names{"g01"});
  EXPECT_EQ(a.nodes[0].gpu_mask, 0x01u);
  // 8, 5, 2 free GPUs.
  EXPECT_EQ(PlaceJob(cs_, MakeJob().Nodes(2).GpusPerNode(1).Obj(), spread), (Names{"g01", "g03"}));
  EXPECT_EQ(PlaceJob(cs_, MakeJob().Nodes(3).GpusPerNode(2).Obj(), spread),
            (Names{"g01", "g03", "g02"}));
}

TEST(PlacementTest, SpreadByFreeCpus) {
  ClusterState cs = MakeCluster().Nodes("c", 3, 8, 8000).Build();
  Occupy(cs, "c01", 6);  // 2 free
  Occupy(cs, "c03", 3);  // 5 free; c02 has 8
  Options spread;
  spread.policy = PlacementPolicy::kSpread;
  EXPECT_EQ(PlaceJob(cs, MakeJob().Obj(), spread), Names{"c02"});
  EXPECT_EQ(PlaceJob(cs, MakeJob().Nodes(3).Obj(), spread), (Names{"c02", "c03", "c01"}));
  // Pack, for comparison: node order among CPU nodes.
  EXPECT_EQ(PlaceJob(cs, MakeJob().Obj()), Names{"c01"});
}

// ---- Node counts: ranges grow to what fits; multi-node jobs are all or nothing.
TEST(PlacementTest, NodeRangesAndAllOrNothing) {
  ClusterState cs = MakeCluster().Nodes("n", 5, 8, 8000).Build();
  EXPECT_EQ(PlaceJob(cs, MakeJob().Nodes(2, 4).Obj()).size(), 4u);  // up to max
  Occupy(cs, "n01", 8);
  Occupy(cs, "n02", 8);
  EXPECT_EQ(PlaceJob(cs, MakeJob().Nodes(2, 4).Obj()), (Names{"n03", "n04", "n05"}));
  EXPECT_EQ(PlaceJob(cs, MakeJob().Nodes(3).Obj()), (Names{"n03", "n04", "n05"}));
  EXPECT_TRUE(PlaceJob(cs, MakeJob().Nodes(4).Obj()).empty());
  EXPECT_TRUE(PlaceJob(cs, MakeJob().Nodes(4, 5).Obj()).empty());
  // Exclusive: idle nodes only.
  Occupy(cs, "n03", 1);
  EXPECT_EQ(PlaceJob(cs, MakeJob().Nodes(2).Exclusive().Obj()), (Names{"n04", "n05"}));
  EXPECT_TRUE(PlaceJob(cs, MakeJob().Nodes(3).Exclusive().Obj()).empty());
}

// ---- -w: required nodes come first and must all fit.
TEST(PlacementTest, RequiredNodes) {
  ClusterState cs = MakeCluster().Nodes("n", 4, 8, 8000).Build();
  std::vector<uint32_t> n03{2};
  Options o;
  o.required = &n03;
  EXPECT_EQ(PlaceJob(cs, MakeJob().Nodes(2).Obj(), o), (Names{"n03", "n01"}));
  EXPECT_EQ(PlaceJob(cs, MakeJob().Obj(), o), Names{"n03"});
  std::vector<uint32_t> two{3, 1};
  o.required = &two;
  EXPECT_EQ(PlaceJob(cs, MakeJob().Nodes(2).Obj(), o), (Names{"n04", "n02"}));
  EXPECT_EQ(PlaceJob(cs, MakeJob().Nodes(3).Obj(), o), (Names{"n04", "n02", "n01"}));
  // More required nodes than the job may have.
  EXPECT_TRUE(PlaceJob(cs, MakeJob().Obj(), o).empty());
  // A required node that is full: nothing, although other nodes are free.
  Occupy(cs, "n02", 8);
  EXPECT_TRUE(PlaceJob(cs, MakeJob().Nodes(2).Obj(), o).empty());
  // A required node outside the candidates (drained): nothing.
  ASSERT_TRUE(cs.SetNodeDrain(2, true, "test", 0).ok());
  o.required = &n03;
  EXPECT_TRUE(PlaceJob(cs, MakeJob().Obj(), o).empty());
}

// ---- Matching OR ([rack1|rack2]): every node from one alternative, the first that works.
TEST(PlacementTest, MatchingOrAlternatives) {
  ClusterState cs = MakeCluster()
                        .Nodes("r1n", 2, 8, 8000, 0, "", {"rack1"})
                        .Nodes("r2n", 2, 8, 8000, 0, "", {"rack2"})
                        .Build();
  Bitset rack1(4), rack2(4);
  rack1.Set(0);
  rack1.Set(1);
  rack2.Set(2);
  rack2.Set(3);
  std::vector<Bitset> alts{rack1, rack2};
  Options o;
  o.alternatives = &alts;
  EXPECT_EQ(PlaceJob(cs, MakeJob().Nodes(2).Obj(), o), (Names{"r1n01", "r1n02"}));
  // rack1 has one free node left: the job does not mix racks, it takes rack2.
  Occupy(cs, "r1n02", 8);
  EXPECT_EQ(PlaceJob(cs, MakeJob().Nodes(2).Obj(), o), (Names{"r2n01", "r2n02"}));
  EXPECT_EQ(PlaceJob(cs, MakeJob().Obj(), o), Names{"r1n01"});
  EXPECT_TRUE(PlaceJob(cs, MakeJob().Nodes(3).Obj(), o).empty());
}

// ---- Topology: the smallest leaf switch that holds the job, then the smallest block.
TEST(PlacementTest, TightestSwitch) {
  // sw1: a01-a03; sw2: b01-b02; both in block1.
  ClusterState cs = MakeCluster()
                        .Nodes("a", 3, 8, 8000, 0, "", {}, {"block1", "sw1"})
                        .Nodes("b", 2, 8, 8000, 0, "", {}, {"block1", "sw2"})
                        .Build();
  EXPECT_EQ(PlaceJob(cs, MakeJob().Nodes(2).Obj()), (Names{"b01", "b02"}));
  EXPECT_EQ(PlaceJob(cs, MakeJob().Nodes(3).Obj()), (Names{"a01", "a02", "a03"}));
  // No switch holds 4: block1 does, in node order.
  EXPECT_EQ(PlaceJob(cs, MakeJob().Nodes(4).Obj()), (Names{"a01", "a02", "a03", "b01"}));
  // Single-node jobs ignore topology.
  EXPECT_EQ(PlaceJob(cs, MakeJob().Obj()), Names{"a01"});
  Options flat;
  flat.topology_aware = false;
  EXPECT_EQ(PlaceJob(cs, MakeJob().Nodes(2).Obj(), flat), (Names{"a01", "a02"}));
  // Only fitting nodes count: with b01 busy, sw2 holds one; sw1 (3) is the tightest.
  Occupy(cs, "b01", 8);
  EXPECT_EQ(PlaceJob(cs, MakeJob().Nodes(2).Obj()), (Names{"a01", "a02"}));
}

TEST(PlacementTest, TightestBlock) {
  // block2 (listed first): c01-c03 on sw3, e01-e03 on sw4. block1: d01-d02 on sw1, f01-f02 on
  // sw2.
  ClusterState topo = MakeCluster()
                          .Nodes("c", 3, 8, 8000, 0, "", {}, {"block2", "sw3"})
                          .Nodes("e", 3, 8, 8000, 0, "", {}, {"block2", "sw4"})
                          .Nodes("d", 2, 8, 8000, 0, "", {}, {"block1", "sw1"})
                          .Nodes("f", 2, 8, 8000, 0, "", {}, {"block1", "sw2"})
                          .Build();
  // No switch holds 4; block1 holds exactly 4, block2 6: block1.
  EXPECT_EQ(PlaceJob(topo, MakeJob().Nodes(4).Obj()), (Names{"d01", "d02", "f01", "f02"}));
  // 5: only block2.
  EXPECT_EQ(PlaceJob(topo, MakeJob().Nodes(5).Obj()), (Names{"c01", "c02", "c03", "e01", "e02"}));
  // 3: sw3 and sw4 tie at 3: the one met first (sw3).
  EXPECT_EQ(PlaceJob(topo, MakeJob().Nodes(3).Obj()), (Names{"c01", "c02", "c03"}));
  // 2: sw1 and sw2 hold exactly 2: sw1.
  EXPECT_EQ(PlaceJob(topo, MakeJob().Nodes(2).Obj()), (Names{"d01", "d02"}));
  // 7: no block holds 7; the first fitting nodes.
  EXPECT_EQ(PlaceJob(topo, MakeJob().Nodes(7).Obj()).size(), 7u);
}

// ---- Task mode: one node that holds all the tasks, else the most room first.
class TaskPlacementTest : public ::testing::Test {
 protected:
  void SetUp() override {
    Occupy(cs_, "n01", 4);  // 4 free
    Occupy(cs_, "n03", 5);  // 3 free; n02 has 8
  }
  ClusterState cs_ = MakeCluster().Nodes("n", 3, 8, 8000).Build();
};

TEST_F(TaskPlacementTest, Layouts) {
  struct Row {
    int32_t tasks;
    std::vector<std::pair<std::string, int32_t>> want;  // node, tasks
  } rows[] = {
      {3, {{"n01", 3}}},                           // the first node that holds them all
      {6, {{"n02", 6}}},                           // n01 cannot hold 6; n02 can
      {10, {{"n02", 8}, {"n01", 2}}},              // most room first: n02 8, then n01
      {12, {{"n02", 8}, {"n01", 4}}},              //
      {15, {{"n02", 8}, {"n01", 4}, {"n03", 3}}},  // every free CPU
      {16, {}},                                    // one too many
  };
  for (const Row& r : rows) {
    Allocation a;
    PlaceJob(cs_, MakeJob().Tasks(r.tasks).Obj(), {}, &a);
    std::vector<std::pair<std::string, int32_t>> got;
    for (const NodeAllocation& n : a.nodes) got.emplace_back(cs_.node(n.node).spec.name, n.tasks);
    EXPECT_EQ(got, r.want) << r.tasks << " tasks";
    for (const NodeAllocation& n : a.nodes) EXPECT_EQ(n.cpus, n.tasks) << r.tasks << " tasks";
  }
}

TEST_F(TaskPlacementTest, MaxNodes) {
  JobSpec spec = MakeJob().Tasks(12).Obj();
  spec.max_nodes = 2;
  EXPECT_EQ(PlaceJob(cs_, spec), (Names{"n02", "n01"}));
  spec.ntasks = 13;  // would need a third node
  EXPECT_TRUE(PlaceJob(cs_, spec).empty());
}

// Options with the same room keep the nodes' order, both for a node's worth of small tasks and
// for nodes of hundreds of CPUs (placement.cc orders the former by counting, the latter by a
// stable sort).
TEST(PlacementTest, TasksTiesKeepNodeOrderWhateverTheNodeSize) {
  for (int32_t cpus : {8, 512}) {
    SCOPED_TRACE(std::to_string(cpus) + " CPUs a node");
    ClusterState cs = MakeCluster().Nodes("n", 4, cpus, 1000 * cpus).Build();
    Occupy(cs, "n02", cpus / 2);  // free: all, half, all, all
    Allocation a;
    PlaceJob(cs, MakeJob().Tasks(2 * cpus + cpus / 2).Obj(), {}, &a);
    std::vector<std::pair<std::string, int32_t>> got;
    for (const NodeAllocation& n : a.nodes) got.emplace_back(cs.node(n.node).spec.name, n.tasks);
    const std::vector<std::pair<std::string, int32_t>> want{
        {"n01", cpus}, {"n03", cpus}, {"n04", cpus / 2}};
    EXPECT_EQ(got, want);
  }
}

}  // namespace
}  // namespace berth::core
