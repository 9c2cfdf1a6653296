#include "core/sched/backfill.h"

#include <gtest/gtest.h>

#include <optional>
#include <ostream>
#include <string>
#include <utility>
#include <vector>

#include "core/testing/builders.h"
#include "core/testing/random_cluster.h"

namespace berth::core {
namespace {

using testing::MakeCluster;
using testing::MakeJob;

// Starts a job at `start` on `node` holding `cpus` CPUs with time limit `limit` (so that its
// estimated end is start + limit), through a hand-made plan.
void RunJob(ClusterState& cs, const char* node, int32_t cpus, Time start, Duration limit) {
  JobId id = *cs.Submit(MakeJob().User("other", 99).Time(limit).Obj(), nullptr, start);
  Plan plan;
  PlannedStart s;
  s.job = id;
  s.partition = cs.partitions()[0].spec.name;
  s.alloc.nodes.push_back({*cs.FindNode(node), cpus, 0, 0, 1, {}, {}});
  s.time_limit = limit;
  plan.starts.push_back(s);
  ASSERT_EQ(cs.Apply(plan, start).started.size(), 1u) << node;
}

Allocation On(uint32_t node, int32_t cpus) {
  Allocation a;
  a.nodes.push_back({node, cpus, 0, 0, 1, {}, {}});
  return a;
}

struct Found {
  Time start = 0;
  std::vector<std::string> nodes;  // in allocation order
  int32_t tasks = 0;               // over all nodes
  friend bool operator==(const Found&, const Found&) = default;
};

void PrintTo(const Found& f, std::ostream* os) {
  *os << "start " << f.start << " on";
  for (const std::string& n : f.nodes) *os << " " << n;
  *os << " (" << f.tasks << " tasks)";
}

// The earliest start of pending job `id` for `duration` on every usable node.
std::optional<Found> Earliest(const PassState& pass, JobId id, Duration duration,
                              Time horizon_end = kInfinite,
                              const std::vector<uint32_t>* required = nullptr) {
  const ClusterState& cs = pass.cs();
  const JobEntry& e = *cs.FindEntry(id);
  PlaceRequest req;
  req.shape = &cs.shape(e, 0);
  req.user = e.user;
  req.required = required;
  std::optional<EarliestStart> r =
      FindEarliestStart(pass, req, cs.usable_nodes(), duration, horizon_end);
  if (!r) return std::nullopt;
  Found f;
  f.start = r->start;
  for (const NodeAllocation& a : r->alloc.nodes) {
    f.nodes.push_back(cs.node(a.node).spec.name);
    f.tasks += a.tasks;
  }
  return f;
}

Found At(Time start, std::vector<std::string> nodes, int32_t tasks) {
  return Found{start, std::move(nodes), tasks};
}

// ---- One node of 10 CPUs; A holds 6 until 100, B holds 3 until 200; 1 free. Now = 10.
TEST(BackfillTest, EarliestFromRunningJobsEnds) {
  ClusterState cs = MakeCluster().Nodes("n", 1, 10, 0).Build();
  RunJob(cs, "n01", 6, 0, 100);
  RunJob(cs, "n01", 3, 0, 200);
  struct Row {
    int32_t cpus;
    Time want;
  } rows[] = {
      {1, 10},    // free now
      {2, 100},   // 1 + A's 6 at 100
      {7, 100},   //
      {8, 200},   // everything, once B ends too
      {10, 200},  //
  };
  for (const Row& r : rows) {
    JobId id = *cs.Submit(MakeJob().CpusPerTask(r.cpus).Obj(), nullptr, 10);
    PassState pass(cs, 10);
    EXPECT_EQ(Earliest(pass, id, 50), At(r.want, {"n01"}, 1)) << r.cpus << " CPUs";
  }
}

// ---- Horizon: nothing later than horizon_end.
TEST(BackfillTest, HorizonCutsOff) {
  ClusterState cs = MakeCluster().Nodes("n", 1, 10, 0).Build();
  RunJob(cs, "n01", 10, 0, 100);
  JobId id = *cs.Submit(MakeJob().CpusPerTask(8).Obj(), nullptr, 0);
  PassState pass(cs, 10);
  EXPECT_EQ(Earliest(pass, id, 50, 100), At(100, {"n01"}, 1));  // at the horizon: still found
  EXPECT_EQ(Earliest(pass, id, 50, 99), std::nullopt);
  EXPECT_EQ(Earliest(pass, id, 50, 10), std::nullopt);
}

// ---- Reservations made earlier in the pass. One node of 10 CPUs, full until 50.
class ReservationTest : public ::testing::Test {
 protected:
  void SetUp() override { RunJob(cs_, "n01", 10, 0, 50); }
  JobId Job(int32_t cpus) { return *cs_.Submit(MakeJob().CpusPerTask(cpus).Obj(), nullptr, 0); }
  ClusterState cs_ = MakeCluster().Nodes("n", 1, 10, 0).Build();
};

TEST_F(ReservationTest, AJobThatEndsBeforeTheReservationFitsInFront) {
  JobId id = Job(5);
  PassState pass(cs_, 0);
  pass.Reserve({900, 100, 200, On(0, 10)});  // every CPU over [100, 200)
  // [50, 100) ends as the reservation starts.
  EXPECT_EQ(Earliest(pass, id, 50), At(50, {"n01"}, 1));
  // [50, 101) overlaps it: after the reservation ends.
  EXPECT_EQ(Earliest(pass, id, 51), At(200, {"n01"}, 1));
  EXPECT_EQ(Earliest(pass, id, 1000), At(200, {"n01"}, 1));
}

TEST_F(ReservationTest, AJobFitsBesideAPartialReservation) {
  JobId small = Job(4);
  JobId big = Job(5);
  PassState pass(cs_, 0);
  pass.Reserve({900, 100, 200, On(0, 6)});  // 6 of 10 CPUs over [100, 200): 4 stay free
  EXPECT_EQ(Earliest(pass, small, 1000), At(50, {"n01"}, 1));
  EXPECT_EQ(Earliest(pass, big, 1000), At(200, {"n01"}, 1));
  EXPECT_EQ(Earliest(pass, big, 50), At(50, {"n01"}, 1));
}

TEST_F(ReservationTest, SeveralReservations) {
  JobId id = Job(10);
  PassState pass(cs_, 0);
  pass.Reserve({900, 100, 200, On(0, 10)});
  pass.Reserve({901, 250, 400, On(0, 10)});
  EXPECT_EQ(Earliest(pass, id, 50), At(50, {"n01"}, 1));    // [50, 100)
  EXPECT_EQ(Earliest(pass, id, 60), At(400, {"n01"}, 1));   // [200, 260) hits the second
  EXPECT_EQ(Earliest(pass, id, 50), At(50, {"n01"}, 1));    // unchanged by the query
  EXPECT_EQ(Earliest(pass, id, 600), At(400, {"n01"}, 1));  //
  EXPECT_EQ(Earliest(pass, id, 600, 399), std::nullopt);
}

// ---- Several nodes of 8 CPUs: A holds n01 until 100, B n02 until 200; n03 is free. Now = 0.
class MultiNodeTest : public ::testing::Test {
 protected:
  void SetUp() override {
    RunJob(cs_, "n01", 8, 0, 100);
    RunJob(cs_, "n02", 8, 0, 200);
  }
  JobId Job(JobSpec spec) { return *cs_.Submit(std::move(spec), nullptr, 0); }
  ClusterState cs_ = MakeCluster().Nodes("n", 3, 8, 0).Build();
};

TEST_F(MultiNodeTest, NeedsSeveralNodesAtOnce) {
  JobId one = Job(MakeJob().Obj());
  JobId two = Job(MakeJob().Nodes(2).Obj());
  JobId three = Job(MakeJob().Nodes(3).Exclusive().Obj());
  PassState pass(cs_, 0);
  EXPECT_EQ(Earliest(pass, one, 500), At(0, {"n03"}, 1));
  EXPECT_EQ(Earliest(pass, two, 500), At(100, {"n01", "n03"}, 2));
  EXPECT_EQ(Earliest(pass, three, 500), At(200, {"n01", "n02", "n03"}, 3));
}

TEST_F(MultiNodeTest, RequiredNodes) {
  JobId id = Job(MakeJob().Obj());
  PassState pass(cs_, 0);
  std::vector<uint32_t> n02{1};
  EXPECT_EQ(Earliest(pass, id, 500, kInfinite, &n02), At(200, {"n02"}, 1));
}

TEST_F(MultiNodeTest, StartsOfThePassHoldTheirNodesUntilTheirEnd) {
  JobId filler = Job(MakeJob().CpusPerTask(8).Obj());
  JobId two = Job(MakeJob().Nodes(2).Obj());
  PassState pass(cs_, 0);
  pass.Start(*cs_.FindEntry(filler), filler, 150, On(2, 8));  // n03 until 150
  EXPECT_EQ(Earliest(pass, two, 500), At(150, {"n01", "n03"}, 2));
}

TEST_F(MultiNodeTest, ReservationOnOneOfTheNodes) {
  JobId two = Job(MakeJob().Nodes(2).Obj());
  PassState pass(cs_, 0);
  pass.Reserve({900, 120, 300, On(2, 8)});  // n03 over [120, 300)
  // At 100, n01 and n03 are free, but n03 only until 120: a 50 s job fits, a 100 s job waits
  // for n02 (200) and then takes n01 and n02.
  EXPECT_EQ(Earliest(pass, two, 20), At(100, {"n01", "n03"}, 2));
  EXPECT_EQ(Earliest(pass, two, 100), At(200, {"n01", "n02"}, 2));
}

// A reservation start enters the window only after a node was first found fitting: n01 is free
// now but reserved over [100, 200); n02 frees at 90. At 90 the window [90, 140) hits n01's
// reservation; both fit together from 200.
TEST(BackfillTest, ReservationEnteringTheWindowLater) {
  ClusterState cs = MakeCluster().Nodes("n", 2, 8, 0).Build();
  RunJob(cs, "n02", 8, 0, 90);
  JobId two = *cs.Submit(MakeJob().Nodes(2).Obj(), nullptr, 0);
  PassState pass(cs, 0);
  pass.Reserve({900, 100, 200, On(0, 8)});
  EXPECT_EQ(Earliest(pass, two, 50), At(200, {"n01", "n02"}, 2));
  EXPECT_EQ(Earliest(pass, two, 10), At(90, {"n01", "n02"}, 2));  // [90, 100) is before it
}

// Task mode: 12 one-CPU tasks need n03 and one more node.
TEST_F(MultiNodeTest, TaskMode) {
  JobId tasks = Job(MakeJob().Tasks(12).Obj());
  JobId eight = Job(MakeJob().Tasks(8).Obj());
  PassState pass(cs_, 0);
  std::optional<Found> f = Earliest(pass, tasks, 500);
  ASSERT_TRUE(f.has_value());
  EXPECT_EQ(f->start, 100);
  EXPECT_EQ(f->tasks, 12);
  EXPECT_EQ(f->nodes.size(), 2u);
  EXPECT_EQ(Earliest(pass, eight, 500), At(0, {"n03"}, 8));
}

// A running job past its time limit is expected to end at now + 1 (pass_state.h: EstimatedEnd):
// what it holds becomes free then. One node of 8 CPUs, held until 50 (limit), now = 100.
TEST(BackfillTest, OverdueJobFreesItsNodeAtNowPlusOne) {
  ClusterState cs = MakeCluster().Nodes("n", 1, 8, 0).Build();
  RunJob(cs, "n01", 8, 0, 50);
  JobId id = *cs.Submit(MakeJob().Obj(), nullptr, 100);
  PassState pass(cs, 100);
  EXPECT_EQ(Earliest(pass, id, 10), At(101, {"n01"}, 1));
}

// FreeCpusBound's memo follows starts on reserved nodes (PassState::AddBoundTerms): after any
// sequence of starts it gives what a pass that saw the same reservations and starts computes
// from scratch, for windows that end before, between and after the reservations' starts.
TEST(BackfillTest, WindowBoundFollowsStartsOnReservedNodes) {
  for (uint32_t seed = 1; seed <= 30; ++seed) {
    SCOPED_TRACE("seed " + std::to_string(seed));
    testing::Rng rng(seed);
    auto pick = [&](int lo, int hi) { return static_cast<int>(testing::Uniform(rng, lo, hi)); };
    ClusterState cs = MakeCluster().Nodes("n", 8, 8, 0).Build();
    for (int i = 0; i < 6; ++i) {
      std::string node = "n0" + std::to_string(pick(1, 8));
      int32_t cpus = pick(1, 3);
      if (cs.node(*cs.FindNode(node)).free_cpus >= cpus)
        RunJob(cs, node.c_str(), cpus, 0, pick(5, 300));
    }
    JobId job = *cs.Submit(MakeJob().Obj(), nullptr, 0);
    const JobEntry& e = *cs.FindEntry(job);
    std::vector<Reservation> resv;
    // Two reservations: the memo is updated through the starts; six: more deficits than it
    // updates (PassState::kBoundTermsKept), it is forgotten and recomputed.
    const int reservations = seed % 2 == 0 ? 2 : 6;
    for (int r = 0; r < reservations; ++r) {
      Allocation a;
      for (uint32_t n = 0; n < 8; ++n) {
        if (pick(0, 1) == 1) a.nodes.push_back({n, pick(1, 4), 0, 0, 1, {}, {}});
      }
      Time start = pick(20, 200);
      resv.push_back({static_cast<JobId>(900 + r), start, start + pick(10, 100), a});
    }
    const std::vector<Duration> windows{1, 15, 60, 150, 250, 1000};
    PassState pass(cs, 10);
    for (const Reservation& r : resv) pass.Reserve(r);
    for (Duration d : windows) pass.FreeCpusBound(d);  // the memo is filled
    std::vector<std::pair<Time, Allocation>> starts;
    for (int k = 0; k < 8; ++k) {
      uint32_t n = static_cast<uint32_t>(pick(0, 7));
      int32_t free = pass.FreeNow(n).cpus;
      if (free == 0) continue;
      Time end = pick(11, 400);
      starts.emplace_back(end, On(n, pick(1, free)));
      pass.Start(e, static_cast<JobId>(1000 + k), end, starts.back().second);
      PassState fresh(cs, 10);
      for (const Reservation& r : resv) fresh.Reserve(r);
      for (size_t i = 0; i < starts.size(); ++i) {
        fresh.Start(e, static_cast<JobId>(1000 + i), starts[i].first, starts[i].second);
      }
      for (Duration d : windows) {
        EXPECT_EQ(pass.FreeCpusBound(d), fresh.FreeCpusBound(d))
            << "window " << d << ", start " << k;
      }
    }
  }
}

// A job preempted in this pass holds more than its preemptor takes: the rest comes free at
// now + 1, which the sweep looks at (no running job or start ends then). n01 (16 CPUs): V holds
// 8 until 10,000, 8 are free; P preempts V and takes 2 of V's CPUs, so 6 come free at now + 1.
// n02 is held until 100. A job of 14 one-CPU tasks fits on n01 alone from now + 1; placing it
// from what the sweep kept for each node, or asking the pass again, gives the same.
TEST(BackfillTest, WhatPreemptedJobsLeaveIsFreeFromNowPlusOne) {
  ClusterState cs = MakeCluster().Nodes("n", 2, 16, 0).Build();
  RunJob(cs, "n01", 8, 0, 10000);
  RunJob(cs, "n02", 16, 0, 100);
  const JobEntry* victim = cs.FindEntry(*cs.running_ids().begin());
  ASSERT_EQ(victim->job.alloc.nodes.front().node, 0u);
  JobId p = *cs.Submit(MakeJob().Obj(), nullptr, 10);
  JobId id = *cs.Submit(MakeJob().Tasks(14).Obj(), nullptr, 10);
  PassState pass(cs, 10);
  Allocation two = On(0, 2);
  pass.StartAfterPreempting(*cs.FindEntry(p), p, 500, two, {victim});
  ASSERT_EQ(pass.FreeNow(0).cpus, 8);
  ASSERT_EQ(pass.FreeAt(0, 11).cpus, 14);
  const JobEntry& e = *cs.FindEntry(id);
  PlaceRequest req;
  req.shape = &cs.shape(e, 0);
  req.user = e.user;
  for (bool fresh : {false, true}) {
    SCOPED_TRACE(fresh ? "asking the pass again" : "from what the sweep kept");
    std::optional<EarliestStart> r =
        FindEarliestStart(pass, req, cs.usable_nodes(), 50, kInfinite, nullptr, nullptr, fresh);
    ASSERT_TRUE(r.has_value());
    EXPECT_EQ(r->start, 11);
    ASSERT_EQ(r->alloc.nodes.size(), 1u);
    EXPECT_EQ(r->alloc.nodes[0].node, 0u);
    EXPECT_EQ(r->alloc.nodes[0].tasks, 14);
  }
}

// StartsByEnd lists every start once, by end, however the starts and the calls interleave (it
// sorts only the starts made since the last call and merges them in).
TEST(BackfillTest, StartsByEndFollowsStartsMadeBetweenCalls) {
  for (uint32_t seed = 1; seed <= 20; ++seed) {
    SCOPED_TRACE("seed " + std::to_string(seed));
    testing::Rng rng(seed);
    auto pick = [&](int lo, int hi) { return static_cast<int>(testing::Uniform(rng, lo, hi)); };
    ClusterState cs = MakeCluster().Nodes("n", 4, 64, 0).Build();
    JobId job = *cs.Submit(MakeJob().Obj(), nullptr, 0);
    const JobEntry& e = *cs.FindEntry(job);
    PassState pass(cs, 10);
    for (int k = 0; k < 40; ++k) {
      pass.Start(e, static_cast<JobId>(1000 + k), pick(11, 30),
                 On(static_cast<uint32_t>(k % 4), 1));
      if (pick(0, 3) != 0) continue;
      const std::vector<std::pair<Time, int32_t>>& by_end = pass.StartsByEnd();
      ASSERT_EQ(by_end.size(), pass.starts().size());
      std::vector<bool> seen(by_end.size(), false);
      for (size_t i = 0; i < by_end.size(); ++i) {
        const auto& [end, index] = by_end[i];
        ASSERT_GE(index, 0);
        ASSERT_LT(static_cast<size_t>(index), seen.size());
        EXPECT_FALSE(seen[index]) << "start " << index << " listed twice";
        seen[index] = true;
        EXPECT_EQ(end, pass.starts()[index].end);
        if (i > 0) {
          EXPECT_LE(by_end[i - 1].first, end) << "at " << i;
        }
      }
    }
  }
}

}  // namespace
}  // namespace berth::core
