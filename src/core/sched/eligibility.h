// Eligibility: the checks before placement, each with the Slurm reason it yields when it fails
// (holds, begin time, dependencies, partition state and limits, QoS/association limits, array
// throttles, licences).
#ifndef BERTH_CORE_SCHED_ELIGIBILITY_H_
#define BERTH_CORE_SCHED_ELIGIBILITY_H_

#include <string>

#include "core/model/reason.h"
#include "core/sched/pass_state.h"

namespace berth::core {

enum class DepStatus { kSatisfied, kWaiting, kNever };

// Evaluates the job's dependency as of the pass (array task `task` for aftercorr; -1 = any).
DepStatus EvaluateDependency(const PassState& pass, const JobEntry& e, int32_t task);

struct Verdict {
  PendingReason reason = PendingReason::kNone;  // kNone: eligible
  std::string detail;
  bool ok() const { return reason == PendingReason::kNone; }
};

// Job-level checks that do not depend on the partition (hold, begin, dependency, array
// throttle). `task` is the array task about to start, or -1.
Verdict CheckJob(const PassState& pass, const JobEntry& e, int32_t task);

// The time limit the job runs with in partition `p` (its own, else the partition's default,
// else the partition's maximum).
Duration EffectiveTimeLimit(const JobEntry& e, const PartitionInfo& p);

// Partition-level checks: state, time and node limits, allowed accounts/QoS, QoS MaxWall.
Verdict CheckPartition(const PassState& pass, const JobEntry& e, size_t partition_slot);

// Running limits of the QoS and the association tree, and licences, for starting the job with
// the minimum totals of its shape in `partition_slot`.
Verdict CheckLimits(const PassState& pass, const JobEntry& e, size_t partition_slot);

}  // namespace berth::core

#endif  // BERTH_CORE_SCHED_ELIGIBILITY_H_
