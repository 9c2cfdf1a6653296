#include "store/archive.h"

#include <dlfcn.h>
#include <libpq-fe.h>
#include <unistd.h>

#include <algorithm>
#include <cstdlib>
#include <cstring>
#include <deque>
#include <filesystem>
#include <mutex>
#include <utility>

#include "common/strings.h"
#include "common/thread_annotations.h"

namespace berth::store {
namespace {

// libpq, loaded when an archive is first opened: linked in, its two dozen libraries (Kerberos,
// LDAP, GnuTLS...) would be loaded by every `berth` command, and a CLI call's start-up is most of
// its cost (src/cli/CMakeLists.txt). Only the header is used at build time.
struct Pq {
  decltype(&::PQconnectdbParams) connectdbParams = nullptr;
  decltype(&::PQstatus) status = nullptr;
  decltype(&::PQerrorMessage) errorMessage = nullptr;
  decltype(&::PQfinish) finish = nullptr;
  decltype(&::PQexec) exec = nullptr;
  decltype(&::PQexecParams) execParams = nullptr;
  decltype(&::PQsendQueryParams) sendQueryParams = nullptr;
  decltype(&::PQsetSingleRowMode) setSingleRowMode = nullptr;
  decltype(&::PQgetResult) getResult = nullptr;
  decltype(&::PQresultStatus) resultStatus = nullptr;
  decltype(&::PQresultErrorMessage) resultErrorMessage = nullptr;
  decltype(&::PQclear) clear = nullptr;
  decltype(&::PQntuples) ntuples = nullptr;
  decltype(&::PQgetvalue) getvalue = nullptr;
  decltype(&::PQgetlength) getlength = nullptr;
  decltype(&::PQconninfoParse) conninfoParse = nullptr;
  decltype(&::PQconninfoFree) conninfoFree = nullptr;
  decltype(&::PQfreemem) freemem = nullptr;
};

template <typename F>
bool Bind(void* lib, const char* name, F& f, std::string& missing) {
  f = reinterpret_cast<F>(dlsym(lib, name));
  if (f == nullptr) missing += (missing.empty() ? "" : ", ") + std::string(name);
  return f != nullptr;
}

// libpq's functions, or the reason they cannot be had (the library or a function missing).
Result<const Pq*> LoadPq() {
  static Pq pq;
  static std::string error;
  static std::once_flag once;
  std::call_once(once, [] {
    void* lib = dlopen("libpq.so.5", RTLD_NOW | RTLD_LOCAL);
    if (lib == nullptr) {
      const char* why = dlerror();
      error = std::string("cannot load libpq (Debian's libpq5): ") + (why ? why : "not found");
      return;
    }
    std::string missing;
    Bind(lib, "PQconnectdbParams", pq.connectdbParams, missing);
    Bind(lib, "PQstatus", pq.status, missing);
    Bind(lib, "PQerrorMessage", pq.errorMessage, missing);
    Bind(lib, "PQfinish", pq.finish, missing);
    Bind(lib, "PQexec", pq.exec, missing);
    Bind(lib, "PQexecParams", pq.execParams, missing);
    Bind(lib, "PQsendQueryParams", pq.sendQueryParams, missing);
    Bind(lib, "PQsetSingleRowMode", pq.setSingleRowMode, missing);
    Bind(lib, "PQgetResult", pq.getResult, missing);
    Bind(lib, "PQresultStatus", pq.resultStatus, missing);
    Bind(lib, "PQresultErrorMessage", pq.resultErrorMessage, missing);
    Bind(lib, "PQclear", pq.clear, missing);
    Bind(lib, "PQntuples", pq.ntuples, missing);
    Bind(lib, "PQgetvalue", pq.getvalue, missing);
    Bind(lib, "PQgetlength", pq.getlength, missing);
    Bind(lib, "PQconninfoParse", pq.conninfoParse, missing);
    Bind(lib, "PQconninfoFree", pq.conninfoFree, missing);
    Bind(lib, "PQfreemem", pq.freemem, missing);
    if (!missing.empty()) error = "libpq lacks " + missing;
  });
  if (!error.empty()) return Status::Unavailable(error);
  return &pq;
}

// LoadPq() once it succeeded (every archive was opened after it did).
const Pq& P() {
  return **LoadPq();
}

// (The notices of IF NOT EXISTS would go to the controller's log on every connection.)
constexpr const char* kSchema = R"(
SET client_min_messages = warning;
CREATE TABLE IF NOT EXISTS berth_jobs(
  cluster text NOT NULL,
  id bigint NOT NULL,
  submit_time bigint NOT NULL,
  attempt integer NOT NULL,
  end_time bigint NOT NULL,
  user_name text NOT NULL,
  account text NOT NULL,
  state text NOT NULL,
  record bytea NOT NULL,
  archived_at timestamptz NOT NULL DEFAULT now(),
  PRIMARY KEY (cluster, id, submit_time, attempt));
CREATE INDEX IF NOT EXISTS berth_jobs_end ON berth_jobs(cluster, end_time);
)";

constexpr int kColumnsPerJob = 9;
// Rows per INSERT: 9 parameters each, well under PostgreSQL's 65,535 per statement.
constexpr size_t kRowsPerInsert = 1000;

// libpq's messages end with a newline.
std::string Trimmed(const char* message) {
  return std::string(TrimWhitespace(message != nullptr ? message : ""));
}

struct ResultDeleter {
  void operator()(PGresult* r) const { P().clear(r); }
};
using ResultPtr = std::unique_ptr<PGresult, ResultDeleter>;

// A column of a binary-format result.
int64_t BigInt(const PGresult* r, int row, int col) {
  const auto* p = reinterpret_cast<const unsigned char*>(P().getvalue(r, row, col));
  const int n = P().getlength(r, row, col);
  uint64_t v = 0;
  for (int i = 0; i < n; ++i) v = (v << 8) | p[i];
  // int4 and int8 are both two's complement, big-endian.
  if (n == 4) return static_cast<int32_t>(static_cast<uint32_t>(v));
  return static_cast<int64_t>(v);
}

JobRow RowOf(const PGresult* r, int row) {
  JobRow out;
  out.id = static_cast<uint32_t>(BigInt(r, row, 0));
  out.active = false;
  out.end_time = BigInt(r, row, 1);
  out.record.assign(P().getvalue(r, row, 2), static_cast<size_t>(P().getlength(r, row, 2)));
  return out;
}

}  // namespace

// One libpq connection, made on demand and dropped after a failure.
struct Archive::Connection {
  Mutex mu;
  PGconn* conn GUARDED_BY(mu) = nullptr;

  ~Connection() {
    MutexLock<Mutex> l(mu);
    if (conn != nullptr) P().finish(conn);
  }
};

namespace {

// The archive's calls on one connection: (re)connects, makes the table, and turns failures into
// statuses that name the server.
class Session {
 public:
  Session(PGconn*& conn, const std::string& conninfo, const std::string& where)
      : conn_(conn), conninfo_(conninfo), where_(where) {}

  Status Connect() {
    if (conn_ != nullptr && P().status(conn_) == CONNECTION_OK) return Status::Ok();
    Drop();
    // berth's defaults first: the site's connection string (the last, expanded) overrides them.
    const char* keys[] = {
        "connect_timeout",  "tcp_user_timeout", "keepalives_idle", "keepalives_interval",
        "keepalives_count", "application_name", "dbname",          nullptr};
    const char* values[] = {"5",    "10000", "5", "2", "3", "berth-controller", conninfo_.c_str(),
                            nullptr};
    conn_ = P().connectdbParams(keys, values, /*expand_dbname=*/1);
    if (conn_ == nullptr) return Status::Unavailable(where_ + ": out of memory");
    if (P().status(conn_) != CONNECTION_OK) {
      Status st = Status::Unavailable(where_ + ": " + Trimmed(P().errorMessage(conn_)));
      Drop();
      return st;
    }
    ResultPtr r(P().exec(conn_, kSchema));
    if (P().resultStatus(r.get()) != PGRES_COMMAND_OK) {
      Status st = Failure("cannot make the table berth_jobs", r.get());
      Drop();
      return st;
    }
    return Status::Ok();
  }

  // Runs one statement with text parameters (lengths and formats per parameter); results in
  // binary.
  Result<ResultPtr> Exec(const std::string& sql, const std::vector<const char*>& values,
                         const std::vector<int>& lengths, const std::vector<int>& formats,
                         ExecStatusType expect) {
    BERTH_RETURN_IF_ERROR(Connect());
    ResultPtr r(P().execParams(conn_, sql.c_str(), static_cast<int>(values.size()), nullptr,
                               values.data(), lengths.data(), formats.data(), /*resultFormat=*/1));
    if (P().resultStatus(r.get()) != expect) {
      Status st = Failure("query failed", r.get());
      if (P().status(conn_) != CONNECTION_OK) Drop();
      return st;
    }
    return r;
  }

  // Streams the rows of a query to fn, one at a time (libpq's single-row mode).
  Status Stream(const std::string& sql, const std::vector<std::string>& params,
                const std::function<void(const PGresult*)>& fn) {
    BERTH_RETURN_IF_ERROR(Connect());
    std::vector<const char*> values;
    for (const std::string& p : params) values.push_back(p.c_str());
    if (P().sendQueryParams(conn_, sql.c_str(), static_cast<int>(values.size()), nullptr,
                            values.data(), nullptr, nullptr, /*resultFormat=*/1) == 0) {
      Status st = Status::Unavailable(where_ + ": " + Trimmed(P().errorMessage(conn_)));
      Drop();
      return st;
    }
    P().setSingleRowMode(conn_);
    Status st = Status::Ok();
    while (PGresult* raw = P().getResult(conn_)) {
      ResultPtr r(raw);
      const ExecStatusType s = P().resultStatus(raw);
      if (s == PGRES_SINGLE_TUPLE) {
        if (st.ok()) fn(raw);
      } else if (s != PGRES_TUPLES_OK && st.ok()) {
        st = Failure("query failed", raw);
      }
    }
    if (P().status(conn_) != CONNECTION_OK) Drop();
    return st;
  }

 private:
  Status Failure(const std::string& what, const PGresult* r) {
    std::string reason = Trimmed(r != nullptr ? P().resultErrorMessage(r) : "");
    if (reason.empty()) reason = Trimmed(P().errorMessage(conn_));
    // A connection that broke is the server's absence; anything else is the statement's fault.
    if (P().status(conn_) != CONNECTION_OK) return Status::Unavailable(where_ + ": " + reason);
    return Status::Internal(where_ + ": " + what + ": " + reason);
  }
  void Drop() {
    if (conn_ != nullptr) P().finish(conn_);
    conn_ = nullptr;
  }

  PGconn*& conn_;
  const std::string& conninfo_;
  const std::string& where_;
};

}  // namespace

std::string PostgresBinDir() {
  std::string best;
  int best_version = -1;
  std::error_code ec;
  for (const auto& d : std::filesystem::directory_iterator("/usr/lib/postgresql", ec)) {
    const std::string bin = d.path().string() + "/bin";
    const int version = std::atoi(d.path().filename().c_str());
    if (version > best_version && access((bin + "/postgres").c_str(), X_OK) == 0 &&
        access((bin + "/initdb").c_str(), X_OK) == 0) {
      best = bin;
      best_version = version;
    }
  }
  return best;
}

Result<std::unique_ptr<Archive>> Archive::Open(const std::string& conninfo, std::string cluster) {
  BERTH_RETURN_IF_ERROR(LoadPq().status());
  char* error = nullptr;
  PQconninfoOption* options = P().conninfoParse(conninfo.c_str(), &error);
  if (options == nullptr) {
    std::string reason = Trimmed(error ? error : "out of memory");
    P().freemem(error);
    return Status::InvalidArgument("--accounting-store: " + reason);
  }
  std::string host, port, db;
  for (PQconninfoOption* o = options; o->keyword != nullptr; ++o) {
    if (o->val == nullptr) continue;
    if (std::strcmp(o->keyword, "host") == 0) host = o->val;
    if (std::strcmp(o->keyword, "port") == 0) port = o->val;
    if (std::strcmp(o->keyword, "dbname") == 0) db = o->val;
  }
  P().conninfoFree(options);
  std::string where = "postgresql " + (host.empty() ? std::string("(default host)") : host);
  if (!port.empty()) where += ":" + port;
  if (!db.empty()) where += "/" + db;
  if (cluster.empty()) cluster = "berth";
  return std::unique_ptr<Archive>(new Archive(conninfo, std::move(cluster), std::move(where)));
}

Archive::Archive(std::string conninfo, std::string cluster, std::string where)
    : conninfo_(std::move(conninfo)),
      cluster_(std::move(cluster)),
      where_(std::move(where)),
      writer_(std::make_unique<Connection>()),
      reader_(std::make_unique<Connection>()) {}

Archive::~Archive() = default;

std::string Archive::Describe() const {
  return where_ + " (cluster " + cluster_ + ")";
}

Status Archive::Put(const std::vector<ArchivedJob>& jobs) {
  MutexLock<Mutex> l(writer_->mu);
  Session s(writer_->conn, conninfo_, where_);
  for (size_t from = 0; from < jobs.size(); from += kRowsPerInsert) {
    const size_t to = std::min(jobs.size(), from + kRowsPerInsert);
    std::string sql =
        "INSERT INTO berth_jobs(cluster, id, submit_time, attempt, end_time, user_name, account, "
        "state, record) VALUES ";
    std::deque<std::string> numbers;  // the text of the numeric parameters, kept in place
    std::vector<const char*> values;
    std::vector<int> lengths, formats;
    int n = 0;
    auto param = [&](const char* v, size_t len, int format) {
      values.push_back(v);
      lengths.push_back(static_cast<int>(len));
      formats.push_back(format);
      return "$" + std::to_string(++n);
    };
    auto text = [&](const std::string& v) { return param(v.c_str(), v.size(), 0); };
    auto number = [&](int64_t v) {
      numbers.push_back(std::to_string(v));
      return text(numbers.back());
    };
    for (size_t i = from; i < to; ++i) {
      const ArchivedJob& j = jobs[i];
      sql += i == from ? "(" : ",(";
      sql += text(cluster_) + "," + number(j.id) + "," + number(j.submit_time) + "," +
             number(j.attempt) + "," + number(j.end_time) + "," + text(j.user) + "," +
             text(j.account) + "," + text(j.state) + "," +
             param(j.record.data(), j.record.size(), /*binary=*/1) + ")";
    }
    sql += " ON CONFLICT DO NOTHING";
    static_assert(kRowsPerInsert * kColumnsPerJob < 65535);
    BERTH_RETURN_IF_ERROR(s.Exec(sql, values, lengths, formats, PGRES_COMMAND_OK).status());
  }
  return Status::Ok();
}

Status Archive::ScanFinished(Time from, Time to, uint32_t min_id,
                             const std::function<void(const JobRow&)>& fn) const {
  if (to <= from) return Status::Ok();
  MutexLock<Mutex> l(reader_->mu);
  Session s(reader_->conn, conninfo_, where_);
  return s.Stream(
      "SELECT id, end_time, record FROM berth_jobs WHERE cluster = $1 AND end_time >= $2 AND "
      "end_time < $3 AND id >= $4 ORDER BY id, submit_time, attempt",
      {cluster_, std::to_string(from), std::to_string(to), std::to_string(min_id)},
      [&](const PGresult* r) { fn(RowOf(r, 0)); });
}

Result<std::optional<JobRow>> Archive::GetJob(uint32_t id) const {
  MutexLock<Mutex> l(reader_->mu);
  Session s(reader_->conn, conninfo_, where_);
  const std::string id_text = std::to_string(id);
  BERTH_ASSIGN_OR_RETURN(
      ResultPtr r, s.Exec("SELECT id, end_time, record FROM berth_jobs WHERE cluster = $1 AND "
                          "id = $2 ORDER BY submit_time DESC, attempt DESC LIMIT 1",
                          {cluster_.c_str(), id_text.c_str()}, {0, 0}, {0, 0}, PGRES_TUPLES_OK));
  if (P().ntuples(r.get()) == 0) return std::optional<JobRow>();
  return std::optional<JobRow>(RowOf(r.get(), 0));
}

Result<int64_t> Archive::Count() const {
  MutexLock<Mutex> l(reader_->mu);
  Session s(reader_->conn, conninfo_, where_);
  BERTH_ASSIGN_OR_RETURN(ResultPtr r, s.Exec("SELECT count(*) FROM berth_jobs WHERE cluster = $1",
                                             {cluster_.c_str()}, {0}, {0}, PGRES_TUPLES_OK));
  return BigInt(r.get(), 0, 0);
}

}  // namespace berth::store
