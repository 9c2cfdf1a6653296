// Preemption: a pending job of a higher QoS (PreemptType=qos) or partition tier
// (PreemptType=partition_prio) may stop lower jobs to start. Victims are chosen per node, fewest
// first, lowest QoS priority and most recently started first (least work lost), and only when
// the job then fits: never preempt for a job that would still not start.
#ifndef BERTH_CORE_SCHED_PREEMPT_H_
#define BERTH_CORE_SCHED_PREEMPT_H_

#include <optional>
#include <vector>

#include "core/config.h"
#include "core/sched/pass_state.h"
#include "core/sched/placement.h"

namespace berth::core {

struct PreemptChoice {
  std::vector<PlannedPreemption> victims;
  Allocation alloc;
};

// How `victim` would be preempted for `job` (in partition slot `slot`), or kOff when it may not.
PreemptMode PreemptModeFor(const ClusterState& cs, const SchedulerConfig& cfg, const JobEntry& job,
                           size_t slot, const JobEntry& victim);

std::optional<PreemptChoice> FindPreemption(const PassState& pass, const SchedulerConfig& cfg,
                                            const JobEntry& job, size_t slot,
                                            const PlaceRequest& req, const Bitset& candidates,
                                            Duration limit);

// Least attained service (las.h): victims for `job`, which waits in LAS queue `queue`, among
// running jobs that LasMayPreempt allows (always by requeue; --no-requeue jobs never). Per node
// the lowest queue first, then the least served; nodes with the fewest victims first, then
// those in the lowest queues, then the least service stopped. As FindPreemption: only when the
// job then fits.
std::optional<PreemptChoice> FindLasPreemption(const PassState& pass, const SchedulerConfig& cfg,
                                               const JobEntry& job, int queue,
                                               const PlaceRequest& req, const Bitset& candidates,
                                               Duration limit);

}  // namespace berth::core

#endif  // BERTH_CORE_SCHED_PREEMPT_H_
