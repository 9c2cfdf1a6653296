#include "config/tres_text.h"

#include "common/strings.h"
#include "common/units.h"
#include "config/value_text.h"

namespace berth::config {
namespace {

struct TresItem {
  std::string name;  // normalised
  std::string_view value;
};

Result<std::vector<TresItem>> SplitTres(std::string_view text) {
  std::vector<TresItem> items;
  for (std::string_view part : Split(text, ',')) {
    size_t eq = part.find('=');
    if (eq == std::string_view::npos || eq == 0 || eq + 1 == part.size()) {
      return Status::InvalidArgument("bad TRES entry '" + std::string(part) +
                                     "': expected name=value");
    }
    items.push_back({NormalizeTresName(part.substr(0, eq)), part.substr(eq + 1)});
  }
  return items;
}

Status BadTres(const TresItem& item, std::string_view why) {
  return Status::InvalidArgument("bad TRES entry '" + item.name + "=" + std::string(item.value) +
                                 "': " + std::string(why));
}

// A limit value: -1 (no limit) or a count / memory size.
Result<int64_t> LimitValue(const TresItem& item) {
  if (item.value == "-1") return core::kNoLimit;
  if (item.name == "mem") {
    Result<int64_t> mib = ParseMemoryMiB(item.value);
    if (!mib.ok()) return BadTres(item, Reason(mib.status()));
    return *mib;
  }
  Result<int64_t> n = ParseInteger(item.value, 0, INT64_C(1) << 62);
  if (!n.ok()) return BadTres(item, n.status().message());
  return *n;
}

// The per-GiB factor of a memory billing weight's unit letter; 0 for an unknown unit.
double MemUnitPerGiB(std::string_view unit) {
  if (unit.empty() || EqualsIgnoreCase(unit, "M")) return 1024.0;
  if (EqualsIgnoreCase(unit, "G")) return 1.0;
  if (EqualsIgnoreCase(unit, "T")) return 1.0 / 1024.0;
  return 0.0;
}

}  // namespace

std::string NormalizeTresName(std::string_view name) {
  size_t slash = name.find('/');
  if (slash == std::string_view::npos) return ToLower(name);
  return ToLower(name.substr(0, slash)) + std::string(name.substr(slash));
}

Result<core::TresLimits> ParseTresLimits(std::string_view text) {
  core::TresLimits limits;
  BERTH_ASSIGN_OR_RETURN(std::vector<TresItem> items, SplitTres(text));
  for (const TresItem& item : items) {
    int64_t* field = item.name == "cpu"        ? &limits.cpus
                     : item.name == "mem"      ? &limits.mem_mib
                     : item.name == "node"     ? &limits.nodes
                     : item.name == "gres/gpu" ? &limits.gpus
                                               : nullptr;
    if (field == nullptr) return BadTres(item, "berth limits only cpu, mem, node and gres/gpu");
    BERTH_ASSIGN_OR_RETURN(*field, LimitValue(item));
  }
  return limits;
}

Status MergeTresLimits(std::string_view text, core::TresLimits& limits) {
  core::TresLimits out = limits;
  BERTH_ASSIGN_OR_RETURN(std::vector<TresItem> items, SplitTres(text));
  for (const TresItem& item : items) {
    int64_t* field = item.name == "cpu"        ? &out.cpus
                     : item.name == "mem"      ? &out.mem_mib
                     : item.name == "node"     ? &out.nodes
                     : item.name == "gres/gpu" ? &out.gpus
                                               : nullptr;
    if (field == nullptr) return BadTres(item, "berth limits only cpu, mem, node and gres/gpu");
    BERTH_ASSIGN_OR_RETURN(*field, LimitValue(item));
  }
  limits = out;
  return Status::Ok();
}

Result<std::vector<core::NamedCount>> ParseTresWeights(std::string_view text) {
  std::vector<core::NamedCount> out;
  BERTH_ASSIGN_OR_RETURN(std::vector<TresItem> items, SplitTres(text));
  for (const TresItem& item : items) {
    Result<int64_t> w = ParseInteger(item.value, 0, UINT32_MAX);
    if (!w.ok()) return BadTres(item, w.status().message());
    out.push_back({item.name, *w});
  }
  return out;
}

Status ParseBillingWeights(std::string_view text, core::FairshareConfig& fs,
                           std::vector<std::string>& ignored) {
  BERTH_ASSIGN_OR_RETURN(std::vector<TresItem> items, SplitTres(text));
  core::FairshareConfig out = fs;
  out.cpu_weight = 0;
  out.gpu_weight = 0;
  out.mem_weight_per_gib = 0;
  for (const TresItem& item : items) {
    std::string_view number = item.value;
    std::string_view unit;
    if (!number.empty() && ((number.back() | 0x20) >= 'a' && (number.back() | 0x20) <= 'z')) {
      unit = number.substr(number.size() - 1);
      number.remove_suffix(1);
    }
    Result<double> w = ParseDecimal(number);
    if (!w.ok()) return BadTres(item, w.status().message());
    if (item.name == "mem") {
      double per_gib = MemUnitPerGiB(unit);
      if (per_gib == 0.0) return BadTres(item, "the unit must be M, G or T");
      out.mem_weight_per_gib = *w * per_gib;
      continue;
    }
    if (!unit.empty()) return BadTres(item, "only a memory weight takes a unit");
    if (item.name == "cpu") {
      out.cpu_weight = *w;
    } else if (item.name == "gres/gpu") {
      out.gpu_weight = *w;
    } else {
      ignored.push_back(item.name);
    }
  }
  fs = out;
  return Status::Ok();
}

}  // namespace berth::config
