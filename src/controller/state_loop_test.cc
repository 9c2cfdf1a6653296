#include "controller/state_loop.h"

#include <gtest/gtest.h>
#include <stdlib.h>

#include <atomic>
#include <filesystem>
#include <map>
#include <random>
#include <stdexcept>
#include <thread>

#include "store/store.h"

namespace berth::controller {
namespace {

TEST(JobIdSetTest, RollBackUndoesInsertsAndErasesAfterTheMark) {
  JobIdSet s;
  s.insert(1);
  s.insert(2);
  size_t mark = s.journal_size();
  EXPECT_FALSE(s.insert(2));  // already there: nothing to undo
  EXPECT_TRUE(s.insert(3));
  EXPECT_TRUE(s.erase(1));
  EXPECT_FALSE(s.erase(7));
  s.RollBackTo(mark);
  EXPECT_EQ(std::vector<core::JobId>(s.begin(), s.end()), (std::vector<core::JobId>{1, 2}));
}

TEST(TxnTest, RollBackRestoresEveryPart) {
  Txn t;
  t.writes.push_back({store::Write::Kind::kPutMeta, {}, "a", "1"});
  t.events.push_back(MakeWatchEvent("e1"));
  t.touched.insert(5);
  t.launches.push_back(5);
  t.record_texts.push_back({0, 0, nullptr});
  TxnMark mark = t.Mark();
  t.writes.push_back({store::Write::Kind::kPutMeta, {}, "b", "2"});
  t.replies.push_back([](const Status&) {});
  t.events.push_back(MakeWatchEvent("e2"));
  t.touched.insert(6);
  t.touched.erase(5);
  t.launches.push_back(6);
  t.record_texts.push_back({1, 1, nullptr});
  t.nodes_changed = true;
  t.reschedule = true;
  t.RollBackTo(mark);
  ASSERT_EQ(t.record_texts.size(), 1u);
  EXPECT_EQ(t.record_texts[0].write, 0u);
  ASSERT_EQ(t.writes.size(), 1u);
  EXPECT_EQ(t.writes[0].key, "a");
  EXPECT_TRUE(t.replies.empty());
  ASSERT_EQ(t.events.size(), 1u);
  EXPECT_EQ(t.events[0]->text(), "e1");
  EXPECT_EQ(std::vector<core::JobId>(t.touched.begin(), t.touched.end()),
            std::vector<core::JobId>{5});
  EXPECT_EQ(t.launches, std::vector<core::JobId>{5});
  EXPECT_FALSE(t.nodes_changed);
  EXPECT_FALSE(t.reschedule);
}

TEST(RunAllOrNothingTest, AnExceptionIsABadRequestAndLeavesNothing) {
  Txn t;
  Reply out;
  RunAllOrNothing(
      [](Txn& txn, Reply*) {
        txn.events.push_back(MakeWatchEvent("half"));
        (void)nlohmann::json::object().at("missing");
      },
      t, &out);
  EXPECT_EQ(out.status.code(), StatusCode::kInvalidArgument);
  EXPECT_NE(out.status.message().find("bad request"), std::string::npos);
  EXPECT_TRUE(t.events.empty());
}

// A command of the property test: writes to the transaction, then fails one way or another (or
// not at all).
enum class Failure { kNone, kStatus, kException, kJsonException };

struct FakeCommand {
  std::vector<store::Write> writes;
  std::vector<core::JobId> touch, untouch;
  Failure failure = Failure::kNone;

  void operator()(Txn& t, Reply* out) const {
    for (const store::Write& w : writes) t.writes.push_back(w);
    for (core::JobId id : touch) t.touched.insert(id);
    for (core::JobId id : untouch) t.touched.erase(id);
    t.events.push_back(
        MakeWatchEvent("event of " + (writes.empty() ? "nothing" : writes.front().value)));
    t.launches.insert(t.launches.end(), touch.begin(), touch.end());
    t.nodes_changed = t.nodes_changed || touch.size() > 1;
    switch (failure) {
      case Failure::kNone:
        out->body = "ok";
        break;
      case Failure::kStatus:
        out->status = Status::PermissionDenied("refused after writing");
        break;
      case Failure::kException:
        throw std::runtime_error("thrown after writing");
      case Failure::kJsonException:
        (void)nlohmann::json::array().at(3);
    }
  }
};

FakeCommand RandomCommand(std::mt19937& rng, int index) {
  FakeCommand c;
  const int writes = std::uniform_int_distribution<int>(0, 4)(rng);
  for (int i = 0; i < writes; ++i) {
    const std::string value = "c" + std::to_string(index) + "w" + std::to_string(i);
    if (rng() % 2 == 0) {
      c.writes.push_back(
          {store::Write::Kind::kPutMeta, {}, "key" + std::to_string(rng() % 8), value});
    } else {
      store::JobRow row{static_cast<core::JobId>(1 + rng() % 8), rng() % 2 == 0,
                        static_cast<Time>(index), value, nullptr};
      c.writes.push_back({store::Write::Kind::kPutJob, row, "", ""});
    }
  }
  for (int i = rng() % 3; i > 0; --i) c.touch.push_back(1 + rng() % 8);
  for (int i = rng() % 2; i > 0; --i) c.untouch.push_back(1 + rng() % 8);
  c.failure = static_cast<Failure>(rng() % 4);
  return c;
}

class TempStore {
 public:
  TempStore() {
    char tmpl[] = "/tmp/state_loop_test.XXXXXX";
    dir_ = mkdtemp(tmpl);
    Result<std::unique_ptr<store::Store>> s = store::Store::Open(dir_ + "/state.db");
    EXPECT_TRUE(s.ok()) << s.status().message();
    store_ = std::move(*s);
  }
  ~TempStore() {
    store_.reset();
    std::filesystem::remove_all(dir_);
  }
  store::Store& operator*() { return *store_; }
  store::Store* operator->() { return store_.get(); }

  // Everything the store holds, as text.
  std::string Content() const {
    std::string out;
    EXPECT_TRUE(store_
                    ->ScanJobs(false,
                               [&](const store::JobRow& r) {
                                 out += "job " + std::to_string(r.id) + " " +
                                        std::to_string(r.active) + " " +
                                        std::to_string(r.end_time) + " " + r.record + "\n";
                               })
                    .ok());
    EXPECT_TRUE(
        store_
            ->ScanMeta("", [&](const std::string& k,
                               const std::string& v) { out += "meta " + k + " " + v + "\n"; })
            .ok());
    return out;
  }

 private:
  std::string dir_;
  std::unique_ptr<store::Store> store_;
};

// What a committed transaction leaves besides the store: for comparing the two runs.
std::string Digest(const Txn& t) {
  std::string out = "touched";
  for (core::JobId id : t.touched) out += " " + std::to_string(id);
  out += "\nevents";
  for (const WatchEvent& e : t.events) out += " [" + e->text() + "]";
  out += "\nlaunches";
  for (core::JobId id : t.launches) out += " " + std::to_string(id);
  out += "\nflags " + std::to_string(t.nodes_changed) + std::to_string(t.reschedule) + "\n";
  return out;
}

// Property: in one batch, commands that fail after writing to the transaction change nothing
// that is committed; the earlier commands' replies stay.
TEST(StateLoopPropertyTest, FailingCommandsInABatchNeverChangeTheCommittedState) {
  for (uint32_t seed = 1; seed <= 40; ++seed) {
    SCOPED_TRACE("seed " + std::to_string(seed));
    std::mt19937 rng(seed);
    std::vector<FakeCommand> commands;
    const int n = std::uniform_int_distribution<int>(1, 30)(rng);
    for (int i = 0; i < n; ++i) commands.push_back(RandomCommand(rng, i));

    TempStore with_failures, only_successful;
    Txn all, model;
    std::vector<Reply> replies(commands.size());
    for (size_t i = 0; i < commands.size(); ++i) {
      RunAllOrNothing(commands[i], all, &replies[i]);
      all.replies.push_back([](const Status&) {});
      EXPECT_EQ(replies[i].status.ok(), commands[i].failure == Failure::kNone);
      if (commands[i].failure != Failure::kNone) continue;
      Reply ignored;
      commands[i](model, &ignored);
      model.replies.push_back([](const Status&) {});
    }
    EXPECT_EQ(all.replies.size(), commands.size());  // every command is answered
    EXPECT_EQ(Digest(all), Digest(model));
    ASSERT_TRUE(with_failures->Commit(std::move(all.writes)).ok());
    ASSERT_TRUE(only_successful->Commit(std::move(model.writes)).ok());
    EXPECT_EQ(with_failures.Content(), only_successful.Content());
  }
}

// A batch whose commit fails answers each of its calls with the commit's error (not the reply
// the command set); a batch the controller refuses (Txn::refuse, after a failed commit) runs
// none of its commands and answers each with that error.
TEST(StateLoopTest, CommitFailuresAndRefusalsReachEveryCaller) {
  StateLoop loop;
  std::atomic<int> runs{0};
  std::atomic<bool> refuse{false};
  loop.Start({[&](std::deque<Command> batch) {
                loop.role().AssertHeld();
                Txn t;
                if (refuse) t.refuse = Status::Unavailable("refused");
                for (Command& c : batch) c(t);
                const Status commit =
                    t.refuse.ok() ? Status::Unavailable("the store failed") : t.refuse;
                for (auto& reply : t.replies) reply(commit);
              },
              [] { return std::chrono::steady_clock::now() + std::chrono::milliseconds(5); }});
  auto command = [&](Txn&, Reply* out) {
    ++runs;
    out->body = 1;
  };
  Reply r = loop.Call(command);
  EXPECT_EQ(r.status.code(), StatusCode::kUnavailable);
  EXPECT_EQ(r.status.message(), "the store failed");
  EXPECT_TRUE(r.body.is_null());
  EXPECT_EQ(runs, 1);
  refuse = true;
  r = loop.Call(command);
  EXPECT_EQ(r.status.message(), "refused");
  EXPECT_EQ(runs, 1);
  loop.Stop();
}

// Property, through the state thread: commands called from several threads at once, some
// failing after writing, commit exactly what the successful ones wrote.
TEST(StateLoopPropertyTest, CallsFromManyThreadsCommitOnlyTheSuccessfulCommands) {
  TempStore with_failures, only_successful;
  StateLoop loop;
  int batches = 0;
  loop.Start({[&](std::deque<Command> batch) {
                loop.role().AssertHeld();
                Txn t;
                for (Command& c : batch) c(t);
                ++batches;
                ASSERT_TRUE(with_failures->Commit(std::move(t.writes)).ok());
                for (auto& reply : t.replies) reply(Status::Ok());
              },
              [] { return std::chrono::steady_clock::now() + std::chrono::milliseconds(5); }});
  constexpr int kThreads = 4, kPerThread = 25;
  std::vector<std::vector<FakeCommand>> succeeded(kThreads);
  std::vector<std::thread> threads;
  for (int th = 0; th < kThreads; ++th) {
    threads.emplace_back([&, th] {
      std::mt19937 rng(100 + th);
      for (int i = 0; i < kPerThread; ++i) {
        FakeCommand c = RandomCommand(rng, th * 1000 + i);
        // Threads write keys of their own, so that the order between threads does not matter.
        for (store::Write& w : c.writes) {
          w.key += "t" + std::to_string(th);
          w.job.id += 100 * th;
        }
        Reply r = loop.Call(c);
        EXPECT_EQ(r.status.ok(), c.failure == Failure::kNone);
        if (r.status.ok()) succeeded[th].push_back(c);
      }
    });
  }
  for (std::thread& t : threads) t.join();
  loop.Stop();
  EXPECT_FALSE(loop.Post([](Txn&) {}));
  EXPECT_EQ(loop.Call([](Txn&, Reply*) {}).status.code(), StatusCode::kUnavailable);
  for (const std::vector<FakeCommand>& cs : succeeded) {
    for (const FakeCommand& c : cs) {
      ASSERT_TRUE(only_successful->Commit(c.writes).ok());
    }
  }
  EXPECT_GT(batches, 0);
  EXPECT_EQ(with_failures.Content(), only_successful.Content());
}

TEST(StateLoopTest, StopRunsTheQueuedCommandsFirst) {
  StateLoop loop;
  std::atomic<int> ran{0};
  loop.Start({[&](std::deque<Command> batch) {
                Txn t;
                for (Command& c : batch) c(t);
                ran += static_cast<int>(batch.size());
              },
              [] { return std::chrono::steady_clock::now() + std::chrono::seconds(10); }});
  for (int i = 0; i < 50; ++i) ASSERT_TRUE(loop.Post([](Txn&) {}));
  loop.Stop();
  EXPECT_EQ(ran.load(), 50);
}

}  // namespace
}  // namespace berth::controller
