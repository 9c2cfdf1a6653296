// Store: the controller's durable state in SQLite (WAL mode): one row per job (its whole record,
// kept up to date), one per node registered at run time, and small metadata values (the next
// job id). SQLite's write-ahead log is the journal; the tables are the snapshot it keeps up to
// date (docs/adr/0003-store.md).
//
// Writes are group-committed: callers hand a batch to Commit(), a writer thread gathers every
// batch waiting at that moment into one transaction, and each caller returns once its batch is
// durable (synchronous=FULL). A client is told about a change only after Commit returns.
//
// Thread safety: Commit may be called from any thread; the Load*/Get* methods are for start-up
// (and tools) and may run concurrently with Commit (they use their own connection).
#ifndef BERTH_STORE_STORE_H_
#define BERTH_STORE_STORE_H_

#include <cstdint>
#include <functional>
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
};

struct Write {
  enum class Kind { kPutJob, kPutNode, kDeleteNode, kPutMeta, kDeleteMeta };
  Kind kind = Kind::kPutJob;
  JobRow job;         // kPutJob
  std::string key;    // node name or meta key
  std::string value;  // node record or meta value
};

struct StoreStats {
  int64_t commits = 0;  // transactions
  int64_t batches = 0;  // Commit() calls served
  int64_t rows_written = 0;
};

class Store {
 public:
  // Opens (creating when missing) the database at `path`.
  static Result<std::unique_ptr<Store>> Open(const std::string& path);
  ~Store();  // Finishes pending commits, stops the writer.
  Store(const Store&) = delete;
  Store& operator=(const Store&) = delete;

  // Makes `writes` durable; returns once they are (or the error, with nothing written).
  Status Commit(std::vector<Write> writes);

  // Calls fn for every job row (active_only: pending/running ones), in id order.
  Status ScanJobs(bool active_only, const std::function<void(const JobRow&)>& fn) const;
  // Finished jobs that ended in [from, to), in id order (for sacct).
  Status ScanFinished(Time from, Time to, const std::function<void(const JobRow&)>& fn) const;
  Result<std::optional<JobRow>> GetJob(uint32_t id) const;
  Status ScanNodes(
      const std::function<void(const std::string& name, const std::string& record)>& fn) const;
  Result<std::optional<std::string>> GetMeta(const std::string& key) const;
  // Calls fn for every metadata key that starts with `prefix`, in key order.
  Status ScanMeta(
      const std::string& prefix,
      const std::function<void(const std::string& key, const std::string& value)>& fn) const;

  StoreStats stats() const;

 private:
  Store();
  struct Impl;
  std::unique_ptr<Impl> impl_;
};

}  // namespace berth::store

#endif  // BERTH_STORE_STORE_H_
