// The GPU devices a node offers, from what NVML reports: a whole GPU is one device; a GPU in MIG
// mode offers its MIG instances instead, each a device of its own whose type is its MIG profile
// ("1g.10gb") and whose UUID ("MIG-...") is what CUDA_VISIBLE_DEVICES must name. Discovery only:
// berth never changes a GPU's MIG mode.
//
// Thread safety: all functions are pure.
#ifndef BERTH_AGENT_GPU_DEVICES_H_
#define BERTH_AGENT_GPU_DEVICES_H_

#include <string>
#include <string_view>
#include <vector>

#include "agent/node_info.h"

namespace berth::agent {

// What NVML says about one physical GPU.
struct NvmlGpu {
  GpuDevice device;                  // nvmlDeviceGetName/UUID/MemoryInfo of the GPU itself
  bool mig_enabled = false;          // nvmlDeviceGetMigMode: current mode is NVML_DEVICE_MIG_ENABLE
  std::vector<GpuDevice> instances;  // its MIG devices' name, UUID and memory (index ignored)
};

// The MIG profile in an NVML MIG device name: "NVIDIA A100-SXM4-40GB MIG 1g.5gb" -> "1g.5gb";
// "" when the name has none.
std::string MigProfileFromName(std::string_view name);

// The node's devices in berth's order (device index = position): each GPU in NVML's order, a GPU
// in MIG mode replaced by its instances in NVML's order. A GPU in MIG mode with no instances
// offers nothing (no work can run on it); an instance whose name shows no profile keeps the
// GPU's type.
std::vector<GpuDevice> NodeGpuDevices(const std::vector<NvmlGpu>& gpus);

}  // namespace berth::agent

#endif  // BERTH_AGENT_GPU_DEVICES_H_
