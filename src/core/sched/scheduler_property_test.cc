// Property tests: the scheduler's invariants over random clusters, jobs and events.
//
//   1. Never oversubscribed: every plan fits what is free on usable nodes, and after every Apply
//      each node's use, recomputed from the jobs, fits its capacity and matches its counters.
//   2. Backfill never delays a reservation (EASY, conservative, multifactor with depth 3).
//   3. Determinism: the same scenario gives byte-identical plans, and a Scheduler with a warm
//      cache plans exactly as a fresh one.
//   4. Every pending job has exactly one entry with a reason in each plan.
//   5. Gang placement (node mode) and task packing (task mode) agree with a brute-force search.
//   6. Conservation: submitted = finished + pending + running, at every step and at the end.
//
// Each case runs from one seed. A failure prints the seed and the events that led to it; run
// one case again with BERTH_PROPERTY_SEED=<seed> ./core_test --gtest_filter='*Property*'.
//
// The runs use testing::RandomRun (core/testing/random_run.h), which drives ClusterState and
// Scheduler in virtual time by the rules of sim::VirtualCluster (core_test cannot link the
// simulator), and check each pass with the independent checks in that header.
#include <gtest/gtest.h>

#include <algorithm>
#include <bit>
#include <cstdio>
#include <functional>
#include <map>
#include <set>
#include <string>
#include <tuple>
#include <utility>
#include <vector>

#include "core/sched/scheduler.h"
#include "core/testing/builders.h"
#include "core/testing/random_run.h"

namespace berth::core {
namespace {

using testing::Chance;
using testing::CheckConservation;
using testing::CheckNodeAccounting;
using testing::CheckPendingReasons;
using testing::CheckPlanAgainstState;
using testing::DescribeJob;
using testing::DescribeNode;
using testing::DumpPlan;
using testing::JobCount;
using testing::MakeCluster;
using testing::MakeJob;
using testing::NamedConfig;
using testing::Pick;
using testing::PropertySeeds;
using testing::RandomRun;
using testing::Rng;
using testing::RunOptions;
using testing::SeedTrace;
using testing::Uniform;

std::string Join(const std::vector<std::string>& lines) {
  return testing::JoinLines(lines);
}

// Case counts: 200 seeds of 40 events each keep the whole file near a second in a
// RelWithDebInfo build and well under a minute with the sanitizers.
constexpr int kSeeds = 200;
constexpr int kEvents = 40;

void Append(std::vector<std::string>& to, std::vector<std::string> more) {
  for (std::string& m : more) to.push_back(std::move(m));
}

// A check of one pass that also sees the run's scheduler configuration (to plan the same state
// again with a variant of it).
using ConfigPassCheck = std::function<std::vector<std::string>(
    const SchedulerConfig& cfg, const ClusterState& before, const Plan& plan,
    const ApplyResult& applied, const ClusterState& after)>;
using PassCheck =
    std::function<std::vector<std::string>(const ClusterState& before, const Plan& plan,
                                           const ApplyResult& applied, const ClusterState& after)>;

// Runs `events` random events (each followed by its passes) and applies `check` to every pass,
// stopping at the first violation with the plan and the events that led to it.
void RunChecked(uint64_t seed, const RunOptions& opt, const ConfigPassCheck& check) {
  RandomRun run(seed, opt);
  run.set_hook([&](const ClusterState& before, const Plan& plan, const ApplyResult& applied,
                   const ClusterState& after) {
    std::vector<std::string> bad = check(run.config(), before, plan, applied, after);
    if (bad.empty()) return;
    ADD_FAILURE() << "at t=" << plan.now << ":\n"
                  << Join(bad) << "plan:\n"
                  << DumpPlan(plan) << "events:\n"
                  << run.log();
    run.Stop();
  });
  for (int i = 0; i < kEvents && !run.stopped(); ++i) run.Step();
  EXPECT_EQ(run.error(), "") << run.log();
}
void RunChecked(uint64_t seed, const RunOptions& opt, const PassCheck& check) {
  RunChecked(
      seed, opt,
      ConfigPassCheck([&](const SchedulerConfig&, const ClusterState& before, const Plan& plan,
                          const ApplyResult& applied, const ClusterState& after) {
        return check(before, plan, applied, after);
      }));
}

// ---- Property 1: never oversubscribed

TEST(SchedulerPropertyTest, NeverOversubscribed) {
  int64_t passes = 0, starts = 0, preemptions = 0;
  for (uint64_t seed : PropertySeeds(1000, kSeeds)) {
    SCOPED_TRACE(SeedTrace(seed));
    RunChecked(
        seed, RunOptions{},
        [&](const ClusterState& before, const Plan& plan, const ApplyResult& applied,
            const ClusterState& after) {
          ++passes;
          starts += static_cast<int64_t>(plan.starts.size());
          preemptions += static_cast<int64_t>(plan.preemptions.size());
          std::vector<std::string> bad = CheckPlanAgainstState(before, plan);
          // The plan was computed from exactly this state: Apply must take all of it.
          for (const auto& [job, why] : applied.rejected) {
            bad.push_back("Apply refused the start of job " + std::to_string(job) + ": " + why);
          }
          Append(bad, CheckNodeAccounting(after));
          return bad;
        });
  }
  std::printf("  passes %lld, starts %lld, preemptions %lld\n", static_cast<long long>(passes),
              static_cast<long long>(starts), static_cast<long long>(preemptions));
}

// ---- Property 1a: GPU shares never fill a device past its capacity, and a device is never held
// whole and shared at once (by the plans, and by the state they leave), under every policy,
// preemption included.

TEST(SchedulerPropertyTest, GpuSharesNeverOverfillNorMixWithWholeGpus) {
  int64_t shares = 0;
  for (uint64_t seed : PropertySeeds(3000, kSeeds)) {
    SCOPED_TRACE(SeedTrace(seed));
    RunOptions opt;
    opt.jobs.gpu_shares = true;
    RunChecked(
        seed, opt,
        [&](const ClusterState& before, const Plan& plan, const ApplyResult& applied,
            const ClusterState& after) {
          for (const PlannedStart& s : plan.starts) {
            for (const NodeAllocation& a : s.alloc.nodes) {
              shares += static_cast<int64_t>(a.gpu_shares.size());
            }
          }
          std::vector<std::string> bad = CheckPlanAgainstState(before, plan);
          for (const auto& [job, why] : applied.rejected) {
            bad.push_back("Apply refused the start of job " + std::to_string(job) + ": " + why);
          }
          Append(bad, CheckNodeAccounting(after));
          return bad;
        });
  }
  std::printf("  shares started %lld\n", static_cast<long long>(shares));
  EXPECT_GT(shares, 0);
}

// ---- Property 1b: with power saving, never oversubscribed either, powered-down nodes used only
// when the up ones cannot take the job now, and a job is CONFIGURING exactly while one of its
// nodes is not up.

TEST(SchedulerPropertyTest, PowerSavingNeverOversubscribedAndWaitsForItsNodes) {
  int64_t woken = 0;
  for (uint64_t seed : PropertySeeds(7000, kSeeds)) {
    SCOPED_TRACE(SeedTrace(seed));
    RunOptions opt;
    opt.power_saving = true;
    opt.configs = {"fcfs", "easy", "multifactor", "spread"};
    RunChecked(
        seed, opt,
        [&](const ClusterState& before, const Plan& plan, const ApplyResult& applied,
            const ClusterState& after) {
          std::vector<std::string> bad = CheckPlanAgainstState(before, plan);
          for (const auto& [job, why] : applied.rejected) {
            bad.push_back("Apply refused the start of job " + std::to_string(job) + ": " + why);
          }
          Append(bad, CheckNodeAccounting(after));
          for (JobId id : applied.started) {
            const Job* job = after.FindJob(id);
            if (job == nullptr) continue;
            bool all_up = true;
            for (const NodeAllocation& a : job->alloc.nodes) {
              all_up = all_up && after.node(a.node).health == NodeHealth::kUp;
              if (before.node(a.node).health == NodeHealth::kPoweredDown) {
                ++woken;
                if (after.node(a.node).health != NodeHealth::kPoweringUp) {
                  bad.push_back("node " + after.node(a.node).spec.name +
                                " was woken but is not powering up");
                }
              }
            }
            const bool configuring = job->state == JobState::kConfiguring;
            if (configuring == all_up) {
              bad.push_back("job " + std::to_string(id) + " is " +
                            std::string(JobStateName(job->state)) +
                            (all_up ? " with all its nodes up" : " on a node not up"));
            }
          }
          return bad;
        });
  }
  std::printf("  powered-down nodes woken: %lld\n", static_cast<long long>(woken));
  EXPECT_GT(woken, 0);
}

// ---- Property 2: backfill never delays a reservation
//
// What is guaranteed, and so what is checked. Take a state and run one pass; some blocked jobs
// get a reservation (an expected start T). Then let time run with no new submissions, no
// preemption, no node or hold changes, every running job ending exactly at start + limit, and a
// pass at every end (and at every reserved T). Then:
//   * The first reserved job in queue order (EASY's only one) starts at T or earlier, under
//     every policy: every job ahead of it started already or is blocked for a reason that
//     cannot change (held, partition limits, no node that can ever host it), so no job ahead
//     of it competes again; and every job started after its reservation (backfill, in this pass
//     or a later one) had to fit around it. If the reserved placement stays free, the job
//     starts by T. For that, the queue order must not change by itself: FIFO does not; the
//     multifactor config here ("multifactor3") weighs neither age nor fair-share, which move
//     with time and usage; jobs have no --begin, no dependencies and no array throttles, which
//     would let a job ahead of the reserved one become eligible later.
//     --exclusive=user jobs are included (the sweep works out who holds a node at each time).
//   * Later reservations (conservative, multifactor depth 3) are not guaranteed in general, and
//     random runs lose them often, in two ways: a job ahead of a reserved job may start on
//     other nodes than its own reservation named (placement now ranks nodes by free GPUs and
//     weight, the backfill sweep by node order), taking nodes that the later reservation
//     counted on; and an array's reservation covers only its next task, so when that task
//     starts the following one competes ahead of the later reservations. They are guaranteed
//     when every placement is "the first nodes in node order among those free for the whole
//     window": every job takes whole nodes (--exclusive) of a fixed count, no arrays, on nodes
//     alike in weight, GPU count (none) and topology. Then, by induction over the queue, each
//     reserved job gets the same nodes and time in every later pass, so each starts exactly at
//     its T. The second scenario checks that.

struct Reserved {
  JobId job = kNoJob;
  int32_t task = -1;  // for an array: the task the reservation is for
  Time at = kNoTime;
};

// The reservations a pass made, in queue order.
std::vector<Reserved> ReservationsIn(const ClusterState& before, const Plan& plan) {
  std::vector<Reserved> out;
  for (const PendingInfo& i : plan.pending) {
    if (i.expected_start == kNoTime) continue;
    Reserved r{i.job, -1, i.expected_start};
    const Job* job = before.FindJob(i.job);
    if (job->is_array_master()) {
      // Tasks are tried in order; the first that did not start is the one reserved.
      std::set<int32_t> started;
      for (const PlannedStart& s : plan.starts) {
        if (s.job == i.job) started.insert(s.array_task);
      }
      for (int32_t t : job->spec->array.task_ids) {
        if (!started.count(t)) {
          r.task = t;
          break;
        }
      }
    }
    out.push_back(r);
  }
  return out;
}

// Runs the cluster on from `now` under the conditions above and returns when each target
// started (absent: not by the last reserved time).
std::map<std::pair<JobId, int32_t>, Time> RunForward(ClusterState& cs, Scheduler& sched, Time now,
                                                     const std::vector<Reserved>& targets) {
  std::map<std::pair<JobId, int32_t>, Time> started;
  Time last = now;
  for (const Reserved& r : targets) last = std::max(last, r.at);
  Time t = now;
  auto all_started = [&] {
    return std::all_of(targets.begin(), targets.end(), [&](const Reserved& r) {
      return started.count({r.job, r.task}) > 0;
    });
  };
  while (t < last && !all_started()) {
    Time next = cs.releases().empty() ? kInfinite : cs.releases().begin()->first;
    for (const Reserved& r : targets) {
      if (r.at > t) next = std::min(next, r.at);
    }
    t = next;
    while (!cs.releases().empty() && cs.releases().begin()->first <= t) {
      auto [end, id] = *cs.releases().begin();
      JobOutcome o;
      o.state = JobState::kTimeout;
      o.end_time = end;
      Status st = cs.EndJob(id, o, /*requeue=*/false);
      if (!st.ok()) {
        ADD_FAILURE() << "EndJob(" << id << ") at " << end << ": " << st.ToString();
        return started;
      }
    }
    Plan plan = sched.Schedule(cs, t);
    ApplyResult applied = cs.Apply(plan, t);
    for (size_t i = 0; i < plan.starts.size(); ++i) {
      if (applied.start_ids[i] == kNoJob) continue;
      started.emplace(std::make_pair(plan.starts[i].job, plan.starts[i].array_task), t);
    }
  }
  return started;
}

// Runs one pass on a copy of `state` with `cfg`, then the forward run; returns the reservations
// that were not kept. `head_only`: check the first reservation only.
std::vector<std::string> CheckReservationsHold(const ClusterState& state, Time now,
                                               const SchedulerConfig& cfg, bool head_only,
                                               int* checked) {
  ClusterState cs = state;
  Scheduler sched(cfg);
  Plan first = sched.Schedule(cs, now);
  std::vector<Reserved> targets = ReservationsIn(cs, first);
  if (head_only && targets.size() > 1) targets.resize(1);
  if (targets.empty()) return {};
  ApplyResult applied = cs.Apply(first, now);
  if (!applied.rejected.empty()) return {cfg.name + ": Apply refused a start of the first pass"};
  std::map<std::pair<JobId, int32_t>, Time> started = RunForward(cs, sched, now, targets);
  std::vector<std::string> bad;
  for (const Reserved& r : targets) {
    ++*checked;
    auto it = started.find({r.job, r.task});
    if (it != started.end() && it->second <= r.at) continue;
    bad.push_back(cfg.name + ": job " + std::to_string(r.job) +
                  (r.task >= 0 ? "_" + std::to_string(r.task) : "") +
                  " reserved at t=" + std::to_string(now) + " to start by " + std::to_string(r.at) +
                  (it == started.end() ? " had not started by then"
                                       : " started only at " + std::to_string(it->second)));
  }
  if (!bad.empty()) bad.push_back("first pass:\n" + DumpPlan(first));
  return bad;
}

// Random histories; at every fifth event, before the pass, the reservation check runs on a
// copy of the state for each policy.
void CheckReservationsOverRuns(uint64_t base, const RunOptions& opt,
                               const std::vector<std::pair<std::string, bool>>& policies,
                               int* checked) {
  for (uint64_t seed : PropertySeeds(base, kSeeds)) {
    SCOPED_TRACE(SeedTrace(seed));
    RandomRun run(seed, opt);
    for (int e = 0; e < kEvents && !run.stopped(); ++e) {
      run.RandomEvent();
      if (e % 5 == 4) {
        for (const auto& [name, head_only] : policies) {
          std::vector<std::string> bad =
              CheckReservationsHold(run.state(), run.now(), NamedConfig(name), head_only, checked);
          if (!bad.empty()) {
            ADD_FAILURE() << Join(bad) << "events:\n" << run.log();
            run.Stop();
            break;
          }
        }
      }
      run.SchedulePasses();
    }
    EXPECT_EQ(run.error(), "") << run.log();
  }
}

// Histories for the first scenario: no --begin, dependencies or array throttles (see above).
RunOptions StableQueueOptions() {
  RunOptions opt;
  opt.configs = {"fcfs", "easy", "conservative", "multifactor3"};
  opt.jobs.dependencies = false;
  opt.jobs.begin_times = false;
  opt.jobs.throttled_arrays = false;
  opt.jobs.exclusive_user = true;
  return opt;
}

TEST(SchedulerPropertyTest, BackfillNeverDelaysTheFirstReservation) {
  RunOptions opt = StableQueueOptions();
  int checked = 0;
  CheckReservationsOverRuns(
      2000, opt, {{"easy", true}, {"conservative", true}, {"multifactor3", true}}, &checked);
  std::printf("  reservations checked: %d\n", checked);
}

TEST(SchedulerPropertyTest, BackfillKeepsEveryReservationOfWholeNodeJobs) {
  RunOptions opt;
  opt.configs = {"fcfs", "easy", "conservative", "multifactor3"};
  opt.cluster.uniform_order = true;
  opt.cluster.gpus = false;
  opt.cluster.partitions = false;
  opt.jobs.whole_nodes_only = true;
  int checked = 0;
  CheckReservationsOverRuns(2500, opt, {{"conservative", false}, {"multifactor3", false}},
                            &checked);
  std::printf("  reservations checked: %d\n", checked);
}

// ---- Property 3: determinism

TEST(SchedulerPropertyTest, SameScenarioGivesByteIdenticalPlans) {
  for (uint64_t seed : PropertySeeds(3000, kSeeds)) {
    SCOPED_TRACE(SeedTrace(seed));
    // Two runs from scratch (fresh ClusterState and Scheduler each). Events are drawn from the
    // seed and from the state, so any difference shows up as a differing plan.
    std::vector<std::string> dumps[2];
    std::string log;
    for (int i = 0; i < 2; ++i) {
      RandomRun run(seed, RunOptions{});
      run.set_hook([&, i](const ClusterState& before, const Plan& plan, const ApplyResult&,
                          const ClusterState&) {
        std::string dump = DumpPlan(plan);
        dumps[i].push_back(dump);
        // A Scheduler's cached candidate sets must never change a decision.
        std::string fresh = DumpPlan(Schedule(before, plan.now, run.config()));
        if (fresh != dump) {
          ADD_FAILURE() << "a warm Scheduler and a fresh one disagree\nwarm:\n"
                        << dump << "fresh:\n"
                        << fresh << "events:\n"
                        << run.log();
          run.Stop();
        }
      });
      for (int e = 0; e < kEvents && !run.stopped(); ++e) run.Step();
      EXPECT_EQ(run.error(), "") << run.log();
      log = run.log();
    }
    ASSERT_EQ(dumps[0].size(), dumps[1].size()) << log;
    for (size_t p = 0; p < dumps[0].size(); ++p) {
      ASSERT_EQ(dumps[0][p], dumps[1][p]) << "pass " << p << " differs\nevents:\n" << log;
    }
  }
}

// Reason details are text only: a pass without them (as `berth sim` replays a trace) decides
// exactly the same, and leaves out only the per-node detail of jobs blocked by resources.
TEST(SchedulerPropertyTest, ReasonDetailsChangeNoDecision) {
  int64_t compared = 0, texts = 0;
  for (uint64_t seed : PropertySeeds(3500, kSeeds)) {
    SCOPED_TRACE(SeedTrace(seed));
    RunChecked(seed, RunOptions{},
               ConfigPassCheck([&](const SchedulerConfig& cfg, const ClusterState& before,
                                   const Plan& plan, const ApplyResult&,
                                   const ClusterState&) -> std::vector<std::string> {
                 Scheduler quiet(cfg);
                 quiet.set_explain_details(false);
                 Plan without = quiet.Schedule(before, plan.now);
                 const std::string shown = DumpPlan(without);
                 // Without, a detail is either the same text (a hold, a dependency...) or left
                 // out (the per-node counts of a job blocked by resources).
                 bool texts_ok = without.pending.size() == plan.pending.size();
                 Plan cleared = plan;
                 for (size_t i = 0; texts_ok && i < plan.pending.size(); ++i) {
                   const std::string& d = without.pending[i].detail;
                   texts_ok = d.empty() || d == plan.pending[i].detail;
                   texts += d.empty() && !plan.pending[i].detail.empty() ? 1 : 0;
                   cleared.pending[i].detail.clear();
                   without.pending[i].detail.clear();
                 }
                 ++compared;
                 if (texts_ok && DumpPlan(without) == DumpPlan(cleared)) return {};
                 return {"details off changed the plan; without:\n" + shown};
               }));
  }
  EXPECT_GT(texts, 0) << "no detail was left out: the comparison would prove nothing";
  std::printf("  passes compared: %lld, details left out: %lld\n", static_cast<long long>(compared),
              static_cast<long long>(texts));
}

// Without pending reasons (as `berth sim` replays a trace) a pass decides exactly the same:
// the same starts, preemptions, cancels and wake-up time; its pending list is the full one cut
// short where the pass stopped walking the queue (behind the first blocked job under fcfs).
TEST(SchedulerPropertyTest, PendingReasonsOffChangeNoDecision) {
  int64_t compared = 0, left_out = 0;
  for (uint64_t seed : PropertySeeds(3600, kSeeds)) {
    SCOPED_TRACE(SeedTrace(seed));
    RunChecked(seed, RunOptions{},
               ConfigPassCheck([&](const SchedulerConfig& cfg, const ClusterState& before,
                                   const Plan& plan, const ApplyResult&,
                                   const ClusterState&) -> std::vector<std::string> {
                 Scheduler quiet(cfg);
                 quiet.set_pending_reasons(false);
                 Plan without = quiet.Schedule(before, plan.now);
                 Plan cut = plan;
                 bool prefix = without.pending.size() <= plan.pending.size();
                 if (prefix) {
                   left_out += static_cast<int64_t>(plan.pending.size() - without.pending.size());
                   cut.pending.resize(without.pending.size());
                   cut.stats.pending_considered = without.stats.pending_considered;
                 }
                 ++compared;
                 if (prefix && DumpPlan(without) == DumpPlan(cut)) return {};
                 return {"pending reasons off changed the plan; without:\n" + DumpPlan(without)};
               }));
  }
  EXPECT_GT(left_out, 0) << "no pass stopped early: the comparison would prove nothing";
  std::printf("  passes compared: %lld, pending jobs left out: %lld\n",
              static_cast<long long>(compared), static_cast<long long>(left_out));
}

// What node n's jobs hold there and until when (their start + limit), and what the state's
// per-node holds say, each as sorted "job@end:cpus/mem/gpus" lines.
std::vector<std::string> JobsHeldOn(const ClusterState& cs, uint32_t n) {
  std::vector<std::string> out;
  for (JobId id : cs.node(n).jobs) {
    const Job* job = cs.FindJob(id);
    for (const NodeAllocation& a : job->alloc.nodes) {
      if (a.node != n) continue;
      out.push_back(std::to_string(id) + "@" + std::to_string(job->start_time + job->time_limit) +
                    ":" + std::to_string(a.cpus) + "/" + std::to_string(a.mem_mib) + "/" +
                    std::to_string(a.gpu_mask));
    }
  }
  std::sort(out.begin(), out.end());
  return out;
}
std::vector<std::string> HoldsOf(const ClusterState& cs, uint32_t n) {
  std::vector<std::string> out;
  for (const ClusterState::NodeHold& h : cs.holds_on(n)) {
    out.push_back(std::to_string(h.job) + "@" + std::to_string(h.end) + ":" +
                  std::to_string(h.alloc.cpus) + "/" + std::to_string(h.alloc.mem_mib) + "/" +
                  std::to_string(h.alloc.gpu_mask));
  }
  std::sort(out.begin(), out.end());
  return out;
}

// The window bound (Scheduler::set_window_bound) only spares placements that could not
// succeed: a pass with it decides exactly as a pass that tries every job whose CPUs are free now,
// byte for byte (the run's own scheduler also reuses its per-node memory from pass to pass; the
// one without is fresh each time). And the state's per-node holds (ClusterState::holds_on), which
// backfill reads for what a node has free later, stay what the nodes' jobs hold, until when.
TEST(SchedulerPropertyTest, WindowBoundChangesNoDecision) {
  int64_t compared = 0, skipped = 0;
  for (uint64_t seed : PropertySeeds(3700, kSeeds)) {
    SCOPED_TRACE(SeedTrace(seed));
    RunOptions opt;
    opt.power_saving = seed % 4 == 0;  // CONFIGURING jobs: their start moves when nodes boot
    RunChecked(seed, opt,
               ConfigPassCheck([&](const SchedulerConfig& cfg, const ClusterState& before,
                                   const Plan& plan, const ApplyResult&,
                                   const ClusterState& after) -> std::vector<std::string> {
                 Scheduler bounded(cfg);
                 Scheduler plain(cfg);
                 plain.set_window_bound(false);
                 Plan with = bounded.Schedule(before, plan.now);
                 Plan without = plain.Schedule(before, plan.now);
                 skipped += bounded.window_bound_skips();
                 ++compared;
                 if (DumpPlan(without) != DumpPlan(plan) || DumpPlan(with) != DumpPlan(plan)) {
                   return {"the window bound changed the plan; fresh, with the bound:\n" +
                           DumpPlan(with) + "without:\n" + DumpPlan(without)};
                 }
                 for (uint32_t n = 0; n < after.num_nodes(); ++n) {
                   if (HoldsOf(after, n) != JobsHeldOn(after, n)) {
                     return {"node " + std::to_string(n) + " holds differ from its jobs"};
                   }
                 }
                 return {};
               }));
  }
  EXPECT_GT(skipped, 0) << "the bound never spared a placement: the comparison would prove nothing";
  std::printf("  passes compared: %lld, placements the window bound spared: %lld\n",
              static_cast<long long>(compared), static_cast<long long>(skipped));
}

// Backfill's placement at the start it found reads what its sweep computed for each node
// (FindEarliestStart): asking the pass again for every node gives the same plans, with
// preemption (whose leftovers come free at now + 1, a time the sweep looks at those nodes)
// among the configurations RandomRun draws.
TEST(SchedulerPropertyTest, BackfillReuseChangesNoDecision) {
  int64_t compared = 0, reserved = 0;
  for (uint64_t seed : PropertySeeds(3900, kSeeds)) {
    SCOPED_TRACE(SeedTrace(seed));
    RunOptions opt;
    opt.power_saving = seed % 4 == 0;
    RunChecked(seed, opt,
               ConfigPassCheck([&](const SchedulerConfig& cfg, const ClusterState& before,
                                   const Plan& plan, const ApplyResult&,
                                   const ClusterState&) -> std::vector<std::string> {
                 Scheduler fresh(cfg);
                 fresh.set_backfill_reuse(false);
                 Plan again = fresh.Schedule(before, plan.now);
                 ++compared;
                 reserved += plan.stats.reservations;
                 if (DumpPlan(again) == DumpPlan(plan)) return {};
                 return {
                     "reusing the sweep's free parts changed the plan; asking the pass "
                     "again:\n" +
                     DumpPlan(again)};
               }));
  }
  EXPECT_GT(reserved, 0) << "no pass reserved: the comparison would prove nothing";
  std::printf("  passes compared: %lld, reservations: %lld\n", static_cast<long long>(compared),
              static_cast<long long>(reserved));
}

// ---- Property 4: every pending job has a reason

TEST(SchedulerPropertyTest, EveryPendingJobHasAReason) {
  for (uint64_t seed : PropertySeeds(4000, kSeeds)) {
    SCOPED_TRACE(SeedTrace(seed));
    RunChecked(seed, RunOptions{},
               [](const ClusterState& before, const Plan& plan, const ApplyResult&,
                  const ClusterState& after) {
                 std::vector<std::string> bad = CheckPendingReasons(before, plan);
                 // After Apply, exactly the jobs the plan calls pending are pending, plus those
                 // whose start waits for preemption victims to stop.
                 std::set<JobId> want;
                 for (const PendingInfo& i : plan.pending) want.insert(i.job);
                 for (const PlannedStart& s : plan.starts) {
                   if (!s.after_preempting.empty()) want.insert(s.job);
                 }
                 std::set<JobId> have(after.pending_ids().begin(), after.pending_ids().end());
                 if (have != want) bad.push_back("pending after Apply differs from the plan");
                 return bad;
               });
  }
}

// ---- Property 5: placement agrees with a brute-force search
//
// Small clusters (2-6 nodes) with random use already on them; one job, nothing else pending,
// FIFO without reservations. The scheduler must start the job now exactly when an exhaustive
// search finds a valid all-or-nothing placement, and what it starts must be valid. The search
// works from the JobSpec and from the use the test put on each node, not from the scheduler's
// shapes or the nodes' counters.

// One node as the search sees it.
struct NodeView {
  NodeSpec spec;
  bool usable = true;
  int32_t used_cpus = 0;
  int64_t used_mem = 0;
  uint64_t used_gpus = 0;

  bool idle() const { return used_cpus == 0 && used_mem == 0 && used_gpus == 0; }
  int32_t free_cpus() const { return spec.cpus - used_cpus; }
  int64_t free_mem() const { return spec.mem_mib - used_mem; }
  // Devices of `type` ("" = any type).
  uint64_t TypedMask(const std::string& type) const {
    uint64_t m = 0;
    for (size_t g = 0; g < spec.gpus.size(); ++g) {
      if (type.empty() || spec.gpus[g] == type) m |= uint64_t{1} << g;
    }
    return m;
  }
  int FreeTyped(const std::string& type) const {
    return std::popcount(TypedMask(type) & ~used_gpus);
  }
  int AllTyped(const std::string& type) const { return std::popcount(TypedMask(type)); }
  bool Has(const std::string& feature) const {
    return std::find(spec.features.begin(), spec.features.end(), feature) != spec.features.end();
  }
};

struct GangCase {
  std::vector<NodeView> nodes;
  ClusterState cs;
  bool topology = false;
};

ClusterSpec RandomSmallCluster(Rng& rng) {
  ClusterSpec spec;
  const int64_t n = Uniform(rng, 2, 6);
  const bool topology = Chance(rng, 40);
  for (int64_t i = 0; i < n; ++i) {
    NodeSpec node;
    node.name = "n" + std::to_string(i);
    node.cpus = static_cast<int32_t>(Pick(rng, std::vector<int64_t>{2, 4, 8, 16}));
    node.mem_mib = Pick(rng, std::vector<int64_t>{4000, 8000, 16000});
    if (Chance(rng, 60)) {
      const int64_t count = Uniform(rng, 1, 4);
      const bool mixed = Chance(rng, 30);
      const std::string type = Pick(rng, testing::GpuTypeNames());
      for (int64_t g = 0; g < count; ++g) {
        node.gpus.push_back(mixed ? Pick(rng, testing::GpuTypeNames()) : type);
      }
    }
    for (const char* f : {"ib", "fast"}) {
      if (Chance(rng, 50)) node.features.push_back(f);
    }
    if (topology) node.topology = {"block0", "sw" + std::to_string(i / 2)};
    if (Chance(rng, 20)) node.weight = 2;
    spec.nodes.push_back(std::move(node));
  }
  return spec;
}

// Random use on some nodes (any CPUs, memory and GPU devices, so GPUs end up fragmented), put
// there with a hand-made plan for a filler job, and some nodes drained or down.
GangCase RandomGangCase(Rng& rng) {
  ClusterSpec spec = RandomSmallCluster(rng);
  GangCase c{{}, testing::BuildState(spec), !spec.nodes[0].topology.empty()};
  for (uint32_t i = 0; i < spec.nodes.size(); ++i) {
    NodeView v;
    v.spec = spec.nodes[i];
    if (Chance(rng, 60)) {
      v.used_cpus = static_cast<int32_t>(Uniform(rng, 1, v.spec.cpus));
      v.used_mem = Uniform(rng, 0, v.spec.mem_mib / 500) * 500;
      for (size_t g = 0; g < v.spec.gpus.size(); ++g) {
        if (Chance(rng, 50)) v.used_gpus |= uint64_t{1} << g;
      }
      JobId filler = *c.cs.Submit(
          MakeJob().User("filler", 999).Mem(1).Time(100000).NodeList({v.spec.name}).Obj(), nullptr,
          0);
      Plan plan;
      PlannedStart s;
      s.job = filler;
      s.partition = "main";
      s.time_limit = 100000;
      s.alloc.nodes.push_back({i, v.used_cpus, v.used_mem, v.used_gpus, 1, {}, {}});
      plan.starts.push_back(s);
      if (c.cs.Apply(plan, 0).started.size() != 1) std::abort();
    }
    const int64_t roll = Uniform(rng, 0, 99);
    if (roll < 12) {
      (void)c.cs.SetNodeDrain(i, true, "test", 0);
      v.usable = false;
    } else if (roll < 17) {
      (void)c.cs.SetNodeHealth(i, NodeHealth::kDown, "test", 0);
      v.usable = false;
    }
    c.nodes.push_back(std::move(v));
  }
  return c;
}

void RandomJobCommon(Rng& rng, const GangCase& c, JobSpec& j) {
  j.user = "alice";
  j.time_limit = 100;
  if (Chance(rng, 40)) {
    j.gpu_type = Chance(rng, 50) ? "" : Pick(rng, testing::GpuTypeNames());
  }
  switch (Uniform(rng, 0, 9)) {
    case 0:
    case 1:
      j.mem_per_node_mib = Uniform(rng, 1, 16) * 500;
      break;
    case 2:
    case 3:
      j.mem_per_cpu_mib = Uniform(rng, 1, 8) * 250;
      break;
    case 4:
      if (Chance(rng, 50)) j.mem_per_node_mib = 0;
      break;
    default:
      break;
  }
  if (Chance(rng, 10)) j.exclusive = ExclusiveMode::kNode;
  if (Chance(rng, 20)) {
    j.constraint = *Constraint::Parse(
        Pick(rng, std::vector<std::string>{"ib", "ib|fast", "[ib|fast]", "ib&fast"}));
  }
  if (Chance(rng, 10)) j.nodelist.push_back(Pick(rng, c.nodes).spec.name);
}

// Node mode: -N min[-max], --ntasks-per-node, -c, --gpus-per-node, memory.
JobSpec RandomGangJob(Rng& rng, const GangCase& c) {
  JobSpec j;
  RandomJobCommon(rng, c, j);
  j.min_nodes = static_cast<int32_t>(Uniform(rng, 1, 4));
  if (Chance(rng, 30)) j.max_nodes = j.min_nodes + static_cast<int32_t>(Uniform(rng, 1, 2));
  if (Chance(rng, 50)) j.ntasks_per_node = static_cast<int32_t>(Uniform(rng, 1, 3));
  j.cpus_per_task = static_cast<int32_t>(Uniform(rng, 1, 4));
  if (Chance(rng, 40)) j.gpus_per_node = static_cast<int32_t>(Uniform(rng, 1, 3));
  if (j.gpus_per_node == 0) j.gpu_type.clear();
  return j;
}

// Task mode: -n > 1 without -N: tasks packed onto at most max nodes (-N 0-max when given).
JobSpec RandomTaskJob(Rng& rng, const GangCase& c) {
  JobSpec j;
  RandomJobCommon(rng, c, j);
  j.ntasks = static_cast<int32_t>(Uniform(rng, 2, 8));
  j.cpus_per_task = static_cast<int32_t>(Uniform(rng, 1, 4));
  if (Chance(rng, 30)) j.gpus_per_task = static_cast<int32_t>(Uniform(rng, 1, 2));
  if (j.gpus_per_task == 0) j.gpu_type.clear();
  if (Chance(rng, 30)) j.max_nodes = static_cast<int32_t>(Uniform(rng, 1, 3));
  return j;
}

// What one node must give a node-mode job, from the JobSpec alone.
struct Share {
  int32_t cpus = 0;
  int32_t gpus = 0;
  int64_t mem = 0;  // on node `v` (the default depends on the node)
};

Share NodeShare(const JobSpec& j, const NodeView& v) {
  Share s;
  const int32_t tpn = j.ntasks_per_node > 0 ? j.ntasks_per_node : 1;
  s.cpus = tpn * std::max(1, j.cpus_per_task);
  s.gpus = j.gpus_per_node;
  if (j.mem_per_node_mib == 0) {
    s.mem = v.spec.mem_mib;
  } else if (j.mem_per_node_mib > 0) {
    s.mem = j.mem_per_node_mib;
  } else if (j.mem_per_cpu_mib > 0) {
    s.mem = j.mem_per_cpu_mib * s.cpus;
  } else {
    s.mem = v.spec.mem_mib / v.spec.cpus * s.cpus;  // the node's memory share per CPU
  }
  return s;
}

bool HostsShare(const NodeView& v, const JobSpec& j) {
  if (!v.usable) return false;
  const Share s = NodeShare(j, v);
  if (j.exclusive == ExclusiveMode::kNode) {
    return v.idle() && s.cpus <= v.spec.cpus && s.gpus <= v.AllTyped(j.gpu_type) &&
           s.mem <= v.spec.mem_mib;
  }
  const bool mem_ok =
      j.mem_per_node_mib == 0 ? v.free_mem() == v.spec.mem_mib : s.mem <= v.free_mem();
  return s.cpus <= v.free_cpus() && s.gpus <= v.FreeTyped(j.gpu_type) && mem_ok;
}

// The memory a task-mode job holds on a node with k of its tasks.
int64_t TaskMem(const JobSpec& j, const NodeView& v, int64_t k) {
  const int64_t cpt = std::max(1, j.cpus_per_task);
  if (j.mem_per_node_mib == 0 || j.exclusive == ExclusiveMode::kNode) return v.spec.mem_mib;
  if (j.mem_per_node_mib > 0) return j.mem_per_node_mib;
  if (j.mem_per_cpu_mib > 0) return k * j.mem_per_cpu_mib * cpt;
  return k * (v.spec.mem_mib / v.spec.cpus * cpt);
}

bool HostsTasks(const NodeView& v, const JobSpec& j, int64_t k) {
  if (!v.usable) return false;
  const int64_t cpt = std::max(1, j.cpus_per_task);
  if (j.exclusive == ExclusiveMode::kNode) {
    // The whole node, which must still hold what the job asked for.
    const int64_t asked = j.mem_per_node_mib > 0  ? j.mem_per_node_mib
                          : j.mem_per_cpu_mib > 0 ? k * cpt * j.mem_per_cpu_mib
                                                  : 0;
    return v.idle() && k * cpt <= v.spec.cpus && k * j.gpus_per_task <= v.AllTyped(j.gpu_type) &&
           asked <= v.spec.mem_mib;
  }
  const bool mem_ok =
      j.mem_per_node_mib == 0 ? v.free_mem() == v.spec.mem_mib : TaskMem(j, v, k) <= v.free_mem();
  return k * cpt <= v.free_cpus() && k * j.gpus_per_task <= v.FreeTyped(j.gpu_type) && mem_ok;
}

// The nodes the job may use at all: matching its constraint, and with a matching OR
// ("[a|b]") the one alternative `alt` (empty: no such rule).
bool Eligible(const NodeView& v, const JobSpec& j, const std::string& alt) {
  return testing::NodeMatches(v.spec, j.constraint) && (alt.empty() || v.Has(alt));
}

std::vector<std::string> AlternativesOf(const JobSpec& j) {
  std::vector<std::string> alts = j.constraint.MatchingAlternatives();
  if (alts.empty()) alts.push_back("");
  return alts;
}

bool IsRequired(const GangCase& c, const JobSpec& j, size_t i) {
  return std::find(j.nodelist.begin(), j.nodelist.end(), c.nodes[i].spec.name) != j.nodelist.end();
}

// Node mode: every subset of nodes of an allowed size.
bool GangPlacementExists(const GangCase& c, const JobSpec& j) {
  const size_t n = c.nodes.size();
  const int lo = j.min_nodes, hi = std::max(j.min_nodes, j.max_nodes);
  for (const std::string& alt : AlternativesOf(j)) {
    for (uint32_t mask = 1; mask < (1u << n); ++mask) {
      const int count = std::popcount(mask);
      if (count < lo || count > hi) continue;
      bool ok = true;
      for (size_t i = 0; i < n && ok; ++i) {
        const bool in = (mask >> i) & 1;
        if (!in) {
          ok = !IsRequired(c, j, i);
        } else {
          ok = Eligible(c.nodes[i], j, alt) && HostsShare(c.nodes[i], j);
        }
      }
      if (ok) return true;
    }
  }
  return false;
}

// Task mode: every split of the tasks over the nodes (k_i tasks on node i), at most max nodes
// used, each required node holding at least one task.
bool SplitTasks(const GangCase& c, const JobSpec& j, const std::string& alt, size_t i, int64_t left,
                int64_t nodes_left) {
  if (i == c.nodes.size()) return left == 0;
  const bool required = IsRequired(c, j, i);
  if (!required && SplitTasks(c, j, alt, i + 1, left, nodes_left)) return true;
  if (nodes_left == 0 || !Eligible(c.nodes[i], j, alt)) return false;
  for (int64_t k = 1; k <= left; ++k) {
    if (!HostsTasks(c.nodes[i], j, k)) break;  // more tasks never fit where fewer do not
    if (SplitTasks(c, j, alt, i + 1, left - k, nodes_left - 1)) return true;
  }
  return false;
}

bool TaskPlacementExists(const GangCase& c, const JobSpec& j) {
  const int64_t max_nodes = j.max_nodes > 0 ? j.max_nodes : j.ntasks;
  for (const std::string& alt : AlternativesOf(j)) {
    if (SplitTasks(c, j, alt, 0, j.ntasks, max_nodes)) return true;
  }
  return false;
}

// The same cluster with nothing running and every node up.
GangCase EmptyCopy(const GangCase& c) {
  ClusterSpec spec;
  for (const NodeView& v : c.nodes) spec.nodes.push_back(v.spec);
  GangCase e{{}, testing::BuildState(spec), c.topology};
  for (const NodeView& v : c.nodes) {
    NodeView fresh;
    fresh.spec = v.spec;
    e.nodes.push_back(fresh);
  }
  return e;
}

// Checks a start against the search's own rules: each node can host what it was given and gets
// exactly its share (or k tasks' worth), from free devices of the right type; the node or task
// count is within bounds. (Features, -w and the matching-OR rule: CheckPlanAgainstState.)
std::vector<std::string> CheckAgainstSearch(const GangCase& c, const JobSpec& j,
                                            const PlannedStart& s, bool task_mode) {
  std::vector<std::string> bad;
  const bool excl = j.exclusive == ExclusiveMode::kNode;
  int64_t tasks = 0;
  for (const NodeAllocation& a : s.alloc.nodes) {
    const NodeView& v = c.nodes[a.node];
    const std::string where = "node " + v.spec.name + ": ";
    const int64_t k = task_mode ? a.tasks : 1;
    tasks += a.tasks;
    if (task_mode ? !HostsTasks(v, j, k) : !HostsShare(v, j)) {
      bad.push_back(where + "cannot host what it was given");
    }
    const int64_t cpus = excl        ? v.spec.cpus
                         : task_mode ? k * std::max(1, j.cpus_per_task)
                                     : NodeShare(j, v).cpus;
    const int64_t mem = excl ? v.spec.mem_mib : task_mode ? TaskMem(j, v, k) : NodeShare(j, v).mem;
    const int64_t gpus = excl ? v.AllTyped("") : task_mode ? k * j.gpus_per_task : j.gpus_per_node;
    if (a.cpus != cpus) bad.push_back(where + "cpus " + std::to_string(a.cpus));
    if (a.mem_mib != mem) bad.push_back(where + "mem " + std::to_string(a.mem_mib));
    if (std::popcount(a.gpu_mask) != gpus)
      bad.push_back(where + "gpus " + testing::HexMask(a.gpu_mask));
    if ((a.gpu_mask & v.used_gpus) != 0) bad.push_back(where + "a GPU device in use");
    if (!excl && (a.gpu_mask & ~v.TypedMask(j.gpu_type)) != 0) {
      bad.push_back(where + "a GPU of the wrong type");
    }
  }
  const int64_t count = static_cast<int64_t>(s.alloc.nodes.size());
  if (task_mode) {
    if (tasks != j.ntasks) bad.push_back("places " + std::to_string(tasks) + " tasks");
    if (count > (j.max_nodes > 0 ? j.max_nodes : j.ntasks)) bad.push_back("too many nodes");
  } else {
    const int64_t hi = std::max(j.min_nodes, j.max_nodes);
    if (count < j.min_nodes || count > hi) bad.push_back("node count " + std::to_string(count));
    // "As many as fit, up to max": without topology or a matching OR, every fitting node counts.
    if (!c.topology && j.constraint.MatchingAlternatives().empty()) {
      int64_t fitting = 0;
      for (const NodeView& v : c.nodes) fitting += Eligible(v, j, "") && HostsShare(v, j);
      if (count != std::min(hi, fitting)) {
        bad.push_back("took " + std::to_string(count) + " nodes of " + std::to_string(fitting) +
                      " fitting (max " + std::to_string(hi) + ")");
      }
    }
  }
  return bad;
}

std::string DescribeGangCase(const GangCase& c) {
  std::string out;
  for (const NodeView& v : c.nodes) {
    out += "  " + DescribeNode(v.spec) + (v.usable ? "" : " UNUSABLE") +
           " used: cpus=" + std::to_string(v.used_cpus) + " mem=" + std::to_string(v.used_mem) +
           " gpus=" + testing::HexMask(v.used_gpus) + "\n";
  }
  return out;
}

// One case: submit, one pass, compare with the search; `task_mode` picks the job generator.
void CheckPlacementCase(uint64_t seed, bool task_mode, int* started, int* blocked) {
  Rng rng(seed);
  GangCase c = RandomGangCase(rng);
  JobSpec j = task_mode ? RandomTaskJob(rng, c) : RandomGangJob(rng, c);
  SchedulerConfig cfg = SchedulerConfig::Fcfs();
  cfg.placement = Chance(rng, 50) ? PlacementPolicy::kPack : PlacementPolicy::kSpread;
  cfg.topology_aware = Chance(rng, 70);
  const std::string what =
      "job: " + DescribeJob(j) + "\ncluster:\n" + DescribeGangCase(c) +
      "policy: " + (cfg.placement == PlacementPolicy::kPack ? "pack" : "spread");
  auto exists = [&](const GangCase& g) {
    return task_mode ? TaskPlacementExists(g, j) : GangPlacementExists(g, j);
  };
  Result<JobId> id = c.cs.Submit(j, nullptr, 1);
  if (!id.ok()) {
    // Submission may refuse only what could never run, not even on an empty cluster.
    EXPECT_FALSE(exists(EmptyCopy(c)))
        << "refused (" << id.status().message() << ") although it fits the empty cluster\n"
        << what;
    return;
  }
  Plan plan = Schedule(c.cs, 1, cfg);
  const bool want = exists(c);
  ASSERT_EQ(plan.starts.size() == 1, want)
      << (want ? "a placement exists, but the job did not start"
               : "started, but no placement exists")
      << "\n"
      << what << "\nplan:\n"
      << DumpPlan(plan);
  if (!want) {
    ++*blocked;
    return;
  }
  ++*started;
  std::vector<std::string> bad = CheckPlanAgainstState(c.cs, plan);
  Append(bad, CheckAgainstSearch(c, j, plan.starts[0], task_mode));
  EXPECT_TRUE(bad.empty()) << Join(bad) << what << "\nplan:\n" << DumpPlan(plan);
}

TEST(SchedulerPropertyTest, GangPlacementMatchesBruteForce) {
  int started = 0, blocked = 0;
  for (uint64_t seed : PropertySeeds(5000, 10 * kSeeds)) {
    SCOPED_TRACE(SeedTrace(seed));
    CheckPlacementCase(seed, /*task_mode=*/false, &started, &blocked);
  }
  std::printf("  started %d, no placement %d\n", started, blocked);
}

TEST(SchedulerPropertyTest, TaskPackingMatchesBruteForce) {
  int started = 0, blocked = 0;
  for (uint64_t seed : PropertySeeds(5500, 10 * kSeeds)) {
    SCOPED_TRACE(SeedTrace(seed));
    CheckPlacementCase(seed, /*task_mode=*/true, &started, &blocked);
  }
  std::printf("  started %d, no placement %d\n", started, blocked);
}

// ---- Property 6: conservation

TEST(SchedulerPropertyTest, JobsAreConserved) {
  std::map<std::string, int> left_pending;  // reason -> jobs still pending after quiescing
  for (uint64_t seed : PropertySeeds(6000, kSeeds)) {
    SCOPED_TRACE(SeedTrace(seed));
    RandomRun run(seed, RunOptions{});
    Plan last;
    run.set_hook([&](const ClusterState& before, const Plan& plan, const ApplyResult&,
                     const ClusterState& after) {
      last = plan;
      std::vector<std::string> bad = CheckConservation(after, run.submitted(), run.finished());
      Append(bad, CheckPendingReasons(before, plan));
      if (bad.empty()) return;
      ADD_FAILURE() << Join(bad) << "events:\n" << run.log();
      run.Stop();
    });
    for (int e = 0; e < kEvents && !run.stopped(); ++e) {
      run.RandomEvent();
      std::vector<std::string> bad =
          CheckConservation(run.state(), run.submitted(), run.finished());
      if (!bad.empty()) {
        ADD_FAILURE() << Join(bad) << "events:\n" << run.log();
        break;
      }
      run.SchedulePasses();
    }
    run.Quiesce();
    EXPECT_EQ(run.error(), "") << run.log();
    if (run.stopped()) continue;
    // Everything that could run has run: nothing is left running, and each job still pending
    // has its reason from the last pass (the hook checked that every one is listed with one).
    EXPECT_TRUE(run.state().running_ids().empty()) << run.log();
    for (const PendingInfo& i : last.pending) {
      ++left_pending[std::string(PendingReasonName(i.reason))];
    }
  }
  // Expected: dependencies that can never be met (submission refuses what can never run).
  std::string summary;
  for (const auto& [reason, count] : left_pending) {
    summary += " " + reason + " x" + std::to_string(count);
  }
  std::printf("  still pending after quiescing:%s\n", summary.c_str());
}

// ---- Regression tests: the bugs the properties found, each as a small case

const PendingInfo* FindPending(const Plan& p, JobId id) {
  for (const PendingInfo& i : p.pending) {
    if (i.job == id) return &i;
  }
  return nullptr;
}

bool Started(const Plan& p, JobId id) {
  return std::any_of(p.starts.begin(), p.starts.end(),
                     [&](const PlannedStart& s) { return s.job == id; });
}

void EndAt(ClusterState& cs, JobId id, Time t) {
  JobOutcome o;
  o.state = JobState::kCompleted;
  o.end_time = t;
  ASSERT_TRUE(cs.EndJob(id, o, /*requeue=*/false).ok());
}

// Property 2 with --exclusive=user jobs in the mix failed on 33 of its 200 seeds (the first:
// 2003, 2014, 2016) through the two bugs below; kept with other seeds.
TEST(SchedulerPropertyTest, BackfillNeverDelaysTheFirstReservationWithExclusiveUser) {
  RunOptions opt = StableQueueOptions();
  opt.jobs.exclusive_user = true;
  int checked = 0;
  CheckReservationsOverRuns(
      2000, opt, {{"easy", true}, {"conservative", true}, {"multifactor3", true}}, &checked);
}

// Was a bug: the backfill sweep never sees a node held by another user's --exclusive=user job come
// free. PassState::FreeAt adds released resources back with NodeFree::Give, which keeps the
// node's sole_user / user_exclusive as they are now, so FitNode's user check fails at every
// future time. A job blocked only by such a job gets no reservation and no expected start; under
// EASY the reservation goes to a job behind it, whose promised start is broken as soon as the
// exclusive job ends and the first job reserves ahead of it (seed 2003: job 17 promised t=755,
// job 16 reserves nodes at 755 instead).
TEST(SchedulerPropertyTest, JobBlockedByAnotherUsersExclusiveJobGetsAReservation) {
  ClusterState cs = MakeCluster().Nodes("n", 2, 4, 4000).Build();
  SchedulerConfig easy = SchedulerConfig::Easy();
  JobId x = *cs.Submit(
      MakeJob().User("bob", 1001).CpusPerTask(2).Time(100).Exclusive(ExclusiveMode::kUser).Obj(),
      nullptr, 0);
  JobId z = *cs.Submit(MakeJob().User("carol", 1002).CpusPerTask(4).Time(200).Obj(), nullptr, 0);
  (void)cs.Apply(Schedule(cs, 0, easy), 0);
  ASSERT_EQ(cs.FindJob(x)->alloc.nodes[0].node, 0u);
  ASSERT_EQ(cs.FindJob(z)->alloc.nodes[0].node, 1u);
  // h needs both nodes whole: n01 when x ends (100), n02 when z ends (200).
  JobId h = *cs.Submit(MakeJob().User("alice").Nodes(2).CpusPerTask(4).Time(100).Obj(), nullptr, 1);
  // j (bob, like x) fits n01 once x has ended, but its window reaches past 200.
  JobId j = *cs.Submit(MakeJob().User("bob", 1001).CpusPerTask(4).Time(1000).Obj(), nullptr, 1);
  Plan first = Schedule(cs, 1, easy);
  ASSERT_NE(FindPending(first, h), nullptr);
  EXPECT_EQ(FindPending(first, h)->expected_start, 200) << DumpPlan(first);
  // Whatever start the pass promised, it must be kept (what EASY promises, it keeps).
  const PendingInfo* pj = FindPending(first, j);
  ASSERT_NE(pj, nullptr);
  (void)cs.Apply(first, 1);
  if (pj->expected_start == 100) {
    EndAt(cs, x, 100);
    Plan later = Schedule(cs, 100, easy);
    EXPECT_TRUE(Started(later, j)) << "j was promised t=100\n" << DumpPlan(later);
  }
}

// Was a bug: a reservation holds resources but not user-exclusivity. Backfill checks a candidate's
// window against the reserved CPUs, memory and GPUs only, so another user's --exclusive=user job
// (or any job on a node reserved for an --exclusive=user job) may start on the reserved node
// overlapping the reservation; at the reserved time the reserved job may not share the node and
// waits until the backfilled job ends. Here: j (bob) is reserved on the node at t=100; k (carol,
// --exclusive=user, 1000 s) backfills onto it at t=1 since the CPUs allow; at t=100 j cannot start.
TEST(SchedulerPropertyTest, BackfilledExclusiveUserJobDoesNotDelayAReservation) {
  ClusterState cs = MakeCluster().Nodes("n", 1, 8, 8000).Build();
  SchedulerConfig easy = SchedulerConfig::Easy();
  JobId r = *cs.Submit(MakeJob().User("carol", 1002).CpusPerTask(6).Time(100).Obj(), nullptr, 0);
  (void)cs.Apply(Schedule(cs, 0, easy), 0);
  ASSERT_EQ(cs.FindJob(r)->state, JobState::kRunning);
  JobId j = *cs.Submit(MakeJob().User("bob", 1001).CpusPerTask(4).Time(100).Obj(), nullptr, 1);
  JobId k = *cs.Submit(
      MakeJob().User("carol", 1002).CpusPerTask(2).Time(1000).Exclusive(ExclusiveMode::kUser).Obj(),
      nullptr, 1);
  Plan first = Schedule(cs, 1, easy);
  ASSERT_NE(FindPending(first, j), nullptr);
  ASSERT_EQ(FindPending(first, j)->expected_start, 100);
  (void)cs.Apply(first, 1);
  EndAt(cs, r, 100);
  Plan later = Schedule(cs, 100, easy);
  EXPECT_TRUE(Started(later, j)) << "j was promised t=100; k "
                                 << (Started(first, k) ? "backfilled at t=1" : "did not start")
                                 << "\n"
                                 << DumpPlan(later);
}

// Was a bug: --time-min is skipped when an earlier job of the same shape failed to start in the
// same pass. Pass::StartNow's "does not fit now" cache (by shape id, which ignores time limits)
// returns before the --time-min search, so y (which would fit before the reservation with a
// shorter limit) is not started, while the same y alone in the queue behind h is.
TEST(SchedulerPropertyTest, TimeMinIsTriedAfterAJobOfTheSameShapeFailed) {
  auto run = [](bool with_x) {
    ClusterState cs = MakeCluster().Nodes("n", 1, 4, 4000).Build();
    SchedulerConfig easy = SchedulerConfig::Easy();
    (void)cs.Submit(MakeJob().CpusPerTask(2).Time(100).Obj(), nullptr, 0);
    (void)cs.Apply(Schedule(cs, 0, easy), 0);
    (void)cs.Submit(MakeJob().CpusPerTask(4).Time(100).Obj(), nullptr, 1);  // h: reserved at 100
    if (with_x) (void)cs.Submit(MakeJob().CpusPerTask(2).Time(1000).Obj(), nullptr, 1);
    JobId y = *cs.Submit(MakeJob().CpusPerTask(2).Time(1000).TimeMin(50).Obj(), nullptr, 1);
    return Started(Schedule(cs, 1, easy), y);
  };
  ASSERT_TRUE(run(/*with_x=*/false)) << "y starts with a shorter limit when alone";
  EXPECT_TRUE(run(/*with_x=*/true)) << "y is skipped after x, of the same shape, did not fit";
}

// Was a bug: submission accepts a job whose required node (-w) can never host it (here: no GPUs),
// because ClusterState::ValidateFeasible checks only that -w nodes are in the partition. The job
// then waits forever as ReqNodeNotAvail, "UnavailableNodes: n01 (idle)". Slurm refuses it:
// "Requested node configuration is not available". (Property 6's runs end with such jobs.)
TEST(SchedulerPropertyTest, SubmitRefusesARequiredNodeThatCanNeverHostTheJob) {
  ClusterState cs = MakeCluster().Nodes("n", 1, 8, 8000).Nodes("g", 1, 8, 8000, 4, "a100").Build();
  Result<JobId> id = cs.Submit(MakeJob().GpusPerNode(1).NodeList({"n01"}).Obj(), nullptr, 0);
  EXPECT_FALSE(id.ok()) << "accepted; its first pass says: "
                        << FindPending(Schedule(cs, 0, SchedulerConfig::Fcfs()), *id)->detail;
}

// Was lenient: a matching OR ("[ib|fast]") is checked at submission as a
// plain OR, so a job that needs two nodes with the same feature is accepted when one node has
// each, and then waits forever as Resources on an idle cluster ("fit, but too few together").
TEST(SchedulerPropertyTest, SubmitRefusesAMatchingOrNoAlternativeCanMeet) {
  NodeSpec a, b;
  a.name = "a";
  a.cpus = 4;
  a.mem_mib = 4000;
  a.features = {"ib"};
  b = a;
  b.name = "b";
  b.features = {"fast"};
  ClusterState cs = MakeCluster().Node(a).Node(b).Build();
  JobSpec j = MakeJob().Nodes(2).Obj();
  j.constraint = *Constraint::Parse("[ib|fast]");
  EXPECT_FALSE(cs.Submit(j, nullptr, 0).ok());
}

// Was a bug: a task-mode --exclusive job's memory request is ignored. FitTasks gives a whole node
// without comparing --mem-per-cpu x CPUs (or --mem) with the node's memory, so 2 tasks x 4000
// MiB start on a 4000 MiB node; the same request in node mode (-N1 --ntasks-per-node=2) is
// refused at submission, as FitNode checks it.
TEST(SchedulerPropertyTest, ExclusiveTaskModeJobsRespectTheirMemoryRequest) {
  ClusterState cs = MakeCluster().Nodes("n", 1, 4, 4000).Build();
  JobSpec node_mode = MakeJob().Nodes(1).TasksPerNode(2).MemPerCpu(4000).Exclusive().Obj();
  ASSERT_FALSE(cs.Submit(node_mode, nullptr, 0).ok());
  JobSpec task_mode = MakeJob().Tasks(2).MemPerCpu(4000).Exclusive().Obj();
  Result<JobId> id = cs.Submit(task_mode, nullptr, 0);
  if (id.ok()) {
    Plan plan = Schedule(cs, 0, SchedulerConfig::Fcfs());
    EXPECT_FALSE(Started(plan, *id)) << DumpPlan(plan);
  }
}

// The checks themselves: each violation they exist for is reported (a check that never fires
// would make the properties above pass vacuously).
TEST(SchedulerPropertyTest, ChecksReportViolations) {
  ClusterState cs =
      MakeCluster().Nodes("g", 2, 8, 8000, 4, "a100").Build();  // g01 (index 0), g02 (index 1)
  JobId a = *cs.Submit(MakeJob().GpusPerNode(1).Obj(), nullptr, 0);
  JobId b = *cs.Submit(MakeJob().GpusPerNode(1).Obj(), nullptr, 0);
  JobId c = *cs.Submit(MakeJob().Obj(), nullptr, 0);
  (void)cs.SetNodeDrain(1, true, "test", 0);
  auto start = [](JobId job, uint32_t node, int32_t cpus, uint64_t gpus) {
    PlannedStart s;
    s.job = job;
    s.partition = "main";
    s.time_limit = 3600;
    s.alloc.nodes.push_back({node, cpus, 1000, gpus, 1, {}, {}});
    return s;
  };
  Plan plan;
  plan.starts = {start(a, 0, 1, 0b1), start(b, 0, 1, 0b1), start(c, 1, 9, 0)};
  std::string bad = Join(CheckPlanAgainstState(cs, plan));
  EXPECT_NE(bad.find("given to two starts"), std::string::npos) << bad;
  EXPECT_NE(bad.find("node g02 is drain"), std::string::npos) << bad;
  EXPECT_NE(bad.find("exceed what is free"), std::string::npos) << bad;
  EXPECT_NE(bad.find("9 CPUs for 1 x 1"), std::string::npos) << bad;
  // Pending: a listed twice, b missing, c without a reason.
  plan.starts.clear();
  plan.pending = {{a, PendingReason::kResources, "", kNoTime, 0},
                  {a, PendingReason::kResources, "", kNoTime, 0},
                  {c, PendingReason::kNone, "", kNoTime, 0}};
  bad = Join(CheckPendingReasons(cs, plan));
  EXPECT_NE(bad.find("job 1: listed 2 times"), std::string::npos) << bad;
  EXPECT_NE(bad.find("job 2: listed 0 times"), std::string::npos) << bad;
  EXPECT_NE(bad.find("job 3 is pending without a reason"), std::string::npos) << bad;
  EXPECT_TRUE(CheckNodeAccounting(cs).empty());
  EXPECT_EQ(Join(CheckConservation(cs, 4, 0)),
            "  submitted 4 != finished 0 + pending 3 + running 0\n");
}

}  // namespace
}  // namespace berth::core
