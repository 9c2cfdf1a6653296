#include "store/store.h"

#include <gtest/gtest.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cstdlib>
#include <filesystem>
#include <thread>
#include <vector>

namespace berth::store {
namespace {

class StoreTest : public ::testing::Test {
 protected:
  void SetUp() override {
    char tmpl[] = "/tmp/berth-store-XXXXXX";
    dir_ = mkdtemp(tmpl);
    path_ = dir_ + "/state.db";
  }
  void TearDown() override { std::filesystem::remove_all(dir_); }
  std::string dir_, path_;
};

Write PutJob(uint32_t id, bool active, Time end, std::string record) {
  Write w;
  w.kind = Write::Kind::kPutJob;
  w.job = {id, active, end, std::move(record)};
  return w;
}

TEST_F(StoreTest, CommitThenReadBackAfterReopen) {
  {
    auto s = std::move(Store::Open(path_)).value();
    ASSERT_TRUE(
        s->Commit({PutJob(1, true, kNoTime, "{\"a\":1}"), PutJob(2, false, 50, "two")}).ok());
    Write meta;
    meta.kind = Write::Kind::kPutMeta;
    meta.key = "next_job_id";
    meta.value = "3";
    Write node;
    node.kind = Write::Kind::kPutNode;
    node.key = "n1";
    node.value = "{}";
    ASSERT_TRUE(s->Commit({meta, node}).ok());
    ASSERT_TRUE(s->Commit({PutJob(1, false, 99, "done")}).ok());  // an update
  }
  auto s = std::move(Store::Open(path_)).value();
  std::vector<JobRow> all;
  ASSERT_TRUE(s->ScanJobs(false, [&](const JobRow& r) { all.push_back(r); }).ok());
  ASSERT_EQ(all.size(), 2u);
  EXPECT_EQ(all[0].id, 1u);
  EXPECT_FALSE(all[0].active);
  EXPECT_EQ(all[0].end_time, 99);
  EXPECT_EQ(all[0].record, "done");
  std::vector<JobRow> active;
  ASSERT_TRUE(s->ScanJobs(true, [&](const JobRow& r) { active.push_back(r); }).ok());
  EXPECT_TRUE(active.empty());
  std::vector<uint32_t> finished;
  ASSERT_TRUE(s->ScanFinished(60, 100, [&](const JobRow& r) { finished.push_back(r.id); }).ok());
  EXPECT_EQ(finished, std::vector<uint32_t>{1});
  EXPECT_EQ(**s->GetMeta("next_job_id"), "3");
  EXPECT_FALSE(s->GetMeta("nope")->has_value());
  EXPECT_EQ((*s->GetJob(2))->record, "two");
  int nodes = 0;
  ASSERT_TRUE(s->ScanNodes([&](const std::string& n, const std::string&) {
                 EXPECT_EQ(n, "n1");
                 ++nodes;
               }).ok());
  EXPECT_EQ(nodes, 1);
}

TEST_F(StoreTest, MetaKeysScanByPrefixAndDelete) {
  auto s = std::move(Store::Open(path_)).value();
  auto put = [](std::string key, std::string value) {
    Write w;
    w.kind = Write::Kind::kPutMeta;
    w.key = std::move(key);
    w.value = std::move(value);
    return w;
  };
  Write del;
  del.kind = Write::Kind::kDeleteMeta;
  del.key = "k8s_job/default/b";
  ASSERT_TRUE(s->Commit({put("k8s_job/default/b", "B"), put("k8s_job/default/a", "A"),
                         put("k8s_jobx", "not under the prefix"), put("k8s_job/ml/c", "C")})
                  .ok());
  ASSERT_TRUE(s->Commit({del}).ok());
  std::vector<std::string> seen;
  ASSERT_TRUE(s->ScanMeta("k8s_job/", [&](const std::string& k, const std::string& v) {
                 seen.push_back(k + "=" + v);
               }).ok());
  EXPECT_EQ(seen, (std::vector<std::string>{"k8s_job/default/a=A", "k8s_job/ml/c=C"}));
  EXPECT_FALSE(s->GetMeta("k8s_job/default/b").value().has_value());
}

TEST_F(StoreTest, ConcurrentCommitsAreGrouped) {
  auto s = std::move(Store::Open(path_)).value();
  std::vector<std::thread> threads;
  for (int t = 0; t < 8; ++t) {
    threads.emplace_back([&, t] {
      for (int i = 0; i < 50; ++i) {
        uint32_t id = static_cast<uint32_t>(t * 1000 + i + 1);
        ASSERT_TRUE(s->Commit({PutJob(id, true, kNoTime, "x")}).ok());
      }
    });
  }
  for (std::thread& t : threads) t.join();
  int count = 0;
  ASSERT_TRUE(s->ScanJobs(true, [&](const JobRow&) { ++count; }).ok());
  EXPECT_EQ(count, 400);
  StoreStats st = s->stats();
  EXPECT_EQ(st.batches, 400);
  EXPECT_LE(st.commits, st.batches);
}

TEST_F(StoreTest, OpenFailsClearly) {
  Result<std::unique_ptr<Store>> s = Store::Open("/nonexistent-dir/x/state.db");
  ASSERT_FALSE(s.ok());
  EXPECT_NE(s.status().message().find("/nonexistent-dir/x/state.db"), std::string::npos);
}

// Every job's script and environment are in the database: it, its WAL and its shared memory are
// the owner's alone, whatever the umask, and files an older version left readable are fixed.
TEST_F(StoreTest, TheDatabaseAndItsSideFilesAreTheOwnersAlone) {
  auto mode = [](const std::string& p) {
    struct stat st;
    return stat(p.c_str(), &st) == 0 ? static_cast<int>(st.st_mode & 07777) : -1;
  };
  mode_t old = umask(0);
  {
    auto s = std::move(Store::Open(path_)).value();
    ASSERT_TRUE(s->Commit({{Write::Kind::kPutMeta, {}, "k", "v"}}).ok());
    EXPECT_EQ(mode(path_), 0600);
    EXPECT_EQ(mode(path_ + "-wal"), 0600);
    EXPECT_EQ(mode(path_ + "-shm"), 0600);
  }
  umask(old);
  ASSERT_EQ(chmod(path_.c_str(), 0644), 0);
  std::filesystem::remove(path_ + "-wal");
  std::filesystem::remove(path_ + "-shm");
  auto s = std::move(Store::Open(path_)).value();
  EXPECT_EQ(mode(path_), 0600);
  Result<std::optional<std::string>> v = s->GetMeta("k");
  ASSERT_TRUE(v.ok());
  EXPECT_EQ(v->value_or(""), "v");
}

}  // namespace
}  // namespace berth::store
