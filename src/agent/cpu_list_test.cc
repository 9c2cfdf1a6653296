#include "agent/cpu_list.h"

#include <gtest/gtest.h>

namespace berth::agent {
namespace {

using Cpus = std::vector<int32_t>;

TEST(CpuListTest, ParseAndFormat) {
  EXPECT_EQ(*ParseCpuList("0-3,8,10-11\n"), (Cpus{0, 1, 2, 3, 8, 10, 11}));
  EXPECT_EQ(*ParseCpuList(""), Cpus{});
  EXPECT_EQ(*ParseCpuList("\n"), Cpus{});
  EXPECT_EQ(*ParseCpuList("5,1-2,2"), (Cpus{1, 2, 5}));
  for (const char* bad : {"a", "1-", "-1", "3-1", "1,,2", "1 2", "99999999"}) {
    EXPECT_FALSE(ParseCpuList(bad).ok()) << bad;
  }
  EXPECT_EQ(FormatCpuList({0, 1, 2, 3, 8, 10, 11}), "0-3,8,10-11");
  EXPECT_EQ(FormatCpuList({5, 3, 4, 4}), "3-5");
  EXPECT_EQ(FormatCpuList({}), "");
  EXPECT_EQ(FormatCpuList({7}), "7");
}

TEST(CpuListTest, ChoosesFreeCpusFirst) {
  Cpus online{0, 1, 2, 3, 4, 5, 6, 7};
  EXPECT_EQ(ChooseCpus(online, {}, 2), (Cpus{0, 1}));
  EXPECT_EQ(ChooseCpus(online, {0, 1, 4}, 3), (Cpus{2, 3, 5}));
  // Not enough free CPUs: the least shared fill up, lowest first.
  EXPECT_EQ(ChooseCpus({0, 1, 2}, {0, 0, 1, 2}, 2), (Cpus{1, 2}));
  EXPECT_EQ(ChooseCpus({0, 1}, {0, 1}, 1), (Cpus{0}));
  // More than the node has: every CPU.
  EXPECT_EQ(ChooseCpus({2, 3}, {}, 5), (Cpus{2, 3}));
  // CPUs that other groups hold but the node does not offer are ignored.
  EXPECT_EQ(ChooseCpus({4, 5}, {0, 1, 4}, 1), (Cpus{5}));
}

}  // namespace
}  // namespace berth::agent
