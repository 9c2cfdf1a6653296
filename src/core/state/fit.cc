#include "core/state/fit.h"

#include <algorithm>
#include <bit>

#include "core/state/cluster_state.h"

namespace berth::core {
namespace {

uint64_t AllGpus(int n) {
  return n >= 64 ? ~uint64_t{0} : (uint64_t{1} << n) - 1;
}

// The `count` lowest set bits of `mask` (REQUIRES popcount(mask) >= count).
uint64_t LowestBits(uint64_t mask, int count) {
  uint64_t out = 0;
  for (int i = 0; i < count; ++i) {
    uint64_t bit = mask & (~mask + 1);
    out |= bit;
    mask &= mask - 1;
  }
  return out;
}

bool UserAllowed(const NodeFree& f, int32_t user, bool exclusive_user) {
  if (f.sole_user == -1) return true;
  if (f.sole_user == static_cast<int64_t>(user)) return true;
  // Someone else is on the node: a user-exclusive job may not join, nor may anyone join theirs.
  return !exclusive_user && !f.user_exclusive;
}

bool IsEmpty(const NodeInfo& n, const NodeFree& f) {
  return f.cpus == n.spec.cpus && f.mem_mib == n.spec.mem_mib && f.gpus == AllGpus(n.num_gpus);
}

int64_t DefaultMemPerCpu(const JobShape& s, const NodeInfo& n) {
  return s.def_mem_per_cpu_mib > 0 ? s.def_mem_per_cpu_mib : n.mem_per_cpu_share();
}

bool GresFits(const JobShape& s, const NodeInfo& n, const std::vector<int64_t>& free, int64_t mult,
              NodeAllocation* out) {
  for (const GresNeed& g : s.gres) {
    auto it = std::find(n.gres_ids.begin(), n.gres_ids.end(), g.gres_id);
    if (it == n.gres_ids.end()) return false;
    size_t i = static_cast<size_t>(it - n.gres_ids.begin());
    int64_t have = i < free.size() ? free[i] : 0;
    if (have < g.count * mult) return false;
    if (out) out->gres.push_back({n.spec.gres[i].name, g.count * mult});
  }
  return true;
}

}  // namespace

NodeFree NodeFree::Of(const NodeInfo& n) {
  NodeFree f;
  f.cpus = n.free_cpus;
  f.mem_mib = n.free_mem_mib;
  f.gpus = n.free_gpus;
  f.gres = n.free_gres;
  f.sole_user = n.sole_user;
  f.user_exclusive = n.user_exclusive;
  return f;
}

NodeFree NodeFree::Full(const NodeInfo& n) {
  NodeFree f;
  f.cpus = n.spec.cpus;
  f.mem_mib = n.spec.mem_mib;
  f.gpus = AllGpus(n.num_gpus);
  for (const NamedCount& g : n.spec.gres) f.gres.push_back(g.count);
  return f;
}

namespace {
// Adds `sign` x the allocation's named gres to the node's free gres.
void AddGres(const NodeInfo& n, const NodeAllocation& a, int sign, std::vector<int64_t>& gres) {
  for (const NamedCount& g : a.gres) {
    for (size_t i = 0; i < n.spec.gres.size() && i < gres.size(); ++i) {
      if (n.spec.gres[i].name == g.name) gres[i] += sign * g.count;
    }
  }
}
}  // namespace

void NodeFree::Subtract(const NodeInfo& n, const NodeAllocation& a) {
  AddGres(n, a, -1, gres);
  cpus -= a.cpus;
  mem_mib -= a.mem_mib;
  gpus &= ~a.gpu_mask;
}

void NodeFree::Take(const NodeInfo& n, const NodeAllocation& a, int32_t user, bool exclusive_user) {
  Subtract(n, a);
  if (sole_user == -1) {
    sole_user = user;
  } else if (sole_user != static_cast<int64_t>(user)) {
    sole_user = -2;
  }
  user_exclusive = user_exclusive || exclusive_user;
}

void NodeFree::Give(const NodeInfo& n, const NodeAllocation& a) {
  AddGres(n, a, +1, gres);
  cpus += a.cpus;
  mem_mib += a.mem_mib;
  gpus |= a.gpu_mask;
}

uint64_t GpuTypeMask(const NodeInfo& n, int16_t type) {
  if (type == kAnyGpuType) return AllGpus(n.num_gpus);
  for (const auto& [t, mask] : n.gpu_types) {
    if (t == type) return mask;
  }
  return 0;
}

bool NodeCanEverHost(const JobShape& s, const NodeInfo& n) {
  NodeFree full = NodeFree::Full(n);
  if (s.task_mode) return FitTasks(s, n, full, 0, 1, nullptr) == 1;
  return FitNode(s, n, full, 0, nullptr);
}

bool FitNode(const JobShape& s, const NodeInfo& n, const NodeFree& f, int32_t user,
             NodeAllocation* out) {
  if (!UserAllowed(f, user, s.exclusive_user)) return false;
  uint64_t typed = GpuTypeMask(n, s.gpu_type) & f.gpus;
  if (s.whole_node) {
    if (!IsEmpty(n, f)) return false;
    if (std::popcount(GpuTypeMask(n, s.gpu_type)) < s.gpus) return false;
    if (s.mem_given && !s.whole_mem && s.mem_mib > n.spec.mem_mib) return false;
    if (s.cpus > n.spec.cpus) return false;
    if (!GresFits(s, n, f.gres, 1, nullptr)) return false;
    if (out) {
      out->node = n.index;
      out->cpus = n.spec.cpus;
      out->mem_mib = n.spec.mem_mib;
      out->gpu_mask = f.gpus;
      out->tasks = s.tasks;
      out->gres.clear();
      GresFits(s, n, f.gres, 1, out);
    }
    return true;
  }
  if (f.cpus < s.cpus) return false;
  if (std::popcount(typed) < s.gpus) return false;
  int64_t mem = s.whole_mem   ? n.spec.mem_mib
                : s.mem_given ? s.mem_mib
                              : DefaultMemPerCpu(s, n) * s.cpus;
  if (s.whole_mem && f.mem_mib < n.spec.mem_mib) return false;
  if (f.mem_mib < mem) return false;
  if (!s.gres.empty() && !GresFits(s, n, f.gres, 1, nullptr)) return false;
  if (out) {
    out->node = n.index;
    out->cpus = s.cpus;
    out->mem_mib = mem;
    out->gpu_mask = LowestBits(typed, s.gpus);
    out->tasks = s.tasks;
    out->gres.clear();
    GresFits(s, n, f.gres, 1, out);
  }
  return true;
}

int32_t FitTasks(const JobShape& s, const NodeInfo& n, const NodeFree& f, int32_t user,
                 int32_t limit, NodeAllocation* out) {
  if (limit <= 0 || !UserAllowed(f, user, s.exclusive_user)) return 0;
  if (s.whole_node && !IsEmpty(n, f)) return 0;
  if (s.whole_node && s.mem_given && !s.whole_mem) {
    // A whole node still has to meet the job's memory request.
    if (s.mem_per_node_mib > n.spec.mem_mib) return 0;
    if (s.mem_mib > 0)
      limit = static_cast<int32_t>(std::min<int64_t>(limit, n.spec.mem_mib / s.mem_mib));
    if (limit <= 0) return 0;
  }
  uint64_t typed = GpuTypeMask(n, s.gpu_type) & f.gpus;
  int64_t k = std::min<int64_t>(limit, f.cpus / std::max(1, s.cpus));
  if (s.gpus > 0) k = std::min<int64_t>(k, std::popcount(typed) / s.gpus);
  int64_t mem_per_task = 0;
  int64_t node_mem = 0;
  if (s.whole_mem || s.whole_node) {
    if (f.mem_mib < n.spec.mem_mib) return 0;
    node_mem = n.spec.mem_mib;
  } else if (s.mem_per_node_mib > 0) {
    if (f.mem_mib < s.mem_per_node_mib) return 0;
    node_mem = s.mem_per_node_mib;
  } else {
    mem_per_task = s.mem_given ? s.mem_mib : DefaultMemPerCpu(s, n) * s.cpus;
    if (mem_per_task > 0) k = std::min<int64_t>(k, f.mem_mib / mem_per_task);
  }
  for (const GresNeed& g : s.gres) {
    auto it = std::find(n.gres_ids.begin(), n.gres_ids.end(), g.gres_id);
    if (it == n.gres_ids.end()) return 0;
    size_t i = static_cast<size_t>(it - n.gres_ids.begin());
    int64_t have = i < f.gres.size() ? f.gres[i] : 0;
    k = std::min<int64_t>(k, have / g.count);
  }
  if (k <= 0) return 0;
  int32_t tasks = static_cast<int32_t>(k);
  if (out) {
    out->node = n.index;
    out->tasks = tasks;
    out->cpus = s.whole_node ? n.spec.cpus : tasks * s.cpus;
    out->mem_mib = node_mem > 0 ? node_mem : mem_per_task * tasks;
    out->gpu_mask = s.whole_node ? f.gpus : LowestBits(typed, tasks * s.gpus);
    out->gres.clear();
    GresFits(s, n, f.gres, tasks, out);
  }
  return tasks;
}

}  // namespace berth::core
