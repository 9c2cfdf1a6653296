#include "common/id_set.h"

#include <gtest/gtest.h>

#include <cstdint>
#include <limits>
#include <random>
#include <set>
#include <vector>

namespace berth {
namespace {

std::vector<uint32_t> Ids(const IdSet& s) {
  return std::vector<uint32_t>(s.begin(), s.end());
}

TEST(IdSetTest, KeepsIdsInOrderAcrossWordsAndBlocks) {
  IdSet s;
  EXPECT_TRUE(s.empty());
  EXPECT_EQ(s.begin(), s.end());
  const uint32_t top = std::numeric_limits<uint32_t>::max();
  for (uint32_t id : {top, 5u, 63u, 64u, 511u, 512u, 0u, 100000u, 64u}) s.insert(id);
  EXPECT_EQ(s.size(), 8u);
  EXPECT_EQ(Ids(s), (std::vector<uint32_t>{0, 5, 63, 64, 511, 512, 100000, top}));
  EXPECT_FALSE(s.insert(511));  // already there
  EXPECT_TRUE(s.contains(top));
  EXPECT_EQ(s.count(100000), 1u);
  EXPECT_EQ(s.count(100001), 0u);
  EXPECT_EQ(s.erase(100001), 0u);
  EXPECT_EQ(s.erase(63), 1u);
  EXPECT_EQ(s.erase(63), 0u);
  EXPECT_EQ(s.erase(100000), 1u);  // its block goes with its last id
  EXPECT_EQ(Ids(s), (std::vector<uint32_t>{0, 5, 64, 511, 512, top}));
  IdSet copy = s;
  EXPECT_TRUE(copy == s);
  copy.erase(0);
  EXPECT_FALSE(copy == s);
  s.clear();
  EXPECT_TRUE(s.empty());
  EXPECT_EQ(Ids(s), std::vector<uint32_t>{});
}

TEST(IdSetTest, BehavesAsAStdSetUnderRandomChanges) {
  std::mt19937 rng(17);
  IdSet s;
  std::set<uint32_t> model;
  for (int step = 0; step < 20000; ++step) {
    // Mostly a dense window that moves up, as job ids do; now and then one far away.
    uint32_t id = step % 97 == 0 ? static_cast<uint32_t>(rng())
                                 : static_cast<uint32_t>(step / 4 + rng() % 3000);
    if (rng() % 3 == 0) {
      ASSERT_EQ(s.erase(id), model.erase(id)) << id;
    } else {
      ASSERT_EQ(s.insert(id), model.insert(id).second) << id;
    }
    ASSERT_EQ(s.size(), model.size());
    if (step % 1000 == 0) {
      ASSERT_EQ(Ids(s), std::vector<uint32_t>(model.begin(), model.end()));
    }
  }
  EXPECT_EQ(Ids(s), std::vector<uint32_t>(model.begin(), model.end()));
  for (uint32_t id : model) EXPECT_TRUE(s.contains(id));
}

}  // namespace
}  // namespace berth
