#include "common/slices.h"

#include <gtest/gtest.h>

#include <atomic>
#include <mutex>
#include <set>
#include <thread>
#include <vector>

namespace berth {
namespace {

TEST(ForEachSliceTest, EveryItemOnceInConsecutiveSlicesOnSeveralThreads) {
  for (size_t n : {0u, 1u, 5u, 7u, 1000u}) {
    for (size_t slices : {1u, 2u, 3u, 8u}) {
      std::vector<int> seen(n, 0);
      std::vector<std::pair<size_t, size_t>> bounds(slices);
      std::mutex mu;
      std::set<std::thread::id> threads;
      ForEachSlice(n, slices, [&](size_t k, size_t begin, size_t end) {
        bounds[k] = {begin, end};
        for (size_t i = begin; i < end; ++i) ++seen[i];
        std::lock_guard<std::mutex> l(mu);
        threads.insert(std::this_thread::get_id());
      });
      for (size_t i = 0; i < n; ++i) EXPECT_EQ(seen[i], 1) << n << " items, " << slices;
      size_t at = 0;
      for (const auto& [begin, end] : bounds) {  // consecutive, in order, covering [0, n)
        EXPECT_EQ(begin, at);
        EXPECT_LE(begin, end);
        at = end;
      }
      EXPECT_EQ(at, n);
      EXPECT_EQ(threads.size(), slices) << "a thread per slice";
      EXPECT_TRUE(threads.count(std::this_thread::get_id())) << "slice 0 here";
    }
  }
}

TEST(ForEachSliceTest, NoSlicesMeansOne) {
  std::atomic<int> calls{0};
  ForEachSlice(4, 0, [&](size_t k, size_t begin, size_t end) {
    EXPECT_EQ(k, 0u);
    EXPECT_EQ(begin, 0u);
    EXPECT_EQ(end, 4u);
    ++calls;
  });
  EXPECT_EQ(calls, 1);
}

TEST(SliceCountTest, BoundedByItemsHardwareAndMaximum) {
  const size_t hardware = std::max<size_t>(std::thread::hardware_concurrency(), 1);
  EXPECT_EQ(SliceCount(0, 100, 4), 1u);
  EXPECT_EQ(SliceCount(150, 100, 4), 1u);
  EXPECT_EQ(SliceCount(250, 100, 4), std::min<size_t>(2, hardware));
  EXPECT_EQ(SliceCount(1000000, 100, 4), std::min<size_t>(4, hardware));
  EXPECT_EQ(SliceCount(1000000, 100, 1), 1u);
  EXPECT_EQ(SliceCount(1000000, 0, 0), 1u);
}

}  // namespace
}  // namespace berth
