// Advance reservations in the scheduler: who may use reserved nodes, when, and how the main pass
// and backfill plan around a reservation that has not begun yet.
#include "core/sched/resv_view.h"

#include <gtest/gtest.h>

#include "core/sched/scheduler.h"
#include "core/testing/builders.h"

namespace berth::core {
namespace {

using testing::MakeCluster;
using testing::MakeJob;

const PendingInfo* FindPending(const Plan& p, JobId id) {
  for (const PendingInfo& i : p.pending) {
    if (i.job == id) return &i;
  }
  return nullptr;
}

const PlannedStart* FindStart(const Plan& p, JobId id) {
  for (const PlannedStart& s : p.starts) {
    if (s.job == id) return &s;
  }
  return nullptr;
}

ResvSpec Resv(std::string name, Time start, Time end, std::vector<std::string> nodes,
              uint32_t flags = 0) {
  ResvSpec r;
  r.name = std::move(name);
  r.start = start;
  r.end = end;
  r.nodes = std::move(nodes);
  r.users = {"alice"};
  r.flags = flags;
  return r;
}

TEST(ResvOverlapsTest, OneOffAndRepeating) {
  ResvSpec r = Resv("r", 100, 200, {});
  EXPECT_TRUE(ResvOverlaps(r, 150, 160));
  EXPECT_TRUE(ResvOverlaps(r, 0, 101));
  EXPECT_FALSE(ResvOverlaps(r, 0, 100));  // ends as it begins
  EXPECT_FALSE(ResvOverlaps(r, 200, 300));
  r.flags = kResvDaily;
  EXPECT_TRUE(ResvOverlaps(r, 86400 + 150, 86400 + 151));
  EXPECT_FALSE(ResvOverlaps(r, 300, 86400 + 100));
  EXPECT_TRUE(ResvOverlaps(r, 300, kInfinite));
  EXPECT_TRUE(ResvActiveAt(r, 2 * 86400 + 100));
  EXPECT_FALSE(ResvActiveAt(r, 2 * 86400 + 200));
}

TEST(ClusterStateResvTest, AddPicksIdleNodesAndRefusesBusyOnes) {
  ClusterState cs = MakeCluster().Nodes("n", 3, 8, 8000).Build();
  JobId j = *cs.Submit(MakeJob().Time(3600).Exclusive().Obj(), nullptr, 0);
  (void)cs.Apply(Schedule(cs, 0, SchedulerConfig::Fcfs()), 0);
  ASSERT_EQ(cs.FindJob(j)->alloc.nodes[0].node, 0u);
  // n01 still runs the job at 100: busy, unless IGNORE_JOBS.
  Result<std::string> busy = cs.AddReservation(Resv("a", 100, 200, {"n01"}), 0, 0);
  EXPECT_EQ(busy.status().message(), "Requested nodes are busy");
  EXPECT_TRUE(cs.AddReservation(Resv("a", 100, 200, {"n01"}, kResvIgnoreJobs), 0, 0).ok());
  // NodeCnt picks the first nodes free at the start that no overlapping reservation holds.
  ResvSpec b = Resv("b", 150, 250, {});
  ASSERT_TRUE(cs.AddReservation(b, 2, 0).ok());
  EXPECT_EQ(cs.FindReservation("b")->spec.nodes, (std::vector<std::string>{"n02", "n03"}));
  EXPECT_EQ(cs.AddReservation(Resv("c", 150, 250, {}), 1, 0).status().message(),
            "Requested nodes are busy");
  EXPECT_EQ(cs.AddReservation(Resv("b", 900, 950, {"n02"}), 0, 0).status().message(),
            "Duplicate reservation name");
  EXPECT_EQ(cs.AddReservation(Resv("d", 900, 950, {"zz"}), 0, 0).status().message(),
            "Invalid node name specified");
  EXPECT_EQ(cs.AddReservation(Resv("d", 900, 900, {"n02"}), 0, 0).status().message(),
            "Invalid time specified");
  ResvSpec nobody = Resv("d", 900, 950, {"n02"});
  nobody.users.clear();
  EXPECT_FALSE(cs.AddReservation(nobody, 0, 0).ok());
  EXPECT_EQ(cs.AddReservation(Resv("a/b", 900, 950, {"n02"}), 0, 0).status().message(),
            "Invalid reservation name: 'a/b'");
  EXPECT_FALSE(cs.AddReservation(Resv("a b", 900, 950, {"n02"}), 0, 0).ok());
  EXPECT_TRUE(cs.DeleteReservation("b").ok());
  EXPECT_EQ(cs.DeleteReservation("b").message(), "Requested reservation is invalid");
}

TEST(ClusterStateResvTest, ExpireRemovesEndedAndMovesRepeating) {
  ClusterState cs = MakeCluster().Nodes("n", 2, 8, 8000).Build();
  ASSERT_TRUE(cs.AddReservation(Resv("once", 100, 200, {"n01"}), 0, 0).ok());
  ASSERT_TRUE(cs.AddReservation(Resv("daily", 100, 200, {"n02"}, kResvDaily), 0, 0).ok());
  EXPECT_TRUE(cs.ExpireReservations(199).empty());
  EXPECT_EQ(cs.ExpireReservations(200), (std::vector<std::string>{"daily", "once"}));
  EXPECT_EQ(cs.FindReservation("once"), nullptr);
  EXPECT_EQ(cs.FindReservation("daily")->spec.start, 100 + 86400);
}

TEST(ClusterStateResvTest, SubmitChecksTheReservationAndWhoMayUseIt) {
  ClusterState cs = MakeCluster().Nodes("n", 2, 8, 8000).Build();
  ASSERT_TRUE(cs.AddReservation(Resv("r", 100, 200, {"n01"}), 0, 0).ok());
  EXPECT_EQ(cs.Submit(MakeJob().Reservation("nope").Obj(), nullptr, 0).status().message(),
            "Requested reservation is invalid");
  Result<JobId> bob = cs.Submit(MakeJob().User("bob").Reservation("r").Obj(), nullptr, 0);
  EXPECT_EQ(bob.status().code(), StatusCode::kPermissionDenied);
  EXPECT_EQ(bob.status().message(), "Access denied to requested reservation");
  EXPECT_TRUE(cs.Submit(MakeJob().Reservation("r").Obj(), nullptr, 0).ok());
}

// The acceptance case: a maintenance window on n01 from t=1000. A job whose limit would carry
// it into the window does not start there; a short one that ends before it does.
TEST(SchedulerResvTest, MainPassPlansAroundAFutureMaintenance) {
  ClusterState cs = MakeCluster().Nodes("n", 1, 8, 8000).Build();
  ASSERT_TRUE(cs.AddReservation(Resv("maint", 1000, 2000, {"n01"}, kResvMaint), 0, 0).ok());
  JobId longj = *cs.Submit(MakeJob().Time(3600).Obj(), nullptr, 0);
  JobId shortj = *cs.Submit(MakeJob().Time(600).Obj(), nullptr, 0);
  for (SchedulerConfig cfg : {SchedulerConfig::Multifactor(), SchedulerConfig::Fcfs()}) {
    Plan plan = Schedule(cs, 0, cfg);
    EXPECT_EQ(FindStart(plan, longj), nullptr);
    const PendingInfo* p = FindPending(plan, longj);
    ASSERT_NE(p, nullptr);
    EXPECT_EQ(p->reason, PendingReason::kReqNodeNotAvailMaint);
    EXPECT_EQ(PendingReasonName(p->reason), "ReqNodeNotAvail, Reserved for maintenance");
    if (cfg.backfill) {
      EXPECT_EQ(p->expected_start, 2000);  // squeue --start: after the window
      EXPECT_NE(FindStart(plan, shortj), nullptr);
    }
    EXPECT_EQ(plan.wake_at, 1000);
  }
}

TEST(SchedulerResvTest, NoOtherJobStartsOnAReservedNodeDuringTheWindow) {
  ClusterState cs = MakeCluster().Nodes("n", 2, 8, 8000).Build();
  ASSERT_TRUE(cs.AddReservation(Resv("r", 0, 5000, {"n01"}), 0, 0).ok());
  JobId a = *cs.Submit(MakeJob().Exclusive().Obj(), nullptr, 0);
  JobId b = *cs.Submit(MakeJob().Exclusive().Obj(), nullptr, 0);
  Plan plan = Schedule(cs, 10, SchedulerConfig::Multifactor());
  ASSERT_NE(FindStart(plan, a), nullptr);
  EXPECT_EQ(cs.node(FindStart(plan, a)->alloc.nodes[0].node).spec.name, "n02");
  EXPECT_EQ(FindStart(plan, b), nullptr);
  EXPECT_EQ(FindPending(plan, b)->reason, PendingReason::kResources);
  EXPECT_EQ(FindPending(plan, b)->expected_start, 3610);  // n02 frees before n01 does (5000)
}

TEST(SchedulerResvTest, AJobInAReservationRunsOnlyThereAndOnlyOnceItBegan) {
  ClusterState cs = MakeCluster().Nodes("n", 2, 8, 8000).Build();
  ASSERT_TRUE(cs.AddReservation(Resv("r", 100, 5000, {"n02"}), 0, 0).ok());
  JobId j = *cs.Submit(MakeJob().Reservation("r").Obj(), nullptr, 0);
  Plan before = Schedule(cs, 50, SchedulerConfig::Multifactor());
  EXPECT_EQ(FindStart(before, j), nullptr);
  EXPECT_EQ(FindPending(before, j)->reason, PendingReason::kReservation);
  EXPECT_EQ(FindPending(before, j)->expected_start, 100);
  EXPECT_EQ(before.wake_at, 100);
  Plan during = Schedule(cs, 100, SchedulerConfig::Multifactor());
  ASSERT_NE(FindStart(during, j), nullptr);
  EXPECT_EQ(cs.node(FindStart(during, j)->alloc.nodes[0].node).spec.name, "n02");
  // Once the reservation is gone the job waits with reason Reservation (it never runs
  // elsewhere).
  ASSERT_TRUE(cs.DeleteReservation("r").ok());
  EXPECT_EQ(FindPending(Schedule(cs, 100, SchedulerConfig::Multifactor()), j)->reason,
            PendingReason::kReservation);
}

TEST(SchedulerResvTest, InTheReservationItQueuesForItsNodesOnly) {
  ClusterState cs = MakeCluster().Nodes("n", 2, 8, 8000).Build();
  ASSERT_TRUE(cs.AddReservation(Resv("r", 0, 100000, {"n02"}), 0, 0).ok());
  JobId first = *cs.Submit(MakeJob().Reservation("r").Exclusive().Time(1000).Obj(), nullptr, 0);
  JobId second = *cs.Submit(MakeJob().Reservation("r").Exclusive().Obj(), nullptr, 0);
  Plan plan = Schedule(cs, 10, SchedulerConfig::Multifactor());
  ASSERT_NE(FindStart(plan, first), nullptr);
  EXPECT_EQ(FindStart(plan, second), nullptr);  // n01 is free, but outside the reservation
  EXPECT_EQ(FindPending(plan, second)->reason, PendingReason::kResources);
  EXPECT_EQ(FindPending(plan, second)->expected_start, 1010);
}

TEST(SchedulerResvTest, ARepeatingReservationBlocksEachOccurrence) {
  ClusterState cs = MakeCluster().Nodes("n", 1, 8, 8000).Build();
  ASSERT_TRUE(cs.AddReservation(Resv("d", 3600, 7200, {"n01"}, kResvDaily), 0, 0).ok());
  // 10 hours from 7200 would reach the next day's 3600 + 86400? No: 7200 + 36000 < 90000.
  JobId fits = *cs.Submit(MakeJob().Time(36000).Obj(), nullptr, 0);
  JobId too_long = *cs.Submit(MakeJob().Time(86400).Obj(), nullptr, 0);
  Plan plan = Schedule(cs, 7200, SchedulerConfig::Multifactor());
  EXPECT_NE(FindStart(plan, fits), nullptr);
  EXPECT_EQ(FindStart(plan, too_long), nullptr);
}

}  // namespace
}  // namespace berth::core
