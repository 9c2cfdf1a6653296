// The device of a node that a GPU share (JobShape::gpu_milli) goes to, under the configured
// GpuPlacement (issue 20): the bridge from the cluster state's per-device bookkeeping (NodeFree)
// to the pure policies of gpu_policy.h, applied to the devices of one node. Which NODE a share
// goes to is left to placement.cc's node order (docs/scheduling.md "GPU sharing and MIG").
#ifndef BERTH_CORE_SCHED_SHARE_DEVICE_H_
#define BERTH_CORE_SCHED_SHARE_DEVICE_H_

#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <vector>

#include "core/sched/gpu_policy.h"
#include "core/state/cluster_state.h"
#include "core/state/fit.h"

namespace berth::core {

// The GPU part of a shape as gpu_policy.h sees it (CPUs in milli-CPUs; memory left out: the core
// checks it before a device is chosen). A shape without GPUs gives a request for none.
GpuRequest GpuRequestOf(const JobShape& shape);

// Chooses share devices for one scheduling pass. Not thread-safe (FGD's memo); one per pass.
class ShareDevicePicker {
 public:
  explicit ShareDevicePicker(GpuPlacement policy) : policy_(policy) {}

  // The request shapes fgd measures fragmentation against (the pending queue's), each weighing
  // 1. Without any (or with none asking for GPUs), fgd scores every device alike and falls back
  // to its tie-break, gpu-packing's order: the fullest device that fits.
  void SetWorkload(std::vector<GpuRequest> shapes);
  // The same, read from `source` only when fgd first chooses a share's device: a pass that
  // starts no share pays nothing for it. `source` must stay callable while Choose is.
  void SetWorkloadSource(std::function<std::vector<GpuRequest>()> source);

  // The device of `n` (given what it has free, `free`) that a share of `shape` takes: one of
  // `allowed` with room for shape.gpu_milli, or -1 when none has. REQUIRES: shape.gpu_milli > 0.
  int Choose(const NodeInfo& n, const NodeFree& free, uint64_t allowed, const JobShape& shape);

  GpuPlacement policy() const { return policy_; }

 private:
  GpuPlacement policy_;
  std::function<std::vector<GpuRequest>()> source_;
  std::optional<FgdWorkload> workload_;  // built from source_ on the first fgd choice
  std::unique_ptr<FgdCache> cache_;
};

}  // namespace berth::core

#endif  // BERTH_CORE_SCHED_SHARE_DEVICE_H_
