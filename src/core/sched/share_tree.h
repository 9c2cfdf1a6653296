// The fair-share tree as `sshare` shows it: one row per account and per association (a user in
// an account), in Slurm's order (an account, then its users by name, then its sub-accounts by
// name, depth first), with the numbers of the pass's FairshareTable (priority.h): the same
// factors sprio shows.
//
// Thread safety: pure.
#ifndef BERTH_CORE_SCHED_SHARE_TREE_H_
#define BERTH_CORE_SCHED_SHARE_TREE_H_

#include <cstdint>
#include <string>
#include <vector>

#include "core/config.h"
#include "core/sched/priority.h"
#include "core/state/cluster_state.h"

namespace berth::core {

struct ShareRow {
  int32_t id = 0;       // 1-based position in the whole tree (the root account is 1)
  int32_t depth = 0;    // the root account 0, its children 1; a user row is one below its account
  std::string account;  // the account (of the association, for a user row)
  std::string parent;   // the parent account; "" for the root
  std::string user;     // "" for an account row
  int64_t raw_shares = -1;  // -1 for the root (Slurm prints nothing)
  double norm_shares = 0;
  double raw_usage = 0;   // decayed billing-seconds
  double norm_usage = 0;  // raw usage / the root's
  double effective_usage = 0;
  // The fair-share factor: an association's from the table; an account's only with the classic
  // algorithm (2^(-EffectvUsage/NormShares), as Slurm prints it); has_fairshare false otherwise.
  bool has_fairshare = false;
  double fairshare = 0;
  double level_fs = 0;  // Fair Tree: NormShares / EffectvUsage (+inf without usage)
};

// REQUIRES: `t` was computed from `cs` (ComputeFairshare) with `algorithm`.
std::vector<ShareRow> ShareTreeRows(const ClusterState& cs, const FairshareTable& t,
                                    FairshareAlgorithm algorithm);

}  // namespace berth::core

#endif  // BERTH_CORE_SCHED_SHARE_TREE_H_
