// Backfill support: the earliest time a blocked job could start without disturbing the running
// jobs' estimated ends or the reservations already made in this pass.
#ifndef BERTH_CORE_SCHED_BACKFILL_H_
#define BERTH_CORE_SCHED_BACKFILL_H_

#include <optional>

#include "common/bitset.h"
#include "core/sched/pass_state.h"
#include "core/sched/placement.h"
#include "core/sched/resv_view.h"

namespace berth::core {

struct EarliestStart {
  Time start = 0;
  Allocation alloc;
};

// Sweeps forward through the times at which resources come free (running jobs' estimated ends,
// the ends of this pass's starts and reservations), from now up to `horizon_end`, and returns
// the first time at which the job fits on `candidates` for all of [start, start + duration), with
// the placement it would get. std::nullopt when it does not fit within the horizon.
// With `resv` (and the job `job`), nodes the job may not use during a window because of advance
// reservations do not count for it, and the times at which that changes are swept too.
//
// The sweep keeps what each node it looked at has free for the window it was looked at with,
// and the placement at the start it finds reads those: what a node has free for [T, T + duration)
// changes only at the times the sweep looks at it again. `fresh_placement` (tests) makes the
// placement ask the pass again instead; the result is the same.
std::optional<EarliestStart> FindEarliestStart(const PassState& pass, const PlaceRequest& req,
                                               const Bitset& candidates, Duration duration,
                                               Time horizon_end, const ResvView* resv = nullptr,
                                               const JobEntry* job = nullptr,
                                               bool fresh_placement = false);

}  // namespace berth::core

#endif  // BERTH_CORE_SCHED_BACKFILL_H_
