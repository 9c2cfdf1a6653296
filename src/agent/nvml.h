// NVIDIA's management library (NVML), loaded at run time with dlopen("libnvidia-ml.so.1") so that
// the same berth binary runs on nodes without an NVIDIA driver. Only the calls berth needs.
//
// Thread safety: NVML itself is thread-safe; an Nvml object may be used from several threads.
#ifndef BERTH_AGENT_NVML_H_
#define BERTH_AGENT_NVML_H_

#include <cstdint>
#include <memory>
#include <string>
#include <utility>

#include "agent/gpu_devices.h"
#include "agent/node_info.h"
#include "common/status.h"

namespace berth::agent {

class Nvml {
 public:
  // Loads the library and calls nvmlInit_v2. kUnavailable (with the reason) when the library
  // or a needed symbol is missing or initialisation fails (no driver, no devices).
  static Result<std::unique_ptr<Nvml>> Open();

  Nvml(const Nvml&) = delete;
  Nvml& operator=(const Nvml&) = delete;
  ~Nvml();  // nvmlShutdown, dlclose

  Result<int32_t> DeviceCount() const;
  // Index, name, type, UUID and memory of device `index`.
  Result<GpuDevice> Device(int32_t index) const;
  // The device's GPU utilisation in percent over NVML's last sample period.
  Result<int32_t> Utilization(int32_t index) const;
  // The device's memory in bytes: {total, used}.
  Result<std::pair<int64_t, int64_t>> Memory(int32_t index) const;
  // The GPU as NVML reports it, with its MIG instances when its current MIG mode is enabled
  // (nvmlDeviceGetMigMode, nvmlDeviceGetMaxMigDeviceCount, nvmlDeviceGetMigDeviceHandleByIndex).
  // A driver without the MIG calls, or a GPU that has no MIG: mig_enabled false.
  Result<NvmlGpu> Gpu(int32_t index) const;

 private:
  struct Api;
  using NvmlDeviceHandle = void*;
  Result<GpuDevice> DeviceOf(NvmlDeviceHandle device, int32_t index) const;
  Nvml(void* library, std::unique_ptr<Api> api);

  void* library_;
  std::unique_ptr<Api> api_;
};

}  // namespace berth::agent

#endif  // BERTH_AGENT_NVML_H_
