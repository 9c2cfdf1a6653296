// The node, and the device of a share, that a single-node GPU job goes to under the configured
// GpuPlacement (issue 20): the bridge from the cluster state's per-device bookkeeping (NodeFree)
// to the pure policies of gpu_policy.h. placement.cc offers the policy a window of the nodes that
// fit, in its own order (weight class, then fewest free GPUs); the policy chooses among them and,
// for a share, its device (docs/scheduling.md "GPU sharing and MIG").
#ifndef BERTH_CORE_SCHED_SHARE_DEVICE_H_
#define BERTH_CORE_SCHED_SHARE_DEVICE_H_

#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <span>
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

  // What fgd measures fragmentation against: the request shapes waiting (the pending queue's),
  // each weighing 1, and the cluster's device count per GPU type id (index t: gpu_policy.h's
  // type id t; empty: no scarcity term). Without shapes (or with none asking for GPUs), fgd
  // scores every choice alike and falls back to its tie-break, gpu-packing's order.
  struct Workload {
    std::vector<GpuRequest> shapes;
    std::vector<int64_t> supply;
  };
  void SetWorkload(Workload w);
  // The same, read from `source` only when fgd first scores a choice: a pass that starts no GPU
  // job pays nothing for it. `source` must stay callable while Choose/ChooseNode are.
  void SetWorkloadSource(std::function<Workload()> source);

  // The cluster's GPU devices per type id (Workload::supply).
  static std::vector<int64_t> SupplyOf(const ClusterState& cs);
  // gpu_policy.h's type id of a berth GPU type (JobShape::gpu_type, NodeInfo::gpu_types).
  static uint8_t TypeId(int16_t type);

  // The device of `n` (given what it has free, `free`) that a share of `shape` takes: one of
  // `allowed` with room for shape.gpu_milli, or -1 when none has. REQUIRES: shape.gpu_milli > 0.
  int Choose(const NodeInfo& n, const NodeFree& free, uint64_t allowed, const JobShape& shape);

  // The candidate (an index into `nodes`/`free`) that the policy places `shape` on, and for a
  // share the device (in *share_device; -1 for whole GPUs, which take the lowest free devices of
  // an allowed type). first-fit, a shape asking for no GPU, and a choice the core would not allow
  // give the first candidate. REQUIRES: every candidate fits the shape (FitNode); !nodes.empty();
  // nodes.size() == free.size().
  int ChooseNode(std::span<const NodeInfo* const> nodes, std::span<const NodeFree> free,
                 const JobShape& shape, int* share_device);

  GpuPlacement policy() const { return policy_; }

 private:
  GpuPlacement policy_;
  std::function<Workload()> source_;
  FgdCache* Fgd();  // null unless fgd; builds the workload from source_ on first use

  std::optional<FgdWorkload> workload_;  // built from source_ on the first fgd choice
  std::unique_ptr<FgdCache> cache_;
};

}  // namespace berth::core

#endif  // BERTH_CORE_SCHED_SHARE_DEVICE_H_
