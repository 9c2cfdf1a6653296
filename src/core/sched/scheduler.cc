#include "core/sched/scheduler.h"

#include <algorithm>
#include <optional>
#include <unordered_map>

#include "core/sched/backfill.h"
#include "core/sched/eligibility.h"
#include "core/sched/las.h"
#include "core/sched/pass_state.h"
#include "core/sched/placement.h"
#include "core/sched/preempt.h"
#include "core/sched/resv_view.h"

namespace berth::core {
namespace {

// Reason details cost a walk over a partition's nodes; a pass explains at most this many
// distinct blocked shapes and reuses the text for jobs of the same shape.
constexpr int kMaxExplained = 200;

// Whether the CPUs a shape needs in all (task mode: tasks x CPUs per task; node mode: its
// minimum nodes x CPUs per node) are at most `free_cpus`: necessary for placing it.
bool MayFitCpus(const JobShape& s, int64_t free_cpus) {
  int64_t need = s.task_mode ? int64_t{s.tasks} * std::max(1, s.cpus)
                             : int64_t{s.min_nodes} * std::max(0, s.cpus);
  return need <= free_cpus;
}

// Asks the CPU to bring into its cache the parts of a job's entry that every attempt reads
// first: the job's id, its array fields, and the entry's partitions, shapes and shape ids (24
// bytes apart). A hint: no effect on what the pass does. (The whole entry, 16 lines, cost a replay
// more than it saved.)
void Prefetch(const JobEntry& e) {
  __builtin_prefetch(&e.job.id);
  __builtin_prefetch(&e.job.array_task_id);
  __builtin_prefetch(&e.partitions);
}

struct QueueItem {
  const JobEntry* e = nullptr;
  int64_t priority = 0;
  int32_t tier = 0;
  LasRank las;  // QueueOrder::kLas
  // The job's submit time and id, the queue's last keys, copied here: the sort then reads no
  // job (each a cache miss in a long queue).
  Time submit_time = 0;
  JobId id = kNoJob;
};

// What one attempt to start a job (or one array task) came to.
struct Attempt {
  bool started = false;
  PendingReason reason = PendingReason::kNone;
  std::string detail;
  Time expected_start = kNoTime;
};

// fgd's workload: the GPU shapes of at most this many jobs at the head of the queue (those
// most likely to start next). A replay's queue can hold tens of thousands, and the workload is
// built again in every pass that places a GPU job.
constexpr size_t kFgdWorkloadJobs = 1024;
// The queue is in priority order, its jobs scattered in memory: the pass asks the CPU for the
// job this many places ahead while it schedules the current one (the first reads of each job
// were a cache miss each, a sixth of a pass over 100,000 jobs).
constexpr size_t kPrefetchAhead = 4;

class Pass {
 public:
  Pass(const ClusterState& cs, Time now, const SchedulerConfig& cfg, CandidateCache& cache,
       PassScratch& scratch, bool explain_details, bool pending_reasons,
       int64_t* window_bound_skips, bool backfill_reuse)
      : cs_(cs),
        cfg_(cfg),
        cache_(cache),
        explain_details_(explain_details),
        pending_reasons_(pending_reasons),
        window_bound_skips_(window_bound_skips),
        backfill_reuse_(backfill_reuse),
        pass_(cs, now, &scratch),
        resv_(cs),
        partition_blocked_(cs.partitions().size(), false),
        share_device_(cfg.gpu_placement) {
    plan_.now = now;
    any_free_ = pass_.cpu_free().Any();
    // A reservation that begins or ends changes what may start: a pass is due then (when
    // something waits; a repeating reservation would otherwise wake an idle cluster forever).
    for (const auto& [name, r] : cs.reservations()) {
      if (cs.pending_ids().empty()) break;
      pass_.WakeAt(r.spec.start);
      if (r.spec.end < kInfinite) pass_.WakeAt(r.spec.end);
    }
  }

  Plan Run(const std::vector<QueueItem>& queue) {
    if (cfg_.gpu_placement == GpuPlacement::kFgd) {
      // fgd measures fragmentation against the GPU shapes waiting now (each job's first
      // partition, the first kFgdWorkloadJobs of the queue), gathered only if this pass scores a
      // GPU job's placement, with the cluster's devices per model as the supply.
      share_device_.SetWorkloadSource([this, &queue] {
        return FgdShapes(queue, [](const QueueItem& item) { return item.e; });
      });
    }
    for (size_t i = 0; i < queue.size(); ++i) {
      // Behind a blocked job under a strict order nothing is tried (ScheduleJob only writes the
      // reason Priority): without reasons, the rest of the queue need not be walked.
      if (strict_blocked_ && !pending_reasons_) break;
      if (i + kPrefetchAhead < queue.size()) Prefetch(*queue[i + kPrefetchAhead].e);
      ScheduleJob(queue[i]);
    }
    if (cfg_.order == QueueOrder::kLas) LasWakeUps(queue);
    plan_.wake_at = pass_.wake_at();
    return std::move(plan_);
  }

  // The same pass for a strict fcfs queue without pending reasons, whose order is the pending
  // ids' own (ClusterState::pending_in_submit_order): the jobs are looked up only up to the
  // first that stays blocked, not all of them (a replay's fcfs queue can hold tens of
  // thousands).
  Plan RunFifoPrefix() {
    if (cfg_.gpu_placement == GpuPlacement::kFgd) {
      // The same shapes as Run gathers from its queue, which is in this order.
      share_device_.SetWorkloadSource([this] {
        return FgdShapes(cs_.pending_ids(), [this](JobId id) { return cs_.FindEntry(id); });
      });
    }
    for (JobId id : cs_.pending_ids()) {
      if (strict_blocked_) break;
      QueueItem item;
      item.e = cs_.FindEntry(id);
      ScheduleJob(item);
    }
    plan_.wake_at = pass_.wake_at();
    return std::move(plan_);
  }

 private:
  // fgd's workload: the GPU shapes (each job's first partition) of the first kFgdWorkloadJobs
  // GPU jobs of `jobs`, in their order (entry_of gives each one's JobEntry), and the cluster's
  // devices per GPU model as the supply.
  template <typename Jobs, typename EntryOf>
  ShareDevicePicker::Workload FgdShapes(const Jobs& jobs, EntryOf entry_of) const {
    ShareDevicePicker::Workload w;
    for (const auto& job : jobs) {
      if (w.shapes.size() >= kFgdWorkloadJobs) break;
      const JobEntry* e = entry_of(job);
      if (e->shape_ids.empty()) continue;
      const JobShape& s = cs_.shape(*e, 0);
      if (s.gpus > 0 || s.gpu_milli > 0) w.shapes.push_back(GpuRequestOf(s));
    }
    w.supply = ShareDevicePicker::SupplyOf(cs_);
    return w;
  }

  void ScheduleJob(const QueueItem& item);
  Attempt TryStart(const JobEntry& e, int32_t task);
  bool StartNow(const JobEntry& e, int32_t task, size_t slot, const CandidateSet& cand,
                const PlaceRequest& req, Duration limit);
  bool TryPreempt(const JobEntry& e, int32_t task, size_t slot, const CandidateSet& cand,
                  const PlaceRequest& req, Duration limit);
  // Least attained service: preempts lower queues' jobs for `e` (in queue las_queue_).
  bool TryLasPreempt(const JobEntry& e, int32_t task, size_t slot, const Bitset& usable,
                     const PlaceRequest& req, Duration limit);
  // Records the plan's preemptions and the start that waits for them.
  void RecordPreemption(const JobEntry& e, int32_t task, size_t slot, PreemptChoice choice,
                        Duration limit);
  // A pass is due when a pending job is promoted, and, while a job waits that preemption did
  // not start, when a running job may become its victim (min run time, a threshold crossed).
  void LasWakeUps(const std::vector<QueueItem>& queue) const;
  // Records a start; with `victims`, one that waits for their preemption.
  void Record(const JobEntry& e, int32_t task, size_t slot, Allocation alloc, Duration limit,
              std::vector<JobId> after, const std::vector<const JobEntry*>* victims = nullptr);
  std::string Explain(const JobEntry& e, size_t slot, Duration limit);
  std::vector<size_t> SlotOrder(const JobEntry& e) const;
  Verdict UnavailableNodes(const JobEntry& e, const CandidateSet& cand) const;
  // Whether the job would start now on `cand` but for nodes a MAINT reservation holds during
  // [now, now + limit).
  bool BlockedByMaintenance(const JobEntry& e, const CandidateSet& cand, const PlaceRequest& req,
                            Duration limit) const;

  const ClusterState& cs_;
  const SchedulerConfig& cfg_;
  CandidateCache& cache_;
  const bool explain_details_;
  const bool pending_reasons_;
  int64_t* const window_bound_skips_;  // null: no window bound (Scheduler::set_window_bound)
  const bool backfill_reuse_;          // Scheduler::set_backfill_reuse
  PassState pass_;
  ResvView resv_;
  Plan plan_;
  std::vector<bool> partition_blocked_;
  bool strict_blocked_ = false;
  bool any_free_ = true;
  bool user_exclusive_started_ = false;
  int32_t reservations_ = 0;
  int32_t backfill_tested_ = 0;
  int32_t explained_ = 0;
  int64_t no_fit_generation_ = 0;
  // LAS: the queue of the job being scheduled; the best (lowest) queue of a job that stayed
  // blocked; by shape id, the lowest queue for which preemption found no victims in this pass
  // (victims only grow scarcer during a pass, and a higher queue number may preempt fewer).
  int las_queue_ = 0;
  int las_blocked_queue_ = -1;
  std::unordered_map<int32_t, int> las_no_victims_;
  // By shape id: the shortest time limit with which that shape could not start now in this
  // pass. A job of the same shape with a limit at least as long cannot start either (resources
  // only shrink during a pass, and a longer window is harder to fit).
  std::unordered_map<int32_t, Duration> no_fit_;
  std::unordered_map<int32_t, std::string> details_;  // by shape id
  ShareDevicePicker share_device_;  // the node and share device of GPU jobs (GpuPlacement=)
  // Powered-down nodes this pass has placed jobs on: they will be up as soon as the others
  // being woken, so later jobs prefer them to waking more (power saving).
  Bitset woken_;
};

// ReqNodeNotAvail, naming the nodes (Slurm's "UnavailableNodes:").
Verdict Pass::UnavailableNodes(const JobEntry& e, const CandidateSet& cand) const {
  std::string names;
  for (uint32_t n : e.nodelist) {
    if (cand.usable.Test(n)) continue;
    const NodeInfo& node = cs_.node(n);
    names += (names.empty() ? "" : ",") + node.spec.name + " (" +
             std::string(NodeStateName(node.state())) + ")";
  }
  if (names.empty()) return {PendingReason::kReqNodeNotAvail, "no usable node in the partition"};
  return {PendingReason::kReqNodeNotAvail, "UnavailableNodes: " + names};
}

std::vector<size_t> Pass::SlotOrder(const JobEntry& e) const {
  std::vector<size_t> slots(e.partitions.size());
  for (size_t i = 0; i < slots.size(); ++i) slots[i] = i;
  if (slots.size() < 2) return slots;  // stable_sort would allocate a buffer even for one
  std::stable_sort(slots.begin(), slots.end(), [&](size_t a, size_t b) {
    return cs_.partitions()[e.partitions[a]].spec.priority_tier >
           cs_.partitions()[e.partitions[b]].spec.priority_tier;
  });
  return slots;
}

void Pass::ScheduleJob(const QueueItem& item) {
  const JobEntry& e = *item.e;
  ++plan_.stats.pending_considered;
  las_queue_ = item.las.queue;
  Attempt last;
  if (strict_blocked_) {
    last.reason = PendingReason::kPriority;
  } else if (e.job.is_array_master()) {
    std::vector<int32_t> tasks = e.job.spec->array.task_ids;
    size_t started = 0;
    for (int32_t t : tasks) {
      last = TryStart(e, t);
      if (!last.started) break;
      ++started;
    }
    if (started == tasks.size()) return;
  } else {
    last = TryStart(e, -1);
    if (last.started) return;
  }
  if (last.reason == PendingReason::kNone) return;  // cancelled by the plan
  if (cfg_.order == QueueOrder::kLas &&
      (last.reason == PendingReason::kResources || last.reason == PendingReason::kPriority) &&
      (las_blocked_queue_ < 0 || las_queue_ < las_blocked_queue_)) {
    las_blocked_queue_ = las_queue_;
  }
  PendingInfo info;
  info.job = e.job.id;
  info.reason = last.reason;
  info.detail = std::move(last.detail);
  info.expected_start = last.expected_start;
  // Held, a job has priority 0, as in Slurm (squeue's %Q), whatever its factors would give.
  info.priority = e.job.spec->hold == HoldKind::kNone ? item.priority : 0;
  plan_.pending.push_back(std::move(info));
}

Attempt Pass::TryStart(const JobEntry& e, int32_t task) {
  Attempt a;
  Verdict v = CheckJob(pass_, e, task);
  if (!v.ok()) {
    if (v.reason == PendingReason::kDependencyNeverSatisfied && e.job.spec->kill_on_invalid_dep) {
      plan_.cancels.push_back({e.job.id, JobState::kCancelled, v.detail});
      return a;
    }
    a.reason = v.reason;
    a.detail = std::move(v.detail);
    return a;
  }
  if (!e.job.spec->reservation.empty() && !resv_.MayStartAt(e, pass_.now())) {
    const ResvInfo* own = resv_.Own(e);
    a.reason = PendingReason::kReservation;
    if (own == nullptr) {
      a.detail = "reservation " + e.job.spec->reservation + " no longer exists";
    } else {
      a.expected_start = own->spec.start;
      a.detail = "reservation " + own->spec.name + " has not begun";
    }
    return a;
  }
  Verdict first_fail;
  std::vector<size_t> blocked;  // slots where only resources stand in the way
  bool maint = false;           // only a maintenance reservation stands in the way
  bool all_deadline = true;
  for (size_t slot : SlotOrder(e)) {
    Verdict pv = CheckPartition(pass_, e, slot);
    if (pv.ok()) pv = CheckLimits(pass_, e, slot);
    all_deadline = all_deadline && pv.reason == PendingReason::kDeadline;
    if (!pv.ok()) {
      if (first_fail.ok()) first_fail = std::move(pv);
      continue;
    }
    const CandidateSet& cand = cache_.Get(cs_, e, slot);
    bool nodes_ok =
        cand.usable.Any() && std::all_of(e.nodelist.begin(), e.nodelist.end(),
                                         [&](uint32_t n) { return cand.usable.Test(n); });
    if (!nodes_ok) {
      if (first_fail.ok()) {
        // No configured node of the partition could ever hold it (a held job is accepted
        // unchecked, a node shrank): Slurm's BadConstraints.
        first_fail =
            cand.static_nodes.Any()
                ? UnavailableNodes(e, cand)
                : Verdict{PendingReason::kBadConstraints,
                          "no node of partition " + cs_.partitions()[e.partitions[slot]].spec.name +
                              " could ever hold it"};
      }
      continue;
    }
    const PartitionInfo& p = cs_.partitions()[e.partitions[slot]];
    Duration limit = EffectiveTimeLimit(e, p);
    PlaceRequest req{&cs_.shape(e, slot),
                     e.user,
                     e.nodelist.empty() ? nullptr : &e.nodelist,
                     cand.alternatives.empty() ? nullptr : &cand.alternatives,
                     cfg_.placement,
                     cfg_.topology_aware,
                     &share_device_};
    if (StartNow(e, task, slot, cand, req, limit)) {
      a.started = true;
      return a;
    }
    maint = maint || BlockedByMaintenance(e, cand, req, limit);
    blocked.push_back(slot);
  }
  if (blocked.empty()) {
    if (all_deadline && first_fail.reason == PendingReason::kDeadline) {
      plan_.cancels.push_back({e.job.id, JobState::kDeadline, first_fail.detail});
      return a;
    }
    a.reason = first_fail.reason;
    a.detail = std::move(first_fail.detail);
    return a;
  }
  // Blocked by resources in every partition that would otherwise take it.
  for (size_t slot : blocked) {
    const CandidateSet& cand = cache_.Get(cs_, e, slot);
    Duration limit = EffectiveTimeLimit(e, cs_.partitions()[e.partitions[slot]]);
    PlaceRequest req{&cs_.shape(e, slot),
                     e.user,
                     e.nodelist.empty() ? nullptr : &e.nodelist,
                     cand.alternatives.empty() ? nullptr : &cand.alternatives,
                     cfg_.placement,
                     cfg_.topology_aware,
                     &share_device_};
    if (TryPreempt(e, task, slot, cand, req, limit)) {
      a.started = true;
      return a;
    }
  }
  bool behind = false;
  for (size_t slot : blocked) behind = behind || partition_blocked_[e.partitions[slot]];
  for (size_t slot : blocked) partition_blocked_[e.partitions[slot]] = true;
  if (cfg_.strict_order) strict_blocked_ = true;
  bool may_reserve = cfg_.backfill &&
                     (cfg_.reservation_depth == SchedulerConfig::kAllJobs ||
                      reservations_ < cfg_.reservation_depth) &&
                     (cfg_.backfill_max_job_test == SchedulerConfig::kAllJobs ||
                      backfill_tested_ < cfg_.backfill_max_job_test);
  if (may_reserve) {
    ++backfill_tested_;
    std::optional<EarliestStart> best;
    Duration best_limit = 0;
    for (size_t slot : blocked) {
      const CandidateSet& cand = cache_.Get(cs_, e, slot);
      Duration limit = EffectiveTimeLimit(e, cs_.partitions()[e.partitions[slot]]);
      PlaceRequest req{&cs_.shape(e, slot),
                       e.user,
                       e.nodelist.empty() ? nullptr : &e.nodelist,
                       cand.alternatives.empty() ? nullptr : &cand.alternatives,
                       cfg_.placement,
                       cfg_.topology_aware,
                       &share_device_};
      Time horizon =
          cfg_.backfill_horizon >= kInfinite ? kInfinite : pass_.now() + cfg_.backfill_horizon;
      std::optional<EarliestStart> r =
          FindEarliestStart(pass_, req, cand.usable, limit, horizon, &resv_, &e, !backfill_reuse_);
      if (r && (!best || r->start < best->start)) {
        best = std::move(r);
        best_limit = limit;
      }
    }
    if (best) {
      a.expected_start = best->start;
      pass_.Reserve({e.job.id, best->start, best->start + best_limit, std::move(best->alloc),
                     e.user, e.job.spec->exclusive == ExclusiveMode::kUser});
      ++reservations_;
      ++plan_.stats.reservations;
    }
  }
  a.reason = maint    ? PendingReason::kReqNodeNotAvailMaint
             : behind ? PendingReason::kPriority
                      : PendingReason::kResources;
  if (!explain_details_) return a;
  size_t slot = blocked.front();
  Duration limit = EffectiveTimeLimit(e, cs_.partitions()[e.partitions[slot]]);
  a.detail = Explain(e, slot, limit);
  if (!resv_.empty()) {
    // Explain looks at resources only: say how many of those nodes reservations hold.
    Bitset held(cs_.num_nodes());
    resv_.Blocked(e, pass_.now(), pass_.now() + limit, &held, nullptr);
    held &= cache_.Get(cs_, e, slot).usable;
    if (size_t n = held.Count(); n > 0) {
      a.detail += (a.detail.empty() ? "" : "; ") + std::to_string(n) +
                  (n == 1 ? " node" : " nodes") + " in reservations during the job's window";
    }
  }
  return a;
}

bool Pass::StartNow(const JobEntry& e, int32_t task, size_t slot, const CandidateSet& cand,
                    const PlaceRequest& req, Duration limit) {
  if (!any_free_) return false;
  if (pass_.freed_generation() != no_fit_generation_) {
    no_fit_.clear();
    no_fit_generation_ = pass_.freed_generation();
  }
  // Shapes that failed once fail again in this pass (resources only shrink), unless the job's
  // own user (--exclusive=user jobs anywhere) or required nodes make it special.
  bool cacheable = e.nodelist.empty() && e.job.spec->reservation.empty() &&
                   !cs_.shape(e, slot).exclusive_user && cs_.user_exclusive_running() == 0 &&
                   !user_exclusive_started_;
  const int32_t shape_id = e.shape_ids[slot];
  const Duration time_min = e.job.spec->time_min;
  bool known_no_fit = false;  // the full limit cannot fit: only a --time-min start may
  if (cacheable) {
    auto it = no_fit_.find(shape_id);
    if (it != no_fit_.end() && limit >= it->second) {
      ++plan_.stats.shape_cache_hits;
      if (time_min == kNoTime || time_min <= 0 || time_min >= it->second) return false;
      known_no_fit = true;
    }
  }
  const Time now = pass_.now();
  NodeIndex index{&pass_.gpu_buckets(), &pass_.cpu_free()};
  // With power saving, nodes that are up (or already being woken) come first: a powered-down
  // node is used only when the job fits nowhere else now.
  Bitset awake;
  const bool prefer_awake = cs_.asleep_nodes().Intersects(cand.usable);
  if (prefer_awake) {
    Bitset sleeping = cs_.asleep_nodes();
    if (woken_.size() == sleeping.size()) sleeping.AndNot(woken_);
    awake = cand.usable;
    awake.AndNot(sleeping);
  }
  auto try_limit = [&](Duration d, Allocation* out) {
    FreeFn free_of = [&](uint32_t n) { return pass_.FreeDuring(n, now, now + d); };
    const Bitset* usable = &cand.usable;
    const Bitset* awake_now = &awake;
    Bitset usable_left, awake_left;  // without the nodes advance reservations hold
    if (!resv_.empty()) {
      Bitset held(cs_.num_nodes());
      resv_.Blocked(e, now, now + d, &held, nullptr);
      if (held.Any()) {
        usable_left = cand.usable;
        usable_left.AndNot(held);
        usable = &usable_left;
        if (prefer_awake) {
          awake_left = awake;
          awake_left.AndNot(held);
          awake_now = &awake_left;
        }
      }
    }
    if (prefer_awake && Place(cs_, req, *awake_now, index, free_of, out)) return true;
    return Place(cs_, req, *usable, index, free_of, out);
  };
  // A job needing more CPUs than all usable nodes have free fails without a walk over them: in
  // a long queue most do, and a multi-node job's walk visits every node with a free CPU.
  // (The bound holds for windows of at least a second.)
  // Likewise for the CPUs free throughout the window, which reservations starting inside it
  // take from.
  const JobShape& shape = cs_.shape(e, slot);
  const bool cpus_enough = MayFitCpus(shape, pass_.free_cpus_bound());
  Allocation alloc;
  auto may_fit = [&](Duration d) {
    if (!cpus_enough) return false;
    if (window_bound_skips_ == nullptr || MayFitCpus(shape, pass_.FreeCpusBound(d))) return true;
    ++*window_bound_skips_;
    return false;
  };
  if (!known_no_fit && (limit < 1 || may_fit(limit)) && try_limit(limit, &alloc)) {
    Record(e, task, slot, std::move(alloc), limit, {});
    return true;
  }
  // --time-min: the longest limit in [time_min, limit), in whole minutes as Slurm keeps
  // limits, that fits before the reservations.
  Duration lo = time_min;
  if (lo != kNoTime && lo > 0 && lo < limit && may_fit(lo) && try_limit(lo, &alloc)) {
    Duration lo_min = lo / 60, hi_min = limit / 60;  // lo fits, hi does not
    Allocation best = alloc;
    while (hi_min - lo_min > 1) {
      Duration mid = lo_min + (hi_min - lo_min) / 2;
      if (try_limit(mid * 60, &alloc)) {
        lo_min = mid;
        best = alloc;
      } else {
        hi_min = mid;
      }
    }
    Record(e, task, slot, std::move(best), std::max(lo, lo_min * 60), {});
    return true;
  }
  if (cacheable) {
    auto [it, added] = no_fit_.emplace(shape_id, limit);
    if (!added) it->second = std::min(it->second, limit);
  }
  return false;
}

bool Pass::BlockedByMaintenance(const JobEntry& e, const CandidateSet& cand,
                                const PlaceRequest& req, Duration limit) const {
  if (resv_.empty()) return false;
  const Time now = pass_.now();
  Bitset held(cs_.num_nodes());
  bool maint = false;
  resv_.Blocked(e, now, now + limit, &held, &maint);
  if (!maint || !held.Intersects(cand.usable)) return false;
  // It is the reservation's doing only if the job fits without it.
  Bitset open_nodes = cand.usable;
  if (!e.job.spec->reservation.empty()) {
    if (const ResvInfo* own = resv_.Own(e)) open_nodes &= own->nodes;
  }
  NodeIndex index{&pass_.gpu_buckets(), &pass_.cpu_free()};
  FreeFn free_of = [&](uint32_t n) { return pass_.FreeDuring(n, now, now + limit); };
  Allocation alloc;
  return Place(cs_, req, open_nodes, index, free_of, &alloc);
}

bool Pass::TryPreempt(const JobEntry& e, int32_t task, size_t slot, const CandidateSet& cand,
                      const PlaceRequest& req, Duration limit) {
  const bool las = cfg_.order == QueueOrder::kLas;
  if (cfg_.preempt_type == PreemptType::kNone && !las) return false;
  Bitset usable = cand.usable;  // less what advance reservations hold during the window
  if (!resv_.empty()) {
    Bitset held(cs_.num_nodes());
    resv_.Blocked(e, pass_.now(), pass_.now() + limit, &held, nullptr);
    usable.AndNot(held);
  }
  std::optional<PreemptChoice> choice = FindPreemption(pass_, cfg_, e, slot, req, usable, limit);
  if (choice) {
    RecordPreemption(e, task, slot, std::move(*choice), limit);
    return true;
  }
  return las && TryLasPreempt(e, task, slot, usable, req, limit);
}

bool Pass::TryLasPreempt(const JobEntry& e, int32_t task, size_t slot, const Bitset& usable,
                         const PlaceRequest& req, Duration limit) {
  // Only the last queue has nobody below it. Cached failures: a job of the same shape (and not
  // special, as for the start cache) in the same or a lower-priority queue fails too.
  if (las_queue_ >= static_cast<int>(cfg_.las.queue_limits.size())) return false;
  const bool cacheable = e.nodelist.empty() && e.job.spec->reservation.empty() &&
                         !cs_.shape(e, slot).exclusive_user && cs_.user_exclusive_running() == 0;
  const int32_t shape_id = e.shape_ids[slot];
  if (cacheable) {
    auto it = las_no_victims_.find(shape_id);
    if (it != las_no_victims_.end() && las_queue_ >= it->second) return false;
  }
  std::optional<PreemptChoice> choice =
      FindLasPreemption(pass_, cfg_, e, las_queue_, req, usable, limit);
  if (!choice) {
    if (cacheable) {
      auto [it, added] = las_no_victims_.emplace(shape_id, las_queue_);
      if (!added) it->second = std::min(it->second, las_queue_);
    }
    return false;
  }
  RecordPreemption(e, task, slot, std::move(*choice), limit);
  return true;
}

void Pass::RecordPreemption(const JobEntry& e, int32_t task, size_t slot, PreemptChoice choice,
                            Duration limit) {
  std::vector<JobId> victims;
  std::vector<const JobEntry*> entries;
  for (const PlannedPreemption& p : choice.victims) {
    entries.push_back(cs_.FindEntry(p.victim));
    plan_.preemptions.push_back(p);
    victims.push_back(p.victim);
    ++plan_.stats.preempted;
  }
  Record(e, task, slot, std::move(choice.alloc), limit, std::move(victims), &entries);
}

void Pass::LasWakeUps(const std::vector<QueueItem>& queue) const {
  for (const QueueItem& item : queue) {
    if (!item.las.promoted) pass_.WakeAt(LasPromotionTime(item.e->job, cfg_.las));
  }
  if (las_blocked_queue_ < 0) return;
  // When a running job becomes a possible victim for the best queue that waits.
  const int below = las_blocked_queue_;
  if (below >= static_cast<int>(cfg_.las.queue_limits.size())) return;
  for (JobId id : cs_.running_ids()) {
    pass_.WakeAt(LasPreemptibleFrom(cs_.FindEntry(id)->job, below, cfg_.las));
  }
}

void Pass::Record(const JobEntry& e, int32_t task, size_t slot, Allocation alloc, Duration limit,
                  std::vector<JobId> after, const std::vector<const JobEntry*>* victims) {
  for (const NamedCount& l : e.job.spec->licenses) alloc.licenses.push_back(l);
  if (victims) {
    pass_.StartAfterPreempting(e, e.job.id, pass_.now() + limit, alloc, *victims);
  } else {
    pass_.Start(e, e.job.id, pass_.now() + limit, alloc);
  }
  if (cs_.asleep_nodes().Any()) {
    if (woken_.size() != cs_.num_nodes()) woken_ = Bitset(cs_.num_nodes());
    for (const NodeAllocation& a : alloc.nodes) {
      if (cs_.asleep_nodes().Test(a.node)) woken_.Set(a.node);
    }
  }
  PlannedStart s;
  s.job = e.job.id;
  s.array_task = task;
  s.partition = cs_.partitions()[e.partitions[slot]].spec.name;
  s.alloc = std::move(alloc);
  s.time_limit = limit;
  s.after_preempting = std::move(after);
  plan_.starts.push_back(std::move(s));
  ++plan_.stats.started;
  user_exclusive_started_ = user_exclusive_started_ || cs_.shape(e, slot).exclusive_user;
  any_free_ = pass_.cpu_free().Any();
}

std::string Pass::Explain(const JobEntry& e, size_t slot, Duration limit) {
  // Same shape, same explanation: only the time limit differs, which changes at most whether
  // "reserved for higher-priority jobs" applies to a few nodes.
  auto it = details_.find(e.shape_ids[slot]);
  if (it != details_.end()) return it->second;
  if (explained_ >= kMaxExplained) return "";
  ++explained_;
  std::string d = ExplainNoFit(pass_, e, slot, limit);
  details_.emplace(e.shape_ids[slot], d);
  return d;
}

std::vector<QueueItem> BuildQueue(const ClusterState& cs, Time now, const SchedulerConfig& cfg) {
  std::vector<QueueItem> queue;
  queue.reserve(cs.pending_ids().size());
  bool by_priority = cfg.order == QueueOrder::kPriority;
  const bool las = cfg.order == QueueOrder::kLas;
  PriorityContext ctx;
  if (by_priority) ctx = MakePriorityContext(cs, now, cfg);
  cs.ForEachPendingEntry([&](const JobEntry& entry) {
    const JobEntry* e = &entry;
    QueueItem item;
    item.e = e;
    item.submit_time = e->job.spec->submit_time;
    item.id = e->job.id;
    if (las) {
      item.las = LasRankOf(e->job, now, cfg.las);
      // What squeue shows as the priority: higher for better queues.
      item.priority = static_cast<int64_t>(cfg.las.queue_limits.size()) - item.las.queue;
    }
    if (by_priority) {
      item.priority = ComputePriority(cs, *e, now, cfg, ctx).total;
      for (int16_t p : e->partitions) {
        item.tier = std::max(item.tier, cs.partitions()[p].spec.priority_tier);
      }
    }
    queue.push_back(item);
  });
  auto before = [&](const QueueItem& a, const QueueItem& b) {
    if (las) {
      if (a.las.queue != b.las.queue) return a.las.queue < b.las.queue;
      if (a.las.entered != b.las.entered) return a.las.entered < b.las.entered;
    }
    if (by_priority) {
      if (a.tier != b.tier) return a.tier > b.tier;
      if (a.priority != b.priority) return a.priority > b.priority;
    }
    if (a.submit_time != b.submit_time) return a.submit_time < b.submit_time;
    return a.id < b.id;
  };
  // The pending ids come in id order, which is the submission order under fcfs: no sort then
  // (a long queue is sorted in every pass).
  if (!std::is_sorted(queue.begin(), queue.end(), before)) {
    std::sort(queue.begin(), queue.end(), before);
  }
  return queue;
}

}  // namespace

Plan Scheduler::Schedule(const ClusterState& cs, Time now) {
  if (!pending_reasons_ && cfg_.order == QueueOrder::kFifo && cfg_.strict_order &&
      cs.pending_in_submit_order()) {
    Pass pass(cs, now, cfg_, candidates_, scratch_, explain_details_, pending_reasons_,
              window_bound_ ? &window_bound_skips_ : nullptr, backfill_reuse_);
    return pass.RunFifoPrefix();
  }
  std::vector<QueueItem> queue = BuildQueue(cs, now, cfg_);
  Pass pass(cs, now, cfg_, candidates_, scratch_, explain_details_, pending_reasons_,
            window_bound_ ? &window_bound_skips_ : nullptr, backfill_reuse_);
  return pass.Run(queue);
}

std::vector<PriorityBreakdown> Scheduler::Priorities(const ClusterState& cs, Time now) const {
  PriorityContext ctx = MakePriorityContext(cs, now, cfg_);
  std::vector<PriorityBreakdown> out;
  for (const QueueItem& item : BuildQueue(cs, now, cfg_)) {
    out.push_back(ComputePriority(cs, *item.e, now, cfg_, ctx));
  }
  return out;
}

Plan Schedule(const ClusterState& view, Time now, const SchedulerConfig& cfg) {
  Scheduler s(cfg);
  return s.Schedule(view, now);
}

}  // namespace berth::core
