// EtcdStore: the Store on an etcd v3 cluster (docs/adr/0007-etcd-store.md). Keys under the
// location's prefix P:
//   P/jobs/<id, 10 digits>               "<active 0|1> <end time or ->\n" + the job's record
//   P/ended/<end time, 20 digits>/<id>   "" : the index of finished jobs by end time (sacct)
//   P/nodes/<name>                       the node's record
//   P/meta/<key>                         the value
// A group commit is one etcd txn of puts and deletes (the last write of a key in the batch
// wins), split into several when it has more operations or bytes than the server takes.
// Scans read in pages of kPageKeys keys at the revision of their first page.
//
// Thread safety: as Store. The writer thread owns its EtcdClient; readers share another under
// a mutex.
#ifndef BERTH_STORE_ETCD_STORE_H_
#define BERTH_STORE_ETCD_STORE_H_

#include <memory>
#include <string>

#include "common/status.h"
#include "store/store.h"

namespace berth::store {

// Opens the store at `where` (kind kEtcd) after one linearizable read of its prefix: a cluster
// with no quorum, or no endpoint that answers, is UNAVAILABLE.
Result<std::unique_ptr<Store>> OpenEtcdStore(const StoreLocation& where);

// Keys per page of a scan (tests page past it).
inline constexpr int kPageKeys = 500;

}  // namespace berth::store

#endif  // BERTH_STORE_ETCD_STORE_H_
