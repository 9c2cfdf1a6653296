// A stand-in for NVIDIA's libnvidia-ml.so.1 with the calls berth's agent loads (src/agent/nvml.cc),
// for integration tests on machines without an NVIDIA GPU: an agent started with this library's
// folder in LD_LIBRARY_PATH finds the devices that the file named by $BERTH_FAKE_NVML_DEVICES
// lists, one per line:
//
//   NAME|UUID|MEMORY_TOTAL_BYTES|MEMORY_USED_BYTES|UTILIZATION_PERCENT
//
// The file is read again on every call, so a test changes a device's use by rewriting it. MIG
// calls are absent (a driver without them: berth treats every GPU as whole). Return codes are
// NVML's: 0 success, 2 invalid argument, 999 unknown (the file unreadable).
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <string>
#include <vector>

namespace {

struct Device {
  std::string name, uuid;
  unsigned long long total = 0, used = 0;
  unsigned int utilization = 0;
};

constexpr int kSuccess = 0;
constexpr int kInvalidArgument = 2;
constexpr int kInsufficientSize = 7;
constexpr int kUnknown = 999;

bool ReadDevices(std::vector<Device>* out) {
  const char* path = std::getenv("BERTH_FAKE_NVML_DEVICES");
  if (path == nullptr) return false;
  std::ifstream in(path);
  if (!in) return false;
  std::string line;
  while (std::getline(in, line)) {
    if (line.empty() || line[0] == '#') continue;
    std::vector<std::string> f;
    size_t start = 0;
    for (size_t bar; (bar = line.find('|', start)) != std::string::npos; start = bar + 1) {
      f.push_back(line.substr(start, bar - start));
    }
    f.push_back(line.substr(start));
    if (f.size() != 5) return false;
    Device d;
    d.name = f[0];
    d.uuid = f[1];
    d.total = std::strtoull(f[2].c_str(), nullptr, 10);
    d.used = std::strtoull(f[3].c_str(), nullptr, 10);
    d.utilization = static_cast<unsigned int>(std::strtoul(f[4].c_str(), nullptr, 10));
    out->push_back(d);
  }
  return true;
}

// A handle is the device's index plus one (never null).
int Lookup(void* handle, Device* out) {
  std::vector<Device> devices;
  if (!ReadDevices(&devices)) return kUnknown;
  const auto i = reinterpret_cast<uintptr_t>(handle);
  if (i == 0 || i > devices.size()) return kInvalidArgument;
  *out = devices[i - 1];
  return kSuccess;
}

int CopyText(const std::string& text, char* buf, unsigned int size) {
  if (buf == nullptr || text.size() + 1 > size) return kInsufficientSize;
  std::memcpy(buf, text.c_str(), text.size() + 1);
  return kSuccess;
}

}  // namespace

extern "C" {

struct FakeNvmlMemory {
  unsigned long long total, free, used;
};
struct FakeNvmlUtilization {
  unsigned int gpu, memory;
};

__attribute__((visibility("default"))) int nvmlInit_v2() {
  std::vector<Device> devices;
  return ReadDevices(&devices) ? kSuccess : kUnknown;
}

__attribute__((visibility("default"))) int nvmlShutdown() {
  return kSuccess;
}

__attribute__((visibility("default"))) const char* nvmlErrorString(int rc) {
  return rc == kSuccess ? "Success" : "fake NVML error";
}

__attribute__((visibility("default"))) int nvmlDeviceGetCount_v2(unsigned int* count) {
  std::vector<Device> devices;
  if (!ReadDevices(&devices)) return kUnknown;
  *count = static_cast<unsigned int>(devices.size());
  return kSuccess;
}

__attribute__((visibility("default"))) int nvmlDeviceGetHandleByIndex_v2(unsigned int index,
                                                                         void** device) {
  std::vector<Device> devices;
  if (!ReadDevices(&devices)) return kUnknown;
  if (index >= devices.size()) return kInvalidArgument;
  *device = reinterpret_cast<void*>(static_cast<uintptr_t>(index) + 1);
  return kSuccess;
}

__attribute__((visibility("default"))) int nvmlDeviceGetName(void* device, char* name,
                                                             unsigned int size) {
  Device d;
  if (int rc = Lookup(device, &d); rc != kSuccess) return rc;
  return CopyText(d.name, name, size);
}

__attribute__((visibility("default"))) int nvmlDeviceGetUUID(void* device, char* uuid,
                                                             unsigned int size) {
  Device d;
  if (int rc = Lookup(device, &d); rc != kSuccess) return rc;
  return CopyText(d.uuid, uuid, size);
}

__attribute__((visibility("default"))) int nvmlDeviceGetMemoryInfo(void* device,
                                                                   FakeNvmlMemory* memory) {
  Device d;
  if (int rc = Lookup(device, &d); rc != kSuccess) return rc;
  memory->total = d.total;
  memory->used = d.used;
  memory->free = d.total > d.used ? d.total - d.used : 0;
  return kSuccess;
}

__attribute__((visibility("default"))) int nvmlDeviceGetUtilizationRates(
    void* device, FakeNvmlUtilization* utilization) {
  Device d;
  if (int rc = Lookup(device, &d); rc != kSuccess) return rc;
  utilization->gpu = d.utilization;
  utilization->memory = 0;
  return kSuccess;
}

}  // extern "C"
