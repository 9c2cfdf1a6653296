#include "agent/controller_choice.h"

#include <gtest/gtest.h>

namespace berth::agent {
namespace {

const std::vector<std::string> kGroup = {"tls:10.0.0.1:6443", "tls:10.0.0.2:6443",
                                         "tls:10.0.0.3:6443"};

TEST(ControllerChoiceTest, StartsWithTheFirstAndGoesRoundTheList) {
  ControllerChoice c(kGroup);
  EXPECT_EQ(c.Current(), kGroup[0]);
  c.Next(1000);
  EXPECT_EQ(c.Current(), kGroup[1]);
  c.Next(1000);
  EXPECT_EQ(c.Current(), kGroup[2]);
  c.Next(1000);
  EXPECT_EQ(c.Current(), kGroup[0]);
}

TEST(ControllerChoiceTest, ARefusalMovesOnButIsTriedAgainAtOnce) {
  ControllerChoice c(kGroup);
  c.Failed(/*silent=*/false, 1000);
  EXPECT_EQ(c.Current(), kGroup[1]);
  c.Next(1000);
  c.Next(1000);
  EXPECT_EQ(c.Current(), kGroup[0]);  // not set aside
}

// The cut leader: standbys still name it until its lease runs out in etcd; the agent does not go
// back to wait on it (a connect timeout each time) while the others answer, and follows the
// leader they name next.
TEST(ControllerChoiceTest, ASilentMemberIsPassedOverWhileStandbysNameItAndTheNewLeaderIsFollowed) {
  ControllerChoice c(kGroup);
  c.Failed(/*silent=*/true, 1000);
  EXPECT_EQ(c.Current(), kGroup[1]);
  c.FollowLeader("https://10.0.0.1:6443/", 1100);  // the old leader, silent: the next standby
  EXPECT_EQ(c.Current(), kGroup[2]);
  c.FollowLeader("https://10.0.0.1:6443", 1300);
  EXPECT_EQ(c.Current(), kGroup[1]);
  c.FollowLeader("", 1500);  // none elected yet
  EXPECT_EQ(c.Current(), kGroup[2]);
  c.FollowLeader("https://10.0.0.2:6443", 1700);  // elected
  EXPECT_EQ(c.Current(), kGroup[1]);
  // Once the pass is over, the silent member is one of the list again.
  c.FollowLeader("https://10.0.0.1:6443", 1000 + ControllerChoice::kSilentPassMs);
  EXPECT_EQ(c.Current(), kGroup[0]);
}

TEST(ControllerChoiceTest, WhenEveryOtherMemberIsSilentTheOneSilentLongestAgoIsTried) {
  ControllerChoice c(kGroup);
  c.Failed(true, 1000);  // 0
  c.Failed(true, 2000);  // 1
  EXPECT_EQ(c.Current(), kGroup[2]);
  c.Failed(true, 3000);  // 2: all silent, 0 the longest ago
  EXPECT_EQ(c.Current(), kGroup[0]);
  c.Next(3500);
  EXPECT_EQ(c.Current(), kGroup[1]);
}

TEST(ControllerChoiceTest, ALeaderNotInTheListOrTheOneInUseMovesOn) {
  ControllerChoice c(kGroup);
  c.FollowLeader("https://10.9.9.9:6443", 1000);
  EXPECT_EQ(c.Current(), kGroup[1]);
  // A standby naming itself (an answer from the member in use) does not keep the agent there.
  c.FollowLeader("https://10.0.0.2:6443", 1000);
  EXPECT_EQ(c.Current(), kGroup[2]);
}

TEST(ControllerChoiceTest, OneAddressStaysWhateverHappens) {
  ControllerChoice c({"unix:/run/berth.sock"});
  c.Failed(true, 1000);
  c.Next(1000);
  c.FollowLeader("", 1000);
  EXPECT_EQ(c.Current(), "unix:/run/berth.sock");
  ControllerChoice none({});
  none.Failed(true, 1000);
  EXPECT_EQ(none.Current(), "");
}

TEST(ControllerChoiceTest, NormalizeGivesTheListsForm) {
  EXPECT_EQ(ControllerChoice::Normalize("https://h:6443/"), "tls:h:6443");
  EXPECT_EQ(ControllerChoice::Normalize("http://h:6817"), "tcp:h:6817");
  EXPECT_EQ(ControllerChoice::Normalize("unix:/x.sock"), "unix:/x.sock");
  EXPECT_EQ(ControllerChoice::Normalize(""), "");
}

}  // namespace
}  // namespace berth::agent
