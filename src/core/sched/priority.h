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

// One node's place among its siblings (an account's sub-accounts and user associations), as
// `sshare` shows it. Fair Tree: norm_shares = shares / siblings' shares, effective_usage = usage /
// siblings' usage, level_fs = norm_shares / effective_usage (+inf with no usage, 0 with no
// shares). Classic: norm_shares = the product of those fractions up to the root, effective_usage
// = the usage propagated from the parent (Slurm's usage_efctv); level_fs is not computed (0).
struct ShareLevel {
  double norm_shares = 0;
  double effective_usage = 0;
  double level_fs = 0;
};

// Fair-share factor (0..1) per association, computed once per pass, with how each account and
// association stands among its siblings (the root account's level stays zero).
struct FairshareTable {
  std::vector<double> factor;             // by association id
  std::vector<double> usage;              // effective decayed usage by association, as of the pass
  std::vector<double> account_usage;      // by account id (subtree)
  std::vector<ShareLevel> assoc_level;    // by association id
  std::vector<ShareLevel> account_level;  // by account id
};

// The classic algorithm's factor, 2^(-effective_usage / norm_shares); 0 without shares.
double ClassicFairshareFactor(double effective_usage, double norm_shares);

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
