#include "agent/node_info.h"

#include <sched.h>
#include <unistd.h>

#include <cctype>
#include <memory>
#include <sstream>

#include "agent/cgroup_layout.h"
#include "agent/file_util.h"
#include "agent/nvml.h"

namespace berth::agent {

namespace {

// Words of a device name that are not part of the model.
bool IsBrandWord(const std::string& w) {
  for (const char* brand :
       {"nvidia", "tesla", "geforce", "quadro", "grid", "generation", "sff", "gpu", "graphics"}) {
    if (w == brand) return true;
  }
  return false;
}

// Words that start the description after the model (form factor, memory, variant).
bool EndsModel(const std::string& w) {
  for (const char* word : {"pcie", "nvl", "nvlink", "mig", "laptop", "max-q", "with", "server",
                           "workstation", "edition", "blackwell", "(tm)"}) {
    if (w == word) return true;
  }
  if (w.rfind("sxm", 0) == 0 || w.rfind("hbm", 0) == 0) return true;
  // A memory size: "80gb", "16g".
  size_t digits = 0;
  while (digits < w.size() && std::isdigit(static_cast<unsigned char>(w[digits]))) ++digits;
  std::string rest = w.substr(digits);
  return digits > 0 && (rest == "gb" || rest == "g");
}

std::string ShortHostname() {
  char buf[256] = {};
  if (gethostname(buf, sizeof(buf) - 1) != 0) return "localhost";
  std::string name = buf;
  return name.substr(0, name.find('.'));
}

int32_t AffinityCpus() {
  constexpr int kMaxCpus = 8192;
  cpu_set_t* set = CPU_ALLOC(kMaxCpus);
  size_t size = CPU_ALLOC_SIZE(kMaxCpus);
  CPU_ZERO_S(size, set);
  int32_t n = 0;
  if (sched_getaffinity(0, size, set) == 0) n = CPU_COUNT_S(size, set);
  CPU_FREE(set);
  if (n <= 0) n = static_cast<int32_t>(sysconf(_SC_NPROCESSORS_ONLN));
  return n;
}

int64_t MemTotalMib() {
  Result<std::string> text = ReadFile("/proc/meminfo");
  if (!text.ok()) return 0;
  std::istringstream in(*text);
  std::string key;
  int64_t kib = 0;
  std::string unit;
  while (in >> key >> kib >> unit) {
    if (key == "MemTotal:") return kib / 1024;
  }
  return 0;
}

void AddCgroupLimits(const CgroupLayout& layout, DetectedNode* node) {
  auto& out = node->cannot_enforce;
  if (!node->root) {
    out.push_back("running jobs as their users (not root: jobs run as this user)");
    out.push_back("memory limits (not root: no cgroups; RLIMIT_DATA per process instead)");
    out.push_back("CPU sets (not root: no cgroups; CPU affinity instead)");
    out.push_back("process count limits (not root: no cgroups)");
    return;
  }
  if (layout.mode == CgroupMode::kNone) {
    out.push_back("memory limits (no cgroups: RLIMIT_DATA per process instead)");
    out.push_back("CPU sets (no cgroups: CPU affinity instead)");
    out.push_back("process count limits (no cgroups)");
    return;
  }
  if (layout.mode == CgroupMode::kV1) {
    for (const char* c : {"memory", "cpuset", "pids", "cpuacct", "freezer"}) {
      if (!layout.v1_dirs.count(c)) out.push_back(std::string("cgroup v1 ") + c + " (not mounted)");
    }
    if (layout.v1_dirs.count("memory") &&
        access((layout.v1_dirs.at("memory") + "/memory.memsw.limit_in_bytes").c_str(), F_OK) != 0) {
      out.push_back("swap beyond the memory limit (no memory.memsw: swap accounting is off)");
    }
  }
  if (layout.mode == CgroupMode::kV2) {
    for (const char* c : {"memory", "cpuset", "pids"}) {
      if (!layout.v2_controllers.count(c)) out.push_back(std::string("cgroup v2 ") + c);
    }
  }
}

}  // namespace

std::string GpuTypeFromName(std::string_view name) {
  std::string lower;
  for (char c : name) lower += static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  std::istringstream in(lower);
  std::vector<std::string> model;
  for (std::string word; in >> word;) {
    // "a100-sxm4-40gb": the model is the part before the first '-'; the rest describes it.
    size_t dash = word.find('-');
    bool described = dash != std::string::npos && word != "max-q";
    if (described) word = word.substr(0, dash);
    if (EndsModel(word)) break;
    if (!word.empty() && !IsBrandWord(word)) model.push_back(word);
    if (described) break;
  }
  // "RTX A6000": the professional line's model stands for itself.
  if (model.size() >= 2 && model[0] == "rtx" &&
      std::isalpha(static_cast<unsigned char>(model[1][0])) && model[1] != "pro") {
    model.erase(model.begin());
  }
  std::string type;
  for (const std::string& w : model) {
    for (char c : w) {
      if (std::isalnum(static_cast<unsigned char>(c))) type += c;
    }
  }
  return type.empty() ? "gpu" : type;
}

Result<DetectedNode> DetectNode() {
  DetectedNode node;
  node.hostname = ShortHostname();
  node.cpus = AffinityCpus();
  node.mem_mib = MemTotalMib();
  node.root = geteuid() == 0;
  Result<CgroupLayout> layout = DetectCgroupLayout();
  CgroupLayout empty;
  const CgroupLayout& l = layout.ok() ? *layout : empty;
  node.cgroups = std::string(CgroupModeName(l.mode));
  AddCgroupLimits(l, &node);
  Result<std::unique_ptr<Nvml>> nvml = Nvml::Open();
  if (nvml.ok()) {
    node.nvml = true;
    Result<int32_t> count = (*nvml)->DeviceCount();
    std::vector<NvmlGpu> found;
    for (int32_t i = 0; count.ok() && i < *count; ++i) {
      Result<NvmlGpu> gpu = (*nvml)->Gpu(i);
      if (gpu.ok()) found.push_back(std::move(*gpu));
    }
    node.gpus = NodeGpuDevices(found);
    if (!node.gpus.empty()) {
      node.cannot_enforce.push_back(
          "GPU isolation (no device cgroup: jobs could open every GPU; CUDA_VISIBLE_DEVICES "
          "only)");
    }
  }
  return node;
}

double SampleGpuUtilization(const std::vector<int32_t>& indices) {
  // Loaded once: nvmlInit takes long enough that a supervisor sampling every few seconds must
  // not repeat it. Never unloaded (NVML's shutdown at process exit is not needed).
  static Nvml* const nvml = [] {
    Result<std::unique_ptr<Nvml>> opened = Nvml::Open();
    return opened.ok() ? opened.value().release() : nullptr;
  }();
  if (nvml == nullptr || indices.empty()) return -1;
  double sum = 0;
  int n = 0;
  for (int32_t i : indices) {
    Result<int32_t> util = nvml->Utilization(i);
    if (util.ok()) {
      sum += *util;
      ++n;
    }
  }
  return n == 0 ? -1 : sum / n;
}

}  // namespace berth::agent
