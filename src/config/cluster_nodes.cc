// NodeName= records, as Slurm's read_config.c (_parse_nodename) reads them.
#include <algorithm>
#include <map>
#include <optional>
#include <set>

#include "common/hostlist.h"
#include "common/strings.h"
#include "common/units.h"
#include "config/cluster_config_internal.h"
#include "config/gres_text.h"
#include "core/model/node.h"

namespace berth::config::internal {
namespace {

// Slurm keeps CPU and socket counts in 16 bits.
constexpr int64_t kMaxCount16 = 65535;

enum class NodeKey {
  kCpus,
  kSockets,
  kCores,
  kThreads,
  kBoards,
  kSocketsPerBoard,
  kMemory,
  kGres,
  kFeatures,
  kWeight,
  kState,
  kTopology,
  kHostname,
  kAddr,
  kGpuUuids,
  kIgnored,
};

constexpr KeyName<NodeKey> kNodeKeys[] = {
    {"CPUs", NodeKey::kCpus},
    {"Procs", NodeKey::kCpus},
    {"Sockets", NodeKey::kSockets},
    {"CoresPerSocket", NodeKey::kCores},
    {"ThreadsPerCore", NodeKey::kThreads},
    {"Boards", NodeKey::kBoards},
    {"SocketsPerBoard", NodeKey::kSocketsPerBoard},
    {"RealMemory", NodeKey::kMemory},
    {"Gres", NodeKey::kGres},
    {"Features", NodeKey::kFeatures},
    {"Feature", NodeKey::kFeatures},
    {"AvailableFeatures", NodeKey::kFeatures},
    {"Weight", NodeKey::kWeight},
    {"State", NodeKey::kState},
    {"Topology", NodeKey::kTopology},  // berth's own: the node's path, outermost level first
    {"GpuUUIDs", NodeKey::kGpuUuids},  // berth's own: each GPU device's UUID ("MIG-..." too)
    {"ActiveFeatures", NodeKey::kIgnored},
    {"BcastAddr", NodeKey::kIgnored},
    {"Comment", NodeKey::kIgnored},
    {"CoreSpecCount", NodeKey::kIgnored},
    {"CpuBind", NodeKey::kIgnored},
    {"CPUSpecList", NodeKey::kIgnored},
    {"Extra", NodeKey::kIgnored},
    {"MemSpecLimit", NodeKey::kIgnored},
    {"NodeAddr", NodeKey::kAddr},
    {"NodeHostname", NodeKey::kHostname},
    {"Parameters", NodeKey::kIgnored},
    {"Port", NodeKey::kIgnored},
    {"Reason", NodeKey::kIgnored},
    {"RestrictedCoresPerGPU", NodeKey::kIgnored},
    {"TmpDisk", NodeKey::kIgnored},
    {"TRESWeights", NodeKey::kIgnored},
};

// The values of one NodeName line with its DEFAULT lines merged under it, each checked alone.
struct NodeValues {
  std::optional<int64_t> cpus;
  std::optional<int64_t> sockets;
  std::optional<int64_t> cores;
  std::optional<int64_t> threads;
  std::optional<int64_t> boards;
  std::optional<int64_t> sockets_per_board;
  int64_t mem_mib = 1;  // Slurm's default RealMemory
  std::vector<std::string> gpus;
  std::vector<std::string> gpu_uuids;
  std::vector<core::NamedCount> gres;
  std::vector<std::string> features;
  int32_t weight = 1;
  bool cloud = false;
  std::vector<std::string> topology;
  std::string hostname;  // NodeHostname (a hostlist expression), as given
  std::string addr;      // NodeAddr
};

Result<int64_t> Count16(std::string_view key, std::string_view value) {
  Result<int64_t> n = ParseInteger(value, 1, kMaxCount16);
  if (!n.ok()) return InvalidValue(key, value, n.status().message());
  return *n;
}

Status ReadGres(std::string_view value, NodeValues& v) {
  Result<std::vector<GresEntry>> list = ParseGresList(value, GresSyntax::kNodeConfig);
  if (!list.ok()) return InvalidValue("Gres", value, list.status().message());
  v.gpus.clear();
  v.gres.clear();
  for (const GresEntry& g : *list) {
    if (g.name == "gpu") {
      if (g.count > core::kMaxGpusPerNode - static_cast<int64_t>(v.gpus.size())) {
        return InvalidValue("Gres", value, "more than 64 GPUs on one node");
      }
      v.gpus.insert(v.gpus.end(), static_cast<size_t>(g.count), g.type);
      continue;
    }
    // Types of other GRES are not tracked: a job asks for "shard:2", not for a type of shard.
    auto same = std::find_if(v.gres.begin(), v.gres.end(),
                             [&](const core::NamedCount& c) { return c.name == g.name; });
    if (same == v.gres.end()) {
      v.gres.push_back({g.name, g.count});
    } else {
      same->count += g.count;
    }
  }
  return Status::Ok();
}

Result<std::vector<std::string>> NonEmptyList(std::string_view key, std::string_view value,
                                              char sep) {
  std::vector<std::string> out;
  if (value.empty()) return out;
  for (std::string_view item : Split(value, sep)) {
    if (item.empty()) return InvalidValue(key, value, "empty item");
    out.emplace_back(item);
  }
  return out;
}

// Slurm's node states that a configuration may give. CLOUD means "power up on demand"; the
// others would only set the state berth starts the node in, which its agent decides.
Status ReadState(std::string_view value, NodeValues& v, std::vector<std::string>& ignored) {
  std::string up = ToLower(value);
  if (up == "cloud") {
    v.cloud = true;
  } else if (up == "unknown" || up == "idle") {
    v.cloud = false;
  } else if (up == "down" || up == "drain" || up == "fail" || up == "failing" || up == "future") {
    ignored.push_back("NodeName:State=" + std::string(value));
  } else {
    return InvalidValue("State", value,
                        "expected CLOUD, DOWN, DRAIN, FAIL, FAILING, FUTURE, IDLE or UNKNOWN");
  }
  return Status::Ok();
}

Status ReadValue(NodeKey key, std::string_view name, std::string_view value, NodeValues& v,
                 std::vector<std::string>& ignored) {
  switch (key) {
    case NodeKey::kCpus:
      return AssignTo(v.cpus, Count16(name, value));
    case NodeKey::kSockets:
      return AssignTo(v.sockets, Count16(name, value));
    case NodeKey::kCores:
      return AssignTo(v.cores, Count16(name, value));
    case NodeKey::kThreads:
      return AssignTo(v.threads, Count16(name, value));
    case NodeKey::kBoards:
      return AssignTo(v.boards, Count16(name, value));
    case NodeKey::kSocketsPerBoard:
      return AssignTo(v.sockets_per_board, Count16(name, value));
    case NodeKey::kMemory: {
      Result<int64_t> mib = ParseMemoryMiB(value);
      if (!mib.ok()) return InvalidValue(name, value, Reason(mib.status()));
      v.mem_mib = *mib;
      break;
    }
    case NodeKey::kGres:
      return ReadGres(value, v);
    case NodeKey::kFeatures:
      return AssignTo(v.features, NonEmptyList(name, value, ','));
    case NodeKey::kWeight: {
      if (EqualsIgnoreCase(value, "INFINITE") || EqualsIgnoreCase(value, "UNLIMITED")) {
        v.weight = INT32_MAX;
        break;
      }
      Result<int64_t> w = ParseInteger(value, 0, INT32_MAX);
      if (!w.ok()) return InvalidValue(name, value, w.status().message());
      v.weight = static_cast<int32_t>(*w);
      break;
    }
    case NodeKey::kState:
      return ReadState(value, v, ignored);
    case NodeKey::kTopology:
      return AssignTo(v.topology, NonEmptyList(name, value, '/'));
    case NodeKey::kGpuUuids:
      return AssignTo(v.gpu_uuids, NonEmptyList(name, value, ','));
    case NodeKey::kHostname:
      v.hostname = value;
      break;
    case NodeKey::kAddr:
      v.addr = value;
      break;
    case NodeKey::kIgnored:
      ignored.push_back("NodeName:" + std::string(name));
      break;
  }
  return Status::Ok();
}

Result<NodeValues> ReadNodeValues(const Pairs& pairs, std::vector<std::string>& ignored) {
  NodeValues v;
  for (const auto& [key, value] : pairs) {
    const KeyName<NodeKey>* k = FindKey(kNodeKeys, key);
    if (k == nullptr) return Status::InvalidArgument("unknown key '" + key + "'");
    BERTH_RETURN_IF_ERROR(ReadValue(k->id, k->name, value, v, ignored));
  }
  return v;
}

// Slurm's inference of the missing counts: Sockets from SocketsPerBoard, else from CPUs, else
// one per board; CPUs = Sockets * CoresPerSocket * ThreadsPerCore when not given. A given CPUs
// must equal Sockets, Sockets*CoresPerSocket (CPUs count cores) or the full product; Slurm resets
// any other value with an error message, berth refuses it.
Result<core::NodeSpec> BuildNode(const NodeValues& v) {
  int64_t cores = v.cores.value_or(1);
  int64_t threads = v.threads.value_or(1);
  int64_t boards = v.boards.value_or(1);
  if (v.sockets && v.sockets_per_board) {
    return Status::InvalidArgument("give Sockets or SocketsPerBoard, not both");
  }
  int64_t sockets = boards;
  if (v.sockets) {
    sockets = *v.sockets;
  } else if (v.sockets_per_board) {
    sockets = boards * *v.sockets_per_board;
  } else if (v.cpus && *v.cpus % (cores * threads) == 0 && *v.cpus / (cores * threads) > 0) {
    sockets = *v.cpus / (cores * threads);
  }
  int64_t all = sockets * cores * threads;
  int64_t cpus = v.cpus.value_or(all);
  if (cpus > kMaxCount16) {
    return Status::InvalidArgument("more than 65535 CPUs (" + std::to_string(cpus) + ")");
  }
  if (cpus != sockets && cpus != sockets * cores && cpus != all) {
    return InvalidValue("CPUs", std::to_string(cpus),
                        "matches none of Sockets (" + std::to_string(sockets) +
                            "), Sockets*CoresPerSocket (" + std::to_string(sockets * cores) +
                            ") and Sockets*CoresPerSocket*ThreadsPerCore (" + std::to_string(all) +
                            ")");
  }
  core::NodeSpec n;
  n.cpus = static_cast<int32_t>(cpus);
  n.sockets = static_cast<int32_t>(sockets);
  n.cores_per_socket = static_cast<int32_t>(cores);
  n.threads_per_core = static_cast<int32_t>(threads);
  n.mem_mib = v.mem_mib;
  n.gpus = v.gpus;
  if (!v.gpu_uuids.empty() && v.gpu_uuids.size() != v.gpus.size()) {
    return InvalidValue(
        "GpuUUIDs", std::to_string(v.gpu_uuids.size()) + " UUIDs",
        "needs one UUID per GPU device of Gres (" + std::to_string(v.gpus.size()) + ")");
  }
  n.gpu_uuids = v.gpu_uuids;
  n.gres = v.gres;
  n.features = v.features;
  n.topology = v.topology;
  n.weight = v.weight;
  n.cloud = v.cloud;
  return n;
}

Result<std::vector<std::string>> NodeNames(std::string_view expr,
                                           const std::vector<core::NodeSpec>& existing) {
  Result<std::vector<std::string>> names = hostlist::Expand(expr);
  if (!names.ok()) return InvalidValue("NodeName", expr, Reason(names.status()));
  if (names->empty()) return InvalidValue("NodeName", expr, "no node names");
  std::set<std::string_view> seen;
  for (const core::NodeSpec& n : existing) seen.insert(n.name);
  for (const std::string& name : *names) {
    if (!seen.insert(name).second) {
      return Status::InvalidArgument("node '" + name + "' defined twice");
    }
  }
  return names;
}

// NodeHostname or NodeAddr of the nodes `names`: one value for each node, in order, or one for
// all of them (as several slurmd on one host share their address).
Status MapNodeValues(std::string_view key, const std::string& expr,
                     const std::vector<std::string>& names,
                     std::map<std::string, std::string>& into) {
  if (expr.empty()) return Status::Ok();
  Result<std::vector<std::string>> values = hostlist::Expand(expr);
  if (!values.ok()) return InvalidValue(key, expr, Reason(values.status()));
  if (values->size() != 1 && values->size() != names.size()) {
    return InvalidValue(key, expr,
                        std::to_string(values->size()) + " values for " +
                            std::to_string(names.size()) + " node names (one for each, or one)");
  }
  for (size_t i = 0; i < names.size(); ++i) {
    into[names[i]] = (*values)[values->size() == 1 ? 0 : i];
  }
  return Status::Ok();
}

Status ApplyNodeLine(const std::string& expr, const Pairs& own, ClusterConfig& config) {
  ConfigParseState& state = config.parse_state;
  std::vector<std::string> ignored;
  if (EqualsIgnoreCase(expr, "DEFAULT")) {
    BERTH_RETURN_IF_ERROR(ReadNodeValues(own, ignored).status());
    state.node_defaults.insert(state.node_defaults.end(), own.begin(), own.end());
    NoteIgnored(config, ignored);
    return Status::Ok();
  }
  if (EqualsIgnoreCase(expr, "ALL")) return Status::InvalidArgument("ALL is a reserved word");
  Pairs merged = state.node_defaults;
  merged.insert(merged.end(), own.begin(), own.end());
  BERTH_ASSIGN_OR_RETURN(NodeValues values, ReadNodeValues(merged, ignored));
  BERTH_ASSIGN_OR_RETURN(core::NodeSpec node, BuildNode(values));
  BERTH_ASSIGN_OR_RETURN(std::vector<std::string> names, NodeNames(expr, config.cluster.nodes));
  std::map<std::string, std::string> hostnames, addrs;
  BERTH_RETURN_IF_ERROR(MapNodeValues("NodeHostname", values.hostname, names, hostnames));
  BERTH_RETURN_IF_ERROR(MapNodeValues("NodeAddr", values.addr, names, addrs));
  config.node_hostnames.merge(hostnames);
  config.node_addrs.merge(addrs);
  for (const std::string& name : names) {
    node.name = name;
    config.cluster.nodes.push_back(node);
  }
  for (core::PartitionSpec& p : config.cluster.partitions) {
    for (const std::string& all : state.all_nodes_partitions) {
      if (p.name == all) p.nodes.insert(p.nodes.end(), names.begin(), names.end());
    }
  }
  NoteIgnored(config, ignored);
  return Status::Ok();
}

}  // namespace

Status ApplyNodeRecord(const Pairs& pairs, ClusterConfig& config) {
  const std::string& expr = pairs[0].second;
  Pairs own(pairs.begin() + 1, pairs.end());
  return ApplyNodeLine(expr, own, config).WithContext("NodeName=" + expr);
}

}  // namespace berth::config::internal
