// The GPU fill experiment (docs/sim.md "GPU fill experiment"), as in the evaluation of the FGD
// paper (Weng et al., ATC'23): pods of an openb pod list arrive one after another on the nodes
// of a node list, never leave, and each is placed by a GPU placement policy
// (core/sched/gpu_policy.h, the functions the core uses) or refused. Reported per policy: the
// GPUs left unallocated when the GPU demand that has arrived reaches 80, 90, 100, 110 and 130%
// of the cluster's GPUs.
//
// Arrivals: the list in file order; when its whole GPU demand stays below 130% of the cluster's
// GPUs, further pods are drawn uniformly, with replacement, from the list (std::mt19937_64
// seeded with `seed`) until it is reached. Every policy sees the same arrivals.
#ifndef BERTH_SIM_GPU_FILL_H_
#define BERTH_SIM_GPU_FILL_H_

#include <array>
#include <cstdint>
#include <string>
#include <utility>
#include <vector>

#include "common/status.h"
#include "core/sched/gpu_policy.h"
#include "sim/node_list.h"

namespace berth::sim {

// The arrived-demand percentages at which the experiment measures.
inline constexpr std::array<int, 5> kFillCheckpoints = {80, 90, 100, 110, 130};

struct FillOptions {
  std::vector<core::GpuPlacement> placements;
  uint64_t seed = 1;
};

struct FillResult {
  core::GpuPlacement placement = core::GpuPlacement::kFirstFit;
  int64_t gpus_total = 0;
  // At each checkpoint (kFillCheckpoints): the cluster's GPUs minus the allocated GPU milli /
  // 1000, and the allocated share of the GPUs (0..1).
  std::array<double, kFillCheckpoints.size()> unallocated_gpus{};
  std::array<double, kFillCheckpoints.size()> allocated_share{};
  int64_t pods_arrived = 0;  // up to the last checkpoint
  int64_t pods_placed = 0;
  int64_t pods_refused = 0;
  int64_t gpu_pods_refused = 0;  // of which asked for GPUs
  // (arrived GPU demand in % of the cluster's GPUs, unallocated GPUs), every 0.5%, for --plot.
  std::vector<std::pair<double, double>> curve;
};

struct FillRun {
  int64_t list_pods = 0;            // pods in the list
  double list_demand_gpus = 0;      // their GPU demand (shares as fractions)
  int64_t sampled_pods = 0;         // arrivals drawn after the list ran out
  std::vector<FillResult> results;  // one per FillOptions::placements, in that order
};

// Runs the experiment. Fails when the node list has no GPUs.
Result<FillRun> RunFill(const NodeList& nodes, const PodList& pods, const FillOptions& options);

}  // namespace berth::sim

#endif  // BERTH_SIM_GPU_FILL_H_
