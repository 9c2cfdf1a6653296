#include "sim/text_scan.h"

#include <gtest/gtest.h>

#include <optional>
#include <string>
#include <vector>

namespace berth::sim::internal {
namespace {

std::vector<std::string> AllLines(std::string_view text) {
  std::vector<std::string> out;
  LineScanner scanner(text);
  std::string_view line;
  while (scanner.Next(&line)) out.emplace_back(line);
  return out;
}

TEST(LineScannerTest, SplitsLinesTheWayEditorsShowThem) {
  struct Case {
    std::string text;
    std::vector<std::string> lines;
  };
  const Case cases[] = {
      {"", {}},
      {"a", {"a"}},
      {"a\n", {"a"}},
      {"a\nb", {"a", "b"}},
      {"a\r\nb\r\n", {"a", "b"}},
      {"\n\n", {"", ""}},
      {"\xEF\xBB\xBFhead\nx", {"head", "x"}},
      {" \n", {" "}},
  };
  for (const Case& c : cases) EXPECT_EQ(AllLines(c.text), c.lines) << c.text;
}

TEST(LineScannerTest, CountsLinesFromOne) {
  LineScanner scanner("a\n\nc");
  std::string_view line;
  ASSERT_TRUE(scanner.Next(&line));
  EXPECT_EQ(scanner.line_number(), 1);
  ASSERT_TRUE(scanner.Next(&line));
  ASSERT_TRUE(scanner.Next(&line));
  EXPECT_EQ(line, "c");
  EXPECT_EQ(scanner.line_number(), 3);
  EXPECT_FALSE(scanner.Next(&line));
}

TEST(ParseNumberTest, ReadsWholeTokensOnly) {
  struct Case {
    std::string text;
    std::optional<int64_t> integer;
    std::optional<int64_t> number;
  };
  const Case cases[] = {
      {"0", 0, 0},
      {"-1", -1, -1},
      {"+5", 5, 5},
      {"552.21", std::nullopt, 552},
      {"66.0", std::nullopt, 66},
      {"1e3", std::nullopt, 1000},
      {"-0.5", std::nullopt, -1},  // rounded down
      {"1000000000000000", 1000000000000000, 1000000000000000},
      {"1000000000000001", std::nullopt, std::nullopt},
      {"99999999999999999999", std::nullopt, std::nullopt},
      {"1e400", std::nullopt, std::nullopt},
      {"nan", std::nullopt, std::nullopt},
      {"NaN", std::nullopt, std::nullopt},
      {"inf", std::nullopt, std::nullopt},
      {"-infinity", std::nullopt, std::nullopt},
      {"", std::nullopt, std::nullopt},
      {"+", std::nullopt, std::nullopt},
      {"12abc", std::nullopt, std::nullopt},
      {"1.5.2", std::nullopt, std::nullopt},
      {"0x10", std::nullopt, std::nullopt},
      {" 7", std::nullopt, std::nullopt},
  };
  for (const Case& c : cases) {
    EXPECT_EQ(ParseInteger(c.text), c.integer) << c.text;
    EXPECT_EQ(ParseNumber(c.text), c.number) << c.text;
  }
}

TEST(ParseDateTimeTest, IsPureCalendarArithmeticInUtc) {
  struct Case {
    std::string text;
    std::optional<int64_t> seconds;  // from Python's calendar.timegm
  };
  const Case cases[] = {
      {"1970-01-01 00:00:00", 0},
      {"2017-10-09 07:01:55", 1507532515},
      {"2017-10-09T07:01:55", 1507532515},
      {"2017-10-09 07:01", 1507532460},
      {"2016-02-29 23:59:59", 1456790399},
      {"2000-03-01 00:00:00", 951868800},
      {"1969-12-31 23:59:59", -1},
      {"2017-10-09", 1507507200},
      {" 2017-10-09 07:01:55 ", 1507532515},
      {"2017-02-29 00:00:00", std::nullopt},
      {"2017-13-01 00:00:00", std::nullopt},
      {"2017-00-10 00:00:00", std::nullopt},
      {"2017-10-09 24:00:00", std::nullopt},
      {"2017-10-09 07:60:00", std::nullopt},
      {"2017-10-09 07:01:55.5", std::nullopt},
      {"17-10-09 07:01:55", std::nullopt},
      {"2017/10/09 07:01:55", std::nullopt},
      {"", std::nullopt},
      {"garbage", std::nullopt},
  };
  for (const Case& c : cases) EXPECT_EQ(ParseDateTime(c.text), c.seconds) << c.text;
}

TEST(CsvSplitterTest, HandlesSpacesQuotesAndEmptyFields) {
  struct Case {
    std::string line;
    std::vector<std::string> fields;
  };
  const Case cases[] = {
      {"a,b,c", {"a", "b", "c"}},    {"m0,2, 12GB", {"m0", "2", "12GB"}},
      {"a,,c,", {"a", "", "c", ""}}, {"", {""}},
      {"\"x,y\",2", {"x,y", "2"}},   {" \"say \"\"hi\"\"\" , 3", {"say \"hi\"", "3"}},
      {"\"\",1", {"", "1"}},
  };
  CsvSplitter splitter;
  std::string error;
  for (const Case& c : cases) {
    ASSERT_TRUE(splitter.Split(c.line, &error)) << c.line << ": " << error;
    std::vector<std::string> got(splitter.fields().begin(), splitter.fields().end());
    EXPECT_EQ(got, c.fields) << c.line;
  }
}

TEST(CsvSplitterTest, RejectsBrokenQuotes) {
  CsvSplitter splitter;
  std::string error;
  EXPECT_FALSE(splitter.Split("a,\"open", &error));
  EXPECT_EQ(error, "unterminated quote in field 2");
  EXPECT_FALSE(splitter.Split("\"a\"b,c", &error));
  EXPECT_EQ(error, "text after the closing quote in field 1");
}

TEST(QuoteTest, KeepsMessagesShortAndPrintable) {
  EXPECT_EQ(Quote("abc"), "'abc'");
  EXPECT_EQ(Quote(std::string("a\0\x01\xff", 4)), "'a" + std::string(3, '?') + "'");
  EXPECT_EQ(Quote(std::string(50, 'x')), "'" + std::string(40, 'x') + "...'");
}

TEST(BadLineSinkTest, FailsFastUnlessSkipping) {
  Trace trace;
  BadLineSink strict("t.swf", false, &trace);
  Status s = strict.Report(7, "field 4 is wrong");
  EXPECT_EQ(s.ToString(), "INVALID_ARGUMENT: t.swf:7: field 4 is wrong");
  EXPECT_EQ(trace.skipped_bad, 0);

  BadLineSink lenient("t.swf", true, &trace);
  for (int i = 1; i <= 25; ++i) ASSERT_TRUE(lenient.Report(i, "bad").ok());
  EXPECT_EQ(trace.skipped_bad, 25);
  ASSERT_EQ(trace.bad_lines.size(), kMaxBadLineMessages);
  EXPECT_EQ(trace.bad_lines.front(), "t.swf:1: bad");
  EXPECT_EQ(trace.bad_lines.back(), "t.swf:20: bad");
}

TEST(PathTest, BaseNameAndExtension) {
  EXPECT_EQ(BaseName("/a/b/c.swf"), "c.swf");
  EXPECT_EQ(BaseName("c.swf"), "c.swf");
  EXPECT_EQ(LowerExtension("/x.y/Trace.JSONL"), "jsonl");
  EXPECT_EQ(LowerExtension("/x.y/trace"), "");
  EXPECT_EQ(LowerExtension(".hidden"), "");
}

}  // namespace
}  // namespace berth::sim::internal
