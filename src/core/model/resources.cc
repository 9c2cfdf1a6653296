#include "core/model/resources.h"

#include <algorithm>

namespace berth::core {
namespace {

// Slurm prints memory in TRES strings with the largest unit that divides it exactly.
std::string MemText(int64_t mib) {
  if (mib != 0 && mib % (1024 * 1024) == 0) return std::to_string(mib / (1024 * 1024)) + "T";
  if (mib != 0 && mib % 1024 == 0) return std::to_string(mib / 1024) + "G";
  return std::to_string(mib) + "M";
}

}  // namespace

void Tres::Add(const Tres& o) {
  cpus += o.cpus;
  mem_mib += o.mem_mib;
  nodes += o.nodes;
  if (gpus == 0) {
    gpu_type = o.gpu_type;
  } else if (o.gpus > 0 && gpu_type != o.gpu_type) {
    gpu_type.clear();
  }
  gpus += o.gpus;
  for (const NamedCount& c : o.other) {
    auto it = std::find_if(other.begin(), other.end(),
                           [&](const NamedCount& x) { return x.name == c.name; });
    if (it == other.end()) {
      other.push_back(c);
    } else {
      it->count += c.count;
    }
  }
  std::sort(other.begin(), other.end(),
            [](const NamedCount& a, const NamedCount& b) { return a.name < b.name; });
}

std::string Tres::ToString(int64_t billing) const {
  std::string s = "cpu=" + std::to_string(cpus);
  if (mem_mib > 0) s += ",mem=" + MemText(mem_mib);
  if (nodes > 0) s += ",node=" + std::to_string(nodes);
  if (billing >= 0) s += ",billing=" + std::to_string(billing);
  if (gpus > 0) {
    s += ",gres/gpu=" + std::to_string(gpus);
    if (!gpu_type.empty()) s += ",gres/gpu:" + gpu_type + "=" + std::to_string(gpus);
  }
  for (const NamedCount& c : other) s += "," + c.name + "=" + std::to_string(c.count);
  return s;
}

}  // namespace berth::core
