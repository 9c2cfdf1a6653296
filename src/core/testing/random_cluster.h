// Random clusters and jobs for property tests (header-only, test code only), the seeds those
// tests run over, and the building blocks of a run. The canonical text of a Plan and the
// independent checks of the scheduler's invariants are in plan_checks.h (included here);
// RandomRun, a cluster driven by random events in virtual time, is in random_run.h.
//
//   for (uint64_t seed : PropertySeeds(kBase, 200)) {
//     SCOPED_TRACE(SeedTrace(seed));
//     std::mt19937_64 rng(seed);
//     ClusterSpec spec = RandomClusterSpec(rng, {});
//     ...
//   }
//
// Every choice comes from the generator passed in (never from a clock or a global), and the
// helpers below draw numbers without std::uniform_int_distribution (whose output differs between
// standard libraries), so a seed replays the same case on any platform.
// BERTH_PROPERTY_SEED=<seed> makes PropertySeeds return only that seed.
#ifndef BERTH_CORE_TESTING_RANDOM_CLUSTER_H_
#define BERTH_CORE_TESTING_RANDOM_CLUSTER_H_

#include <algorithm>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <functional>
#include <random>
#include <string>
#include <string_view>
#include <tuple>
#include <utility>
#include <vector>

#include "core/model/cluster_spec.h"
#include "core/model/constraint.h"
#include "core/model/job.h"
#include "core/model/job_state.h"
#include "core/model/node.h"
#include "core/model/partition.h"
#include "core/model/reason.h"
#include "core/plan.h"
#include "core/sched/scheduler.h"
#include "core/state/cluster_state.h"
#include "core/testing/plan_checks.h"

namespace berth::core::testing {

using Rng = std::mt19937_64;

// ---- Drawing numbers

// A number in [lo, hi] (inclusive). The modulo bias is irrelevant for tests.
inline int64_t Uniform(Rng& rng, int64_t lo, int64_t hi) {
  return lo + static_cast<int64_t>(rng() % static_cast<uint64_t>(hi - lo + 1));
}
inline bool Chance(Rng& rng, int percent) {
  return Uniform(rng, 0, 99) < percent;
}
template <typename T>
const T& Pick(Rng& rng, const std::vector<T>& v) {
  return v[static_cast<size_t>(Uniform(rng, 0, static_cast<int64_t>(v.size()) - 1))];
}

// ---- Seeds

// `count` seeds derived from `base`, or only the seed in BERTH_PROPERTY_SEED when it is set
// (to replay one failing case: the failure message prints the seed).
inline std::vector<uint64_t> PropertySeeds(uint64_t base, int count) {
  if (const char* env = std::getenv("BERTH_PROPERTY_SEED"); env != nullptr && *env != '\0') {
    return {std::strtoull(env, nullptr, 0)};
  }
  std::vector<uint64_t> seeds;
  for (int i = 0; i < count; ++i) seeds.push_back(base + static_cast<uint64_t>(i));
  return seeds;
}

inline std::string SeedTrace(uint64_t seed) {
  return "seed " + std::to_string(seed) + " (replay: BERTH_PROPERTY_SEED=" + std::to_string(seed) +
         ")";
}

// ---- Random clusters

inline const std::vector<std::string>& FeatureNames() {
  static const std::vector<std::string> kNames = {"ib", "fast", "big"};
  return kNames;
}
inline const std::vector<std::string>& GpuTypeNames() {
  static const std::vector<std::string> kNames = {"a100", "h100"};
  return kNames;
}

struct ClusterOptions {
  int min_nodes = 1;
  int max_nodes = 8;
  bool gpus = true;        // some nodes have GPUs (of one or two types)
  bool features = true;    // nodes carry random features from FeatureNames()
  bool partitions = true;  // maybe a second partition over some of the nodes
  bool topology = true;    // maybe a two-level topology (block, switch)
  bool weights = true;     // maybe two node weight classes
  // Every node alike in GPU count (none), weight and topology: see the whole-node scenario of
  // the backfill property.
  bool uniform_order = false;
};

// A random cluster. Its QoS list has "high", which may preempt "normal" (only used when a
// scheduler config enables preemption).
inline ClusterSpec RandomClusterSpec(Rng& rng, const ClusterOptions& opt) {
  ClusterSpec spec;
  const int n = static_cast<int>(Uniform(rng, opt.min_nodes, opt.max_nodes));
  const bool two_types = opt.gpus && Chance(rng, 40);
  const bool topo = opt.topology && !opt.uniform_order && Chance(rng, 50);
  const bool weights = opt.weights && !opt.uniform_order && Chance(rng, 30);
  for (int i = 0; i < n; ++i) {
    NodeSpec node;
    node.name = "n" + std::to_string(i);
    node.cpus = static_cast<int32_t>(Pick(rng, std::vector<int64_t>{2, 4, 8, 16}));
    node.mem_mib = Pick(rng, std::vector<int64_t>{4000, 8000, 16000, 32000});
    if (opt.gpus && !opt.uniform_order && Chance(rng, 60)) {
      int count = static_cast<int>(Uniform(rng, 1, 8));
      std::string type = two_types ? Pick(rng, GpuTypeNames()) : GpuTypeNames()[0];
      for (int g = 0; g < count; ++g) {
        // A few nodes mix both types, device by device.
        bool mixed = two_types && (i % 5 == 4);
        node.gpus.push_back(mixed ? GpuTypeNames()[g % 2] : type);
      }
    }
    if (opt.features) {
      for (const std::string& f : FeatureNames()) {
        if (Chance(rng, 40)) node.features.push_back(f);
      }
    }
    if (topo) node.topology = {"block" + std::to_string(i / 4), "sw" + std::to_string(i / 2)};
    if (weights) node.weight = static_cast<int32_t>(Uniform(rng, 1, 2));
    spec.nodes.push_back(std::move(node));
  }
  if (opt.partitions && Chance(rng, 40)) {
    PartitionSpec main;
    main.name = "main";
    main.is_default = true;
    PartitionSpec second;
    second.name = "second";
    second.priority_tier = static_cast<int32_t>(Uniform(rng, 1, 2));
    for (const NodeSpec& node : spec.nodes) {
      main.nodes.push_back(node.name);
      if (Chance(rng, 50)) second.nodes.push_back(node.name);
    }
    if (second.nodes.empty()) second.nodes.push_back(spec.nodes.back().name);
    spec.partitions = {main, second};
  }
  QosSpec high;
  high.name = "high";
  high.priority = 10;
  high.preempt = {kDefaultQos};
  spec.qos.push_back(high);
  return spec;
}

// ---- Random jobs

struct JobOptions {
  bool arrays = true;
  bool throttled_arrays = true;  // %N throttles
  bool dependencies = true;      // afterok/afterany on earlier jobs
  bool begin_times = true;
  bool holds = true;  // held at submission
  bool exclusive_node = true;
  bool exclusive_user = true;
  bool time_min = true;
  bool task_mode = true;
  bool node_ranges = true;        // -N min-max
  bool nodelists = true;          // -w / -x
  bool qos_high = false;          // some jobs in QoS "high" (for preemption)
  bool whole_nodes_only = false;  // every job --exclusive with a fixed node count
  bool gpu_shares = false;        // some GPU jobs ask for a share of one device instead
  int users = 3;
};

// A feature expression over FeatureNames(): plain, AND, OR, or matching OR.
inline Constraint RandomConstraint(Rng& rng) {
  static const std::vector<std::string> kTexts = {"ib",      "fast",      "ib&fast",
                                                  "ib|fast", "[ib|fast]", "big|ib"};
  Result<Constraint> c = Constraint::Parse(Pick(rng, kTexts));
  return c.ok() ? *c : Constraint();
}

// A random request. `earlier` are ids of jobs submitted before (dependency targets).
// The spec may be refused at submission (e.g. more GPUs than any node has); callers skip those.
inline JobSpec RandomJobSpec(Rng& rng, const ClusterSpec& cluster, const JobOptions& opt, Time now,
                             const std::vector<JobId>& earlier) {
  JobSpec j;
  int user = static_cast<int>(Uniform(rng, 0, opt.users - 1));
  j.user = "u" + std::to_string(user);
  j.uid = 1000 + static_cast<uint32_t>(user);
  j.time_limit = Chance(rng, 50) ? 60 * Uniform(rng, 1, 20) : Uniform(rng, 1, 900);
  if (Chance(rng, 20)) j.constraint = RandomConstraint(rng);
  if (cluster.partitions.size() > 1 && Chance(rng, 30)) {
    j.partitions = Chance(rng, 50) ? std::vector<std::string>{"second"}
                                   : std::vector<std::string>{"second", "main"};
  }
  if (opt.whole_nodes_only) {
    j.exclusive = ExclusiveMode::kNode;
    j.min_nodes = static_cast<int32_t>(Uniform(rng, 1, 3));
    return j;
  }
  const bool any_gpus = std::any_of(cluster.nodes.begin(), cluster.nodes.end(),
                                    [](const NodeSpec& n) { return !n.gpus.empty(); });
  // The shape: one node, several nodes, tasks spread by the allocator, or GPUs as a total.
  switch (Uniform(rng, 0, 9)) {
    case 0:
    case 1:
    case 2:
    case 3:
      j.cpus_per_task = static_cast<int32_t>(Uniform(rng, 1, 4));
      break;
    case 4:
    case 5:
      j.min_nodes = static_cast<int32_t>(Uniform(rng, 1, 3));
      if (opt.node_ranges && Chance(rng, 30)) {
        j.max_nodes = j.min_nodes + static_cast<int32_t>(Uniform(rng, 1, 2));
      }
      if (Chance(rng, 50)) j.ntasks_per_node = static_cast<int32_t>(Uniform(rng, 1, 2));
      j.cpus_per_task = static_cast<int32_t>(Uniform(rng, 1, 2));
      break;
    case 6:
    case 7:
      if (opt.task_mode) {
        j.ntasks = static_cast<int32_t>(Uniform(rng, 2, 6));
        j.cpus_per_task = static_cast<int32_t>(Uniform(rng, 1, 2));
        if (any_gpus && Chance(rng, 25)) j.gpus_per_task = 1;
      }
      break;
    default:
      if (any_gpus) j.gpus = static_cast<int32_t>(Uniform(rng, 1, 4));
      break;
  }
  if (any_gpus && j.gpus == 0 && j.gpus_per_task == 0 && Chance(rng, 40)) {
    j.gpus_per_node = static_cast<int32_t>(Uniform(rng, 1, 4));
  }
  if (any_gpus && (j.gpus > 0 || j.gpus_per_node > 0 || j.gpus_per_task > 0) && Chance(rng, 40)) {
    j.gpu_type = Pick(rng, GpuTypeNames());
    // Only types some node has (otherwise the submission is refused, which teaches nothing).
    bool exists = false;
    for (const NodeSpec& n : cluster.nodes) {
      exists = exists || std::find(n.gpus.begin(), n.gpus.end(), j.gpu_type) != n.gpus.end();
    }
    if (!exists) j.gpu_type.clear();
  }
  if (opt.gpu_shares && any_gpus && Chance(rng, 40)) {
    j.gpus = j.gpus_per_node = j.gpus_per_task = 0;
    j.gpu_milli = static_cast<int32_t>(Pick(rng, std::vector<int>{100, 250, 300, 500, 700, 1000}));
  }
  switch (Uniform(rng, 0, 9)) {
    case 0:
    case 1:
      j.mem_per_node_mib = Uniform(rng, 1, 16) * 500;
      break;
    case 2:
      j.mem_per_cpu_mib = Uniform(rng, 1, 8) * 250;
      break;
    case 3:
      if (Chance(rng, 30)) j.mem_per_node_mib = 0;  // --mem=0: all of each node's memory
      break;
    default:
      break;  // the default share
  }
  if (opt.exclusive_node && Chance(rng, 8)) j.exclusive = ExclusiveMode::kNode;
  if (opt.exclusive_user && Chance(rng, 8)) j.exclusive = ExclusiveMode::kUser;
  if (opt.time_min && Chance(rng, 10)) j.time_min = std::max<Duration>(1, j.time_limit / 4);
  if (opt.arrays && Chance(rng, 10)) {
    int tasks = static_cast<int>(Uniform(rng, 2, 5));
    for (int t = 0; t < tasks; ++t) j.array.task_ids.push_back(t);
    if (opt.throttled_arrays && Chance(rng, 50)) {
      j.array.max_running = static_cast<int32_t>(Uniform(rng, 1, 2));
    }
  }
  if (opt.holds && Chance(rng, 5)) j.hold = HoldKind::kUser;
  if (opt.begin_times && Chance(rng, 5)) j.begin_time = now + Uniform(rng, 1, 600);
  if (opt.dependencies && !earlier.empty() && Chance(rng, 8)) {
    DependencyCondition c;
    c.type = Chance(rng, 50) ? DependencyType::kAfterOk : DependencyType::kAfterAny;
    c.targets.push_back({Pick(rng, earlier), kAllArrayTasks, 0});
    j.dependency.conditions.push_back(c);
    j.kill_on_invalid_dep = Chance(rng, 50);
  }
  if (opt.nodelists && Chance(rng, 6)) {
    const std::string& name = Pick(rng, cluster.nodes).name;
    (Chance(rng, 50) ? j.nodelist : j.exclude).push_back(name);
  }
  if (opt.qos_high && Chance(rng, 15)) j.qos = "high";
  j.nice = static_cast<int32_t>(Uniform(rng, 0, 2) * 100);
  return j;
}

// ---- Building blocks of a run

inline std::string JoinLines(const std::vector<std::string>& lines) {
  std::string out;
  for (const std::string& l : lines) out += "  " + l + "\n";
  return out;
}

inline ClusterState BuildState(const ClusterSpec& spec) {
  Result<ClusterState> r = ClusterState::Create(spec);
  if (!r.ok()) {
    std::fprintf(stderr, "random cluster rejected: %s\n", r.status().ToString().c_str());
    std::abort();
  }
  return std::move(r).value();
}

// Scheduler configurations by name: the presets, plus "spread" (multifactor, spreading),
// "preempt" (multifactor, QoS preemption) and "multifactor3" (multifactor with three
// reservations, weighing neither age nor fair-share, so that time and usage alone never reorder
// the queue).
inline SchedulerConfig NamedConfig(const std::string& name) {
  SchedulerConfig c = SchedulerConfig::Multifactor();
  if (name == "spread") {
    c.placement = PlacementPolicy::kSpread;
  } else if (name == "preempt") {
    c.preempt_type = PreemptType::kQos;
  } else if (name == "multifactor3") {
    c.reservation_depth = 3;
    c.weights.age = 0;
    c.weights.fairshare = 0;
  } else {
    Result<SchedulerConfig> preset = SchedulerConfig::Preset(name);
    if (preset.ok()) return *preset;
  }
  c.name = name;
  return c;
}

// ---- Descriptions for failure messages

inline std::string DescribeNode(const NodeSpec& n) {
  std::string out =
      n.name + " cpus=" + std::to_string(n.cpus) + " mem=" + std::to_string(n.mem_mib);
  if (!n.gpus.empty()) {
    out += " gpus=";
    for (const std::string& g : n.gpus) out += g + ",";
  }
  if (!n.features.empty()) {
    out += " features=";
    for (const std::string& f : n.features) out += f + ",";
  }
  if (!n.topology.empty()) out += " topo=" + n.topology[0] + "/" + n.topology[1];
  if (n.weight != 1) out += " weight=" + std::to_string(n.weight);
  return out;
}

inline std::string DescribeCluster(const ClusterSpec& spec) {
  std::string out;
  for (const NodeSpec& n : spec.nodes) out += "node " + DescribeNode(n) + "\n  ";
  for (const PartitionSpec& p : spec.partitions) {
    out += "partition " + p.name + " tier=" + std::to_string(p.priority_tier) + " nodes=";
    for (const std::string& n : p.nodes) out += n + ",";
    out += "\n  ";
  }
  return out;
}

inline std::string DescribeJob(const JobSpec& j) {
  std::string out = j.user + " time=" + std::to_string(j.time_limit);
  auto add = [&](const char* key, int64_t v, int64_t unset) {
    if (v != unset) out += std::string(" ") + key + "=" + std::to_string(v);
  };
  add("N", j.min_nodes, 0);
  add("Nmax", j.max_nodes, 0);
  add("n", j.ntasks, 0);
  add("tpn", j.ntasks_per_node, 0);
  add("c", j.cpus_per_task, 0);
  add("G", j.gpus, 0);
  add("gpn", j.gpus_per_node, 0);
  add("gpt", j.gpus_per_task, 0);
  add("milli", j.gpu_milli, 0);
  add("mem", j.mem_per_node_mib, -1);
  add("mpc", j.mem_per_cpu_mib, -1);
  add("tmin", j.time_min, kNoTime);
  add("begin", j.begin_time, kNoTime);
  add("nice", j.nice, 0);
  if (!j.gpu_type.empty()) out += " type=" + j.gpu_type;
  if (j.exclusive == ExclusiveMode::kNode) out += " exclusive";
  if (j.exclusive == ExclusiveMode::kUser) out += " exclusive=user";
  if (!j.constraint.empty()) out += " constraint=" + j.constraint.text();
  for (const std::string& p : j.partitions) out += " partition=" + p;
  for (const std::string& n : j.nodelist) out += " w=" + n;
  for (const std::string& n : j.exclude) out += " x=" + n;
  if (!j.array.empty()) {
    out += " array=" + std::to_string(j.array.task_ids.size()) + "%" +
           std::to_string(j.array.max_running);
  }
  if (j.hold != HoldKind::kNone) out += " held";
  if (!j.dependency.empty()) out += " dependency=" + FormatDependency(j.dependency);
  if (!j.qos.empty()) out += " qos=" + j.qos;
  return out;
}

}  // namespace berth::core::testing

#endif  // BERTH_CORE_TESTING_RANDOM_CLUSTER_H_
