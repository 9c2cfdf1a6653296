#include "sim/philly_machines.h"

#include <optional>
#include <string>
#include <unordered_set>
#include <vector>

#include "common/strings.h"
#include "sim/text_scan.h"

namespace berth::sim {
namespace {

using internal::CsvSplitter;
using internal::LineScanner;

struct MachineColumns {
  int id = -1;
  int gpus = -1;
  int mem = -1;
  size_t count = 0;
};

MachineColumns ColumnsOf(std::string_view header) {
  MachineColumns c;
  CsvSplitter split;
  std::string error;
  if (!split.Split(header, &error)) return c;
  c.count = split.fields().size();
  for (size_t i = 0; i < split.fields().size(); ++i) {
    const std::string name = ToLower(Trim(split.fields()[i]));
    const int index = static_cast<int>(i);
    if (name == "machineid") c.id = index;
    if (name == "number of gpus") c.gpus = index;
    if (name == "single gpu mem") c.mem = index;
  }
  return c;
}

// "12GB" (or "12 GB", "12gb") -> 12.
std::optional<int64_t> ParseGigabytes(std::string_view s) {
  std::string lower = ToLower(Trim(s));
  if (lower.size() < 3 || lower.substr(lower.size() - 2) != "gb") return std::nullopt;
  std::optional<int64_t> n = internal::ParseInteger(Trim(lower.substr(0, lower.size() - 2)));
  if (!n || *n <= 0 || *n > 1024) return std::nullopt;
  return n;
}

bool FirstLine(std::string_view text, std::string_view* line) {
  LineScanner lines(text);
  while (lines.Next(line)) {
    if (!Trim(*line).empty()) return true;
  }
  return false;
}

}  // namespace

bool IsPhillyMachineList(std::string_view text) {
  std::string_view line;
  if (!FirstLine(text, &line)) return false;
  MachineColumns c = ColumnsOf(line);
  return c.id >= 0 && c.gpus >= 0;
}

Result<core::ClusterSpec> ReadPhillyMachineList(std::string_view text, std::string_view name) {
  LineScanner lines(text);
  std::string_view line;
  MachineColumns c;
  bool header = false;
  core::ClusterSpec spec;
  spec.name = "philly";
  std::unordered_set<std::string> seen;
  CsvSplitter split;
  std::string error;
  while (lines.Next(&line)) {
    if (Trim(line).empty()) continue;
    auto bad = [&](const std::string& what) {
      return Status::InvalidArgument(std::string(name) + ":" + std::to_string(lines.line_number()) +
                                     ": " + what);
    };
    if (!header) {
      c = ColumnsOf(line);
      if (c.id < 0 || c.gpus < 0) {
        return bad(
            "not a Philly machine list (expected the columns machineId and "
            "number of GPUs)");
      }
      header = true;
      continue;
    }
    if (!split.Split(line, &error)) return bad(error);
    const std::vector<std::string_view>& f = split.fields();
    if (f.size() != c.count) {
      return bad(std::to_string(f.size()) + " fields, the header has " + std::to_string(c.count));
    }
    core::NodeSpec n;
    n.name = std::string(Trim(f[c.id]));
    if (n.name.empty()) return bad("empty machineId");
    if (!seen.insert(n.name).second) return bad("machine " + internal::Quote(n.name) + " twice");
    std::optional<int64_t> gpus = internal::ParseInteger(Trim(f[c.gpus]));
    if (!gpus || *gpus < 1 || *gpus > 64) {
      return bad("number of GPUs " + internal::Quote(f[c.gpus]) + " is not a number in 1..64");
    }
    std::string type;
    if (c.mem >= 0) {
      std::optional<int64_t> gb = ParseGigabytes(f[c.mem]);
      if (!gb) return bad("single GPU mem " + internal::Quote(f[c.mem]) + " is not like 12GB");
      type = std::to_string(*gb) + "gb";
    }
    n.cpus = static_cast<int32_t>(*gpus * kPhillyCpusPerGpu);
    n.cores_per_socket = n.cpus;
    n.mem_mib = *gpus * kPhillyMemPerGpuMib;
    n.gpus.assign(static_cast<size_t>(*gpus), type);
    spec.nodes.push_back(std::move(n));
  }
  if (!header) return Status::InvalidArgument(std::string(name) + ": empty machine list");
  if (spec.nodes.empty()) return Status::InvalidArgument(std::string(name) + ": no machines");
  return spec;
}

}  // namespace berth::sim
