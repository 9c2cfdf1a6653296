// Time in berth: whole seconds, passed in as values. Nothing in common/ or core/ reads a clock.
#ifndef BERTH_COMMON_TIME_H_
#define BERTH_COMMON_TIME_H_

#include <cstdint>

namespace berth {

// Seconds since the Unix epoch (or since the start of a trace, in the simulator).
using Time = int64_t;
// A length of time in seconds.
using Duration = int64_t;

// "UNLIMITED" / "INFINITE": larger than any real time, yet safe to add to a Time.
inline constexpr Duration kInfinite = INT64_C(1) << 52;
// "not set"
inline constexpr Time kNoTime = -1;

}  // namespace berth

#endif  // BERTH_COMMON_TIME_H_
