// The accounting archive: finished jobs' records in PostgreSQL
// (docs/adr/0009-accounting-archive.md), as slurmdbd keeps Slurm's in MySQL. A controller given
// `--accounting-store` moves each finished job's record here once the job has left its live view
// (MinJobAge), and only then deletes it from its store, so that etcd holds the recent jobs alone
// however long the cluster runs; sacct, seff and `berth report` read the archive and the store
// together.
//
// One table, made on the first connection (and by every later one, if it is missing):
//   berth_jobs(cluster text, id bigint, submit_time bigint, attempt integer, end_time bigint,
//              user_name text, account text, state text, record bytea, archived_at timestamptz,
//              PRIMARY KEY (cluster, id, submit_time, attempt))
// indexed by (cluster, end_time). `cluster` lets several clusters share a database; submit_time
// keeps apart two jobs with one id (a cluster whose store was started afresh counts ids from 1
// again, as Slurm's job_table keys on id_job and time_submit); the record is the controller's
// encoding, kept as bytes (a job's script may hold any bytes).
//
// Put is idempotent: a row already there is left as it is (ON CONFLICT DO NOTHING), so a move
// cut short between the archive's commit and the store's delete is simply done again: records
// are written before they leave the store, never twice, never lost.
//
// Connections are made when first needed and again after a failure: an archive whose server is
// down opens fine, and each call fails UNAVAILABLE (naming the server and libpq's reason) until it
// is back.
//
// Thread safety: every method may be called from any thread (a writer and a reader connection,
// each behind its own mutex).
#ifndef BERTH_STORE_ARCHIVE_H_
#define BERTH_STORE_ARCHIVE_H_

#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "common/status.h"
#include "common/time.h"
#include "store/store.h"

namespace berth::store {

// A finished job as the archive keeps it: the key, the columns an administrator's SQL filters
// on, and the controller's whole record.
struct ArchivedJob {
  uint32_t id = 0;
  Time submit_time = 0;
  int32_t attempt = 0;  // the job's restart count (Slurm's Restarts)
  Time end_time = 0;
  std::string user, account, state;
  std::string record;
};

// The folder with PostgreSQL's server programs (initdb, postgres) of the newest version
// installed (Debian's /usr/lib/postgresql/N/bin), or "" when there is none: for `berth up --ha`
// and the tests, which run their own clusters.
std::string PostgresBinDir();

class Archive {
 public:
  // `conninfo` is a libpq connection string or URI (postgresql://USER@HOST:PORT/DB?...: TLS,
  // passfile and client certificates are libpq's parameters; docs/security.md). Checks its
  // syntax only (INVALID_ARGUMENT with libpq's reason); connects on first use.
  static Result<std::unique_ptr<Archive>> Open(const std::string& conninfo, std::string cluster);
  ~Archive();
  Archive(const Archive&) = delete;
  Archive& operator=(const Archive&) = delete;

  // Adds the jobs (those already there are left as they are); returns once PostgreSQL has
  // committed them.
  Status Put(const std::vector<ArchivedJob>& jobs);
  // Finished jobs that ended in [from, to) with ids from `min_id` on, in id order, as store rows
  // (active false); rows are streamed from the server, not held all at once.
  Status ScanFinished(Time from, Time to, uint32_t min_id,
                      const std::function<void(const JobRow&)>& fn) const;
  // The newest job with this id (by submit time, then attempt), if any.
  Result<std::optional<JobRow>> GetJob(uint32_t id) const;
  // How many jobs this cluster has in the archive.
  Result<int64_t> Count() const;

  // "postgresql HOST:PORT/DB (cluster NAME)", with no credentials, for logs and errors.
  std::string Describe() const;
  const std::string& cluster() const { return cluster_; }

 private:
  struct Connection;
  Archive(std::string conninfo, std::string cluster, std::string where);

  const std::string conninfo_;
  const std::string cluster_;
  const std::string where_;  // Describe()'s server part
  std::unique_ptr<Connection> writer_;
  std::unique_ptr<Connection> reader_;
};

}  // namespace berth::store

#endif  // BERTH_STORE_ARCHIVE_H_
