// The accounting archive against a real PostgreSQL (skipped, with the reason, where there is
// none: scripts/setup installs postgresql-15).
#include "store/archive.h"

#include <gtest/gtest.h>
#include <unistd.h>

#include <atomic>
#include <string>
#include <vector>

#include "store/pg_test_util.h"

namespace berth::store {
namespace {

ArchivedJob Job(uint32_t id, Time end, std::string record, Time submit = 10) {
  ArchivedJob j;
  j.id = id;
  j.submit_time = submit;
  j.end_time = end;
  j.user = "alice";
  j.account = "physics";
  j.state = "COMPLETED";
  j.record = std::move(record);
  return j;
}

class ArchiveTest : public ::testing::Test {
 protected:
  void SetUp() override {
    if (TestPostgres::BinDir().empty()) {
      GTEST_SKIP() << "no PostgreSQL (scripts/setup installs postgresql-15)";
    }
    pg_ = SharedPostgres();
    ASSERT_NE(pg_, nullptr) << "PostgreSQL did not start";
    static std::atomic<int> n{0};
    cluster_ = "test" + std::to_string(getpid()) + "-" + std::to_string(n++);
    Result<std::unique_ptr<Archive>> a = Archive::Open(pg_->conninfo(), cluster_);
    ASSERT_TRUE(a.ok()) << a.status().message();
    archive_ = std::move(*a);
  }
  std::vector<uint32_t> Ids(Time from, Time to, uint32_t min_id = 0) {
    std::vector<uint32_t> out;
    Status st =
        archive_->ScanFinished(from, to, min_id, [&](const JobRow& r) { out.push_back(r.id); });
    EXPECT_TRUE(st.ok()) << st.message();
    return out;
  }

  TestPostgres* pg_ = nullptr;
  std::string cluster_;
  std::unique_ptr<Archive> archive_;
};

// A move cut short is done again: the second Put of a job adds nothing and keeps the first
// record; records are bytes (a script may hold any), read back as they were written.
TEST_F(ArchiveTest, PutIsIdempotentAndRecordsComeBackByteForByte) {
  const std::string odd("a\0b\xff\xfe{\"x\":1}", 11);
  ASSERT_TRUE(archive_->Put({Job(3, 300, odd), Job(1, 100, "one"), Job(2, 200, "two")}).ok());
  ASSERT_TRUE(archive_->Put({Job(2, 200, "two again"), Job(4, 400, "four")}).ok());
  EXPECT_EQ(*archive_->Count(), 4);
  Result<std::optional<JobRow>> three = archive_->GetJob(3);
  ASSERT_TRUE(three.ok()) << three.status().message();
  ASSERT_TRUE(three->has_value());
  EXPECT_EQ((*three)->record, odd);
  EXPECT_EQ((*three)->end_time, 300);
  EXPECT_FALSE((*three)->active);
  EXPECT_EQ((*archive_->GetJob(2))->record, "two");
  EXPECT_FALSE(archive_->GetJob(9)->has_value());
  EXPECT_EQ(Ids(0, 1000), (std::vector<uint32_t>{1, 2, 3, 4}));
  EXPECT_EQ(Ids(200, 400), (std::vector<uint32_t>{2, 3}));
  EXPECT_EQ(Ids(400, 400), (std::vector<uint32_t>{}));
  EXPECT_EQ(Ids(0, 1000, 3), (std::vector<uint32_t>{3, 4}));  // sacct -j's lowest id
  EXPECT_EQ(Ids(200, 400, 3), (std::vector<uint32_t>{3}));
}

// Two jobs with one id (a store started afresh counts ids from 1 again) are both kept; GetJob
// gives the newer. Clusters sharing a database see only their own.
TEST_F(ArchiveTest, OneIdSubmittedTwiceAndClustersApart) {
  ASSERT_TRUE(archive_->Put({Job(1, 100, "old", 10), Job(1, 900, "new", 800)}).ok());
  EXPECT_EQ(*archive_->Count(), 2);
  EXPECT_EQ((*archive_->GetJob(1))->record, "new");
  auto other = Archive::Open(pg_->conninfo(), cluster_ + "-other");
  ASSERT_TRUE(other.ok());
  EXPECT_EQ(*(*other)->Count(), 0);
  EXPECT_FALSE((*other)->GetJob(1)->has_value());
}

// More rows than one INSERT takes, streamed back in id order.
TEST_F(ArchiveTest, BigBatchesStreamBackInIdOrder) {
  std::vector<ArchivedJob> jobs;
  for (uint32_t id = 2500; id >= 1; --id) jobs.push_back(Job(id, 1000 + id % 7, "r"));
  ASSERT_TRUE(archive_->Put(jobs).ok());
  std::vector<uint32_t> ids = Ids(0, 5000);
  ASSERT_EQ(ids.size(), 2500u);
  for (size_t i = 0; i < ids.size(); ++i) ASSERT_EQ(ids[i], i + 1);
}

TEST(ArchiveOpenTest, AMalformedConnectionStringIsRefusedClearly) {
  if (TestPostgres::BinDir().empty()) GTEST_SKIP() << "no PostgreSQL";
  Result<std::unique_ptr<Archive>> a = Archive::Open("host=x port", "c");
  ASSERT_FALSE(a.ok());
  EXPECT_EQ(a.status().code(), StatusCode::kInvalidArgument);
  EXPECT_NE(a.status().message().find("--accounting-store"), std::string::npos)
      << a.status().message();
}

// A server that is down: opening works, calls fail UNAVAILABLE naming the server, and the
// archive reconnects by itself once it is back.
TEST(ArchiveOpenTest, AServerDownFailsClearlyAndIsReconnected) {
  if (TestPostgres::BinDir().empty()) GTEST_SKIP() << "no PostgreSQL";
  std::unique_ptr<TestPostgres> pg = TestPostgres::Start();
  ASSERT_NE(pg, nullptr);
  auto a = Archive::Open(pg->conninfo(), "down");
  ASSERT_TRUE(a.ok());
  ASSERT_TRUE((*a)->Put({Job(1, 100, "one")}).ok());
  pg->Stop();
  Status st = (*a)->Put({Job(2, 200, "two")});
  ASSERT_FALSE(st.ok());
  EXPECT_EQ(st.code(), StatusCode::kUnavailable) << st.message();
  EXPECT_NE(st.message().find("postgresql 127.0.0.1:"), std::string::npos) << st.message();
  EXPECT_FALSE((*a)->GetJob(1).ok());
  ASSERT_TRUE(pg->Restart());
  ASSERT_TRUE((*a)->Put({Job(2, 200, "two")}).ok());
  EXPECT_EQ(*(*a)->Count(), 2);
  EXPECT_EQ((*(*a)->GetJob(1))->record, "one");
}

}  // namespace
}  // namespace berth::store
