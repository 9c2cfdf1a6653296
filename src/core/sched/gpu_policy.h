// GPU placement policies: which node, and which of its GPU devices, a request for whole GPUs or
// for a share of one GPU should take, among candidate nodes given what each has free.
//
// The model is per device: each GPU has a free amount in milli-GPUs (0..1000) and a type. A
// request asks for whole GPUs (devices with all 1000 free, so a device holding a share is never
// given whole) or for a share of one device (one device with enough free milli; a device given
// whole has 0 free, so a share never lands on it). Policies (docs/scheduling.md "GPU placement"):
//
//   first-fit    the first node that fits; on it the lowest-numbered devices that fit.
//   best-fit     the node left with the least free resources (half CPU, half GPU, each scaled
//                by the largest candidate's capacity); the fullest device that fits a share.
//   dot-product  Tetris-style alignment: the dot product of the request and the free resources
//                (CPU, GPU; each divided by the node's capacity); the smallest wins, as in the
//                FGD paper's baseline (the free vector least aligned is the tightest fit).
//   gpu-packing  a share on a device already in use (the fullest first), then free devices on a
//                node already in use (the one with the fewest free devices left first), then a
//                wholly free node (the one with the fewest GPUs first): whole nodes stay free.
//   fgd          fragmentation gradient descent (Weng et al., ATC'23): the node and device
//                whose expected fragmentation, against a distribution of request shapes
//                (FgdWorkload), grows least, plus a price on the GPU models that typed shapes
//                claim beyond their share of the supply (FgdWorkload::TypeScarcity).
//
// Ties go to the earlier candidate, then the lower device; fgd first breaks its ties (wholly
// free nodes all score alike) by gpu-packing's tiers, without its "fewest GPUs first". Everything
// here is pure: no clock, no randomness, no allocation on the PickGpuPlacement path (FgdWorkload is
// built once; FgdCache is a fixed table the caller owns).
#ifndef BERTH_CORE_SCHED_GPU_POLICY_H_
#define BERTH_CORE_SCHED_GPU_POLICY_H_

#include <array>
#include <cstdint>
#include <optional>
#include <span>
#include <string_view>
#include <vector>

#include "common/status.h"
#include "core/model/node.h"  // kMaxGpusPerNode: device sets are 64-bit masks, as there

namespace berth::core {

enum class GpuPlacement : uint8_t { kFirstFit, kBestFit, kDotProduct, kGpuPacking, kFgd };

inline constexpr GpuPlacement kAllGpuPlacements[] = {
    GpuPlacement::kFirstFit, GpuPlacement::kBestFit, GpuPlacement::kDotProduct,
    GpuPlacement::kGpuPacking, GpuPlacement::kFgd};

// "first-fit", "best-fit", "dot-product", "gpu-packing", "fgd".
std::string_view GpuPlacementName(GpuPlacement p);
// The inverse; other names fail with the list of valid ones.
Result<GpuPlacement> ParseGpuPlacement(std::string_view name);

inline constexpr int32_t kMilliPerGpu = 1000;
// GPU type ids are 0..kMaxGpuTypes-1 (requests name allowed types as a bit mask).
inline constexpr int kMaxGpuTypes = 64;

struct GpuDeviceFree {
  int32_t free_milli = kMilliPerGpu;  // 0..1000
  uint8_t type = 0;                   // the device's GPU type id, < kMaxGpuTypes
};

// What one candidate node has: capacity and free CPU (milli-CPUs) and memory (MiB), and its
// devices. `devices` points into the caller's storage and must outlive the call.
struct GpuNodeFree {
  int64_t cpu_capacity_milli = 0;
  int64_t cpu_free_milli = 0;
  int64_t mem_capacity_mib = 0;
  int64_t mem_free_mib = 0;
  std::span<const GpuDeviceFree> devices;  // REQUIRES: size() <= kMaxGpusPerNode
};

struct GpuRequest {
  int64_t cpu_milli = 0;
  int64_t mem_mib = 0;
  int32_t gpus = 0;            // whole devices
  int32_t share_milli = 0;     // 1..999: a share of one device. REQUIRES: gpus == 0 then
  uint64_t allowed_types = 0;  // bit t: type id t may serve it; 0: any type

  bool is_share() const { return share_milli > 0; }
  // The GPU milli asked of each device it takes (1000 for whole GPUs), and how many devices.
  int32_t milli_per_device() const { return is_share() ? share_milli : kMilliPerGpu; }
  int32_t device_count() const { return is_share() ? 1 : gpus; }
  int64_t total_gpu_milli() const { return int64_t{milli_per_device()} * device_count(); }
};

struct GpuChoice {
  int32_t node = -1;     // index into the candidates
  uint64_t devices = 0;  // bit i: device i of that node (each given milli_per_device())
};

// The distribution of request shapes FGD measures fragmentation against: the GPU requests of a
// workload (CPU-only ones add the same amount to every choice and are left out), each with its
// weight. Built once; immutable afterwards and safe to share between threads.
class FgdWorkload {
 public:
  // Requests asking for no GPU are ignored; the weights of the others are normalised to sum 1.
  // `supply`, when given, is the cluster's device count per GPU type id (index t: type t); it
  // sets each type's scarcity (TypeScarcity). Without it every scarcity is 0.
  static FgdWorkload Build(std::span<const GpuRequest> shapes, std::span<const double> weights,
                           std::span<const int64_t> supply = {});

  // F_n(M): the GPU milli of the node that, in expectation over the workload's shapes, cannot
  // serve the next request. For a shape the node cannot run (too few CPUs, too few fitting
  // devices of an allowed type), all its free GPU milli is fragment; for one it can run, the
  // free milli of the devices that cannot serve it. Memory is not considered (as in the paper).
  double Fragmentation(int64_t cpu_free_milli, std::span<const GpuDeviceFree> devices) const;

  // How much of type t's supply the shapes that may use only some types claim, against the
  // cluster's average: the GPU milli those typed shapes ask (each spread over its allowed types
  // by their supply) as a share of all the workload's GPU milli, over t's share of the devices.
  // 0 for a type no typed shape may use; 1 where typed demand matches t's share of the supply.
  // fgd adds scarcity x the milli a choice takes of that type to its score, so that requests
  // which may run elsewhere leave the devices that typed requests need to them.
  double TypeScarcity(uint8_t type) const { return type < kMaxGpuTypes ? scarcity_[type] : 0; }

  bool empty() const { return groups_.empty(); }

 private:
  // Shapes with the same GPU part, their CPU needs sorted with cumulative weights.
  struct Group {
    int32_t milli = 0;  // per device
    int32_t count = 0;  // devices
    uint64_t allowed_types = 0;
    uint32_t first = 0;  // into cpu_ / cum_weight_
    uint32_t size = 0;
    double weight = 0;  // sum of the group's weights
  };
  std::vector<Group> groups_;
  std::vector<int64_t> cpu_;        // ascending within each group
  std::vector<double> cum_weight_;  // weight of the group's shapes with cpu <= cpu_[i]
  std::array<double, kMaxGpuTypes> scarcity_{};
};

// A memo of FgdWorkload::Fragmentation by node state (free CPU and the sorted free milli and
// types of the devices), for one workload. Identical nodes and nodes unchanged since the last
// request are computed once. Not thread-safe: one per thread.
class FgdCache {
 public:
  // 2^log2_slots entries (1 << 15 suits a fill experiment over thousands of nodes; a scheduling
  // pass that chooses among one node's devices at a time needs far fewer).
  explicit FgdCache(const FgdWorkload* workload, int log2_slots = kLog2Slots);
  double Fragmentation(int64_t cpu_free_milli, std::span<const GpuDeviceFree> devices);
  const FgdWorkload& workload() const { return *workload_; }
  int64_t hits() const { return hits_; }
  int64_t misses() const { return misses_; }

 private:
  static constexpr int kKeyDevices = 16;  // nodes with more devices are not memoised
  static constexpr int kLog2Slots = 15;
  struct Entry {
    int64_t cpu = -1;
    uint8_t n = 0;
    std::array<uint16_t, kKeyDevices> dev{};  // free milli << 6 | type, sorted
    double value = 0;
  };
  const FgdWorkload* workload_;
  std::vector<Entry> slots_;  // size a power of two
  int64_t hits_ = 0;
  int64_t misses_ = 0;
};

// Picks the node and devices for `req` among `nodes` under `policy`, or nullopt when it fits on
// none (not enough free CPU, memory, or devices of an allowed type with enough free milli).
// REQUIRES: for kFgd, `fgd` is non-null (its workload may be empty: then every choice scores 0
// and the first fit wins).
std::optional<GpuChoice> PickGpuPlacement(GpuPlacement policy, const GpuRequest& req,
                                          std::span<const GpuNodeFree> nodes,
                                          FgdCache* fgd = nullptr);

// Whether `req` fits on `node` at all (the filter every policy applies first).
bool GpuRequestFits(const GpuRequest& req, const GpuNodeFree& node);

}  // namespace berth::core

#endif  // BERTH_CORE_SCHED_GPU_POLICY_H_
