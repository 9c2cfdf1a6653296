#include "common/strings.h"

#include <gtest/gtest.h>

#include <cctype>
#include <string>
#include <string_view>
#include <vector>

namespace berth {
namespace {

TEST(StringsTest, IsDigitIsAsciiOnly) {
  EXPECT_TRUE(IsDigit('0'));
  EXPECT_TRUE(IsDigit('9'));
  EXPECT_FALSE(IsDigit('a'));
  EXPECT_FALSE(IsDigit('/'));
  EXPECT_FALSE(IsDigit(':'));
  EXPECT_FALSE(IsDigit(static_cast<char>(0xB2)));  // '²' in Latin-1
}

TEST(StringsTest, AllDigitsNeedsOneDigitAndNothingElse) {
  EXPECT_TRUE(AllDigits("0"));
  EXPECT_TRUE(AllDigits("0123456789"));
  EXPECT_FALSE(AllDigits(""));
  EXPECT_FALSE(AllDigits("12a"));
  EXPECT_FALSE(AllDigits(" 12"));
  EXPECT_FALSE(AllDigits("-1"));
}

TEST(StringsTest, CaseConversionTouchesAsciiLettersOnly) {
  EXPECT_EQ(ToLower("GRES/Gpu:A100"), "gres/gpu:a100");
  EXPECT_EQ(ToUpper("gres/Gpu:a100"), "GRES/GPU:A100");
  EXPECT_EQ(ToLower("\xC3\x89"), "\xC3\x89");  // 'É' in UTF-8 stays as it is
  EXPECT_EQ(ToLowerAscii('@'), '@');
  EXPECT_EQ(ToLowerAscii('['), '[');
  EXPECT_EQ(ToUpperAscii('`'), '`');
  EXPECT_EQ(ToUpperAscii('{'), '{');
}

TEST(StringsTest, EqualsIgnoreCase) {
  EXPECT_TRUE(EqualsIgnoreCase("NodeName", "nodename"));
  EXPECT_TRUE(EqualsIgnoreCase("", ""));
  EXPECT_FALSE(EqualsIgnoreCase("Node", "NodeName"));
  EXPECT_FALSE(EqualsIgnoreCase("NodeName", "Node"));
  EXPECT_FALSE(EqualsIgnoreCase("a@", "a`"));  // '@' and '`' are not letters
}

TEST(StringsTest, StartsWithIgnoreCaseAtPosition) {
  EXPECT_TRUE(StartsWithIgnoreCase("Now+1hour", "now"));
  EXPECT_TRUE(StartsWithIgnoreCase("10:30PM", "pm", 5));
  EXPECT_TRUE(StartsWithIgnoreCase("abc", "", 3));
  EXPECT_FALSE(StartsWithIgnoreCase("no", "now"));
  EXPECT_FALSE(StartsWithIgnoreCase("10:30PM", "pm", 6));
  EXPECT_FALSE(StartsWithIgnoreCase("abc", "", 4));  // past the end
  EXPECT_FALSE(StartsWithIgnoreCase("abc", "a", std::string_view::npos));
}

TEST(StringsTest, TrimTakesBlanksOnly) {
  EXPECT_EQ(Trim("  a b\t"), "a b");
  EXPECT_EQ(Trim("\t \t"), "");
  EXPECT_EQ(Trim(""), "");
  EXPECT_EQ(Trim("\na\r\n"), "\na\r\n");
}

TEST(StringsTest, TrimWhitespaceTakesAllAsciiSpace) {
  EXPECT_EQ(TrimWhitespace(" \t\r\n\f\va b\n"), "a b");
  EXPECT_EQ(TrimWhitespace("\r\n"), "");
  EXPECT_EQ(TrimWhitespace(""), "");
  EXPECT_EQ(TrimWhitespace("0-3\n"), "0-3");
}

TEST(StringsTest, SplitKeepsEmptyParts) {
  EXPECT_EQ(Split("a,b", ','), (std::vector<std::string_view>{"a", "b"}));
  EXPECT_EQ(Split("a,,b", ','), (std::vector<std::string_view>{"a", "", "b"}));
  EXPECT_EQ(Split("", ','), (std::vector<std::string_view>{""}));
  EXPECT_EQ(Split("a,", ','), (std::vector<std::string_view>{"a", ""}));
  EXPECT_EQ(Split(",", ','), (std::vector<std::string_view>{"", ""}));
  EXPECT_EQ(Split("a:b", ','), (std::vector<std::string_view>{"a:b"}));
}

TEST(StringsTest, SplitListTrimsAndDropsEmptyItems) {
  EXPECT_EQ(SplitList(" a, b,,c "), (std::vector<std::string>{"a", "b", "c"}));
  EXPECT_EQ(SplitList(""), (std::vector<std::string>{}));
  EXPECT_EQ(SplitList(" , ,"), (std::vector<std::string>{}));
  EXPECT_EQ(SplitList("a:b: c", ':'), (std::vector<std::string>{"a", "b", "c"}));
  EXPECT_EQ(SplitList("a\n,b"), (std::vector<std::string>{"a\n", "b"}));  // blanks only
}

TEST(StringsTest, SplitNonEmptyDropsEmptyItemsAndKeepsBlanks) {
  EXPECT_EQ(SplitNonEmpty("a, b,,c"), (std::vector<std::string>{"a", " b", "c"}));
  EXPECT_EQ(SplitNonEmpty(",a,"), (std::vector<std::string>{"a"}));
  EXPECT_EQ(SplitNonEmpty(""), (std::vector<std::string>{}));
  EXPECT_EQ(SplitNonEmpty(",,"), (std::vector<std::string>{}));
  EXPECT_EQ(SplitNonEmpty("a:b", ':'), (std::vector<std::string>{"a", "b"}));
}

TEST(StringsTest, IsSpaceIsTheCLocalesSet) {
  for (int c = -128; c < 128; ++c) {
    bool c_locale = c >= 0 && std::isspace(c) != 0;
    EXPECT_EQ(IsSpace(static_cast<char>(c)), c_locale) << c;
  }
}

TEST(StringsTest, PrintableReplacesControlAndHighBytes) {
  EXPECT_EQ(Printable("a b~"), "a b~");
  EXPECT_EQ(Printable(std::string_view("a\0b\n\x7f\xC3\xA9", 7)), "a?b????");
  EXPECT_EQ(Printable("abcdef", 3), "abc");
  EXPECT_EQ(Printable("", 0), "");
}

TEST(StringsTest, QuoteForMessageMarksCutText) {
  EXPECT_EQ(QuoteForMessage("x\ty"), "'x?y'");
  EXPECT_EQ(QuoteForMessage(""), "''");
  EXPECT_EQ(QuoteForMessage("abcdef", 6), "'abcdef'");
  EXPECT_EQ(QuoteForMessage("abcdefg", 6), "'abcdef...'");
}

}  // namespace
}  // namespace berth
