// Nodes: what a machine offers (NodeSpec), and the states a node can be in.
#ifndef BERTH_CORE_MODEL_NODE_H_
#define BERTH_CORE_MODEL_NODE_H_

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "core/model/resources.h"

namespace berth::core {

// The most GPUs one node may have (each node's GPUs are tracked in one 64-bit mask).
inline constexpr int kMaxGpusPerNode = 64;

struct NodeSpec {
  std::string name;
  int32_t cpus = 1;
  int32_t sockets = 1;
  int32_t cores_per_socket = 1;
  int32_t threads_per_core = 1;
  int64_t mem_mib = 0;
  // One entry per GPU device, in device-index order: its type ("h100"), or "" when untyped.
  std::vector<std::string> gpus;
  // Parallel to gpus where known: the device's UUID ("GPU-...", or "MIG-..." for a MIG instance,
  // which jobs then see in CUDA_VISIBLE_DEVICES instead of its index); may be shorter or empty.
  std::vector<std::string> gpu_uuids;
  std::vector<NamedCount> gres;       // other countable per-node resources ("shard", 16)
  std::vector<std::string> features;  // "ib", "a100", "rack3"
  // Topology path, outermost level first: {"block1", "switch3"}. Empty = one flat group.
  std::vector<std::string> topology;
  int32_t weight = 1;  // lower weights are preferred, as in Slurm
  bool cloud = false;  // may be powered up on demand (State=CLOUD)

  friend bool operator==(const NodeSpec&, const NodeSpec&) = default;
};

// The administrative / health part of a node's state; allocation (idle/mixed/allocated) is
// derived from what runs on it.
enum class NodeHealth : uint8_t {
  kUp,
  kDown,          // not responding, or set down by an operator
  kPoweredDown,   // power-saved or cloud node not yet started
  kPoweringUp,    // resume in progress; jobs may be assigned and wait for it
  kPoweringDown,  // suspend in progress: not usable until it has powered down (SuspendTimeout)
};

// What sinfo shows (Slurm's names).
enum class NodeState : uint8_t {
  kIdle,
  kMixed,
  kAllocated,
  kDraining,  // drain requested, jobs still running
  kDrained,   // drain requested, nothing running
  kDown,
  kPoweredDown,
  kPoweringUp,
  kPoweringDown,
};

std::string_view NodeStateName(NodeState s);  // "idle", "mixed", "alloc"...
// Upper-case long form used by scontrol ("IDLE", "MIXED", "ALLOCATED", "DRAINING", ...).
std::string_view NodeStateLongName(NodeState s);

// Derives the displayed state.
NodeState DeriveNodeState(NodeHealth health, bool drain, int32_t alloc_cpus, int32_t total_cpus,
                          int alloc_gpus, int total_gpus);

}  // namespace berth::core

#endif  // BERTH_CORE_MODEL_NODE_H_
