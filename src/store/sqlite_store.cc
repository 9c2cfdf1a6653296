// The SQLite backend of Store (docs/adr/0003-store.md).
#include <fcntl.h>
#include <sqlite3.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <condition_variable>
#include <cstring>
#include <deque>
#include <functional>
#include <future>
#include <optional>
#include <thread>
#include <unordered_map>
#include <utility>

#include "common/thread_annotations.h"
#include "store/store.h"

namespace berth::store {
namespace {

// jobs.exec names the row of `execs` that holds the job's run specification (JobRow::exec), or
// is NULL (none, or a row written before execs existed: its record holds it).
constexpr const char* kSchema = R"(
CREATE TABLE IF NOT EXISTS jobs(
  id INTEGER PRIMARY KEY,
  active INTEGER NOT NULL,
  end_time INTEGER,
  record TEXT NOT NULL,
  exec INTEGER);
CREATE INDEX IF NOT EXISTS jobs_active ON jobs(id) WHERE active = 1;
CREATE INDEX IF NOT EXISTS jobs_end ON jobs(end_time) WHERE active = 0;
CREATE TABLE IF NOT EXISTS execs(id INTEGER PRIMARY KEY, hash INTEGER NOT NULL, text TEXT NOT NULL);
CREATE INDEX IF NOT EXISTS execs_hash ON execs(hash);
CREATE TABLE IF NOT EXISTS nodes(name TEXT PRIMARY KEY, record TEXT NOT NULL);
CREATE TABLE IF NOT EXISTS meta(key TEXT PRIMARY KEY, value TEXT NOT NULL);
)";
// After the jobs table has its exec column (a database from before it gets the column).
constexpr const char* kExecIndex =
    "CREATE INDEX IF NOT EXISTS jobs_exec ON jobs(exec) WHERE exec IS NOT NULL";

// FNV-1a, 64 bits: stored (execs.hash), so it must not change between builds.
int64_t TextHash(std::string_view s) {
  uint64_t h = 14695981039346656037ULL;
  for (const char c : s) {
    h ^= static_cast<unsigned char>(c);
    h *= 1099511628211ULL;
  }
  return static_cast<int64_t>(h);
}

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
  // Text that stays alive and unchanged until the statement is reset: not copied.
  void BindStatic(int i, std::string_view v) {
    sqlite3_bind_text(stmt_, i, v.data(), static_cast<int>(v.size()), SQLITE_STATIC);
  }
  void BindNull(int i) { sqlite3_bind_null(stmt_, i); }
  Status Step(const std::string& what) {
    int rc = sqlite3_step(stmt_);
    if (rc != SQLITE_DONE && rc != SQLITE_ROW) return SqlError(db_, what);
    return Status::Ok();
  }
  // One step: true when it gave a row, false when it is done.
  Result<bool> Next(const std::string& what) {
    int rc = sqlite3_step(stmt_);
    if (rc == SQLITE_ROW) return true;
    if (rc == SQLITE_DONE) return false;
    return SqlError(db_, what);
  }
  std::string_view Text(int column) {
    const unsigned char* t = sqlite3_column_text(stmt_, column);
    if (t == nullptr) return {};
    return {reinterpret_cast<const char*>(t),
            static_cast<size_t>(sqlite3_column_bytes(stmt_, column))};
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
  // The controller keeps the live state in memory and mostly appends here, so a page cache of
  // 512 KiB (SQLite's default is 2 MiB per connection) does: its pages are the B-trees' right
  // edges and the rows just written; recovery reads the file once, in order.
  if (sqlite3_exec(db, "PRAGMA journal_mode=WAL; PRAGMA synchronous=FULL; PRAGMA cache_size=-512;",
                   nullptr, nullptr, &err) != SQLITE_OK) {
    Status st = Status::Internal(path + ": " + (err ? err : "pragma failed"));
    sqlite3_free(err);
    sqlite3_close(db);
    return st;
  }
  return db;
}

constexpr const char* kJobColumns = "SELECT id, active, end_time, record, exec FROM jobs";

// The run specifications of the rows one read gives, each read once and shared by its rows.
class ExecTexts {
 public:
  explicit ExecTexts(sqlite3* db) : get_(db, "SELECT text FROM execs WHERE id = ?1") {}

  Result<std::shared_ptr<const std::string>> Get(int64_t id) {
    if (auto it = texts_.find(id); it != texts_.end()) return it->second;
    if (!get_.ok()) return Status::Internal("prepare: read a run specification");
    get_.Bind(1, id);
    BERTH_ASSIGN_OR_RETURN(bool found, get_.Next("read a run specification"));
    std::shared_ptr<const std::string> text;
    if (found) text = std::make_shared<const std::string>(get_.Text(0));
    get_.Reset();
    if (text == nullptr) {
      return Status::Internal("the run specification " + std::to_string(id) + " is missing");
    }
    return texts_.emplace(id, std::move(text)).first->second;
  }

 private:
  Stmt get_;
  std::unordered_map<int64_t, std::shared_ptr<const std::string>> texts_;
};

// A row of kJobColumns.
Result<JobRow> ReadJobRow(Stmt& s, ExecTexts& execs) {
  sqlite3_stmt* st = s.get();
  JobRow row;
  row.id = static_cast<uint32_t>(sqlite3_column_int64(st, 0));
  row.active = sqlite3_column_int64(st, 1) != 0;
  row.end_time = sqlite3_column_type(st, 2) == SQLITE_NULL ? kNoTime : sqlite3_column_int64(st, 2);
  row.record = s.Text(3);
  if (sqlite3_column_type(st, 4) != SQLITE_NULL) {
    Result<std::shared_ptr<const std::string>> exec = execs.Get(sqlite3_column_int64(st, 4));
    if (!exec.ok()) {
      return Status::Internal("job " + std::to_string(row.id) + ": " + exec.status().message());
    }
    row.exec = std::move(*exec);
  }
  return row;
}

// Calls fn for each row of the statement.
Status ForEachJobRow(sqlite3* db, Stmt& s, const std::string& what,
                     const std::function<void(const JobRow&)>& fn) {
  ExecTexts execs(db);
  while (true) {
    BERTH_ASSIGN_OR_RETURN(bool more, s.Next(what));
    if (!more) return Status::Ok();
    BERTH_ASSIGN_OR_RETURN(JobRow row, ReadJobRow(s, execs));
    fn(row);
  }
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
  // Pages in the write-ahead log after the last commit (the writer thread's, from its WAL hook).
  // The writer checkpoints once the commit is acknowledged, not inside it (SQLite's automatic
  // checkpoint runs in the COMMIT, and a checkpoint of a 10,000-job change is milliseconds more
  // before the answer), at SQLite's default threshold.
  static constexpr int kCheckpointPages = 1000;
  int wal_pages = 0;

  ~SqliteImpl() {
    {
      MutexLock<Mutex> l(mu);
      stopping = true;
    }
    cv.notify_all();
    if (thread.joinable()) thread.join();
    stmts.reset();  // finalized before their connection closes
    sqlite3_close(writer);
    sqlite3_close(reader);
  }

  // Writes the batch's rows in the open transaction; counts them in *rows (those written before
  // an error included).
  // The writer thread's: the execs rows it knows, by the text the controller handed over (held
  // here, so that its address names it alone). Cleared when a row may have gone: a deleted one,
  // or one a rolled-back transaction made.
  std::unordered_map<const std::string*, std::pair<int64_t, std::shared_ptr<const std::string>>>
      exec_ids;

  // The writer's statements, prepared once (not for every transaction: one sbatch is one) and
  // reset after each use.
  struct JobStmts {
    explicit JobStmts(sqlite3* db)
        : update(db,
                 "UPDATE jobs SET active = ?2, end_time = ?3, record = ?4 "
                 "WHERE id = ?1 AND exec IS ?5"),
          exec_of(db, "SELECT exec FROM jobs WHERE id = ?1"),
          change(
              db,
              "UPDATE jobs SET active = ?2, end_time = ?3, record = ?4, exec = ?5 WHERE id = ?1"),
          insert(db,
                 "INSERT OR IGNORE INTO jobs(id, active, end_time, record, exec) "
                 "VALUES(?1, ?2, ?3, ?4, ?5)"),
          find_exec(db, "SELECT id, text FROM execs WHERE hash = ?1"),
          put_exec(db, "INSERT INTO execs(hash, text) VALUES(?1, ?2)"),
          drop_exec(db,
                    "DELETE FROM execs WHERE id = ?1 AND NOT EXISTS "
                    "(SELECT 1 FROM jobs WHERE exec = ?1)"),
          put_node(db,
                   "INSERT INTO nodes(name, record) VALUES(?1, ?2) "
                   "ON CONFLICT(name) DO UPDATE SET record = ?2"),
          // Only a finished job's row leaves (the archive took it).
          del_job(db, "DELETE FROM jobs WHERE id = ?1 AND active = 0"),
          del_node(db, "DELETE FROM nodes WHERE name = ?1"),
          put_meta(db,
                   "INSERT INTO meta(key, value) VALUES(?1, ?2) "
                   "ON CONFLICT(key) DO UPDATE SET value = ?2"),
          del_meta(db, "DELETE FROM meta WHERE key = ?1") {}
    bool ok() const {
      return update.ok() && exec_of.ok() && change.ok() && insert.ok() && find_exec.ok() &&
             put_exec.ok() && drop_exec.ok() && put_node.ok() && del_job.ok() && del_node.ok() &&
             put_meta.ok() && del_meta.ok();
    }
    // Ready for a transaction: no statement left mid-way by an error, nothing dropped yet.
    void Reset() {
      for (Stmt* s : {&update, &exec_of, &change, &insert, &find_exec, &put_exec, &drop_exec,
                      &put_node, &del_job, &del_node, &put_meta, &del_meta}) {
        s->Reset();
      }
      dropped.clear();
    }
    Stmt update, exec_of, change, insert, find_exec, put_exec, drop_exec;
    Stmt put_node, del_job, del_node, put_meta, del_meta;
    std::vector<int64_t> dropped;  // execs rows that lost a job: gone if no other job has them
  };
  std::unique_ptr<JobStmts> stmts;  // the writer thread's (made at its first transaction)

  // The execs row holding `text`, made when there is none.
  Result<int64_t> ExecId(JobStmts& js, const std::shared_ptr<const std::string>& text) {
    if (auto it = exec_ids.find(text.get()); it != exec_ids.end()) return it->second.first;
    if (exec_ids.size() >= 1024) exec_ids.clear();
    const int64_t hash = TextHash(*text);
    int64_t id = 0;
    js.find_exec.Bind(1, hash);
    while (id == 0) {
      BERTH_ASSIGN_OR_RETURN(bool more, js.find_exec.Next("find a run specification"));
      if (!more) break;
      if (js.find_exec.Text(1) == *text) id = sqlite3_column_int64(js.find_exec.get(), 0);
    }
    js.find_exec.Reset();
    if (id == 0) {
      js.put_exec.Bind(1, hash);
      js.put_exec.Bind(2, *text);
      BERTH_RETURN_IF_ERROR(js.put_exec.Step("write a run specification"));
      js.put_exec.Reset();
      id = sqlite3_last_insert_rowid(writer);
    }
    exec_ids.emplace(text.get(), std::make_pair(id, text));
    return id;
  }

  // The execs row the job's row names now: 0 for none, nullopt when the job has no row.
  Result<std::optional<int64_t>> ExecOf(JobStmts& js, uint32_t job) {
    js.exec_of.Bind(1, static_cast<int64_t>(job));
    BERTH_ASSIGN_OR_RETURN(bool found, js.exec_of.Next("read a job's run specification"));
    std::optional<int64_t> id;
    if (found) id = sqlite3_column_int64(js.exec_of.get(), 0);  // NULL reads as 0
    js.exec_of.Reset();
    return id;
  }

  // A job's row, written by the cheapest statement that does it: most writes change the state
  // of a job whose run specification the row already names.
  Status PutJob(JobStmts& js, const JobRow& job) {
    int64_t exec = 0;
    if (job.exec != nullptr) {
      BERTH_ASSIGN_OR_RETURN(exec, ExecId(js, job.exec));
    }
    auto bind = [&](Stmt& s) {
      s.Bind(1, static_cast<int64_t>(job.id));
      s.Bind(2, job.active ? 1 : 0);
      if (job.end_time == kNoTime) {
        s.BindNull(3);
      } else {
        s.Bind(3, job.end_time);
      }
      s.BindStatic(4, job.record);  // the row outlives the statement's step
      if (exec == 0) {
        s.BindNull(5);
      } else {
        s.Bind(5, exec);
      }
    };
    bind(js.update);
    BERTH_RETURN_IF_ERROR(js.update.Step("write a job"));
    js.update.Reset();
    if (sqlite3_changes(writer) > 0) return Status::Ok();
    // A new job (no row with its id: the insert makes one)...
    bind(js.insert);
    BERTH_RETURN_IF_ERROR(js.insert.Step("write a job"));
    js.insert.Reset();
    if (sqlite3_changes(writer) > 0) return Status::Ok();
    // ...or one whose run specification changed (scontrol update of its comment).
    BERTH_ASSIGN_OR_RETURN(std::optional<int64_t> before, ExecOf(js, job.id));
    if (!before) return Status::Internal("write a job: job " + std::to_string(job.id) + " refused");
    if (*before != 0) js.dropped.push_back(*before);
    bind(js.change);
    BERTH_RETURN_IF_ERROR(js.change.Step("write a job"));
    js.change.Reset();
    return Status::Ok();
  }

  // Drops the execs rows that lost their last job in this transaction.
  Status DropUnusedExecs(JobStmts& js) {
    bool gone = false;
    for (const int64_t id : js.dropped) {
      js.drop_exec.Bind(1, id);
      BERTH_RETURN_IF_ERROR(js.drop_exec.Step("drop a run specification"));
      js.drop_exec.Reset();
      gone = gone || sqlite3_changes(writer) > 0;
    }
    if (gone) exec_ids.clear();
    js.dropped.clear();
    return Status::Ok();
  }

  Status ApplyAll(const std::vector<Pending*>& batch, int64_t* rows) EXCLUDES(mu) {
    if (stmts == nullptr) {
      auto made = std::make_unique<JobStmts>(writer);
      if (!made->ok()) return SqlError(writer, "prepare");
      stmts = std::move(made);
    }
    JobStmts& js = *stmts;
    js.Reset();
    Stmt& put_node = js.put_node;
    Stmt& del_job = js.del_job;
    Stmt& del_node = js.del_node;
    Stmt& put_meta = js.put_meta;
    Stmt& del_meta = js.del_meta;
    for (Pending* p : batch) {
      for (const Write& w : p->writes) {
        Stmt* s = nullptr;
        switch (w.kind) {
          case Write::Kind::kPutJob:
            BERTH_RETURN_IF_ERROR(PutJob(js, w.job));
            ++*rows;
            continue;
          case Write::Kind::kDeleteJob: {
            s = &del_job;
            BERTH_ASSIGN_OR_RETURN(std::optional<int64_t> exec, ExecOf(js, w.job.id));
            if (exec && *exec != 0) js.dropped.push_back(*exec);
            s->Bind(1, static_cast<int64_t>(w.job.id));
            break;
          }
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
    return DropUnusedExecs(js);
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
      if (st.ok()) st = Exec("COMMIT");
      if (!st.ok()) {
        (void)Exec("ROLLBACK");
        exec_ids.clear();  // rows it made are gone
      }
      {
        MutexLock<Mutex> l(mu);
        stats.rows_written += rows;
        ++stats.commits;
        stats.batches += static_cast<int64_t>(batch.size());
      }
      for (Pending* p : batch) p->done.set_value(st);
      if (wal_pages >= kCheckpointPages) {
        // PASSIVE, as SQLite's own: as far as readers let it; the next commit restarts the log
        // from its start once it is all in the database.
        (void)sqlite3_wal_checkpoint_v2(writer, nullptr, SQLITE_CHECKPOINT_PASSIVE, nullptr,
                                        nullptr);
        wal_pages = 0;
      }
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
  Status ScanFinished(Time from, Time to, uint32_t min_id, size_t limit,
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
  // A database from before the run specifications had a table of their own: its rows keep
  // theirs inside the record (exec NULL) until they are written again.
  if (!Stmt(s->impl_->writer, "SELECT exec FROM jobs LIMIT 0").ok() &&
      sqlite3_exec(s->impl_->writer, "ALTER TABLE jobs ADD COLUMN exec INTEGER", nullptr, nullptr,
                   &err) != SQLITE_OK) {
    Status st = Status::Internal(path + ": schema: " + (err ? err : "failed"));
    sqlite3_free(err);
    return st;
  }
  if (sqlite3_exec(s->impl_->writer, kExecIndex, nullptr, nullptr, &err) != SQLITE_OK) {
    Status st = Status::Internal(path + ": schema: " + (err ? err : "failed"));
    sqlite3_free(err);
    return st;
  }
  BERTH_ASSIGN_OR_RETURN(auto reader, OpenDb(path));
  SqliteImpl* impl = s->impl_.get();
  // The writer's commits report the log's size here, which also turns SQLite's automatic
  // checkpoint off for this connection: Run checkpoints after acknowledging.
  sqlite3_wal_hook(
      impl->writer,
      [](void* arg, sqlite3*, const char*, int pages) {
        static_cast<SqliteImpl*>(arg)->wal_pages = pages;
        return SQLITE_OK;
      },
      impl);
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
  Stmt s(impl_->reader, (std::string(kJobColumns) +
                         (active_only ? " WHERE active = 1 ORDER BY id" : " ORDER BY id"))
                            .c_str());
  if (!s.ok()) return SqlError(impl_->reader, "scan jobs");
  return ForEachJobRow(impl_->reader, s, "scan jobs", fn);
}

Status SqliteStore::ScanFinished(Time from, Time to, uint32_t min_id, size_t limit,
                                 const std::function<void(const JobRow&)>& fn) const {
  MutexLock<Mutex> l(impl_->reader_mu);
  // A window with a start reads the end-time index; one from the epoch with a lowest id reads
  // the rows by id from it ("+end_time" keeps SQLite's planner off the index, which it would
  // take for the two bounds although they select the whole history).
  const bool by_id = min_id > 0 && from <= 0;
  Stmt s(impl_->reader,
         (std::string(kJobColumns) +
          (by_id ? " WHERE id >= ?4 AND active = 0 AND +end_time >= ?1 AND +end_time < ?2 "
                   "ORDER BY id LIMIT ?3"
                 : " WHERE active = 0 AND end_time >= ?1 AND end_time < ?2 AND id >= ?4 "
                   "ORDER BY id LIMIT ?3"))
             .c_str());
  if (!s.ok()) return SqlError(impl_->reader, "scan finished jobs");
  s.Bind(1, from);
  s.Bind(2, to);
  s.Bind(3, limit > 0 ? static_cast<int64_t>(limit) : int64_t{-1});
  s.Bind(4, static_cast<int64_t>(min_id));
  return ForEachJobRow(impl_->reader, s, "scan finished jobs", fn);
}

Result<std::optional<JobRow>> SqliteStore::GetJob(uint32_t id) const {
  MutexLock<Mutex> l(impl_->reader_mu);
  Stmt s(impl_->reader, (std::string(kJobColumns) + " WHERE id = ?1").c_str());
  if (!s.ok()) return SqlError(impl_->reader, "get job");
  s.Bind(1, static_cast<int64_t>(id));
  BERTH_ASSIGN_OR_RETURN(bool found, s.Next("get job"));
  if (!found) return std::optional<JobRow>();
  ExecTexts execs(impl_->reader);
  BERTH_ASSIGN_OR_RETURN(JobRow row, ReadJobRow(s, execs));
  return std::optional<JobRow>(std::move(row));
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
