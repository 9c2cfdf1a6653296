// EtcdFollower: a standby's copy of its group's keys in etcd, kept current by a watch (ADR 0008,
// "Warm standbys"), so that a new leader loads the state from memory instead of reading every key
// through etcd's gateway (about 5 s for 100,000 jobs).
//
// A thread reads the prefix (in pages, at one revision), then watches it from the next revision,
// applying each put and delete. When the watch fails (its etcd member gone), it watches again
// from the next endpoint, from the revision after the copy's; after a compaction or an answer it
// cannot read, it reads the prefix again. A
// member that wins the election at epoch E takes the copy once it has seen revision E (its own
// leader key's creation, an event under the prefix): every change of the previous leaders is at
// an earlier revision, and none of theirs can come after (they are fenced), so the copy is the
// state the new leader would read from etcd (EtcdStore reads it until its first commit).
//
// Thread safety: every method may be called from any thread.
#ifndef BERTH_STORE_ETCD_FOLLOWER_H_
#define BERTH_STORE_ETCD_FOLLOWER_H_

#include <condition_variable>
#include <cstdint>
#include <map>
#include <memory>
#include <string>
#include <thread>

#include "common/thread_annotations.h"
#include "store/store.h"

namespace berth::net {
class HttpClient;
}

namespace berth::store {

class EtcdFollower {
 public:
  // Starts following where.prefix (kind kEtcd).
  static std::unique_ptr<EtcdFollower> Start(const StoreLocation& where);
  ~EtcdFollower();  // stops
  EtcdFollower(const EtcdFollower&) = delete;
  EtcdFollower& operator=(const EtcdFollower&) = delete;

  // Waits up to timeout_ms until the copy has seen `revision`, then stops following and hands
  // the copy over; nullptr when it did not get there in time (the caller reads etcd instead).
  // A watch whose member was cut off says nothing (no reset comes over a dead link): when the
  // copy is not there within kNudgeMs, the watch moves on to the next endpoint, once.
  std::shared_ptr<const EtcdSnapshot> TakeAt(int64_t revision, int timeout_ms);

  // The revision the copy is at (0 before the first read).
  int64_t revision() const;

 private:
  explicit EtcdFollower(StoreLocation where) : where_(std::move(where)) {}
  void Run();
  // One read of the prefix (none when resuming a kept copy) and the watch after it, until a
  // failure or Stop; OK on Stop.
  Status Follow();
  void Stop();

  static constexpr int kNudgeMs = 300;

  const StoreLocation where_;
  mutable Mutex mu_;
  std::condition_variable cv_;                          // waits on mu_.native()
  std::shared_ptr<EtcdSnapshot> copy_ GUARDED_BY(mu_);  // null while a read is under way
  // After a watch failed: whether the copy is whole up to its revision (the watch is resumed
  // from there), and the endpoint to watch from next.
  bool resume_ GUARDED_BY(mu_) = false;
  bool watched_ GUARDED_BY(mu_) = false;  // the last Follow had its watch open
  size_t next_endpoint_ GUARDED_BY(mu_) = 0;
  bool stopping_ GUARDED_BY(mu_) = false;
  net::HttpClient* watching_ GUARDED_BY(mu_) = nullptr;  // for Stop to cut a blocked read
  std::thread thread_;
};

}  // namespace berth::store

#endif  // BERTH_STORE_ETCD_FOLLOWER_H_
