// sinfo's data, node states, grouping, sorting and output (Slurm 22.05 src/sinfo/sinfo.c,
// sort.c, print.c).
#include "slurm/sinfo_view.h"

#include <algorithm>
#include <cctype>
#include <map>
#include <nlohmann/json.hpp>

#include "common/hostlist.h"
#include "common/strings.h"
#include "common/units.h"
#include "slurm/sinfo_internal.h"

namespace berth::slurm {
namespace {

using nlohmann::json;
using sinfo_internal::FindSinfoField;
using sinfo_internal::Match;
using sinfo_internal::Record;
using sinfo_internal::SinfoField;

// Slurm's node_state values (slurm.h).
constexpr uint32_t kStateDown = 1;
constexpr uint32_t kStateIdle = 2;
constexpr uint32_t kStateAllocated = 3;
constexpr uint32_t kStateError = 4;
constexpr uint32_t kStateMixed = 5;
constexpr uint32_t kStateBase = 0xf;
constexpr uint32_t kFlagNet = 0x10;
constexpr uint32_t kFlagRes = 0x20;
constexpr uint32_t kFlagCloud = 0x80;
constexpr uint32_t kFlagDrain = 0x200;
constexpr uint32_t kFlagCompleting = 0x400;
constexpr uint32_t kFlagNoRespond = 0x800;
constexpr uint32_t kFlagPoweredDown = 0x1000;
constexpr uint32_t kFlagFail = 0x2000;
constexpr uint32_t kFlagPoweringUp = 0x4000;
constexpr uint32_t kFlagMaint = 0x8000;
constexpr uint32_t kFlagRebootRequested = 0x10000;
constexpr uint32_t kFlagPoweringDown = 0x40000;
constexpr uint32_t kFlagRebootIssued = 0x100000;
constexpr uint32_t kFlagPlanned = 0x200000;
constexpr uint32_t kFlagPowerDown = 0x800000;

bool PrefixNoCase(std::string_view word, std::string_view full) {
  return !word.empty() && StartsWithIgnoreCase(full, word);
}

std::vector<std::string> Strings(const json& v) {
  std::vector<std::string> out;
  if (!v.is_array()) return out;
  for (const json& s : v) {
    if (s.is_string()) out.push_back(s.get<std::string>());
  }
  return out;
}

Time TimeValue(const json& o, const char* key) {
  if (!o.contains(key) || !o.at(key).is_number_integer()) return kNoTime;
  Time t = o.at(key).get<Time>();
  return t > 0 ? t : kNoTime;
}

SinfoNode NodeFromJson(const json& n) {
  SinfoNode s;
  s.name = n.value("name", "");
  s.state = n.value("state", "UNKNOWN");
  s.responding = n.value("agent_connected", true);
  s.resv_state = n.value("reservation_state", "");
  s.reason = n.value("reason", "");
  s.reason_time = TimeValue(n, n.contains("reason_time") ? "reason_time" : "reason_changed_at");
  s.reason_user = n.value("reason_user", "");
  s.reason_uid = n.value("reason_uid", int64_t{-1});
  s.cpus = n.value("cpus", 0);
  s.alloc_cpus = n.value("alloc_cpus", 0);
  s.mem_mib = n.value("mem_mib", int64_t{0});
  s.alloc_mem_mib = n.value("alloc_mem_mib", int64_t{0});
  s.sockets = n.value("sockets", 1);
  s.cores = n.value("cores_per_socket", 1);
  s.threads = n.value("threads_per_core", 1);
  s.weight = n.value("weight", 1);
  s.gpu_types = Strings(n.value("gpus", json::array()));
  s.gpu_used.assign(s.gpu_types.size(), false);
  // Without the jobs, the first alloc_gpus devices stand for the ones in use.
  int used = std::min<int>(n.value("alloc_gpus", 0), static_cast<int>(s.gpu_used.size()));
  for (int i = 0; i < used; ++i) s.gpu_used[i] = true;
  if (n.contains("gres") && n.at("gres").is_object()) {
    for (const auto& [name, count] : n.at("gres").items()) {
      if (count.is_number_integer()) s.gres.emplace_back(name, count.get<int64_t>());
    }
  }
  s.features = Strings(n.value("features", json::array()));
  s.partitions = Strings(n.value("partitions", json::array()));
  return s;
}

SinfoPartition PartitionFromJson(const json& p) {
  SinfoPartition s;
  s.name = p.value("name", "");
  s.is_default = p.value("default", false);
  s.state = p.value("state", "UP");
  int64_t max_time = p.value("max_time", int64_t{-1});
  s.max_time = max_time < 0 || max_time >= kInfinite ? kInfinite : max_time;
  int64_t def_time = p.value("default_time", int64_t{-1});
  s.default_time = def_time < 0 ? kNoTime : def_time;
  s.max_nodes = p.value("max_nodes", 0);
  s.priority_tier = p.value("priority_tier", 1);
  Result<std::vector<std::string>> names = hostlist::Expand(p.value("nodes", ""));
  if (names.ok()) s.nodes = std::move(names).value();
  return s;
}

// GPUs and other GRES in use, from the jobs' allocations.
void AddJobUse(const json& jobs, std::vector<SinfoNode>& nodes) {
  std::map<std::string, SinfoNode*> by_name;
  for (SinfoNode& n : nodes) {
    std::fill(n.gpu_used.begin(), n.gpu_used.end(), false);
    by_name[n.name] = &n;
  }
  const std::vector<std::string_view> holding = Split(kNodeHoldingStates, ',');
  for (const json& j : jobs) {
    std::string state = j.value("state", "");
    if (!j.contains("allocation") || !j.at("allocation").contains("nodes")) continue;
    if (std::find(holding.begin(), holding.end(), state) == holding.end()) continue;
    for (const json& a : j.at("allocation").at("nodes")) {
      auto it = by_name.find(a.value("node", ""));
      if (it == by_name.end()) continue;
      SinfoNode& n = *it->second;
      for (const json& g : a.value("gpus", json::array())) {
        if (g.is_number_integer() && g.get<int64_t>() >= 0 && g.get<size_t>() < n.gpu_used.size()) {
          n.gpu_used[g.get<size_t>()] = true;
        }
      }
      if (!a.contains("gres") || !a.at("gres").is_object()) continue;
      for (const auto& [name, count] : a.at("gres").items()) {
        if (!count.is_number_integer()) continue;
        auto used = std::find_if(n.gres_used.begin(), n.gres_used.end(),
                                 [&gres = name](const auto& p) { return p.first == gres; });
        if (used == n.gres_used.end()) {
          n.gres_used.emplace_back(name, count.get<int64_t>());
        } else {
          used->second += count.get<int64_t>();
        }
      }
    }
  }
}

// "0-3,6" for the given device indices (Slurm's bit_fmt).
std::string IndexList(const std::vector<int>& idx) {
  std::string out;
  for (size_t i = 0; i < idx.size();) {
    size_t j = i;
    while (j + 1 < idx.size() && idx[j + 1] == idx[j] + 1) ++j;
    out += (out.empty() ? "" : ",") + std::to_string(idx[i]);
    if (j > i) out += "-" + std::to_string(idx[j]);
    i = j + 1;
  }
  return out;
}

// GPU types in the order their first device appears.
std::vector<std::string> GpuTypes(const SinfoNode& n) {
  std::vector<std::string> types;
  for (const std::string& t : n.gpu_types) {
    if (std::find(types.begin(), types.end(), t) == types.end()) types.push_back(t);
  }
  return types;
}

std::string GpuPrefix(const std::string& type) {
  return type.empty() ? "gpu:" : "gpu:" + type + ":";
}

}  // namespace

Result<SinfoData> SinfoDataFromJson(const json& nodes, const json& partitions, const json& jobs) {
  if (!nodes.is_object() || !nodes.contains("nodes") || !nodes.at("nodes").is_array()) {
    return Status::InvalidArgument("the node list has no \"nodes\"");
  }
  if (!partitions.is_object() || !partitions.contains("partitions") ||
      !partitions.at("partitions").is_array()) {
    return Status::InvalidArgument("the partition list has no \"partitions\"");
  }
  SinfoData d;
  try {
    for (const json& n : nodes.at("nodes")) d.nodes.push_back(NodeFromJson(n));
    for (const json& p : partitions.at("partitions")) d.partitions.push_back(PartitionFromJson(p));
    if (jobs.is_object() && jobs.contains("jobs") && jobs.at("jobs").is_array()) {
      AddJobUse(jobs.at("jobs"), d.nodes);
    }
  } catch (const std::exception& e) {
    return Status::InvalidArgument(std::string("bad node or partition record: ") + e.what());
  }
  return d;
}

uint32_t NodeStateCode(const SinfoNode& n) {
  uint32_t code = 0;
  if (n.state == "IDLE") {
    code = kStateIdle;
  } else if (n.state == "MIXED") {
    code = kStateMixed;
  } else if (n.state == "ALLOCATED") {
    code = kStateAllocated;
  } else if (n.state == "DRAINING") {
    code = (n.alloc_cpus >= n.cpus ? kStateAllocated : kStateMixed) | kFlagDrain;
  } else if (n.state == "DRAINED") {
    code = kStateIdle | kFlagDrain;
  } else if (n.state == "DOWN") {
    code = kStateDown;
  } else if (n.state.find("POWERED_DOWN") != std::string::npos) {
    return kStateIdle | kFlagPoweredDown;  // a powered-down node has no agent to answer
  } else if (n.state.find("POWERING_UP") != std::string::npos) {
    return kStateIdle | kFlagPoweringUp;
  } else if (n.state.find("POWERING_DOWN") != std::string::npos) {
    return kStateIdle | kFlagPoweringDown;
  }
  if (!n.responding) code |= kFlagNoRespond;
  if (n.resv_state == "MAINT") code |= kFlagMaint;
  if (n.resv_state == "RESERVED") code |= kFlagRes;
  return code;
}

namespace {

// node_state_string(_compact) for the states berth has, lower case.
std::string StateWord(const SinfoNode& n, bool compact) {
  uint32_t code = NodeStateCode(n);
  uint32_t base = code & kStateBase;
  std::string star = code & kFlagNoRespond ? "*" : "";
  // node_state_string: a node in a maintenance reservation is "maint" unless drained, down or
  // running jobs; one in another reservation is "resv" while idle.
  if ((code & kFlagMaint) && !(code & kFlagDrain) && base != kStateAllocated &&
      base != kStateMixed && base != kStateDown) {
    return "maint" + star;
  }
  if (code & kFlagDrain) {
    bool busy = base == kStateAllocated || base == kStateMixed;
    if (compact) return (busy ? "drng" : "drain") + star;
    return (busy ? "draining" : "drained") + star;
  }
  if (code & kFlagPoweredDown) return "idle~";
  if (code & kFlagPoweringUp) return "idle#";
  if (code & kFlagPoweringDown) return "idle%";
  switch (base) {
    case kStateDown:
      return "down" + star;
    case kStateIdle:
      if (code & kFlagRes) return (compact ? "resv" : "reserved") + star;
      return "idle" + star;
    case kStateAllocated:
      return (compact ? "alloc" : "allocated") + star;
    case kStateMixed:
      return (compact ? "mix" : "mixed") + star;
    default:
      return (compact ? "unk" : "unknown") + star;
  }
}

}  // namespace

std::string NodeStateCompact(const SinfoNode& n) {
  return StateWord(n, true);
}
std::string NodeStateLong(const SinfoNode& n) {
  return StateWord(n, false);
}

// ---- -t

namespace {

struct StateName {
  std::string_view name;
  uint32_t code;
};

// sinfo's _node_state_id: base states by their long or compact name, then the flag words.
constexpr StateName kBaseStates[] = {
    {"UNKNOWN", 0},
    {"UNK", 0},
    {"DOWN", kStateDown},
    {"IDLE", kStateIdle},
    {"ALLOCATED", kStateAllocated},
    {"ALLOC", kStateAllocated},
    {"ERROR", kStateError},
    {"ERR", kStateError},
    {"MIXED", kStateMixed},
    {"MIX", kStateMixed},
    {"FUTURE", 6},
    {"FUTR", 6},
};
constexpr StateName kFlagStates[] = {
    {"DRAIN", kFlagDrain},
    {"DRAINED", kFlagDrain | kStateIdle},
    {"RESV", kFlagRes},
    {"RESERVED", kFlagRes},
    {"PERFCTRS", kFlagNet},
    {"NPC", kFlagNet},
    {"DRAINING", kFlagDrain | kStateAllocated},
    {"DRNG", kFlagDrain | kStateAllocated},
    {"COMPLETING", kFlagCompleting},
    {"COMP", kFlagCompleting},
    {"NO_RESPOND", kFlagNoRespond},
    {"POWERING_DOWN", kFlagPoweringDown},
    {"POWERED_DOWN", kFlagPoweredDown},
    {"POWER_DOWN", kFlagPowerDown},
    {"POWERING_UP", kFlagPoweringUp},
    {"FAIL", kFlagFail},
    {"MAINT", kFlagMaint},
    {"REBOOT_REQUESTED", kFlagRebootRequested},
    {"REBOOT_ISSUED", kFlagRebootIssued},
    {"CLOUD", kFlagCloud},
    {"PLANNED", kFlagPlanned},
};

std::optional<uint32_t> StateId(std::string_view word) {
  for (const StateName& s : kBaseStates) {
    if (PrefixNoCase(word, s.name)) return s.code;
  }
  for (const StateName& s : kFlagStates) {
    // Slurm compares strlen(word) characters, so "DRAINED" is not "DRAIN".
    if (PrefixNoCase(word, s.name)) return s.code;
  }
  return std::nullopt;
}

}  // namespace

Result<NodeStateFilter> ParseNodeStateList(std::string_view text) {
  NodeStateFilter f;
  std::string lower = ToLower(text);
  if (lower == "all") {
    f.all = true;
    return f;
  }
  std::string list(text);
  std::replace(list.begin(), list.end(), '&', ',');
  for (const std::string& word : SplitNonEmpty(list)) {
    std::optional<uint32_t> code = StateId(word);
    if (!code) return Status::InvalidArgument("Bad state string: \"" + word + "\"");
    f.codes.push_back(*code);
  }
  return f;
}

bool NodeStateMatches(const NodeStateFilter& f, const SinfoNode& n) {
  if (f.all || f.codes.empty()) return true;
  const uint32_t code = NodeStateCode(n);
  const uint32_t base = code & kStateBase;
  const bool drain = code & kFlagDrain;
  const bool busy = base == kStateAllocated || base == kStateMixed;
  for (uint32_t want : f.codes) {
    if (want == kFlagDrain) {
      if (drain) return true;
    } else if ((want & kFlagDrain) && (want & kStateBase) == kStateAllocated) {
      if (drain && busy) return true;
    } else if ((want & kFlagDrain) && (want & kStateBase) == kStateIdle) {
      if (drain && !busy) return true;
    } else if (want & ~kStateBase) {
      if (want & code) return true;
    } else if (want == kStateAllocated) {
      if (n.alloc_cpus > 0) return true;
    } else if (want == kStateIdle) {
      if ((code & ~kFlagNoRespond) == kStateIdle) return true;
    } else if (want == base) {
      return true;
    }
  }
  return false;
}

std::string NodeGres(const SinfoNode& n) {
  std::string out;
  for (const std::string& type : GpuTypes(n)) {
    int count = static_cast<int>(std::count(n.gpu_types.begin(), n.gpu_types.end(), type));
    out += (out.empty() ? "" : ",") + GpuPrefix(type) + std::to_string(count);
  }
  for (const auto& [name, count] : n.gres) {
    out += (out.empty() ? "" : ",") + name + ":" + std::to_string(count);
  }
  return out.empty() ? "(null)" : out;
}

std::string NodeGresUsed(const SinfoNode& n) {
  std::string out;
  for (const std::string& type : GpuTypes(n)) {
    std::vector<int> idx;
    for (size_t i = 0; i < n.gpu_types.size(); ++i) {
      if (n.gpu_types[i] == type && i < n.gpu_used.size() && n.gpu_used[i]) {
        idx.push_back(static_cast<int>(i));
      }
    }
    out += (out.empty() ? "" : ",") + GpuPrefix(type) + std::to_string(idx.size()) +
           "(IDX:" + (idx.empty() ? "N/A" : IndexList(idx)) + ")";
  }
  for (const auto& [name, total] : n.gres) {
    int64_t used = 0;
    for (const auto& [uname, count] : n.gres_used) {
      if (uname == name) used = count;
    }
    out += (out.empty() ? "" : ",") + name + ":" + std::to_string(used);
  }
  return out.empty() ? "(null)" : out;
}

// ---- Grouping

namespace {

struct Layout {
  std::vector<const SinfoField*> fields;  // the format's, known ones
};

bool PartitionsMatch(const Layout& l, const SinfoPartition* a, const SinfoPartition& b) {
  if (a == &b) return true;
  if (a == nullptr) return false;
  for (const SinfoField* f : l.fields) {
    if (f->match == Match::kPartition && f->part_key != nullptr &&
        f->part_key(*a) != f->part_key(b)) {
      return false;
    }
  }
  return true;
}

bool NodesMatch(const Layout& l, const SinfoNode& a, const SinfoNode& b, bool exact) {
  for (const SinfoField* f : l.fields) {
    bool applies = f->match == Match::kNode || (exact && f->match == Match::kExact);
    if (applies && f->node_key != nullptr && f->node_key(a) != f->node_key(b)) return false;
  }
  return true;
}

bool NodeWanted(const SinfoOptions& o, const SinfoNode& n) {
  if (!o.nodes.empty() && std::find(o.nodes.begin(), o.nodes.end(), n.name) == o.nodes.end()) {
    return false;
  }
  if (o.dead && n.responding) return false;
  if (o.responding && !n.responding) return false;
  return NodeStateMatches(o.states, n);
}

bool PartitionWanted(const SinfoOptions& o, const SinfoPartition& p) {
  return o.partitions.empty() ||
         std::find(o.partitions.begin(), o.partitions.end(), p.name) != o.partitions.end();
}

void Insert(std::vector<Record>& records, const Layout& l, const SinfoOptions& o,
            const SinfoPartition* part, const SinfoNode& node) {
  if (!o.node_oriented) {
    for (Record& r : records) {
      if (!PartitionsMatch(l, r.part, *part) || !NodesMatch(l, *r.nodes.front(), node, o.exact)) {
        continue;
      }
      // A node in two partitions that share a line counts once.
      if (std::find(r.nodes.begin(), r.nodes.end(), &node) == r.nodes.end()) {
        r.nodes.push_back(&node);
      }
      return;
    }
  }
  records.push_back(Record{part, {&node}});
}

std::vector<Record> BuildRecords(const SinfoOptions& o, const Layout& l, const SinfoData& d) {
  std::map<std::string, const SinfoNode*> by_name;
  for (const SinfoNode& n : d.nodes) by_name[n.name] = &n;
  std::vector<Record> records;
  for (const SinfoPartition& p : d.partitions) {
    if (!PartitionWanted(o, p)) continue;
    for (const std::string& name : p.nodes) {
      auto it = by_name.find(name);
      if (it == by_name.end() || !NodeWanted(o, *it->second)) continue;
      Insert(records, l, o, &p, *it->second);
    }
  }
  if (o.node_oriented && o.partitions.empty()) {
    // -N also lists nodes that are in no partition.
    for (const SinfoNode& n : d.nodes) {
      if (n.partitions.empty() && NodeWanted(o, n)) records.push_back(Record{nullptr, {&n}});
    }
  }
  return records;
}

// ---- Sorting (sinfo's sort.c)

template <typename T>
int Compare(const T& a, const T& b) {
  return a < b ? -1 : (b < a ? 1 : 0);
}

// sinfo's node-name order: digits compare as numbers.
int CompareNames(const std::string& a, const std::string& b) {
  for (size_t i = 0;; ++i) {
    if (i >= a.size() || i >= b.size()) return Compare(a.size(), b.size());
    if (a[i] == b[i]) continue;
    if (IsDigit(a[i]) && IsDigit(b[i])) {
      return Compare(std::atol(a.c_str() + i), std::atol(b.c_str() + i));
    }
    return Compare(a[i], b[i]);
  }
}

std::string FirstName(const Record& r) {
  std::string best;
  for (const SinfoNode* n : r.nodes) {
    if (best.empty() || CompareNames(n->name, best) < 0) best = n->name;
  }
  return best;
}

template <typename F>
int64_t MinOf(const Record& r, F get) {
  int64_t v = INT64_MAX;
  for (const SinfoNode* n : r.nodes) v = std::min<int64_t>(v, get(*n));
  return r.nodes.empty() ? 0 : v;
}

int PartitionStateRank(const SinfoPartition* p) {
  if (p == nullptr) return 0;
  if (p->state == "UP") return 3;
  if (p->state == "DRAIN") return 2;
  if (p->state == "DOWN") return 1;
  return 0;
}

int CompareRecords(const SortKey& k, const Record& a, const Record& b,
                   const std::vector<SinfoPartition>& parts) {
  auto part_index = [&](const Record& r) -> int64_t {
    return r.part == nullptr ? INT64_MAX : r.part - parts.data();
  };
  const SinfoNode* na = a.nodes.front();
  const SinfoNode* nb = b.nodes.front();
  switch (k.key[0]) {
    case 'a':
      return Compare(PartitionStateRank(a.part), PartitionStateRank(b.part));
    case 'A':
    case 'F': {
      auto alloc = [](const Record& r) {
        return std::count_if(r.nodes.begin(), r.nodes.end(),
                             [](const SinfoNode* n) { return n->alloc_cpus > 0; });
      };
      return Compare(alloc(a), alloc(b));
    }
    case 'c':
      return Compare(MinOf(a, [](auto& n) { return n.cpus; }),
                     MinOf(b, [](auto& n) { return n.cpus; }));
    case 'D':
      return Compare(a.nodes.size(), b.nodes.size());
    case 'E':
      return Compare(na->reason_time, nb->reason_time);
    case 'f':
      return Compare(na->features, nb->features);
    case 'l':
      return Compare(a.part ? a.part->max_time : 0, b.part ? b.part->max_time : 0);
    case 'm':
      return Compare(MinOf(a, [](auto& n) { return n.mem_mib; }),
                     MinOf(b, [](auto& n) { return n.mem_mib; }));
    case 'n':
    case 'N':
    case 'o':
      return CompareNames(FirstName(a), FirstName(b));
    case 'p':
      return Compare(a.part ? a.part->priority_tier : 0, b.part ? b.part->priority_tier : 0);
    case 'P':
      if (k.config_order) return Compare(part_index(a), part_index(b));
      return Compare(a.part ? a.part->name : "", b.part ? b.part->name : "");
    case 'R':
      return Compare(na->reason, nb->reason);
    case 's':
      return Compare(a.part ? a.part->max_nodes : 0, b.part ? b.part->max_nodes : 0);
    case 't':
    case 'T':
      return Compare(NodeStateCode(*na), NodeStateCode(*nb));
    case 'w':
      return Compare(MinOf(a, [](auto& n) { return n.weight; }),
                     MinOf(b, [](auto& n) { return n.weight; }));
    case 'X':
      return Compare(MinOf(a, [](auto& n) { return n.sockets; }),
                     MinOf(b, [](auto& n) { return n.sockets; }));
    case 'Y':
      return Compare(MinOf(a, [](auto& n) { return n.cores; }),
                     MinOf(b, [](auto& n) { return n.cores; }));
    case 'Z':
      return Compare(MinOf(a, [](auto& n) { return n.threads; }),
                     MinOf(b, [](auto& n) { return n.threads; }));
    default:
      return 0;  // d, g, h, M, O, r, z: the same for every berth node or partition
  }
}

constexpr std::string_view kSinfoSortLetters = "aAcdDEfFghlmMnNoOpPrRstTwXYZz";

void SortRecords(std::vector<Record>& records, const std::vector<SortKey>& keys,
                 const std::vector<SinfoPartition>& parts) {
  std::stable_sort(records.begin(), records.end(), [&](const Record& a, const Record& b) {
    for (const SortKey& k : keys) {
      if (k.key.size() != 1) continue;
      int c = CompareRecords(k, a, b, parts);
      if (c != 0) return k.descending ? c > 0 : c < 0;
    }
    return false;
  });
}

// ---- Output

sinfo_internal::Widths ComputeWidths(const SinfoOptions& o, const std::vector<Record>& records) {
  sinfo_internal::Widths w;
  if (o.size_partitions) {
    w.partition = 9;  // sinfo's MIN_PART_FIELD_SIZE
    for (const Record& r : records) {
      if (r.part == nullptr) continue;
      w.partition = std::max<int>(
          w.partition, static_cast<int>(r.part->name.size()) + (r.part->is_default ? 1 : 0));
    }
  }
  if (o.size_nodes) {
    w.nodes = 9;  // sinfo's MIN_NODE_FIELD_SIZE
    for (const Record& r : records) {
      std::vector<std::string> names;
      for (const SinfoNode* n : r.nodes) names.push_back(n->name);
      w.nodes = std::max<int>(w.nodes, static_cast<int>(hostlist::CompressSorted(names).size()));
    }
  }
  return w;
}

// The format with sinfo's computed widths put in.
OutputFormat Sized(const OutputFormat& format, bool percent_form, const sinfo_internal::Widths& w) {
  OutputFormat out = format;
  for (FormatField& f : out.fields) {
    const SinfoField* field = FindSinfoField(f.key, percent_form);
    if (field == nullptr) continue;
    if (w.partition > 0 && (field->letter == 'P' || field->letter == 'R')) f.width = w.partition;
    if (w.nodes > 0 && (field->letter == 'N' || field->letter == 'n')) f.width = w.nodes;
  }
  return out;
}

}  // namespace

Status CheckSinfoSortKeys(const std::vector<SortKey>& keys) {
  for (const SortKey& k : keys) {
    if (k.key.size() != 1 || kSinfoSortLetters.find(k.key[0]) == std::string_view::npos) {
      return Status::InvalidArgument("Invalid sort specification: " + k.key);
    }
  }
  return Status::Ok();
}

std::string RenderSinfo(const SinfoOptions& o, const OutputFormat& format, const SinfoData& d) {
  const bool pf = o.percent_form;
  Layout layout;
  for (const FormatField& f : format.fields) {
    if (const SinfoField* field = FindSinfoField(f.key, pf)) layout.fields.push_back(field);
  }
  std::vector<Record> records = BuildRecords(o, layout, d);
  SortRecords(records, ParseSortList(o.sort), d.partitions);
  OutputFormat sized = Sized(format, pf, ComputeWidths(o, records));
  std::string out;
  if (!o.no_header) {
    out += RenderLine(sized, [&](const FormatField& f) {
      const SinfoField* field = FindSinfoField(f.key, pf);
      return field ? Cell{std::string(field->header), field->header_cut} : Cell{};
    });
    out += '\n';
  }
  for (const Record& r : records) {
    out += RenderLine(sized, [&](const FormatField& f) {
      const SinfoField* field = FindSinfoField(f.key, pf);
      return field ? field->value(r, f.width) : Cell{};
    });
    out += '\n';
  }
  return out;
}

// ---- --json

namespace {

// As Slurm's TRES strings: FormatMemoryMiB's exact units ("62.50G"), "0M" for none.
std::string TresMem(int64_t mib) {
  return mib > 0 ? FormatMemoryMiB(mib) : std::to_string(mib) + "M";
}

json NodeJson(const SinfoNode& n) {
  uint32_t code = NodeStateCode(n);
  json flags = json::array();
  if (code & kFlagDrain) flags.push_back("DRAIN");
  if (code & kFlagNoRespond) flags.push_back("NOT_RESPONDING");
  if (code & kFlagPoweredDown) flags.push_back("POWERED_DOWN");
  if (code & kFlagPoweringUp) flags.push_back("POWERING_UP");
  if (code & kFlagPoweringDown) flags.push_back("POWERING_DOWN");
  static const char* const kBase[] = {"unknown", "down",  "idle",  "allocated",
                                      "error",   "mixed", "future"};
  uint32_t base = code & kStateBase;
  std::string tres = "cpu=" + std::to_string(n.cpus) + ",mem=" + TresMem(n.mem_mib) +
                     ",billing=" + std::to_string(n.cpus);
  if (!n.gpu_types.empty()) tres += ",gres/gpu=" + std::to_string(n.gpu_types.size());
  std::string tres_used;
  if (n.alloc_cpus > 0) tres_used = "cpu=" + std::to_string(n.alloc_cpus);
  if (n.alloc_mem_mib > 0)
    tres_used += (tres_used.empty() ? "" : ",") + ("mem=" + TresMem(n.alloc_mem_mib));
  std::string features;
  for (const std::string& f : n.features) features += (features.empty() ? "" : ",") + f;
  return {{"name", n.name},
          {"hostname", n.name},
          {"address", n.name},
          {"state", base < 7 ? kBase[base] : "unknown"},
          {"state_flags", flags},
          {"cpus", n.cpus},
          {"alloc_cpus", n.alloc_cpus},
          {"idle_cpus", n.cpus - n.alloc_cpus},
          {"sockets", n.sockets},
          {"cores", n.cores},
          {"threads", n.threads},
          {"boards", 1},
          {"real_memory", n.mem_mib},
          {"alloc_memory", n.alloc_mem_mib},
          {"free_memory", nullptr},
          {"temporary_disk", 0},
          {"weight", n.weight},
          {"gres", NodeGres(n) == "(null)" ? "" : NodeGres(n)},
          {"gres_used", NodeGresUsed(n) == "(null)" ? "" : NodeGresUsed(n)},
          {"gres_drained", "N/A"},
          {"features", features},
          {"active_features", features},
          {"partitions", n.partitions},
          {"reason", n.reason},
          {"reason_changed_at", n.reason_time == kNoTime ? 0 : n.reason_time},
          {"reason_set_by_user", n.reason_user.empty() ? json(nullptr) : json(n.reason_user)},
          {"tres", tres},
          {"tres_used", tres_used.empty() ? json(nullptr) : json(tres_used)}};
}

}  // namespace

json SinfoJson(const SinfoData& d) {
  json nodes = json::array();
  for (const SinfoNode& n : d.nodes) nodes.push_back(NodeJson(n));
  return {{"meta",
           {{"plugin", {{"type", "openapi/v0.0.38"}, {"name", "Slurm OpenAPI v0.0.38"}}},
            {"Slurm",
             {{"version", {{"major", 22}, {"micro", 8}, {"minor", 5}}}, {"release", "22.05.8"}}}}},
          {"errors", json::array()},
          {"nodes", nodes}};
}

}  // namespace berth::slurm
