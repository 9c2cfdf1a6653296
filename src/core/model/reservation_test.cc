#include "core/model/reservation.h"

#include <gtest/gtest.h>

namespace berth::core {
namespace {

TEST(ResvFlagsTest, ParsesSlurmsWordsInAnyCase) {
  struct Case {
    const char* text;
    uint32_t flags;
  } cases[] = {
      {"MAINT", kResvMaint},       {"maint,ignore_jobs", kResvMaint | kResvIgnoreJobs},
      {"DAILY", kResvDaily},       {"Weekly,MAINT", kResvWeekly | kResvMaint},
      {"MAINTENANCE", kResvMaint}, {"", 0},
  };
  for (const Case& c : cases) {
    Result<uint32_t> f = ParseResvFlags(c.text);
    ASSERT_TRUE(f.ok()) << c.text;
    EXPECT_EQ(*f, c.flags) << c.text;
  }
  EXPECT_EQ(ResvFlagsText(kResvWeekly | kResvMaint | kResvIgnoreJobs), "MAINT,IGNORE_JOBS,WEEKLY");
  EXPECT_EQ(ResvFlagsText(kResvSpecNodes | kResvMaint), "MAINT,SPEC_NODES");
}

TEST(ResvFlagsTest, RefusesUnknownFlagsAndDailyWithWeekly) {
  EXPECT_FALSE(ParseResvFlags("MAINT,BOGUS").ok());
  EXPECT_NE(ParseResvFlags("BOGUS").status().message().find("BOGUS"), std::string::npos);
  EXPECT_FALSE(ParseResvFlags("DAILY,WEEKLY").ok());
}

TEST(ResvSpecTest, AllowsListedUsersOrAccounts) {
  ResvSpec r;
  r.users = {"alice"};
  r.accounts = {"physics"};
  EXPECT_TRUE(r.Allows("alice", "other"));
  EXPECT_TRUE(r.Allows("bob", "physics"));
  EXPECT_FALSE(r.Allows("bob", "chemistry"));
}

TEST(ResvSpecTest, RepeatingReservationsMoveToTheirNextOccurrence) {
  ResvSpec r;
  r.start = 1000;
  r.end = 2000;
  r.flags = kResvDaily;
  ResvSpec next = NextOccurrence(r, 2000);
  EXPECT_EQ(next.start, 1000 + 86400);
  EXPECT_EQ(next.end, 2000 + 86400);
  next = NextOccurrence(r, 2000 + 3 * 86400);  // three days missed
  EXPECT_EQ(next.start, 1000 + 4 * 86400);
  r.flags = kResvWeekly;
  EXPECT_EQ(NextOccurrence(r, 5000).start, 1000 + 7 * 86400);
  r.flags = 0;
  EXPECT_EQ(NextOccurrence(r, 5000).start, 1000);  // not repeating: unchanged
}

}  // namespace
}  // namespace berth::core
