// ResvView: the advance reservations (ClusterState::reservations) as a scheduling pass applies
// them to one job: which nodes the job may not use during a window, and when that changes.
//
// A job that names no reservation may not use a reserved node during any window that overlaps
// one of the reservation's occurrences. A job that names reservation R may use only R's nodes,
// and only start while R is active; other reservations bind it as they bind everyone.
#ifndef BERTH_CORE_SCHED_RESV_VIEW_H_
#define BERTH_CORE_SCHED_RESV_VIEW_H_

#include <cstdint>
#include <utility>
#include <vector>

#include "common/bitset.h"
#include "core/state/cluster_state.h"

namespace berth::core {

class ResvView {
 public:
  explicit ResvView(const ClusterState& cs);

  // No reservation at all: nothing to check.
  bool empty() const { return resv_.empty(); }

  // The reservation `e` names (null when it names none, or one that no longer exists).
  const ResvInfo* Own(const JobEntry& e) const;

  // Whether `e` may start at t0 at all (its own reservation, if any, is active then).
  bool MayStartAt(const JobEntry& e, Time t0) const;
  // Adds to `out` the nodes `e` may not use during [t0, t1); sets *maint when a MAINT
  // reservation blocks one of them. REQUIRES: out->size() == number of nodes.
  void Blocked(const JobEntry& e, Time t0, Time t1, Bitset* out, bool* maint) const;
  // The same for one node.
  bool NodeBlocked(const JobEntry& e, uint32_t n, Time t0, Time t1) const;
  // Times after `now` at which Blocked(e, t, t + d) can change on a node of `cand`, with that
  // node (unsorted).
  void Events(const JobEntry& e, Duration d, Time now, const Bitset& cand,
              std::vector<std::pair<Time, uint32_t>>* out) const;

 private:
  std::vector<const ResvInfo*> resv_;
};

// Whether an occurrence of `r` overlaps [t0, t1).
bool ResvOverlaps(const ResvSpec& r, Time t0, Time t1);
// Whether `t` lies in an occurrence of `r`.
bool ResvActiveAt(const ResvSpec& r, Time t);

}  // namespace berth::core

#endif  // BERTH_CORE_SCHED_RESV_VIEW_H_
