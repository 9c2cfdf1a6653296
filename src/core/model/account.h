// Accounts (a tree with fair-share shares and group limits), users' associations with accounts,
// and QoS (priority, preemption, limits).
#ifndef BERTH_CORE_MODEL_ACCOUNT_H_
#define BERTH_CORE_MODEL_ACCOUNT_H_

#include <cstdint>
#include <string>
#include <vector>

#include "common/time.h"
#include "core/model/partition.h"
#include "core/model/resources.h"

namespace berth::core {

inline constexpr const char* kRootAccount = "root";

struct AccountSpec {
  std::string name;
  std::string parent = kRootAccount;  // ignored for "root" itself
  int32_t shares = 1;                 // Slurm's Fairshare= (raw shares among siblings)
  TresLimits grp_tres;                // GrpTRES: running total over the account's subtree
  int32_t grp_jobs = -1;              // GrpJobs: running jobs over the subtree; -1 = none
  friend bool operator==(const AccountSpec&, const AccountSpec&) = default;
};

// A user's association with one account.
struct UserSpec {
  std::string name;
  std::string account;
  int32_t shares = 1;
  int32_t max_jobs = -1;        // MaxJobs: running jobs of this association
  TresLimits max_tres_per_job;  // MaxTRES (per job)
  bool is_default = false;      // the user's default account
  friend bool operator==(const UserSpec&, const UserSpec&) = default;
};

struct QosSpec {
  std::string name;
  int32_t priority = 0;
  std::vector<std::string> preempt;              // QoS names this QoS may preempt
  PreemptMode preempt_mode = PreemptMode::kOff;  // kOff: the cluster default applies
  double usage_factor = 1.0;                     // scales fair-share usage
  TresLimits max_tres_per_user;                  // MaxTRESPerUser (running)
  TresLimits max_tres_per_account;               // MaxTRESPerAccount (running)
  TresLimits max_tres_per_job;                   // MaxTRESPerJob
  int32_t max_jobs_per_user = -1;                // MaxJobsPerUser (running)
  int32_t max_jobs_per_account = -1;             // MaxJobsPerAccount (running)
  Duration max_wall = kInfinite;                 // MaxWall per job
  friend bool operator==(const QosSpec&, const QosSpec&) = default;
};

}  // namespace berth::core

#endif  // BERTH_CORE_MODEL_ACCOUNT_H_
