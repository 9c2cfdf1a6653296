#include "store/store.h"

#include <arpa/inet.h>
#include <gtest/gtest.h>
#include <netinet/in.h>
#include <poll.h>
#include <sqlite3.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <map>
#include <thread>
#include <vector>

#include "store/etcd_client.h"
#include "store/etcd_follower.h"
#include "store/etcd_store.h"
#include "store/etcd_test_util.h"

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
  w.job = {id, active, end, std::move(record), nullptr};
  return w;
}

// A job's row with its run specification apart (JobRow::exec).
Write PutJobWith(uint32_t id, bool active, Time end, std::string record,
                 std::shared_ptr<const std::string> exec) {
  Write w = PutJob(id, active, end, std::move(record));
  w.job.exec = std::move(exec);
  return w;
}

Write DeleteJob(uint32_t id, Time end) {
  Write d;
  d.kind = Write::Kind::kDeleteJob;
  d.job.id = id;
  d.job.end_time = end;
  return d;
}

std::shared_ptr<const std::string> Text(std::string s) {
  return std::make_shared<const std::string>(std::move(s));
}

// Every job row's whole entry (JoinedRecord), by id.
std::map<uint32_t, std::string> Entries(const Store& s) {
  std::map<uint32_t, std::string> out;
  EXPECT_TRUE(s.ScanJobs(false, [&](const JobRow& r) { out[r.id] = JoinedRecord(r); }).ok());
  return out;
}

// The store contract: every test runs on SQLite and on etcd (skipped, with the reason, where
// there is no etcd binary).
class StoreContractTest : public ::testing::TestWithParam<const char*> {
 protected:
  void SetUp() override {
    char tmpl[] = "/tmp/berth-store-XXXXXX";
    dir_ = mkdtemp(tmpl);
    static std::atomic<int> n{0};
    if (std::string(GetParam()) == "etcd") {
      if (TestEtcd::Binary().empty())
        GTEST_SKIP() << "no etcd binary (scripts/setup installs etcd-server)";
      TestEtcd* etcd = SharedEtcd();
      ASSERT_NE(etcd, nullptr) << "etcd did not start";
      url_ = "etcd://" + etcd->endpoint() + "/berth/test" + std::to_string(getpid()) + "-" +
             std::to_string(n++);
    } else {
      url_ = "sqlite:" + dir_ + "/state.db";
    }
  }
  void TearDown() override { std::filesystem::remove_all(dir_); }

  std::unique_ptr<Store> Open() {
    Result<StoreLocation> where = ParseStoreUrl(url_);
    EXPECT_TRUE(where.ok()) << where.status().ToString();
    Result<std::unique_ptr<Store>> s = Store::Open(*where, dir_ + "/unused.db");
    EXPECT_TRUE(s.ok()) << s.status().ToString();
    return s.ok() ? std::move(*s) : nullptr;
  }
  bool etcd() const { return url_.starts_with("etcd"); }

  std::string dir_, url_;
};

INSTANTIATE_TEST_SUITE_P(Backends, StoreContractTest, ::testing::Values("sqlite", "etcd"),
                         [](const auto& p) { return std::string(p.param); });

TEST_P(StoreContractTest, CommitThenReadBackAfterReopen) {
  {
    auto s = Open();
    ASSERT_NE(s, nullptr);
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
  auto s = Open();
  ASSERT_NE(s, nullptr);
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
  ASSERT_TRUE(
      s->ScanFinished(60, 100, 0, 0, [&](const JobRow& r) { finished.push_back(r.id); }).ok());
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

TEST_P(StoreContractTest, MetaKeysScanByPrefixAndDelete) {
  auto s = Open();
  ASSERT_NE(s, nullptr);
  const auto put = PutMeta;
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

TEST_P(StoreContractTest, ConcurrentCommitsAreGrouped) {
  auto s = Open();
  ASSERT_NE(s, nullptr);
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

// A batch bigger than one etcd txn (128 operations) and scans past a page (kPageKeys keys):
// every row comes back, in id order, with its own record.
TEST_P(StoreContractTest, BigBatchesAndScansPastAPage) {
  auto s = Open();
  ASSERT_NE(s, nullptr);
  const uint32_t n = kPageKeys * 2 + 37;
  std::vector<Write> writes;
  for (uint32_t id = 1; id <= n; ++id) {
    writes.push_back(PutJob(id, id % 3 != 0, id % 3 != 0 ? kNoTime : 1000 + id,
                            std::string(id % 7 == 0 ? 3000 : 10, 'a' + id % 26)));
  }
  ASSERT_TRUE(s->Commit(writes).ok());
  std::vector<uint32_t> all, active;
  ASSERT_TRUE(s->ScanJobs(false, [&](const JobRow& r) {
                 EXPECT_EQ(r.record, std::string(r.id % 7 == 0 ? 3000 : 10, 'a' + r.id % 26));
                 all.push_back(r.id);
               }).ok());
  ASSERT_TRUE(s->ScanJobs(true, [&](const JobRow& r) { active.push_back(r.id); }).ok());
  ASSERT_EQ(all.size(), n);
  for (uint32_t i = 0; i < n; ++i) EXPECT_EQ(all[i], i + 1);
  EXPECT_EQ(active.size(), n - n / 3);
  EXPECT_TRUE(std::is_sorted(active.begin(), active.end()));
  if (etcd()) {
    EXPECT_GE(s->stats().commits, static_cast<int64_t>(n / 128));
  }
}

// sacct's range: finished jobs by end time, [from, to), in id order; a job whose end time was
// rewritten is found at its new time only, and one queued again not at all.
TEST_P(StoreContractTest, FinishedJobsByEndTime) {
  auto s = Open();
  ASSERT_NE(s, nullptr);
  ASSERT_TRUE(s->Commit({PutJob(5, false, 100, "e"), PutJob(2, false, 150, "b"),
                         PutJob(3, false, 200, "c"), PutJob(4, true, kNoTime, "running"),
                         PutJob(6, false, 120, "f"), PutJob(7, false, 130, "g")})
                  .ok());
  ASSERT_TRUE(s->Commit({PutJob(6, false, 300, "f2"), PutJob(7, true, kNoTime, "requeued")}).ok());
  auto ids = [&](Time from, Time to) {
    std::vector<uint32_t> out;
    EXPECT_TRUE(
        s->ScanFinished(from, to, 0, 0, [&](const JobRow& r) { out.push_back(r.id); }).ok());
    return out;
  };
  EXPECT_EQ(ids(100, 200), (std::vector<uint32_t>{2, 5}));
  EXPECT_EQ(ids(0, 1000), (std::vector<uint32_t>{2, 3, 5, 6}));
  EXPECT_EQ(ids(200, 201), (std::vector<uint32_t>{3}));
  EXPECT_EQ(ids(120, 131), (std::vector<uint32_t>{}));
  EXPECT_EQ(ids(300, 300), (std::vector<uint32_t>{}));
  // From a lowest id on (sacct -j): by id from the epoch, or within a window.
  auto from_id = [&](Time from, Time to, uint32_t min_id, size_t limit) {
    std::vector<uint32_t> out;
    EXPECT_TRUE(s->ScanFinished(from, to, min_id, limit, [&](const JobRow& r) {
                   out.push_back(r.id);
                 }).ok());
    return out;
  };
  EXPECT_EQ(from_id(0, kInfinite, 3, 0), (std::vector<uint32_t>{3, 5, 6}));
  EXPECT_EQ(from_id(0, kInfinite, 4, 1), (std::vector<uint32_t>{5}));
  EXPECT_EQ(from_id(0, kInfinite, 7, 0), (std::vector<uint32_t>{}));
  EXPECT_EQ(from_id(100, 250, 3, 0), (std::vector<uint32_t>{3, 5}));
  EXPECT_EQ(from_id(0, 250, 3, 0), (std::vector<uint32_t>{3, 5}));
  Result<std::optional<JobRow>> six = s->GetJob(6);
  ASSERT_TRUE(six.ok());
  EXPECT_EQ((*six)->record, "f2");
  EXPECT_EQ((*six)->end_time, 300);
  EXPECT_FALSE(s->GetJob(99)->has_value());
}

// The archiver's side: finished jobs in batches of at most `limit`, and a finished job's row
// (and its end-time index entry) removed by kDeleteJob; an active job's row is not.
TEST_P(StoreContractTest, FinishedJobsInBatchesAndDeleted) {
  auto s = Open();
  ASSERT_NE(s, nullptr);
  std::vector<Write> w;
  for (uint32_t id = 1; id <= 10; ++id) w.push_back(PutJob(id, false, 100 + id, "r"));
  w.push_back(PutJob(11, true, kNoTime, "running"));
  ASSERT_TRUE(s->Commit(w).ok());
  std::vector<uint32_t> batch;
  ASSERT_TRUE(s->ScanFinished(0, 1000, 0, 4, [&](const JobRow& r) { batch.push_back(r.id); }).ok());
  ASSERT_EQ(batch.size(), 4u);
  std::vector<Write> deletes;
  for (uint32_t id : batch) {
    Write d;
    d.kind = Write::Kind::kDeleteJob;
    d.job.id = id;
    d.job.end_time = 100 + id;
    deletes.push_back(d);
  }
  ASSERT_TRUE(s->Commit(deletes).ok());
  std::vector<uint32_t> left;
  ASSERT_TRUE(s->ScanFinished(0, 1000, 0, 0, [&](const JobRow& r) { left.push_back(r.id); }).ok());
  EXPECT_EQ(left.size(), 6u);
  for (uint32_t id : batch) {
    EXPECT_EQ(std::count(left.begin(), left.end(), id), 0) << id;
    EXPECT_FALSE(s->GetJob(id)->has_value()) << id;
  }
  int rows = 0;
  ASSERT_TRUE(s->ScanJobs(false, [&](const JobRow&) { ++rows; }).ok());
  EXPECT_EQ(rows, 7);
  EXPECT_TRUE(s->GetJob(11)->has_value());
}

TEST(JoinedRecordTest, TheRunSpecificationIsTheRecordsFirstKey) {
  JobRow row;
  row.record = "{\"id\":1}";
  EXPECT_EQ(JoinedRecord(row), "{\"id\":1}");
  row.exec = Text("{\"script\":\"x\"}");
  EXPECT_EQ(JoinedRecord(row), "{\"exec\":{\"script\":\"x\"},\"id\":1}");
  row.record = "{}";
  EXPECT_EQ(JoinedRecord(row), "{\"exec\":{\"script\":\"x\"}}");
}

// Rows whose run specification is apart read back whole, through every read, after updates,
// a change of the specification and deletes, and after a reopen.
TEST_P(StoreContractTest, RunSpecificationsApartReadBackWhole) {
  const auto a = Text("{\"env\":\"A\"}");
  const auto b = Text("{\"env\":\"B\"}");
  {
    auto s = Open();
    ASSERT_NE(s, nullptr);
    ASSERT_TRUE(s->Commit({PutJobWith(1, true, kNoTime, "{\"s\":1}", a),
                           PutJobWith(2, true, kNoTime, "{\"s\":2}", a),
                           PutJobWith(3, true, kNoTime, "{\"s\":3}", b),
                           PutJob(4, true, kNoTime, "{\"s\":4}")})
                    .ok());
    // State changes; job 2's specification changes to b (and back to none for job 4's).
    ASSERT_TRUE(s->Commit({PutJobWith(1, false, 10, "{\"s\":10}", a),
                           PutJobWith(2, true, kNoTime, "{\"s\":20}", b),
                           PutJobWith(3, false, 30, "{\"s\":30}", b)})
                    .ok());
    ASSERT_TRUE(s->Commit({DeleteJob(3, 30)}).ok());
    const std::map<uint32_t, std::string> want = {{1, "{\"exec\":{\"env\":\"A\"},\"s\":10}"},
                                                  {2, "{\"exec\":{\"env\":\"B\"},\"s\":20}"},
                                                  {4, "{\"s\":4}"}};
    EXPECT_EQ(Entries(*s), want);
  }
  auto s = Open();
  ASSERT_NE(s, nullptr);
  EXPECT_EQ(Entries(*s).at(1), "{\"exec\":{\"env\":\"A\"},\"s\":10}");
  EXPECT_EQ(Entries(*s).size(), 3u);
  Result<std::optional<JobRow>> one = s->GetJob(1);
  ASSERT_TRUE(one.ok() && one->has_value());
  EXPECT_EQ(JoinedRecord(**one), "{\"exec\":{\"env\":\"A\"},\"s\":10}");
  std::vector<std::string> finished;
  ASSERT_TRUE(s->ScanFinished(0, 100, 0, 0, [&](const JobRow& r) {
                 finished.push_back(JoinedRecord(r));
               }).ok());
  EXPECT_EQ(finished, std::vector<std::string>{"{\"exec\":{\"env\":\"A\"},\"s\":10}"});
  // After the reopen the writer knows no row: the same text is found again, not copied.
  ASSERT_TRUE(s->Commit({PutJobWith(5, true, kNoTime, "{\"s\":5}", Text("{\"env\":\"B\"}"))}).ok());
  EXPECT_EQ(Entries(*s).at(5), "{\"exec\":{\"env\":\"B\"},\"s\":5}");
}

// How many distinct run specifications the SQLite file keeps.
int64_t ExecRows(const std::string& path) {
  sqlite3* db = nullptr;
  int64_t n = -1;
  if (sqlite3_open_v2(path.c_str(), &db, SQLITE_OPEN_READONLY, nullptr) == SQLITE_OK) {
    sqlite3_stmt* st = nullptr;
    if (sqlite3_prepare_v2(db, "SELECT count(*) FROM execs", -1, &st, nullptr) == SQLITE_OK &&
        sqlite3_step(st) == SQLITE_ROW) {
      n = sqlite3_column_int64(st, 0);
    }
    sqlite3_finalize(st);
  }
  sqlite3_close(db);
  return n;
}

// SQLite keeps each distinct run specification once, and drops it with the last job naming it;
// a text whose row was dropped gets a new one (the writer forgets the ids it knew).
TEST_F(StoreTest, SqliteKeepsEachRunSpecificationOnceWhileAJobNamesIt) {
  auto s = Store::Open(path_);
  ASSERT_TRUE(s.ok()) << s.status().ToString();
  const auto a = Text("{\"env\":\"A\"}");
  std::vector<Write> w;
  for (uint32_t id = 1; id <= 100; ++id) {
    // Equal texts in different objects share a row too.
    w.push_back(PutJobWith(id, true, kNoTime, "{}", id % 2 ? a : Text(*a)));
  }
  w.push_back(PutJobWith(101, true, kNoTime, "{}", Text("{\"env\":\"B\"}")));
  ASSERT_TRUE((*s)->Commit(w).ok());
  EXPECT_EQ(ExecRows(path_), 2);
  // Job 101 ends and leaves: B goes with it.
  ASSERT_TRUE((*s)->Commit({PutJobWith(101, false, 5, "{}", Text("{\"env\":\"B\"}"))}).ok());
  ASSERT_TRUE((*s)->Commit({DeleteJob(101, 5)}).ok());
  EXPECT_EQ(ExecRows(path_), 1);
  // Every job leaves A for C: A goes; then a job names A (the same object) again.
  w.clear();
  for (uint32_t id = 1; id <= 100; ++id) {
    w.push_back(PutJobWith(id, true, kNoTime, "{}", Text("{\"env\":\"C\"}")));
  }
  ASSERT_TRUE((*s)->Commit(w).ok());
  EXPECT_EQ(ExecRows(path_), 1);
  ASSERT_TRUE((*s)->Commit({PutJobWith(200, true, kNoTime, "{}", a)}).ok());
  EXPECT_EQ(ExecRows(path_), 2);
  EXPECT_EQ(Entries(**s).at(200), "{\"exec\":{\"env\":\"A\"}}");
  EXPECT_EQ(Entries(**s).at(7), "{\"exec\":{\"env\":\"C\"}}");
}

// A database written before the run specifications had a table: its rows read back as they
// were (the specification inside the record), and new rows go the new way beside them.
// The writer checkpoints the write-ahead log itself, after acknowledging (SQLite's automatic
// checkpoint, inside the COMMIT, is off): the log stays bounded however much is written, and a
// reader sees every acknowledged change.
TEST_F(StoreTest, SqliteCheckpointsItsLogAfterCommitsAndKeepsItBounded) {
  auto s = Store::Open(path_);
  ASSERT_TRUE(s.ok()) << s.status().message();
  for (uint32_t round = 0; round < 20; ++round) {
    // ~2,000 pages of log a round (changed rows: SQLite does not write a row again unchanged).
    const std::string big(2000, static_cast<char>('a' + round));
    std::vector<Write> w;
    for (uint32_t i = 1; i <= 4000; ++i) w.push_back(PutJob(i, true, kNoTime, big));
    ASSERT_TRUE((*s)->Commit(std::move(w)).ok());
  }
  ASSERT_TRUE((*s)->Commit({PutMeta("last", "1")}).ok());
  std::error_code ec;
  const auto wal = std::filesystem::file_size(path_ + "-wal", ec);
  ASSERT_FALSE(ec) << ec.message();
  // Without checkpoints: 20 rounds of ~8 MB. With them the log restarts from its start after
  // each: about one round's worth.
  EXPECT_LT(wal, 40u << 20);
  Result<std::optional<std::string>> last = (*s)->GetMeta("last");
  ASSERT_TRUE(last.ok());
  EXPECT_EQ(last->value_or(""), "1");
}

TEST_F(StoreTest, ADatabaseFromBeforeTheExecsTableOpensAndReadsBack) {
  {
    sqlite3* db = nullptr;
    ASSERT_EQ(sqlite3_open(path_.c_str(), &db), SQLITE_OK);
    ASSERT_EQ(sqlite3_exec(db,
                           "CREATE TABLE jobs(id INTEGER PRIMARY KEY, active INTEGER NOT NULL, "
                           "end_time INTEGER, record TEXT NOT NULL);"
                           "INSERT INTO jobs VALUES(1, 1, NULL, '{\"exec\":{\"e\":1},\"s\":1}');",
                           nullptr, nullptr, nullptr),
              SQLITE_OK);
    sqlite3_close(db);
  }
  auto s = Store::Open(path_);
  ASSERT_TRUE(s.ok()) << s.status().ToString();
  ASSERT_TRUE((*s)->Commit({PutJobWith(2, true, kNoTime, "{\"s\":2}", Text("{\"e\":2}"))}).ok());
  const std::map<uint32_t, std::string> want = {{1, "{\"exec\":{\"e\":1},\"s\":1}"},
                                                {2, "{\"exec\":{\"e\":2},\"s\":2}"}};
  EXPECT_EQ(Entries(**s), want);
  // The old row written again names its specification apart.
  ASSERT_TRUE((*s)->Commit({PutJobWith(1, true, kNoTime, "{\"s\":1}", Text("{\"e\":1}"))}).ok());
  EXPECT_EQ(Entries(**s), want);
  EXPECT_EQ(ExecRows(path_), 2);
}

// The same key written twice in one batch (and by two callers grouped into one commit): the
// last write wins, as in SQLite (etcd refuses a key twice in one txn: the store must merge).
TEST_P(StoreContractTest, TheLastWriteOfAKeyInABatchWins) {
  auto s = Open();
  ASSERT_NE(s, nullptr);
  Write del;
  del.kind = Write::Kind::kDeleteMeta;
  del.key = "a";
  ASSERT_TRUE(s->Commit({PutMeta("next_job_id", "2"), PutJob(1, true, kNoTime, "x"),
                         PutMeta("next_job_id", "3"), PutJob(1, false, 10, "y"), PutMeta("a", "1"),
                         del, PutMeta("b", "1"), PutMeta("b", "2")})
                  .ok());
  EXPECT_EQ(s->GetMeta("next_job_id")->value_or(""), "3");
  EXPECT_EQ((*s->GetJob(1))->record, "y");
  EXPECT_FALSE(s->GetMeta("a")->has_value());
  EXPECT_EQ(s->GetMeta("b")->value_or(""), "2");
  std::vector<std::thread> threads;
  for (int t = 0; t < 4; ++t) {
    threads.emplace_back([&, t] {
      for (int i = 0; i < 20; ++i) {
        EXPECT_TRUE(s->Commit({PutMeta("shared", std::to_string(t)),
                               PutMeta("mine" + std::to_string(t), std::to_string(i))})
                        .ok());
      }
    });
  }
  for (std::thread& t : threads) t.join();
  for (int t = 0; t < 4; ++t) EXPECT_EQ(s->GetMeta("mine" + std::to_string(t))->value_or(""), "19");
  std::string shared = s->GetMeta("shared")->value_or("");
  EXPECT_TRUE(shared == "0" || shared == "1" || shared == "2" || shared == "3") << shared;
}

// Commit latency and throughput of each backend through its own client, printed for
// docs/adr/0007-etcd-store.md; runs only with BERTH_STORE_BENCH=1 (it measures, asserts little).
TEST_P(StoreContractTest, CommitSpeed) {
  if (std::getenv("BERTH_STORE_BENCH") == nullptr) GTEST_SKIP() << "set BERTH_STORE_BENCH=1";
  auto s = Open();
  ASSERT_NE(s, nullptr);
  const std::string record(1500, 'r');  // about a held job's record
  using Clock = std::chrono::steady_clock;
  auto seconds = [](Clock::time_point t0) {
    return std::chrono::duration<double>(Clock::now() - t0).count();
  };
  uint32_t next = 1;
  const int n = 300;
  auto t0 = Clock::now();
  for (int i = 0; i < n; ++i) ASSERT_TRUE(s->Commit({PutJob(next++, true, kNoTime, record)}).ok());
  const double one = seconds(t0) / n;
  t0 = Clock::now();
  for (int i = 0; i < 20; ++i) {
    std::vector<Write> batch;
    for (int j = 0; j < 100; ++j) batch.push_back(PutJob(next++, true, kNoTime, record));
    ASSERT_TRUE(s->Commit(std::move(batch)).ok());
  }
  const double per100 = seconds(t0) / 20;
  std::atomic<uint32_t> id{next};
  t0 = Clock::now();
  std::vector<std::thread> threads;
  for (int t = 0; t < 8; ++t) {
    threads.emplace_back([&] {
      for (int i = 0; i < n / 8; ++i) {
        EXPECT_TRUE(s->Commit({PutJob(id++, true, kNoTime, record)}).ok());
      }
    });
  }
  for (std::thread& t : threads) t.join();
  const double par = (n / 8 * 8) / seconds(t0);
  t0 = Clock::now();
  int rows = 0;
  ASSERT_TRUE(s->ScanJobs(false, [&](const JobRow&) { ++rows; }).ok());
  const double scan = seconds(t0);
  std::printf(
      "%s: 1-write commit %.2f ms; 100-write commit %.2f ms; 8 threads %.0f commits/s; "
      "scan of %d rows %.3f s (%.0f rows/s)\n",
      GetParam(), one * 1e3, per100 * 1e3, par, rows, scan, rows / scan);
}

TEST(StoreUrlTest, ParsesEveryForm) {
  Result<StoreLocation> l = ParseStoreUrl("sqlite");
  ASSERT_TRUE(l.ok());
  EXPECT_EQ(l->kind, StoreLocation::Kind::kSqlite);
  EXPECT_EQ(l->sqlite_path, "");
  EXPECT_EQ(ParseStoreUrl("sqlite:/x/state.db")->sqlite_path, "/x/state.db");
  l = ParseStoreUrl("etcd://h1:2379,10.0.0.2:2379");
  ASSERT_TRUE(l.ok());
  EXPECT_EQ(l->kind, StoreLocation::Kind::kEtcd);
  EXPECT_EQ(l->endpoints, (std::vector<std::string>{"h1:2379", "10.0.0.2:2379"}));
  EXPECT_EQ(l->prefix, "/berth/default");
  EXPECT_FALSE(l->tls);
  l = ParseStoreUrl(
      "etcds://h1:2379/berth/prod/?cacert=/ca.pem&cert=/c.pem&key=/k.pem&max-txn-ops=1000");
  ASSERT_TRUE(l.ok()) << l.status().ToString();
  EXPECT_TRUE(l->tls);
  EXPECT_EQ(l->prefix, "/berth/prod");
  EXPECT_EQ(l->ca_file, "/ca.pem");
  EXPECT_EQ(l->cert_file, "/c.pem");
  EXPECT_EQ(l->key_file, "/k.pem");
  EXPECT_EQ(l->max_txn_ops, 1000);
  EXPECT_EQ(ParseStoreUrl("etcd://h:1?retry-ms=0&timeout-ms=700")->retry_ms, 0);
}

TEST(StoreUrlTest, RefusesMalformedUrlsClearly) {
  for (const char* bad :
       {"", "sqlite:", "mysql://x", "etcd://", "etcd://h1", "etcd://h1:0", "etcd://h1:2379,",
        "etcd://h1:70000", "etcd://h1:2379/", "etcd://h1:2379?cert=/c.pem",
        "etcds://h1:2379?cert=/c.pem", "etcds://h1:2379?color=blue", "etcd://h1:2379?cacert=/x",
        "etcd://h1:2379?max-txn-ops=1"}) {
    Result<StoreLocation> l = ParseStoreUrl(bad);
    EXPECT_FALSE(l.ok()) << bad;
    if (!l.ok()) {
      EXPECT_EQ(l.status().code(), StatusCode::kInvalidArgument) << bad;
      EXPECT_NE(l.status().message().find("--store"), std::string::npos) << bad;
    }
  }
}

TEST(EtcdClientTest, Base64RoundTripsAndPrefixEnds) {
  for (std::string s : {std::string(""), std::string("a"), std::string("ab"), std::string("abc"),
                        std::string("\xff\x00\x01zz", 5)}) {
    EXPECT_EQ(Unbase64(Base64(s)).value(), s);
  }
  EXPECT_EQ(Base64("foo"), "Zm9v");
  EXPECT_EQ(Base64("fo"), "Zm8=");
  EXPECT_EQ(PrefixEnd("/a/"), "/a0");
  EXPECT_EQ(PrefixEnd(std::string("a\xff", 2)), "b");
  EXPECT_FALSE(Unbase64("!!").ok());
}

// An etcd that cannot be reached: opening fails with UNAVAILABLE naming the endpoint; a store
// whose etcd dies fails each commit with UNAVAILABLE, and what it refused is not there once
// etcd is back.
TEST(EtcdStoreTest, AnUnreachableEtcdFailsClearlyAndWritesNothing) {
  if (TestEtcd::Binary().empty())
    GTEST_SKIP() << "no etcd binary (scripts/setup installs etcd-server)";
  Result<std::unique_ptr<Store>> none =
      Store::Open(*ParseStoreUrl("etcd://127.0.0.1:1,127.0.0.1:2?timeout-ms=500&retry-ms=0"), "");
  ASSERT_FALSE(none.ok());
  EXPECT_EQ(none.status().code(), StatusCode::kUnavailable);
  EXPECT_NE(none.status().message().find("127.0.0.1:2"), std::string::npos)
      << none.status().message();

  std::unique_ptr<TestEtcd> etcd = TestEtcd::Start();
  ASSERT_NE(etcd, nullptr);
  // A dead endpoint first: the client moves on to the live one.
  StoreLocation where =
      *ParseStoreUrl("etcd://127.0.0.1:1," + etcd->endpoint() + "/t?timeout-ms=1000&retry-ms=500");
  auto s = std::move(Store::Open(where, "")).value();
  ASSERT_TRUE(s->Commit({PutJob(1, true, kNoTime, "kept")}).ok());
  etcd->Kill();
  Status st = s->Commit({PutJob(2, true, kNoTime, "refused"), PutMeta("next_job_id", "3")});
  EXPECT_EQ(st.code(), StatusCode::kUnavailable) << st.ToString();
  EXPECT_NE(st.message().find(etcd->endpoint()), std::string::npos) << st.message();
  EXPECT_EQ(s->GetJob(1).status().code(), StatusCode::kUnavailable);
  ASSERT_TRUE(etcd->Restart());
  std::vector<uint32_t> ids;
  ASSERT_TRUE(s->ScanJobs(false, [&](const JobRow& r) { ids.push_back(r.id); }).ok());
  EXPECT_EQ(ids, std::vector<uint32_t>{1});
  EXPECT_FALSE(s->GetMeta("next_job_id")->has_value());
  EXPECT_TRUE(s->Commit({PutJob(2, true, kNoTime, "after")}).ok());  // and it works again
}

TEST(EtcdStoreTest, AnEntryLargerThanATxnIsRefused) {
  if (TestEtcd::Binary().empty())
    GTEST_SKIP() << "no etcd binary (scripts/setup installs etcd-server)";
  TestEtcd* etcd = SharedEtcd();
  ASSERT_NE(etcd, nullptr);
  auto s =
      std::move(Store::Open(*ParseStoreUrl("etcd://" + etcd->endpoint() + "/big"), "")).value();
  Status st = s->Commit({PutJob(1, true, kNoTime, std::string(2 << 20, 'x'))});
  EXPECT_EQ(st.code(), StatusCode::kInvalidArgument) << st.ToString();
  EXPECT_FALSE(s->GetJob(1)->has_value());
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

namespace berth::store {
namespace {

// A standby's copy of the keys follows puts and deletes (past a page of the first read), and a
// store opened with it reads the copy until its own first commit, then etcd (ADR 0008).
TEST(EtcdFollowerTest, FollowsTheStoreAndAWarmStoreReadsItsCopyUntilItsFirstCommit) {
  if (TestEtcd::Binary().empty()) GTEST_SKIP() << "no etcd binary";
  TestEtcd* etcd = SharedEtcd();
  ASSERT_NE(etcd, nullptr);
  Result<StoreLocation> loc =
      ParseStoreUrl("etcd://" + etcd->endpoint() + "/berth/follow" + std::to_string(getpid()));
  ASSERT_TRUE(loc.ok());
  auto a = Store::Open(*loc, "");
  ASSERT_TRUE(a.ok()) << a.status().message();
  std::vector<Write> w;
  for (uint32_t id = 1; id <= 600; ++id) w.push_back(PutJob(id, true, kNoTime, "r"));
  w.push_back(PutMeta("m", "1"));
  ASSERT_TRUE((*a)->Commit(w).ok());
  std::unique_ptr<EtcdFollower> follower = EtcdFollower::Start(*loc);
  Write del;
  del.kind = Write::Kind::kDeleteJob;
  del.job.id = 3;
  del.job.end_time = 60;
  ASSERT_TRUE((*a)->Commit({PutJob(2, false, 50, "done"), PutJob(3, false, 60, "gone")}).ok());
  ASSERT_TRUE((*a)->Commit({del, PutMeta("m", "2"), PutJob(601, true, kNoTime, "new")}).ok());
  // The revision etcd is at now.
  auto client = EtcdClient::Create(*loc);
  ASSERT_TRUE(client.ok());
  Result<nlohmann::json> now =
      (*client)->Call("/v3/kv/range", {{"key", Base64(loc->prefix + "/")}, {"count_only", true}});
  ASSERT_TRUE(now.ok());
  const int64_t revision = EtcdInt((*now)["header"]["revision"]);
  std::shared_ptr<const EtcdSnapshot> copy = follower->TakeAt(revision, 10000);
  ASSERT_NE(copy, nullptr);
  EXPECT_GE(copy->revision, revision);

  StoreLocation warm = *loc;
  warm.warm = copy;
  auto b = Store::Open(warm, "");
  ASSERT_TRUE(b.ok());
  auto rows = [](Store& s) {
    std::vector<std::pair<uint32_t, std::string>> out;
    EXPECT_TRUE(s.ScanJobs(false, [&](const JobRow& r) { out.emplace_back(r.id, r.record); }).ok());
    return out;
  };
  EXPECT_EQ(rows(**b), rows(**a));
  EXPECT_EQ(rows(**b).size(), 600u);  // 1..601 without 3
  EXPECT_EQ(**(*b)->GetMeta("m"), "2");
  std::vector<uint32_t> finished;
  ASSERT_TRUE(
      (*b)->ScanFinished(0, 100, 0, 0, [&](const JobRow& r) { finished.push_back(r.id); }).ok());
  EXPECT_EQ(finished, std::vector<uint32_t>{2});
  EXPECT_FALSE((*b)->GetJob(3)->has_value());
  // Reads come from the copy (a change made elsewhere is not in it)...
  ASSERT_TRUE((*a)->Commit({PutMeta("m", "3")}).ok());
  EXPECT_EQ(**(*b)->GetMeta("m"), "2");
  // ...until the store's own first commit: from then on, etcd.
  ASSERT_TRUE((*b)->Commit({PutMeta("x", "1")}).ok());
  EXPECT_EQ(**(*b)->GetMeta("m"), "3");
}

// A TCP relay to a port on loopback that can go silent as a cut link does: it then passes
// nothing either way and closes nothing, so that a reader on it waits without an error.
class SilenceableRelay {
 public:
  explicit SilenceableRelay(int target_port) : target_(target_port) {
    listener_ = socket(AF_INET, SOCK_STREAM, 0);
    sockaddr_in a{};
    a.sin_family = AF_INET;
    a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    socklen_t len = sizeof(a);
    if (bind(listener_, reinterpret_cast<sockaddr*>(&a), len) != 0 || listen(listener_, 16) != 0 ||
        getsockname(listener_, reinterpret_cast<sockaddr*>(&a), &len) != 0) {
      return;
    }
    port_ = ntohs(a.sin_port);
    threads_.emplace_back([this] { Accept(); });
  }
  ~SilenceableRelay() {
    stop_ = true;
    for (std::thread& t : threads_) t.join();
    close(listener_);
  }
  int port() const { return port_; }
  void Silence() { silent_ = true; }

 private:
  void Accept() {
    while (!stop_) {
      pollfd p{listener_, POLLIN, 0};
      if (poll(&p, 1, 50) <= 0) continue;
      int in = accept(listener_, nullptr, nullptr);
      if (in < 0) continue;
      int out = socket(AF_INET, SOCK_STREAM, 0);
      sockaddr_in a{};
      a.sin_family = AF_INET;
      a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
      a.sin_port = htons(static_cast<uint16_t>(target_));
      if (connect(out, reinterpret_cast<sockaddr*>(&a), sizeof(a)) != 0) {
        close(in);
        close(out);
        continue;
      }
      threads_.emplace_back([this, in, out] { Relay(in, out); });
    }
  }
  void Relay(int a, int b) {
    char buf[16384];
    bool open = true;
    while (!stop_ && open) {
      if (silent_) {
        std::this_thread::sleep_for(std::chrono::milliseconds(50));
        continue;
      }
      pollfd p[2] = {{a, POLLIN, 0}, {b, POLLIN, 0}};
      if (poll(p, 2, 50) <= 0) continue;
      for (int i = 0; i < 2 && open; ++i) {
        if (!(p[i].revents & (POLLIN | POLLHUP | POLLERR))) continue;
        const ssize_t n = read(p[i].fd, buf, sizeof(buf));
        open = n > 0 && write(p[1 - i].fd, buf, static_cast<size_t>(n)) == n;
      }
    }
    close(a);
    close(b);
  }

  const int target_;
  int listener_ = -1;
  int port_ = 0;
  std::atomic<bool> stop_{false}, silent_{false};
  std::vector<std::thread> threads_;  // Accept's, then one per connection (Accept adds them)
};

// A standby's watch on an etcd member that went silent (its host cut off: nothing resets the
// connection) is moved to the next endpoint when the copy is asked for, and resumes from the
// copy's revision: the copy is handed over with every change, without reading etcd again.
TEST(EtcdFollowerTest, AWatchOnASilentMemberMovesToTheNextEndpointAndResumes) {
  if (TestEtcd::Binary().empty()) GTEST_SKIP() << "no etcd binary";
  TestEtcd* etcd = SharedEtcd();
  ASSERT_NE(etcd, nullptr);
  const std::string port = etcd->endpoint().substr(etcd->endpoint().rfind(':') + 1);
  SilenceableRelay relay(std::stoi(port));
  ASSERT_NE(relay.port(), 0);
  const std::string prefix = "/berth/silent" + std::to_string(getpid());
  Result<StoreLocation> direct = ParseStoreUrl("etcd://" + etcd->endpoint() + prefix);
  // The relay first: the follower reads and watches through it.
  Result<StoreLocation> both = ParseStoreUrl("etcd://127.0.0.1:" + std::to_string(relay.port()) +
                                             "," + etcd->endpoint() + prefix);
  ASSERT_TRUE(direct.ok() && both.ok());
  auto a = Store::Open(*direct, "");
  ASSERT_TRUE(a.ok()) << a.status().message();
  ASSERT_TRUE(
      (*a)->Commit({PutJob(1, true, kNoTime, "one"), PutJob(2, true, kNoTime, "two")}).ok());
  std::unique_ptr<EtcdFollower> follower = EtcdFollower::Start(*both);
  ASSERT_TRUE((*a)->Commit({PutMeta("m", "1")}).ok());
  auto client = EtcdClient::Create(*direct);
  ASSERT_TRUE(client.ok());
  auto revision_now = [&] {
    Result<nlohmann::json> now =
        (*client)->Call("/v3/kv/range", {{"key", Base64(prefix + "/")}, {"count_only", true}});
    return now.ok() ? EtcdInt((*now)["header"]["revision"]) : int64_t{-1};
  };
  // The copy follows through the relay...
  for (int i = 0; i < 200 && follower->revision() < revision_now(); ++i) {
    std::this_thread::sleep_for(std::chrono::milliseconds(25));
  }
  ASSERT_EQ(follower->revision(), revision_now());
  // ...until the relay goes silent; changes made meanwhile reach the copy only by another way.
  relay.Silence();
  std::this_thread::sleep_for(std::chrono::milliseconds(200));  // a relay in its poll is done
  Write del;
  del.kind = Write::Kind::kDeleteJob;
  del.job.id = 1;
  ASSERT_TRUE((*a)->Commit({del, PutJob(3, true, kNoTime, "three"), PutMeta("m", "2")}).ok());
  const int64_t revision = revision_now();
  std::shared_ptr<const EtcdSnapshot> copy = follower->TakeAt(revision, 10000);
  ASSERT_NE(copy, nullptr);
  EXPECT_GE(copy->revision, revision);
  StoreLocation warm = *direct;
  warm.warm = copy;
  auto b = Store::Open(warm, "");
  ASSERT_TRUE(b.ok());
  std::vector<std::pair<uint32_t, std::string>> rows;
  ASSERT_TRUE(
      (*b)->ScanJobs(false, [&](const JobRow& r) { rows.emplace_back(r.id, r.record); }).ok());
  EXPECT_EQ(rows, (std::vector<std::pair<uint32_t, std::string>>{{2, "two"}, {3, "three"}}));
  EXPECT_EQ(**(*b)->GetMeta("m"), "2");
}

// A copy that cannot catch up in time is not handed over.
TEST(EtcdFollowerTest, ACopyBehindTheRevisionAskedForIsNotHandedOver) {
  if (TestEtcd::Binary().empty()) GTEST_SKIP() << "no etcd binary";
  TestEtcd* etcd = SharedEtcd();
  ASSERT_NE(etcd, nullptr);
  Result<StoreLocation> loc =
      ParseStoreUrl("etcd://" + etcd->endpoint() + "/berth/behind" + std::to_string(getpid()));
  ASSERT_TRUE(loc.ok());
  std::unique_ptr<EtcdFollower> follower = EtcdFollower::Start(*loc);
  EXPECT_EQ(follower->TakeAt(int64_t{1} << 40, 300), nullptr);
}

}  // namespace
}  // namespace berth::store
