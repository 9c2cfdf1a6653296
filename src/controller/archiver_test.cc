// The archiver against a real store (SQLite in a temporary folder) and a real PostgreSQL
// (skipped, with the reason, where there is none: scripts/setup installs postgresql-15).
#include "controller/archiver.h"

#include <gtest/gtest.h>
#include <unistd.h>

#include <atomic>
#include <filesystem>
#include <memory>
#include <set>
#include <string>
#include <vector>

#include "store/pg_test_util.h"

namespace berth::controller {
namespace {

constexpr Time kNow = 1'000'000;
constexpr Duration kMinJobAge = 300;

store::Write PutJob(uint32_t id, bool active, Time end) {
  store::Write w;
  w.kind = store::Write::Kind::kPutJob;
  w.job = {id, active, end, "record " + std::to_string(id), nullptr};
  return w;
}

class ArchiverTest : public ::testing::Test {
 protected:
  void SetUp() override {
    if (store::TestPostgres::BinDir().empty()) {
      GTEST_SKIP() << "no PostgreSQL (scripts/setup installs postgresql-15)";
    }
    char tmpl[] = "/tmp/berth-archiver-XXXXXX";
    dir_ = mkdtemp(tmpl);
    auto s = store::Store::Open(dir_ + "/state.db");
    ASSERT_TRUE(s.ok()) << s.status().message();
    store_ = std::move(*s);
  }
  void TearDown() override {
    store_.reset();
    if (!dir_.empty()) std::filesystem::remove_all(dir_);
  }
  void OpenArchive(const std::string& conninfo) {
    static std::atomic<int> n{0};
    auto a = store::Archive::Open(
        conninfo, "archiver" + std::to_string(getpid()) + "-" + std::to_string(n++));
    ASSERT_TRUE(a.ok()) << a.status().message();
    archive_ = std::move(*a);
  }
  std::unique_ptr<Archiver> Make() {
    return std::make_unique<Archiver>(
        store_.get(), archive_.get(), kMinJobAge, 1, [] { return kNow; },
        [this](uint32_t id) { return live_.count(id) != 0; });
  }
  bool InStore(uint32_t id) { return store_->GetJob(id)->has_value(); }

  std::string dir_;
  std::unique_ptr<store::Store> store_;
  std::unique_ptr<store::Archive> archive_;
  std::set<uint32_t> live_;  // jobs the controller still has in its view
};

// Only jobs that ended more than MinJobAge ago and that the controller forgot move; active,
// recent and still live ones stay; what moved is in PostgreSQL, byte for byte, and no longer in
// the store.
TEST_F(ArchiverTest, MovesOnlyJobsPastMinJobAge) {
  store::TestPostgres* pg = store::SharedPostgres();
  ASSERT_NE(pg, nullptr);
  OpenArchive(pg->conninfo());
  const Time due = kNow - kMinJobAge - 1;
  // A record whose run specification the store keeps apart moves whole.
  store::Write two = PutJob(2, false, due - 1000);
  two.job.record = "{\"id\":2}";
  two.job.exec = std::make_shared<const std::string>("{\"script\":\"x\"}");
  ASSERT_TRUE(
      store_
          ->Commit({PutJob(1, false, due), two, PutJob(3, false, kNow - 10),
                    PutJob(4, true, kNoTime), PutJob(5, false, due + 2), PutJob(6, false, due - 5)})
          .ok());
  live_ = {6};
  auto archiver = Make();
  Result<int64_t> moved = archiver->RunOnce();
  ASSERT_TRUE(moved.ok()) << moved.status().message();
  EXPECT_EQ(*moved, 2);
  EXPECT_FALSE(InStore(1));
  EXPECT_FALSE(InStore(2));
  EXPECT_TRUE(InStore(3));
  EXPECT_TRUE(InStore(4));
  EXPECT_TRUE(InStore(5));
  EXPECT_TRUE(InStore(6));
  EXPECT_EQ(*archive_->Count(), 2);
  EXPECT_EQ((*archive_->GetJob(1))->record, "record 1");
  EXPECT_EQ((*archive_->GetJob(2))->end_time, due - 1000);
  EXPECT_EQ((*archive_->GetJob(2))->record, "{\"exec\":{\"script\":\"x\"},\"id\":2}");
  EXPECT_EQ(*archiver->RunOnce(), 0);
  live_.clear();  // the controller forgot it
  EXPECT_EQ(*archiver->RunOnce(), 1);
  EXPECT_FALSE(InStore(6));
  EXPECT_EQ(archiver->stats().moved, 3);
}

// More than one batch in a round.
TEST_F(ArchiverTest, ARoundMovesEveryBatchDue) {
  store::TestPostgres* pg = store::SharedPostgres();
  ASSERT_NE(pg, nullptr);
  OpenArchive(pg->conninfo());
  std::vector<store::Write> w;
  const size_t n = Archiver::kBatch * 2 + 17;
  for (uint32_t id = 1; id <= n; ++id) w.push_back(PutJob(id, false, 1000 + id));
  ASSERT_TRUE(store_->Commit(w).ok());
  auto archiver = Make();
  EXPECT_EQ(*archiver->RunOnce(), static_cast<int64_t>(n));
  EXPECT_EQ(*archive_->Count(), static_cast<int64_t>(n));
  int left = 0;
  ASSERT_TRUE(store_->ScanJobs(false, [&](const store::JobRow&) { ++left; }).ok());
  EXPECT_EQ(left, 0);
}

// PostgreSQL down: the round fails with the reason, every record waits in the store; once it is
// back they move, each once.
TEST_F(ArchiverTest, RecordsWaitWhilePostgresIsDownAndMoveWhenItIsBack) {
  std::unique_ptr<store::TestPostgres> pg = store::TestPostgres::Start();
  ASSERT_NE(pg, nullptr);
  OpenArchive(pg->conninfo());
  ASSERT_TRUE(store_->Commit({PutJob(1, false, 1000), PutJob(2, false, 2000)}).ok());
  pg->Stop();
  auto archiver = Make();
  Result<int64_t> moved = archiver->RunOnce();
  ASSERT_FALSE(moved.ok());
  EXPECT_EQ(moved.status().code(), StatusCode::kUnavailable) << moved.status().message();
  EXPECT_TRUE(InStore(1));
  EXPECT_TRUE(InStore(2));
  EXPECT_EQ(archiver->stats().failures, 1);
  EXPECT_FALSE(archiver->stats().last_error.empty());
  ASSERT_TRUE(pg->Restart());
  EXPECT_EQ(*archiver->RunOnce(), 2);
  EXPECT_FALSE(InStore(1));
  EXPECT_EQ(*archive_->Count(), 2);
  EXPECT_TRUE(archiver->stats().last_error.empty());
}

// The background thread does rounds by itself and stops when asked.
TEST_F(ArchiverTest, TheThreadMovesJobsByItself) {
  store::TestPostgres* pg = store::SharedPostgres();
  ASSERT_NE(pg, nullptr);
  OpenArchive(pg->conninfo());
  ASSERT_TRUE(store_->Commit({PutJob(7, false, 1000)}).ok());
  auto archiver = Make();
  archiver->Start();
  for (int i = 0; i < 100 && InStore(7); ++i) usleep(50'000);
  archiver->Stop();
  EXPECT_FALSE(InStore(7));
  EXPECT_EQ(*archive_->Count(), 1);
}

}  // namespace
}  // namespace berth::controller
