// Election: leadership of a group of controllers that share one etcd store
// (docs/adr/0008-ha-leader-election.md, docs/ha.md).
//
// Each member holds an etcd lease of `ttl_s` seconds, kept alive by a thread of its own, and a
// member key P/members/<name> under that lease (so that `berth status` lists who is up). The
// leader is whoever created P/leader (a txn that compares the key's create_revision to 0) with
// its lease: when the leader dies, its lease runs out and the key goes with it, and a waiting
// member creates it next. The key's create_revision is the leader's **epoch**: unique, growing
// with every new leader, and the fence of the store (every commit compares it, so a deposed
// leader writes nothing) and of the agents (they refuse commands of a lower epoch).
//
// A leader whose lease could not be renewed for two thirds of `ttl_s` (so before etcd can let it
// run out), or that etcd says is gone, counts as lost (Lost()): it must stop acting at once
// (berth controller exits; its supervisor starts it again as a standby).
//
// Thread safety: every method may be called from any thread.
#ifndef BERTH_STORE_ELECTION_H_
#define BERTH_STORE_ELECTION_H_

#include <atomic>
#include <cstdint>
#include <functional>
#include <memory>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <vector>

#include "common/status.h"
#include "common/thread_annotations.h"
#include "store/store.h"

namespace berth::store {

// A member of the group as it registers itself (the value of its member key, and of P/leader
// while it leads).
struct Member {
  std::string name;     // unique in the group (berth controller --name)
  std::string address;  // where clients and agents reach it ("tcp:H:P", "unix:PATH"); may be ""
  int64_t pid = 0;
  int64_t since = 0;  // Unix seconds: when it registered (member) or became leader (leader)
};

std::string EncodeMember(const Member& m);
// INTERNAL for a value that is not a member's.
Result<Member> DecodeMember(const std::string& text);

struct Leader {
  Member member;
  int64_t epoch = 0;  // the leader key's create_revision
};

// One etcd endpoint's health, as `berth status` shows it.
struct EtcdEndpointHealth {
  std::string endpoint;
  bool ok = false;
  std::string version;     // etcd's
  int64_t db_size = 0;     // bytes
  bool is_leader = false;  // the Raft leader of the etcd cluster
  std::string error;       // when not ok
};

// The key every commit of a leader's store compares (StoreLocation::fence_epoch).
std::string LeaderKey(const StoreLocation& where);

// The group's one value of `name` (key PREFIX/group/NAME): the value already there, or `offer`,
// which is put when there was none (a txn: of members offering at once, one wins and all get
// its value). The group's token secret and CA are agreed on this way (docs/ha.md).
Result<std::string> AgreeOnGroupValue(const StoreLocation& where, const std::string& name,
                                      const std::string& offer);

class Election;

// The group as GET /v1/ha and `berth status --json` show it (docs/ha.md): "mode" "ha", "self"
// and its "role" (Election::Role), "store", "lease_ttl_s", the leader's "epoch" (0: none),
// "leader" (a member, or null), "members" (each with name, address, pid, since, and leader:
// true for one), "etcd" (each endpoint's health), and "error" when etcd could not be read.
nlohmann::json GroupStatus(const Election& election, const std::string& store);

class Election {
 public:
  // Grants the lease and registers `self` as a member. REQUIRES: where.kind == kEtcd,
  // ttl_s >= 1 (etcd raises a shorter TTL to its own minimum, about 1.5 s with its defaults).
  // UNAVAILABLE when etcd cannot be reached.
  static Result<std::unique_ptr<Election>> Join(const StoreLocation& where, Member self, int ttl_s);
  ~Election();  // stops the keep-alive thread (it neither resigns nor revokes: see Resign)
  Election(const Election&) = delete;
  Election& operator=(const Election&) = delete;

  // Waits until this member is the leader, or `stop` becomes true (UNAVAILABLE), and returns the
  // epoch; a new term starts (Lost() is false again). A member whose term was lost may campaign
  // again (after Resign, when its key may still be there). While another leads, checks every
  // `poll_ms` milliseconds (a lease that ran out frees the key within about half a second of its
  // TTL). A lease lost while waiting (etcd was unreachable) is granted again. `on_wait` (may be
  // null) is called with each leader seen.
  Result<int64_t> Campaign(const std::atomic<bool>& stop, int poll_ms = 100,
                           const std::function<void(const std::optional<Leader>&)>& on_wait = {});

  // True once this member, having been leader, may no longer be: its lease expired, its key is
  // gone, or the lease could not be renewed for two thirds of its TTL. Sticky.
  // Until the next Campaign wins: then a new term starts, not lost.
  bool Lost() const { return lost_flag()->load(); }
  // The same, shared: a leader's store stops retrying its requests once it is set
  // (StoreLocation::deposed), so that its last replies come at once. One flag per term.
  std::shared_ptr<std::atomic<bool>> lost_flag() const;
  // True while this member leads: its last campaign won and the term is not lost.
  bool Leading() const { return epoch() > 0 && !Lost(); }
  // "leader", "deposed" (its term lost, not campaigning again yet: a controller serving reads
  // from its last state) or "standby".
  std::string Role() const;
  // The epoch of this member's last term as leader (0: never led).
  int64_t epoch() const { return epoch_.load(); }
  const Member& self() const { return self_; }
  int ttl_s() const { return ttl_s_; }

  // Gives up leadership (deletes P/leader if it is still ours) and the lease (the member key
  // goes with it), so that another member takes over at once. Best effort.
  Status Resign();

  // The group as etcd has it now.
  Result<std::optional<Leader>> CurrentLeader() const;
  Result<std::vector<Member>> Members() const;
  // Each endpoint's /v3/maintenance/status, asked directly (never an error: what failed says so).
  std::vector<EtcdEndpointHealth> Health() const;

  // etcd's current revision (of the whole keyspace).
  Result<int64_t> Revision() const;
  // Drops etcd's history of every key before `revision` (reads at an older revision then fail),
  // as the leader does every --etcd-compaction-interval: etcd keeps every version of every key
  // until compacted. A revision compacted already is not an error.
  Status Compact(int64_t revision) const;

 private:
  struct Impl;
  explicit Election(std::unique_ptr<Impl> impl);
  std::unique_ptr<Impl> impl_;
  Member self_;
  int ttl_s_ = 0;
  void MarkLost();

  mutable Mutex term_mu_;
  std::shared_ptr<std::atomic<bool>> lost_ GUARDED_BY(term_mu_) =
      std::make_shared<std::atomic<bool>>(false);
  std::atomic<int64_t> epoch_{0};
  std::atomic<bool> campaigning_{false};
};

}  // namespace berth::store

#endif  // BERTH_STORE_ELECTION_H_
