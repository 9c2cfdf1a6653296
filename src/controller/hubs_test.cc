#include "controller/hubs.h"

#include <gtest/gtest.h>

#include <atomic>
#include <set>
#include <thread>

namespace berth::controller {
namespace {

// Publishes events whose texts are given.
void PublishTexts(WatchHub& hub, const std::vector<std::string>& texts) {
  std::vector<WatchEvent> events;
  for (const std::string& t : texts) events.push_back(MakeWatchEvent(t));
  hub.Publish(std::move(events));
}

std::vector<std::string> Texts(const WatchBatch& batch) {
  return {batch.begin(), batch.end()};
}

TEST(WatchHubTest, ReadsReturnEventsFromASequenceAndSayWhereTheyEnd) {
  WatchHub hub;
  EXPECT_EQ(hub.Next(), 0u);
  PublishTexts(hub, {"a", "b"});
  PublishTexts(hub, {"c"});
  uint64_t next = 0;
  bool lost = true;
  EXPECT_EQ(Texts(hub.Read(1, 0, &next, &lost)), (std::vector<std::string>{"b", "c"}));
  EXPECT_EQ(next, 3u);
  EXPECT_FALSE(lost);
  EXPECT_TRUE(hub.Read(3, 0, &next, &lost).empty());
  EXPECT_EQ(next, 3u);
}

TEST(WatchHubTest, AReaderThatFellBehindTheCapacityIsToldItLostEvents) {
  WatchHub hub(2);
  PublishTexts(hub, {"a", "b", "c"});
  uint64_t next = 0;
  bool lost = false;
  EXPECT_EQ(Texts(hub.Read(0, 0, &next, &lost)), (std::vector<std::string>{"b", "c"}));
  EXPECT_TRUE(lost);
  EXPECT_EQ(next, 3u);
}

TEST(WatchHubTest, StartAtNumbersEventsFromTheGivenSequence) {
  WatchHub hub;
  hub.StartAt(1'000'000);
  EXPECT_EQ(hub.Next(), 1'000'000u);
  PublishTexts(hub, {"x"});
  EXPECT_EQ(hub.Next(), 1'000'001u);
  uint64_t next = 0;
  bool lost = false;
  EXPECT_EQ(Texts(hub.Read(1'000'000, 0, &next, &lost)), (std::vector<std::string>{"x"}));
  EXPECT_FALSE(lost);
  // A reader holding a number from before the start lost what came before it.
  EXPECT_EQ(Texts(hub.Read(5, 0, &next, &lost)), (std::vector<std::string>{"x"}));
  EXPECT_TRUE(lost);
}

// The regression of issue 8's load bench: 1,000 watch streams each held their own copy of their
// whole backlog (3 GiB of controller RSS). Readers now share the hub's one copy of each event.
TEST(WatchHubTest, ManyReadersShareOneCopyOfEachEvent) {
  WatchHub hub(1000, 1 << 20);  // all 100 events in one read
  std::vector<std::string> events;
  for (int i = 0; i < 100; ++i)
    events.push_back(std::string(1000, static_cast<char>('a' + i % 26)));
  PublishTexts(hub, events);
  std::vector<WatchBatch> readers;
  for (int r = 0; r < 1000; ++r) {
    uint64_t next = 0;
    bool lost = true;
    readers.push_back(hub.Read(0, 0, &next, &lost));
    ASSERT_EQ(readers.back().size(), 100u);
    EXPECT_EQ(next, 100u);
    EXPECT_FALSE(lost);
  }
  std::set<const char*> texts;  // distinct text buffers among all the readers' events
  for (const WatchBatch& b : readers) {
    for (const std::string& e : b) texts.insert(e.data());
  }
  EXPECT_EQ(texts.size(), 100u);  // not 100 x 1,000
  for (size_t i = 0; i < 100; ++i) {
    EXPECT_EQ(readers[0].shared()[i].get(), readers[999].shared()[i].get());
    EXPECT_EQ(readers[0].shared()[i].use_count(), 1001);  // the hub and the 1,000 readers
    EXPECT_EQ(readers[0][i], events[i]);
  }
}

TEST(WatchHubTest, AReadReturnsAtMostMaxReadBytesAndTheRestOnTheNextReads) {
  WatchHub hub(100, 3000);
  for (int i = 0; i < 10; ++i) PublishTexts(hub, {std::string(1000, static_cast<char>('0' + i))});
  uint64_t next = 0;
  bool lost = true;
  std::vector<std::string> all;
  std::vector<size_t> sizes;
  while (next < hub.Next()) {
    // The backlog is there: these reads do not wait, however long they may.
    WatchBatch b = hub.Read(next, 60'000, &next, &lost);
    EXPECT_FALSE(lost);
    sizes.push_back(b.size());
    all.insert(all.end(), b.begin(), b.end());
  }
  EXPECT_EQ(sizes, (std::vector<size_t>{3, 3, 3, 1}));
  ASSERT_EQ(all.size(), 10u);
  for (int i = 0; i < 10; ++i) EXPECT_EQ(all[i], std::string(1000, static_cast<char>('0' + i)));
}

TEST(WatchHubTest, AnEventLargerThanMaxReadBytesIsReturnedAlone) {
  WatchHub hub(100, 10);
  PublishTexts(hub, {std::string(100, 'x'), "y"});
  uint64_t next = 0;
  bool lost = true;
  EXPECT_EQ(Texts(hub.Read(0, 0, &next, &lost)), (std::vector<std::string>{std::string(100, 'x')}));
  EXPECT_EQ(next, 1u);
  EXPECT_EQ(Texts(hub.Read(next, 0, &next, &lost)), (std::vector<std::string>{"y"}));
  EXPECT_EQ(next, 2u);
  EXPECT_FALSE(lost);
}

TEST(WatchHubTest, AReaderThatFellBehindGetsABoundedBatchFromTheOldestKept) {
  WatchHub hub(4, 2);
  PublishTexts(hub, {"a", "b", "c", "d", "e", "f"});  // keeps c..f
  uint64_t next = 0;
  bool lost = false;
  EXPECT_EQ(Texts(hub.Read(0, 0, &next, &lost)), (std::vector<std::string>{"c", "d"}));
  EXPECT_TRUE(lost);
  EXPECT_EQ(next, 4u);
  EXPECT_EQ(Texts(hub.Read(next, 0, &next, &lost)), (std::vector<std::string>{"e", "f"}));
  EXPECT_FALSE(lost);
  EXPECT_EQ(next, 6u);
}

TEST(WatchHubTest, ABatchKeepsItsEventsAfterTheHubDroppedThem) {
  WatchHub hub(1);
  PublishTexts(hub, {"a"});
  uint64_t next = 0;
  bool lost = false;
  WatchBatch held = hub.Read(0, 0, &next, &lost);
  PublishTexts(hub, {"b", "c"});  // "a" leaves the hub
  ASSERT_EQ(held.size(), 1u);
  EXPECT_EQ(held[0], "a");
  EXPECT_EQ(held.shared()[0].use_count(), 1);  // the batch is the last holder: freed with it
}

// An event made from what it refers to (a record) is made once, by its first reader, not when it
// is published, and may then let go of it; a read counts the size it was given.
class MadeEvent final : public WatchEventText {
 public:
  MadeEvent(size_t size, std::shared_ptr<int> from, std::atomic<int>* made)
      : WatchEventText(size), from_(std::move(from)), made_(made) {}

 private:
  std::string Make() const override {
    ++*made_;
    std::string text = "made " + std::to_string(*from_);
    from_.reset();
    return text;
  }
  mutable std::shared_ptr<int> from_;
  std::atomic<int>* made_;
};

TEST(WatchHubTest, AnEventIsMadeOnceByItsFirstReader) {
  WatchHub hub(10, /*max_read_bytes=*/100);
  std::atomic<int> made{0};
  auto from = std::make_shared<int>(7);
  std::vector<WatchEvent> events;
  events.push_back(std::make_shared<const MadeEvent>(96, from, &made));
  events.push_back(MakeWatchEvent("ready"));
  hub.Publish(std::move(events));
  EXPECT_EQ(made.load(), 0);
  EXPECT_EQ(from.use_count(), 2);
  uint64_t next = 0;
  bool lost = false;
  WatchBatch first = hub.Read(0, 0, &next, &lost);
  ASSERT_EQ(first.size(), 1u);  // 96 + 5 > 100: its given size counts (its text is 6 bytes)
  EXPECT_EQ(made.load(), 0);    // read, not yet looked at
  std::vector<std::thread> readers;
  std::vector<std::string> seen(8);
  for (int i = 0; i < 8; ++i) readers.emplace_back([&, i] { seen[i] = first[0]; });
  for (std::thread& t : readers) t.join();
  EXPECT_EQ(made.load(), 1);
  for (const std::string& s : seen) EXPECT_EQ(s, "made 7");
  EXPECT_EQ(from.use_count(), 1);  // let go once made
  EXPECT_EQ(Texts(hub.Read(next, 0, &next, &lost)), (std::vector<std::string>{"ready"}));
}

TEST(WatchHubTest, ABatchConvertsToAVectorOfStringsForOlderCallers) {
  WatchHub hub;
  PublishTexts(hub, {"a", "b"});
  uint64_t next = 0;
  bool lost = false;
  std::vector<std::string> events = hub.Read(0, 0, &next, &lost);
  EXPECT_EQ(events, (std::vector<std::string>{"a", "b"}));
}

TEST(WatchHubTest, ShutdownWakesAWaitingReader) {
  WatchHub hub;
  std::thread stopper([&] { hub.Shutdown(); });
  uint64_t next = 0;
  bool lost = false;
  EXPECT_TRUE(hub.Read(0, 60'000, &next, &lost).empty());  // returns long before a minute
  stopper.join();
  EXPECT_EQ(next, 0u);
}

}  // namespace
}  // namespace berth::controller
