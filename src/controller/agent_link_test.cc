#include "controller/agent_link.h"

#include <gtest/gtest.h>

namespace berth::controller {
namespace {

TEST(AgentLinkTest, FencingComesWellBeforeTheNodeTimeout) {
  EXPECT_EQ(AgentLink::FenceSeconds(60), 30);
  EXPECT_EQ(AgentLink::FenceSeconds(1), 1);
  EXPECT_EQ(AgentLink::FenceSeconds(0), 1);
}

TEST(AgentLinkTest, ReportsCountOnlyFromARegisteredAgent) {
  AgentHub hub;
  AgentLink link(&hub);
  EXPECT_EQ(link.Heard("n1", 100).code(), StatusCode::kFailedPrecondition);
  link.Register("n1", 100);
  EXPECT_TRUE(link.Registered("n1"));
  EXPECT_TRUE(link.Heard("n1", 130).ok());
  EXPECT_EQ(link.Find("n1")->last_seen, 130);
  link.Disconnect("n1");
  EXPECT_FALSE(link.Registered("n1"));
  EXPECT_EQ(link.Heard("n1", 140).code(), StatusCode::kFailedPrecondition);
  EXPECT_EQ(link.Find("n1")->last_seen, 130);  // a refused report is no contact
}

TEST(AgentLinkTest, SilenceIsCountedFromTheLastContact) {
  AgentHub hub;
  AgentLink link(&hub);
  EXPECT_TRUE(link.Silent("never", 100, 60));
  EXPECT_FALSE(link.Find("never").has_value());
  link.Expect("n1", 100);  // a restarted controller gives every node a timeout of grace
  EXPECT_FALSE(link.Registered("n1"));
  EXPECT_FALSE(link.Silent("n1", 160, 60));
  EXPECT_TRUE(link.Silent("n1", 161, 60));
  link.Register("n1", 161);
  EXPECT_FALSE(link.Silent("n1", 200, 60));
}

TEST(AgentLinkTest, CommandsAreQueuedTypedAndARegistrationDropsThem) {
  AgentHub hub;
  AgentLink link(&hub);
  link.Send("n1", agent::CancelCommand{{12, 1}});
  link.SendEncoded("n1", agent::EncodeAgentCommand(agent::EndStepsCommand{{12, 1}}));
  std::vector<std::pair<uint64_t, std::string>> queued = hub.Poll("n1", 0, 0);
  ASSERT_EQ(queued.size(), 2u);
  Result<agent::AgentCommand> first = agent::DecodeAgentCommand(queued[0].second);
  ASSERT_TRUE(first.ok());
  EXPECT_EQ(std::get<agent::CancelCommand>(*first).target, (agent::CommandTarget{12, 1}));
  EXPECT_TRUE(
      std::holds_alternative<agent::EndStepsCommand>(*agent::DecodeAgentCommand(queued[1].second)));
  // Fetched but not acknowledged (no poll after them yet): the registration returns them.
  std::vector<agent::AgentCommand> dropped = link.Register("n1", 5);
  EXPECT_TRUE(hub.Poll("n1", 0, 0).empty());
  ASSERT_EQ(dropped.size(), 2u);
  EXPECT_TRUE(std::holds_alternative<agent::CancelCommand>(dropped[0]));
  EXPECT_TRUE(std::holds_alternative<agent::EndStepsCommand>(dropped[1]));
}

// What an agent acknowledged (it polled after it) is not returned: only the rest may be sent
// again by the reconciliation.
TEST(AgentLinkTest, ARegistrationReturnsOnlyWhatNoAgentAcknowledged) {
  AgentHub hub;
  AgentLink link(&hub);
  link.Register("n1", 1);
  link.Send("n1", agent::SignalCommand{{7, 0}, 10, false, false});
  link.Send("n1", agent::SignalCommand{{7, 0}, 12, true, false});
  std::vector<std::pair<uint64_t, std::string>> queued = hub.Poll("n1", 0, 0);
  ASSERT_EQ(queued.size(), 2u);
  (void)hub.Poll("n1", queued[0].first, 0);  // the agent acted on the first
  std::vector<agent::AgentCommand> dropped = link.Register("n1", 2);
  ASSERT_EQ(dropped.size(), 1u);
  const auto& s = std::get<agent::SignalCommand>(dropped[0]);
  EXPECT_EQ(s.signal, 12);
  EXPECT_TRUE(s.batch_only);
  EXPECT_TRUE(link.Register("n1", 3).empty());
}

}  // namespace
}  // namespace berth::controller
