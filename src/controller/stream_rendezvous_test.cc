#include "controller/stream_rendezvous.h"

#include <gtest/gtest.h>
#include <sys/socket.h>
#include <unistd.h>

#include <thread>

namespace berth::controller {
namespace {

TEST(StreamRendezvousTest, TheNodesAgentMeetsTheFaceOnce) {
  StreamRendezvous r;
  std::atomic<bool> stopping{false};
  Result<std::string> id = r.Open("n1");
  ASSERT_TRUE(id.ok());
  EXPECT_EQ(id->size(), 32u);
  EXPECT_NE(*r.Open("n1"), *id);  // fresh ids
  int sv[2];
  ASSERT_EQ(::socketpair(AF_UNIX, SOCK_STREAM, 0, sv), 0);
  EXPECT_TRUE(r.Waiting(*id, "n1").ok());
  EXPECT_EQ(r.Waiting(*id, "n2").code(), StatusCode::kPermissionDenied);
  EXPECT_EQ(r.Waiting("nonsense", "n1").code(), StatusCode::kNotFound);
  Status arrived;
  Status other_node;
  std::thread agent([&] {
    other_node = r.Arrive(*id, "n2", sv[0], "", stopping);
    arrived = r.Arrive(*id, "n1", sv[0], "first", stopping);  // returns once Done
  });
  Result<std::shared_ptr<AgentStreamLink>> link = r.Await(*id, 5000, stopping);
  ASSERT_TRUE(link.ok()) << link.status().ToString();
  EXPECT_EQ((*link)->fd(), sv[0]);
  EXPECT_EQ((*link)->already_read(), "first");
  // Claimed: a second arrival with the same id finds nothing.
  EXPECT_EQ(r.Waiting(*id, "n1").code(), StatusCode::kNotFound);
  EXPECT_EQ(r.Arrive(*id, "n1", sv[0], "", stopping).code(), StatusCode::kNotFound);
  (*link)->Done();
  agent.join();
  EXPECT_TRUE(arrived.ok());
  EXPECT_EQ(other_node.code(), StatusCode::kPermissionDenied);
  ::close(sv[0]);
  ::close(sv[1]);
}

TEST(StreamRendezvousTest, AnUnclaimedStreamExpiresAndALateAgentIsRefused) {
  StreamRendezvous r;
  std::atomic<bool> stopping{false};
  Result<std::string> id = r.Open("n1");
  ASSERT_TRUE(id.ok());
  Result<std::shared_ptr<AgentStreamLink>> link = r.Await(*id, 100, stopping);
  EXPECT_EQ(link.status().code(), StatusCode::kUnavailable);
  EXPECT_NE(link.status().message().find("did not open the stream in time"), std::string::npos);
  EXPECT_EQ(r.pending(), 0u);
  EXPECT_EQ(r.Arrive(*id, "n1", -1, "", stopping).code(), StatusCode::kNotFound);
  EXPECT_EQ(r.Arrive("nonsense", "n1", -1, "", stopping).code(), StatusCode::kNotFound);
}

TEST(StreamRendezvousTest, StoppingShutsTheAgentsSocketAndWaitsForTheFace) {
  StreamRendezvous r;
  std::atomic<bool> stopping{false};
  Result<std::string> id = r.Open("n1");
  int sv[2];
  ASSERT_EQ(::socketpair(AF_UNIX, SOCK_STREAM, 0, sv), 0);
  std::thread agent([&] { (void)r.Arrive(*id, "n1", sv[0], "", stopping); });
  Result<std::shared_ptr<AgentStreamLink>> link = r.Await(*id, 5000, stopping);
  ASSERT_TRUE(link.ok());
  stopping = true;
  char c;
  EXPECT_EQ(::recv(sv[0], &c, 1, 0), 0);  // shut down: the face's relay would see the end
  (*link)->Done();
  agent.join();
  ::close(sv[0]);
  ::close(sv[1]);
}

TEST(StreamRendezvousTest, PendingStreamsAreBounded) {
  StreamRendezvous r;
  for (size_t i = 0; i < StreamRendezvous::kMaxPending; ++i) ASSERT_TRUE(r.Open("n").ok());
  EXPECT_EQ(r.Open("n").status().code(), StatusCode::kResourceExhausted);
}

}  // namespace
}  // namespace berth::controller
