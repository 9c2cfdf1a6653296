#include "common/strings.h"

#include <gtest/gtest.h>

#include <cctype>
#include <iterator>
#include <nlohmann/json.hpp>
#include <random>
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

TEST(StringsTest, IsUtf8FollowsRfc3629) {
  EXPECT_TRUE(IsUtf8(""));
  EXPECT_TRUE(IsUtf8("plain ascii"));
  EXPECT_TRUE(IsUtf8("caf\xC3\xA9 \xE2\x82\xAC \xF0\x9F\x9A\xA2"));  // é, €, 🚢
  EXPECT_TRUE(IsUtf8("\xF4\x8F\xBF\xBF"));                           // U+10FFFF
  EXPECT_FALSE(IsUtf8("\xFF"));
  EXPECT_FALSE(IsUtf8("caf\xE9"));           // Latin-1 é
  EXPECT_FALSE(IsUtf8("\xC3"));              // cut short
  EXPECT_FALSE(IsUtf8("\xE2\x82"));          // cut short
  EXPECT_FALSE(IsUtf8("\x80"));              // a continuation first
  EXPECT_FALSE(IsUtf8("\xC0\xAF"));          // overlong '/'
  EXPECT_FALSE(IsUtf8("\xE0\x80\xAF"));      // overlong '/'
  EXPECT_FALSE(IsUtf8("\xED\xA0\x80"));      // a surrogate
  EXPECT_FALSE(IsUtf8("\xF4\x90\x80\x80"));  // above U+10FFFF
  EXPECT_FALSE(IsUtf8("\xE2\x28\xA1"));      // a bad continuation
}

// The property the JSON layer relies on: IsUtf8 says yes exactly when nlohmann's strict dump
// takes the text, over short random byte strings weighted toward the bytes UTF-8 cares about.
TEST(StringsTest, IsUtf8AgreesWithTheJsonEncoder) {
  std::mt19937 rng(7);
  const unsigned char interesting[] = {0x00, 0x41, 0x7f, 0x80, 0x8f, 0x90, 0x9f, 0xa0, 0xbf, 0xc0,
                                       0xc1, 0xc2, 0xdf, 0xe0, 0xed, 0xef, 0xf0, 0xf4, 0xf5, 0xff};
  int valid = 0;
  for (int n = 0; n < 20000; ++n) {
    std::string s(rng() % 6, '\0');
    for (char& c : s) c = static_cast<char>(interesting[rng() % std::size(interesting)]);
    bool json_ok = true;
    try {
      (void)nlohmann::json(s).dump();
    } catch (const nlohmann::json::type_error&) {
      json_ok = false;
    }
    ASSERT_EQ(IsUtf8(s), json_ok) << QuoteForMessage(s);
    valid += json_ok ? 1 : 0;
  }
  EXPECT_GT(valid, 1000);  // both answers were exercised
}

}  // namespace
}  // namespace berth
