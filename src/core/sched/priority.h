// Multifactor priority (Slurm's priority/multifactor): each factor normalised to 0..1, times its
// weight, summed, minus nice. Fair-share by Fair Tree (default) or the classic formula.
#ifndef BERTH_CORE_SCHED_PRIORITY_H_
#define BERTH_CORE_SCHED_PRIORITY_H_

#include <cstdint>
#include <string>
#include <vector>

#include "common/time.h"
#include "core/config.h"
#include "core/state/cluster_state.h"

namespace berth::core {

// Fair-share factor (0..1) per association, computed once per pass.
struct FairshareTable {
  std::vector<double> factor;         // by association id
  std::vector<double> usage;          // effective decayed usage by association, as of the pass
  std::vector<double> account_usage;  // by account id (subtree)
};

// Computes every association's fair-share factor as of `now`, counting the decayed usage of
// finished work plus the part of running jobs already run.
FairshareTable ComputeFairshare(const ClusterState& cs, Time now, const FairshareConfig& cfg);

// What every job's priority in one pass shares: fair-share factors and the normalisers.
struct PriorityContext {
  FairshareTable fairshare;
  int32_t max_partition_factor = 1;
  int32_t max_qos_priority = 0;
};

// Builds the context; the fair-share table only when its weight is not zero.
PriorityContext MakePriorityContext(const ClusterState& cs, Time now, const SchedulerConfig& cfg);

// What `sprio` shows: each factor's weighted contribution and the total.
struct PriorityBreakdown {
  JobId job = kNoJob;
  int64_t total = 0;
  double age = 0;
  double fairshare = 0;
  double job_size = 0;
  double partition = 0;
  double qos = 0;
  double tres = 0;
  int32_t nice = 0;
  bool admin_set = false;  // --priority fixed the value
};

PriorityBreakdown ComputePriority(const ClusterState& cs, const JobEntry& e, Time now,
                                  const SchedulerConfig& cfg, const PriorityContext& ctx);

}  // namespace berth::core

#endif  // BERTH_CORE_SCHED_PRIORITY_H_
