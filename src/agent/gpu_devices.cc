#include "agent/gpu_devices.h"

#include <cctype>

namespace berth::agent {

std::string MigProfileFromName(std::string_view name) {
  size_t at = name.rfind("MIG ");
  if (at == std::string_view::npos) return "";
  std::string_view rest = name.substr(at + 4);
  size_t end = 0;
  while (end < rest.size() && !std::isspace(static_cast<unsigned char>(rest[end]))) ++end;
  std::string profile(rest.substr(0, end));
  for (char& c : profile) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  return profile;
}

std::vector<GpuDevice> NodeGpuDevices(const std::vector<NvmlGpu>& gpus) {
  std::vector<GpuDevice> out;
  for (const NvmlGpu& g : gpus) {
    if (!g.mig_enabled) {
      out.push_back(g.device);
      out.back().nvml_index = g.device.index;
      out.back().index = static_cast<int32_t>(out.size()) - 1;
      continue;
    }
    for (const GpuDevice& mig : g.instances) {
      GpuDevice d = mig;
      d.index = static_cast<int32_t>(out.size());
      d.nvml_index = -1;
      std::string profile = MigProfileFromName(mig.name);
      d.type = profile.empty() ? g.device.type : profile;
      out.push_back(std::move(d));
    }
  }
  return out;
}

}  // namespace berth::agent
