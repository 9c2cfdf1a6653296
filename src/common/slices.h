// Work on consecutive slices of a range, on a few threads at once.
#ifndef BERTH_COMMON_SLICES_H_
#define BERTH_COMMON_SLICES_H_

#include <cstddef>
#include <functional>

namespace berth {

// Calls work(k, begin, end) for k = 0 .. slices-1, where the k-th slice of [0, n) is
// [n * k / slices, n * (k + 1) / slices): slice 0 on this thread, the others each on a thread of
// its own, and returns when all have returned. A slice whose thread cannot be started (a process
// limit) is done on this thread. `slices` is at least 1; `work` must be safe to run on several
// threads at once, and must not throw.
void ForEachSlice(size_t n, size_t slices,
                  const std::function<void(size_t k, size_t begin, size_t end)>& work);

// How many slices ForEachSlice should make of `n` items when a slice is worth a thread only with
// at least `min_per_slice` items: at most this machine's hardware threads and `max_slices`.
size_t SliceCount(size_t n, size_t min_per_slice, size_t max_slices);

}  // namespace berth

#endif  // BERTH_COMMON_SLICES_H_
