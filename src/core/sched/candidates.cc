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
  const Constraint& c = e.job.spec.constraint;
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
  const JobShape& shape = e.shapes[slot];
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
  for (const std::string& alt : e.job.spec.constraint.MatchingAlternatives()) {
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

// The first reason node n cannot take the job now.
std::string NodeCause(const PassState& pass, const JobEntry& e, size_t slot, uint32_t i,
                      Duration limit) {
  const ClusterState& cs = pass.cs();
  const NodeInfo& n = cs.node(i);
  const JobShape& s = e.shapes[slot];
  switch (n.state()) {
    case NodeState::kDown:
      return "down";
    case NodeState::kDrained:
    case NodeState::kDraining:
      return "drained";
    case NodeState::kPoweredDown:
    case NodeState::kPoweringUp:
      if (!cs.Schedulable(n))
        return n.health == NodeHealth::kPoweredDown ? "powered down" : "powering up";
      break;
    case NodeState::kPoweringDown:
      return "powering down";
    default:
      break;
  }
  if (Excluded(e, i)) return "excluded";
  if (!MatchesConstraint(cs, e, n)) return "lack feature " + e.job.spec.constraint.text();
  std::string type = s.gpu_type == kAnyGpuType ? "" : cs.gpu_type_name(s.gpu_type) + " ";
  int typed = __builtin_popcountll(GpuTypeMask(n, s.gpu_type));
  if (s.gpus > 0 && typed == 0) return "have no " + type + "GPUs";
  if (s.gpus > 0 && typed < s.gpus) return "have fewer than " + Gpus(s.gpus, type);
  if (!NodeCanEverHost(s, n)) return "too small";
  NodeFree f = pass.FreeNow(i);
  int32_t user = e.user;
  bool fits_now =
      s.task_mode ? FitTasks(s, n, f, user, 1, nullptr) > 0 : FitNode(s, n, f, user, nullptr);
  if (fits_now) {
    NodeFree w = pass.FreeDuring(i, pass.now(), pass.now() + limit);
    bool fits_window =
        s.task_mode ? FitTasks(s, n, w, user, 1, nullptr) > 0 : FitNode(s, n, w, user, nullptr);
    return fits_window ? "fit, but too few together" : "reserved for higher-priority jobs";
  }
  if (s.whole_node) return "not idle";
  if (s.gpus > 0 && __builtin_popcountll(GpuTypeMask(n, s.gpu_type) & f.gpus) < s.gpus) {
    return "lack " + std::to_string(s.gpus) + " free " + type + (s.gpus == 1 ? "GPU" : "GPUs");
  }
  if (f.cpus < s.cpus)
    return "lack " + std::to_string(s.cpus) + (s.cpus == 1 ? " free CPU" : " free CPUs");
  if (f.sole_user >= 0 && f.sole_user != user && (s.exclusive_user || f.user_exclusive)) {
    return "held exclusively by another user";
  }
  int64_t per_cpu = s.def_mem_per_cpu_mib > 0 ? s.def_mem_per_cpu_mib : n.mem_per_cpu_share();
  int64_t mem = s.mem_given ? s.mem_mib : per_cpu * s.cpus;
  if (s.whole_mem || f.mem_mib < mem)
    return "lack " + MemText(s.whole_mem ? n.spec.mem_mib : mem) + " free memory";
  for (const GresNeed& g : s.gres) {
    for (size_t k = 0; k < n.gres_ids.size(); ++k) {
      if (n.gres_ids[k] == g.gres_id && (k >= f.gres.size() || f.gres[k] < g.count)) {
        return "lack " + std::to_string(g.count) + " free " + n.spec.gres[k].name;
      }
    }
  }
  return "lack free resources";
}

}  // namespace

std::string ExplainNoFit(const PassState& pass, const JobEntry& e, size_t slot, Duration limit) {
  const ClusterState& cs = pass.cs();
  const PartitionInfo& p = cs.partitions()[e.partitions[slot]];
  std::map<std::string, int> causes;
  int total = 0;
  auto tally = [&](uint32_t i) {
    ++causes[NodeCause(pass, e, slot, i, limit)];
    ++total;
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
