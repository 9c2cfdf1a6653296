#include "core/sched/eligibility.h"

#include <gtest/gtest.h>

#include <string>
#include <utility>
#include <vector>

#include "core/model/dependency.h"
#include "core/testing/builders.h"

namespace berth::core {
namespace {

using testing::MakeCluster;
using testing::MakeJob;
using testing::MakePartition;

constexpr Time kNow = 1000;

// Starts `spec` at `at` on `node` with `cpus` CPUs and GPU devices `gpus` (and the licences it
// asks for), through a hand-made plan. Returns the id that runs.
JobId RunJob(ClusterState& cs, JobSpec spec, const char* node, int32_t cpus, uint64_t gpus = 0,
             Time at = 0) {
  std::vector<NamedCount> licenses = spec.licenses;
  Result<JobId> id = cs.Submit(std::move(spec), nullptr, at);
  EXPECT_TRUE(id.ok()) << id.status().ToString();
  Plan plan;
  PlannedStart s;
  s.job = *id;
  s.partition = cs.partitions()[cs.default_partition()].spec.name;
  NodeAllocation a;
  a.node = *cs.FindNode(node);
  a.cpus = cpus;
  a.gpu_mask = gpus;
  a.tasks = 1;
  s.alloc.nodes.push_back(a);
  s.alloc.licenses = licenses;
  s.time_limit = 3600;
  plan.starts.push_back(s);
  ApplyResult r = cs.Apply(plan, at);
  EXPECT_EQ(r.started.size(), 1u);
  return r.start_ids.empty() ? kNoJob : r.start_ids[0];
}

void End(ClusterState& cs, JobId id, JobState state, int32_t exit_code, Time at) {
  JobOutcome o;
  o.state = state;
  o.exit_code = exit_code;
  o.end_time = at;
  ASSERT_TRUE(cs.EndJob(id, o, false).ok());
}

QosSpec Qos(std::string name) {
  QosSpec q;
  q.name = std::move(name);
  return q;
}

AccountSpec Acct(std::string name, std::string parent = kRootAccount) {
  AccountSpec a;
  a.name = std::move(name);
  a.parent = std::move(parent);
  return a;
}

UserSpec UserIn(std::string name, std::string account, int32_t max_jobs = -1) {
  UserSpec u;
  u.name = std::move(name);
  u.account = std::move(account);
  u.max_jobs = max_jobs;
  return u;
}

// ---- One row per Slurm reason, on one cluster where some limits are already reached.
//
// Nodes g01-g04 (32 CPUs, 8 h100). Partitions: main (default, MaxTime 1 day, MaxNodes 2), down,
// inactive, short (MaxTime 600), big (MinNodes 2), restricted (accounts physics, QoS high).
// Running at kNow (ids in submit order):
//   1 alice QoS gpu_user (MaxTRESPerUser gres/gpu=4): 3 GPUs
//   2 alice QoS cpu_user (MaxTRESPerUser cpu=8): 6 CPUs
//   3 alice QoS jobs_user (MaxJobsPerUser=1): 1 job
//   4 bob (physics, like alice) QoS gpu_acct (MaxTRESPerAccount gres/gpu=4): 3 GPUs
//   5 carol, account chem (GrpTRES gres/gpu=4): 3 GPUs
//   6 dave, account bio (GrpTRES cpu=8): 6 CPUs
//   7 erin, account geo (GrpJobs=1): 1 job
//   8 frank (MaxJobs=1): 1 job
//   9 bob: both matlab licences
// Ended: 10 alice, FAILED. Array 11 (%1): task 0 runs as job 12, task 1 pending.
ClusterState ReasonCluster() {
  PartitionSpec main = MakePartition("main", {"g01", "g02", "g03", "g04"}, true);
  main.max_time = 86400;
  main.max_nodes = 2;
  PartitionSpec down = MakePartition("down", {"g01"});
  down.state = PartitionState::kDown;
  PartitionSpec inactive = MakePartition("inactive", {"g01"});
  inactive.state = PartitionState::kInactive;
  PartitionSpec short_part = MakePartition("short", {"g01"});
  short_part.max_time = 600;
  PartitionSpec big = MakePartition("big", {"g01", "g02", "g03", "g04"});
  big.min_nodes = 2;
  PartitionSpec restricted = MakePartition("restricted", {"g01"});
  restricted.allow_accounts = {"physics"};
  restricted.allow_qos = {"high"};
  QosSpec gpu_user = Qos("gpu_user"), cpu_user = Qos("cpu_user"), jobs_user = Qos("jobs_user"),
          gpu_acct = Qos("gpu_acct"), gpu_job = Qos("gpu_job"), wall = Qos("wall"),
          high = Qos("high");
  gpu_user.max_tres_per_user.gpus = 4;
  cpu_user.max_tres_per_user.cpus = 8;
  jobs_user.max_jobs_per_user = 1;
  gpu_acct.max_tres_per_account.gpus = 4;
  gpu_job.max_tres_per_job.gpus = 2;
  wall.max_wall = 1800;
  high.priority = 10;
  AccountSpec chem = Acct("chem"), bio = Acct("bio"), geo = Acct("geo");
  chem.grp_tres.gpus = 4;
  bio.grp_tres.cpus = 8;
  geo.grp_jobs = 1;
  MakeCluster b;
  b.Nodes("g", 4, 32, 256000, 8, "h100").License("matlab", 2);
  for (const PartitionSpec& p : {main, down, inactive, short_part, big, restricted}) b.Partition(p);
  for (const QosSpec& q : {gpu_user, cpu_user, jobs_user, gpu_acct, gpu_job, wall, high}) b.Qos(q);
  for (const AccountSpec& a : {Acct("physics"), chem, Acct("chemlab", "chem"), bio, geo}) {
    b.Account(a);
  }
  for (const UserSpec& u :
       {UserIn("alice", "physics"), UserIn("bob", "physics"), UserIn("carol", "chem"),
        UserIn("gina", "chemlab"), UserIn("dave", "bio"), UserIn("erin", "geo"),
        UserIn("frank", "physics", 1)}) {
    b.User(u);
  }
  ClusterState cs = b.Build();
  EXPECT_EQ(RunJob(cs, MakeJob().User("alice").QosName("gpu_user").Obj(), "g01", 1, 0x07), 1u);
  EXPECT_EQ(RunJob(cs, MakeJob().User("alice").QosName("cpu_user").Obj(), "g01", 6), 2u);
  EXPECT_EQ(RunJob(cs, MakeJob().User("alice").QosName("jobs_user").Obj(), "g01", 1), 3u);
  EXPECT_EQ(RunJob(cs, MakeJob().User("bob").QosName("gpu_acct").Obj(), "g02", 1, 0x07), 4u);
  EXPECT_EQ(RunJob(cs, MakeJob().User("carol").Obj(), "g02", 1, 0x38), 5u);
  EXPECT_EQ(RunJob(cs, MakeJob().User("dave").Obj(), "g03", 6), 6u);
  EXPECT_EQ(RunJob(cs, MakeJob().User("erin").Obj(), "g03", 1), 7u);
  EXPECT_EQ(RunJob(cs, MakeJob().User("frank").Obj(), "g03", 1), 8u);
  EXPECT_EQ(RunJob(cs, MakeJob().User("bob").License("matlab", 2).Obj(), "g04", 1), 9u);
  JobId failed = RunJob(cs, MakeJob().User("alice").Obj(), "g04", 1);
  End(cs, failed, JobState::kFailed, 1, 500);
  JobId array = *cs.Submit(MakeJob().User("alice").Array({0, 1}, 1).Obj(), nullptr, 0);
  EXPECT_EQ(array, 11u);
  Plan plan;
  PlannedStart task0;
  task0.job = array;
  task0.array_task = 0;
  task0.partition = "main";
  task0.alloc.nodes.push_back({*cs.FindNode("g04"), 1, 0, 0, 1, {}, {}});
  task0.time_limit = 3600;
  plan.starts.push_back(task0);
  EXPECT_EQ(cs.Apply(plan, 0).start_ids, std::vector<JobId>{12});
  return cs;
}

enum class Stage { kJob, kPartition, kLimits };

struct ReasonCase {
  const char* name;
  JobSpec spec;
  Stage stage;
  const char* reason;  // Slurm's name; "None" when eligible
  const char* detail;
  JobId existing = kNoJob;  // check this job of the cluster instead of submitting `spec`
};

JobSpec WithDeadline(JobSpec s, Time deadline, Duration time_min = kNoTime) {
  s.deadline = deadline;
  s.time_min = time_min;
  return s;
}

Dependency Dep(const std::string& text) {
  Result<Dependency> d = ParseDependency(text);
  EXPECT_TRUE(d.ok()) << text;
  return d.ok() ? *d : Dependency();
}

class ReasonTest : public ::testing::TestWithParam<ReasonCase> {};

TEST_P(ReasonTest, ReasonAndDetail) {
  const ReasonCase& c = GetParam();
  ClusterState cs = ReasonCluster();
  JobId id = c.existing;
  if (id == kNoJob) {
    Result<JobId> r = cs.Submit(c.spec, nullptr, kNow);
    ASSERT_TRUE(r.ok()) << c.name << ": " << r.status().ToString();
    id = *r;
  }
  const JobEntry& e = *cs.FindEntry(id);
  PassState pass(cs, kNow);
  Verdict v = c.stage == Stage::kJob         ? CheckJob(pass, e, -1)
              : c.stage == Stage::kPartition ? CheckPartition(pass, e, 0)
                                             : CheckLimits(pass, e, 0);
  EXPECT_EQ(PendingReasonName(v.reason), c.reason) << c.name;
  EXPECT_EQ(v.detail, c.detail) << c.name;
}

INSTANTIATE_TEST_SUITE_P(
    Job, ReasonTest,
    ::testing::Values(ReasonCase{"user hold", MakeJob().Hold().Obj(), Stage::kJob, "JobHeldUser",
                                 "held by its user"},
                      ReasonCase{"admin hold", MakeJob().Hold(HoldKind::kAdmin).Obj(), Stage::kJob,
                                 "JobHeldAdmin", "held by an operator"},
                      ReasonCase{"begin later", MakeJob().Begin(kNow + 1).Obj(), Stage::kJob,
                                 "BeginTime", "starts no earlier than its --begin time"},
                      ReasonCase{"begin now", MakeJob().Begin(kNow).Obj(), Stage::kJob, "None", ""},
                      ReasonCase{"afterok on a running job",
                                 MakeJob().Depend(Dep("afterok:1")).Obj(), Stage::kJob,
                                 "Dependency", "waiting for afterok:1"},
                      ReasonCase{"afterok on a failed job",
                                 MakeJob().Depend(Dep("afterok:10")).Obj(), Stage::kJob,
                                 "DependencyNeverSatisfied",
                                 "afterok:10 can no longer be satisfied"},
                      ReasonCase{"array throttle %1 with one task running", JobSpec(), Stage::kJob,
                                 "JobArrayTaskLimit", "array throttle %1 reached", 11}));

INSTANTIATE_TEST_SUITE_P(
    Partition, ReasonTest,
    ::testing::Values(
        ReasonCase{"down", MakeJob().Partition("down").Obj(), Stage::kPartition, "PartitionDown",
                   "partition down is down"},
        ReasonCase{"inactive", MakeJob().Partition("inactive").Partition("main").Obj(),
                   Stage::kPartition, "PartitionInactive", "partition inactive is inactive"},
        ReasonCase{"over MaxTime", MakeJob().Partition("short").Time(601).Obj(), Stage::kPartition,
                   "PartitionTimeLimit", "time limit exceeds partition short's MaxTime"},
        ReasonCase{"at MaxTime", MakeJob().Partition("short").Time(600).Obj(), Stage::kPartition,
                   "None", ""},
        // No --time: the partition's default, else its MaxTime: within it.
        ReasonCase{"no time limit",
                   [] {
                     JobSpec s = MakeJob().Partition("short").Obj();
                     s.time_limit = kNoTime;
                     return s;
                   }(),
                   Stage::kPartition, "None", ""},
        ReasonCase{"over MaxNodes", MakeJob().Nodes(3).Obj(), Stage::kPartition,
                   "PartitionNodeLimit", "node count is outside partition main's limits"},
        ReasonCase{"under MinNodes", MakeJob().Partition("big").Nodes(1).Obj(), Stage::kPartition,
                   "PartitionNodeLimit", "node count is outside partition big's limits"},
        ReasonCase{"node range reaching MinNodes", MakeJob().Partition("big").Nodes(1, 2).Obj(),
                   Stage::kPartition, "None", ""},
        ReasonCase{"account not allowed",
                   MakeJob().User("carol").QosName("high").Partition("restricted").Obj(),
                   Stage::kPartition, "AccountNotAllowed",
                   "partition restricted does not allow account chem"},
        ReasonCase{"QoS not allowed", MakeJob().Partition("restricted").Obj(), Stage::kPartition,
                   "QOSNotAllowed", "partition restricted does not allow QoS normal"},
        ReasonCase{"allowed", MakeJob().QosName("high").Partition("restricted").Obj(),
                   Stage::kPartition, "None", ""},
        ReasonCase{"over the QoS MaxWall", MakeJob().QosName("wall").Time(1801).Obj(),
                   Stage::kPartition, "QOSMaxWallDurationPerJobLimit",
                   "time limit exceeds the QoS MaxWall"},
        ReasonCase{"at the QoS MaxWall", MakeJob().QosName("wall").Time(1800).Obj(),
                   Stage::kPartition, "None", ""},
        // now + limit = 1000 + 3600 > 4599.
        ReasonCase{"cannot meet the deadline", WithDeadline(MakeJob().Obj(), kNow + 3599),
                   Stage::kPartition, "DeadLine", "cannot finish before its deadline"},
        ReasonCase{"just meets the deadline", WithDeadline(MakeJob().Obj(), kNow + 3600),
                   Stage::kPartition, "None", ""},
        // --time-min 600 fits before the deadline although --time does not.
        ReasonCase{"time-min meets the deadline", WithDeadline(MakeJob().Obj(), kNow + 1000, 600),
                   Stage::kPartition, "None", ""}));

INSTANTIATE_TEST_SUITE_P(
    Limits, ReasonTest,
    ::testing::Values(
        // alice runs 3 GPUs in gpu_user: 3 + 2 > 4, 3 + 1 = 4.
        ReasonCase{"QoS GPUs per user", MakeJob().QosName("gpu_user").GpusPerNode(2).Obj(),
                   Stage::kLimits, "QOSMaxGRESPerUser", "user runs 3 GPUs; QoS gpu_user allows 4"},
        ReasonCase{"QoS GPUs per user, at the limit",
                   MakeJob().QosName("gpu_user").GpusPerNode(1).Obj(), Stage::kLimits, "None", ""},
        ReasonCase{"QoS GPUs per user, another user",
                   MakeJob().User("bob").QosName("gpu_user").GpusPerNode(4).Obj(), Stage::kLimits,
                   "None", ""},
        // alice runs 6 CPUs in cpu_user: 6 + 3 > 8.
        ReasonCase{"QoS CPUs per user", MakeJob().QosName("cpu_user").CpusPerTask(3).Obj(),
                   Stage::kLimits, "QOSMaxCpuPerUserLimit",
                   "user runs 6 CPUs; QoS cpu_user allows 8"},
        ReasonCase{"QoS CPUs per user, at the limit",
                   MakeJob().QosName("cpu_user").CpusPerTask(2).Obj(), Stage::kLimits, "None", ""},
        ReasonCase{"QoS jobs per user", MakeJob().QosName("jobs_user").Obj(), Stage::kLimits,
                   "QOSMaxJobsPerUserLimit", "user runs 1 jobs; QoS jobs_user allows 1"},
        // bob (physics) runs 3 GPUs in gpu_acct: alice is in physics too.
        ReasonCase{"QoS GPUs per account", MakeJob().QosName("gpu_acct").GpusPerNode(2).Obj(),
                   Stage::kLimits, "QOSMaxGRESPerAccount", "QoS per-account GPU limit reached"},
        ReasonCase{"QoS GPUs per account, another account",
                   MakeJob().User("carol").QosName("gpu_acct").GpusPerNode(1).Obj(), Stage::kLimits,
                   "None", ""},
        // 2 nodes x 2 GPUs = 4 > 2 per job.
        ReasonCase{"QoS GPUs per job", MakeJob().QosName("gpu_job").Nodes(2).GpusPerNode(2).Obj(),
                   Stage::kLimits, "QOSMaxGRESPerJob",
                   "asks for more GPUs than the QoS allows per job"},
        ReasonCase{"QoS GPUs per job, at the limit",
                   MakeJob().QosName("gpu_job").Nodes(2).GpusPerNode(1).Obj(), Stage::kLimits,
                   "None", ""},
        // carol runs 3 GPUs in chem (GrpTRES gres/gpu=4); gina is in chemlab, under chem.
        ReasonCase{"account GrpTRES GPUs", MakeJob().User("carol").GpusPerNode(2).Obj(),
                   Stage::kLimits, "AssocGrpGRES", "account chem runs 3 GPUs of its GrpTRES 4"},
        ReasonCase{"parent account GrpTRES GPUs", MakeJob().User("gina").GpusPerNode(2).Obj(),
                   Stage::kLimits, "AssocGrpGRES", "account chem runs 3 GPUs of its GrpTRES 4"},
        ReasonCase{"account GrpTRES GPUs, at the limit",
                   MakeJob().User("gina").GpusPerNode(1).Obj(), Stage::kLimits, "None", ""},
        // dave runs 6 CPUs in bio (GrpTRES cpu=8).
        ReasonCase{"account GrpTRES CPUs", MakeJob().User("dave").CpusPerTask(3).Obj(),
                   Stage::kLimits, "AssocGrpCpuLimit", "account bio GrpTRES cpu reached"},
        ReasonCase{"account GrpJobs", MakeJob().User("erin").Obj(), Stage::kLimits,
                   "AssocGrpJobsLimit", "account geo GrpJobs reached"},
        ReasonCase{"association MaxJobs", MakeJob().User("frank").Obj(), Stage::kLimits,
                   "AssocMaxJobsLimit", "association MaxJobs reached"},
        ReasonCase{"licences in use", MakeJob().License("matlab", 1).Obj(), Stage::kLimits,
                   "Licenses", "licence matlab in use"}));

// Limits count what the pass itself has started.
TEST(LimitsTest, CountWhatThePassStarted) {
  ClusterState cs = ReasonCluster();
  JobId a = *cs.Submit(MakeJob().QosName("gpu_user").GpusPerNode(1).Obj(), nullptr, kNow);
  JobId b = *cs.Submit(MakeJob().QosName("gpu_user").GpusPerNode(1).Obj(), nullptr, kNow);
  PassState pass(cs, kNow);
  ASSERT_TRUE(CheckLimits(pass, *cs.FindEntry(a), 0).ok());
  Allocation alloc;
  alloc.nodes.push_back({*cs.FindNode("g04"), 1, 0, 0x01, 1, {}, {}});
  pass.Start(*cs.FindEntry(a), a, kNow + 3600, alloc);
  Verdict v = CheckLimits(pass, *cs.FindEntry(b), 0);
  EXPECT_EQ(v.reason, PendingReason::kQosMaxGresPerUser);
  EXPECT_EQ(v.detail, "user runs 4 GPUs; QoS gpu_user allows 4");
}

// --begin and --deadline tell the pass when to look again.
TEST(EligibilityTest, WakeTimes) {
  ClusterState cs = ReasonCluster();
  JobId begin = *cs.Submit(MakeJob().Begin(kNow + 50).Obj(), nullptr, kNow);
  JobId deadline = *cs.Submit(WithDeadline(MakeJob().Time(600).Obj(), kNow + 5000), nullptr, kNow);
  PassState pass(cs, kNow);
  EXPECT_EQ(CheckJob(pass, *cs.FindEntry(begin), -1).reason, PendingReason::kBeginTime);
  EXPECT_EQ(pass.wake_at(), kNow + 50);
  PassState pass2(cs, kNow);
  EXPECT_TRUE(CheckPartition(pass2, *cs.FindEntry(deadline), 0).ok());
  // The last start that still meets the deadline is 5000 + 1000 - 600: one second later it fails.
  EXPECT_EQ(pass2.wake_at(), kNow + 5000 - 600 + 1);
}

// ---- Dependencies, as of kNow = 1000.
//   {R} runs since 100 (alice, named "solo"); {P} pending; {OK} COMPLETED 0 at 200;
//   {BAD} FAILED 1 at 300; {CAN} cancelled while pending at 50; {GONE} completed at 10 and purged.
//   Array {A} tasks 0, 1, 2: task 0 COMPLETED, task 1 FAILED, task 2 pending.
//   Array {B} tasks 0, 1: both COMPLETED.
struct DepIds {
  JobId r, p, ok, bad, can, gone, a, b;
};

class DependencyEvalTest : public ::testing::Test {
 protected:
  void SetUp() override {
    ids_.gone = RunJob(cs_, MakeJob().Obj(), "n01", 1, 0, 0);
    End(cs_, ids_.gone, JobState::kCompleted, 0, 10);
    ids_.r = RunJob(cs_, MakeJob().Name("solo").Obj(), "n01", 1, 0, 100);
    ids_.p = *cs_.Submit(MakeJob().Obj(), nullptr, 0);
    ids_.ok = RunJob(cs_, MakeJob().Obj(), "n01", 1, 0, 100);
    End(cs_, ids_.ok, JobState::kCompleted, 0, 200);
    ids_.bad = RunJob(cs_, MakeJob().Obj(), "n01", 1, 0, 100);
    End(cs_, ids_.bad, JobState::kFailed, 1, 300);
    ids_.can = *cs_.Submit(MakeJob().Obj(), nullptr, 0);
    ASSERT_TRUE(cs_.CancelPending(ids_.can, 50).ok());
    ids_.a = *cs_.Submit(MakeJob().Array({0, 1, 2}).Obj(), nullptr, 0);
    JobId a0 = StartTask(ids_.a, 0);
    JobId a1 = StartTask(ids_.a, 1);
    End(cs_, a0, JobState::kCompleted, 0, 400);
    End(cs_, a1, JobState::kFailed, 2, 400);
    ids_.b = *cs_.Submit(MakeJob().Array({0, 1}).Obj(), nullptr, 0);
    JobId b0 = StartTask(ids_.b, 0);
    JobId b1 = StartTask(ids_.b, 1);
    EXPECT_EQ(b1, ids_.b);  // the last task keeps the array's id
    End(cs_, b0, JobState::kCompleted, 0, 400);
    End(cs_, b1, JobState::kCompleted, 0, 400);
    cs_.PurgeOutcomes(20);  // forgets {GONE} only
    ASSERT_EQ(cs_.FindOutcome(ids_.gone), nullptr);
    ASSERT_NE(cs_.FindOutcome(ids_.ok), nullptr);
  }

  JobId StartTask(JobId array, int32_t task) {
    Plan plan;
    PlannedStart s;
    s.job = array;
    s.array_task = task;
    s.partition = "main";
    s.alloc.nodes.push_back({0, 1, 0, 0, 1, {}, {}});
    s.time_limit = 3600;
    plan.starts.push_back(s);
    ApplyResult r = cs_.Apply(plan, 100);
    EXPECT_EQ(r.started.size(), 1u);
    return r.start_ids.at(0);
  }

  // `text` with {R}, {P}, {OK}, {BAD}, {CAN}, {GONE}, {A}, {B} replaced by the jobs' ids.
  std::string Expand(std::string text) const {
    const std::pair<const char*, JobId> names[] = {
        {"{R}", ids_.r},     {"{P}", ids_.p},       {"{OK}", ids_.ok}, {"{BAD}", ids_.bad},
        {"{CAN}", ids_.can}, {"{GONE}", ids_.gone}, {"{A}", ids_.a},   {"{B}", ids_.b}};
    for (const auto& [token, id] : names) {
      for (size_t at; (at = text.find(token)) != std::string::npos;) {
        text.replace(at, std::string(token).size(), std::to_string(id));
      }
    }
    return text;
  }

  // Evaluates `text` for a job of `user` named `name` (array task `task`, or -1).
  DepStatus Evaluate(const std::string& text, int32_t task = -1, const std::string& name = "",
                     const std::string& user = "alice") {
    JobEntry e = *cs_.FindEntry(ids_.p);
    e.job.spec.Mut().dependency = Dep(Expand(text));
    e.job.spec.Mut().name = name;
    for (size_t u = 0; u < cs_.users().size(); ++u) {
      if (cs_.users()[u] == user) e.user = static_cast<int32_t>(u);
    }
    PassState pass(cs_, kNow);
    return EvaluateDependency(pass, e, task);
  }

  ClusterState cs_ = MakeCluster()
                         .Nodes("n", 1, 64, 64000)
                         .Account(Acct("lab"))
                         .User(UserIn("alice", "lab"))
                         .User(UserIn("bob", "lab"))
                         .Build();
  DepIds ids_{};
};

// For readable failures: gtest prints the enum's bytes otherwise.
std::string Name(DepStatus s) {
  switch (s) {
    case DepStatus::kSatisfied:
      return "satisfied";
    case DepStatus::kWaiting:
      return "waiting";
    case DepStatus::kNever:
      return "never";
  }
  return "?";
}

constexpr DepStatus kSat = DepStatus::kSatisfied;
constexpr DepStatus kWait = DepStatus::kWaiting;
constexpr DepStatus kNever = DepStatus::kNever;

TEST_F(DependencyEvalTest, EveryType) {
  struct Row {
    const char* text;
    DepStatus want;
  } rows[] = {
      {"after:{R}", kSat},
      {"after:{P}", kWait},
      {"after:{OK}", kSat},
      {"after:{CAN}", kSat},  // cancelled before starting counts as started
      {"afterany:{R}", kWait},
      {"afterany:{P}", kWait},
      {"afterany:{OK}", kSat},
      {"afterany:{BAD}", kSat},
      {"afterany:{CAN}", kSat},
      {"afterok:{R}", kWait},
      {"afterok:{P}", kWait},
      {"afterok:{OK}", kSat},
      {"afterok:{BAD}", kNever},
      {"afterok:{CAN}", kNever},
      {"afternotok:{R}", kWait},
      {"afternotok:{OK}", kNever},
      {"afternotok:{BAD}", kSat},
      {"afternotok:{CAN}", kSat},
      // Several targets in one condition: every one must hold.
      {"afterok:{OK}:{R}", kWait},
      {"afterok:{OK}:{BAD}", kNever},
      {"afterany:{OK}:{BAD}", kSat},
  };
  for (const Row& r : rows) EXPECT_EQ(Name(Evaluate(r.text)), Name(r.want)) << Expand(r.text);
}

// after:ID+MIN: MIN minutes after the target started (R at 100).
TEST_F(DependencyEvalTest, AfterWithDelay) {
  EXPECT_EQ(Name(Evaluate("after:{R}+15")), Name(kSat));  // 100 + 900 <= 1000
  JobEntry e = *cs_.FindEntry(ids_.p);
  e.job.spec.Mut().dependency = Dep(Expand("after:{R}+20"));  // 100 + 1200 > 1000
  PassState pass(cs_, kNow);
  EXPECT_EQ(Name(EvaluateDependency(pass, e, -1)), Name(kWait));
  EXPECT_EQ(pass.wake_at(), 1300);
  PassState later(cs_, 1300);
  EXPECT_EQ(Name(EvaluateDependency(later, e, -1)), Name(kSat));
}

// The delay counts from the target's start, also once it has ended (dependency.h: "target
// started ..., then waited MIN minutes"). {OK} started at 100 and ended at 200: +15 minutes is
// 100 + 900 = 1000 <= kNow, so satisfied (counting from the end, 200 + 900 = 1100, it waits).
TEST_F(DependencyEvalTest, AfterDelayCountsFromTheStartOfAnEndedTarget) {
  EXPECT_EQ(Name(Evaluate("after:{OK}+15")), Name(kSat));
}

TEST_F(DependencyEvalTest, AllAndAny) {
  struct Row {
    const char* text;
    DepStatus want;
  } rows[] = {
      // ",": every condition.
      {"afterok:{OK},afterany:{R}", kWait},
      {"afterok:{OK},afterany:{BAD}", kSat},
      {"afterok:{BAD},afterany:{R}", kNever},  // one can never hold: never, though one waits
      // "?": any condition.
      {"afterok:{BAD}?afterany:{R}", kWait},
      {"afterok:{BAD}?afterany:{OK}", kSat},
      {"afterok:{R}?afterany:{OK}", kSat},
      {"afterok:{BAD}?afternotok:{OK}", kNever},
  };
  for (const Row& r : rows) EXPECT_EQ(Name(Evaluate(r.text)), Name(r.want)) << Expand(r.text);
}

TEST_F(DependencyEvalTest, Singleton) {
  EXPECT_EQ(Name(Evaluate("singleton", -1, "solo", "alice")), Name(kWait));  // R is alice's "solo"
  EXPECT_EQ(Name(Evaluate("singleton", -1, "other", "alice")), Name(kSat));
  EXPECT_EQ(Name(Evaluate("singleton", -1, "solo", "bob")), Name(kSat));
}

TEST_F(DependencyEvalTest, Arrays) {
  struct Row {
    const char* text;
    int32_t task;
    DepStatus want;
  } rows[] = {
      // One task.
      {"afterok:{A}_0", -1, kSat},
      {"afterok:{A}_1", -1, kNever},
      {"afterok:{A}_2", -1, kWait},  // not started yet
      {"afterany:{A}_1", -1, kSat},
      // The whole array: every task.
      {"afterok:{A}", -1, kNever},  // task 1 failed
      {"afterany:{A}", -1, kWait},  // task 2 has not run
      {"after:{A}", -1, kWait},     // task 2 has not started
      {"afterok:{B}", -1, kSat},
      {"afterany:{B}", -1, kSat},
      {"afternotok:{B}", -1, kNever},
      {"afterok:{B}_1", -1, kSat},  // the task that kept the array's id
      // aftercorr: task N waits for task N.
      {"aftercorr:{A}", 0, kSat},
      {"aftercorr:{A}", 1, kNever},
      {"aftercorr:{A}", 2, kWait},
      {"aftercorr:{B}", 1, kSat},
  };
  for (const Row& r : rows) {
    EXPECT_EQ(Name(Evaluate(r.text, r.task)), Name(r.want)) << Expand(r.text) << " task " << r.task;
  }
}

// A target whose record is gone (purged, or never known here) no longer holds the job: Slurm
// lifts such a dependency ("job is gone, dependency lifted").
TEST_F(DependencyEvalTest, PurgedTargets) {
  for (const char* text : {"after:{GONE}", "afterany:{GONE}", "afterok:{GONE}", "afterok:99999"}) {
    EXPECT_EQ(Name(Evaluate(text)), Name(kSat)) << Expand(text);
  }
}

// The same for afternotok: expected satisfied (lifted), as for every other type.
TEST_F(DependencyEvalTest, PurgedTargetAfterNotOk) {
  EXPECT_EQ(Name(Evaluate("afternotok:{GONE}")), Name(kSat));
  EXPECT_EQ(Name(Evaluate("afternotok:99999")), Name(kSat));
}

}  // namespace
}  // namespace berth::core
