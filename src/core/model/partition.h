// Partitions: named sets of nodes with their own limits, priority tier and preemption mode.
#ifndef BERTH_CORE_MODEL_PARTITION_H_
#define BERTH_CORE_MODEL_PARTITION_H_

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "common/time.h"

namespace berth::core {

enum class PartitionState : uint8_t {
  kUp,
  kDown,      // accepts jobs, starts none
  kDrain,     // starts queued jobs, accepts no new ones
  kInactive,  // neither
};
std::string_view PartitionStateName(PartitionState s);  // "UP", "DOWN", ...

enum class PreemptMode : uint8_t { kOff, kCancel, kRequeue };
std::string_view PreemptModeName(PreemptMode m);  // "OFF", "CANCEL", "REQUEUE"

// Slurm's OverSubscribe: whether jobs share nodes. berth honours NO (the default: CPUs are not
// shared but nodes are) and EXCLUSIVE (whole nodes per job); YES/FORCE are recorded.
enum class OverSubscribe : uint8_t { kNo, kYes, kForce, kExclusive };
std::string_view OverSubscribeName(OverSubscribe o);  // "NO", "YES", "FORCE", "EXCLUSIVE"

struct PartitionSpec {
  std::string name;
  std::vector<std::string> nodes;  // node names (already expanded)
  bool is_default = false;
  Duration default_time = kNoTime;  // kNoTime: use max_time
  Duration max_time = kInfinite;
  int32_t priority_tier = 1;        // higher tiers are scheduled first and may preempt lower
  int32_t priority_job_factor = 1;  // feeds the partition priority factor
  PartitionState state = PartitionState::kUp;
  int32_t max_nodes = 0;                         // per job; 0 = unlimited
  int32_t min_nodes = 0;                         // per job
  PreemptMode preempt_mode = PreemptMode::kOff;  // how jobs in this partition are preempted
  OverSubscribe oversubscribe = OverSubscribe::kNo;
  std::vector<std::string> allow_accounts;  // empty = all
  std::vector<std::string> allow_qos;       // empty = all
  int64_t def_mem_per_cpu_mib = 0;          // 0 = the cluster default
  int64_t def_mem_per_node_mib = 0;

  friend bool operator==(const PartitionSpec&, const PartitionSpec&) = default;
};

}  // namespace berth::core

#endif  // BERTH_CORE_MODEL_PARTITION_H_
