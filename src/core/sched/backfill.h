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
std::optional<EarliestStart> FindEarliestStart(const PassState& pass, const PlaceRequest& req,
                                               const Bitset& candidates, Duration duration,
                                               Time horizon_end, const ResvView* resv = nullptr,
                                               const JobEntry* job = nullptr);

}  // namespace berth::core

#endif  // BERTH_CORE_SCHED_BACKFILL_H_
