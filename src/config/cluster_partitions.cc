// PartitionName= records, as Slurm's read_config.c (_parse_partitionname) reads them.
#include <optional>

#include "common/hostlist.h"
#include "common/strings.h"
#include "common/units.h"
#include "config/cluster_config_internal.h"

namespace berth::config::internal {
namespace {

enum class PartKey {
  kNodes,
  kDefault,
  kMaxTime,
  kDefaultTime,
  kPriorityTier,
  kPriorityJobFactor,
  kPriority,
  kState,
  kMaxNodes,
  kMinNodes,
  kPreemptMode,
  kOverSubscribe,
  kAllowAccounts,
  kAllowQos,
  kDefMemPerCpu,
  kDefMemPerNode,
  kGraceTime,
  kIgnored,
};

constexpr KeyName<PartKey> kPartKeys[] = {
    {"Nodes", PartKey::kNodes},
    {"Default", PartKey::kDefault},
    {"MaxTime", PartKey::kMaxTime},
    {"DefaultTime", PartKey::kDefaultTime},
    {"PriorityTier", PartKey::kPriorityTier},
    {"PriorityJobFactor", PartKey::kPriorityJobFactor},
    {"Priority", PartKey::kPriority},
    {"State", PartKey::kState},
    {"MaxNodes", PartKey::kMaxNodes},
    {"MinNodes", PartKey::kMinNodes},
    {"PreemptMode", PartKey::kPreemptMode},
    {"OverSubscribe", PartKey::kOverSubscribe},
    {"Shared", PartKey::kOverSubscribe},  // OverSubscribe's old name
    {"AllowAccounts", PartKey::kAllowAccounts},
    {"AllowQos", PartKey::kAllowQos},
    {"DefMemPerCPU", PartKey::kDefMemPerCpu},
    {"DefMemPerNode", PartKey::kDefMemPerNode},
    {"AllocNodes", PartKey::kIgnored},
    {"AllowGroups", PartKey::kIgnored},
    {"Alternate", PartKey::kIgnored},
    {"CpuBind", PartKey::kIgnored},
    {"DefCPUPerGPU", PartKey::kIgnored},
    {"DefMemPerGPU", PartKey::kIgnored},
    {"DenyAccounts", PartKey::kIgnored},
    {"DenyQos", PartKey::kIgnored},
    {"DisableRootJobs", PartKey::kIgnored},
    {"ExclusiveTopo", PartKey::kIgnored},
    {"ExclusiveUser", PartKey::kIgnored},
    {"GraceTime", PartKey::kGraceTime},
    {"Hidden", PartKey::kIgnored},
    {"LLN", PartKey::kIgnored},
    {"MaxCPUsPerNode", PartKey::kIgnored},
    {"MaxCPUsPerSocket", PartKey::kIgnored},
    {"MaxMemPerCPU", PartKey::kIgnored},
    {"MaxMemPerNode", PartKey::kIgnored},
    {"OverTimeLimit", PartKey::kIgnored},
    {"PowerDownOnIdle", PartKey::kIgnored},
    {"QOS", PartKey::kIgnored},
    {"ReqResv", PartKey::kIgnored},
    {"ResumeTimeout", PartKey::kIgnored},
    {"RootOnly", PartKey::kIgnored},
    {"SelectTypeParameters", PartKey::kIgnored},
    {"SuspendTime", PartKey::kIgnored},
    {"SuspendTimeout", PartKey::kIgnored},
    {"Topology", PartKey::kIgnored},
    {"TRESBillingWeights", PartKey::kIgnored},
};

// One PartitionName line with its DEFAULT lines merged under it.
struct PartValues {
  core::PartitionSpec spec;
  bool all_nodes = false;
  std::optional<int32_t> priority;  // Priority= sets both PriorityTier and PriorityJobFactor
  bool def_mem_per_node = false;
  std::optional<Duration> grace_time;  // GraceTime=, seconds
};

Result<int64_t> Integer(std::string_view key, std::string_view value, int64_t max) {
  Result<int64_t> n = ParseInteger(value, 0, max);
  if (!n.ok()) return InvalidValue(key, value, n.status().message());
  return *n;
}

Result<Duration> Minutes(std::string_view key, std::string_view value) {
  Result<Duration> d = ParseConfigMinutes(value);
  if (!d.ok()) return InvalidValue(key, value, d.status().message());
  return *d;
}

Result<int64_t> Memory(std::string_view key, std::string_view value) {
  if (EqualsIgnoreCase(value, "UNLIMITED")) return 0;
  Result<int64_t> mib = ParseMemoryMiB(value);
  if (!mib.ok()) return InvalidValue(key, value, Reason(mib.status()));
  return *mib;
}

// Node list: ALL, or a hostlist (blanks, possible in a quoted value, separate hosts as ',').
Status ReadNodes(std::string_view value, PartValues& v) {
  v.all_nodes = EqualsIgnoreCase(value, "ALL");
  v.spec.nodes.clear();
  if (v.all_nodes) return Status::Ok();
  Result<std::vector<std::string>> names = hostlist::Expand(value);
  if (!names.ok()) return InvalidValue("Nodes", value, Reason(names.status()));
  for (const std::string& n : *names) {
    if (EqualsIgnoreCase(n, "ALL")) return InvalidValue("Nodes", value, "ALL must stand alone");
  }
  v.spec.nodes = std::move(*names);
  return Status::Ok();
}

Result<core::PartitionState> ReadState(std::string_view value) {
  if (EqualsIgnoreCase(value, "UP")) return core::PartitionState::kUp;
  if (EqualsIgnoreCase(value, "DOWN")) return core::PartitionState::kDown;
  if (EqualsIgnoreCase(value, "DRAIN")) return core::PartitionState::kDrain;
  if (EqualsIgnoreCase(value, "INACTIVE")) return core::PartitionState::kInactive;
  return InvalidValue("State", value, "expected UP, DOWN, DRAIN or INACTIVE");
}

// NO, EXCLUSIVE, YES[:n] (n > 1) or FORCE[:n] (n >= 1). berth keeps the mode, not n.
Result<core::OverSubscribe> ReadOverSubscribe(std::string_view value) {
  std::string_view mode = value.substr(0, value.find(':'));
  bool has_count = mode.size() < value.size();
  if (has_count) {
    int64_t min = EqualsIgnoreCase(mode, "YES") ? 2 : 1;
    Result<int64_t> n = ParseInteger(value.substr(mode.size() + 1), min, 65535);
    if (!n.ok()) return InvalidValue("OverSubscribe", value, n.status().message());
  }
  if (EqualsIgnoreCase(mode, "YES")) return core::OverSubscribe::kYes;
  if (EqualsIgnoreCase(mode, "FORCE")) return core::OverSubscribe::kForce;
  if (!has_count && EqualsIgnoreCase(mode, "NO")) return core::OverSubscribe::kNo;
  if (!has_count && EqualsIgnoreCase(mode, "EXCLUSIVE")) return core::OverSubscribe::kExclusive;
  return InvalidValue("OverSubscribe", value, "expected NO, EXCLUSIVE, YES[:n] or FORCE[:n]");
}

// AllowAccounts= / AllowQos=: ALL or "" (no restriction) or a comma list.
Result<std::vector<std::string>> ReadAllowList(std::string_view key, std::string_view value) {
  std::vector<std::string> out;
  if (value.empty() || EqualsIgnoreCase(value, "ALL")) return out;
  for (std::string_view item : Split(value, ',')) {
    if (item.empty()) return InvalidValue(key, value, "empty name");
    out.emplace_back(item);
  }
  return out;
}

Status ReadValue(PartKey key, std::string_view name, std::string_view value, PartValues& v,
                 std::vector<std::string>& ignored) {
  core::PartitionSpec& p = v.spec;
  switch (key) {
    case PartKey::kNodes:
      return ReadNodes(value, v);
    case PartKey::kDefault: {
      Result<bool> b = ParseBool(value);
      if (!b.ok()) return InvalidValue(name, value, b.status().message());
      p.is_default = *b;
      break;
    }
    case PartKey::kMaxTime:
      return AssignTo(p.max_time, Minutes(name, value));
    case PartKey::kDefaultTime:
      return AssignTo(p.default_time, Minutes(name, value));
    case PartKey::kPriorityTier:
      return AssignTo(p.priority_tier, Integer(name, value, 65535));
    case PartKey::kPriorityJobFactor:
      return AssignTo(p.priority_job_factor, Integer(name, value, 65535));
    case PartKey::kPriority:
      return AssignTo(v.priority, Integer(name, value, 65535));
    case PartKey::kState:
      return AssignTo(p.state, ReadState(value));
    case PartKey::kMaxNodes:
      if (EqualsIgnoreCase(value, "UNLIMITED") || EqualsIgnoreCase(value, "INFINITE")) {
        p.max_nodes = 0;
        break;
      }
      return AssignTo(p.max_nodes, Integer(name, value, INT32_MAX));
    case PartKey::kMinNodes:
      return AssignTo(p.min_nodes, Integer(name, value, INT32_MAX));
    case PartKey::kPreemptMode: {
      Result<core::PreemptMode> m = ParsePreemptMode(value, "PartitionName:PreemptMode", ignored);
      if (!m.ok()) return m.status();
      p.preempt_mode = *m;
      break;
    }
    case PartKey::kOverSubscribe:
      return AssignTo(p.oversubscribe, ReadOverSubscribe(value));
    case PartKey::kAllowAccounts:
      return AssignTo(p.allow_accounts, ReadAllowList(name, value));
    case PartKey::kAllowQos:
      return AssignTo(p.allow_qos, ReadAllowList(name, value));
    case PartKey::kDefMemPerCpu:
      return AssignTo(p.def_mem_per_cpu_mib, Memory(name, value));
    case PartKey::kDefMemPerNode:
      v.def_mem_per_node = true;
      return AssignTo(p.def_mem_per_node_mib, Memory(name, value));
    case PartKey::kGraceTime:
      return AssignTo(v.grace_time, Integer(name, value, 365LL * 24 * 3600));
    case PartKey::kIgnored:
      ignored.push_back("PartitionName:" + std::string(name));
  }
  return Status::Ok();
}

Result<PartValues> ReadPartValues(const Pairs& pairs, std::vector<std::string>& ignored) {
  PartValues v;
  for (const auto& [key, value] : pairs) {
    const KeyName<PartKey>* k = FindKey(kPartKeys, key);
    if (k == nullptr) return Status::InvalidArgument("unknown key '" + key + "'");
    BERTH_RETURN_IF_ERROR(ReadValue(k->id, k->name, value, v, ignored));
  }
  if (v.priority) {
    v.spec.priority_tier = *v.priority;
    v.spec.priority_job_factor = *v.priority;
  }
  // As in Slurm, DefMemPerNode wins over DefMemPerCPU (they are mutually exclusive).
  if (v.def_mem_per_node) v.spec.def_mem_per_cpu_mib = 0;
  return v;
}

Status ApplyPartitionLine(const std::string& name, const Pairs& own, ClusterConfig& config) {
  ConfigParseState& state = config.parse_state;
  std::vector<std::string> ignored;
  if (name.empty()) return Status::InvalidArgument("empty partition name");
  if (EqualsIgnoreCase(name, "DEFAULT")) {
    BERTH_RETURN_IF_ERROR(ReadPartValues(own, ignored).status());
    state.partition_defaults.insert(state.partition_defaults.end(), own.begin(), own.end());
    NoteIgnored(config, ignored);
    return Status::Ok();
  }
  Pairs merged = state.partition_defaults;
  merged.insert(merged.end(), own.begin(), own.end());
  BERTH_ASSIGN_OR_RETURN(PartValues v, ReadPartValues(merged, ignored));
  std::vector<core::PartitionSpec>& parts = config.cluster.partitions;
  for (const core::PartitionSpec& p : parts) {
    if (p.name == name) return Status::InvalidArgument("partition '" + name + "' defined twice");
  }
  v.spec.name = name;
  if (v.all_nodes) {
    for (const core::NodeSpec& n : config.cluster.nodes) v.spec.nodes.push_back(n.name);
    state.all_nodes_partitions.push_back(name);
  }
  if (v.spec.is_default) {  // as in Slurm, the last Default=YES wins
    for (core::PartitionSpec& p : parts) p.is_default = false;
  }
  if (v.grace_time && *v.grace_time > 0) config.partition_grace_s[name] = *v.grace_time;
  parts.push_back(std::move(v.spec));
  NoteIgnored(config, ignored);
  return Status::Ok();
}

}  // namespace

Status ApplyPartitionRecord(const Pairs& pairs, ClusterConfig& config) {
  const std::string& name = pairs[0].second;
  Pairs own(pairs.begin() + 1, pairs.end());
  return ApplyPartitionLine(name, own, config).WithContext("PartitionName=" + name);
}

}  // namespace berth::config::internal
