#include "core/model/node.h"

namespace berth::core {

std::string_view NodeStateName(NodeState s) {
  switch (s) {
    case NodeState::kIdle:
      return "idle";
    case NodeState::kMixed:
      return "mix";
    case NodeState::kAllocated:
      return "alloc";
    case NodeState::kDraining:
      return "drng";
    case NodeState::kDrained:
      return "drain";
    case NodeState::kDown:
      return "down";
    case NodeState::kPoweredDown:
      return "idle~";
    case NodeState::kPoweringUp:
      return "idle#";
    case NodeState::kPoweringDown:
      return "idle%";
  }
  return "unk";
}

std::string_view NodeStateLongName(NodeState s) {
  switch (s) {
    case NodeState::kIdle:
      return "IDLE";
    case NodeState::kMixed:
      return "MIXED";
    case NodeState::kAllocated:
      return "ALLOCATED";
    case NodeState::kDraining:
      return "DRAINING";
    case NodeState::kDrained:
      return "DRAINED";
    case NodeState::kDown:
      return "DOWN";
    case NodeState::kPoweredDown:
      return "IDLE+POWERED_DOWN";
    case NodeState::kPoweringUp:
      return "IDLE+POWERING_UP";
    case NodeState::kPoweringDown:
      return "IDLE+POWERING_DOWN";
  }
  return "UNKNOWN";
}

NodeState DeriveNodeState(NodeHealth health, bool drain, int32_t alloc_cpus, int32_t total_cpus,
                          int alloc_gpus, int total_gpus) {
  switch (health) {
    case NodeHealth::kDown:
      return NodeState::kDown;
    case NodeHealth::kPoweredDown:
      return NodeState::kPoweredDown;
    case NodeHealth::kPoweringUp:
      return NodeState::kPoweringUp;
    case NodeHealth::kPoweringDown:
      return NodeState::kPoweringDown;
    case NodeHealth::kUp:
      break;
  }
  bool busy = alloc_cpus > 0 || alloc_gpus > 0;
  if (drain) return busy ? NodeState::kDraining : NodeState::kDrained;
  if (!busy) return NodeState::kIdle;
  bool full = alloc_cpus >= total_cpus && alloc_gpus >= total_gpus;
  return full ? NodeState::kAllocated : NodeState::kMixed;
}

}  // namespace berth::core
