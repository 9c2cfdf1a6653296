#include "controller/archiver.h"

#include <chrono>
#include <cstdio>
#include <utility>
#include <vector>

#include "controller/job_record.h"
#include "core/model/job_state.h"

namespace berth::controller {

Archiver::Archiver(store::Store* store, store::Archive* archive, Duration min_job_age_s,
                   Duration interval_s, std::function<Time()> now,
                   std::function<bool(uint32_t)> live)
    : store_(store),
      archive_(archive),
      min_job_age_s_(min_job_age_s),
      interval_s_(std::max<Duration>(1, interval_s)),
      now_(std::move(now)),
      live_(std::move(live)) {}

Archiver::~Archiver() {
  Stop();
}

void Archiver::Start() {
  {
    MutexLock<Mutex> l(mu_);
    stopping_ = false;
  }
  thread_ = std::thread([this] { Loop(); });
}

void Archiver::Stop() {
  {
    MutexLock<Mutex> l(mu_);
    stopping_ = true;
  }
  cv_.notify_all();
  if (thread_.joinable()) thread_.join();
}

ArchiverStats Archiver::stats() const {
  MutexLock<Mutex> l(mu_);
  return stats_;
}

Result<int64_t> Archiver::RunOnce() {
  MutexLock<Mutex> round(round_mu_);
  const Time cutoff = now_() - min_job_age_s_;
  int64_t moved = 0;
  Status st = Status::Ok();
  while (st.ok()) {
    std::vector<store::JobRow> rows;
    st = store_->ScanFinished(0, cutoff, 0, kBatch,
                              [&](const store::JobRow& row) { rows.push_back(row); });
    if (!st.ok() || rows.empty()) break;
    std::vector<store::ArchivedJob> jobs;
    jobs.reserve(rows.size());
    for (store::JobRow& row : rows) {
      if (live_(row.id)) continue;  // not forgotten yet: the next round takes it
      store::ArchivedJob j;
      j.id = row.id;
      j.end_time = row.end_time;
      // The archive keeps the whole entry, run specification inside (store::JoinedRecord).
      j.record = store::JoinedRecord(row);
      // A record the controller cannot read moves all the same (its bytes are kept whole).
      if (Result<JobRecord> r = DecodeJobRecord(j.record); r.ok()) {
        j.submit_time = r->job.spec->submit_time;
        j.attempt = r->job.restart_count;
        j.user = r->job.spec->user;
        j.account = r->job.spec->account;
        j.state = std::string(core::JobStateName(r->job.state));
      }
      jobs.push_back(std::move(j));
    }
    if (jobs.empty()) break;
    st = archive_->Put(jobs);
    if (!st.ok()) break;
    std::vector<store::Write> deletes;
    deletes.reserve(jobs.size());
    for (const store::ArchivedJob& j : jobs) {
      store::Write w;
      w.kind = store::Write::Kind::kDeleteJob;
      w.job.id = j.id;
      w.job.end_time = j.end_time;
      deletes.push_back(std::move(w));
    }
    st = store_->Commit(std::move(deletes));
    if (!st.ok()) break;
    moved += static_cast<int64_t>(jobs.size());
    // The batch's skipped jobs would come first again: the next round takes them.
    if (rows.size() < kBatch || jobs.size() < rows.size()) break;
    MutexLock<Mutex> l(mu_);
    if (stopping_) break;
  }
  MutexLock<Mutex> l(mu_);
  ++stats_.rounds;
  stats_.moved += moved;
  if (!st.ok()) {
    ++stats_.failures;
    stats_.last_error = st.message();
    return st;
  }
  stats_.last_error.clear();
  return moved;
}

void Archiver::Loop() {
  bool failing = false;
  while (true) {
    {
      UniqueLock l(mu_);
      if (cv_.wait_for(l.get(), std::chrono::seconds(interval_s_),
                       [&]() REQUIRES(mu_) { return stopping_; })) {
        return;
      }
    }
    Result<int64_t> moved = RunOnce();
    // A failure is told once, and its end (records wait in the store meanwhile).
    if (!moved.ok() && !failing) {
      std::fprintf(stderr,
                   "berth controller: accounting archive: %s; finished jobs wait in the store\n",
                   moved.status().message().c_str());
    } else if (moved.ok() && failing) {
      std::fprintf(stderr, "berth controller: accounting archive: back; %lld jobs moved\n",
                   static_cast<long long>(*moved));
    }
    failing = !moved.ok();
  }
}

}  // namespace berth::controller
