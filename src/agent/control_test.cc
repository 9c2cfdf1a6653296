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
  Result<std::vector<ControlRequest>> got = ReadControlRequests(dir);
  ASSERT_TRUE(got.ok()) << got.status().ToString();
  ASSERT_EQ(got->size(), 2u);
  EXPECT_EQ((*got)[0].seq, 1);
  EXPECT_EQ((*got)[0].action, ControlRequest::Action::kSignal);
  EXPECT_EQ((*got)[0].signal, 10);
  EXPECT_TRUE((*got)[0].batch_only);
  EXPECT_EQ((*got)[1].seq, 2);
  EXPECT_EQ((*got)[1].action, ControlRequest::Action::kCancel);
  std::ofstream(dir + "/control") << R"({"requests": [{"seq": 1, "action": "explode"}]})";
  EXPECT_FALSE(ReadControlRequests(dir).ok());
  std::filesystem::remove_all(dir);
}

}  // namespace
}  // namespace berth::agent
