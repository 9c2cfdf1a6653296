// What the agent finds out about its node: CPUs, memory, GPUs (through NVML loaded at run time
// with dlopen, so the same binary runs where there is no NVIDIA driver), the cgroup setup, and
// what it could not enforce there.
#ifndef BERTH_AGENT_NODE_INFO_H_
#define BERTH_AGENT_NODE_INFO_H_

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "common/status.h"

namespace berth::agent {

struct GpuDevice {
  int32_t index = 0;
  std::string name;  // NVML's name, e.g. "NVIDIA H100 80GB HBM3"
  std::string type;  // berth's type: the model in lower case without vendor, e.g. "h100"
  std::string uuid;
  int64_t memory_mib = 0;
  // The NVML index of a whole GPU found through NVML, whose utilisation the agent samples; -1
  // for a declared GPU and a MIG instance (NVML measures no utilisation per instance).
  int32_t nvml_index = -1;
};

struct DetectedNode {
  std::string hostname;
  int32_t cpus = 0;     // CPUs this process may use (sched_getaffinity)
  int64_t mem_mib = 0;  // MemTotal
  std::vector<GpuDevice> gpus;
  bool nvml = false;    // NVML was found and initialised
  std::string cgroups;  // "v1", "v2", or "none"
  bool root = false;
  std::vector<std::string> cannot_enforce;  // e.g. "memory limits (no cgroup memory controller)"
};

Result<DetectedNode> DetectNode();

// Mean utilisation (percent) of the given devices now; -1 without NVML. NVML is loaded on the
// first call and kept for the life of the process. Thread-safe.
double SampleGpuUtilization(const std::vector<int32_t>& indices);

// berth's GPU type from NVML's device name: the model in lower case, without the vendor and
// brand words (NVIDIA, Tesla, GeForce, Quadro), form factor, memory size or memory type:
// "NVIDIA H100 80GB HBM3" -> "h100", "NVIDIA A100-SXM4-40GB" -> "a100", "Tesla V100-SXM2-16GB"
// -> "v100", "NVIDIA GeForce RTX 4090" -> "rtx4090", "NVIDIA RTX A6000" -> "a6000",
// "NVIDIA RTX 6000 Ada Generation" -> "rtx6000ada". "gpu" when no model is left. Pure.
std::string GpuTypeFromName(std::string_view name);

}  // namespace berth::agent

#endif  // BERTH_AGENT_NODE_INFO_H_
