#include "core/sched/placement.h"

#include <algorithm>
#include <array>
#include <bit>
#include <unordered_map>

namespace berth::core {
namespace {

// How many fitting nodes a packed multi-node placement considers at least (see PlaceNodes).
constexpr size_t kTopologyWindow = 256;
// How many fitting nodes of packing's first tier the GPU placement policy chooses among for a
// single-node GPU job (see PlaceNodes): enough to find a better-matched node than the first,
// bounded so that a pass over a large cluster stays cheap.
constexpr size_t kGpuWindow = 16;

// Calls visit(n) for candidate nodes in preference order until it returns false.
template <typename Visit>
void ForEachInOrder(const ClusterState& cs, const PlaceRequest& req, const Bitset& cand,
                    const NodeIndex& index, Visit&& visit) {
  const JobShape& s = *req.shape;
  int need_gpus = s.task_mode ? s.gpus : s.gpus;
  bool go = true;
  for (const auto& [weight, members] : cs.weight_classes()) {
    if (!go) return;
    if (index.gpu_buckets == nullptr) {
      cand.ForEachAnd(members, [&](size_t n) { return go = visit(static_cast<uint32_t>(n)); });
      continue;
    }
    const std::vector<Bitset>& buckets = *index.gpu_buckets;
    int top = static_cast<int>(buckets.size()) - 1;
    int first = s.whole_node ? 0 : need_gpus;
    for (int step = 0; step <= top - first && go; ++step) {
      int k = req.policy == PlacementPolicy::kPack ? first + step : top - step;
      const Bitset& b = buckets[k];
      const std::vector<uint64_t>& bw = b.words();
      const std::vector<uint64_t>& cw = cand.words();
      const std::vector<uint64_t>& mw = members.words();
      const std::vector<uint64_t>* fw = index.cpu_free ? &index.cpu_free->words() : nullptr;
      for (size_t w = 0; w < bw.size() && go; ++w) {
        uint64_t bits = bw[w] & cw[w] & mw[w];
        if (fw) bits &= (*fw)[w];
        for (; bits != 0 && go; bits &= bits - 1) {
          go = visit(static_cast<uint32_t>(w * 64 + __builtin_ctzll(bits)));
        }
      }
    }
  }
}

// The indices of `options`, those with the most tasks first, in their order on ties (a stable
// sort). Counted into buckets when no option has more than a node's worth of small tasks, as
// nearly always (a comparison sort of a window of hundreds of options was a visible part of
// every multi-node placement).
std::vector<size_t> MostTasksFirst(const std::vector<NodeAllocation>& options) {
  constexpr int32_t kBuckets = 256;
  std::vector<size_t> order(options.size());
  int32_t most = 0;  // every option holds at least one task
  for (const NodeAllocation& a : options) most = std::max(most, a.tasks);
  if (most >= kBuckets) {
    for (size_t i = 0; i < order.size(); ++i) order[i] = i;
    std::stable_sort(order.begin(), order.end(),
                     [&](size_t a, size_t b) { return options[a].tasks > options[b].tasks; });
    return order;
  }
  // Where each task count's run begins, most tasks first.
  std::array<size_t, kBuckets + 1> begin{};
  for (const NodeAllocation& a : options) ++begin[static_cast<size_t>(most - a.tasks) + 1];
  for (size_t k = 1; k <= static_cast<size_t>(most); ++k) begin[k] += begin[k - 1];
  for (size_t i = 0; i < options.size(); ++i) {
    order[begin[static_cast<size_t>(most - options[i].tasks)]++] = i;
  }
  return order;
}

bool IsRequired(const PlaceRequest& req, uint32_t n) {
  return req.required &&
         std::find(req.required->begin(), req.required->end(), n) != req.required->end();
}

// Picks nodes from `fits` (in preference order), preferring the smallest topology group
// (deepest level first) that holds `need` of them.
std::vector<size_t> ChooseGroup(const ClusterState& cs, const std::vector<uint32_t>& fits,
                                int32_t need, bool topology_aware) {
  std::vector<size_t> all(fits.size());
  for (size_t i = 0; i < fits.size(); ++i) all[i] = i;
  if (!topology_aware || cs.topo_depth() == 0 || need <= 1) return all;
  std::unordered_map<int32_t, int32_t> count;  // group -> fitting nodes in it
  for (uint32_t n : fits) {
    for (int32_t g : cs.node(n).topo_groups) ++count[g];
  }
  const auto& groups = cs.topo_groups();
  for (int level = cs.topo_depth() - 1; level >= 0; --level) {
    int32_t best = -1;
    for (const auto& [g, c] : count) {
      if (groups[g].level != level || c < need) continue;
      if (best < 0 || c < count[best] || (c == count[best] && g < best)) best = g;
    }
    if (best >= 0) {
      std::vector<size_t> in;
      for (size_t i = 0; i < fits.size(); ++i) {
        if (groups[best].nodes.Test(fits[i])) in.push_back(i);
      }
      return in;
    }
  }
  return all;
}

// FitNode on node `n`; for a share, the request's picker then chooses its device.
bool FitNodeAndDevice(const ClusterState& cs, const PlaceRequest& req, const FreeFn& free_of,
                      uint32_t n, NodeAllocation* a) {
  const NodeInfo& node = cs.node(n);
  const NodeFree free = free_of(n);
  if (!FitNode(*req.shape, node, free, req.user, a)) return false;
  if (req.share_device != nullptr && !a->gpu_shares.empty()) {
    const int d =
        req.share_device->Choose(node, free, GpuTypeMask(node, req.shape->gpu_type), *req.shape);
    if (d >= 0) a->gpu_shares[0].device = d;
  }
  return true;
}

bool PlaceNodes(const ClusterState& cs, const PlaceRequest& req, const Bitset& cand,
                const NodeIndex& index, const FreeFn& free_of, Allocation* out) {
  const JobShape& s = *req.shape;
  std::vector<NodeAllocation> chosen;
  if (req.required) {
    for (uint32_t n : *req.required) {
      NodeAllocation a;
      if (!cand.Test(n) || !FitNodeAndDevice(cs, req, free_of, n, &a)) return false;
      chosen.push_back(std::move(a));
    }
    if (static_cast<int32_t>(chosen.size()) > s.max_nodes) return false;
  }
  int32_t want_min = s.min_nodes - static_cast<int32_t>(chosen.size());
  int32_t want_max = s.max_nodes - static_cast<int32_t>(chosen.size());
  if (want_max > 0) {
    bool single = want_max == 1 && req.policy == PlacementPolicy::kPack;
    // Packing looks at the best-ranked fitting nodes only: enough to find a tight topology
    // group, without a walk over every node of a large cluster for each multi-node job.
    size_t enough = req.policy == PlacementPolicy::kPack
                        ? std::max<size_t>(kTopologyWindow, 16 * static_cast<size_t>(want_max))
                        : SIZE_MAX;
    std::vector<uint32_t> fits;
    std::vector<NodeAllocation> allocs;
    // A packed single-node GPU job goes where the GPU placement policy chooses among the first
    // fitting nodes of packing's first tier: the lightest weight class, and the fewest free
    // whole GPUs, that have a node it fits on. The tier stays packing's: fgd measured against
    // the pending queue alone would spread a 4-GPU job onto an empty node rather than leave one
    // GPU on a used one, and an 8-GPU job that arrives next would find no whole node (the golden
    // scenario pack_gpu_jobs).
    const bool gpu_choice = single && req.gpu_node_choice && req.share_device != nullptr &&
                            req.share_device->policy() != GpuPlacement::kFirstFit &&
                            (s.gpus > 0 || s.gpu_milli > 0) && !s.whole_node;
    if (gpu_choice && chosen.empty()) {
      std::vector<const NodeInfo*> nodes;
      std::vector<NodeFree> frees;
      int32_t weight = 0;
      int tier = 0;  // free whole GPUs
      ForEachInOrder(cs, req, cand, index, [&](uint32_t n) {
        const NodeInfo& node = cs.node(n);
        if (!nodes.empty() && node.spec.weight != weight) return false;
        NodeFree free = free_of(n);
        if (!nodes.empty() && std::popcount(free.gpus) != tier) return false;
        if (!FitNode(s, node, free, req.user, nullptr)) return true;
        weight = node.spec.weight;
        tier = std::popcount(free.gpus);
        nodes.push_back(&node);
        frees.push_back(std::move(free));
        return nodes.size() < kGpuWindow;
      });
      if (nodes.empty()) return s.min_nodes <= 0;
      int device = -1;
      const auto i = static_cast<size_t>(req.share_device->ChooseNode(nodes, frees, s, &device));
      NodeAllocation a;
      FitNode(s, *nodes[i], frees[i], req.user, &a);
      if (device >= 0 && !a.gpu_shares.empty()) a.gpu_shares[0].device = device;
      out->nodes.push_back(std::move(a));
      return true;
    }
    ForEachInOrder(cs, req, cand, index, [&](uint32_t n) {
      if (IsRequired(req, n)) return true;
      NodeAllocation a;
      if (!FitNodeAndDevice(cs, req, free_of, n, &a)) return true;
      fits.push_back(n);
      allocs.push_back(std::move(a));
      return !single && fits.size() < enough;
    });
    if (static_cast<int32_t>(fits.size()) < std::max(want_min, 1) && want_min > 0) return false;
    if (req.policy == PlacementPolicy::kSpread) {
      std::vector<size_t> order(fits.size());
      for (size_t i = 0; i < order.size(); ++i) order[i] = i;
      std::stable_sort(order.begin(), order.end(), [&](size_t a, size_t b) {
        int32_t wa = cs.node(fits[a]).spec.weight, wb = cs.node(fits[b]).spec.weight;
        if (wa != wb) return wa < wb;  // lighter weight classes first, as for packing
        NodeFree fa = free_of(fits[a]), fb = free_of(fits[b]);
        int ga = __builtin_popcountll(fa.gpus), gb = __builtin_popcountll(fb.gpus);
        return ga != gb ? ga > gb : fa.cpus > fb.cpus;
      });
      std::vector<uint32_t> f2;
      std::vector<NodeAllocation> a2;
      for (size_t i : order) {
        f2.push_back(fits[i]);
        a2.push_back(allocs[i]);
      }
      fits.swap(f2);
      allocs.swap(a2);
    }
    std::vector<size_t> pick = ChooseGroup(cs, fits, std::max(want_min, 1), req.topology_aware);
    for (size_t i = 0; i < pick.size() && static_cast<int32_t>(i) < want_max; ++i) {
      chosen.push_back(allocs[pick[i]]);
    }
  }
  if (static_cast<int32_t>(chosen.size()) < s.min_nodes) return false;
  out->nodes = std::move(chosen);
  return true;
}

bool PlaceTasks(const ClusterState& cs, const PlaceRequest& req, const Bitset& cand,
                const NodeIndex& index, const FreeFn& free_of, Allocation* out) {
  const JobShape& s = *req.shape;
  int32_t left = s.tasks;
  std::vector<NodeAllocation> chosen;
  if (req.required) {
    for (uint32_t n : *req.required) {
      NodeAllocation a;
      if (!cand.Test(n)) return false;
      int32_t k = FitTasks(s, cs.node(n), free_of(n), req.user, left, &a);
      if (k == 0) return false;
      left -= k;
      chosen.push_back(std::move(a));
    }
  }
  // One node that holds every remaining task, in preference order (skipped when no node is
  // large enough for all of them)...
  if (left > 0 && static_cast<int64_t>(left) * s.cpus <= cs.max_node_cpus()) {
    NodeAllocation whole;
    bool found = false;
    ForEachInOrder(cs, req, cand, index, [&](uint32_t n) {
      if (IsRequired(req, n)) return true;
      found = FitTasks(s, cs.node(n), free_of(n), req.user, left, &whole) == left;
      return !found;
    });
    if (found) {
      chosen.push_back(std::move(whole));
      left = 0;
    }
  }
  if (left > 0) {
    // ...else, among the first nodes with room (enough for the tasks, and at least a window's
    // worth), those with room for the most tasks first, so that the job spans few nodes.
    std::vector<NodeAllocation> options;
    options.reserve(kTopologyWindow);
    int64_t room = 0;
    ForEachInOrder(cs, req, cand, index, [&](uint32_t n) {
      if (IsRequired(req, n)) return true;
      NodeAllocation a;
      if (FitTasks(s, cs.node(n), free_of(n), req.user, left, &a) > 0) {
        room += a.tasks;
        options.push_back(std::move(a));
      }
      return !(room >= left && options.size() >= kTopologyWindow);
    });
    for (size_t i : MostTasksFirst(options)) {
      NodeAllocation& a = options[i];
      if (left == 0 || static_cast<int32_t>(chosen.size()) >= s.max_nodes) break;
      if (a.tasks > left) {
        int32_t n = a.node;
        if (FitTasks(s, cs.node(n), free_of(n), req.user, left, &a) != left) continue;
      }
      left -= a.tasks;
      chosen.push_back(std::move(a));
    }
  }
  if (left > 0 || static_cast<int32_t>(chosen.size()) > s.max_nodes) return false;
  out->nodes = std::move(chosen);
  return true;
}

}  // namespace

bool Place(const ClusterState& cs, const PlaceRequest& req, const Bitset& candidates,
           const NodeIndex& index, const FreeFn& free_of, Allocation* out) {
  out->nodes.clear();
  auto place = [&](const Bitset& cand) {
    return req.shape->task_mode ? PlaceTasks(cs, req, cand, index, free_of, out)
                                : PlaceNodes(cs, req, cand, index, free_of, out);
  };
  if (req.alternatives == nullptr || req.alternatives->empty()) return place(candidates);
  for (const Bitset& alt : *req.alternatives) {
    Bitset cand = candidates;
    cand &= alt;
    if (place(cand)) return true;
  }
  out->nodes.clear();
  return false;
}

}  // namespace berth::core
