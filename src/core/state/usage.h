// Fair-share usage with exponential decay (Slurm's PriorityDecayHalfLife).
//
// Usage is billing x seconds. A value recorded at time t0 is worth value x 2^-((t - t0) / H) at
// time t. A job running at constant billing b from s to e contributes, as of e,
// b x H/ln2 x (1 - 2^-((e - s) / H)): the integral of the decayed rate, so that a long job counts
// the same whether it is accrued at its end or bit by bit.
#ifndef BERTH_CORE_STATE_USAGE_H_
#define BERTH_CORE_STATE_USAGE_H_

#include "common/time.h"

namespace berth::core {

struct DecayedUsage {
  double value = 0;
  Time as_of = 0;

  // The value as of `now` (>= as_of). half_life <= 0 means no decay.
  double At(Time now, Duration half_life) const;
  // Adds `amount`, expressed as of `now` (an amount from before as_of is decayed to as_of).
  void Add(double amount, Time now, Duration half_life);
};

// The usage of running at `billing` from `start` to `end`, expressed as of `end`.
double DecayedRunUsage(double billing, Time start, Time end, Duration half_life);

}  // namespace berth::core

#endif  // BERTH_CORE_STATE_USAGE_H_
