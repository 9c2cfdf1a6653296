// GPU shares (JobSpec::gpu_milli): per-device bookkeeping, the device choice, and the rule that a
// device is either held whole or shared, never both.
#include <gtest/gtest.h>

#include <vector>

#include "core/sched/scheduler.h"
#include "core/sched/share_device.h"
#include "core/state/cluster_state.h"
#include "core/state/fit.h"
#include "core/testing/builders.h"

namespace berth::core {
namespace {

using testing::MakeCluster;
using testing::MakeJob;

JobShape ShapeOf(const ClusterState& cs, const JobSpec& spec) {
  Result<JobShape> s = cs.ComputeShape(spec, cs.partitions()[0]);
  EXPECT_TRUE(s.ok()) << s.status().ToString();
  return s.ok() ? *s : JobShape();
}

// Schedules and applies one pass; returns the ids started. Shares go to their device by best fit
// unless `placement` says otherwise (the default, fgd, is tested on its own below).
std::vector<JobId> Pass(ClusterState& cs, Time now,
                        GpuPlacement placement = GpuPlacement::kBestFit) {
  SchedulerConfig cfg;
  cfg.gpu_placement = placement;
  Scheduler sched{cfg};
  Plan plan = sched.Schedule(cs, now);
  return cs.Apply(plan, now).started;
}

const GpuShare& ShareOf(const ClusterState& cs, JobId id) {
  const Job* j = cs.FindJob(id);
  EXPECT_NE(j, nullptr);
  EXPECT_EQ(j->alloc.nodes.size(), 1u);
  EXPECT_EQ(j->alloc.nodes[0].gpu_shares.size(), 1u);
  return j->alloc.nodes[0].gpu_shares[0];
}

TEST(GpuShareTest, ShapeChecksTheShare) {
  ClusterState cs = MakeCluster().Nodes("g", 1, 8, 8000, 2, "h100").Build();
  JobShape s = ShapeOf(cs, MakeJob().GpuMilli(250).Obj());
  EXPECT_EQ(s.gpu_milli, 250);
  EXPECT_EQ(s.gpus, 0);
  EXPECT_FALSE(s.task_mode);
  // Several tasks with a share stay on one node (the share is per node).
  EXPECT_FALSE(ShapeOf(cs, MakeJob().Tasks(4).GpuMilli(250).Obj()).task_mode);
  for (int32_t bad : {-1, 1001}) {
    EXPECT_FALSE(cs.ComputeShape(MakeJob().GpuMilli(bad).Obj(), cs.partitions()[0]).ok()) << bad;
  }
  EXPECT_FALSE(
      cs.ComputeShape(MakeJob().GpuMilli(500).GpusPerTask(1).Obj(), cs.partitions()[0]).ok());
  JobSpec both = MakeJob().GpusPerNode(1).Obj();
  both.gpu_milli = 500;
  Result<JobShape> r = cs.ComputeShape(both, cs.partitions()[0]);
  ASSERT_FALSE(r.ok());
  EXPECT_NE(r.status().message().find("GPU share and whole GPUs"), std::string::npos);
  // A node without GPUs can never hold a share; the submission is refused as Slurm refuses gres
  // no node has.
  ClusterState cpu = MakeCluster().Nodes("c", 1, 8, 8000).Build();
  EXPECT_FALSE(cpu.Submit(MakeJob().GpuMilli(100).Obj(), nullptr, 0).ok());
}

TEST(GpuShareTest, ChooseShareDeviceIsBestFit) {
  ClusterState cs = MakeCluster().Nodes("g", 1, 8, 8000, 4, "h100").Build();
  NodeFree f = NodeFree::Of(cs.node(0));
  // Device 0 held whole, device 1 shared 700, device 2 shared 400, device 3 free.
  f.gpus = 0b1000;
  f.gpu_milli = {0, 700, 400, 0};
  EXPECT_EQ(f.ShareRoom(0), 0);
  EXPECT_EQ(f.ShareRoom(1), 300);
  EXPECT_EQ(f.ShareRoom(3), 1000);
  EXPECT_EQ(ChooseShareDevice(0b1111, f, 300), 1);   // exactly fills device 1
  EXPECT_EQ(ChooseShareDevice(0b1111, f, 301), 2);   // the least room left that still fits
  EXPECT_EQ(ChooseShareDevice(0b1111, f, 700), 3);   // only the free device has room
  EXPECT_EQ(ChooseShareDevice(0b0111, f, 700), -1);  // ...and it is not allowed (type)
  EXPECT_EQ(ChooseShareDevice(0b1111, f, 1000), 3);
}

TEST(GpuShareTest, SharesFillOneDeviceUpToItsCapacity) {
  ClusterState cs = MakeCluster().Nodes("g", 1, 16, 16000, 2, "h100").Build();
  std::vector<JobId> ids;
  for (int32_t m : {500, 300, 200, 600}) {
    ids.push_back(*cs.Submit(MakeJob().GpuMilli(m).Mem(100).Obj(), nullptr, 0));
  }
  EXPECT_EQ(Pass(cs, 0).size(), 4u);
  // 500 on device 0; 300 joins it (best fit, not the free device 1); 200 fills it to 1000;
  // 600 needs room only the free device 1 has.
  EXPECT_EQ(ShareOf(cs, ids[0]).device, 0);
  EXPECT_EQ(ShareOf(cs, ids[1]).device, 0);
  EXPECT_EQ(ShareOf(cs, ids[2]).device, 0);
  EXPECT_EQ(ShareOf(cs, ids[3]).device, 1);
  EXPECT_EQ(ShareOf(cs, ids[3]).milli, 600);
  const NodeInfo& n = cs.node(0);
  EXPECT_EQ(n.free_gpus, 0u) << "shared devices are not free for whole GPUs";
  EXPECT_EQ(n.gpu_share_milli, (std::vector<int32_t>{1000, 600}));
  EXPECT_TRUE(cs.gpu_buckets()[0].Test(0));
  EXPECT_EQ(n.state(), NodeState::kMixed);
  // A whole-GPU job now waits; another 400 share still fits on device 1.
  JobId whole = *cs.Submit(MakeJob().GpusPerNode(1).Obj(), nullptr, 1);
  JobId more = *cs.Submit(MakeJob().GpuMilli(400).Mem(100).Obj(), nullptr, 1);
  EXPECT_EQ(Pass(cs, 1), std::vector<JobId>{more});
  EXPECT_EQ(ShareOf(cs, more).device, 1);
  EXPECT_EQ(cs.FindJob(whole)->state, JobState::kPending);
}

TEST(GpuShareTest, AWholeDeviceNeverTakesShares) {
  ClusterState cs = MakeCluster().Nodes("g", 1, 16, 16000, 1, "h100").Build();
  JobId whole = *cs.Submit(MakeJob().GpusPerNode(1).Obj(), nullptr, 0);
  ASSERT_EQ(Pass(cs, 0).size(), 1u);
  JobId share = *cs.Submit(MakeJob().GpuMilli(100).Obj(), nullptr, 1);
  EXPECT_TRUE(Pass(cs, 1).empty());
  EXPECT_EQ(cs.FindJob(share)->state, JobState::kPending);
  JobOutcome o;
  o.state = JobState::kCompleted;
  o.end_time = 2;
  ASSERT_TRUE(cs.EndJob(whole, o, false).ok());
  EXPECT_EQ(Pass(cs, 2), std::vector<JobId>{share});
}

TEST(GpuShareTest, EndAndRequeueFreeTheShareExactly) {
  ClusterState cs = MakeCluster().Nodes("g", 1, 16, 16000, 1, "h100").Build();
  JobId a = *cs.Submit(MakeJob().GpuMilli(250).Mem(100).Obj(), nullptr, 0);
  JobId b = *cs.Submit(MakeJob().GpuMilli(250).Mem(100).Obj(), nullptr, 0);
  ASSERT_EQ(Pass(cs, 0).size(), 2u);
  EXPECT_EQ(cs.node(0).gpu_share_milli, std::vector<int32_t>{500});
  JobOutcome o;
  o.state = JobState::kNodeFail;
  o.end_time = 5;
  ASSERT_TRUE(cs.EndJob(a, o, /*requeue=*/true).ok());
  EXPECT_EQ(cs.node(0).gpu_share_milli, std::vector<int32_t>{250});
  EXPECT_EQ(cs.node(0).free_gpus, 0u);
  EXPECT_TRUE(cs.FindJob(a)->alloc.empty());
  o.state = JobState::kCompleted;
  ASSERT_TRUE(cs.EndJob(b, o, false).ok());
  EXPECT_TRUE(cs.node(0).gpu_share_milli.empty());
  EXPECT_EQ(cs.node(0).free_gpus, 1u) << "the last share gone, the device is free again";
  EXPECT_EQ(cs.node(0).state(), NodeState::kIdle);
  // The requeued job starts again.
  EXPECT_EQ(Pass(cs, 6), std::vector<JobId>{a});
}

TEST(GpuShareTest, RestorePutsSharesBackExactly) {
  ClusterState cs = MakeCluster().Nodes("g", 1, 16, 16000, 2, "h100").Build();
  JobId a = *cs.Submit(MakeJob().GpuMilli(300).Mem(100).Obj(), nullptr, 0);
  JobId b = *cs.Submit(MakeJob().GpuMilli(900).Mem(100).Obj(), nullptr, 0);
  ASSERT_EQ(Pass(cs, 0).size(), 2u);
  ClusterState fresh = MakeCluster().Nodes("g", 1, 16, 16000, 2, "h100").Build();
  for (JobId id : {a, b}) ASSERT_TRUE(fresh.Restore(*cs.FindJob(id)).ok());
  EXPECT_EQ(fresh.node(0).gpu_share_milli, cs.node(0).gpu_share_milli);
  EXPECT_EQ(fresh.node(0).free_gpus, cs.node(0).free_gpus);
  EXPECT_EQ(fresh.FindJob(a)->alloc, cs.FindJob(a)->alloc);
}

TEST(GpuShareTest, ApplyRefusesAShareThatNoLongerFits) {
  ClusterState cs = MakeCluster().Nodes("g", 1, 16, 16000, 1, "h100").Build();
  JobId a = *cs.Submit(MakeJob().GpuMilli(600).Mem(100).Obj(), nullptr, 0);
  JobId b = *cs.Submit(MakeJob().GpuMilli(600).Mem(100).Obj(), nullptr, 0);
  Scheduler sched{SchedulerConfig{}};
  Plan pa = sched.Schedule(cs, 0);
  ASSERT_EQ(pa.starts.size(), 1u);
  // A plan that puts b on the same device as a, computed before a started, is refused whole.
  Plan pb = pa;
  pb.starts[0].job = b;
  ASSERT_EQ(cs.Apply(pa, 0).started, std::vector<JobId>{a});
  ApplyResult r = cs.Apply(pb, 0);
  EXPECT_TRUE(r.started.empty());
  ASSERT_EQ(r.rejected.size(), 1u);
  EXPECT_EQ(cs.node(0).gpu_share_milli, std::vector<int32_t>{600});
}

TEST(GpuShareTest, TypedSharesGoToTheirType) {
  NodeSpec g;
  g.name = "g01";
  g.cpus = 8;
  g.mem_mib = 8000;
  g.gpus = {"a100", "h100"};
  ClusterState cs = *ClusterState::Create(MakeCluster().Node(g).Spec());
  JobId h = *cs.Submit(MakeJob().GpuMilli(100, "h100").Mem(10).Obj(), nullptr, 0);
  JobId any = *cs.Submit(MakeJob().GpuMilli(100).Mem(10).Obj(), nullptr, 0);
  ASSERT_EQ(Pass(cs, 0).size(), 2u);
  EXPECT_EQ(ShareOf(cs, h).device, 1);
  EXPECT_EQ(ShareOf(cs, any).device, 1) << "best fit: the device already shared";
}

// Each GpuPlacement's device for a share of 300 on one node whose three devices have 1000, 400
// and 700 free (device 0 free, 1 and 2 shared), computed by hand:
//   first-fit    the lowest device with room: 0.
//   best-fit     the fullest device with room: 1 (400 free).
//   dot-product  equal CPU terms; the GPU term grows with the device's free milli: 1.
//   gpu-packing  a device in use, the fullest first: 1.
//   fgd          against a workload of 400 shares, fragmentation F = free milli on devices that
//                cannot take 400. Before: 0. On 0 -> {700,400,700}: 0; on 1 -> {1000,100,700}:
//                100; on 2 -> {1000,400,400}: 0. 0 and 2 tie at +0; gpu-packing's tiers prefer
//                the device in use: 2.
TEST(GpuShareTest, EachPlacementChoosesItsDevice) {
  ClusterState cs = MakeCluster().Nodes("g", 1, 8, 8000, 3, "h100").Build();
  const NodeInfo& n = cs.node(0);
  NodeFree f = NodeFree::Of(n);
  f.gpus = 0b001;
  f.gpu_milli = {0, 600, 300};
  JobShape shape = ShapeOf(cs, MakeJob().GpuMilli(300).Obj());
  GpuRequest workload_shape;
  workload_shape.share_milli = 400;
  const std::pair<GpuPlacement, int> want[] = {
      {GpuPlacement::kFirstFit, 0},   {GpuPlacement::kBestFit, 1}, {GpuPlacement::kDotProduct, 1},
      {GpuPlacement::kGpuPacking, 1}, {GpuPlacement::kFgd, 2},
  };
  for (const auto& [policy, device] : want) {
    ShareDevicePicker picker(policy);
    picker.SetWorkload({{workload_shape}, {}});
    EXPECT_EQ(picker.Choose(n, f, 0b111, shape), device) << GpuPlacementName(policy);
    // Only devices of the allowed type (here 1 and 2) are ever chosen.
    EXPECT_NE(picker.Choose(n, f, 0b110, shape), 0) << GpuPlacementName(policy);
    // No device with room: -1.
    EXPECT_EQ(picker.Choose(n, f, 0b110, ShapeOf(cs, MakeJob().GpuMilli(800).Obj())), -1);
  }
  // fgd without a workload: every device scores alike; gpu-packing's order decides (fullest).
  ShareDevicePicker bare(GpuPlacement::kFgd);
  EXPECT_EQ(bare.Choose(n, f, 0b111, shape), 1);
}

// The configured placement reaches the scheduler: with device 0 free again and device 1 half
// shared, a share of 300 goes to device 0 under first-fit and to device 1 under best-fit.
TEST(GpuShareTest, GpuPlacementPicksTheDeviceOfAStartingShare) {
  for (auto [policy, device] :
       {std::pair{GpuPlacement::kFirstFit, 0}, std::pair{GpuPlacement::kBestFit, 1},
        std::pair{GpuPlacement::kGpuPacking, 1}}) {
    SCOPED_TRACE(std::string(GpuPlacementName(policy)));
    ClusterState cs = MakeCluster().Nodes("g", 1, 16, 16000, 2, "h100").Build();
    JobId a = *cs.Submit(MakeJob().GpuMilli(600).Mem(100).Obj(), nullptr, 0);
    JobId b = *cs.Submit(MakeJob().GpuMilli(500).Mem(100).Obj(), nullptr, 0);
    ASSERT_EQ(Pass(cs, 0, policy).size(), 2u);
    ASSERT_EQ(ShareOf(cs, a).device, 0);
    ASSERT_EQ(ShareOf(cs, b).device, 1);
    JobOutcome o;
    o.state = JobState::kCompleted;
    o.end_time = 5;
    ASSERT_TRUE(cs.EndJob(a, o, false).ok());
    JobId c = *cs.Submit(MakeJob().GpuMilli(300).Mem(100).Obj(), nullptr, 6);
    ASSERT_EQ(Pass(cs, 6, policy), std::vector<JobId>{c});
    EXPECT_EQ(ShareOf(cs, c).device, device);
  }
}

// The policy also chooses the NODE of a single-node GPU job among those that fit. Two empty GPU
// nodes, g02 with 12 of its 16 CPUs taken by a CPU-only job; x (2 CPUs, 1 GPU) then y (8 CPUs,
// 1 GPU) wait. first-fit and gpu-packing (both nodes' GPUs wholly free: a tie) take the first
// node, g01; best-fit and dot-product the node with the least left, g02; fgd g02 as well, where
// x fragments nothing that y could use (g02 could never give y its 8 CPUs).
TEST(GpuShareTest, GpuPlacementChoosesTheNodeOfAGpuJob) {
  for (auto [policy, node] :
       {std::pair{GpuPlacement::kFirstFit, 0u}, std::pair{GpuPlacement::kBestFit, 1u},
        std::pair{GpuPlacement::kDotProduct, 1u}, std::pair{GpuPlacement::kGpuPacking, 0u},
        std::pair{GpuPlacement::kFgd, 1u}}) {
    SCOPED_TRACE(std::string(GpuPlacementName(policy)));
    ClusterState cs = MakeCluster().Nodes("g", 2, 16, 16000, 2, "h100").Build();
    JobId cpu = *cs.Submit(MakeJob().CpusPerTask(12).Mem(100).NodeList({"g02"}).Obj(), nullptr, 0);
    ASSERT_EQ(Pass(cs, 0, policy), std::vector<JobId>{cpu});
    JobId x = *cs.Submit(MakeJob().CpusPerTask(2).Mem(100).GpusPerNode(1).Obj(), nullptr, 1);
    JobId y = *cs.Submit(MakeJob().CpusPerTask(8).Mem(100).GpusPerNode(1).Obj(), nullptr, 2);
    ASSERT_EQ(Pass(cs, 3, policy).size(), 2u);
    EXPECT_EQ(cs.FindJob(x)->alloc.nodes[0].node, node);
    EXPECT_EQ(cs.FindJob(y)->alloc.nodes[0].node, 0u);
  }
}

// fgd's scarcity term in the controller: an untyped GPU job first, then one that needs both
// GPUs of the only h100 node. The h100 node comes first in node order, so first-fit gives it the
// untyped job and the h100 job waits; fgd prices the h100s that typed demand claims and sends
// the untyped job to the a100 node: both start.
TEST(GpuShareTest, FgdLeavesTheScarceModelToTheJobsThatNeedIt) {
  for (auto [policy, started] :
       {std::pair{GpuPlacement::kFirstFit, 1u}, std::pair{GpuPlacement::kFgd, 2u}}) {
    SCOPED_TRACE(std::string(GpuPlacementName(policy)));
    ClusterState cs = MakeCluster()
                          .Nodes("h", 1, 16, 16000, 2, "h100")
                          .Nodes("a", 1, 16, 16000, 2, "a100")
                          .Build();
    JobId any = *cs.Submit(MakeJob().CpusPerTask(1).Mem(100).GpusPerNode(1).Obj(), nullptr, 0);
    *cs.Submit(MakeJob().CpusPerTask(1).Mem(100).GpusPerNode(2, "h100").Obj(), nullptr, 1);
    EXPECT_EQ(Pass(cs, 2, policy).size(), started);
    EXPECT_EQ(cs.node(cs.FindJob(any)->alloc.nodes[0].node).spec.name,
              started == 2 ? "a01" : "h01");
  }
}

}  // namespace
}  // namespace berth::core
