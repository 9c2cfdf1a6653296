#include "controller/hubs.h"

#include <gtest/gtest.h>

namespace berth::controller {
namespace {

TEST(WatchHubTest, ReadsReturnEventsFromASequenceAndSayWhereTheyEnd) {
  WatchHub hub;
  EXPECT_EQ(hub.Next(), 0u);
  hub.Publish({"a", "b"});
  hub.Publish({"c"});
  uint64_t next = 0;
  bool lost = true;
  EXPECT_EQ(hub.Read(1, 0, &next, &lost), (std::vector<std::string>{"b", "c"}));
  EXPECT_EQ(next, 3u);
  EXPECT_FALSE(lost);
  EXPECT_TRUE(hub.Read(3, 0, &next, &lost).empty());
  EXPECT_EQ(next, 3u);
}

TEST(WatchHubTest, AReaderThatFellBehindTheCapacityIsToldItLostEvents) {
  WatchHub hub(2);
  hub.Publish({"a", "b", "c"});
  uint64_t next = 0;
  bool lost = false;
  EXPECT_EQ(hub.Read(0, 0, &next, &lost), (std::vector<std::string>{"b", "c"}));
  EXPECT_TRUE(lost);
  EXPECT_EQ(next, 3u);
}

TEST(WatchHubTest, StartAtNumbersEventsFromTheGivenSequence) {
  WatchHub hub;
  hub.StartAt(1'000'000);
  EXPECT_EQ(hub.Next(), 1'000'000u);
  hub.Publish({"x"});
  EXPECT_EQ(hub.Next(), 1'000'001u);
  uint64_t next = 0;
  bool lost = false;
  EXPECT_EQ(hub.Read(1'000'000, 0, &next, &lost), (std::vector<std::string>{"x"}));
  EXPECT_FALSE(lost);
  // A reader holding a number from before the start lost what came before it.
  EXPECT_EQ(hub.Read(5, 0, &next, &lost), (std::vector<std::string>{"x"}));
  EXPECT_TRUE(lost);
}

}  // namespace
}  // namespace berth::controller
