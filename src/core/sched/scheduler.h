// The scheduler: one pass over the queue, as a pure function of the cluster state, the time and
// the configuration, returning a Plan. The pass, in the order of the Kubernetes scheduler
// framework and Nomad's scheduler:
//   1. queue order (multifactor priority, or submit order);
//   2. per job: eligibility (hold, begin, dependency, partition, limits) -> a reason if not;
//   3. candidate nodes (partition, state, features, exclusions, GPU type, size);
//   4. placement on what is free now, without touching any reservation (pack or spread,
//      topology-aware, all-or-nothing);
//   5. otherwise: preemption if allowed, then a reservation at the earliest start time while the
//      reservation depth and backfill horizon allow (EASY = 1, conservative = all), and a reason
//      (Resources for the first blocked job of a partition, Priority behind it) with a detail.
//
// Thread safety: a Scheduler may be used by one thread at a time (it caches candidate node sets
// between passes). Same state, time and configuration give a byte-identical Plan.
#ifndef BERTH_CORE_SCHED_SCHEDULER_H_
#define BERTH_CORE_SCHED_SCHEDULER_H_

#include <vector>

#include "core/config.h"
#include "core/plan.h"
#include "core/sched/candidates.h"
#include "core/sched/pass_state.h"
#include "core/sched/priority.h"
#include "core/state/cluster_state.h"

namespace berth::core {

class Scheduler {
 public:
  explicit Scheduler(SchedulerConfig cfg) : cfg_(std::move(cfg)) {}

  const SchedulerConfig& config() const { return cfg_; }

  // One scheduling pass.
  Plan Schedule(const ClusterState& cs, Time now);

  // Every pending job's priority and its factors, in queue order (what `sprio` shows).
  std::vector<PriorityBreakdown> Priorities(const ClusterState& cs, Time now) const;

  // Whether a job blocked by resources gets its detail in PendingInfo (the per-node counts of
  // why it does not fit, and the nodes reservations hold). On by default. Off, that detail is
  // left empty and nothing else changes: the same starts, reasons, expected starts and other
  // details. It costs a walk over the partition's nodes per blocked shape in each pass, which a
  // trace replay that never shows it need not pay.
  void set_explain_details(bool on) { explain_details_ = on; }

  // Whether Plan::pending lists every job left pending with its reason. On by default. Off, a
  // pass stops walking the queue once no later job can start or be cancelled: under a strict
  // order (fcfs), after the first job that stays blocked. The starts, preemptions, cancels and
  // wake-up time are the same either way; only the jobs after that point are missing from
  // Plan::pending (and from stats.pending_considered). A trace replay, which reads no reasons,
  // turns it off: with a long queue the walk over it was most of the replay's time.
  void set_pending_reasons(bool on) { pending_reasons_ = on; }

  // Whether a job is tried on the nodes only when the CPUs free throughout its window, summed
  // over the usable nodes (PassState::FreeCpusBound), are enough. On by default; off, only the
  // CPUs free now are: the same decisions (a bound is never below what a placement finds), at
  // the cost of the walks. For the property test that checks that, with the count of attempts
  // the window bound spared.
  void set_window_bound(bool on) { window_bound_ = on; }
  int64_t window_bound_skips() const { return window_bound_skips_; }

  // Whether backfill's placement at the start it found reads what its sweep computed for each
  // node (FindEarliestStart). On by default; off, it asks the pass again for every node: the
  // same decisions. For the property test that checks that.
  void set_backfill_reuse(bool on) { backfill_reuse_ = on; }

 private:
  SchedulerConfig cfg_;
  CandidateCache candidates_;
  PassScratch scratch_;  // the passes' per-node memory, kept between them
  bool explain_details_ = true;
  bool pending_reasons_ = true;
  bool window_bound_ = true;
  int64_t window_bound_skips_ = 0;
  bool backfill_reuse_ = true;
};

// The same as a plain function (no cache kept between calls).
Plan Schedule(const ClusterState& view, Time now, const SchedulerConfig& cfg);

}  // namespace berth::core

#endif  // BERTH_CORE_SCHED_SCHEDULER_H_
