// Power saving in virtual time (sim/power.h): hand-computed scenarios, determinism, and the
// SuspendTime trade-off on a real trace.
#include "sim/power.h"

#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "sim/driver.h"
#include "sim/trace.h"
#include "sim/trace_testing.h"

namespace berth::sim {
namespace {

core::ClusterSpec Nodes(int count, int cpus, bool cloud) {
  core::ClusterSpec spec;
  spec.name = "sim";
  for (int i = 1; i <= count; ++i) {
    core::NodeSpec n;
    n.name = "n" + std::to_string(i);
    n.cpus = cpus;
    n.mem_mib = 1024;
    n.cloud = cloud;
    spec.nodes.push_back(n);
  }
  return spec;
}

TraceJob Job(uint64_t id, Time submit, Duration run, int64_t procs = 1) {
  TraceJob j;
  j.trace_id = id;
  j.submit = submit;
  j.run_time = run;
  j.requested = run;
  j.procs = procs;
  return j;
}

SimOptions PowerOn(Duration boot, Duration suspend) {
  SimOptions o;
  o.scheduler = core::SchedulerConfig::Easy();
  o.power.enabled = true;
  o.power.boot_time = boot;
  o.power.suspend_time = suspend;
  return o;
}

const JobResult& ById(const SimResult& r, uint64_t trace_id) {
  for (const JobResult& j : r.jobs) {
    if (j.trace_id == trace_id) return j;
  }
  ADD_FAILURE() << "no job " << trace_id;
  static JobResult none;
  return none;
}

TEST(SimPowerTest, OneCloudNodeTwoJobsWaitForOneBoot) {
  // n1 (cloud, 4 CPUs) starts powered down; boot 100 s; SuspendTime never.
  //   t=0   A placed on n1 (POWERING_UP), A CONFIGURING; n1 resumed, up at 100.
  //   t=10  B placed on n1 too (it is coming up and has room), CONFIGURING.
  //   t=100 n1 up: A and B start; both end at 150.
  // Waits: A 100, B 90. Powered: [0, 150] = 150 s. One boot.
  Trace trace;
  trace.jobs = {Job(1, 0, 50), Job(2, 10, 50)};
  Result<SimResult> r = Simulate(trace, Nodes(1, 4, true), PowerOn(100, -1));
  ASSERT_TRUE(r.ok()) << r.status().message();
  ASSERT_EQ(r->jobs.size(), 2u);
  EXPECT_EQ(ById(*r, 1).start, 100);
  EXPECT_EQ(ById(*r, 1).end, 150);
  EXPECT_EQ(ById(*r, 2).start, 100);
  EXPECT_EQ(ById(*r, 2).end, 150);
  ASSERT_TRUE(r->power.enabled);
  EXPECT_EQ(r->power.boots, 1);
  EXPECT_EQ(r->power.suspends, 0);
  EXPECT_EQ(r->power.window_start, 0);
  EXPECT_EQ(r->power.window_end, 150);
  EXPECT_DOUBLE_EQ(r->power.node_hours, 150.0 / 3600);
}

TEST(SimPowerTest, SuspendTimeTradesWaitForNodeHours) {
  // One cloud node, boot 100 s, SuspendTimeout 30 s (the default). A at 0 (runs 50), B at 300.
  // SuspendTime 20:
  //   A: resume at 0, up at 100, runs 100-150. n1 idle from 150, suspended at 170, powered
  //   down at 200. B: resume at 300, up at 400, runs 400-450 (wait 100). n1 suspended again at
  //   470 (after the window). Powered in [0, 450]: [0, 200] + [300, 450] = 350 s; 2 boots.
  // SuspendTime never: B runs at once, 300-350 (wait 0). Powered [0, 350] = 350 s... the
  //   window ends at B's end, 350: 350 s, 1 boot.
  Trace trace;
  trace.jobs = {Job(1, 0, 50), Job(2, 300, 50)};
  Result<SimResult> s20 = Simulate(trace, Nodes(1, 4, true), PowerOn(100, 20));
  ASSERT_TRUE(s20.ok()) << s20.status().message();
  EXPECT_EQ(ById(*s20, 1).start, 100);
  EXPECT_EQ(ById(*s20, 2).start, 400);
  EXPECT_EQ(ById(*s20, 2).end, 450);
  EXPECT_EQ(s20->power.boots, 2);
  EXPECT_EQ(s20->power.suspends, 2);
  EXPECT_EQ(s20->power.window_end, 450);
  EXPECT_DOUBLE_EQ(s20->power.node_hours, 350.0 / 3600);

  Result<SimResult> never = Simulate(trace, Nodes(1, 4, true), PowerOn(100, -1));
  ASSERT_TRUE(never.ok());
  EXPECT_EQ(ById(*never, 2).start, 300);
  EXPECT_EQ(never->power.boots, 1);
  EXPECT_EQ(never->power.suspends, 0);
  EXPECT_DOUBLE_EQ(never->power.node_hours, 350.0 / 3600);
}

TEST(SimPowerTest, ResumeRateSpacesBoots) {
  // Two cloud nodes of 4 CPUs, ResumeRate 1 per minute, boot 100 s; A and B (4 CPUs each) at 0.
  //   t=0   A on n1, B on n2 (both POWERING_UP); only n1 is resumed (up at 100).
  //   t=60  the minute has passed: n2 resumed (up at 160).
  //   A runs 100-150 (wait 100), B 160-210 (wait 160).
  // Powered in [0, 210]: n1 210 s + n2 150 s = 360 s.
  Trace trace;
  trace.jobs = {Job(1, 0, 50, 4), Job(2, 0, 50, 4)};
  SimOptions o = PowerOn(100, -1);
  o.power.resume_rate = 1;
  Result<SimResult> r = Simulate(trace, Nodes(2, 4, true), o);
  ASSERT_TRUE(r.ok()) << r.status().message();
  EXPECT_EQ(ById(*r, 1).start, 100);
  EXPECT_EQ(ById(*r, 1).node_list, "n1");
  EXPECT_EQ(ById(*r, 2).start, 160);
  EXPECT_EQ(ById(*r, 2).node_list, "n2");
  EXPECT_EQ(r->power.boots, 2);
  EXPECT_DOUBLE_EQ(r->power.node_hours, 360.0 / 3600);
}

TEST(SimPowerTest, PowerAllStartsEveryNodeDown) {
  // One ordinary node with all_down: powered down from the first event (t=5). A at 5 runs 10:
  // resume at 5, up at 105, runs 105-115. Powered [5, 115] = 110 s.
  Trace trace;
  trace.jobs = {Job(1, 5, 10)};
  SimOptions o = PowerOn(100, -1);
  o.power.all_down = true;
  Result<SimResult> r = Simulate(trace, Nodes(1, 4, false), o);
  ASSERT_TRUE(r.ok());
  EXPECT_EQ(ById(*r, 1).start, 105);
  EXPECT_EQ(r->power.window_start, 5);
  EXPECT_DOUBLE_EQ(r->power.node_hours, 110.0 / 3600);
}

TEST(SimPowerTest, SuspendExcNodesAreKeptUp) {
  // Two up nodes, SuspendTime 0 (no job at all after the first): n1 excluded stays up.
  // A at 0 on n1 runs 10. At 0 n2 is idle (from the start) and suspended: powered down at 30.
  // n1 is never suspended. Powered in [0, 10]: n1 10 s + n2 10 s.
  Trace trace;
  trace.jobs = {Job(1, 0, 10)};
  SimOptions o = PowerOn(100, 0);
  o.power.suspend_exc_nodes = {"n1"};
  Result<SimResult> r = Simulate(trace, Nodes(2, 4, false), o);
  ASSERT_TRUE(r.ok());
  EXPECT_EQ(ById(*r, 1).node_list, "n1");
  EXPECT_EQ(ById(*r, 1).start, 0);
  EXPECT_EQ(r->power.suspends, 1);
  EXPECT_EQ(r->power.boots, 0);
  EXPECT_DOUBLE_EQ(r->power.node_hours, 20.0 / 3600);
}

Trace Excerpt() {
  ReadOptions ro;
  Result<Trace> t =
      ReadTrace(testing::SourcePath("data/traces/KTH-SP2-1996-2.1-cln.first2000.swf"), ro);
  EXPECT_TRUE(t.ok()) << t.status().message();
  return t.ok() ? *t : Trace{};
}

void ExpectSameJobs(const SimResult& a, const SimResult& b) {
  ASSERT_EQ(a.jobs.size(), b.jobs.size());
  for (size_t i = 0; i < a.jobs.size(); ++i) {
    EXPECT_EQ(a.jobs[i].trace_id, b.jobs[i].trace_id);
    EXPECT_EQ(a.jobs[i].start, b.jobs[i].start);
    EXPECT_EQ(a.jobs[i].end, b.jobs[i].end);
    EXPECT_EQ(a.jobs[i].node_list, b.jobs[i].node_list);
  }
}

TEST(SimPowerTest, AlwaysUpClusterSchedulesAsWithoutPowerSaving) {
  // Power saving on but nothing ever powered down: the same schedule as with it off.
  Trace trace = Excerpt();
  SimOptions off;
  Result<SimResult> a = Simulate(trace, Nodes(25, 4, false), off);
  Result<SimResult> b = Simulate(trace, Nodes(25, 4, false), PowerOn(120, -1));
  ASSERT_TRUE(a.ok() && b.ok());
  ExpectSameJobs(*a, *b);
  EXPECT_FALSE(a->power.enabled);
  EXPECT_EQ(b->power.boots, 0);
  // Every node powered over the whole window.
  EXPECT_NEAR(b->power.node_hours,
              25.0 * static_cast<double>(b->power.window_end - b->power.window_start) / 3600, 1e-6);
}

TEST(SimPowerTest, Deterministic) {
  Trace trace = Excerpt();
  SimOptions o = PowerOn(120, 300);
  o.power.all_down = true;
  o.power.resume_rate = 5;
  o.power.suspend_rate = 5;
  Result<SimResult> a = Simulate(trace, Nodes(25, 4, false), o);
  Result<SimResult> b = Simulate(trace, Nodes(25, 4, false), o);
  ASSERT_TRUE(a.ok() && b.ok());
  ExpectSameJobs(*a, *b);
  EXPECT_EQ(a->power.boots, b->power.boots);
  EXPECT_EQ(a->power.suspends, b->power.suspends);
  EXPECT_EQ(a->power.node_hours, b->power.node_hours);
  EXPECT_EQ(a->passes, b->passes);
}

TEST(SimPowerTest, SuspendTimeSweepOnSharedTrace) {
  // The HPC2N excerpt from the shared test data (else the bundled KTH excerpt) on 32 nodes of
  // 4 CPUs, every node powered down at the start, boot 120 s.
  Trace trace;
  const std::string dir = testing::SharedTestdata("swf");
  if (!dir.empty()) {
    ReadOptions ro;
    Result<Trace> t = ReadTrace(dir + "/HPC2N-2002.alea-excerpt.swf", ro);
    ASSERT_TRUE(t.ok()) << t.status().message();
    trace = *t;
  } else {
    trace = Excerpt();
  }
  const core::ClusterSpec cluster = Nodes(32, 4, false);
  std::vector<SimResult> runs;
  for (Duration s : {Duration{300}, Duration{1800}, Duration{3600}, Duration{-1}}) {
    SimOptions o = PowerOn(120, s);
    o.power.all_down = true;
    Result<SimResult> r = Simulate(trace, cluster, o);
    ASSERT_TRUE(r.ok()) << r.status().message();
    EXPECT_EQ(r->never_started, 0);
    runs.push_back(std::move(*r));
  }
  const SimResult& never = runs.back();
  // Never suspending, a node boots at most once; no run can be powered longer than every node
  // over its window.
  EXPECT_EQ(never.power.suspends, 0);
  EXPECT_LE(never.power.boots, 32);
  for (const SimResult& r : runs) {
    const double window_h = static_cast<double>(r.power.window_end - r.power.window_start) / 3600;
    EXPECT_LE(r.power.node_hours, 32 * window_h + 1e-9);
    EXPECT_GT(r.power.node_hours, 0);
  }
  // The trade-off: a short SuspendTime saves node-hours and costs boots.
  EXPECT_GE(never.power.node_hours, runs[0].power.node_hours);
  EXPECT_GE(runs[0].power.boots, never.power.boots);
  EXPECT_GE(runs[0].power.boots, runs[2].power.boots);
  EXPECT_GE(runs[2].power.node_hours, runs[0].power.node_hours);
}

}  // namespace
}  // namespace berth::sim
