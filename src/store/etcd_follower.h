// EtcdFollower: a standby's copy of its group's keys in etcd, kept current by a watch (ADR 0008,
// "Warm standbys"), so that a new leader loads the state from memory instead of reading every key
// through etcd's gateway (about 5 s for 100,000 jobs).
//
// A thread reads the prefix (in pages, at one revision), then watches it from the next revision,
// applying each put and delete; after a failure or a compaction it reads the prefix again. A
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
  std::shared_ptr<const EtcdSnapshot> TakeAt(int64_t revision, int timeout_ms);

  // The revision the copy is at (0 before the first read).
  int64_t revision() const;

 private:
  explicit EtcdFollower(StoreLocation where) : where_(std::move(where)) {}
  void Run();
  // One read of the prefix and the watch after it, until a failure or Stop; OK on Stop.
  Status Follow();
  void Stop();

  const StoreLocation where_;
  mutable Mutex mu_;
  std::condition_variable cv_;                          // waits on mu_.native()
  std::shared_ptr<EtcdSnapshot> copy_ GUARDED_BY(mu_);  // null while a read is under way
  bool stopping_ GUARDED_BY(mu_) = false;
  net::HttpClient* watching_ GUARDED_BY(mu_) = nullptr;  // for Stop to cut a blocked read
  std::thread thread_;
};

}  // namespace berth::store

#endif  // BERTH_STORE_ETCD_FOLLOWER_H_
