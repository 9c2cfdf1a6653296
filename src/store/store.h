// Store: the controller's durable state: one entry per job (its whole record, kept up to date),
// one per node registered at run time, and small metadata values (the next job id, accounts,
// reservations, the Kubernetes face's objects). Two backends behind one interface:
//   - SQLite in WAL mode, the state folder's state.db (the default; docs/adr/0003-store.md),
//   - etcd v3 through its JSON gateway, for controllers in an HA group
//   (docs/adr/0007-etcd-store.md).
//
// Writes are group-committed: callers hand a batch to Commit(), a writer thread gathers every
// batch waiting at that moment into one transaction, and each caller returns once its batch is
// durable (SQLite: synchronous=FULL; etcd: on a quorum). A client is told about a change only
// after Commit returns.
//
// Thread safety: every method may be called from any thread; the Scan*/Get* methods (start-up,
// sacct, GET of old jobs) may run concurrently with Commit (they use their own connection).
#ifndef BERTH_STORE_STORE_H_
#define BERTH_STORE_STORE_H_

#include <atomic>
#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "common/status.h"
#include "common/time.h"

namespace berth::store {

struct JobRow {
  uint32_t id = 0;
  bool active = true;  // pending or running (false once it has ended for good)
  Time end_time = kNoTime;
  std::string record;  // the controller's encoding (JSON)
  // When not null: the job's run specification (script, environment, ...), as the text of a
  // JSON object, kept apart from `record`: it never changes with the job's state, and jobs
  // submitted from one shell share it. The whole entry is JoinedRecord(row). SQLite keeps each
  // distinct text once, so a state change rewrites only the record; the other backends store
  // the joined text and read back rows whose exec is null.
  std::shared_ptr<const std::string> exec;
};

// The row's whole entry: `record` with "exec" (the row's exec text) as its first key, or `record`
// alone when exec is null. REQUIRES: the record is a JSON object.
std::string JoinedRecord(const JobRow& row);
// The same, appended to *out.
void AppendJoinedRecord(const JobRow& row, std::string* out);

struct Write {
  // kDeleteJob removes a finished job's row once it is kept elsewhere (the accounting archive,
  // store/archive.h): job.id and job.end_time name it.
  enum class Kind { kPutJob, kDeleteJob, kPutNode, kDeleteNode, kPutMeta, kDeleteMeta };
  Kind kind = Kind::kPutJob;
  JobRow job;         // kPutJob, kDeleteJob
  std::string key;    // node name or meta key
  std::string value;  // node record or meta value
};

struct StoreStats {
  int64_t commits = 0;  // transactions
  int64_t batches = 0;  // Commit() calls served
  int64_t rows_written = 0;
};

// A copy of an etcd store's keys (full keys) at a revision: a standby's (store/etcd_follower.h),
// read by the store of the leader it becomes instead of etcd until its first commit.
struct EtcdSnapshot {
  int64_t revision = 0;
  std::map<std::string, std::string> kvs;
};

// Where the store is: `--store` of `berth controller` (ParseStoreUrl).
struct StoreLocation {
  enum class Kind { kSqlite, kEtcd };
  Kind kind = Kind::kSqlite;
  std::string sqlite_path;                   // kSqlite: "" = the state folder's state.db
  std::vector<std::string> endpoints;        // kEtcd: "host:port", tried in order
  std::string prefix = "/berth/default";     // kEtcd: every key starts with it
  bool tls = false;                          // kEtcd: https endpoints
  std::string ca_file, cert_file, key_file;  // kEtcd TLS: CA to trust, client certificate and key
  int timeout_ms = 5000;                     // kEtcd: per request to one endpoint
  int retry_ms = 10000;             // kEtcd: rounds over the endpoints until this long has passed
  int max_txn_ops = 128;            // kEtcd: the server's --max-txn-ops
  int64_t max_txn_bytes = 1 << 20;  // kEtcd: a txn's request body, under 1.5 MiB
  // kEtcd, set by a group's leader (not part of the URL): when > 0, every commit is applied only
  // while the leader key's create_revision is this epoch (store/election.h), so that a deposed
  // leader writes nothing.
  int64_t fence_epoch = 0;
  // kEtcd, set with fence_epoch: once true (the leader lost its lease), requests are no longer
  // retried, and fail at once as UNAVAILABLE.
  std::shared_ptr<const std::atomic<bool>> deposed;
  // kEtcd, set by a new leader whose standby followed the store (ADR 0008, "Warm standbys"):
  // the state as of its epoch; reads are served from it until the first commit.
  std::shared_ptr<const EtcdSnapshot> warm;
};

// Parses "sqlite", "sqlite:PATH", or "etcd://H:P[,H:P...][/PREFIX][?OPTIONS]" (also
// "etcds://" for TLS) where OPTIONS are cacert=F, cert=F, key=F, timeout-ms=N, retry-ms=N,
// max-txn-ops=N joined with '&'. Errors (INVALID_ARGUMENT) say what is wrong with the text.
Result<StoreLocation> ParseStoreUrl(std::string_view url);

class Store {
 public:
  // Opens (creating when missing) the SQLite database at `path`.
  static Result<std::unique_ptr<Store>> Open(const std::string& path);
  // Opens the store at `where`; a kSqlite location without a path uses `default_sqlite_path`.
  // etcd: the endpoints are tried until one answers (UNAVAILABLE when none does).
  static Result<std::unique_ptr<Store>> Open(const StoreLocation& where,
                                             const std::string& default_sqlite_path);
  virtual ~Store() = default;  // Finishes pending commits, stops the writer.
  Store(const Store&) = delete;
  Store& operator=(const Store&) = delete;

  // Makes `writes` durable; returns once they are, or the error: UNAVAILABLE when the store
  // cannot be reached or has no quorum (etcd), INTERNAL for a failed SQLite write. On an error
  // nothing of a batch that fits one transaction was written (etcd splits a bigger one: see
  // the ADR); the caller must acknowledge none of it.
  virtual Status Commit(std::vector<Write> writes) = 0;

  // Calls fn for every job row (active_only: pending/running ones), in id order.
  virtual Status ScanJobs(bool active_only, const std::function<void(const JobRow&)>& fn) const = 0;
  // Finished jobs that ended in [from, to) with ids from `min_id` on, in id order (for sacct);
  // at most `limit` of them when it is above 0 (which ones is then the backend's choice: the
  // archiver takes batches). A window from the epoch with a lowest id (`sacct -j`) reads the
  // rows from that id on, not the whole history.
  virtual Status ScanFinished(Time from, Time to, uint32_t min_id, size_t limit,
                              const std::function<void(const JobRow&)>& fn) const = 0;
  virtual Result<std::optional<JobRow>> GetJob(uint32_t id) const = 0;
  virtual Status ScanNodes(
      const std::function<void(const std::string& name, const std::string& record)>& fn) const = 0;
  virtual Result<std::optional<std::string>> GetMeta(const std::string& key) const = 0;
  // Calls fn for every metadata key that starts with `prefix`, in key order.
  virtual Status ScanMeta(
      const std::string& prefix,
      const std::function<void(const std::string& key, const std::string& value)>& fn) const = 0;

  virtual StoreStats stats() const = 0;
  // "sqlite PATH" or "etcd H:P,... PREFIX", for logs and /v1/stats.
  virtual std::string Describe() const = 0;

 protected:
  Store() = default;
};

}  // namespace berth::store

#endif  // BERTH_STORE_STORE_H_
