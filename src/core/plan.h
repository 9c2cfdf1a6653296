// A Plan: what one scheduling pass decided, as data. The controller and the simulator apply it
// with ClusterState::Apply; the text form is the golden tests' decision log.
#ifndef BERTH_CORE_PLAN_H_
#define BERTH_CORE_PLAN_H_

#include <cstdint>
#include <string>
#include <vector>

#include "common/time.h"
#include "core/model/job.h"
#include "core/model/partition.h"
#include "core/model/reason.h"

namespace berth::core {

struct PlannedStart {
  JobId job = kNoJob;       // the pending record (the array's master record for a task)
  int32_t array_task = -1;  // the task that starts, for array jobs
  std::string partition;
  Allocation alloc;
  Duration time_limit = 0;              // the limit in force
  std::vector<JobId> after_preempting;  // victims that must stop before this job starts
};

struct PlannedPreemption {
  JobId victim = kNoJob;
  JobId for_job = kNoJob;
  PreemptMode mode = PreemptMode::kRequeue;
};

// A pending job the scheduler ends without running it.
struct PlannedCancel {
  JobId job = kNoJob;
  JobState state = JobState::kCancelled;  // kCancelled (invalid dependency) or kDeadline
  std::string why;
};

struct PendingInfo {
  JobId job = kNoJob;
  PendingReason reason = PendingReason::kNone;
  std::string detail;             // for humans: what rejected how many nodes
  Time expected_start = kNoTime;  // where a reservation or the backfill horizon reaches
  int64_t priority = 0;
};

struct PassStats {
  int32_t pending_considered = 0;
  int32_t started = 0;
  int32_t reservations = 0;
  int32_t preempted = 0;
  int32_t shape_cache_hits = 0;
};

struct Plan {
  Time now = 0;
  std::vector<PlannedStart> starts;
  std::vector<PlannedPreemption> preemptions;
  std::vector<PlannedCancel> cancels;
  // Every pending job that does not start, in queue order.
  std::vector<PendingInfo> pending;
  // The earliest later time at which a pending job becomes eligible by the clock alone (its
  // --begin time, an after:ID+MIN delay, a --deadline that passes): a pass is due then even if
  // nothing else happens. kNoTime when there is none.
  Time wake_at = kNoTime;
  PassStats stats;
};

}  // namespace berth::core

#endif  // BERTH_CORE_PLAN_H_
