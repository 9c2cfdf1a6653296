// One full scheduling pass over a large queue on a large GPU cluster (issue: "a pass over
// 100,000 pending jobs on 10,000 nodes in under 1 s on one core, and over 10,000 placements/s").
//
// The cluster is empty at the start of each pass, so a pass both places many jobs (until the
// cluster is full) and then finds reasons for the rest; the state is not changed between
// iterations (the Plan is not applied), so every iteration does the same work.
#include <benchmark/benchmark.h>

#include <cstdio>
#include <random>

#include "core/sched/scheduler.h"
#include "core/state/cluster_state.h"

namespace berth::core {
namespace {

ClusterSpec GpuCluster(int nodes) {
  ClusterSpec spec;
  const int per_switch = 32;
  for (int i = 0; i < nodes; ++i) {
    NodeSpec n;
    char name[32];
    std::snprintf(name, sizeof(name), "gpu%05d", i);
    n.name = name;
    n.cpus = 96;
    n.mem_mib = 1024 * 1024;
    n.gpus.assign(8, i % 4 == 0 ? "a100" : "h100");
    n.features = {i % 2 ? "ib" : "eth"};
    n.topology = {"block" + std::to_string(i / (per_switch * 8)),
                  "sw" + std::to_string(i / per_switch)};
    spec.nodes.push_back(std::move(n));
  }
  return spec;
}

// Mixed shapes, seeded: 1/2/4/8-GPU single-node jobs, 2- and 4-node jobs of 8 GPUs, CPU jobs.
JobSpec RandomJob(std::mt19937_64& rng, int i) {
  JobSpec j;
  j.user = "user" + std::to_string(rng() % 50);
  j.account = "acct" + std::to_string(rng() % 10);
  j.time_limit = 600 + static_cast<Duration>(rng() % 86400);
  int kind = static_cast<int>(rng() % 100);
  if (kind < 35) {
    j.gpus_per_node = 1;
    j.cpus_per_task = 8;
  } else if (kind < 55) {
    j.gpus_per_node = 2;
    j.cpus_per_task = 16;
  } else if (kind < 70) {
    j.gpus_per_node = 4;
    j.cpus_per_task = 32;
  } else if (kind < 82) {
    j.gpus_per_node = 8;
    j.cpus_per_task = 64;
  } else if (kind < 90) {
    j.min_nodes = 2;
    j.gpus_per_node = 8;
  } else if (kind < 94) {
    j.min_nodes = 4;
    j.gpus_per_node = 8;
    j.constraint = *Constraint::Parse("ib");
  } else if (kind < 97) {
    j.gpus_per_node = 1;
    j.gpu_type = "a100";
  } else {
    j.ntasks = 4;
    j.cpus_per_task = 4;
  }
  j.name = "job" + std::to_string(i);
  return j;
}

ClusterState MakeState(int nodes, int jobs) {
  ClusterState cs = std::move(ClusterState::Create(GpuCluster(nodes))).value();
  std::mt19937_64 rng(42);
  for (int i = 0; i < jobs; ++i) {
    Result<JobId> id = cs.Submit(RandomJob(rng, i), nullptr, i / 100);
    if (!id.ok()) std::abort();
  }
  return cs;
}

void BM_SchedulePass(benchmark::State& state) {
  const int nodes = static_cast<int>(state.range(0));
  const int jobs = static_cast<int>(state.range(1));
  ClusterState cs = MakeState(nodes, jobs);
  Scheduler scheduler(SchedulerConfig::Multifactor());
  int64_t started = 0;
  int64_t reservations = 0;
  for (auto _ : state) {
    Plan plan = scheduler.Schedule(cs, jobs / 100 + 60);
    started += static_cast<int64_t>(plan.starts.size());
    reservations += plan.stats.reservations;
    benchmark::DoNotOptimize(plan);
  }
  state.counters["passes/s"] =
      benchmark::Counter(static_cast<double>(state.iterations()), benchmark::Counter::kIsRate);
  state.counters["placements/s"] =
      benchmark::Counter(static_cast<double>(started), benchmark::Counter::kIsRate);
  state.counters["placed/pass"] =
      static_cast<double>(started) / static_cast<double>(state.iterations());
  state.counters["reserved/pass"] =
      static_cast<double>(reservations) / static_cast<double>(state.iterations());
}
BENCHMARK(BM_SchedulePass)
    ->Args({1000, 10000})
    ->Args({1000, 100000})
    ->Args({10000, 10000})
    ->Args({10000, 100000})
    ->Unit(benchmark::kMillisecond)
    ->UseRealTime();

// The same pass with power saving on and every other node powered down (CLOUD): each job is
// placed on the nodes that are up (or woken earlier in the pass) first, and only then on
// powered-down ones. Compare with BM_SchedulePass at the same sizes: the ratio is the cost of
// the two-tier placement.
void BM_SchedulePassPowerSaving(benchmark::State& state) {
  const int nodes = static_cast<int>(state.range(0));
  const int jobs = static_cast<int>(state.range(1));
  ClusterSpec spec = GpuCluster(nodes);
  for (size_t i = 1; i < spec.nodes.size(); i += 2) spec.nodes[i].cloud = true;
  ClusterState cs = std::move(ClusterState::Create(spec)).value();
  cs.SetPowerSaving(true);
  std::mt19937_64 rng(42);
  for (int i = 0; i < jobs; ++i) {
    if (!cs.Submit(RandomJob(rng, i), nullptr, i / 100).ok()) std::abort();
  }
  Scheduler scheduler(SchedulerConfig::Multifactor());
  int64_t started = 0;
  for (auto _ : state) {
    Plan plan = scheduler.Schedule(cs, jobs / 100 + 60);
    started += static_cast<int64_t>(plan.starts.size());
    benchmark::DoNotOptimize(plan);
  }
  state.counters["placements/s"] =
      benchmark::Counter(static_cast<double>(started), benchmark::Counter::kIsRate);
  state.counters["placed/pass"] =
      static_cast<double>(started) / static_cast<double>(state.iterations());
}
BENCHMARK(BM_SchedulePassPowerSaving)
    ->Args({1000, 10000})
    ->Args({10000, 100000})
    ->Unit(benchmark::kMillisecond)
    ->UseRealTime();

// A pass on a full cluster: nothing can start, every job needs its reason (the steady state of
// a busy cluster with a deep queue).
void BM_SchedulePassFullCluster(benchmark::State& state) {
  const int nodes = static_cast<int>(state.range(0));
  const int jobs = static_cast<int>(state.range(1));
  ClusterState cs = MakeState(nodes, jobs);
  Scheduler scheduler(SchedulerConfig::Multifactor());
  (void)cs.Apply(scheduler.Schedule(cs, 0), 0);
  for (auto _ : state) {
    Plan plan = scheduler.Schedule(cs, 60);
    benchmark::DoNotOptimize(plan);
  }
  state.counters["pending"] = static_cast<double>(cs.pending_ids().size());
}
BENCHMARK(BM_SchedulePassFullCluster)
    ->Args({10000, 100000})
    ->Unit(benchmark::kMillisecond)
    ->UseRealTime();

// A long queue of multi-node jobs (issue 17), as `berth sim` replays a scaled SWF trace: nodes
// of 8 CPUs, about half the CPUs taken by running jobs of 10-1,000 one-CPU tasks (up to 125
// nodes each), and `jobs` more such jobs pending; EASY, so the first blocked job gets the
// reservation and every later one is tried for backfill. Args: nodes, pending jobs, and
// whether blocked jobs get their per-node reason details (the controller: 1; `berth sim`: 0).
ClusterState MultiNodeState(int nodes, int jobs) {
  ClusterSpec spec;
  for (int i = 0; i < nodes; ++i) {
    NodeSpec n;
    char name[32];
    std::snprintf(name, sizeof(name), "n%05d", i);
    n.name = name;
    n.cpus = 8;
    n.mem_mib = 32 * 1024;
    spec.nodes.push_back(std::move(n));
  }
  ClusterState cs = std::move(ClusterState::Create(spec)).value();
  std::mt19937_64 rng(7);
  int next = 0;
  auto job = [&] {
    JobSpec j;
    j.user = "user" + std::to_string(rng() % 50);
    j.account = "acct" + std::to_string(rng() % 10);
    j.ntasks = 10 * static_cast<int32_t>(1 + rng() % 100);
    j.time_limit = 600 + static_cast<Duration>(rng() % 86400);
    j.name = "job" + std::to_string(next++);
    return j;
  };
  int64_t asked = 0;
  while (asked < static_cast<int64_t>(nodes) * 8 / 2) {
    JobSpec j = job();
    asked += j.ntasks;
    if (!cs.Submit(std::move(j), nullptr, 0).ok()) std::abort();
  }
  (void)cs.Apply(Schedule(cs, 0, SchedulerConfig::Fcfs()), 0);
  for (int i = 0; i < jobs; ++i) {
    if (!cs.Submit(job(), nullptr, 1 + i / 100).ok()) std::abort();
  }
  return cs;
}

void BM_SchedulePassMultiNodeQueue(benchmark::State& state) {
  const int nodes = static_cast<int>(state.range(0));
  const int jobs = static_cast<int>(state.range(1));
  ClusterState cs = MultiNodeState(nodes, jobs);
  Scheduler scheduler(SchedulerConfig::Easy());
  scheduler.set_explain_details(state.range(2) != 0);
  int64_t started = 0;
  for (auto _ : state) {
    Plan plan = scheduler.Schedule(cs, jobs / 100 + 60);
    started += static_cast<int64_t>(plan.starts.size());
    benchmark::DoNotOptimize(plan);
  }
  state.counters["passes/s"] =
      benchmark::Counter(static_cast<double>(state.iterations()), benchmark::Counter::kIsRate);
  state.counters["placed/pass"] =
      static_cast<double>(started) / static_cast<double>(state.iterations());
}
BENCHMARK(BM_SchedulePassMultiNodeQueue)
    ->Args({1000, 10000, 1})
    ->Args({1000, 10000, 0})
    ->Args({10000, 100000, 1})
    ->Args({10000, 100000, 0})
    ->Unit(benchmark::kMillisecond)
    ->UseRealTime();

}  // namespace
}  // namespace berth::core

BENCHMARK_MAIN();
