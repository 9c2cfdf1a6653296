#include "common/slurm_time.h"

#include <gtest/gtest.h>

namespace berth {
namespace {

struct ParseCase {
  std::string text;
  Duration limit;    // ParseTimeLimit
  Duration seconds;  // ParseTimeSeconds
};

constexpr Duration kMin = 60;
constexpr Duration kHour = 3600;
constexpr Duration kDay = 86400;

TEST(SlurmTimeTest, Parse) {
  const ParseCase cases[] = {
      // minutes
      {"15", 15 * kMin, 15 * kMin},
      {"90", 90 * kMin, 90 * kMin},
      {"007", 7 * kMin, 7 * kMin},
      // minutes:seconds; a partial minute rounds up
      {"10:00", 10 * kMin, 10 * kMin},
      {"2:00", 2 * kMin, 2 * kMin},
      {"0:30", 1 * kMin, 30},
      {"1:01", 2 * kMin, 61},
      {"0:59", 1 * kMin, 59},
      {"5:90", 7 * kMin, 5 * kMin + 90},
      // hours:minutes:seconds, fields not range checked
      {"1:00:00", kHour, kHour},
      {"00:30:00", 30 * kMin, 30 * kMin},
      {"11:59:00", 11 * kHour + 59 * kMin, 11 * kHour + 59 * kMin},
      {"60:00:00", 60 * kHour, 60 * kHour},
      {"100:00:00", 100 * kHour, 100 * kHour},
      {"1:99:99", 161 * kMin, kHour + 99 * kMin + 99},
      {"0:0:1", kMin, 1},
      // days-hours[:minutes[:seconds]]
      {"1-0", kDay, kDay},
      {"2-12", 2 * kDay + 12 * kHour, 2 * kDay + 12 * kHour},
      {"5-0:0", 5 * kDay, 5 * kDay},
      {"1-0:00:00", kDay, kDay},
      {"0-00:10:00", 10 * kMin, 10 * kMin},
      {"14-00:00:00", 14 * kDay, 14 * kDay},
      {"1-2:3:4", kDay + 2 * kHour + 4 * kMin, kDay + 2 * kHour + 3 * kMin + 4},
      {"3-", 3 * kDay, 3 * kDay},  // Slurm reads "D-" as D days
      // no limit
      {"UNLIMITED", kInfinite, kInfinite},
      {"unlimited", kInfinite, kInfinite},
      {"Infinite", kInfinite, kInfinite},
      {"-1", kInfinite, kInfinite},
      // zero means no limit for --time, but is zero seconds
      {"0", kInfinite, 0},
      {"0:0", kInfinite, 0},
      {"00:00:00", kInfinite, 0},
      {"0-0", kInfinite, 0},
      // the largest accepted value
      {"24855-03:14:07", 24855 * kDay + 3 * kHour + 15 * kMin, 2147483647},
  };
  for (const ParseCase& c : cases) {
    Result<Duration> limit = ParseTimeLimit(c.text);
    ASSERT_TRUE(limit.ok()) << c.text << ": " << limit.status().ToString();
    EXPECT_EQ(*limit, c.limit) << c.text;
    Result<Duration> secs = ParseTimeSeconds(c.text);
    ASSERT_TRUE(secs.ok()) << c.text << ": " << secs.status().ToString();
    EXPECT_EQ(*secs, c.seconds) << c.text;
  }
}

TEST(SlurmTimeTest, ParseErrors) {
  const char* bad[] = {"",
                       "abc",
                       "1h",
                       "1:2:3:4",
                       "1-2-3",
                       "1:2-3",
                       ":5",
                       "5:",
                       "1::2",
                       "1-:5",
                       "1-2:",
                       "1-2:3:",
                       " 15",
                       "15 ",
                       "+15",
                       "1.5",
                       "-",
                       "-5",
                       "-1:30",
                       "inf",
                       "$t",
                       "1-2:3:4:5",
                       "24855-03:14:08",
                       "9999999999999",
                       "1- 2"};
  for (const char* text : bad) {
    Result<Duration> limit = ParseTimeLimit(text);
    ASSERT_FALSE(limit.ok()) << text;
    EXPECT_EQ(limit.status().code(), StatusCode::kInvalidArgument);
    EXPECT_NE(limit.status().message().find("'" + std::string(text) + "'"), std::string::npos)
        << limit.status().message();
    EXPECT_FALSE(ParseTimeSeconds(text).ok()) << text;
  }
}

struct FormatCase {
  Duration seconds;
  std::string scontrol;
  std::string elapsed;
  std::string squeue_limit;
};

TEST(SlurmTimeTest, Format) {
  const FormatCase cases[] = {
      {0, "00:00:00", "0:00", "0:00"},
      {59, "00:00:59", "0:59", "0:59"},
      {303, "00:05:03", "5:03", "5:03"},
      {30 * kMin, "00:30:00", "30:00", "30:00"},
      {3 * kMin, "00:03:00", "3:00", "3:00"},
      {kHour, "01:00:00", "1:00:00", "1:00:00"},
      {3723, "01:02:03", "1:02:03", "1:02:03"},
      {20 * kHour, "20:00:00", "20:00:00", "20:00:00"},
      {11 * kHour + 59 * kMin, "11:59:00", "11:59:00", "11:59:00"},
      {kDay, "1-00:00:00", "1-00:00:00", "1-00:00:00"},
      {93784, "1-02:03:04", "1-02:03:04", "1-02:03:04"},
      {2 * kDay + 12 * kHour, "2-12:00:00", "2-12:00:00", "2-12:00:00"},
      {4 * kDay + 4 * kHour, "4-04:00:00", "4-04:00:00", "4-04:00:00"},
      {14 * kDay, "14-00:00:00", "14-00:00:00", "14-00:00:00"},
      {365 * kDay, "365-00:00:00", "365-00:00:00", "365-00:00:00"},
      {365 * kDay + 1, "365-00:00:01", "INVALID", "INVALID"},
      {-1, "INVALID", "INVALID", "INVALID"},
      {kInfinite, "UNLIMITED", "INVALID", "UNLIMITED"},
  };
  for (const FormatCase& c : cases) {
    EXPECT_EQ(FormatTimeLimit(c.seconds), c.scontrol) << c.seconds;
    EXPECT_EQ(FormatElapsed(c.seconds), c.elapsed) << c.seconds;
    EXPECT_EQ(FormatTimeLimitSqueue(c.seconds), c.squeue_limit) << c.seconds;
  }
}

// What the real Slurm 22.05 printed as TimeLimit= for the oracle scripts' --time values.
TEST(SlurmTimeTest, OracleTimeLimits) {
  const std::pair<const char*, const char*> cases[] = {
      {"3:00", "00:03:00"},
      {"00:05:00", "00:05:00"},
      {"00:30:00", "00:30:00"},
      {"60:00:00", "2-12:00:00"},
      {"14-00:00:00", "14-00:00:00"},
      {"4:00:00", "04:00:00"},
      {"20:00:00", "20:00:00"},
      {"100:00:00", "4-04:00:00"},
      {"48:00:00", "2-00:00:00"},
      {"1-0:00:00", "1-00:00:00"},
      {"7-00:00:00", "7-00:00:00"},
      {"10:00", "00:10:00"},
      {"0-00:10:00", "00:10:00"},
      {"11:59:00", "11:59:00"},
      {"5-0:0", "5-00:00:00"},
      {"2:00", "00:02:00"},
      {"15", "00:15:00"},
      {"0", "UNLIMITED"},
      {"2:00:00", "02:00:00"},
      {"00:06:00", "00:06:00"},
  };
  for (const auto& [text, want] : cases) {
    Result<Duration> limit = ParseTimeLimit(text);
    ASSERT_TRUE(limit.ok()) << text;
    EXPECT_EQ(FormatTimeLimit(*limit), want) << text;
  }
}

TEST(SlurmTimeTest, FormatThenParseRoundTrips) {
  for (Duration minutes : {1, 2, 59, 60, 61, 1439, 1440, 1441, 10080, 20160, 35791394}) {
    Duration limit = minutes * kMin;
    Result<Duration> again = ParseTimeLimit(FormatTimeLimit(limit));
    ASSERT_TRUE(again.ok()) << minutes;
    EXPECT_EQ(*again, limit);
  }
}

}  // namespace
}  // namespace berth
