#include "core/sched/gpu_policy.h"

#include <algorithm>
#include <bit>
#include <string>
#include <tuple>

namespace berth::core {
namespace {

constexpr std::string_view kNames[] = {"first-fit", "best-fit", "dot-product", "gpu-packing",
                                       "fgd"};

// Scores within this of each other are ties (the earlier candidate wins).
constexpr double kTie = 1e-9;

// fgd's scarcity term per milli taken at scarcity 1 (FgdWorkload::TypeScarcity). On the openb
// gpuspec33 list any weight from 0.3 to 0.75 beat every other policy at 100-130%; 0.5 is the
// middle (docs/scheduling.md "GPU placement").
constexpr double kScarcityWeight = 0.5;

bool TypeAllowed(uint64_t allowed, uint8_t type) {
  return allowed == 0 || (type < kMaxGpuTypes && ((allowed >> type) & 1) != 0);
}

// A device that can serve one device's part of the request.
bool DeviceServes(const GpuRequest& req, const GpuDeviceFree& d) {
  return TypeAllowed(req.allowed_types, d.type) && d.free_milli >= req.milli_per_device();
}

// The first `req.device_count()` fully free devices of an allowed type, or 0 when too few.
uint64_t FirstWholeDevices(const GpuRequest& req, std::span<const GpuDeviceFree> devices) {
  uint64_t mask = 0;
  int need = req.gpus;
  for (size_t i = 0; i < devices.size() && need > 0; ++i) {
    if (DeviceServes(req, devices[i])) {
      mask |= uint64_t{1} << i;
      --need;
    }
  }
  return need == 0 ? mask : 0;
}

// One way to place the request on a node: the devices it takes, and what the node has left.
struct Option {
  uint64_t devices = 0;
  int64_t option_free_milli = 0;  // free milli of the devices taken, before
};

int64_t TotalFree(std::span<const GpuDeviceFree> devices) {
  int64_t t = 0;
  for (const GpuDeviceFree& d : devices) t += d.free_milli;
  return t;
}

int CountFullyFree(std::span<const GpuDeviceFree> devices) {
  int n = 0;
  for (const GpuDeviceFree& d : devices) n += d.free_milli == kMilliPerGpu ? 1 : 0;
  return n;
}

// Calls fn(Option) for each distinct way to place `req` on `node`: for a share, each device
// that fits (the first of each (free, type) pair); for whole GPUs, the first free devices; for
// no GPU, the node itself. REQUIRES: GpuRequestFits(req, node) on CPU and memory.
template <typename Fn>
void ForEachOption(const GpuRequest& req, const GpuNodeFree& node, Fn&& fn) {
  if (req.gpus == 0 && !req.is_share()) {
    fn(Option{});
    return;
  }
  if (!req.is_share()) {
    uint64_t mask = FirstWholeDevices(req, node.devices);
    if (mask != 0) fn(Option{mask, int64_t{kMilliPerGpu} * req.gpus});
    return;
  }
  const auto& devs = node.devices;
  for (size_t i = 0; i < devs.size(); ++i) {
    if (!DeviceServes(req, devs[i])) continue;
    bool seen = false;
    for (size_t j = 0; j < i && !seen; ++j) {
      seen = DeviceServes(req, devs[j]) && devs[j].free_milli == devs[i].free_milli &&
             devs[j].type == devs[i].type;
    }
    if (!seen) fn(Option{uint64_t{1} << i, devs[i].free_milli});
  }
}

// The node's devices after taking `devices`, into `out` (which must hold node.devices.size()).
std::span<const GpuDeviceFree> DevicesAfter(const GpuRequest& req, const GpuNodeFree& node,
                                            uint64_t devices,
                                            std::array<GpuDeviceFree, kMaxGpusPerNode>& out) {
  const size_t n = node.devices.size();
  for (size_t i = 0; i < n; ++i) {
    out[i] = node.devices[i];
    if ((devices >> i) & 1) out[i].free_milli -= req.milli_per_device();
  }
  return std::span<const GpuDeviceFree>(out.data(), n);
}

// The policies' scores for one option: lower is better.
struct Scorer {
  GpuPlacement policy;
  const GpuRequest& req;
  FgdCache* fgd;
  double max_cpu = 1;  // best-fit's scale: the largest candidate capacities
  double max_gpu = 1;

  double Score(const GpuNodeFree& node, const Option& o, double frag_before) const {
    const double cpu_left = static_cast<double>(node.cpu_free_milli - req.cpu_milli);
    const double gpu_total = static_cast<double>(TotalFree(node.devices));
    const double gpu_req = static_cast<double>(req.total_gpu_milli());
    switch (policy) {
      case GpuPlacement::kFirstFit:
        return 0;
      case GpuPlacement::kBestFit:
        // The node by what is left; among one node's devices, the fullest (PickGpuPlacement's
        // tie-break: a term added here would fall within kTie and never decide).
        return 0.5 * cpu_left / max_cpu + 0.5 * (gpu_total - gpu_req) / max_gpu;
      case GpuPlacement::kDotProduct: {
        const double cpu_cap = std::max<double>(1, static_cast<double>(node.cpu_capacity_milli));
        const double gpu_cap =
            std::max<double>(1, static_cast<double>(node.devices.size()) * kMilliPerGpu);
        const double free_gpu = req.is_share() ? static_cast<double>(o.option_free_milli)
                                               : (req.gpus > 0 ? gpu_total : 0);
        return (static_cast<double>(req.cpu_milli) / cpu_cap) *
                   (static_cast<double>(node.cpu_free_milli) / cpu_cap) +
               (gpu_req / gpu_cap) * (free_gpu / gpu_cap);
      }
      case GpuPlacement::kGpuPacking:
        return PackingScore(node, o);
      case GpuPlacement::kFgd: {
        std::array<GpuDeviceFree, kMaxGpusPerNode> after;
        const double frag_after = fgd->Fragmentation(node.cpu_free_milli - req.cpu_milli,
                                                     DevicesAfter(req, node, o.devices, after));
        return frag_after - frag_before + ScarcityCost(node, o);
      }
    }
    return 0;
  }

  // fgd's scarcity term: the milli the option takes of each type, by that type's scarcity.
  double ScarcityCost(const GpuNodeFree& node, const Option& o) const {
    const FgdWorkload& w = fgd->workload();
    double cost = 0;
    for (uint64_t m = o.devices; m != 0; m &= m - 1) {
      cost += w.TypeScarcity(node.devices[static_cast<size_t>(std::countr_zero(m))].type);
    }
    return kScarcityWeight * cost * req.milli_per_device();
  }

  // Tiers: 0 a share on a device in use (fullest first); 1 free devices on a node in use (fewest
  // free devices left first); 2 a wholly free node (fewest GPUs first). CPU-only requests go to
  // the nodes with the least free GPU milli.
  // As FGD's tie-break (fgd_ties), wholly free nodes all rank alike (the first wins): on the
  // openb lists, preferring small nodes there left more GPUs unallocated.
  double PackingScore(const GpuNodeFree& node, const Option& o, bool fgd_ties = false) const {
    constexpr double kTier = 1e9;
    if (req.gpus == 0 && !req.is_share()) return static_cast<double>(TotalFree(node.devices));
    if (req.is_share() && o.option_free_milli < kMilliPerGpu) {
      return static_cast<double>(o.option_free_milli);
    }
    const int fully_free = CountFullyFree(node.devices);
    if (fully_free < static_cast<int>(node.devices.size())) {
      return kTier + (fully_free - req.device_count());
    }
    return 2 * kTier + (fgd_ties ? 0.0 : static_cast<double>(node.devices.size()));
  }
};

}  // namespace

std::string_view GpuPlacementName(GpuPlacement p) {
  return kNames[static_cast<int>(p)];
}

Result<GpuPlacement> ParseGpuPlacement(std::string_view name) {
  for (GpuPlacement p : kAllGpuPlacements) {
    if (GpuPlacementName(p) == name) return p;
  }
  return Status::InvalidArgument("unknown GPU placement '" + std::string(name) +
                                 "' (expected first-fit, best-fit, dot-product, gpu-packing or "
                                 "fgd)");
}

bool GpuRequestFits(const GpuRequest& req, const GpuNodeFree& node) {
  if (node.cpu_free_milli < req.cpu_milli || node.mem_free_mib < req.mem_mib) return false;
  if (req.gpus == 0 && !req.is_share()) return true;
  int need = req.device_count();
  for (const GpuDeviceFree& d : node.devices) {
    if (DeviceServes(req, d) && --need == 0) return true;
  }
  return false;
}

std::optional<GpuChoice> PickGpuPlacement(GpuPlacement policy, const GpuRequest& req,
                                          std::span<const GpuNodeFree> nodes, FgdCache* fgd) {
  Scorer scorer{policy, req, fgd};
  if (policy == GpuPlacement::kBestFit) {
    for (const GpuNodeFree& n : nodes) {
      scorer.max_cpu = std::max(scorer.max_cpu, static_cast<double>(n.cpu_capacity_milli));
      scorer.max_gpu =
          std::max(scorer.max_gpu, static_cast<double>(n.devices.size()) * kMilliPerGpu);
    }
  }
  std::optional<GpuChoice> best;
  double best_score = 0;
  double best_tie = 0;
  for (size_t i = 0; i < nodes.size(); ++i) {
    const GpuNodeFree& node = nodes[i];
    if (!GpuRequestFits(req, node)) continue;
    const double frag_before =
        policy == GpuPlacement::kFgd ? fgd->Fragmentation(node.cpu_free_milli, node.devices) : 0;
    ForEachOption(req, node, [&](const Option& o) {
      const double s = scorer.Score(node, o, frag_before);
      // FGD breaks its ties (wholly free nodes all score alike) by gpu-packing's tiers; best-fit
      // its (a share's devices on one node all score alike) by the fullest device.
      const double tie = policy == GpuPlacement::kFgd ? scorer.PackingScore(node, o, true)
                         : policy == GpuPlacement::kBestFit && req.is_share()
                             ? static_cast<double>(o.option_free_milli)
                             : 0;
      if (!best || s < best_score - kTie || (s <= best_score + kTie && tie < best_tie)) {
        best = GpuChoice{static_cast<int32_t>(i), o.devices};
        best_score = s;
        best_tie = tie;
      }
    });
    if (policy == GpuPlacement::kFirstFit && best) break;
  }
  return best;
}

// ---- FGD --------------------------------------------------------------------------------

FgdWorkload FgdWorkload::Build(std::span<const GpuRequest> shapes, std::span<const double> weights,
                               std::span<const int64_t> supply) {
  // Sort the GPU shapes by their GPU part, then CPU, and fold them into groups.
  std::vector<size_t> order;
  double total = 0;
  for (size_t i = 0; i < shapes.size() && i < weights.size(); ++i) {
    if (shapes[i].total_gpu_milli() <= 0 || weights[i] <= 0) continue;
    order.push_back(i);
    total += weights[i];
  }
  auto gpu_key = [&](size_t i) {
    const GpuRequest& r = shapes[i];
    return std::make_tuple(r.milli_per_device(), r.device_count(), r.allowed_types);
  };
  std::sort(order.begin(), order.end(), [&](size_t a, size_t b) {
    auto ka = gpu_key(a);
    auto kb = gpu_key(b);
    if (ka != kb) return ka < kb;
    return shapes[a].cpu_milli < shapes[b].cpu_milli;
  });
  FgdWorkload w;
  for (size_t k = 0; k < order.size(); ++k) {
    const size_t i = order[k];
    const GpuRequest& r = shapes[i];
    const double p = weights[i] / total;
    if (w.groups_.empty() || gpu_key(order[k - 1]) != gpu_key(i)) {
      w.groups_.push_back(Group{r.milli_per_device(), r.device_count(), r.allowed_types,
                                static_cast<uint32_t>(w.cpu_.size()), 0, 0});
    }
    Group& g = w.groups_.back();
    g.weight += p;
    if (g.size > 0 && w.cpu_.back() == r.cpu_milli) {
      w.cum_weight_.back() += p;
    } else {
      w.cpu_.push_back(r.cpu_milli);
      w.cum_weight_.push_back((g.size > 0 ? w.cum_weight_.back() : 0) + p);
      ++g.size;
    }
  }
  // Scarcity: typed demand per type (each typed group's milli spread over its allowed types by
  // their supply), as a share of all demand, over the type's share of the supply.
  int64_t supply_total = 0;
  for (size_t t = 0; t < supply.size() && t < kMaxGpuTypes; ++t) {
    supply_total += std::max<int64_t>(0, supply[t]);
  }
  double demand_total = 0;
  std::array<double, kMaxGpuTypes> typed{};
  for (const Group& g : w.groups_) {
    const double demand = g.weight * g.milli * g.count;
    demand_total += demand;
    if (g.allowed_types == 0) continue;
    int64_t allowed_supply = 0;
    for (size_t t = 0; t < supply.size() && t < kMaxGpuTypes; ++t) {
      if (((g.allowed_types >> t) & 1) != 0) allowed_supply += std::max<int64_t>(0, supply[t]);
    }
    if (allowed_supply == 0) continue;
    for (size_t t = 0; t < supply.size() && t < kMaxGpuTypes; ++t) {
      if (((g.allowed_types >> t) & 1) != 0 && supply[t] > 0) {
        typed[t] += demand * static_cast<double>(supply[t]) / static_cast<double>(allowed_supply);
      }
    }
  }
  if (supply_total > 0 && demand_total > 0) {
    for (size_t t = 0; t < supply.size() && t < kMaxGpuTypes; ++t) {
      if (supply[t] <= 0) continue;
      w.scarcity_[t] = (typed[t] / demand_total) /
                       (static_cast<double>(supply[t]) / static_cast<double>(supply_total));
    }
  }
  return w;
}

double FgdWorkload::Fragmentation(int64_t cpu_free_milli,
                                  std::span<const GpuDeviceFree> devices) const {
  const double total = static_cast<double>(TotalFree(devices));
  if (total <= 0) return 0;
  double f = 0;
  for (const Group& g : groups_) {
    // q: the weight of the group's shapes whose CPU need the node meets.
    const int64_t* begin = cpu_.data() + g.first;
    const int64_t* end = begin + g.size;
    const int64_t* it = std::upper_bound(begin, end, cpu_free_milli);
    const double q = it == begin ? 0 : cum_weight_[g.first + (it - begin) - 1];
    double frag_if_runs = total;
    if (q > 0) {
      int serving = 0;
      int64_t serving_free = 0;
      for (const GpuDeviceFree& d : devices) {
        if (d.free_milli >= g.milli && TypeAllowed(g.allowed_types, d.type)) {
          ++serving;
          serving_free += d.free_milli;
        }
      }
      if (serving >= g.count) frag_if_runs = total - static_cast<double>(serving_free);
    }
    f += q * frag_if_runs + (g.weight - q) * total;
  }
  return f;
}

FgdCache::FgdCache(const FgdWorkload* workload, int log2_slots)
    : workload_(workload), slots_(size_t{1} << log2_slots) {}

double FgdCache::Fragmentation(int64_t cpu_free_milli, std::span<const GpuDeviceFree> devices) {
  if (devices.size() > kKeyDevices) return workload_->Fragmentation(cpu_free_milli, devices);
  Entry key;
  key.cpu = cpu_free_milli;
  key.n = static_cast<uint8_t>(devices.size());
  for (size_t i = 0; i < devices.size(); ++i) {
    key.dev[i] = static_cast<uint16_t>((devices[i].free_milli << 6) | (devices[i].type & 63));
  }
  std::sort(key.dev.begin(), key.dev.begin() + key.n);
  uint64_t h = static_cast<uint64_t>(cpu_free_milli) * 0x9E3779B97F4A7C15ULL;
  for (int i = 0; i < key.n; ++i) h = (h ^ key.dev[i]) * 0x100000001B3ULL;
  h ^= h >> 29;
  Entry& slot = slots_[h & (slots_.size() - 1)];
  if (slot.cpu == key.cpu && slot.n == key.n &&
      std::equal(key.dev.begin(), key.dev.begin() + key.n, slot.dev.begin())) {
    ++hits_;
    return slot.value;
  }
  ++misses_;
  key.value = workload_->Fragmentation(cpu_free_milli, devices);
  slot = key;
  return key.value;
}

}  // namespace berth::core
