#include "core/model/partition.h"

namespace berth::core {

std::string_view PartitionStateName(PartitionState s) {
  switch (s) {
    case PartitionState::kUp:
      return "UP";
    case PartitionState::kDown:
      return "DOWN";
    case PartitionState::kDrain:
      return "DRAIN";
    case PartitionState::kInactive:
      return "INACTIVE";
  }
  return "UNKNOWN";
}

std::string_view PreemptModeName(PreemptMode m) {
  switch (m) {
    case PreemptMode::kOff:
      return "OFF";
    case PreemptMode::kCancel:
      return "CANCEL";
    case PreemptMode::kRequeue:
      return "REQUEUE";
  }
  return "UNKNOWN";
}

std::string_view OverSubscribeName(OverSubscribe o) {
  switch (o) {
    case OverSubscribe::kNo:
      return "NO";
    case OverSubscribe::kYes:
      return "YES";
    case OverSubscribe::kForce:
      return "FORCE";
    case OverSubscribe::kExclusive:
      return "EXCLUSIVE";
  }
  return "UNKNOWN";
}

}  // namespace berth::core
