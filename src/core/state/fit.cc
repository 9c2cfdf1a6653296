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
  if (!n.gpu_share_milli.empty()) f.gpu_milli = n.gpu_share_milli;
  if (!n.free_gres.empty()) f.gres = n.free_gres;
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

int32_t NodeFree::ShareRoom(int d) const {
  if ((gpus >> d) & 1) return kGpuMilliPerDevice;
  int32_t used = SharedMilli(d);
  return used > 0 ? kGpuMilliPerDevice - used : 0;
}

int ChooseShareDevice(uint64_t allowed, const NodeFree& f, int32_t milli) {
  int best = -1;
  int32_t best_room = 0;
  for (uint64_t m = allowed; m != 0; m &= m - 1) {
    int d = std::countr_zero(m);
    int32_t room = f.ShareRoom(d);
    if (room < milli) continue;
    if (best < 0 || room < best_room) {
      best = d;
      best_room = room;
    }
  }
  return best;
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
  if (!a.gres.empty()) AddGres(n, a, -1, gres);
  cpus -= a.cpus;
  mem_mib -= a.mem_mib;
  gpus &= ~a.gpu_mask;
  if (gpu_milli.empty() && a.gpu_shares.empty()) return;
  gpu_milli.resize(static_cast<size_t>(n.num_gpus), 0);
  // A device taken whole holds no shares (a preemption may take over a device its victims shared).
  for (uint64_t m = a.gpu_mask; m != 0; m &= m - 1) {
    size_t d = static_cast<size_t>(std::countr_zero(m));
    if (d < gpu_milli.size()) gpu_milli[d] = 0;
  }
  for (const GpuShare& s : a.gpu_shares) {
    if (s.device < 0 || s.device >= n.num_gpus) continue;
    gpu_milli[static_cast<size_t>(s.device)] += s.milli;
    gpus &= ~(uint64_t{1} << s.device);
  }
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
  if (!a.gres.empty()) AddGres(n, a, +1, gres);
  cpus += a.cpus;
  mem_mib += a.mem_mib;
  gpus |= a.gpu_mask;
  if (gpu_milli.empty()) return;  // no device shared: nothing below to do
  for (const GpuShare& s : a.gpu_shares) {
    if (s.device < 0 || static_cast<size_t>(s.device) >= gpu_milli.size()) continue;
    int32_t& used = gpu_milli[static_cast<size_t>(s.device)];
    used = std::max(0, used - s.milli);
    if (used == 0) gpus |= uint64_t{1} << s.device;
  }
  if (std::all_of(gpu_milli.begin(), gpu_milli.end(), [](int32_t m) { return m == 0; })) {
    gpu_milli.clear();
  }
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
    if (std::popcount(GpuTypeMask(n, s.gpu_type)) < std::max(s.gpus, s.gpu_milli > 0 ? 1 : 0))
      return false;
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
  int share_device = -1;
  if (s.gpu_milli > 0) {
    share_device = ChooseShareDevice(GpuTypeMask(n, s.gpu_type), f, s.gpu_milli);
    if (share_device < 0) return false;
  }
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
    out->gpu_shares.clear();
    if (share_device >= 0) out->gpu_shares.push_back({share_device, s.gpu_milli});
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
  // The devices of the job's type that are free (read only when it asks for devices).
  const uint64_t typed = s.gpus > 0 ? GpuTypeMask(n, s.gpu_type) & f.gpus : 0;
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
    if (!s.gres.empty()) GresFits(s, n, f.gres, tasks, out);
  }
  return tasks;
}

}  // namespace berth::core
