// `berth controller` in an HA group (docs/ha.md, docs/adr/0008-ha-leader-election.md): a standby
// (controller/standby.h) until it wins the election (store/election.h), then the leader, its
// store's every commit and every answer to an agent carrying its epoch; after a lost term (etcd
// out of reach, another leader) it serves reads until etcd answers, then stands by again.
#ifndef BERTH_CLI_GROUP_CONTROLLER_H_
#define BERTH_CLI_GROUP_CONTROLLER_H_

#include <atomic>
#include <functional>
#include <string>

#include "common/status.h"
#include "controller/controller.h"
#include "store/election.h"
#include "store/store.h"

namespace berth::cli {

struct GroupControllerArgs {
  store::StoreLocation where;  // kEtcd
  store::Member self;          // name, advertised address, pid
  int lease_ttl_s = 2;
  int compaction_s = 300;  // the leader compacts etcd's history this often (0: never)
  std::string socket;      // the Unix socket, served as a standby and as the leader
  std::string tcp;         // "host:port" or ""
};

// Runs until `stop`; `options` makes the controller's options for each term (the store's fence
// and the group's status are added to them). Returns the exit status: 0 when stopped, 75 when
// etcd could not be reached to join, 1 (with the message) when the socket cannot be served.
int RunGroupController(const GroupControllerArgs& args,
                       const std::function<Result<controller::ControllerOptions>()>& options,
                       const std::atomic<bool>& stop);

}  // namespace berth::cli

#endif  // BERTH_CLI_GROUP_CONTROLLER_H_
