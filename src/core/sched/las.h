// Least attained service (`SchedulerPolicy=las`), after Tiresias' discretised 2D-LAS (Gu et al.,
// NSDI'19): a job's priority falls with the service it has received, GPU-seconds summed over
// its attempts (CPU-seconds for a job that holds no GPU), discretised into K queues by the
// thresholds LasConfig::queue_limits. Queue 0 (least served) goes first; within a queue, the
// job that entered it first. A job that waited longer than promote_knob x its last run goes
// back to queue 0 (Tiresias' PROMOTE_KNOB, against starvation). A waiting job of a higher
// queue may preempt, by requeue, running jobs of lower queues that have run at least
// min_run_time in their current attempt and accept a requeue (docs/scheduling.md).
//
// These are pure functions of a job record, the time and the configuration: the scheduler
// computes every rank afresh in each pass, so nothing of it needs to be stored but the job's
// attained service and last run (core/model/job.h), which ClusterState::EndJob keeps.
#ifndef BERTH_CORE_SCHED_LAS_H_
#define BERTH_CORE_SCHED_LAS_H_

#include <cstdint>
#include <vector>

#include "common/time.h"
#include "core/config.h"
#include "core/model/job.h"

namespace berth::core {

// The service a job has received by `now`: its ended attempts plus the running one (a
// CONFIGURING job accrues nothing yet).
double AttainedService(const Job& job, Time now);

// The queue of a service amount: the number of thresholds in `limits` (ascending) it has
// reached. 0 .. limits.size().
int LasQueueOf(double service, const std::vector<double>& limits);

// Where a pending job stands in the LAS order.
struct LasRank {
  int queue = 0;
  Time entered = 0;       // when it entered that queue (the order within the queue)
  bool promoted = false;  // queue 0 by the promotion knob, not by its service
};

// A pending job's rank at `now`. A job that never ran entered queue 0 at its submission; a
// requeued one entered its queue when it went back to the queue (Job::eligible_time); a
// promoted one at the time of its promotion.
LasRank LasRankOf(const Job& job, Time now, const LasConfig& cfg);

// When a pending job is (or was) promoted: the end of its last run plus promote_knob x that
// run. kNoTime when it cannot be (knob off, never ran, or already in queue 0).
Time LasPromotionTime(const Job& job, const LasConfig& cfg);

// Whether LAS may preempt the running job `victim` for a waiting job of queue `queue` at `now`:
// it accepts a requeue (--requeue, the default), it has run at least min_run_time in this
// attempt, and its queue (by its service now) is below `queue` in priority.
bool LasMayPreempt(const Job& victim, int queue, Time now, const LasConfig& cfg);

// The first time at which LasMayPreempt(running, queue, t, cfg) holds: it has run
// min_run_time and its service has reached the threshold below `queue`. kNoTime when never (a
// --no-requeue job, one not running, or one that accrues no service).
Time LasPreemptibleFrom(const Job& running, int queue, const LasConfig& cfg);

}  // namespace berth::core

#endif  // BERTH_CORE_SCHED_LAS_H_
