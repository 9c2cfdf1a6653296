#include "agent/control.h"

#include <gtest/gtest.h>
#include <stdlib.h>

#include <filesystem>
#include <fstream>

namespace berth::agent {
namespace {

TEST(ControlTest, AppendsInOrderWithSequenceNumbers) {
  char tmpl[] = "/tmp/berth-control-test-XXXXXX";
  std::string dir = mkdtemp(tmpl);
  EXPECT_TRUE(ReadControlRequests(dir)->empty());
  ASSERT_TRUE(AppendControlRequest(dir, {0, ControlRequest::Action::kSignal, 10, true}).ok());
  ASSERT_TRUE(AppendControlRequest(dir, {0, ControlRequest::Action::kCancel, 0, false}).ok());
  ASSERT_TRUE(
      AppendControlRequest(dir, {0, ControlRequest::Action::kSignal, 12, false, true}).ok());
  Result<std::vector<ControlRequest>> got = ReadControlRequests(dir);
  ASSERT_TRUE(got.ok()) << got.status().ToString();
  ASSERT_EQ(got->size(), 3u);
  EXPECT_FALSE((*got)[0].full);
  EXPECT_TRUE((*got)[2].full);
  EXPECT_FALSE((*got)[2].batch_only);
  EXPECT_EQ((*got)[0].seq, 1);
  EXPECT_EQ((*got)[0].action, ControlRequest::Action::kSignal);
  EXPECT_EQ((*got)[0].signal, 10);
  EXPECT_TRUE((*got)[0].batch_only);
  EXPECT_EQ((*got)[1].seq, 2);
  EXPECT_EQ((*got)[1].action, ControlRequest::Action::kCancel);
  ControlRequest step{0, ControlRequest::Action::kSignal, 9, false};
  step.step = 2;
  ASSERT_TRUE(AppendControlRequest(dir, step).ok());
  got = ReadControlRequests(dir);
  ASSERT_TRUE(got.ok());
  EXPECT_EQ((*got)[3].step, 2);
  EXPECT_EQ((*got)[0].step, -1);
  std::ofstream(dir + "/control") << R"({"requests": [{"seq": 1, "action": "explode"}]})";
  EXPECT_FALSE(ReadControlRequests(dir).ok());
  std::ofstream(dir + "/control")
      << R"({"requests": [{"seq": 1, "action": "signal", "signal": 9, "step": "x"}]})";
  EXPECT_FALSE(ReadControlRequests(dir).ok());
  std::filesystem::remove_all(dir);
}

TEST(ControlTest, TimeLimitRequestsCarryTheirLimit) {
  char tmpl[] = "/tmp/berth-control-test-XXXXXX";
  std::string dir = mkdtemp(tmpl);
  ControlRequest r;
  r.action = ControlRequest::Action::kTimeLimit;
  r.time_limit = 7200;
  ASSERT_TRUE(AppendControlRequest(dir, r).ok());
  Result<std::vector<ControlRequest>> got = ReadControlRequests(dir);
  ASSERT_TRUE(got.ok()) << got.status().ToString();
  ASSERT_EQ(got->size(), 1u);
  EXPECT_EQ((*got)[0].action, ControlRequest::Action::kTimeLimit);
  EXPECT_EQ((*got)[0].time_limit, 7200);
  for (const char* bad :
       {R"({"requests": [{"seq": 1, "action": "time_limit"}]})",
        R"({"requests": [{"seq": 1, "action": "time_limit", "time_limit": 0}]})",
        R"({"requests": [{"seq": 1, "action": "time_limit", "time_limit": "1"}]})"}) {
    std::ofstream(dir + "/control") << bad;
    EXPECT_FALSE(ReadControlRequests(dir).ok()) << bad;
  }
  std::filesystem::remove_all(dir);
}

}  // namespace
}  // namespace berth::agent
