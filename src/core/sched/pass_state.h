// PassState: what one scheduling pass has decided so far, layered over the ClusterState it
// reads (which it never changes): resources taken by jobs it starts, given back by victims it
// preempts, reservations it makes, and the running counters behind limits.
//
// It also answers "what is free on node n at time t" from running jobs' estimated ends and its
// reservations, which is what backfill needs.
#ifndef BERTH_CORE_SCHED_PASS_STATE_H_
#define BERTH_CORE_SCHED_PASS_STATE_H_

#include <cstdint>
#include <map>
#include <unordered_map>
#include <unordered_set>
#include <utility>
#include <vector>

#include "common/bitset.h"
#include "core/state/cluster_state.h"
#include "core/state/fit.h"

namespace berth::core {

struct Reservation {
  JobId job = kNoJob;
  Time start = 0;
  Time end = 0;
  Allocation alloc;
  int32_t user = -1;            // interned user id (node sharing rules)
  bool exclusive_user = false;  // --exclusive=user
};

// A job this pass started: it holds resources from now to `end` (its estimated end).
struct PassStart {
  JobId job = kNoJob;
  Time end = 0;
  Allocation alloc;
  int32_t user = -1;
  bool exclusive_user = false;
};

// Per-node memory for PassState, reusable from one pass to the next (a Scheduler keeps one):
// a pass over a large cluster then allocates nothing per node it touches. Each slot is valid for
// one pass only, told by the pass's epoch.
class PassScratch {
 public:
  PassScratch() = default;
  PassScratch(const PassScratch&) {}  // a copy starts empty
  PassScratch& operator=(const PassScratch&) { return *this; }

  // A start or reservation on the node: its index, and where its allocation has the node (the
  // first entry for it), so that FreeAt finds it without a scan of a many-node allocation.
  struct OnNode {
    int32_t index;
    int32_t pos;
  };

 private:
  friend class PassState;
  // What a reserved node has free at now and at each of its reservations' starts (parallel to
  // its reservation list): FreeDuring from now for any window end, without recomputing FreeAt
  // for each job that looks at the node.
  struct Profile {
    NodeFree at_now;
    std::vector<NodeFree> at_reservation_start;
  };
  struct Slot {
    // The epoch in which each part was last written; a part is valid in its pass's epoch only.
    // (The stamps and the two lists first: with the free part they make the slot's first
    // cache lines, which a start and FreeAt read for every node they touch.)
    uint32_t changed = 0, profile = 0, starts = 0, reservations = 0;
    std::vector<OnNode> start_indices;        // into PassState::starts_
    std::vector<OnNode> reservation_indices;  // into PassState::reservations_
    NodeFree free;                            // FreeNow, once the pass changed the node
    Profile profile_data;                     // ProfileOf
  };
  // Starts a pass over `nodes` nodes: its epoch.
  uint32_t Begin(size_t nodes);

  std::vector<Slot> slots_;
  std::vector<int32_t> counts_;  // PassState::NodeCounts
  std::vector<NodeFree> frees_;  // PassState::NodeFrees
  uint32_t epoch_ = 0;
  bool in_use_ = false;
};

class PassState {
 public:
  // With `scratch` (not used by another PassState at the same time), the per-node memory comes
  // from it; without, the pass has its own.
  PassState(const ClusterState& cs, Time now, PassScratch* scratch = nullptr);
  ~PassState();
  PassState(const PassState&) = delete;
  PassState& operator=(const PassState&) = delete;

  const ClusterState& cs() const { return cs_; }
  Time now() const { return now_; }

  // Free resources of node n now, after this pass's starts and preemptions.
  NodeFree FreeNow(uint32_t n) const;
  // Usable nodes with some free CPU / with exactly k free GPUs, after this pass's changes.
  const Bitset& cpu_free() const { return cpu_free_; }
  const std::vector<Bitset>& gpu_buckets() const { return gpu_buckets_; }
  // At least the CPUs free on usable nodes at any time of [now, now + d), d >= 1, as FreeDuring
  // sees them, summed over the nodes: a placement that needs more cannot succeed.
  int64_t free_cpus_bound() const { return free_cpus_bound_; }
  // The same bound for a window [now, now + d), d >= 1, less what the reservations that begin
  // inside it (or are active now) take from the nodes they hold: at least the CPUs FreeDuring
  // gives usable nodes for that window, summed. Behind a blocked head most jobs of a long queue
  // fit now but not past the head's reserved start; this tells them apart without a placement.
  int64_t FreeCpusBound(Duration d) const;

  // Records a start: takes its resources and counts it against limits.
  void Start(const JobEntry& e, JobId job_id, Time end, const Allocation& alloc);
  // Records a start that first preempts `victims`. The job's allocation comes partly from what
  // the victims hold (it gets that as they stop) and partly from what is free now; what the
  // victims hold beyond that is free only once they have stopped: from now + 1 on, never to a
  // job that would start now in this pass.
  void StartAfterPreempting(const JobEntry& e, JobId job_id, Time end, const Allocation& alloc,
                            const std::vector<const JobEntry*>& victims);
  bool IsPreempted(JobId id) const { return preempted_.count(id) > 0; }

  // Reservations (backfill).
  void Reserve(Reservation r);
  const std::vector<Reservation>& reservations() const { return reservations_; }
  bool HasReservations(uint32_t n) const { return !reservations_.empty() && reserved_.Test(n); }
  const Bitset& reserved_nodes() const { return reserved_; }

  // Free on node n at time t >= now: FreeNow plus what running jobs (and this pass's starts)
  // release by t, minus reservations active at t; who holds the node at t (for --exclusive=user)
  // is worked out from the jobs and reservations there at t.
  NodeFree FreeAt(uint32_t n, Time t) const;
  // What node n has free throughout [t0, t1): the minimum over the critical points (t0 and
  // every reservation start inside the window), GPU masks intersected.
  NodeFree FreeDuring(uint32_t n, Time t0, Time t1) const;

  // Estimated end of a running job as the pass sees it: start + limit, or now + 1 for a job past
  // its limit (it is about to end, but what it holds is not free now).
  Time EstimatedEnd(const Job& job) const;
  // Jobs started by this pass, in start order.
  const std::vector<PassStart>& starts() const { return starts_; }
  // The same starts by estimated end (ties in no particular order), as (end, index into
  // starts()): kept sorted from one call to the next, so that backfill, which walks them for
  // every job it reserves for, sorts only the starts made since.
  const std::vector<std::pair<Time, int32_t>>& StartsByEnd() const;

  // Running totals including this pass's starts.
  RunCounters QosUser(int16_t qos, int32_t user) const;
  RunCounters QosAccount(int16_t qos, int32_t account) const;
  RunCounters Assoc(int32_t assoc) const;
  RunCounters Account(int32_t account) const;  // subtree
  int32_t ArrayRunning(JobId array_job_id) const;
  int32_t RunningWithName(int32_t user, const std::string& name) const;
  int64_t LicenseUsed(const std::string& name) const;
  // Notes a later time at which a pending job's eligibility changes by the clock alone.
  void WakeAt(Time t) const {
    if (t > now_ && (wake_at_ == kNoTime || t < wake_at_)) wake_at_ = t;
  }
  Time wake_at() const { return wake_at_; }
  // One counter per node, all zero, for a search within the pass (backfill's FindEarliestStart)
  // that sets some and puts them back to zero when done: kept from pass to pass like the rest of
  // the scratch, so that a search neither allocates nor clears one per node of the cluster.
  std::vector<int32_t>& NodeCounts() const { return scratch_->counts_; }
  // One free part per node, for the same search to keep what it computed for each node it looked
  // at (no meaning between searches).
  std::vector<NodeFree>& NodeFrees() const { return scratch_->frees_; }
  // Calls f(n) for each node where jobs preempted in this pass hold more than their preemptors
  // take: that part comes free at now + 1 (see FreeAt).
  template <typename F>
  void ForEachLeftoverNode(F&& f) const {
    for (const auto& [n, rest] : leftovers_) f(n);
  }
  // Generation counter: changes whenever resources are given back (preemption), so that
  // "this shape did not fit" caches know to forget.
  int64_t freed_generation() const { return freed_generation_; }

 private:
  NodeFree& Mutable(uint32_t n);
  void Reindex(uint32_t n);
  void AddStartOn(uint32_t n, int32_t index, size_t pos);
  void CountStart(const JobEntry& e, const Allocation& alloc, int sign);
  // Reserved node n's part of FreeCpusBound's deficit for the k-th window (what FreeDuring
  // gives it less than FreeNow, 0 when it has no CPU free now), and adding sign x that part to
  // every deficit computed so far.
  int64_t BoundTerm(uint32_t n, size_t k) const;
  static constexpr std::ptrdiff_t kBoundTermsKept = 4;  // see Start
  void AddBoundTerms(uint32_t n, int sign);

  using Profile = PassScratch::Profile;
  const Profile& ProfileOf(uint32_t n) const;
  PassScratch::Slot& SlotOf(uint32_t n) const { return scratch_->slots_[n]; }
  // The reservations on node n (indices into reservations_), or null when none.
  using OnNode = PassScratch::OnNode;
  const std::vector<OnNode>* ReservationsOn(uint32_t n) const {
    const PassScratch::Slot& s = SlotOf(n);
    return s.reservations == epoch_ ? &s.reservation_indices : nullptr;
  }
  const std::vector<OnNode>* StartsOn(uint32_t n) const {
    const PassScratch::Slot& s = SlotOf(n);
    return s.starts == epoch_ ? &s.start_indices : nullptr;
  }

  const ClusterState& cs_;
  Time now_;
  PassScratch own_scratch_;  // when none was given
  PassScratch* scratch_;
  uint32_t epoch_;
  mutable Time wake_at_ = kNoTime;
  Bitset cpu_free_;
  std::vector<Bitset> gpu_buckets_;
  int64_t free_cpus_bound_ = 0;
  // FreeCpusBound's memo, kept up to date by a start on a reserved node (AddBoundTerms) and
  // forgotten by a preemption or a reservation (it reads only the reserved nodes and the
  // reservations): the distinct reservation starts after now, sorted, and by how many of them
  // fall inside the window, what the reserved usable nodes lose against FreeNow (-1: not
  // computed yet).
  mutable bool bound_valid_ = false;
  mutable std::vector<Time> bound_starts_;
  mutable std::vector<int64_t> bound_deficit_;
  mutable bool bound_active_now_ = false;  // a reservation holds nodes now: deficit 0 may be > 0
  std::vector<uint32_t> bound_nodes_;      // Start's scratch: the reserved nodes it starts on
  std::unordered_set<JobId> preempted_;
  std::vector<PassStart> starts_;
  mutable std::vector<std::pair<Time, int32_t>> starts_by_end_;          // StartsByEnd
  std::unordered_map<uint32_t, std::vector<NodeAllocation>> leftovers_;  // victims' surplus
  std::vector<Reservation> reservations_;
  Bitset reserved_;
  std::unordered_map<uint64_t, RunCounters> qos_user_, qos_account_;
  std::unordered_map<int32_t, RunCounters> assoc_, account_;
  std::unordered_map<JobId, int32_t> array_running_;
  std::map<std::pair<int32_t, std::string>, int32_t> named_;
  std::map<std::string, int64_t> licenses_;
  int64_t freed_generation_ = 0;
};

}  // namespace berth::core

#endif  // BERTH_CORE_SCHED_PASS_STATE_H_
