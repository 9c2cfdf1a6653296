// The SQLite backend of Store (docs/adr/0003-store.md).
#include <fcntl.h>
#include <sqlite3.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <condition_variable>
#include <cstring>
#include <deque>
#include <future>
#include <thread>

#include "common/thread_annotations.h"
#include "store/store.h"

namespace berth::store {
namespace {

constexpr const char* kSchema = R"(
CREATE TABLE IF NOT EXISTS jobs(
  id INTEGER PRIMARY KEY,
  active INTEGER NOT NULL,
  end_time INTEGER,
  record TEXT NOT NULL);
CREATE INDEX IF NOT EXISTS jobs_active ON jobs(id) WHERE active = 1;
CREATE INDEX IF NOT EXISTS jobs_end ON jobs(end_time) WHERE active = 0;
CREATE TABLE IF NOT EXISTS nodes(name TEXT PRIMARY KEY, record TEXT NOT NULL);
CREATE TABLE IF NOT EXISTS meta(key TEXT PRIMARY KEY, value TEXT NOT NULL);
)";

Status SqlError(sqlite3* db, const std::string& what) {
  return Status::Internal(what + ": " + (db ? sqlite3_errmsg(db) : "out of memory"));
}

// A prepared statement, finalized on destruction.
class Stmt {
 public:
  Stmt(sqlite3* db, const char* sql) : db_(db) {
    if (sqlite3_prepare_v2(db, sql, -1, &stmt_, nullptr) != SQLITE_OK) stmt_ = nullptr;
  }
  ~Stmt() { sqlite3_finalize(stmt_); }
  Stmt(const Stmt&) = delete;
  Stmt& operator=(const Stmt&) = delete;
  bool ok() const { return stmt_ != nullptr; }
  sqlite3_stmt* get() { return stmt_; }
  void Reset() {
    sqlite3_reset(stmt_);
    sqlite3_clear_bindings(stmt_);
  }
  void Bind(int i, int64_t v) { sqlite3_bind_int64(stmt_, i, v); }
  void Bind(int i, std::string_view v) {
    sqlite3_bind_text(stmt_, i, v.data(), static_cast<int>(v.size()), SQLITE_TRANSIENT);
  }
  void BindNull(int i) { sqlite3_bind_null(stmt_, i); }
  Status Step(const std::string& what) {
    int rc = sqlite3_step(stmt_);
    if (rc != SQLITE_DONE && rc != SQLITE_ROW) return SqlError(db_, what);
    return Status::Ok();
  }

 private:
  sqlite3* db_;
  sqlite3_stmt* stmt_ = nullptr;
};

Result<sqlite3*> OpenDb(const std::string& path) {
  sqlite3* db = nullptr;
  int rc = sqlite3_open_v2(
      path.c_str(), &db, SQLITE_OPEN_READWRITE | SQLITE_OPEN_CREATE | SQLITE_OPEN_NOMUTEX, nullptr);
  if (rc != SQLITE_OK) {
    Status st = SqlError(db, "cannot open " + path);
    sqlite3_close(db);
    return st;
  }
  sqlite3_busy_timeout(db, 10000);
  char* err = nullptr;
  if (sqlite3_exec(db, "PRAGMA journal_mode=WAL; PRAGMA synchronous=FULL;", nullptr, nullptr,
                   &err) != SQLITE_OK) {
    Status st = Status::Internal(path + ": " + (err ? err : "pragma failed"));
    sqlite3_free(err);
    sqlite3_close(db);
    return st;
  }
  return db;
}

JobRow ReadJobRow(sqlite3_stmt* s) {
  JobRow row;
  row.id = static_cast<uint32_t>(sqlite3_column_int64(s, 0));
  row.active = sqlite3_column_int64(s, 1) != 0;
  row.end_time = sqlite3_column_type(s, 2) == SQLITE_NULL ? kNoTime : sqlite3_column_int64(s, 2);
  const unsigned char* text = sqlite3_column_text(s, 3);
  row.record.assign(
      reinterpret_cast<const char*>(text ? text : reinterpret_cast<const unsigned char*>("")),
      static_cast<size_t>(sqlite3_column_bytes(s, 3)));
  return row;
}

}  // namespace

// Threads: the writer thread owns `writer` (opened before it starts); readers share `reader`
// under `reader_mu` (a connection opened NOMUTEX serves one thread at a time); `mu` guards the
// queue of commits and the counters. The annotations are checked by scripts/check-thread-safety.
struct SqliteImpl {
  sqlite3* writer = nullptr;
  mutable Mutex reader_mu;
  sqlite3* reader GUARDED_BY(reader_mu) = nullptr;

  Mutex mu;
  std::condition_variable cv;  // waits on mu.native() (UniqueLock::get())
  struct Pending {
    std::vector<Write> writes;
    std::promise<Status> done;
  };
  std::deque<Pending*> queue GUARDED_BY(mu);
  bool stopping GUARDED_BY(mu) = false;
  StoreStats stats GUARDED_BY(mu);
  std::thread thread;

  ~SqliteImpl() {
    {
      MutexLock<Mutex> l(mu);
      stopping = true;
    }
    cv.notify_all();
    if (thread.joinable()) thread.join();
    sqlite3_close(writer);
    sqlite3_close(reader);
  }

  // Writes the batch's rows in the open transaction; counts them in *rows (those written before
  // an error included).
  Status ApplyAll(const std::vector<Pending*>& batch, int64_t* rows) EXCLUDES(mu) {
    Stmt put_job(writer,
                 "INSERT INTO jobs(id, active, end_time, record) VALUES(?1, ?2, ?3, ?4) "
                 "ON CONFLICT(id) DO UPDATE SET active = ?2, end_time = ?3, record = ?4");
    Stmt put_node(writer,
                  "INSERT INTO nodes(name, record) VALUES(?1, ?2) "
                  "ON CONFLICT(name) DO UPDATE SET record = ?2");
    // Only a finished job's row leaves (the archive took it).
    Stmt del_job(writer, "DELETE FROM jobs WHERE id = ?1 AND active = 0");
    Stmt del_node(writer, "DELETE FROM nodes WHERE name = ?1");
    Stmt put_meta(writer,
                  "INSERT INTO meta(key, value) VALUES(?1, ?2) "
                  "ON CONFLICT(key) DO UPDATE SET value = ?2");
    Stmt del_meta(writer, "DELETE FROM meta WHERE key = ?1");
    if (!put_job.ok() || !del_job.ok() || !put_node.ok() || !del_node.ok() || !put_meta.ok() ||
        !del_meta.ok()) {
      return SqlError(writer, "prepare");
    }
    for (Pending* p : batch) {
      for (const Write& w : p->writes) {
        Stmt* s = nullptr;
        switch (w.kind) {
          case Write::Kind::kPutJob:
            s = &put_job;
            s->Bind(1, static_cast<int64_t>(w.job.id));
            s->Bind(2, w.job.active ? 1 : 0);
            if (w.job.end_time == kNoTime) {
              s->BindNull(3);
            } else {
              s->Bind(3, w.job.end_time);
            }
            s->Bind(4, w.job.record);
            break;
          case Write::Kind::kDeleteJob:
            s = &del_job;
            s->Bind(1, static_cast<int64_t>(w.job.id));
            break;
          case Write::Kind::kPutNode:
            s = &put_node;
            s->Bind(1, w.key);
            s->Bind(2, w.value);
            break;
          case Write::Kind::kDeleteNode:
            s = &del_node;
            s->Bind(1, w.key);
            break;
          case Write::Kind::kPutMeta:
            s = &put_meta;
            s->Bind(1, w.key);
            s->Bind(2, w.value);
            break;
          case Write::Kind::kDeleteMeta:
            s = &del_meta;
            s->Bind(1, w.key);
            break;
        }
        BERTH_RETURN_IF_ERROR(s->Step("write"));
        s->Reset();
        ++*rows;
      }
    }
    return Status::Ok();
  }

  // The writer thread: one transaction for everything queued at the time.
  void Run() EXCLUDES(mu) {
    while (true) {
      std::vector<Pending*> batch;
      {
        UniqueLock l(mu);
        cv.wait(l.get(), [&]() REQUIRES(mu) { return stopping || !queue.empty(); });
        if (queue.empty() && stopping) return;
        batch.assign(queue.begin(), queue.end());
        queue.clear();
      }
      int64_t rows = 0;
      Status st = Exec("BEGIN IMMEDIATE");
      if (st.ok()) st = ApplyAll(batch, &rows);
      if (st.ok()) {
        st = Exec("COMMIT");
      } else {
        (void)Exec("ROLLBACK");
      }
      {
        MutexLock<Mutex> l(mu);
        stats.rows_written += rows;
        ++stats.commits;
        stats.batches += static_cast<int64_t>(batch.size());
      }
      for (Pending* p : batch) p->done.set_value(st);
    }
  }

  Status Exec(const char* sql) {
    char* err = nullptr;
    if (sqlite3_exec(writer, sql, nullptr, nullptr, &err) != SQLITE_OK) {
      Status s = Status::Internal(std::string(sql) + ": " + (err ? err : "failed"));
      sqlite3_free(err);
      return s;
    }
    return Status::Ok();
  }
};

class SqliteStore final : public Store {
 public:
  explicit SqliteStore(std::string path) : path_(std::move(path)) {}
  Status Commit(std::vector<Write> writes) override;
  Status ScanJobs(bool active_only, const std::function<void(const JobRow&)>& fn) const override;
  Status ScanFinished(Time from, Time to, size_t limit,
                      const std::function<void(const JobRow&)>& fn) const override;
  Result<std::optional<JobRow>> GetJob(uint32_t id) const override;
  Status ScanNodes(
      const std::function<void(const std::string&, const std::string&)>& fn) const override;
  Result<std::optional<std::string>> GetMeta(const std::string& key) const override;
  Status ScanMeta(
      const std::string& prefix,
      const std::function<void(const std::string&, const std::string&)>& fn) const override;
  StoreStats stats() const override;
  std::string Describe() const override { return "sqlite " + path_; }

  const std::unique_ptr<SqliteImpl> impl_ = std::make_unique<SqliteImpl>();

 private:
  std::string path_;
};

// The database holds every job's script and environment (tokens, keys): it and its WAL and
// shared-memory files are the owner's alone (0600) whatever the umask, as slurmctld keeps its
// state files. SQLite gives the WAL and -shm files the database file's mode when it makes them;
// files an older berth left readable are fixed here.
static Status MakePrivate(const std::string& path) {
  int fd = open(path.c_str(), O_RDWR | O_CREAT | O_CLOEXEC | O_NOFOLLOW, 0600);
  if (fd < 0) return Status::InvalidArgument("cannot open " + path + ": " + strerror(errno));
  int rc = fchmod(fd, 0600);
  int err = errno;
  close(fd);
  if (rc != 0) return Status::Internal("cannot chmod " + path + ": " + strerror(err));
  for (const char* suffix : {"-wal", "-shm", "-journal"}) {
    std::string side = path + suffix;
    if (chmod(side.c_str(), 0600) != 0 && errno != ENOENT) {
      return Status::Internal("cannot chmod " + side + ": " + strerror(errno));
    }
  }
  return Status::Ok();
}

Result<std::unique_ptr<Store>> Store::Open(const std::string& path) {
  BERTH_RETURN_IF_ERROR(MakePrivate(path));
  auto s = std::make_unique<SqliteStore>(path);
  BERTH_ASSIGN_OR_RETURN(s->impl_->writer, OpenDb(path));
  char* err = nullptr;
  if (sqlite3_exec(s->impl_->writer, kSchema, nullptr, nullptr, &err) != SQLITE_OK) {
    Status st = Status::Internal(path + ": schema: " + (err ? err : "failed"));
    sqlite3_free(err);
    return st;
  }
  BERTH_ASSIGN_OR_RETURN(auto reader, OpenDb(path));
  SqliteImpl* impl = s->impl_.get();
  {
    MutexLock<Mutex> l(impl->reader_mu);
    impl->reader = reader;
  }
  impl->thread = std::thread([impl] { impl->Run(); });
  return std::unique_ptr<Store>(std::move(s));
}

Status SqliteStore::Commit(std::vector<Write> writes) {
  if (writes.empty()) return Status::Ok();
  SqliteImpl::Pending p;
  p.writes = std::move(writes);
  std::future<Status> done = p.done.get_future();
  {
    MutexLock<Mutex> l(impl_->mu);
    if (impl_->stopping) return Status::Unavailable("store is closing");
    impl_->queue.push_back(&p);
  }
  impl_->cv.notify_one();
  return done.get();
}

Status SqliteStore::ScanJobs(bool active_only, const std::function<void(const JobRow&)>& fn) const {
  MutexLock<Mutex> l(impl_->reader_mu);
  Stmt s(impl_->reader, active_only
                            ? "SELECT id, active, end_time, record FROM jobs WHERE active = 1 "
                              "ORDER BY id"
                            : "SELECT id, active, end_time, record FROM jobs ORDER BY id");
  if (!s.ok()) return SqlError(impl_->reader, "scan jobs");
  int rc;
  while ((rc = sqlite3_step(s.get())) == SQLITE_ROW) fn(ReadJobRow(s.get()));
  return rc == SQLITE_DONE ? Status::Ok() : SqlError(impl_->reader, "scan jobs");
}

Status SqliteStore::ScanFinished(Time from, Time to, size_t limit,
                                 const std::function<void(const JobRow&)>& fn) const {
  MutexLock<Mutex> l(impl_->reader_mu);
  Stmt s(impl_->reader,
         "SELECT id, active, end_time, record FROM jobs WHERE active = 0 AND end_time >= ?1 "
         "AND end_time < ?2 ORDER BY id LIMIT ?3");
  if (!s.ok()) return SqlError(impl_->reader, "scan finished jobs");
  s.Bind(1, from);
  s.Bind(2, to);
  s.Bind(3, limit > 0 ? static_cast<int64_t>(limit) : int64_t{-1});
  int rc;
  while ((rc = sqlite3_step(s.get())) == SQLITE_ROW) fn(ReadJobRow(s.get()));
  return rc == SQLITE_DONE ? Status::Ok() : SqlError(impl_->reader, "scan finished jobs");
}

Result<std::optional<JobRow>> SqliteStore::GetJob(uint32_t id) const {
  MutexLock<Mutex> l(impl_->reader_mu);
  Stmt s(impl_->reader, "SELECT id, active, end_time, record FROM jobs WHERE id = ?1");
  if (!s.ok()) return SqlError(impl_->reader, "get job");
  s.Bind(1, static_cast<int64_t>(id));
  int rc = sqlite3_step(s.get());
  if (rc == SQLITE_ROW) return std::optional<JobRow>(ReadJobRow(s.get()));
  if (rc == SQLITE_DONE) return std::optional<JobRow>();
  return SqlError(impl_->reader, "get job");
}

Status SqliteStore::ScanNodes(
    const std::function<void(const std::string&, const std::string&)>& fn) const {
  MutexLock<Mutex> l(impl_->reader_mu);
  Stmt s(impl_->reader, "SELECT name, record FROM nodes ORDER BY name");
  if (!s.ok()) return SqlError(impl_->reader, "scan nodes");
  int rc;
  while ((rc = sqlite3_step(s.get())) == SQLITE_ROW) {
    fn(reinterpret_cast<const char*>(sqlite3_column_text(s.get(), 0)),
       reinterpret_cast<const char*>(sqlite3_column_text(s.get(), 1)));
  }
  return rc == SQLITE_DONE ? Status::Ok() : SqlError(impl_->reader, "scan nodes");
}

Result<std::optional<std::string>> SqliteStore::GetMeta(const std::string& key) const {
  MutexLock<Mutex> l(impl_->reader_mu);
  Stmt s(impl_->reader, "SELECT value FROM meta WHERE key = ?1");
  if (!s.ok()) return SqlError(impl_->reader, "get meta");
  s.Bind(1, key);
  int rc = sqlite3_step(s.get());
  if (rc == SQLITE_ROW) {
    return std::optional<std::string>(
        reinterpret_cast<const char*>(sqlite3_column_text(s.get(), 0)));
  }
  if (rc == SQLITE_DONE) return std::optional<std::string>();
  return SqlError(impl_->reader, "get meta");
}

Status SqliteStore::ScanMeta(
    const std::string& prefix,
    const std::function<void(const std::string&, const std::string&)>& fn) const {
  MutexLock<Mutex> l(impl_->reader_mu);
  // Keys in [prefix, prefix + U+10FFFF): every key that starts with the prefix, in order.
  Stmt s(impl_->reader, "SELECT key, value FROM meta WHERE key >= ?1 AND key < ?2 ORDER BY key");
  if (!s.ok()) return SqlError(impl_->reader, "scan meta");
  s.Bind(1, prefix);
  s.Bind(2, prefix + "\xf4\x8f\xbf\xbf");
  int rc;
  while ((rc = sqlite3_step(s.get())) == SQLITE_ROW) {
    fn(reinterpret_cast<const char*>(sqlite3_column_text(s.get(), 0)),
       reinterpret_cast<const char*>(sqlite3_column_text(s.get(), 1)));
  }
  return rc == SQLITE_DONE ? Status::Ok() : SqlError(impl_->reader, "scan meta");
}

StoreStats SqliteStore::stats() const {
  MutexLock<Mutex> l(impl_->mu);
  return impl_->stats;
}

}  // namespace berth::store
