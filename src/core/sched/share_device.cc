#include "core/sched/share_device.h"

#include <algorithm>
#include <array>
#include <bit>
#include <span>

namespace berth::core {
namespace {

// gpu_policy.h's type ids are 0..kMaxGpuTypes-1; the last one stands for untyped devices (and,
// in a cluster of that many types, for the types beyond: Choose checks its answer against the
// core's own type mask, so a shared id can only change a score, never the fit).
constexpr int kUntyped = kMaxGpuTypes - 1;

uint8_t DeviceType(const NodeInfo& n, int d) {
  for (const auto& [t, mask] : n.gpu_types) {
    if ((mask >> d) & 1) return ShareDevicePicker::TypeId(t);
  }
  return kUntyped;
}

// Node `n`'s devices as gpu_policy.h sees them, into `out`; false for a node with more devices
// than a mask holds.
bool DevicesOf(const NodeInfo& n, const NodeFree& free, GpuDeviceFree* out) {
  if (n.num_gpus > kMaxGpusPerNode) return false;
  for (int d = 0; d < n.num_gpus; ++d) {
    out[static_cast<size_t>(d)] = {free.ShareRoom(d), DeviceType(n, d)};
  }
  return true;
}

GpuNodeFree NodeOf(const NodeInfo& n, const NodeFree& free, const GpuRequest& req,
                   const GpuDeviceFree* devices) {
  GpuNodeFree node;
  node.cpu_capacity_milli = int64_t{n.spec.cpus} * 1000;
  // FitNode has checked CPUs and memory (with rules of its own: whole nodes, task counts).
  node.cpu_free_milli = std::max(int64_t{free.cpus} * 1000, req.cpu_milli);
  node.devices = std::span<const GpuDeviceFree>(devices, static_cast<size_t>(n.num_gpus));
  return node;
}

}  // namespace

uint8_t ShareDevicePicker::TypeId(int16_t type) {
  return static_cast<uint8_t>(type < 0 || type >= kUntyped ? kUntyped : type);
}

std::vector<int64_t> ShareDevicePicker::SupplyOf(const ClusterState& cs) {
  std::vector<int64_t> supply(kMaxGpuTypes, 0);
  for (size_t i = 0; i < cs.num_nodes(); ++i) {
    const NodeInfo& n = cs.node(static_cast<uint32_t>(i));
    int typed = 0;
    for (const auto& [t, mask] : n.gpu_types) {
      supply[TypeId(t)] += std::popcount(mask);
      typed += std::popcount(mask);
    }
    supply[kUntyped] += std::max(0, n.num_gpus - typed);
  }
  return supply;
}

GpuRequest GpuRequestOf(const JobShape& shape) {
  GpuRequest r;
  r.cpu_milli = int64_t{shape.cpus} * 1000;
  if (shape.gpu_milli > 0) {
    r.share_milli = shape.gpu_milli;
  } else {
    r.gpus = shape.gpus;
  }
  if (shape.gpu_type != kAnyGpuType)
    r.allowed_types = uint64_t{1} << ShareDevicePicker::TypeId(shape.gpu_type);
  return r;
}

void ShareDevicePicker::SetWorkload(Workload w) {
  SetWorkloadSource([w = std::move(w)] { return w; });
}

void ShareDevicePicker::SetWorkloadSource(std::function<Workload()> source) {
  source_ = std::move(source);
  workload_.reset();
  cache_.reset();
}

FgdCache* ShareDevicePicker::Fgd() {
  if (policy_ != GpuPlacement::kFgd) return nullptr;
  if (!workload_) {
    Workload w = source_ ? source_() : Workload{};
    std::vector<double> weights(w.shapes.size(), 1.0);
    workload_ = FgdWorkload::Build(w.shapes, weights, w.supply);
    cache_ = std::make_unique<FgdCache>(&*workload_, /*log2_slots=*/10);
  }
  return cache_.get();
}

int ShareDevicePicker::Choose(const NodeInfo& n, const NodeFree& free, uint64_t allowed,
                              const JobShape& shape) {
  const int fallback = ChooseShareDevice(allowed, free, shape.gpu_milli);
  std::array<GpuDeviceFree, kMaxGpusPerNode> devices;
  if (fallback < 0 || !DevicesOf(n, free, devices.data())) return fallback;
  const GpuRequest req = GpuRequestOf(shape);
  const GpuNodeFree node = NodeOf(n, free, req, devices.data());
  std::optional<GpuChoice> c = PickGpuPlacement(policy_, req, std::span(&node, 1), Fgd());
  if (!c || c->devices == 0) return fallback;
  const int d = std::countr_zero(c->devices);
  if (((allowed >> d) & 1) == 0 || free.ShareRoom(d) < shape.gpu_milli) return fallback;
  return d;
}

int ShareDevicePicker::ChooseNode(std::span<const NodeInfo* const> nodes,
                                  std::span<const NodeFree> free, const JobShape& shape,
                                  int* share_device) {
  // The first candidate, and for a share the device this policy picks on it.
  auto first = [&] {
    *share_device = shape.gpu_milli > 0
                        ? Choose(*nodes[0], free[0], GpuTypeMask(*nodes[0], shape.gpu_type), shape)
                        : -1;
    return 0;
  };
  if (policy_ == GpuPlacement::kFirstFit || (shape.gpus == 0 && shape.gpu_milli == 0) ||
      nodes.size() == 1) {
    return first();
  }
  const GpuRequest req = GpuRequestOf(shape);
  size_t total = 0;  // every candidate's devices, in one array
  for (const NodeInfo* n : nodes) total += static_cast<size_t>(std::max(0, n->num_gpus));
  std::vector<GpuDeviceFree> devices(total);
  std::vector<GpuNodeFree> gpu_nodes;
  std::vector<int> index;  // gpu_nodes[i] is candidate index[i]
  gpu_nodes.reserve(nodes.size());
  index.reserve(nodes.size());
  size_t at = 0;
  for (size_t i = 0; i < nodes.size(); ++i) {
    GpuDeviceFree* mine = devices.data() + at;
    at += static_cast<size_t>(std::max(0, nodes[i]->num_gpus));
    if (!DevicesOf(*nodes[i], free[i], mine)) continue;
    gpu_nodes.push_back(NodeOf(*nodes[i], free[i], req, mine));
    index.push_back(static_cast<int>(i));
  }
  std::optional<GpuChoice> c = PickGpuPlacement(policy_, req, gpu_nodes, Fgd());
  if (!c || c->node < 0 || c->devices == 0) return first();
  const int i = index[static_cast<size_t>(c->node)];
  const NodeInfo& n = *nodes[static_cast<size_t>(i)];
  const NodeFree& f = free[static_cast<size_t>(i)];
  const uint64_t allowed = GpuTypeMask(n, shape.gpu_type);
  // The policy's devices must be ones the core lets this shape take (type ids beyond
  // kMaxGpuTypes share one id); else the first candidate, as without a policy.
  if (shape.gpu_milli > 0) {
    const int d = std::countr_zero(c->devices);
    if (((allowed >> d) & 1) == 0 || f.ShareRoom(d) < shape.gpu_milli) return first();
    *share_device = d;
  } else {
    if ((c->devices & ~(allowed & f.gpus)) != 0) return first();
    *share_device = -1;
  }
  return i;
}

}  // namespace berth::core
