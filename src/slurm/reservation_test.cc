#include "slurm/reservation.h"

#include <gtest/gtest.h>

namespace berth::slurm {
namespace {

using nlohmann::json;

const config::UtcOffset kUtc = [](Time) { return int64_t{0}; };
constexpr Time kNow = 1'800'000'000;

TEST(ReservationWordsTest, CreateReadsSlurmsKeysTimesAndDurations) {
  Result<ReservationRequest> r = ParseReservationWords(
      {"ReservationName=maint", "StartTime=now+1hour", "Duration=90", "Nodes=n[1-2]",
       "users=root,alice", "Flags=MAINT,IGNORE_JOBS", "PartitionName=main"},
      true, kNow, kUtc);
  ASSERT_TRUE(r.ok()) << r.status().message();
  EXPECT_EQ(r->name, "maint");
  EXPECT_EQ(r->body["start"], kNow + 3600);
  EXPECT_EQ(r->body["duration"], 90 * 60);  // minutes, as Slurm's time_str2mins
  EXPECT_EQ(r->body["nodes"], "n[1-2]");
  EXPECT_EQ(r->body["users"], json({"root", "alice"}));
  EXPECT_EQ(r->body["flags"], "MAINT,IGNORE_JOBS");
  EXPECT_EQ(r->body["partition"], "main");
}

TEST(ReservationWordsTest, DurationFormsAndEndTimes) {
  struct Case {
    const char* duration;
    int64_t seconds;
  } cases[] = {
      {"30", 1800},        {"1:30:00", 5400},          {"2-00:00:00", 2 * 86400},
      {"1-12", 36 * 3600}, {"UNLIMITED", 365 * 86400},
  };
  for (const Case& c : cases) {
    Result<ReservationRequest> r = ParseReservationWords(
        {"StartTime=now", std::string("Duration=") + c.duration, "NodeCnt=1", "Accounts=a"}, true,
        kNow, kUtc);
    ASSERT_TRUE(r.ok()) << c.duration;
    EXPECT_EQ(r->body["duration"], c.seconds) << c.duration;
    EXPECT_EQ(r->body["start"], kNow);
    EXPECT_EQ(r->body["node_count"], 1);
  }
  Result<ReservationRequest> iso = ParseReservationWords(
      {"StartTime=2027-01-15T10:00:00", "EndTime=2027-01-15T12:30", "Nodes=n1", "Users=a"}, true,
      kNow, kUtc);
  ASSERT_TRUE(iso.ok());
  EXPECT_EQ(iso->body["start"], 1800007200);  // 2027-01-15T10:00:00 in UTC
  EXPECT_EQ(iso->body["end"].get<Time>() - iso->body["start"].get<Time>(), 9000);
}

TEST(ReservationWordsTest, RefusesWhatSlurmRefuses) {
  struct Case {
    std::vector<std::string> words;
    const char* message;
  } cases[] = {
      {{"Duration=10", "Nodes=n1", "Users=a"},
       "A start time must be specified.  No reservation created."},
      {{"StartTime=now", "Nodes=n1", "Users=a"},
       "An end time or duration must be specified.  No reservation created."},
      {{"StartTime=now", "Duration=10", "Users=a"},
       "Nodes, NodeCnt, CoreCnt, TRES or Watts must be specified.  No reservation created."},
      {{"StartTime=now", "Duration=10", "Nodes=n1"},
       "Either Users/Groups and/or Accounts must be specified.  No reservation created."},
      {{"StartTime=now", "Duration=1:2:3:4", "Nodes=n1", "Users=a"}, "Invalid duration 1:2:3:4"},
      {{"StartTime=whenever", "Duration=10", "Nodes=n1", "Users=a"},
       "Invalid StartTime specification: whenever"},
      {{"Bogus=1"}, "Unknown parameter Bogus=1.  Request aborted"},
      {{"StartTime=now", "Duration=10", "NodeCnt=x", "Users=a"}, "Invalid node count x"},
  };
  for (const Case& c : cases) {
    Result<ReservationRequest> r = ParseReservationWords(c.words, true, kNow, kUtc);
    ASSERT_FALSE(r.ok()) << c.message;
    EXPECT_EQ(r.status().message(), c.message);
  }
  EXPECT_FALSE(ParseReservationWords({"Duration=10"}, false, kNow, kUtc).ok());  // no name
  Result<ReservationRequest> u =
      ParseReservationWords({"ReservationName=r", "Duration=10"}, false, kNow, kUtc);
  ASSERT_TRUE(u.ok());
  EXPECT_FALSE(u->body.contains("name"));
  EXPECT_EQ(u->body["duration"], 600);
}

json Record() {
  return {{"name", "maint"}, {"start", kNow},    {"end", kNow + 3600}, {"nodes", {"n1", "n2"}},
          {"node_count", 2}, {"core_count", 16}, {"users", {"root"}},  {"accounts", json::array()},
          {"partition", ""}, {"flags", "MAINT"}, {"state", "INACTIVE"}};
}

TEST(ReservationFormatTest, ScontrolShowsSlurmsLayout) {
  std::string text = FormatScontrolReservation(Record(), false);
  EXPECT_NE(text.find("ReservationName=maint StartTime="), std::string::npos) << text;
  EXPECT_NE(text.find(" Duration=01:00:00\n   Nodes=n[1-2] NodeCnt=2 CoreCnt=16 Features=(null) "
                      "PartitionName=(null) Flags=MAINT\n   TRES=cpu=16\n   Users=root "
                      "Groups=(null) Accounts=(null) Licenses=(null) State=INACTIVE "
                      "BurstBuffer=(null) Watts=n/a\n   MaxStartDelay=(null)\n\n"),
            std::string::npos)
      << text;
  std::string one = FormatScontrolReservation(Record(), true);
  EXPECT_EQ(one.find('\n'), one.size() - 1);
}

TEST(ReservationFormatTest, SinfoTShowsOneLineEach) {
  std::string text = FormatSinfoReservations(json::array({Record()}), false);
  EXPECT_EQ(text.substr(0, text.find('\n')),
            "RESV_NAME     STATE           START_TIME             END_TIME     DURATION  "
            "NODELIST");
  EXPECT_NE(text.find("\nmaint      INACTIVE  "), std::string::npos) << text;
  EXPECT_NE(text.find("     01:00:00  n[1-2]\n"), std::string::npos) << text;
  EXPECT_EQ(FormatSinfoReservations(json::array({Record()}), true).find("RESV_NAME"),
            std::string::npos);
}

}  // namespace
}  // namespace berth::slurm
