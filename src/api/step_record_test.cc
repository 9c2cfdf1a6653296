#include "api/step_record.h"

#include <gtest/gtest.h>

#include <nlohmann/json.hpp>
#include <string>

namespace berth::api {
namespace {

using nlohmann::json;

StepRecord Ended() {
  StepRecord s;
  s.id = 3;
  s.attempt = 1;
  s.name = "python3";
  s.state = "FAILED";
  s.exit_code = 2;
  s.start = 1'700'000'000;
  s.end = 1'700'000'042;
  s.ntasks = 4;
  s.ncpus = 8;
  s.nodes = "n[1-2]";
  s.max_rss_kib = 204'800;
  s.max_rss_task = 2;
  s.max_rss_node = "n1";
  s.ave_rss_kib = 102'400;
  s.user_cpu_seconds = 12.5;
  s.system_cpu_seconds = 0.25;
  s.min_cpu_seconds = 1.5;
  s.min_cpu_task = 3;
  return s;
}

TEST(StepRecordTest, RoundTripsEndedAndRunningSteps) {
  const StepRecord ended = Ended();
  Result<StepRecord> back = DecodeStepRecord(EncodeStepRecord(ended));
  ASSERT_TRUE(back.ok()) << back.status().message();
  EXPECT_EQ(*back, ended);

  StepRecord running = Ended();
  running.state = "RUNNING";
  running.end = kNoTime;
  json j = EncodeStepRecord(running);
  EXPECT_FALSE(j.contains("end"));
  back = DecodeStepRecord(j);
  ASSERT_TRUE(back.ok()) << back.status().message();
  EXPECT_EQ(*back, running);
  EXPECT_FALSE(back->ended());
}

TEST(StepRecordTest, RefusesBadFieldsNamingTheKey) {
  struct Case {
    const char* key;
    json value;  // null: the key removed
    const char* message;
  };
  const Case cases[] = {
      {"state", "DONE", "\"state\": expected RUNNING, COMPLETED, FAILED or CANCELLED"},
      {"end", nullptr, "\"end\": required once the step has ended (state FAILED)"},
      {"end", 1'699'999'999, "\"end\": before the step's start"},
      {"exit_code", 256, "\"exit_code\""},
      {"term_signal", -1, "\"term_signal\""},
      {"ntasks", 0, "\"ntasks\""},
      {"id", "0", "\"id\""},
      {"max_rss_kib", -5, "\"max_rss_kib\""},
      {"user_cpu_seconds", -1.0, "\"user_cpu_seconds\": expected seconds of CPU time"},
      {"name", std::string(5000, 'x'), "\"name\": longer than 4096 bytes"},
  };
  for (const Case& c : cases) {
    json j = EncodeStepRecord(Ended());
    if (c.value.is_null()) {
      j.erase(c.key);
    } else {
      j[c.key] = c.value;
    }
    Result<StepRecord> r = DecodeStepRecord(j);
    ASSERT_FALSE(r.ok()) << c.key;
    EXPECT_NE(r.status().message().find(c.message), std::string::npos) << r.status().message();
  }
  json running = EncodeStepRecord(Ended());
  running["state"] = "RUNNING";
  Result<StepRecord> r = DecodeStepRecord(running);
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.status().message(), "\"end\": a RUNNING step has not ended");
  EXPECT_FALSE(DecodeStepRecord(json::array()).ok());
}

TEST(StepRecordTest, AStepLeftRunningEndsWithItsJob) {
  StepRecord s = Ended();
  s.state = "RUNNING";
  s.end = kNoTime;
  const StepRecord after = StepAfterJobEnd(s, 1'700'000'100);
  EXPECT_EQ(after.state, "CANCELLED");
  EXPECT_EQ(after.end, 1'700'000'100);
  // A clock that went back: never an end before the start.
  EXPECT_EQ(StepAfterJobEnd(s, 1).end, s.start);
  // An ended step is as it was.
  EXPECT_EQ(StepAfterJobEnd(Ended(), 1'800'000'000), Ended());
}

}  // namespace
}  // namespace berth::api
