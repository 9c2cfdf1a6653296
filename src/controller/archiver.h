// Archiver: moves the records of finished jobs from the controller's store (etcd in an HA group)
// to the accounting archive in PostgreSQL (store/archive.h, docs/adr/0009-accounting-archive.md),
// so that the store keeps the live state and the recent past only.
//
// A job moves once it ended more than MinJobAge ago and the controller has forgotten it (it is
// out of the live view, its outcome no longer settles dependencies): nothing writes its row
// again. Each round reads finished jobs from the store in batches, adds
// them to the archive (idempotent), and only once PostgreSQL has committed them deletes them from
// the store (a fenced commit: a deposed leader deletes nothing). A round cut short anywhere is
// done again by the next: no record is lost and none is archived twice. While PostgreSQL is down,
// records wait in the store and move when it is back.
//
// Thread safety: Start/Stop from one thread; RunOnce and stats from any (rounds do not overlap).
#ifndef BERTH_CONTROLLER_ARCHIVER_H_
#define BERTH_CONTROLLER_ARCHIVER_H_

#include <condition_variable>
#include <cstdint>
#include <functional>
#include <string>
#include <thread>

#include "common/status.h"
#include "common/thread_annotations.h"
#include "common/time.h"
#include "store/archive.h"
#include "store/store.h"

namespace berth::controller {

struct ArchiverStats {
  int64_t moved = 0;       // jobs moved since the start
  int64_t rounds = 0;      // rounds run
  int64_t failures = 0;    // rounds cut short by the archive or the store
  std::string last_error;  // the last failure's reason ("" when the last round went well)
};

class Archiver {
 public:
  // Jobs that ended more than min_job_age_s before `now()` and are not `live` (still in the
  // controller's view) move; a round every interval_s seconds.
  static constexpr size_t kBatch = 1000;

  Archiver(store::Store* store, store::Archive* archive, Duration min_job_age_s,
           Duration interval_s, std::function<Time()> now, std::function<bool(uint32_t)> live);
  ~Archiver();  // Stop()s.

  void Start();
  void Stop();

  // One round: moves every job that is due, kBatch at a time; the number moved, or the first
  // failure (what was moved before it stays moved).
  Result<int64_t> RunOnce();

  ArchiverStats stats() const;

 private:
  void Loop();

  store::Store* const store_;
  store::Archive* const archive_;
  const Duration min_job_age_s_;
  const Duration interval_s_;
  const std::function<Time()> now_;
  const std::function<bool(uint32_t)> live_;

  Mutex round_mu_;  // one round at a time
  mutable Mutex mu_;
  std::condition_variable cv_;  // waits on mu_.native()
  bool stopping_ GUARDED_BY(mu_) = false;
  ArchiverStats stats_ GUARDED_BY(mu_);
  std::thread thread_;
};

}  // namespace berth::controller

#endif  // BERTH_CONTROLLER_ARCHIVER_H_
