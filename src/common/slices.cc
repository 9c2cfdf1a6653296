#include "common/slices.h"

#include <algorithm>
#include <system_error>
#include <thread>
#include <vector>

namespace berth {

void ForEachSlice(size_t n, size_t slices,
                  const std::function<void(size_t k, size_t begin, size_t end)>& work) {
  slices = std::max<size_t>(slices, 1);
  auto run = [&](size_t k) { work(k, n * k / slices, n * (k + 1) / slices); };
  std::vector<std::thread> threads;
  threads.reserve(slices - 1);
  for (size_t k = 1; k < slices; ++k) {
    try {
      threads.emplace_back(run, k);
    } catch (const std::system_error&) {  // no thread to be had: do it here
      run(k);
    }
  }
  run(0);
  for (std::thread& t : threads) t.join();
}

size_t SliceCount(size_t n, size_t min_per_slice, size_t max_slices) {
  // Read once: the count comes from a file under /sys, read again on every call.
  static const size_t hardware = std::max<size_t>(std::thread::hardware_concurrency(), 1);
  const size_t by_size = min_per_slice == 0 ? n : n / min_per_slice;
  return std::max<size_t>(1, std::min({by_size, hardware, max_slices}));
}

}  // namespace berth
