#include "core/state/cluster_state.h"

#include <gtest/gtest.h>

#include <optional>

#include "core/sched/scheduler.h"
#include "core/testing/builders.h"

namespace berth::core {
namespace {

using testing::MakeCluster;
using testing::MakeJob;
using testing::MakePartition;

std::optional<PendingInfo> PendingOf(const Plan& plan, JobId id) {
  for (const PendingInfo& p : plan.pending) {
    if (p.job == id) return p;
  }
  return std::nullopt;
}

PlannedStart StartOn(const ClusterState& cs, JobId job, const char* node, int32_t cpus, int64_t mem,
                     uint64_t gpus, Duration limit = 3600) {
  PlannedStart s;
  s.job = job;
  s.partition = cs.partitions()[0].spec.name;
  NodeAllocation a;
  a.node = *cs.FindNode(node);
  a.cpus = cpus;
  a.mem_mib = mem;
  a.gpu_mask = gpus;
  a.tasks = 1;
  s.alloc.nodes.push_back(a);
  s.time_limit = limit;
  return s;
}

TEST(ClusterStateTest, CreateValidates) {
  ClusterSpec dup = MakeCluster().Nodes("n", 1, 4, 100).Spec();
  dup.nodes.push_back(dup.nodes[0]);
  EXPECT_FALSE(ClusterState::Create(dup).ok());

  ClusterSpec bad_part = MakeCluster().Nodes("n", 1, 4, 100).Spec();
  bad_part.partitions.push_back(MakePartition("p", {"nope"}));
  Result<ClusterState> r = ClusterState::Create(bad_part);
  ASSERT_FALSE(r.ok());
  EXPECT_NE(r.status().message().find("unknown node 'nope'"), std::string::npos);

  ClusterSpec cycle = MakeCluster().Nodes("n", 1, 4, 100).Spec();
  cycle.accounts.push_back({"a", "b", 1, {}, -1});
  cycle.accounts.push_back({"b", "a", 1, {}, -1});
  EXPECT_FALSE(ClusterState::Create(cycle).ok());

  ClusterSpec zero_cpu = MakeCluster().Nodes("n", 1, 0, 100).Spec();
  EXPECT_FALSE(ClusterState::Create(zero_cpu).ok());
}

TEST(ClusterStateTest, JobsPlacedAlikeShareAShapeIdAndOthersDoNot) {
  ClusterState cs = MakeCluster().Nodes("c", 2, 8, 16000).Build();
  auto shape_of = [&](const JobSpec& spec) {
    const JobEntry* e = cs.FindEntry(*cs.Submit(spec, nullptr, 0));
    EXPECT_EQ(e->shape_ids.size(), 1u);
    return e->shape_ids.at(0);
  };
  const int32_t one = shape_of(MakeJob().CpusPerTask(1).Obj());
  EXPECT_EQ(shape_of(MakeJob().CpusPerTask(1).Obj()), one);
  const int32_t two = shape_of(MakeJob().CpusPerTask(2).Obj());
  const int32_t excluding = shape_of(MakeJob().CpusPerTask(1).Exclude({"c01"}).Obj());
  const int32_t other_node = shape_of(MakeJob().CpusPerTask(1).Exclude({"c02"}).Obj());
  EXPECT_EQ(shape_of(MakeJob().CpusPerTask(1).Obj()), one);  // back to the first after others
  EXPECT_EQ(shape_of(MakeJob().CpusPerTask(2).Obj()), two);
  EXPECT_NE(one, two);
  EXPECT_NE(one, excluding);
  EXPECT_NE(excluding, other_node);
  EXPECT_NE(two, excluding);
  EXPECT_EQ(cs.num_shape_ids(), 4);
}

TEST(ClusterStateTest, DefaultPartitionAndQos) {
  ClusterState cs = MakeCluster().Nodes("n", 3, 4, 100).Build();
  ASSERT_EQ(cs.partitions().size(), 1u);
  EXPECT_EQ(cs.partitions()[0].spec.name, "main");
  EXPECT_EQ(cs.partitions()[0].total_nodes, 3);
  EXPECT_TRUE(cs.FindQos("normal").has_value());
}

// Kubernetes pods wait (Unschedulable) instead of a refusal; the other checks still apply, and
// such a job does not stop others from starting.
TEST(ClusterStateTest, WaitIfInfeasibleAcceptsWhatNoNodeCanHold) {
  ClusterState cs = MakeCluster().Nodes("n", 2, 8, 16000, 2, "a100").Build();
  JobSpec big = MakeJob().GpusPerNode(3).Obj();
  big.wait_if_infeasible = true;
  Result<JobId> id = cs.Submit(big, nullptr, 0);
  ASSERT_TRUE(id.ok()) << id.status().message();
  JobSpec bad = MakeJob().Partition("nope").Obj();
  bad.wait_if_infeasible = true;
  EXPECT_FALSE(cs.Submit(bad, nullptr, 0).ok());
  Result<JobId> small = cs.Submit(MakeJob().GpusPerNode(1).Obj(), nullptr, 0);
  ASSERT_TRUE(small.ok());
  Plan plan = Schedule(cs, 0, SchedulerConfig::Fcfs());
  ASSERT_EQ(plan.starts.size(), 1u);
  EXPECT_EQ(plan.starts[0].job, *small);
  bool reported = false;
  for (const PendingInfo& p : plan.pending) {
    if (p.job == *id) reported = p.reason != PendingReason::kNone;
  }
  EXPECT_TRUE(reported) << "the waiting job says why it waits";
}

// As Slurm (select_nodes answers ESLURM_JOB_HELD before it looks at the nodes): a held job is
// accepted even when no node could ever hold it (`sbatch --hold -c 300` on 256-CPU nodes), and
// once released it waits as BadConstraints; the same job not held is refused.
TEST(ClusterStateTest, AHeldJobNoNodeCanHoldIsAcceptedAndWaitsAsBadConstraints) {
  ClusterState cs = MakeCluster().Nodes("n", 2, 8, 16000).Build();
  Result<JobId> refused = cs.Submit(MakeJob().CpusPerTask(9).Obj(), nullptr, 0);
  ASSERT_FALSE(refused.ok());
  EXPECT_EQ(refused.status().message(), "Requested node configuration is not available");
  Result<JobId> id = cs.Submit(MakeJob().CpusPerTask(9).Hold().Obj(), nullptr, 0);
  ASSERT_TRUE(id.ok()) << id.status().message();
  // A feature no node has is refused all the same (Slurm checks features before any hold).
  JobSpec unknown = MakeJob().Hold().Obj();
  unknown.constraint = *Constraint::Parse("nosuch");
  Result<JobId> bad = cs.Submit(unknown, nullptr, 0);
  ASSERT_FALSE(bad.ok());
  EXPECT_EQ(bad.status().message(), "Invalid feature specification");
  // So is a node count larger than the partition.
  bad = cs.Submit(MakeJob().Nodes(3).Hold().Obj(), nullptr, 0);
  ASSERT_FALSE(bad.ok());
  EXPECT_EQ(bad.status().message(), "Requested node configuration is not available");
  std::optional<PendingInfo> p = PendingOf(Schedule(cs, 0, SchedulerConfig::Fcfs()), *id);
  ASSERT_TRUE(p.has_value());
  EXPECT_EQ(p->reason, PendingReason::kJobHeldUser);
  // Held, it may still change (scontrol update) without being matched against the nodes.
  JobSpec renamed = cs.FindJob(*id)->spec;
  renamed.name = "renamed";
  EXPECT_TRUE(cs.UpdatePendingSpec(*id, renamed).ok());
  ASSERT_TRUE(cs.Release(*id, 1).ok());
  Plan plan = Schedule(cs, 1, SchedulerConfig::Fcfs());
  EXPECT_TRUE(plan.starts.empty());
  p = PendingOf(plan, *id);
  ASSERT_TRUE(p.has_value());
  EXPECT_EQ(PendingReasonName(p->reason), "BadConstraints");
  EXPECT_EQ(p->detail, "no node of partition main could ever hold it");
  // A job that fits still starts beside it.
  Result<JobId> small = cs.Submit(MakeJob().CpusPerTask(8).Obj(), nullptr, 1);
  ASSERT_TRUE(small.ok());
  plan = Schedule(cs, 1, SchedulerConfig::Fcfs());
  ASSERT_EQ(plan.starts.size(), 1u);
  EXPECT_EQ(plan.starts[0].job, *small);
}

TEST(ClusterStateTest, SubmitRejectsWhatCanNeverRun) {
  ClusterState cs = MakeCluster().Nodes("n", 2, 8, 16000, 2, "a100").License("matlab", 2).Build();
  struct Case {
    JobSpec spec;
    const char* message;
  } cases[] = {
      {MakeJob().Nodes(3).Obj(), "Requested node configuration is not available"},
      {MakeJob().CpusPerTask(9).Obj(), "Requested node configuration is not available"},
      {MakeJob().GpusPerNode(3).Obj(), "Requested node configuration is not available"},
      {MakeJob().Mem(16001).Obj(), "Requested node configuration is not available"},
      {MakeJob().Partition("nope").Obj(), "invalid partition specified: nope"},
      {MakeJob().QosName("gold").Obj(), "Invalid qos specification"},
      {MakeJob().NodeList({"x9"}).Obj(), "Invalid node name specified: x9"},
      {MakeJob().License("matlab", 3).Obj(), "Invalid license specification: matlab"},
      {MakeJob().Time(0).Obj(), "Invalid time limit specification"},
      {MakeJob().Array({0, 5000}).Obj(), "Invalid job array specification"},
  };
  for (const Case& c : cases) {
    Result<JobId> r = cs.Submit(c.spec, nullptr, 0);
    ASSERT_FALSE(r.ok()) << c.message;
    EXPECT_NE(r.status().message().find(c.message), std::string::npos) << r.status().message();
  }
  EXPECT_TRUE(cs.pending_ids().empty()) << "a rejected submit must leave nothing behind";
  EXPECT_EQ(cs.next_job_id(), 1u);
}

TEST(ClusterStateTest, DependencyOnUnknownJobIsRejected) {
  ClusterState cs = MakeCluster().Nodes("n", 1, 8, 16000).Build();
  Dependency d;
  d.conditions.push_back({DependencyType::kAfterOk, {{42, kAllArrayTasks, 0}}});
  Result<JobId> r = cs.Submit(MakeJob().Depend(d).Obj(), nullptr, 0);
  ASSERT_FALSE(r.ok());
  EXPECT_NE(r.status().message().find("Job dependency problem"), std::string::npos);
}

TEST(ClusterStateTest, IdsIncreaseAndSubmitTimeIsNow) {
  ClusterState cs = MakeCluster().Nodes("n", 1, 8, 16000).Build();
  EXPECT_EQ(*cs.Submit(MakeJob().Obj(), nullptr, 10), 1u);
  EXPECT_EQ(*cs.Submit(MakeJob().Obj(), nullptr, 11), 2u);
  EXPECT_FALSE(cs.SubmitWithId(2, MakeJob().Obj(), nullptr, 12).ok());
  EXPECT_EQ(*cs.SubmitWithId(100, MakeJob().Obj(), nullptr, 12), 100u);
  EXPECT_EQ(*cs.Submit(MakeJob().Obj(), nullptr, 13), 101u);
  EXPECT_EQ(cs.FindJob(2)->spec->submit_time, 11);
  EXPECT_EQ(cs.FindJob(1)->spec->account, "default");
  EXPECT_EQ(cs.FindJob(1)->spec->qos, "normal");
}

TEST(ClusterStateTest, ApplyAllocatesAndEndReleases) {
  ClusterState cs = MakeCluster().Nodes("g", 1, 16, 64000, 4, "h100").Build();
  JobId id = *cs.Submit(MakeJob().GpusPerNode(2).CpusPerTask(4).Obj(), nullptr, 0);
  Plan plan;
  plan.starts.push_back(StartOn(cs, id, "g01", 4, 8000, 0b0011));
  ApplyResult r = cs.Apply(plan, 5);
  ASSERT_EQ(r.started, std::vector<JobId>{id});
  const NodeInfo& n = cs.node(0);
  EXPECT_EQ(n.free_cpus, 12);
  EXPECT_EQ(n.free_mem_mib, 56000);
  EXPECT_EQ(n.free_gpus, 0b1100u);
  EXPECT_EQ(n.state(), NodeState::kMixed);
  EXPECT_TRUE(cs.gpu_buckets()[2].Test(0));
  EXPECT_EQ(cs.FindJob(id)->state, JobState::kRunning);
  EXPECT_EQ(cs.releases().begin()->first, 5 + 3600);
  EXPECT_EQ(cs.QosUserCounters(0, cs.FindEntry(id)->user)->gpus, 2);

  // The same start again no longer fits: refused whole, nothing changes.
  JobId id2 = *cs.Submit(MakeJob().GpusPerNode(2).Obj(), nullptr, 6);
  Plan again;
  again.starts.push_back(StartOn(cs, id2, "g01", 4, 8000, 0b0011));
  ApplyResult r2 = cs.Apply(again, 6);
  EXPECT_TRUE(r2.started.empty());
  ASSERT_EQ(r2.rejected.size(), 1u);
  EXPECT_EQ(cs.FindJob(id2)->state, JobState::kPending);
  EXPECT_EQ(cs.node(0).free_cpus, 12);

  JobOutcome o;
  o.state = JobState::kCompleted;
  o.end_time = 100;
  Job record;
  ASSERT_TRUE(cs.EndJob(id, o, false, &record).ok());
  EXPECT_EQ(record.state, JobState::kCompleted);
  EXPECT_EQ(record.end_time, 100);
  EXPECT_EQ(cs.FindJob(id), nullptr);
  EXPECT_EQ(cs.FindOutcome(id)->state, JobState::kCompleted);
  EXPECT_EQ(cs.node(0).free_cpus, 16);
  EXPECT_EQ(cs.node(0).free_gpus, 0b1111u);
  EXPECT_EQ(cs.node(0).state(), NodeState::kIdle);
  EXPECT_TRUE(cs.releases().empty());
  EXPECT_EQ(cs.QosUserCounters(0, 0)->gpus, 0);
  EXPECT_GT(cs.assocs()[0].usage.value, 0);
}

TEST(ClusterStateTest, RequeueReturnsJobToQueue) {
  ClusterState cs = MakeCluster().Nodes("n", 1, 4, 4000).Build();
  JobId id = *cs.Submit(MakeJob().Obj(), nullptr, 0);
  Plan plan;
  plan.starts.push_back(StartOn(cs, id, "n01", 1, 1000, 0));
  (void)cs.Apply(plan, 0);
  JobOutcome o;
  o.state = JobState::kNodeFail;
  o.end_time = 50;
  ASSERT_TRUE(cs.EndJob(id, o, /*requeue=*/true).ok());
  const Job* j = cs.FindJob(id);
  ASSERT_NE(j, nullptr);
  EXPECT_EQ(j->state, JobState::kPending);
  EXPECT_EQ(j->restart_count, 1);
  EXPECT_TRUE(j->alloc.empty());
  EXPECT_EQ(cs.node(0).free_cpus, 4);
  EXPECT_FALSE(cs.EndJob(id, o, false).ok()) << "a pending job cannot end";
}

TEST(ClusterStateTest, ArrayTasksGetTheirOwnIdsAndTheLastKeepsTheArrays) {
  ClusterState cs = MakeCluster().Nodes("n", 1, 8, 8000).Build();
  JobId id = *cs.Submit(MakeJob().Array({0, 1, 2}).Obj(), nullptr, 0);
  Plan plan;
  for (int t : {0, 1, 2}) {
    PlannedStart s = StartOn(cs, id, "n01", 1, 100, 0);
    s.array_task = t;
    plan.starts.push_back(s);
  }
  ApplyResult r = cs.Apply(plan, 0);
  EXPECT_EQ(r.started, (std::vector<JobId>{2, 3, 1}));
  EXPECT_EQ(cs.FindJob(2)->array_task_id, 0);
  EXPECT_EQ(cs.FindJob(1)->array_task_id, 2);
  EXPECT_EQ(cs.FindJob(3)->array_job_id, 1u);
  EXPECT_EQ(cs.FindArray(1)->running, 3);
  EXPECT_TRUE(cs.pending_ids().empty());
}

// The pending ids are in submission order while ids follow submit times: a requeue keeps it (same
// id, same submit time); an array task split off later, with its array's older submit time after
// a newer job, ends it; so does a job submitted with an id below one already given.
TEST(ClusterStateTest, PendingInSubmitOrderUntilAnIdComesOutOfOrder) {
  ClusterState cs = MakeCluster().Nodes("n", 1, 8, 8000).Build();
  EXPECT_TRUE(cs.pending_in_submit_order());
  JobId array = *cs.Submit(MakeJob().Array({0, 1}).Obj(), nullptr, 0);
  JobId later = *cs.Submit(MakeJob().Obj(), nullptr, 10);
  EXPECT_TRUE(cs.pending_in_submit_order());
  Plan plan;
  plan.starts.push_back(StartOn(cs, later, "n01", 1, 100, 0));
  cs.Apply(plan, 20);
  JobOutcome preempted;
  preempted.state = JobState::kPreempted;
  preempted.end_time = 30;
  ASSERT_TRUE(cs.EndJob(later, preempted, /*requeue=*/true).ok());
  ASSERT_EQ(cs.pending_ids().count(later), 1u);
  EXPECT_TRUE(cs.pending_in_submit_order());      // requeued: the same id and submit time
  ASSERT_TRUE(cs.SplitArrayTask(array, 1).ok());  // an id above `later`'s, submitted at 0
  EXPECT_FALSE(cs.pending_in_submit_order());

  ClusterState other = MakeCluster().Nodes("n", 1, 8, 8000).Build();
  ASSERT_TRUE(other.SubmitWithId(5, MakeJob().Obj(), nullptr, 0).ok());
  ASSERT_TRUE(other.SubmitWithId(3, MakeJob().Obj(), nullptr, 10).ok());
  EXPECT_FALSE(other.pending_in_submit_order());
}

TEST(ClusterStateTest, SplitArrayTaskGivesAPendingTaskItsOwnRecord) {
  ClusterState cs = MakeCluster().Nodes("n", 1, 8, 8000).Build();
  JobId id = *cs.Submit(MakeJob().Array({0, 1, 2}).Obj(), nullptr, 0);
  Result<JobId> split = cs.SplitArrayTask(id, 1);
  ASSERT_TRUE(split.ok()) << split.status().ToString();
  EXPECT_NE(*split, id);
  EXPECT_EQ(cs.FindJob(*split)->array_task_id, 1);
  EXPECT_EQ(cs.FindJob(*split)->array_job_id, id);
  EXPECT_EQ(cs.FindJob(*split)->state, JobState::kPending);
  EXPECT_EQ(cs.FindJob(id)->spec->array.task_ids, (std::vector<int32_t>{0, 2}));
  EXPECT_EQ(cs.pending_ids().size(), 2u);
  // Asking again finds the same record; an unknown task or array is NotFound.
  EXPECT_EQ(*cs.SplitArrayTask(id, 1), *split);
  EXPECT_EQ(cs.SplitArrayTask(id, 7).status().code(), StatusCode::kNotFound);
  EXPECT_EQ(cs.SplitArrayTask(999, 0).status().code(), StatusCode::kNotFound);
  // Cancelling the split task leaves the others pending in the array.
  ASSERT_TRUE(cs.CancelPending(*split, 5).ok());
  EXPECT_EQ(cs.FindOutcome(*split)->state, JobState::kCancelled);
  EXPECT_EQ(cs.FindJob(id)->spec->array.task_ids, (std::vector<int32_t>{0, 2}));
  // The last task left keeps the array's own id.
  ASSERT_TRUE(cs.SplitArrayTask(id, 0).ok());
  EXPECT_EQ(*cs.SplitArrayTask(id, 2), id);
  EXPECT_EQ(cs.FindJob(id)->array_task_id, 2);
}

TEST(ClusterStateTest, ADrainedNodeKeepsItsReasonWhenItComesBackUp) {
  ClusterState cs = MakeCluster().Nodes("n", 1, 8, 8000).Build();
  ASSERT_TRUE(cs.SetNodeDrain(0, true, "bad fan", 1).ok());
  ASSERT_TRUE(cs.SetNodeHealth(0, NodeHealth::kDown, "Not responding", 2).ok());
  EXPECT_EQ(cs.node(0).reason, "Not responding");
  // The agent registers again: up, still drained.
  ASSERT_TRUE(cs.SetNodeDrain(0, true, "bad fan", 3).ok());
  ASSERT_TRUE(cs.SetNodeHealth(0, NodeHealth::kUp, "", 3).ok());
  EXPECT_EQ(cs.node(0).reason, "bad fan");
  ASSERT_TRUE(cs.SetNodeDrain(0, false, "", 4).ok());
  ASSERT_TRUE(cs.SetNodeHealth(0, NodeHealth::kDown, "Not responding", 5).ok());
  ASSERT_TRUE(cs.SetNodeHealth(0, NodeHealth::kUp, "", 6).ok());
  EXPECT_EQ(cs.node(0).reason, "");
}

TEST(ClusterStateTest, PrepareSubmitChecksWithoutSubmittingAndThePreparedEntryGoesIn) {
  ClusterState cs = MakeCluster().Nodes("n", 1, 8, 8000).Build();
  Result<JobEntry> first = cs.PrepareSubmit(MakeJob().CpusPerTask(2).Obj());
  Result<JobEntry> second = cs.PrepareSubmit(MakeJob().Obj());
  ASSERT_TRUE(first.ok() && second.ok());
  EXPECT_FALSE(cs.PrepareSubmit(MakeJob().Nodes(2).Obj()).ok());
  EXPECT_TRUE(cs.pending_ids().empty());
  EXPECT_EQ(*cs.SubmitPrepared(std::move(*first), nullptr, 5), 1u);
  EXPECT_EQ(*cs.SubmitPrepared(std::move(*second), nullptr, 6), 2u);
  EXPECT_EQ(*cs.Submit(MakeJob().CpusPerTask(2).Obj(), nullptr, 7), 3u);
  // The same entry as Submit makes of the same request.
  const JobEntry& prepared = *cs.FindEntry(1);
  const JobEntry& submitted = *cs.FindEntry(3);
  EXPECT_EQ(prepared.shape_ids, submitted.shape_ids);
  EXPECT_EQ(prepared.partitions, submitted.partitions);
  EXPECT_EQ(prepared.assoc, submitted.assoc);
  EXPECT_EQ(prepared.job.state, JobState::kPending);
  EXPECT_EQ(prepared.job.spec->submit_time, 5);
  EXPECT_EQ(cs.pending_ids().size(), 3u);
}

TEST(ClusterStateTest, UnknownQosIsRefusedUnlessTheClusterAcceptsAny) {
  ClusterState strict = MakeCluster().Nodes("n", 1, 8, 8000).Build();
  EXPECT_EQ(strict.Submit(MakeJob().QosName("gpu_priority").Obj(), nullptr, 0).status().code(),
            StatusCode::kInvalidArgument);
  ClusterSpec spec = MakeCluster().Nodes("n", 1, 8, 8000).Spec();
  spec.accept_unknown_qos = true;
  Result<ClusterState> lax = ClusterState::Create(spec);
  ASSERT_TRUE(lax.ok());
  Result<JobId> id = lax->Submit(MakeJob().QosName("gpu_priority").Obj(), nullptr, 0);
  ASSERT_TRUE(id.ok()) << id.status().ToString();
  EXPECT_EQ(lax->FindJob(*id)->spec->qos, "normal");
}

TEST(ClusterStateTest, CancelHoldRelease) {
  ClusterState cs = MakeCluster().Nodes("n", 1, 8, 8000).Build();
  JobId id = *cs.Submit(MakeJob().Obj(), nullptr, 0);
  ASSERT_TRUE(cs.Hold(id, HoldKind::kAdmin).ok());
  EXPECT_EQ(cs.FindJob(id)->spec->hold, HoldKind::kAdmin);
  ASSERT_TRUE(cs.Release(id, 30).ok());
  EXPECT_EQ(cs.FindJob(id)->eligible_time, 30);
  ASSERT_TRUE(cs.CancelPending(id, 40).ok());
  EXPECT_EQ(cs.FindOutcome(id)->state, JobState::kCancelled);
  EXPECT_FALSE(cs.CancelPending(id, 41).ok());
  EXPECT_EQ(cs.Hold(999, HoldKind::kUser).code(), StatusCode::kNotFound);
}

TEST(ClusterStateTest, DrainAndDownLeaveTheIndices) {
  ClusterState cs = MakeCluster().Nodes("n", 2, 8, 8000).Build();
  EXPECT_TRUE(cs.usable_nodes().Test(1));
  ASSERT_TRUE(cs.SetNodeDrain(1, true, "maint", 0).ok());
  EXPECT_FALSE(cs.usable_nodes().Test(1));
  EXPECT_FALSE(cs.cpu_free_nodes().Test(1));
  EXPECT_EQ(cs.node(1).state(), NodeState::kDrained);
  ASSERT_TRUE(cs.SetNodeHealth(0, NodeHealth::kDown, "lost", 0).ok());
  EXPECT_EQ(cs.node(0).state(), NodeState::kDown);
  EXPECT_FALSE(cs.gpu_buckets()[0].Test(0));
}

// The scheduler's bound on what any placement can take: free CPUs of usable nodes only, kept
// through starts, ends, drains and downs.
TEST(ClusterStateTest, UsableFreeCpusFollowJobsAndNodeStates) {
  ClusterState cs = MakeCluster().Nodes("n", 3, 8, 8000).Build();
  EXPECT_EQ(cs.usable_free_cpus(), 24);
  JobId id = *cs.Submit(MakeJob().CpusPerTask(3).Obj(), nullptr, 0);
  ApplyResult r = cs.Apply(Schedule(cs, 0, SchedulerConfig::Fcfs()), 0);
  ASSERT_EQ(r.started.size(), 1u);
  EXPECT_EQ(cs.usable_free_cpus(), 21);
  uint32_t used = cs.FindJob(id)->alloc.nodes[0].node;
  uint32_t other = (used + 1) % 3;
  ASSERT_TRUE(cs.SetNodeDrain(other, true, "maint", 1).ok());
  EXPECT_EQ(cs.usable_free_cpus(), 13);
  ASSERT_TRUE(cs.SetNodeHealth(used, NodeHealth::kDown, "lost", 2).ok());
  EXPECT_EQ(cs.usable_free_cpus(), 8);
  ASSERT_TRUE(cs.SetNodeHealth(used, NodeHealth::kUp, "", 3).ok());
  ASSERT_TRUE(cs.SetNodeDrain(other, false, "", 3).ok());
  EXPECT_EQ(cs.usable_free_cpus(), 21);
  JobOutcome done;
  done.state = JobState::kCompleted;
  done.end_time = 4;
  ASSERT_TRUE(cs.EndJob(id, done, /*requeue=*/false, nullptr).ok());
  EXPECT_EQ(cs.usable_free_cpus(), 24);
}

TEST(ClusterStateTest, UnknownUsersAreRefusedWhenEnforcing) {
  ClusterSpec spec = MakeCluster().Nodes("n", 1, 8, 8000).Spec();
  spec.enforce_associations = true;
  spec.accounts.push_back({"ml", "root", 1, {}, -1});
  spec.users.push_back({"alice", "ml", 1, -1, {}, true});
  ClusterState cs = std::move(ClusterState::Create(spec)).value();
  EXPECT_TRUE(cs.Submit(MakeJob().User("alice").Obj(), nullptr, 0).ok());
  Result<JobId> r = cs.Submit(MakeJob().User("mallory").Obj(), nullptr, 0);
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.status().code(), StatusCode::kPermissionDenied);
}

// ForEachPendingEntry gives every pending job once, in id order, and no running one, both when
// the pending jobs are most of the jobs (one merged walk) and when few are (a look-up each).
TEST(ClusterStateTest, ForEachPendingEntryGivesThePendingJobsInIdOrder) {
  for (int running : {3, 40}) {
    SCOPED_TRACE(std::to_string(running) + " running");
    ClusterState cs = MakeCluster().Nodes("n", 1, 64, 0).Build();
    std::vector<JobId> ids;
    for (int i = 0; i < 50; ++i) ids.push_back(*cs.Submit(MakeJob().Obj(), nullptr, 0));
    // Every (50 / running)-th job runs: pending and running ids interleave.
    Plan plan;
    for (int i = 0; i < running; ++i) {
      plan.starts.push_back(
          StartOn(cs, ids[static_cast<size_t>(i * 50 / running)], "n01", 1, 0, 0));
    }
    ASSERT_EQ(cs.Apply(plan, 1).started.size(), static_cast<size_t>(running));
    std::vector<JobId> seen;
    cs.ForEachPendingEntry([&](const JobEntry& e) {
      EXPECT_EQ(e.job.state, JobState::kPending) << e.job.id;
      seen.push_back(e.job.id);
    });
    EXPECT_EQ(seen, std::vector<JobId>(cs.pending_ids().begin(), cs.pending_ids().end()));
    EXPECT_EQ(seen.size(), static_cast<size_t>(50 - running));
  }
}

}  // namespace
}  // namespace berth::core
