#include "core/model/array_spec.h"

#include <gtest/gtest.h>

namespace berth::core {
namespace {

std::vector<int32_t> Ids(int32_t first, int32_t last, int32_t step = 1) {
  std::vector<int32_t> ids;
  for (int32_t i = first; i <= last; i += step) ids.push_back(i);
  return ids;
}

struct ParseCase {
  std::string text;
  std::vector<int32_t> ids;
  int32_t max_running;
  std::string formatted;  // FormatArrayTaskIds, i.e. scontrol's ArrayTaskId=
};

TEST(ArraySpecTest, Parse) {
  const ParseCase cases[] = {
      {"0-15", Ids(0, 15), 0, "0-15"},
      {"0-15:4", {0, 4, 8, 12}, 0, "0,4,8,12"},
      {"0-15:4%2", {0, 4, 8, 12}, 2, "0,4,8,12%2"},
      {"1,3,5-7", {1, 3, 5, 6, 7}, 0, "1,3,5-7"},
      {"0-99%10", Ids(0, 99), 10, "0-99%10"},
      {"7", {7}, 0, "7"},
      {"0", {0}, 0, "0"},
      {"1000", {1000}, 0, "1000"},
      {"5-5", {5}, 0, "5"},
      {"3,1,2,2", {1, 2, 3}, 0, "1-3"},
      {"1-3,2-5", Ids(1, 5), 0, "1-5"},
      {"0-10:3", {0, 3, 6, 9}, 0, "0,3,6,9"},
      {"0-1:5", {0}, 0, "0"},
      {"0-15%0", Ids(0, 15), 0, "0-15"},  // %0: no limit
      // Slurm skips empty parts and allows brackets around a part.
      {",1,,2,", {1, 2}, 0, "1-2"},
      {"[1-3]", {1, 2, 3}, 0, "1-3"},
      {"[1,3]", {1, 3}, 0, "1,3"},
      {"[0-6:2]", {0, 2, 4, 6}, 0, "0,2,4,6"},
      // The oracle scripts and what Slurm printed as ArrayTaskId=.
      {"1-12", Ids(1, 12), 0, "1-12"},
      {"1-5%2", Ids(1, 5), 2, "1-5%2"},
      {"1-14", Ids(1, 14), 0, "1-14"},
      {"100,200,300", {100, 200, 300}, 0, "100,200,300"},
      {"0,8,16", {0, 8, 16}, 0, "0,8,16"},
      {"1-10", Ids(1, 10), 0, "1-10"},
      {"0-168", Ids(0, 168), 0, "0-168"},
      // man sbatch: "--array=0-15:4 is equivalent to 0,4,8,12"; scontrol shows a series of
      // six or more ids spanning more than 10 in its step form, with the end cut to the last
      // task (all as the real Slurm 22.05.8 printed them).
      {"50-1000:100%26", Ids(50, 950, 100), 26, "50-950:100%26"},
      {"1-21:4", Ids(1, 21, 4), 0, "1-21:4"},
      {"1-100:4", Ids(1, 97, 4), 0, "1-97:4"},
      {"1,5,9,13,17,21", Ids(1, 21, 4), 0, "1-21:4"},
      {"1-20:4", Ids(1, 17, 4), 0, "1,5,9,13,17"},   // five ids
      {"1-11:2", Ids(1, 11, 2), 0, "1,3,5,7,9,11"},  // spans 10
      {"1-10:4", {1, 5, 9}, 0, "1,5,9"},
      {"1,5,9,13,17,21,22", {1, 5, 9, 13, 17, 21, 22}, 0, "1,5,9,13,17,21-22"},
  };
  for (const ParseCase& c : cases) {
    Result<ArraySpec> got = ParseArraySpec(c.text);
    ASSERT_TRUE(got.ok()) << c.text << ": " << got.status().ToString();
    EXPECT_EQ(got->task_ids, c.ids) << c.text;
    EXPECT_EQ(got->max_running, c.max_running) << c.text;
    EXPECT_EQ(FormatArrayTaskIds(got->task_ids, got->max_running), c.formatted) << c.text;
  }
}

TEST(ArraySpecTest, EmptyIsNotAnArray) {
  Result<ArraySpec> got = ParseArraySpec("");
  ASSERT_TRUE(got.ok());
  EXPECT_TRUE(got->empty());
  EXPECT_EQ(*got, ArraySpec{});
}

TEST(ArraySpecTest, MaxArraySize) {
  EXPECT_TRUE(ParseArraySpec("0-9", 10).ok());
  EXPECT_FALSE(ParseArraySpec("0-10", 10).ok());
  EXPECT_FALSE(ParseArraySpec("0-9:10", 10).ok());  // Slurm: step must be below MaxArraySize
  EXPECT_TRUE(ParseArraySpec("4000000", 4000001).ok());
  EXPECT_FALSE(ParseArraySpec("1", 0).ok());
  EXPECT_FALSE(ParseArraySpec("1", 4000002).ok());
  EXPECT_EQ(ParseArraySpec("0-4000000", 4000001)->task_ids.size(), 4000001u);
}

struct ErrorCase {
  std::string text;
  std::string want_in_message;
};

TEST(ArraySpecTest, Errors) {
  const ErrorCase cases[] = {
      {"5-2", "bad array range '5-2'"},
      {"1,5-2", "bad array range '5-2'"},
      {"-1", "bad array range '-1'"},
      {"1-", "bad array range '1-'"},
      {"a", "bad array range 'a'"},
      {"1-5:0", "step"},
      {"1-5:-1", "bad array range '1-5:-1'"},
      {"5:2", "unexpected ':2'"},
      {"1-3x", "unexpected 'x'"},
      {"1 - 3", "bad array range '1 - 3'"},
      {"1001", "not below MaxArraySize (1001)"},
      {"0-1001", "not below MaxArraySize"},
      {"99999999999", "number too large"},
      {"1-5%", "bad array throttle '%'"},
      {"1-5%x", "bad array throttle '%x'"},
      {"1%2,3", "bad array throttle '%2,3'"},
      {"%5", "no array task ids in '%5'"},
      {",", "no array task ids"},
      {"$node_array", "bad array range '$node_array'"},
  };
  for (const ErrorCase& c : cases) {
    Result<ArraySpec> got = ParseArraySpec(c.text);
    ASSERT_FALSE(got.ok()) << c.text;
    EXPECT_EQ(got.status().code(), StatusCode::kInvalidArgument) << c.text;
    EXPECT_NE(got.status().message().find(c.want_in_message), std::string::npos)
        << c.text << " -> " << got.status().message();
  }
}

TEST(ArraySpecTest, FormatIgnoresOrderDuplicatesAndNegatives) {
  EXPECT_EQ(FormatArrayTaskIds({}), "");
  EXPECT_EQ(FormatArrayTaskIds({}, 3), "%3");
  EXPECT_EQ(FormatArrayTaskIds({7, 5, 6, 6, -1, 1, 3}), "1,3,5-7");
  EXPECT_EQ(FormatArrayTaskIds({0, 1}, -2), "0-1");
}

TEST(ArraySpecTest, FormatThenParseRoundTrips) {
  const std::vector<int32_t> sets[] = {{0},           {0, 1, 2},   {1, 3, 5, 6, 7},
                                       {0, 4, 8, 12}, Ids(0, 999), Ids(3, 300, 3)};
  for (const auto& ids : sets) {
    for (int32_t max_running : {0, 1, 10}) {
      std::string text = FormatArrayTaskIds(ids, max_running);
      Result<ArraySpec> again = ParseArraySpec(text);
      ASSERT_TRUE(again.ok()) << text;
      EXPECT_EQ(again->task_ids, ids) << text;
      EXPECT_EQ(again->max_running, max_running) << text;
    }
  }
}

}  // namespace
}  // namespace berth::core
