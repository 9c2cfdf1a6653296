// LocalGroup: an HA group on this machine, for trying it (`berth up --ha`, docs/ha.md): an etcd
// cluster of several members on loopback ports, a PostgreSQL cluster for the accounting archive
// (local_postgres.h), and several `berth controller` processes on them,
// each with its own folder and socket under HOME/ha, restarted when one exits (as systemd's
// Restart=always would). The ports are chosen on the first start and kept in HOME/ha/etcd/ports,
// so that a later `berth up --ha` finds the same etcd data.
//
// Thread safety: one owner thread.
#ifndef BERTH_CLI_LOCAL_GROUP_H_
#define BERTH_CLI_LOCAL_GROUP_H_

#include <signal.h>
#include <sys/types.h>

#include <memory>
#include <string>
#include <vector>

#include "common/status.h"

namespace berth::cli {

struct LocalGroupOptions {
  std::string home;          // the group lives in HOME/ha
  std::string berth_binary;  // this binary, for the controllers
  std::string etcd_binary;   // "" = etcd on PATH
  int controllers = 3;
  int etcd_members = 3;
  int lease_ttl_s = 2;
  // More arguments for every controller (--config FILE, --operator USER, ...).
  std::vector<std::string> controller_args;
};

class LocalGroup {
 public:
  // Starts etcd (waiting until every member answers) and the controllers (waiting until each
  // answers on its socket, and one leads). Errors name what did not start and its log.
  static Result<std::unique_ptr<LocalGroup>> Start(const LocalGroupOptions& options);
  ~LocalGroup();  // Stop()
  LocalGroup(const LocalGroup&) = delete;
  LocalGroup& operator=(const LocalGroup&) = delete;

  // The controllers' sockets as a comma list (BERTH_SOCKET), and as agent addresses
  // ("unix:A,unix:B,...").
  std::string Sockets() const;
  std::string AgentAddresses() const;
  // The store URL the controllers share.
  const std::string& StoreUrl() const { return store_url_; }
  // Starts again, after a second, each controller that exited (the leader that lost its lease
  // exits with 75 to come back as a standby). Returns how many it restarted.
  int Supervise();
  // Stops the controllers (SIGTERM: the leader resigns), then etcd.
  void Stop();

 private:
  struct Child {
    std::string name;
    std::vector<std::string> argv;
    std::string log;
    uid_t uid = 0, gid = 0;     // whom it runs as, when not this process's user
    int stop_signal = SIGTERM;  // PostgreSQL: SIGINT, its fast shutdown
    pid_t pid = -1;
    int64_t exited_ms = -1;  // when it was seen to have exited (steady clock)
  };
  LocalGroup() = default;
  Status StartEtcd();
  // PostgreSQL, the accounting archive (local_postgres.h); the controllers' --accounting-store.
  Result<std::string> StartPostgres();
  Status Spawn(Child& c);
  static void StopChild(Child& c, int grace_ms);

  LocalGroupOptions opt_;
  std::string dir_;  // HOME/ha
  std::string store_url_;
  std::vector<Child> etcd_;
  std::vector<Child> postgres_;  // one
  std::vector<Child> controllers_;
};

}  // namespace berth::cli

#endif  // BERTH_CLI_LOCAL_GROUP_H_
