#include "agent/nvml.h"

#include <dlfcn.h>

#include <string>

namespace berth::agent {

namespace {

// The few NVML types berth uses, as nvml.h declares them (the ABI is stable).
using NvmlReturn = int;  // nvmlReturn_t; 0 = NVML_SUCCESS
using NvmlDevice = struct NvmlDeviceOpaque*;
struct NvmlMemory {
  unsigned long long total;
  unsigned long long free;
  unsigned long long used;
};
struct NvmlUtilization {
  unsigned int gpu;
  unsigned int memory;
};
// NVML_DEVICE_NAME_V2_BUFFER_SIZE and NVML_DEVICE_UUID_V2_BUFFER_SIZE.
constexpr unsigned int kNameSize = 96;
constexpr unsigned int kUuidSize = 96;

}  // namespace

struct Nvml::Api {
  NvmlReturn (*init)();
  NvmlReturn (*shutdown)();
  const char* (*error_string)(NvmlReturn);
  NvmlReturn (*device_count)(unsigned int*);
  NvmlReturn (*device_by_index)(unsigned int, NvmlDevice*);
  NvmlReturn (*device_name)(NvmlDevice, char*, unsigned int);
  NvmlReturn (*device_uuid)(NvmlDevice, char*, unsigned int);
  NvmlReturn (*device_memory)(NvmlDevice, NvmlMemory*);
  NvmlReturn (*device_utilization)(NvmlDevice, NvmlUtilization*);
  // MIG (optional: drivers before R450 lack them).
  NvmlReturn (*mig_mode)(NvmlDevice, unsigned int*, unsigned int*) = nullptr;
  NvmlReturn (*max_mig_count)(NvmlDevice, unsigned int*) = nullptr;
  NvmlReturn (*mig_by_index)(NvmlDevice, unsigned int, NvmlDevice*) = nullptr;

  Status Error(const char* call, NvmlReturn rc) const {
    std::string text = error_string != nullptr ? error_string(rc) : "";
    return Status::Unavailable(std::string(call) + " failed: " + std::to_string(rc) +
                               (text.empty() ? "" : " (" + text + ")"));
  }
};

namespace {

template <typename F>
bool LoadSymbol(void* library, const char* name, F* out) {
  *out = reinterpret_cast<F>(dlsym(library, name));
  return *out != nullptr;
}

}  // namespace

Result<std::unique_ptr<Nvml>> Nvml::Open() {
  void* library = dlopen("libnvidia-ml.so.1", RTLD_NOW | RTLD_LOCAL);
  if (library == nullptr) {
    const char* why = dlerror();
    return Status::Unavailable(std::string("NVML not loaded: ") + (why ? why : "dlopen failed"));
  }
  auto api = std::make_unique<Api>();
  bool ok = LoadSymbol(library, "nvmlInit_v2", &api->init) &&
            LoadSymbol(library, "nvmlShutdown", &api->shutdown) &&
            LoadSymbol(library, "nvmlDeviceGetCount_v2", &api->device_count) &&
            LoadSymbol(library, "nvmlDeviceGetHandleByIndex_v2", &api->device_by_index) &&
            LoadSymbol(library, "nvmlDeviceGetName", &api->device_name) &&
            LoadSymbol(library, "nvmlDeviceGetUUID", &api->device_uuid) &&
            LoadSymbol(library, "nvmlDeviceGetMemoryInfo", &api->device_memory) &&
            LoadSymbol(library, "nvmlDeviceGetUtilizationRates", &api->device_utilization);
  if (!ok) {
    dlclose(library);
    return Status::Unavailable("NVML lacks a needed symbol (driver too old?)");
  }
  LoadSymbol(library, "nvmlErrorString", &api->error_string);  // optional
  LoadSymbol(library, "nvmlDeviceGetMigMode", &api->mig_mode);
  LoadSymbol(library, "nvmlDeviceGetMaxMigDeviceCount", &api->max_mig_count);
  LoadSymbol(library, "nvmlDeviceGetMigDeviceHandleByIndex", &api->mig_by_index);
  if (NvmlReturn rc = api->init(); rc != 0) {
    Status s = api->Error("nvmlInit_v2", rc);
    dlclose(library);
    return s;
  }
  return std::unique_ptr<Nvml>(new Nvml(library, std::move(api)));
}

Nvml::Nvml(void* library, std::unique_ptr<Api> api) : library_(library), api_(std::move(api)) {}

Nvml::~Nvml() {
  api_->shutdown();
  dlclose(library_);
}

Result<int32_t> Nvml::DeviceCount() const {
  unsigned int count = 0;
  if (NvmlReturn rc = api_->device_count(&count); rc != 0) {
    return api_->Error("nvmlDeviceGetCount_v2", rc);
  }
  return static_cast<int32_t>(count);
}

namespace {
// NVML_DEVICE_MIG_ENABLE.
constexpr unsigned int kMigEnable = 1;
}  // namespace

Result<GpuDevice> Nvml::Device(int32_t index) const {
  NvmlDevice device = nullptr;
  if (NvmlReturn rc = api_->device_by_index(static_cast<unsigned int>(index), &device); rc != 0) {
    return api_->Error("nvmlDeviceGetHandleByIndex_v2", rc);
  }
  return DeviceOf(device, index);
}

Result<NvmlGpu> Nvml::Gpu(int32_t index) const {
  NvmlDevice device = nullptr;
  if (NvmlReturn rc = api_->device_by_index(static_cast<unsigned int>(index), &device); rc != 0) {
    return api_->Error("nvmlDeviceGetHandleByIndex_v2", rc);
  }
  NvmlGpu gpu;
  BERTH_ASSIGN_OR_RETURN(gpu.device, DeviceOf(device, index));
  if (api_->mig_mode == nullptr || api_->max_mig_count == nullptr ||
      api_->mig_by_index == nullptr) {
    return gpu;
  }
  unsigned int current = 0, pending = 0;
  if (api_->mig_mode(device, &current, &pending) != 0 || current != kMigEnable) return gpu;
  gpu.mig_enabled = true;
  unsigned int slots = 0;
  if (NvmlReturn rc = api_->max_mig_count(device, &slots); rc != 0) {
    return api_->Error("nvmlDeviceGetMaxMigDeviceCount", rc);
  }
  for (unsigned int i = 0; i < slots; ++i) {
    NvmlDevice mig = nullptr;
    if (api_->mig_by_index(device, i, &mig) != 0) continue;  // an empty slot: NOT_FOUND
    Result<GpuDevice> d = DeviceOf(mig, index);
    if (d.ok()) gpu.instances.push_back(std::move(*d));
  }
  return gpu;
}

Result<GpuDevice> Nvml::DeviceOf(NvmlDeviceHandle handle, int32_t index) const {
  NvmlDevice device = static_cast<NvmlDevice>(handle);
  GpuDevice gpu;
  gpu.index = index;
  char name[kNameSize] = {};
  if (NvmlReturn rc = api_->device_name(device, name, kNameSize); rc != 0) {
    return api_->Error("nvmlDeviceGetName", rc);
  }
  gpu.name = name;
  gpu.type = GpuTypeFromName(gpu.name);
  char uuid[kUuidSize] = {};
  if (NvmlReturn rc = api_->device_uuid(device, uuid, kUuidSize); rc != 0) {
    return api_->Error("nvmlDeviceGetUUID", rc);
  }
  gpu.uuid = uuid;
  NvmlMemory memory = {};
  if (NvmlReturn rc = api_->device_memory(device, &memory); rc != 0) {
    return api_->Error("nvmlDeviceGetMemoryInfo", rc);
  }
  gpu.memory_mib = static_cast<int64_t>(memory.total / (1024 * 1024));
  return gpu;
}

Result<int32_t> Nvml::Utilization(int32_t index) const {
  NvmlDevice device = nullptr;
  if (NvmlReturn rc = api_->device_by_index(static_cast<unsigned int>(index), &device); rc != 0) {
    return api_->Error("nvmlDeviceGetHandleByIndex_v2", rc);
  }
  NvmlUtilization util = {};
  if (NvmlReturn rc = api_->device_utilization(device, &util); rc != 0) {
    return api_->Error("nvmlDeviceGetUtilizationRates", rc);
  }
  return static_cast<int32_t>(util.gpu);
}

Result<std::pair<int64_t, int64_t>> Nvml::Memory(int32_t index) const {
  NvmlDevice device = nullptr;
  if (NvmlReturn rc = api_->device_by_index(static_cast<unsigned int>(index), &device); rc != 0) {
    return api_->Error("nvmlDeviceGetHandleByIndex_v2", rc);
  }
  NvmlMemory memory = {};
  if (NvmlReturn rc = api_->device_memory(device, &memory); rc != 0) {
    return api_->Error("nvmlDeviceGetMemoryInfo", rc);
  }
  return std::make_pair(static_cast<int64_t>(memory.total), static_cast<int64_t>(memory.used));
}

}  // namespace berth::agent
