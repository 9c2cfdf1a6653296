#include "common/small_vector.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <stdexcept>
#include <string>
#include <vector>

namespace berth {
namespace {

// Counts the live objects, so that a test sees every element constructed being destroyed.
struct Counted {
  static inline int live = 0;
  std::string text;
  explicit Counted(std::string t) : text(std::move(t)) { ++live; }
  Counted(const Counted& o) : text(o.text) { ++live; }
  Counted(Counted&& o) noexcept : text(std::move(o.text)) { ++live; }
  Counted& operator=(const Counted&) = default;
  Counted& operator=(Counted&&) = default;
  ~Counted() { --live; }
  friend bool operator==(const Counted& a, const Counted& b) { return a.text == b.text; }
};

std::vector<std::string> Texts(const SmallVector<Counted, 2>& v) {
  std::vector<std::string> out;
  for (const Counted& c : v) out.push_back(c.text);
  return out;
}

TEST(SmallVectorTest, UpToItsRoomTheElementsStayInside) {
  SmallVector<int16_t, 2> v;
  EXPECT_TRUE(v.empty());
  EXPECT_TRUE(v.is_inline());
  v.push_back(3);
  v.push_back(5);
  EXPECT_TRUE(v.is_inline());
  EXPECT_EQ(v.size(), 2u);
  EXPECT_EQ(v.front(), 3);
  EXPECT_EQ(v.back(), 5);
  EXPECT_EQ(v.data(), &v[0]);
  EXPECT_EQ(v.at(1), 5);
  EXPECT_THROW(v.at(2), std::out_of_range);
  v.push_back(7);  // beyond its room: a heap block
  EXPECT_FALSE(v.is_inline());
  EXPECT_GE(v.capacity(), 3u);
  EXPECT_EQ(std::vector<int16_t>(v.begin(), v.end()), (std::vector<int16_t>{3, 5, 7}));
  EXPECT_NE(std::find(v.begin(), v.end(), 5), v.end());
  // No bigger than a std::vector for the small element types it is used with.
  EXPECT_LE(sizeof(SmallVector<int16_t, 2>), sizeof(std::vector<int16_t>));
  EXPECT_LE(sizeof(SmallVector<int32_t, 2>), sizeof(std::vector<int32_t>));
}

TEST(SmallVectorTest, CopiesAndMovesInsideAndOnTheHeap) {
  Counted::live = 0;
  {
    SmallVector<Counted, 2> small;
    small.emplace_back("a");
    SmallVector<Counted, 2> big = {Counted("x"), Counted("y"), Counted("z")};
    EXPECT_FALSE(big.is_inline());

    SmallVector<Counted, 2> small_copy = small;
    SmallVector<Counted, 2> big_copy = big;
    EXPECT_EQ(Texts(small_copy), std::vector<std::string>{"a"});
    EXPECT_EQ(Texts(big_copy), (std::vector<std::string>{"x", "y", "z"}));
    EXPECT_TRUE(big_copy == big);
    EXPECT_FALSE(small_copy == big);

    SmallVector<Counted, 2> moved_small = std::move(small_copy);
    EXPECT_TRUE(small_copy.empty());  // NOLINT(bugprone-use-after-move): a move empties it
    EXPECT_TRUE(moved_small.is_inline());
    const Counted* heap = big_copy.data();
    SmallVector<Counted, 2> moved_big = std::move(big_copy);
    EXPECT_EQ(moved_big.data(), heap);  // the block changes hands
    EXPECT_TRUE(big_copy.empty());      // NOLINT(bugprone-use-after-move)
    EXPECT_TRUE(big_copy.is_inline());  // NOLINT(bugprone-use-after-move)

    // Assignments across the two kinds, both ways, and onto itself.
    moved_small = moved_big;
    EXPECT_EQ(Texts(moved_small), (std::vector<std::string>{"x", "y", "z"}));
    moved_big = small;
    EXPECT_EQ(Texts(moved_big), std::vector<std::string>{"a"});
    moved_big = std::move(moved_small);
    EXPECT_EQ(Texts(moved_big), (std::vector<std::string>{"x", "y", "z"}));
    const SmallVector<Counted, 2>& alias = moved_big;
    moved_big = alias;
    EXPECT_EQ(Texts(moved_big), (std::vector<std::string>{"x", "y", "z"}));
    big_copy = std::move(small);
    EXPECT_EQ(Texts(big_copy), std::vector<std::string>{"a"});
    EXPECT_EQ(Counted::live, 3 + 3 + 1);  // big, moved_big, big_copy
  }
  EXPECT_EQ(Counted::live, 0);
}

TEST(SmallVectorTest, AnElementPushedOntoItsOwnVectorSurvivesTheGrowth) {
  Counted::live = 0;
  SmallVector<Counted, 2> v;
  v.emplace_back("first");
  v.emplace_back("second");
  v.push_back(v[0]);  // the argument lives in the storage that the growth replaces
  v.push_back(v[2]);
  v.emplace_back(v.back());
  EXPECT_EQ(Texts(v), (std::vector<std::string>{"first", "second", "first", "first", "first"}));
  v.pop_back();
  v.reserve(40);
  EXPECT_GE(v.capacity(), 40u);
  EXPECT_EQ(v.size(), 4u);
  v.clear();
  EXPECT_TRUE(v.empty());
  EXPECT_EQ(Counted::live, 0);
}

}  // namespace
}  // namespace berth
