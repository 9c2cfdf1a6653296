// The PostgreSQL cluster of `berth up --ha` (docs/ha.md): the accounting archive of the local HA
// group (store/archive.h). Made once by initdb, with the user "berth" and a random password that
// the controllers read from a libpq password file (HOME/ha/pg.pass, the owner's alone); the
// server listens on a loopback port chosen on the first start and kept with the data.
//
// PostgreSQL refuses to run as root: as root the cluster is the "postgres" user's (Debian's
// package makes it), in HOME/ha/pg when that user can reach it, else in
// /var/lib/postgresql/berth-ha-HASH (HOME/ha/pg.location then names it).
//
// Thread safety: none needed (called once, before the group's processes start).
#ifndef BERTH_CLI_LOCAL_POSTGRES_H_
#define BERTH_CLI_LOCAL_POSTGRES_H_

#include <sys/types.h>

#include <string>
#include <vector>

#include "common/status.h"

namespace berth::cli {

struct LocalPostgres {
  std::vector<std::string> argv;  // the server's command line
  uid_t uid = 0;                  // whom it runs as
  gid_t gid = 0;
  int port = 0;
  std::string dir;       // the cluster's folder (data/, its socket, its log)
  std::string conninfo;  // for the controllers' --accounting-store
};

// Finds PostgreSQL's programs (the newest /usr/lib/postgresql/N/bin), makes the cluster under
// `ha_dir` the first time, and says how to run it. FAILED_PRECONDITION when PostgreSQL is not
// installed; errors name the step and its log otherwise.
Result<LocalPostgres> PrepareLocalPostgres(const std::string& ha_dir);

}  // namespace berth::cli

#endif  // BERTH_CLI_LOCAL_POSTGRES_H_
