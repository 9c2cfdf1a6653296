#include "core/sched/priority.h"

#include <gtest/gtest.h>

#include <cmath>
#include <map>
#include <string>
#include <utility>

#include "core/sched/share_tree.h"
#include "core/state/usage.h"
#include "core/testing/builders.h"

namespace berth::core {
namespace {

using testing::MakeCluster;
using testing::MakeJob;
using testing::MakePartition;

constexpr double kLn2 = 0.6931471805599453;

// Spec builders (designated initializers would trip -Wmissing-field-initializers).
AccountSpec Acct(std::string name, int32_t shares = 1, std::string parent = kRootAccount) {
  AccountSpec a;
  a.name = std::move(name);
  a.shares = shares;
  a.parent = std::move(parent);
  return a;
}

UserSpec UserIn(std::string name, std::string account) {
  UserSpec u;
  u.name = std::move(name);
  u.account = std::move(account);
  return u;
}

QosSpec Qos(std::string name, int32_t priority, double usage_factor = 1.0) {
  QosSpec q;
  q.name = std::move(name);
  q.priority = priority;
  q.usage_factor = usage_factor;
  return q;
}

// Every weight zero, so that one factor can be switched on at a time.
SchedulerConfig NoWeights() {
  SchedulerConfig cfg = SchedulerConfig::Multifactor();
  cfg.weights.age = 0;
  cfg.weights.fairshare = 0;
  cfg.weights.job_size = 0;
  cfg.weights.partition = 0;
  cfg.weights.qos = 0;
  cfg.weights.tres.clear();
  return cfg;
}

// Submits `spec` at `now`; fails the test (and returns kNoJob) when refused.
JobId Submit(ClusterState& cs, JobSpec spec, Time now = 0) {
  Result<JobId> id = cs.Submit(std::move(spec), nullptr, now);
  EXPECT_TRUE(id.ok()) << id.status().ToString();
  return id.ok() ? *id : kNoJob;
}

PriorityBreakdown PriorityOf(const ClusterState& cs, JobId id, Time now,
                             const SchedulerConfig& cfg) {
  PriorityContext ctx = MakePriorityContext(cs, now, cfg);
  return ComputePriority(cs, *cs.FindEntry(id), now, cfg, ctx);
}

// Starts `spec` at `start` on `node` with `cpus` CPUs, through a hand-made plan.
JobId StartOn(ClusterState& cs, JobSpec spec, const char* node, int32_t cpus, Time start) {
  JobId id = Submit(cs, std::move(spec), start);
  Plan plan;
  PlannedStart s;
  s.job = id;
  s.partition = cs.partitions()[0].spec.name;
  NodeAllocation a;
  a.node = *cs.FindNode(node);
  a.cpus = cpus;
  a.tasks = 1;
  s.alloc.nodes.push_back(a);
  s.time_limit = 1000000;
  plan.starts.push_back(s);
  EXPECT_EQ(cs.Apply(plan, start).started.size(), 1u);
  return id;
}

void EndAt(ClusterState& cs, JobId id, Time end) {
  JobOutcome o;
  o.state = JobState::kCompleted;
  o.end_time = end;
  ASSERT_TRUE(cs.EndJob(id, o, false).ok());
}

int32_t AssocOf(const ClusterState& cs, const std::string& user) {
  for (const AssocInfo& a : cs.assocs()) {
    if (cs.users()[a.user] == user) return a.index;
  }
  ADD_FAILURE() << "no association for " << user;
  return 0;
}

// ---- Age: (now - eligible) / PriorityMaxAge, clamped to [0, 1], times the weight.
struct AgeCase {
  const char* name;
  Time begin;  // kNoTime: eligible at submit (t = 0)
  Time now;
  Duration max_age;
  double want;  // weight 1000
};

class AgeTest : public ::testing::TestWithParam<AgeCase> {};

TEST_P(AgeTest, Factor) {
  const AgeCase& c = GetParam();
  ClusterState cs = MakeCluster().Nodes("n", 1, 8, 8000).Build();
  JobSpec spec = MakeJob().Obj();
  spec.begin_time = c.begin;
  JobId id = Submit(cs, spec);
  SchedulerConfig cfg = NoWeights();
  cfg.weights.age = 1000;
  cfg.weights.max_age = c.max_age;
  PriorityBreakdown b = PriorityOf(cs, id, c.now, cfg);
  EXPECT_DOUBLE_EQ(b.age, c.want) << c.name;
  EXPECT_EQ(b.total, std::llround(c.want)) << c.name;
}

INSTANTIATE_TEST_SUITE_P(
    Table, AgeTest,
    ::testing::Values(AgeCase{"just submitted", kNoTime, 0, 1000, 0},
                      AgeCase{"a quarter of max age: 250/1000", kNoTime, 250, 1000, 250},
                      AgeCase{"exactly max age", kNoTime, 1000, 1000, 1000},
                      AgeCase{"past max age is clamped to 1", kNoTime, 5000, 1000, 1000},
                      AgeCase{"a third: 1000 x 1/3", kNoTime, 1000, 3000, 1000.0 / 3},
                      // Eligible from --begin = 500: (750 - 500) / 1000.
                      AgeCase{"age counts from the begin time", 500, 750, 1000, 250},
                      AgeCase{"before the begin time is clamped to 0", 500, 100, 1000, 0},
                      AgeCase{"PriorityMaxAge=0: always full", kNoTime, 0, 0, 1000}));

// ---- Job size: max(nodes / cluster nodes, CPUs / cluster CPUs) of the minimum request.
// Cluster: big01 (64 CPUs) + small01..03 (4 CPUs): 4 nodes, 76 CPUs.
struct SizeCase {
  const char* name;
  JobSpec spec;
  bool favor_small;
  double want;  // weight 1000
};

class JobSizeTest : public ::testing::TestWithParam<SizeCase> {};

TEST_P(JobSizeTest, Factor) {
  const SizeCase& c = GetParam();
  ClusterState cs = MakeCluster().Nodes("big", 1, 64, 64000).Nodes("small", 3, 4, 4000).Build();
  JobId id = Submit(cs, c.spec);
  SchedulerConfig cfg = NoWeights();
  cfg.weights.job_size = 1000;
  cfg.weights.favor_small = c.favor_small;
  EXPECT_DOUBLE_EQ(PriorityOf(cs, id, 0, cfg).job_size, c.want) << c.name;
}

INSTANTIATE_TEST_SUITE_P(
    Table, JobSizeTest,
    ::testing::Values(
        // max(1/4, 1/76) = 0.25
        SizeCase{"one CPU: the node fraction", MakeJob().Obj(), false, 250},
        // max(2/4, 2/76) = 0.5
        SizeCase{"two nodes", MakeJob().Nodes(2).Obj(), false, 500},
        // max(1/4, 38/76) = 0.5: the CPU fraction wins
        SizeCase{"38 CPUs on one node", MakeJob().CpusPerTask(38).Obj(), false, 500},
        // task mode counts one node: max(1/4, 57/76) = 0.75
        SizeCase{"57 tasks", MakeJob().Tasks(57).Obj(), false, 750},
        // max(4/4, 4/76) = 1
        SizeCase{"every node", MakeJob().Nodes(4).Obj(), false, 1000},
        // favor small: 1 - 0.25
        SizeCase{"favor small, one CPU", MakeJob().Obj(), true, 750},
        // favor small: 1 - 0.5
        SizeCase{"favor small, 38 CPUs", MakeJob().CpusPerTask(38).Obj(), true, 500},
        SizeCase{"favor small, every node", MakeJob().Nodes(4).Obj(), true, 0}));

// ---- Partition: the best PriorityJobFactor among the job's partitions / the largest.
TEST(PriorityTest, PartitionFactor) {
  PartitionSpec low = MakePartition("low", {"n01"}, true);
  PartitionSpec mid = MakePartition("mid", {"n01"});
  mid.priority_job_factor = 2;
  PartitionSpec top = MakePartition("top", {"n01"});
  top.priority_job_factor = 4;
  ClusterState cs =
      MakeCluster().Nodes("n", 1, 8, 8000).Partition(low).Partition(mid).Partition(top).Build();
  SchedulerConfig cfg = NoWeights();
  cfg.weights.partition = 1000;
  struct Row {
    JobSpec spec;
    double want;
  } rows[] = {{MakeJob().Partition("low").Obj(), 250},                     // 1/4
              {MakeJob().Partition("mid").Obj(), 500},                     // 2/4
              {MakeJob().Partition("top").Obj(), 1000},                    // 4/4
              {MakeJob().Partition("low").Partition("mid").Obj(), 500},    // best of 1, 2
              {MakeJob().Partition("top").Partition("low").Obj(), 1000}};  // best of 4, 1
  for (const Row& r : rows) {
    JobId id = Submit(cs, r.spec);
    EXPECT_DOUBLE_EQ(PriorityOf(cs, id, 0, cfg).partition, r.want) << "job " << id;
  }
}

// ---- QoS: its priority / the largest QoS priority (0 when every QoS has priority 0).
TEST(PriorityTest, QosFactor) {
  QosSpec mid = Qos("mid", 25);
  QosSpec high = Qos("high", 100);
  ClusterState cs = MakeCluster().Nodes("n", 1, 8, 8000).Qos(mid).Qos(high).Build();
  SchedulerConfig cfg = NoWeights();
  cfg.weights.qos = 1000;
  EXPECT_DOUBLE_EQ(PriorityOf(cs, Submit(cs, MakeJob().Obj()), 0, cfg).qos, 0);
  EXPECT_DOUBLE_EQ(PriorityOf(cs, Submit(cs, MakeJob().QosName("mid").Obj()), 0, cfg).qos, 250);
  EXPECT_DOUBLE_EQ(PriorityOf(cs, Submit(cs, MakeJob().QosName("high").Obj()), 0, cfg).qos, 1000);

  ClusterState flat = MakeCluster().Nodes("n", 1, 8, 8000).Build();
  EXPECT_DOUBLE_EQ(PriorityOf(flat, Submit(flat, MakeJob().Obj()), 0, cfg).qos, 0);
}

// ---- TRES: PriorityWeightTRES per kind, times the job's share of the partition's total.
// Partition: 2 nodes x 16 CPUs x 4 GPUs = 32 CPUs, 8 GPUs, 2 nodes.
TEST(PriorityTest, TresWeights) {
  ClusterState cs = MakeCluster().Nodes("g", 2, 16, 64000, 4, "a100").Build();
  SchedulerConfig cfg = NoWeights();
  cfg.weights.tres = {{"cpu", 2000}, {"gres/gpu", 4000}, {"node", 1000}};
  // 8 CPUs, 2 GPUs, 1 node: 2000 x 8/32 + 4000 x 2/8 + 1000 x 1/2 = 500 + 1000 + 500.
  JobId one = Submit(cs, MakeJob().CpusPerTask(8).GpusPerNode(2).Obj());
  EXPECT_DOUBLE_EQ(PriorityOf(cs, one, 0, cfg).tres, 2000);
  // 2 nodes x (16 CPUs, 4 GPUs): every share is 1: 2000 + 4000 + 1000.
  JobId all = Submit(cs, MakeJob().Nodes(2).CpusPerTask(16).GpusPerNode(4).Obj());
  EXPECT_DOUBLE_EQ(PriorityOf(cs, all, 0, cfg).tres, 7000);
  // A kind the scheduler does not weigh ("mem") adds nothing: 1 CPU = 2000/32 = 62.5, 1 node 500.
  cfg.weights.tres.push_back({"mem", 100000});
  JobId small = Submit(cs, MakeJob().Obj());
  EXPECT_DOUBLE_EQ(PriorityOf(cs, small, 0, cfg).tres, 562.5);
  EXPECT_EQ(PriorityOf(cs, small, 0, cfg).total, 563);  // llround(562.5)
}

// ---- The sum, nice and --priority.
TEST(PriorityTest, SumMinusNice) {
  QosSpec high = Qos("high", 10);
  ClusterState cs = MakeCluster().Nodes("n", 4, 8, 8000).Qos(high).Build();
  SchedulerConfig cfg = NoWeights();
  cfg.weights.age = 1000;
  cfg.weights.max_age = 1000;
  cfg.weights.job_size = 1000;
  cfg.weights.qos = 1000;
  // age 500/1000 -> 500; size max(1/4, 1/32) -> 250; qos 10/10 -> 1000; sum 1750.
  JobId plain = Submit(cs, MakeJob().QosName("high").Obj());
  EXPECT_EQ(PriorityOf(cs, plain, 500, cfg).total, 1750);
  JobId nice = Submit(cs, MakeJob().QosName("high").Nice(100).Obj());
  PriorityBreakdown b = PriorityOf(cs, nice, 500, cfg);
  EXPECT_EQ(b.total, 1650);
  EXPECT_EQ(b.nice, 100);
  JobId kind = Submit(cs, MakeJob().QosName("high").Nice(-50).Obj());
  EXPECT_EQ(PriorityOf(cs, kind, 500, cfg).total, 1800);
}

TEST(PriorityTest, AdminPriorityOverridesEveryFactor) {
  ClusterState cs = MakeCluster().Nodes("n", 4, 8, 8000).Build();
  SchedulerConfig cfg = SchedulerConfig::Multifactor();  // every default weight on
  JobId id = Submit(cs, MakeJob().Nodes(4).Priority(12345).Nice(100).Obj());
  PriorityBreakdown b = PriorityOf(cs, id, 86400, cfg);
  EXPECT_TRUE(b.admin_set);
  EXPECT_EQ(b.total, 12345);
  EXPECT_DOUBLE_EQ(b.age, 0);
  EXPECT_DOUBLE_EQ(b.job_size, 0);
  JobId zero = Submit(cs, MakeJob().Priority(0).Obj());
  EXPECT_EQ(PriorityOf(cs, zero, 86400, cfg).total, 0);
}

// ---- Fair Tree. Tree: root -> A {a1, a2}, B {b1, b2}; every user has 1 share.
// Usage (CPU-seconds, no decay) is made by running 1-CPU jobs for that many seconds.
struct FairTreeCase {
  const char* name;
  int32_t shares_a, shares_b;
  std::map<std::string, Duration> usage;
  std::map<std::string, double> want;
};

class FairTreeTest : public ::testing::TestWithParam<FairTreeCase> {};

TEST_P(FairTreeTest, Ranks) {
  const FairTreeCase& c = GetParam();
  ClusterState cs = MakeCluster()
                        .Nodes("n", 1, 8, 8000)
                        .Account(Acct("A", c.shares_a))
                        .Account(Acct("B", c.shares_b))
                        .User(UserIn("a1", "A"))
                        .User(UserIn("a2", "A"))
                        .User(UserIn("b1", "B"))
                        .User(UserIn("b2", "B"))
                        .Build();
  SchedulerConfig cfg = NoWeights();
  cfg.weights.fairshare = 10000;
  cfg.fairshare.half_life = 0;  // usage = CPU-seconds exactly
  cs.SetFairshareConfig(cfg.fairshare);
  for (const auto& [user, secs] : c.usage) {
    JobId id = StartOn(cs, MakeJob().User(user).Obj(), "n01", 1, 0);
    EndAt(cs, id, secs);
  }
  FairshareTable t = ComputeFairshare(cs, 1000, cfg.fairshare);
  for (const auto& [user, want] : c.want) {
    EXPECT_DOUBLE_EQ(t.factor[AssocOf(cs, user)], want) << c.name << ": " << user;
  }
  JobId id = Submit(cs, MakeJob().User("a1").Obj(), 1000);
  EXPECT_DOUBLE_EQ(PriorityOf(cs, id, 1000, cfg).fairshare, 10000 * c.want.at("a1")) << c.name;
}

INSTANTIATE_TEST_SUITE_P(
    Table, FairTreeTest,
    ::testing::Values(
        // No usage anywhere: every S/U is infinite; ties by name: A before B, a1 before a2.
        // Ranks a1 4, a2 3, b1 2, b2 1 of N = 4.
        FairTreeCase{
            "no usage: by name", 1, 1, {}, {{"a1", 1.0}, {"a2", 0.75}, {"b1", 0.5}, {"b2", 0.25}}},
        // Root: A = 60 of 160 (S/U = 0.5/0.375 = 1.33), B = 100 (0.5/0.625 = 0.8): A first.
        // A: a1 0.5/(10/60) = 3, a2 0.5/(50/60) = 0.6. B: b2 no usage first, then b1.
        // Depth first: a1, a2, b2, b1 - a2 (usage 50) outranks b2 (usage 0).
        FairTreeCase{"depth first",
                     1,
                     1,
                     {{"a1", 10}, {"a2", 50}, {"b1", 100}},
                     {{"a1", 1.0}, {"a2", 0.75}, {"b2", 0.5}, {"b1", 0.25}}},
        // Root: A used everything (S/U 0.5), B nothing (infinite): B's users first, by name.
        FairTreeCase{"unused account first",
                     1,
                     1,
                     {{"a1", 100}},
                     {{"b1", 1.0}, {"b2", 0.75}, {"a2", 0.5}, {"a1", 0.25}}},
        // Root: 40 / 40, a tie (S/U 1), by name: A. A: a2 (0.5/0.25 = 2) before a1 (0.667).
        // B: b1 and b2 tie at 1: by name.
        FairTreeCase{"ties by name",
                     1,
                     1,
                     {{"a1", 30}, {"a2", 10}, {"b1", 20}, {"b2", 20}},
                     {{"a2", 1.0}, {"a1", 0.75}, {"b1", 0.5}, {"b2", 0.25}}},
        // Shares 3:1. Root: A 0.75/0.6 = 1.25 before B 0.25/0.4 = 0.625 though A used more.
        FairTreeCase{"shares count",
                     3,
                     1,
                     {{"a1", 60}, {"b1", 40}},
                     {{"a2", 1.0}, {"a1", 0.75}, {"b2", 0.5}, {"b1", 0.25}}}));

// A sub-account is ranked among its sibling users and visited depth first.
// root -> A {A1 {x1}, a1}, B {b1}. Usage x1 10, a1 30, b1 100.
// Root: A 0.5/(40/140) = 1.75, B 0.5/(100/140) = 0.7: A first. In A: A1 0.5/0.25 = 2 before a1
// 0.5/0.75 = 0.67. Order x1, a1, b1: factors 3/3, 2/3, 1/3.
TEST(FairshareTest, FairTreeNestedAccounts) {
  ClusterState cs = MakeCluster()
                        .Nodes("n", 1, 8, 8000)
                        .Account(Acct("A"))
                        .Account(Acct("A1", 1, "A"))
                        .Account(Acct("B"))
                        .User(UserIn("x1", "A1"))
                        .User(UserIn("a1", "A"))
                        .User(UserIn("b1", "B"))
                        .Build();
  FairshareConfig fc;
  fc.half_life = 0;
  cs.SetFairshareConfig(fc);
  struct Use {
    const char* user;
    Duration secs;
  } uses[] = {{"x1", 10}, {"a1", 30}, {"b1", 100}};
  for (const Use& u : uses)
    EndAt(cs, StartOn(cs, MakeJob().User(u.user).Obj(), "n01", 1, 0), u.secs);
  FairshareTable t = ComputeFairshare(cs, 1000, fc);
  EXPECT_DOUBLE_EQ(t.factor[AssocOf(cs, "x1")], 1.0);
  EXPECT_DOUBLE_EQ(t.factor[AssocOf(cs, "a1")], 2.0 / 3);
  EXPECT_DOUBLE_EQ(t.factor[AssocOf(cs, "b1")], 1.0 / 3);
  EXPECT_DOUBLE_EQ(t.account_usage[*cs.FindAccount("A")], 40);
  EXPECT_DOUBLE_EQ(t.account_usage[0], 140);
}

// sshare's rows (share_tree.h) carry the table's numbers, in Slurm's order: an account, its
// users, then its sub-accounts. Same tree and usage as FairTreeNestedAccounts.
TEST(ShareTreeTest, FairTreeRowsFollowTheTable) {
  ClusterState cs = MakeCluster()
                        .Nodes("n", 1, 8, 8000)
                        .Account(Acct("A"))
                        .Account(Acct("A1", 1, "A"))
                        .Account(Acct("B", 3))
                        .User(UserIn("x1", "A1"))
                        .User(UserIn("a1", "A"))
                        .User(UserIn("b1", "B"))
                        .Build();
  FairshareConfig fc;
  fc.half_life = 0;
  cs.SetFairshareConfig(fc);
  EndAt(cs, StartOn(cs, MakeJob().User("x1").Obj(), "n01", 1, 0), 10);
  EndAt(cs, StartOn(cs, MakeJob().User("a1").Obj(), "n01", 1, 0), 30);
  EndAt(cs, StartOn(cs, MakeJob().User("b1").Obj(), "n01", 1, 0), 100);
  FairshareTable t = ComputeFairshare(cs, 1000, fc);
  std::vector<ShareRow> rows = ShareTreeRows(cs, t, fc.algorithm);
  std::vector<std::string> order;
  for (const ShareRow& r : rows) order.push_back(r.account + "/" + r.user);
  EXPECT_EQ(order, (std::vector<std::string>{"root/", "A/", "A/a1", "A1/", "A1/x1", "B/", "B/b1"}));
  ASSERT_EQ(rows.size(), 7u);
  EXPECT_EQ(rows[0].id, 1);
  EXPECT_EQ(rows[0].raw_shares, -1);
  EXPECT_EQ(rows[0].depth, 0);
  EXPECT_DOUBLE_EQ(rows[0].raw_usage, 140);
  EXPECT_DOUBLE_EQ(rows[0].effective_usage, 1.0);
  EXPECT_FALSE(rows[0].has_fairshare);
  // A: 1 of 4 shares, 40 of 140 used: LevelFS 0.25 / (40/140) = 0.875.
  EXPECT_EQ(rows[1].depth, 1);
  EXPECT_EQ(rows[1].parent, "root");
  EXPECT_DOUBLE_EQ(rows[1].norm_shares, 0.25);
  EXPECT_DOUBLE_EQ(rows[1].raw_usage, 40);
  EXPECT_DOUBLE_EQ(rows[1].effective_usage, 40.0 / 140);
  EXPECT_DOUBLE_EQ(rows[1].level_fs, 0.25 / (40.0 / 140));
  EXPECT_DOUBLE_EQ(rows[1].norm_usage, 40.0 / 140);
  // a1 among A's children {A1 (10), a1 (30)}: half the shares, 3/4 of the usage.
  EXPECT_EQ(rows[2].depth, 2);
  EXPECT_EQ(rows[2].raw_shares, 1);
  EXPECT_DOUBLE_EQ(rows[2].norm_shares, 0.5);
  EXPECT_DOUBLE_EQ(rows[2].effective_usage, 0.75);
  EXPECT_DOUBLE_EQ(rows[2].level_fs, 0.5 / 0.75);
  for (const ShareRow& r : rows) {
    if (r.user.empty()) continue;
    EXPECT_TRUE(r.has_fairshare);
    EXPECT_DOUBLE_EQ(r.fairshare, t.factor[AssocOf(cs, r.user)]) << r.user;
    EXPECT_DOUBLE_EQ(r.raw_usage, t.usage[AssocOf(cs, r.user)]) << r.user;
  }
  EXPECT_EQ(rows[4].depth, 3);  // x1 under A1 under A
}

// Without usage a node's LevelFS is infinite (Slurm prints "inf").
TEST(ShareTreeTest, NoUsageMeansInfiniteLevel) {
  ClusterState cs =
      MakeCluster().Nodes("n", 1, 8, 8000).Account(Acct("A")).User(UserIn("a1", "A")).Build();
  FairshareConfig fc;
  cs.SetFairshareConfig(fc);
  FairshareTable t = ComputeFairshare(cs, 1000, fc);
  std::vector<ShareRow> rows = ShareTreeRows(cs, t, fc.algorithm);
  ASSERT_EQ(rows.size(), 3u);
  EXPECT_TRUE(std::isinf(rows[2].level_fs));
  EXPECT_DOUBLE_EQ(rows[2].norm_shares, 1.0);
  EXPECT_DOUBLE_EQ(rows[2].fairshare, 1.0);
}

// ---- Classic: F = 2^(-Ueff / S).
// root -> A (1 share) {a1}, B (3 shares) {b1, b2}; usage a1 100, b1 100, b2 0 (total 200).
//   A: S = 1/4 = 0.25, U = 0.5, Ueff = 0.5 + (1 - 0.5) x 0.25 = 0.625.
//     a1: S = 0.25, U = 0.5, Ueff = 0.5 + (0.625 - 0.5) x 1 = 0.625; F = 2^-2.5 = 0.176777.
//   B: S = 3/4 = 0.75, U = 0.5, Ueff = 0.5 + (1 - 0.5) x 0.75 = 0.875.
//     b1: S = 0.375, U = 0.5, Ueff = 0.5 + (0.875 - 0.5) x 0.5 = 0.6875;
//         F = 2^(-0.6875/0.375) = 2^-1.8333 = 0.280616.
//     b2: S = 0.375, U = 0, Ueff = 0.875 x 0.5 = 0.4375; F = 2^(-1.16667) = 0.445449.
ClusterState ClassicTree(FairshareConfig* fc) {
  ClusterState cs = MakeCluster()
                        .Nodes("n", 1, 8, 8000)
                        .Account(Acct("A", 1))
                        .Account(Acct("B", 3))
                        .User(UserIn("a1", "A"))
                        .User(UserIn("b1", "B"))
                        .User(UserIn("b2", "B"))
                        .Build();
  fc->algorithm = FairshareAlgorithm::kClassic;
  fc->half_life = 0;
  cs.SetFairshareConfig(*fc);
  EndAt(cs, StartOn(cs, MakeJob().User("a1").Obj(), "n01", 1, 0), 100);
  EndAt(cs, StartOn(cs, MakeJob().User("b1").Obj(), "n01", 1, 0), 100);
  return cs;
}

TEST(FairshareTest, ClassicFormula) {
  FairshareConfig fc;
  ClusterState cs = ClassicTree(&fc);
  FairshareTable t = ComputeFairshare(cs, 500, fc);
  EXPECT_NEAR(t.factor[AssocOf(cs, "a1")], std::exp2(-2.5), 1e-12);
  EXPECT_NEAR(t.factor[AssocOf(cs, "a1")], 0.176777, 1e-6);
  EXPECT_NEAR(t.factor[AssocOf(cs, "b1")], 0.280616, 1e-6);
  EXPECT_NEAR(t.factor[AssocOf(cs, "b2")], 0.445449, 1e-6);
}

// Classic rows: NormShares is the product down the tree, EffectvUsage the propagated usage, and
// accounts get a FairShare too (same tree as ClassicFormula).
TEST(ShareTreeTest, ClassicRows) {
  FairshareConfig fc;
  ClusterState cs = ClassicTree(&fc);
  FairshareTable t = ComputeFairshare(cs, 500, fc);
  std::vector<ShareRow> rows = ShareTreeRows(cs, t, fc.algorithm);
  ASSERT_EQ(rows.size(), 6u);  // root, A, a1, B, b1, b2
  EXPECT_EQ(rows[3].account, "B");
  EXPECT_DOUBLE_EQ(rows[3].norm_shares, 0.75);
  EXPECT_DOUBLE_EQ(rows[3].effective_usage, 0.875);
  EXPECT_TRUE(rows[3].has_fairshare);
  EXPECT_DOUBLE_EQ(rows[3].fairshare, std::exp2(-0.875 / 0.75));
  EXPECT_EQ(rows[4].user, "b1");
  EXPECT_DOUBLE_EQ(rows[4].norm_shares, 0.375);
  EXPECT_DOUBLE_EQ(rows[4].effective_usage, 0.6875);
  EXPECT_NEAR(rows[4].fairshare, 0.280616, 1e-6);
  EXPECT_DOUBLE_EQ(rows[0].fairshare, 0.0);  // the root has no shares
}

// ---- Usage decay (core/state/usage.h), against the closed forms.
TEST(UsageTest, DecayedUsageHalvesEveryHalfLife) {
  const Duration h = 3600;
  DecayedUsage u;
  u.value = 100;
  u.as_of = 1000;
  EXPECT_DOUBLE_EQ(u.At(1000, h), 100);
  EXPECT_DOUBLE_EQ(u.At(1000 + h, h), 50);
  EXPECT_DOUBLE_EQ(u.At(1000 + 2 * h, h), 25);
  EXPECT_DOUBLE_EQ(u.At(1000 + h / 2, h), 100 / std::sqrt(2.0));  // 2^-0.5
  EXPECT_DOUBLE_EQ(u.At(1000 + 5 * h, 0), 100);                   // no decay
  EXPECT_DOUBLE_EQ(u.At(500, h), 100);                            // before as_of: unchanged
  // Add: decay the old value to `now`, then add: 100 x 1/2 + 10.
  u.Add(10, 1000 + h, h);
  EXPECT_DOUBLE_EQ(u.value, 60);
  EXPECT_EQ(u.as_of, 1000 + h);
  EXPECT_DOUBLE_EQ(u.At(1000 + 2 * h, h), 30);
}

// Usage recorded out of order (a job that ended at H reported after one that ended at 2H):
// the amount, expressed as of H, is worth half as of 2H. 100 (as of 2H) + 100 x 2^-1 = 150.
TEST(UsageTest, AddOlderAmountDecaysItToAsOf) {
  const Duration h = 3600;
  DecayedUsage u;
  u.Add(100, 2 * h, h);
  u.Add(100, h, h);
  EXPECT_EQ(u.as_of, 2 * h);
  EXPECT_DOUBLE_EQ(u.value, 150);
}

TEST(UsageTest, DecayedRunUsageClosedForm) {
  const Duration h = 3600;
  // b x H/ln2 x (1 - 2^-(d/H)): one half-life at billing 2 = 2 x 3600/ln2 x 1/2 = 5193.70.
  EXPECT_NEAR(DecayedRunUsage(2, 0, h, h), 3600 / kLn2, 1e-9);
  EXPECT_NEAR(DecayedRunUsage(2, 0, h, h), 5193.702147, 1e-5);
  // Two half-lives: b x H/ln2 x 3/4.
  EXPECT_NEAR(DecayedRunUsage(1, 100, 100 + 2 * h, h), 0.75 * h / kLn2, 1e-9);
  // Accruing at the end equals accruing in two pieces: [0, H) decayed by H, plus [H, 2H).
  double one = DecayedRunUsage(3, 0, 2 * h, h);
  double pieces = DecayedRunUsage(3, 0, h, h) * 0.5 + DecayedRunUsage(3, h, 2 * h, h);
  EXPECT_NEAR(one, pieces, 1e-9);
  // No decay: billing x seconds. Empty or reversed runs and zero billing count nothing.
  EXPECT_DOUBLE_EQ(DecayedRunUsage(4, 10, 110, 0), 400);
  EXPECT_DOUBLE_EQ(DecayedRunUsage(4, 10, 10, h), 0);
  EXPECT_DOUBLE_EQ(DecayedRunUsage(4, 20, 10, h), 0);
  EXPECT_DOUBLE_EQ(DecayedRunUsage(0, 0, h, h), 0);
}

// Finished work decays from the job's end; running jobs count the part run so far.
TEST(FairshareTest, UsageOfEndedAndRunningJobs) {
  QosSpec cheap = Qos("cheap", 0, 0.5);
  ClusterState cs = MakeCluster().Nodes("n", 1, 8, 8000).Qos(cheap).Build();
  FairshareConfig fc;
  fc.half_life = 1000;
  cs.SetFairshareConfig(fc);
  // alice: 4 CPUs from 0, still running at 100: 4 x 1000/ln2 x (1 - 2^-0.1) = 386.452.
  StartOn(cs, MakeJob().User("alice", 1).Obj(), "n01", 4, 0);
  FairshareTable t = ComputeFairshare(cs, 100, fc);
  const int32_t alice = AssocOf(cs, "alice");
  EXPECT_NEAR(t.usage[alice], 4 * 1000 / kLn2 * (1 - std::exp2(-0.1)), 1e-9);
  EXPECT_NEAR(t.usage[alice], 386.452, 1e-3);
  // bob: 2 CPUs in QoS cheap (usage factor 0.5) from 0 to 1000, ended; as of 2000 the
  // recorded 2 x 1000/ln2 x 1/2 x 0.5 = 721.35 has decayed one half-life: 360.67.
  JobId b = StartOn(cs, MakeJob().User("bob", 2).QosName("cheap").Obj(), "n01", 2, 0);
  EndAt(cs, b, 1000);
  t = ComputeFairshare(cs, 2000, fc);
  EXPECT_NEAR(t.usage[AssocOf(cs, "bob")], 2 * 1000 / kLn2 * 0.5 * 0.5 * 0.5, 1e-9);
  // alice's job still runs at 2000: 4 x 1000/ln2 x (1 - 2^-2) = 4328.09.
  EXPECT_NEAR(t.usage[alice], 4 * 1000 / kLn2 * 0.75, 1e-9);
  // Both live in the auto-created account "default"; its usage is the sum.
  EXPECT_NEAR(t.account_usage[*cs.FindAccount("default")],
              t.usage[alice] + t.usage[AssocOf(cs, "bob")], 1e-9);
}

// A user whose job is running ranks below one with no usage, as soon as the job has run.
TEST(FairshareTest, RunningJobsRankByUsageSoFar) {
  ClusterState cs = MakeCluster()
                        .Nodes("n", 1, 8, 8000)
                        .Account(Acct("A"))
                        .User(UserIn("u1", "A"))
                        .User(UserIn("u2", "A"))
                        .Build();
  FairshareConfig fc;
  fc.half_life = 0;
  cs.SetFairshareConfig(fc);
  StartOn(cs, MakeJob().User("u1").Obj(), "n01", 1, 0);
  // At the start it has used nothing: a tie, by name: u1 (2/2), u2 (1/2).
  FairshareTable t0 = ComputeFairshare(cs, 0, fc);
  EXPECT_DOUBLE_EQ(t0.factor[AssocOf(cs, "u1")], 1.0);
  EXPECT_DOUBLE_EQ(t0.factor[AssocOf(cs, "u2")], 0.5);
  // After 10 s: u1 has used 10 CPU-seconds, u2 nothing: u2 first.
  FairshareTable t = ComputeFairshare(cs, 10, fc);
  EXPECT_DOUBLE_EQ(t.usage[AssocOf(cs, "u1")], 10);
  EXPECT_DOUBLE_EQ(t.factor[AssocOf(cs, "u2")], 1.0);
  EXPECT_DOUBLE_EQ(t.factor[AssocOf(cs, "u1")], 0.5);
}

}  // namespace
}  // namespace berth::core
