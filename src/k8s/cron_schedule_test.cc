// CronJob schedules: what the API server accepts and refuses, the next time after a time, and
// DST changes in a timeZone (from the system's tz database).
#include "k8s/cron_schedule.h"

#include <gtest/gtest.h>

#include <filesystem>

namespace berth::k8s {
namespace {

int64_t Utc(int64_t y, int mo, int d, int h, int mi) {
  return SecondsFromCivil({y, mo, d, h, mi, 0});
}

int64_t Next(std::string_view spec, int64_t after, const TimeZone& zone = TimeZone()) {
  Result<CronSchedule> s = ParseCronSchedule(spec);
  EXPECT_TRUE(s.ok()) << spec << ": " << s.status().message();
  if (!s.ok()) return -1;
  return NextScheduleTime(*s, zone, after).value_or(-1);
}

TEST(CronScheduleTest, NextMinuteAfterATime) {
  const int64_t t = Utc(2026, 12, 5, 2, 30) + 17;  // a Saturday
  EXPECT_EQ(Next("* * * * *", t), Utc(2026, 12, 5, 2, 31));
  EXPECT_EQ(Next("* * * * *", Utc(2026, 12, 5, 2, 30)), Utc(2026, 12, 5, 2, 31));  // strictly after
  EXPECT_EQ(Next("*/15 * * * *", t), Utc(2026, 12, 5, 2, 45));
  EXPECT_EQ(Next("5 4 * * *", t), Utc(2026, 12, 5, 4, 5));
  EXPECT_EQ(Next("5 1 * * *", t), Utc(2026, 12, 6, 1, 5));
  EXPECT_EQ(Next("0 0 1 * *", t), Utc(2027, 1, 1, 0, 0));
  EXPECT_EQ(Next("0 9 * * MON-FRI", t), Utc(2026, 12, 7, 9, 0));
  EXPECT_EQ(Next("0 9 * * 1-5/2", t), Utc(2026, 12, 7, 9, 0));  // Mon, Wed, Fri
  EXPECT_EQ(Next("0 12 * jan,Feb sun", t), Utc(2027, 1, 3, 12, 0));
  EXPECT_EQ(Next("30 2/6 * * *", t), Utc(2026, 12, 5, 8, 30));
  EXPECT_EQ(Next("0 0 29 2 *", t), Utc(2028, 2, 29, 0, 0));
  EXPECT_EQ(Next("? * * * ?", t), Utc(2026, 12, 5, 2, 31));
  // Day of month and day of week both restricted: either matches (the 13th, or any Friday).
  EXPECT_EQ(Next("0 0 13 * 5", t), Utc(2026, 12, 11, 0, 0));
  // One of them a star: both must match.
  EXPECT_EQ(Next("0 0 13 * *", t), Utc(2026, 12, 13, 0, 0));
  EXPECT_EQ(Next("0 0 */1 * 0", t), Utc(2026, 12, 6, 0, 0));
}

TEST(CronScheduleTest, Descriptors) {
  const int64_t t = Utc(2026, 12, 5, 2, 30);
  EXPECT_EQ(Next("@hourly", t), Utc(2026, 12, 5, 3, 0));
  EXPECT_EQ(Next("@daily", t), Utc(2026, 12, 6, 0, 0));
  EXPECT_EQ(Next("@midnight", t), Utc(2026, 12, 6, 0, 0));
  EXPECT_EQ(Next("@weekly", t), Utc(2026, 12, 6, 0, 0));  // Sunday
  EXPECT_EQ(Next("@monthly", t), Utc(2027, 1, 1, 0, 0));
  EXPECT_EQ(Next("@yearly", t), Utc(2027, 1, 1, 0, 0));
  EXPECT_EQ(Next("@annually", t), Utc(2027, 1, 1, 0, 0));
  EXPECT_EQ(Next("@every 90s", t), t + 90);
  EXPECT_EQ(Next("@every 1h30m", t), t + 5400);
  EXPECT_EQ(Next("@every 500ms", t), t + 1);
}

TEST(CronScheduleTest, RefusesWhatTheApiServerRefuses) {
  struct Case {
    const char* spec;
    const char* message;
  } cases[] = {
      {"", "empty spec string"},
      {"* * * *", "expected exactly 5 fields, found 4: [* * * *]"},
      {"0 0 * * * *", "expected exactly 5 fields, found 6: [0 0 * * * *]"},
      {"60 * * * *", "end of range (60) above maximum (59): 60"},
      {"* * 0 * *", "beginning of range (0) below minimum (1): 0"},
      {"* * * * 7", "end of range (7) above maximum (6): 7"},
      {"5-2 * * * *", "beginning of range (5) beyond end of range (2): 5-2"},
      {"*/0 * * * *", "step of range should be a positive number: */0"},
      {"1-2-3 * * * *", "too many hyphens: 1-2-3"},
      {"*/2/3 * * * *", "too many slashes: */2/3"},
      {"x * * * *", "failed to parse int from x: strconv.Atoi: parsing \"x\": invalid syntax"},
      {"* * * FOO *",
       "failed to parse int from FOO: strconv.Atoi: parsing \"FOO\": invalid syntax"},
      {"@fortnightly", "unrecognized descriptor: @fortnightly"},
      {"@every", "failed to parse duration @every: time: invalid duration \"\""},
      {"@every 5 minutes", "failed to parse duration @every 5 minutes: time: unknown unit"},
      {"CRON_TZ=UTC 0 * * * *", "cannot use TZ or CRON_TZ in schedule, use timeZone field instead"},
      {"TZ=Europe/Berlin 0 * * * *", "cannot use TZ or CRON_TZ"},
  };
  for (const Case& c : cases) {
    Result<CronSchedule> s = ParseCronSchedule(c.spec);
    ASSERT_FALSE(s.ok()) << c.spec;
    EXPECT_EQ(s.status().message().rfind(c.message, 0), 0u)
        << c.spec << ": " << s.status().message();
  }
}

TEST(CronScheduleTest, NoTimeForADateThatNeverComes) {
  Result<CronSchedule> s = ParseCronSchedule("0 0 30 2 *");
  ASSERT_TRUE(s.ok());
  EXPECT_FALSE(NextScheduleTime(*s, TimeZone(), Utc(2026, 1, 1, 0, 0)));
}

class ZoneTest : public ::testing::Test {
 protected:
  void SetUp() override {
    if (!std::filesystem::exists("/usr/share/zoneinfo/Europe/Berlin")) {
      GTEST_SKIP() << "no tz database in /usr/share/zoneinfo";
    }
  }
};

TEST_F(ZoneTest, LoadsZonesAndRefusesOthers) {
  Result<TimeZone> berlin = TimeZone::Load("Europe/Berlin");
  ASSERT_TRUE(berlin.ok()) << berlin.status().message();
  EXPECT_EQ(berlin->OffsetAt(Utc(2026, 1, 15, 12, 0)), 3600);
  EXPECT_EQ(berlin->OffsetAt(Utc(2026, 7, 15, 12, 0)), 7200);
  EXPECT_EQ(berlin->OffsetAt(Utc(2090, 7, 15, 12, 0)), 7200);  // past any table: the footer rule
  Result<TimeZone> kolkata = TimeZone::Load("Asia/Kolkata");
  ASSERT_TRUE(kolkata.ok());
  EXPECT_EQ(kolkata->OffsetAt(Utc(2026, 1, 15, 12, 0)), 19800);
  Result<TimeZone> unknown = TimeZone::Load("Mars/Olympus_Mons");
  ASSERT_FALSE(unknown.ok());
  EXPECT_EQ(unknown.status().message(), "unknown time zone Mars/Olympus_Mons");
  for (const char* bad : {"Local", "../etc/passwd", "/etc/localtime", "Europe/../UTC", ""}) {
    EXPECT_FALSE(TimeZone::Load(bad).ok()) << bad;
  }
}

TEST_F(ZoneTest, NextTimeInAZone) {
  Result<TimeZone> ny = TimeZone::Load("America/New_York");
  ASSERT_TRUE(ny.ok());
  // 09:00 in New York in winter is 14:00 UTC.
  EXPECT_EQ(Next("0 9 * * *", Utc(2026, 1, 10, 0, 0), *ny), Utc(2026, 1, 10, 14, 0));
  // In summer 13:00 UTC.
  EXPECT_EQ(Next("0 9 * * *", Utc(2026, 7, 10, 0, 0), *ny), Utc(2026, 7, 10, 13, 0));
}

TEST_F(ZoneTest, SpringForwardSkipsTheMissingHour) {
  Result<TimeZone> berlin = TimeZone::Load("Europe/Berlin");
  ASSERT_TRUE(berlin.ok());
  // 2026-03-29: 02:00 CET becomes 03:00 CEST (01:00 UTC). 02:30 does not exist that day.
  EXPECT_EQ(Next("30 2 * * *", Utc(2026, 3, 28, 12, 0), *berlin), Utc(2026, 3, 30, 0, 30));
  // Every 30 minutes: 01:30 CET (00:30 UTC), then 03:00 CEST (01:00 UTC).
  EXPECT_EQ(Next("*/30 * * * *", Utc(2026, 3, 29, 0, 30), *berlin), Utc(2026, 3, 29, 1, 0));
  EXPECT_EQ(Next("0 3 * * *", Utc(2026, 3, 28, 12, 0), *berlin), Utc(2026, 3, 29, 1, 0));
}

TEST_F(ZoneTest, FallBackRepeatsTheHour) {
  Result<TimeZone> berlin = TimeZone::Load("Europe/Berlin");
  ASSERT_TRUE(berlin.ok());
  // 2026-10-25: 03:00 CEST becomes 02:00 CET (01:00 UTC); 02:30 comes twice.
  const int64_t first = Next("30 2 * * *", Utc(2026, 10, 24, 12, 0), *berlin);
  EXPECT_EQ(first, Utc(2026, 10, 25, 0, 30));
  EXPECT_EQ(Next("30 2 * * *", first, *berlin), Utc(2026, 10, 25, 1, 30));
  EXPECT_EQ(Next("30 2 * * *", Utc(2026, 10, 25, 1, 30), *berlin), Utc(2026, 10, 26, 1, 30));
}

TEST(PosixTzTest, RulesOfTheFooter) {
  Result<PosixTz> cet = ParsePosixTz("CET-1CEST,M3.5.0,M10.5.0/3");
  ASSERT_TRUE(cet.ok());
  EXPECT_EQ(cet->std_offset, 3600);
  EXPECT_EQ(cet->dst_offset, 7200);
  EXPECT_EQ(PosixTzOffset(*cet, Utc(2026, 3, 29, 0, 59)), 3600);
  EXPECT_EQ(PosixTzOffset(*cet, Utc(2026, 3, 29, 1, 0)), 7200);
  EXPECT_EQ(PosixTzOffset(*cet, Utc(2026, 10, 25, 0, 59)), 7200);
  EXPECT_EQ(PosixTzOffset(*cet, Utc(2026, 10, 25, 1, 0)), 3600);
  // Southern hemisphere: DST across the new year.
  Result<PosixTz> nz = ParsePosixTz("NZST-12NZDT,M9.5.0,M4.1.0/3");
  ASSERT_TRUE(nz.ok());
  EXPECT_EQ(PosixTzOffset(*nz, Utc(2026, 1, 10, 0, 0)), 13 * 3600);
  EXPECT_EQ(PosixTzOffset(*nz, Utc(2026, 6, 10, 0, 0)), 12 * 3600);
  Result<PosixTz> plus3 = ParsePosixTz("<+03>-3");
  ASSERT_TRUE(plus3.ok());
  EXPECT_EQ(PosixTzOffset(*plus3, 0), 3 * 3600);
  for (const char* bad : {"", "X1", "CET-1CEST,M13.5.0,M10.5.0", "CET-1CEST,M3.5.0", "<+03"}) {
    EXPECT_FALSE(ParsePosixTz(bad).ok()) << bad;
  }
}

TEST(CivilTest, DaysAndWeekdays) {
  EXPECT_EQ(DaysFromCivil(1970, 1, 1), 0);
  EXPECT_EQ(Weekday(1970, 1, 1), 4);
  EXPECT_EQ(Weekday(2026, 12, 5), 6);
  EXPECT_EQ(Weekday(1969, 12, 28), 0);
  CivilTime c = CivilFromSeconds(Utc(2028, 2, 29, 23, 59) + 7);
  EXPECT_EQ(c.year, 2028);
  EXPECT_EQ(c.month, 2);
  EXPECT_EQ(c.day, 29);
  EXPECT_EQ(c.second, 7);
}

}  // namespace
}  // namespace berth::k8s
