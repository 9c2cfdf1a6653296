// Placement: choosing nodes for one job among candidate nodes, given what each node has free.
// Node order expresses the policy: lighter node weights first; then, to pack, nodes with the
// fewest free GPUs that still fit (so whole GPU nodes stay free for large GPU jobs, and CPU-only
// jobs go to nodes without free GPUs first); to spread, the most free first. A packed
// single-node GPU job goes where the GPU placement policy (GpuPlacement=) chooses among the first
// fitting nodes of that order. Multi-node jobs
// prefer the smallest topology group (switch, then block) that holds them, and are placed
// all-or-nothing.
#ifndef BERTH_CORE_SCHED_PLACEMENT_H_
#define BERTH_CORE_SCHED_PLACEMENT_H_

#include <cstdint>
#include <functional>
#include <vector>

#include "common/bitset.h"
#include "core/config.h"
#include "core/sched/share_device.h"
#include "core/state/cluster_state.h"
#include "core/state/fit.h"

namespace berth::core {

struct PlaceRequest {
  const JobShape* shape = nullptr;
  int32_t user = 0;                                 // interned user id (node sharing rules)
  const std::vector<uint32_t>* required = nullptr;  // -w nodes; may be null
  // Matching-OR alternatives ("[a|b]"): for each, the nodes having it. Empty: no such rule.
  const std::vector<Bitset>* alternatives = nullptr;
  PlacementPolicy policy = PlacementPolicy::kPack;
  bool topology_aware = true;
  // Chooses the device of a GPU share on each node placed (GpuPlacement=); null: FitNode's own
  // choice, best fit (ChooseShareDevice).
  ShareDevicePicker* share_device = nullptr;
  // Whether share_device's policy also chooses the node of a single-node GPU job among the first
  // that fit (PlaceNodes). Off for backfill's plans of a future start, where any node that fits
  // will do and the choice is made again when the job starts.
  bool gpu_node_choice = true;
};

using FreeFn = std::function<NodeFree(uint32_t)>;

// Where to find nodes with free resources quickly: per free-GPU-count buckets and a set of nodes
// with a free CPU (both restricted to usable nodes). When null, candidates are taken as they are.
struct NodeIndex {
  const std::vector<Bitset>* gpu_buckets = nullptr;
  const Bitset* cpu_free = nullptr;
};

// Places the job on `candidates`; returns false (and leaves `out` empty) when it cannot be
// placed as a whole.
bool Place(const ClusterState& cs, const PlaceRequest& req, const Bitset& candidates,
           const NodeIndex& index, const FreeFn& free_of, Allocation* out);

}  // namespace berth::core

#endif  // BERTH_CORE_SCHED_PLACEMENT_H_
