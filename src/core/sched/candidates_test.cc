#include "core/sched/candidates.h"

#include <gtest/gtest.h>

#include <functional>
#include <string>
#include <utility>
#include <vector>

#include "core/model/constraint.h"
#include "core/testing/builders.h"

namespace berth::core {
namespace {

using testing::MakeCluster;
using testing::MakeJob;

// Runs a job of `user` on `node` holding the given resources (a hand-made plan).
void Occupy(ClusterState& cs, const char* node, int32_t cpus, uint64_t gpus = 0, int64_t mem = 0,
            const char* user = "other", std::vector<NamedCount> gres = {},
            ExclusiveMode exclusive = ExclusiveMode::kNo) {
  JobId id = *cs.Submit(MakeJob().User(user).Exclusive(exclusive).Obj(), nullptr, 0);
  Plan plan;
  PlannedStart s;
  s.job = id;
  s.partition = cs.partitions()[0].spec.name;
  s.alloc.nodes.push_back({*cs.FindNode(node), cpus, mem, gpus, 1, std::move(gres), {}});
  s.time_limit = 3600;
  plan.starts.push_back(s);
  ASSERT_EQ(cs.Apply(plan, 0).started.size(), 1u) << node;
}

JobSpec WithConstraint(JobSpec s, const char* text) {
  s.constraint = *Constraint::Parse(text);
  return s;
}

std::string Explain(const ClusterState& cs, const JobSpec& spec, Duration limit = 3600) {
  ClusterState copy = cs;
  Result<JobId> id = copy.Submit(spec, nullptr, 0);
  EXPECT_TRUE(id.ok()) << id.status().ToString();
  if (!id.ok()) return "";
  PassState pass(copy, 0);
  return ExplainNoFit(pass, *copy.FindEntry(*id), 0, limit);
}

// ---- The detail of docs/scheduling.md: 16 nodes, counted by the first reason each rejects.
// plain01-04: no feature ib. ib01-03: drained. ib04-12: 5 of 8 GPUs busy (3 free).
TEST(ExplainNoFitTest, CountsNodesByFirstCause) {
  ClusterState cs = MakeCluster()
                        .Nodes("plain", 4, 64, 512000, 8, "h100")
                        .Nodes("ib", 12, 64, 512000, 8, "h100", {"ib"})
                        .Build();
  for (int i = 1; i <= 3; ++i) {
    ASSERT_TRUE(cs.SetNodeDrain(*cs.FindNode("ib0" + std::to_string(i)), true, "x", 0).ok());
  }
  for (int i = 4; i <= 12; ++i) {
    char name[8];
    std::snprintf(name, sizeof(name), "ib%02d", i);
    Occupy(cs, name, 1, 0x1F);
  }
  JobSpec job = WithConstraint(MakeJob().GpusPerNode(4, "h100").Obj(), "ib");
  EXPECT_EQ(Explain(cs, job), "16 nodes: 9 lack 4 free h100 GPUs, 4 lack feature ib, 3 drained");
}

// ---- One row per cause. Partition main: n01 (16 CPUs, 16 GiB, 4 h100, 4 "shard", feature ib)
// and n02 (16 CPUs, 16 GiB, 2 a100, feature eth). The job's user is alice.
struct CauseCase {
  const char* name;
  JobSpec spec;
  std::function<void(ClusterState&)> setup;
  const char* want;
};

ClusterState TwoNodes() {
  NodeSpec n1;
  n1.name = "n01";
  n1.cpus = 16;
  n1.mem_mib = 16384;
  n1.gpus.assign(4, "h100");
  n1.gres = {{"shard", 4}};
  n1.features = {"ib"};
  NodeSpec n2;
  n2.name = "n02";
  n2.cpus = 16;
  n2.mem_mib = 16384;
  n2.gpus.assign(2, "a100");
  n2.features = {"eth"};
  return MakeCluster().Node(n1).Node(n2).Build();
}

void Drain(ClusterState& cs, const char* node) {
  ASSERT_TRUE(cs.SetNodeDrain(*cs.FindNode(node), true, "x", 0).ok());
}

class ExplainCauseTest : public ::testing::TestWithParam<CauseCase> {};

TEST_P(ExplainCauseTest, Detail) {
  const CauseCase& c = GetParam();
  ClusterState cs = TwoNodes();
  c.setup(cs);
  EXPECT_EQ(Explain(cs, c.spec), c.want) << c.name;
}

INSTANTIATE_TEST_SUITE_P(
    Table, ExplainCauseTest,
    ::testing::Values(
        CauseCase{"down and drained", MakeJob().Obj(),
                  [](ClusterState& cs) {
                    Drain(cs, "n01");
                    ASSERT_TRUE(cs.SetNodeHealth(1, NodeHealth::kDown, "dead", 0).ok());
                  },
                  "2 nodes: 1 down, 1 drained"},
        // Ties keep the causes in alphabetical order.
        CauseCase{"feature", WithConstraint(MakeJob().Obj(), "ib"),
                  [](ClusterState& cs) { Occupy(cs, "n01", 16); },
                  "2 nodes: 1 lack 1 free CPU, 1 lack feature ib"},
        CauseCase{"excluded", MakeJob().Exclude({"n02"}).Obj(),
                  [](ClusterState& cs) { Occupy(cs, "n01", 16); },
                  "2 nodes: 1 excluded, 1 lack 1 free CPU"},
        CauseCase{"GPU type", MakeJob().GpusPerNode(1, "h100").Obj(),
                  [](ClusterState& cs) { Occupy(cs, "n01", 1, 0xF); },
                  "2 nodes: 1 have no h100 GPUs, 1 lack 1 free h100 GPU"},
        CauseCase{"GPU count", MakeJob().GpusPerNode(3).Obj(),
                  [](ClusterState& cs) { Occupy(cs, "n01", 1, 0x3); },
                  "2 nodes: 1 have fewer than 3 GPUs, 1 lack 3 free GPUs"},
        CauseCase{"CPUs", MakeJob().CpusPerTask(8).Obj(),
                  [](ClusterState& cs) {
                    Occupy(cs, "n01", 12);
                    Occupy(cs, "n02", 9);
                  },
                  "2 nodes: 2 lack 8 free CPUs"},
        CauseCase{"not idle", MakeJob().Exclusive().Obj(),
                  [](ClusterState& cs) {
                    Occupy(cs, "n01", 1);
                    Drain(cs, "n02");
                  },
                  "2 nodes: 1 drained, 1 not idle"},
        // Memory held by the job's own user (alice), so that node sharing is not in question.
        CauseCase{"memory", MakeJob().Mem(4096).Obj(),
                  [](ClusterState& cs) {
                    Occupy(cs, "n01", 1, 0, 13000, "alice");
                    Drain(cs, "n02");
                  },
                  "2 nodes: 1 drained, 1 lack 4G free memory"},
        CauseCase{"memory not in whole GiB", MakeJob().Mem(4000).Obj(),
                  [](ClusterState& cs) {
                    Occupy(cs, "n01", 1, 0, 13000, "alice");
                    Drain(cs, "n02");
                  },
                  "2 nodes: 1 drained, 1 lack 4000M free memory"},
        CauseCase{"whole memory", MakeJob().Mem(0).Obj(),
                  [](ClusterState& cs) {
                    Occupy(cs, "n01", 1, 0, 1, "alice");
                    Drain(cs, "n02");
                  },
                  "2 nodes: 1 drained, 1 lack 16G free memory"},
        // n02 has no "shard" at all: it can never host the job.
        CauseCase{"gres", MakeJob().Gres("shard", 3).Obj(),
                  [](ClusterState& cs) {
                    Occupy(cs, "n01", 1, 0, 0, "alice", {{"shard", 2}});
                  },
                  "2 nodes: 1 lack 3 free shard, 1 too small"},
        CauseCase{"another user's --exclusive=user job", MakeJob().Obj(),
                  [](ClusterState& cs) {
                    Occupy(cs, "n01", 1, 0, 0, "bob", {}, ExclusiveMode::kUser);
                    Drain(cs, "n02");
                  },
                  "2 nodes: 1 drained, 1 held exclusively by another user"},
        // -w: only the required nodes are explained.
        CauseCase{"required node", MakeJob().NodeList({"n02"}).Obj(),
                  [](ClusterState& cs) { Drain(cs, "n02"); }, "1 required node: 1 drained"},
        CauseCase{"required nodes", MakeJob().NodeList({"n01", "n02"}).Nodes(2).Obj(),
                  [](ClusterState& cs) {
                    Drain(cs, "n02");
                    Occupy(cs, "n01", 16);
                  },
                  "2 required nodes: 1 drained, 1 lack 1 free CPU"}));

// A node that could take the job now but not for its whole time limit (a reservation starts
// inside the window), and nodes that fit but are too few for a multi-node job.
TEST(ExplainNoFitTest, ReservedAndTooFewTogether) {
  ClusterState cs = MakeCluster().Nodes("n", 3, 8, 8000).Build();
  Drain(cs, "n03");
  JobId id = *cs.Submit(MakeJob().Nodes(3).Time(3600).Obj(), nullptr, 0);
  const JobEntry& e = *cs.FindEntry(id);
  PassState pass(cs, 0);
  EXPECT_EQ(ExplainNoFit(pass, e, 0, 3600), "3 nodes: 2 fit, but too few together, 1 drained");
  // Every CPU of n02 reserved from t = 100 to 1100: inside [0, 3600), not inside [0, 100).
  Reservation r;
  r.job = 999;
  r.start = 100;
  r.end = 1100;
  r.alloc.nodes.push_back({1, 8, 0, 0, 1, {}, {}});
  pass.Reserve(r);
  EXPECT_EQ(ExplainNoFit(pass, e, 0, 3600),
            "3 nodes: 1 drained, 1 fit, but too few together, 1 reserved for higher-priority jobs");
  EXPECT_EQ(ExplainNoFit(pass, e, 0, 100), "3 nodes: 2 fit, but too few together, 1 drained");
}

TEST(ExplainNoFitTest, PoweredDownAndSingular) {
  NodeSpec cloud;
  cloud.name = "cloud01";
  cloud.cpus = 8;
  cloud.mem_mib = 8000;
  cloud.cloud = true;
  ClusterState cs = MakeCluster().Nodes("n", 1, 8, 8000).Node(cloud).Build();
  Occupy(cs, "n01", 8);
  EXPECT_EQ(Explain(cs, MakeJob().Obj()), "2 nodes: 1 lack 1 free CPU, 1 powered down");
  ClusterState one = MakeCluster().Nodes("n", 1, 8, 8000).Build();
  Occupy(one, "n01", 8);
  EXPECT_EQ(Explain(one, MakeJob().Obj()), "1 node: 1 lack 1 free CPU");
}

// Memory held by another user's ordinary job: node sharing is allowed (neither job is
// --exclusive=user), so the cause is the memory. n01 has 16384 - 13000 = 3384 MiB free.
TEST(ExplainNoFitTest, MemoryHeldByAnotherUsersSharedJob) {
  ClusterState cs = TwoNodes();
  Occupy(cs, "n01", 1, 0, 13000, "bob");
  Drain(cs, "n02");
  EXPECT_EQ(Explain(cs, MakeJob().Mem(4096).Obj()), "2 nodes: 1 drained, 1 lack 4G free memory");
}

// The default memory is DefMemPerCPU when set (3000 MiB per CPU here), not the node's share
// (1000). n01 has 4000 - 2000 = 2000 MiB free; the 1-CPU job needs 3000.
TEST(ExplainNoFitTest, DefaultMemoryPerCpu) {
  ClusterSpec spec = MakeCluster().Nodes("n", 1, 4, 4000).Spec();
  spec.def_mem_per_cpu_mib = 3000;
  ClusterState cs = *ClusterState::Create(spec);
  Occupy(cs, "n01", 1, 0, 2000, "alice");
  EXPECT_EQ(Explain(cs, MakeJob().Obj()), "1 node: 1 lack 3000M free memory");
}

// ---- CandidateCache: static sets per shape, usable part refreshed when nodes change.
TEST(CandidateCacheTest, StaticFilters) {
  ClusterState cs = MakeCluster()
                        .Nodes("ib", 2, 8, 8000, 0, "", {"ib", "rack1"})
                        .Nodes("eth", 1, 8, 8000, 0, "", {"rack2"})
                        .Nodes("big", 1, 32, 32000, 0, "", {"rack2"})
                        .Build();
  CandidateCache cache;
  auto nodes_of = [&](const JobSpec& spec) {
    JobId id = *cs.Submit(spec, nullptr, 0);
    const CandidateSet& set = cache.Get(cs, *cs.FindEntry(id), 0);
    std::vector<uint32_t> out;
    set.static_nodes.ForEach([&](size_t i) {
      out.push_back(static_cast<uint32_t>(i));
      return true;
    });
    return out;
  };
  EXPECT_EQ(nodes_of(MakeJob().Obj()), (std::vector<uint32_t>{0, 1, 2, 3}));
  EXPECT_EQ(nodes_of(WithConstraint(MakeJob().Obj(), "ib")), (std::vector<uint32_t>{0, 1}));
  EXPECT_EQ(nodes_of(WithConstraint(MakeJob().Exclude({"ib01"}).Obj(), "ib")),
            std::vector<uint32_t>{1});
  EXPECT_EQ(nodes_of(MakeJob().CpusPerTask(9).Obj()), std::vector<uint32_t>{3});
  // Matching OR: one node set per alternative, within the static set.
  JobId alt = *cs.Submit(WithConstraint(MakeJob().Obj(), "[rack1|rack2]"), nullptr, 0);
  const CandidateSet& set = cache.Get(cs, *cs.FindEntry(alt), 0);
  ASSERT_EQ(set.alternatives.size(), 2u);
  EXPECT_EQ(set.alternatives[0].Count(), 2u);
  EXPECT_TRUE(set.alternatives[0].Test(0) && set.alternatives[0].Test(1));
  EXPECT_EQ(set.alternatives[1].Count(), 2u);
  EXPECT_TRUE(set.alternatives[1].Test(2) && set.alternatives[1].Test(3));
}

TEST(CandidateCacheTest, RefreshesWhenNodesChange) {
  ClusterState cs = MakeCluster().Nodes("n", 4, 8, 8000).Build();
  JobId a = *cs.Submit(MakeJob().Obj(), nullptr, 0);
  JobId b = *cs.Submit(MakeJob().CpusPerTask(2).Obj(), nullptr, 0);
  JobId same = *cs.Submit(MakeJob().Obj(), nullptr, 0);
  CandidateCache cache;
  EXPECT_EQ(cache.Get(cs, *cs.FindEntry(a), 0).usable.Count(), 4u);
  EXPECT_EQ(cache.Get(cs, *cs.FindEntry(b), 0).usable.Count(), 4u);
  // Jobs of one shape share one set.
  EXPECT_EQ(&cache.Get(cs, *cs.FindEntry(a), 0), &cache.Get(cs, *cs.FindEntry(same), 0));

  // Drained: no longer usable, still a static candidate; for every cached shape.
  ASSERT_TRUE(cs.SetNodeDrain(1, true, "x", 0).ok());
  for (JobId id : {a, b}) {
    const CandidateSet& s = cache.Get(cs, *cs.FindEntry(id), 0);
    EXPECT_EQ(s.static_nodes.Count(), 4u);
    EXPECT_EQ(s.usable.Count(), 3u);
    EXPECT_FALSE(s.usable.Test(1));
  }
  ASSERT_TRUE(cs.SetNodeHealth(2, NodeHealth::kDown, "dead", 0).ok());
  EXPECT_EQ(cache.Get(cs, *cs.FindEntry(b), 0).usable.Count(), 2u);
  ASSERT_TRUE(cs.SetNodeDrain(1, false, "", 0).ok());
  ASSERT_TRUE(cs.SetNodeHealth(2, NodeHealth::kUp, "", 0).ok());
  EXPECT_EQ(cache.Get(cs, *cs.FindEntry(a), 0).usable.Count(), 4u);

  // Added to the partition: a candidate at once, in sets sized for the new node count.
  NodeSpec n5;
  n5.name = "n05";
  n5.cpus = 8;
  n5.mem_mib = 8000;
  ASSERT_TRUE(cs.AddNode(n5, {"main"}, 0).ok());
  for (JobId id : {a, b}) {
    const CandidateSet& s = cache.Get(cs, *cs.FindEntry(id), 0);
    EXPECT_EQ(s.static_nodes.size(), 5u);
    EXPECT_EQ(s.static_nodes.Count(), 5u);
    EXPECT_TRUE(s.usable.Test(4));
  }
  // Drained after the rebuild: refreshed again.
  ASSERT_TRUE(cs.SetNodeDrain(4, true, "x", 0).ok());
  EXPECT_FALSE(cache.Get(cs, *cs.FindEntry(a), 0).usable.Test(4));
}

}  // namespace
}  // namespace berth::core
