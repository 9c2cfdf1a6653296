#include "common/strings.h"

#include <gtest/gtest.h>

namespace berth {
namespace {

TEST(Strings, CaseAndDigits) {
  EXPECT_TRUE(IsDigit('0'));
  EXPECT_TRUE(IsDigit('9'));
  EXPECT_FALSE(IsDigit('a'));
  EXPECT_FALSE(IsDigit(static_cast<char>(0xB2)));  // superscript two in Latin-1
  EXPECT_TRUE(EqualsIgnoreCase("Include", "INCLUDE"));
  EXPECT_FALSE(EqualsIgnoreCase("Include", "Includes"));
  EXPECT_FALSE(EqualsIgnoreCase("a", "b"));
  EXPECT_EQ(ToLower("MiXeD-1"), "mixed-1");
  EXPECT_EQ(ToUpper("MiXeD-1"), "MIXED-1");
  EXPECT_TRUE(StartsWithIgnoreCase("Now+1hour", "now"));
  EXPECT_TRUE(StartsWithIgnoreCase("x-Bearer", "bearer", 2));
  EXPECT_FALSE(StartsWithIgnoreCase("no", "now"));
  EXPECT_FALSE(StartsWithIgnoreCase("now", "now", 4));
  EXPECT_TRUE(AllDigits("0123"));
  EXPECT_FALSE(AllDigits(""));
  EXPECT_FALSE(AllDigits("12a"));
}

TEST(Strings, Trim) {
  EXPECT_EQ(Trim("  a b\t"), "a b");
  EXPECT_EQ(Trim("\t \t"), "");
  EXPECT_EQ(Trim("\na\n"), "\na\n");  // blanks only
  EXPECT_EQ(TrimWhitespace("\r\n a b \n"), "a b");
  EXPECT_EQ(TrimWhitespace(" \n "), "");
}

TEST(Strings, Split) {
  EXPECT_EQ(Split("a,,b", ','), (std::vector<std::string_view>{"a", "", "b"}));
  EXPECT_EQ(Split("", ','), (std::vector<std::string_view>{""}));
  EXPECT_EQ(Split("a,", ','), (std::vector<std::string_view>{"a", ""}));
  EXPECT_EQ(SplitList(" a, b,,c "), (std::vector<std::string>{"a", "b", "c"}));
  EXPECT_TRUE(SplitList("").empty());
  EXPECT_EQ(SplitList("x:y", ':'), (std::vector<std::string>{"x", "y"}));
}

}  // namespace
}  // namespace berth
