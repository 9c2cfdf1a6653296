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

uint8_t TypeId(int16_t type) {
  return static_cast<uint8_t>(type < 0 || type >= kUntyped ? kUntyped : type);
}

uint8_t DeviceType(const NodeInfo& n, int d) {
  for (const auto& [t, mask] : n.gpu_types) {
    if ((mask >> d) & 1) return TypeId(t);
  }
  return kUntyped;
}

}  // namespace

GpuRequest GpuRequestOf(const JobShape& shape) {
  GpuRequest r;
  r.cpu_milli = int64_t{shape.cpus} * 1000;
  if (shape.gpu_milli > 0) {
    r.share_milli = shape.gpu_milli;
  } else {
    r.gpus = shape.gpus;
  }
  if (shape.gpu_type != kAnyGpuType) r.allowed_types = uint64_t{1} << TypeId(shape.gpu_type);
  return r;
}

void ShareDevicePicker::SetWorkload(std::vector<GpuRequest> shapes) {
  SetWorkloadSource([shapes = std::move(shapes)] { return shapes; });
}

void ShareDevicePicker::SetWorkloadSource(std::function<std::vector<GpuRequest>()> source) {
  source_ = std::move(source);
  workload_.reset();
  cache_.reset();
}

int ShareDevicePicker::Choose(const NodeInfo& n, const NodeFree& free, uint64_t allowed,
                              const JobShape& shape) {
  const int fallback = ChooseShareDevice(allowed, free, shape.gpu_milli);
  if (fallback < 0 || n.num_gpus > kMaxGpusPerNode) return fallback;
  std::array<GpuDeviceFree, kMaxGpusPerNode> devices;
  for (int d = 0; d < n.num_gpus; ++d) {
    devices[static_cast<size_t>(d)] = {free.ShareRoom(d), DeviceType(n, d)};
  }
  GpuNodeFree node;
  node.cpu_capacity_milli = int64_t{n.spec.cpus} * 1000;
  node.cpu_free_milli = int64_t{free.cpus} * 1000;
  node.devices = std::span<const GpuDeviceFree>(devices.data(), static_cast<size_t>(n.num_gpus));
  GpuRequest req = GpuRequestOf(shape);
  req.cpu_milli = std::min(req.cpu_milli, node.cpu_free_milli);  // FitNode has checked the CPUs
  FgdCache* fgd = nullptr;
  if (policy_ == GpuPlacement::kFgd) {
    if (!workload_) {
      std::vector<GpuRequest> shapes = source_ ? source_() : std::vector<GpuRequest>{};
      std::vector<double> weights(shapes.size(), 1.0);
      workload_ = FgdWorkload::Build(shapes, weights);
      cache_ = std::make_unique<FgdCache>(&*workload_, /*log2_slots=*/10);
    }
    fgd = cache_.get();
  }
  std::optional<GpuChoice> c = PickGpuPlacement(policy_, req, std::span(&node, 1), fgd);
  if (!c || c->devices == 0) return fallback;
  const int d = std::countr_zero(c->devices);
  if (((allowed >> d) & 1) == 0 || free.ShareRoom(d) < shape.gpu_milli) return fallback;
  return d;
}

}  // namespace berth::core
