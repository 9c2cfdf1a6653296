#include "core/sched/candidates.h"

#include <algorithm>
#include <map>

namespace berth::core {
namespace {

bool HasFeature(const ClusterState& cs, const NodeInfo& n, std::string_view f) {
  std::optional<int32_t> id = cs.FindFeature(f);
  return id && std::binary_search(n.feature_ids.begin(), n.feature_ids.end(), *id);
}

bool MatchesConstraint(const ClusterState& cs, const JobEntry& e, const NodeInfo& n) {
  const Constraint& c = e.job.spec->constraint;
  return c.empty() || c.Matches([&](std::string_view f) { return HasFeature(cs, n, f); });
}

bool Excluded(const JobEntry& e, uint32_t n) {
  return std::find(e.exclude.begin(), e.exclude.end(), n) != e.exclude.end();
}

}  // namespace

const CandidateSet& CandidateCache::Get(const ClusterState& cs, const JobEntry& e, size_t slot) {
  if (cs.config_generation() != config_generation_) {
    cache_.clear();
    config_generation_ = cs.config_generation();
    state_generation_ = cs.node_state_generation();
  }
  if (cs.node_state_generation() != state_generation_) {
    for (auto& set : cache_) {
      if (!set) continue;
      set->usable = set->static_nodes;
      set->usable &= cs.usable_nodes();
    }
    state_generation_ = cs.node_state_generation();
  }
  size_t id = static_cast<size_t>(e.shape_ids[slot]);
  if (id >= cache_.size()) cache_.resize(id + 1);
  if (cache_[id]) return *cache_[id];
  const PartitionInfo& p = cs.partitions()[e.partitions[slot]];
  const JobShape& shape = cs.shape(e, slot);
  CandidateSet set;
  set.static_nodes = Bitset(cs.num_nodes());
  p.nodes.ForEach([&](size_t i) {
    const NodeInfo& n = cs.node(static_cast<uint32_t>(i));
    if (!Excluded(e, n.index) && MatchesConstraint(cs, e, n) && NodeCanEverHost(shape, n)) {
      set.static_nodes.Set(i);
    }
    return true;
  });
  set.usable = set.static_nodes;
  set.usable &= cs.usable_nodes();
  for (const std::string& alt : e.job.spec->constraint.MatchingAlternatives()) {
    Bitset b(cs.num_nodes());
    set.static_nodes.ForEach([&](size_t i) {
      if (HasFeature(cs, cs.node(static_cast<uint32_t>(i)), alt)) b.Set(i);
      return true;
    });
    set.alternatives.push_back(std::move(b));
  }
  cache_[id] = std::make_unique<CandidateSet>(std::move(set));
  return *cache_[id];
}

namespace {

std::string Gpus(int count, const std::string& type) {
  return std::to_string(count) + " " + type + (count == 1 ? "GPU" : "GPUs");
}

std::string MemText(int64_t mib) {
  if (mib >= 1024 && mib % 1024 == 0) return std::to_string(mib / 1024) + "G";
  return std::to_string(mib) + "M";
}

// Why one node cannot take the job now, in a form that is cheap to count: a kind and the
// number or gres slot its text names. Text is made once per distinct cause (CauseText).
enum class CauseKind : uint8_t {
  kDown,
  kDrained,
  kPoweredDown,
  kPoweringUp,
  kPoweringDown,
  kExcluded,
  kLackFeature,
  kNoGpus,
  kFewerGpus,
  kTooSmall,
  kFitTooFewTogether,
  kReserved,
  kNotIdle,
  kLackGpus,
  kLackGpuShare,
  kLackCpus,
  kHeldExclusive,
  kLackMemory,  // arg: MiB
  kLackGres,    // arg: count, and the gres id
  kLackFree,
};

struct Cause {
  CauseKind kind = CauseKind::kLackFree;
  int64_t arg = 0;
  int32_t gres_id = -1;  // kLackGres: which gres (the text names it)
  bool operator==(const Cause&) const = default;
};

// The first reason node n cannot take the job now.
Cause NodeCause(const PassState& pass, const JobEntry& e, const JobShape& s, uint32_t i,
                Duration limit) {
  const ClusterState& cs = pass.cs();
  const NodeInfo& n = cs.node(i);
  switch (n.state()) {
    case NodeState::kDown:
      return {CauseKind::kDown};
    case NodeState::kDrained:
    case NodeState::kDraining:
      return {CauseKind::kDrained};
    case NodeState::kPoweredDown:
    case NodeState::kPoweringUp:
      if (!cs.Schedulable(n)) {
        return {n.health == NodeHealth::kPoweredDown ? CauseKind::kPoweredDown
                                                     : CauseKind::kPoweringUp};
      }
      break;
    case NodeState::kPoweringDown:
      return {CauseKind::kPoweringDown};
    default:
      break;
  }
  if (Excluded(e, i)) return {CauseKind::kExcluded};
  if (!MatchesConstraint(cs, e, n)) return {CauseKind::kLackFeature};
  int typed = __builtin_popcountll(GpuTypeMask(n, s.gpu_type));
  if ((s.gpus > 0 || s.gpu_milli > 0) && typed == 0) return {CauseKind::kNoGpus};
  if (s.gpus > 0 && typed < s.gpus) return {CauseKind::kFewerGpus};
  if (!NodeCanEverHost(s, n)) return {CauseKind::kTooSmall};
  NodeFree f = pass.FreeNow(i);
  int32_t user = e.user;
  bool fits_now =
      s.task_mode ? FitTasks(s, n, f, user, 1, nullptr) > 0 : FitNode(s, n, f, user, nullptr);
  if (fits_now) {
    NodeFree w = pass.FreeDuring(i, pass.now(), pass.now() + limit);
    bool fits_window =
        s.task_mode ? FitTasks(s, n, w, user, 1, nullptr) > 0 : FitNode(s, n, w, user, nullptr);
    return {fits_window ? CauseKind::kFitTooFewTogether : CauseKind::kReserved};
  }
  if (s.whole_node) return {CauseKind::kNotIdle};
  if (s.gpus > 0 && __builtin_popcountll(GpuTypeMask(n, s.gpu_type) & f.gpus) < s.gpus) {
    return {CauseKind::kLackGpus};
  }
  if (s.gpu_milli > 0 && ChooseShareDevice(GpuTypeMask(n, s.gpu_type), f, s.gpu_milli) < 0) {
    return {CauseKind::kLackGpuShare};
  }
  if (f.cpus < s.cpus) return {CauseKind::kLackCpus};
  if (f.sole_user >= 0 && f.sole_user != user && (s.exclusive_user || f.user_exclusive)) {
    return {CauseKind::kHeldExclusive};
  }
  int64_t per_cpu = s.def_mem_per_cpu_mib > 0 ? s.def_mem_per_cpu_mib : n.mem_per_cpu_share();
  int64_t mem = s.mem_given ? s.mem_mib : per_cpu * s.cpus;
  if (s.whole_mem || f.mem_mib < mem) {
    return {CauseKind::kLackMemory, s.whole_mem ? n.spec.mem_mib : mem};
  }
  for (const GresNeed& g : s.gres) {
    for (size_t k = 0; k < n.gres_ids.size(); ++k) {
      if (n.gres_ids[k] == g.gres_id && (k >= f.gres.size() || f.gres[k] < g.count)) {
        return {CauseKind::kLackGres, g.count, n.gres_ids[k]};
      }
    }
  }
  return {CauseKind::kLackFree};
}

// The text of a cause; `at` is one node that has it (kLackGres names that node's gres).
std::string CauseText(const ClusterState& cs, const JobEntry& e, size_t slot, const Cause& c,
                      uint32_t at) {
  const JobShape& s = cs.shape(e, slot);
  std::string type = s.gpu_type == kAnyGpuType ? "" : cs.gpu_type_name(s.gpu_type) + " ";
  switch (c.kind) {
    case CauseKind::kDown:
      return "down";
    case CauseKind::kDrained:
      return "drained";
    case CauseKind::kPoweredDown:
      return "powered down";
    case CauseKind::kPoweringUp:
      return "powering up";
    case CauseKind::kPoweringDown:
      return "powering down";
    case CauseKind::kExcluded:
      return "excluded";
    case CauseKind::kLackFeature:
      return "lack feature " + e.job.spec->constraint.text();
    case CauseKind::kNoGpus:
      return "have no " + type + "GPUs";
    case CauseKind::kFewerGpus:
      return "have fewer than " + Gpus(s.gpus, type);
    case CauseKind::kTooSmall:
      return "too small";
    case CauseKind::kFitTooFewTogether:
      return "fit, but too few together";
    case CauseKind::kReserved:
      return "reserved for higher-priority jobs";
    case CauseKind::kNotIdle:
      return "not idle";
    case CauseKind::kLackGpus:
      return "lack " + std::to_string(s.gpus) + " free " + type + (s.gpus == 1 ? "GPU" : "GPUs");
    case CauseKind::kLackGpuShare:
      return "lack room for a " + std::to_string(s.gpu_milli) + "/1000 share of a " + type + "GPU";
    case CauseKind::kLackCpus:
      return "lack " + std::to_string(s.cpus) + (s.cpus == 1 ? " free CPU" : " free CPUs");
    case CauseKind::kHeldExclusive:
      return "held exclusively by another user";
    case CauseKind::kLackMemory:
      return "lack " + MemText(c.arg) + " free memory";
    case CauseKind::kLackGres: {
      const NodeInfo& n = cs.node(at);
      for (size_t k = 0; k < n.gres_ids.size(); ++k) {
        if (n.gres_ids[k] == c.gres_id) {
          return "lack " + std::to_string(c.arg) + " free " + n.spec.gres[k].name;
        }
      }
      return "lack free resources";
    }
    case CauseKind::kLackFree:
      break;
  }
  return "lack free resources";
}

}  // namespace

std::string ExplainNoFit(const PassState& pass, const JobEntry& e, size_t slot, Duration limit) {
  const ClusterState& cs = pass.cs();
  const PartitionInfo& p = cs.partitions()[e.partitions[slot]];
  // Nodes counted by cause; a handful of distinct causes at most, so a list beats a map.
  struct Tally {
    Cause cause;
    uint32_t at = 0;
    int count = 0;
  };
  std::vector<Tally> tallies;
  int total = 0;
  const JobShape& shape = cs.shape(e, slot);
  auto tally = [&](uint32_t i) {
    Cause c = NodeCause(pass, e, shape, i, limit);
    ++total;
    for (Tally& t : tallies) {
      if (t.cause == c) {
        ++t.count;
        return;
      }
    }
    tallies.push_back({c, i, 1});
  };
  // With -w, what matters is why the required nodes cannot take it.
  if (!e.nodelist.empty()) {
    for (uint32_t i : e.nodelist) tally(i);
  } else {
    p.nodes.ForEach([&](size_t i) {
      tally(static_cast<uint32_t>(i));
      return true;
    });
  }
  // Ordered by count, ties by text (two causes may read the same: they count as one).
  std::map<std::string, int> causes;
  for (const Tally& t : tallies) causes[CauseText(cs, e, slot, t.cause, t.at)] += t.count;
  std::vector<std::pair<int, std::string>> sorted;
  for (auto& [cause, count] : causes) sorted.emplace_back(count, cause);
  std::stable_sort(sorted.begin(), sorted.end(),
                   [](const auto& a, const auto& b) { return a.first > b.first; });
  std::string out = std::to_string(total) + (e.nodelist.empty() ? "" : " required") +
                    (total == 1 ? " node" : " nodes");
  const char* sep = ": ";
  for (const auto& [count, cause] : sorted) {
    out += sep + std::to_string(count) + " " + cause;
    sep = ", ";
  }
  return out;
}

}  // namespace berth::core
