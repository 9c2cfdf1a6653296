// QOS=, Account= and User= records: what `sacctmgr add qos|account|user` keeps in Slurm's
// database, written as lines of the cluster file with sacctmgr's field names (and its short
// aliases, such as MaxTRESPU for MaxTRESPerUser). A record's name may be a comma list; each name
// gets the same settings.
#include <algorithm>

#include "common/strings.h"
#include "config/cluster_config_internal.h"
#include "config/tres_text.h"

namespace berth::config::internal {
namespace {

enum class QosKey {
  kPriority,
  kPreempt,
  kPreemptMode,
  kGraceTime,
  kUsageFactor,
  kMaxTresPerUser,
  kMaxTresPerAccount,
  kMaxTresPerJob,
  kMaxJobsPerUser,
  kMaxJobsPerAccount,
  kMaxWall,
  kIgnored,
};

constexpr KeyName<QosKey> kQosKeys[] = {
    {"Priority", QosKey::kPriority},
    {"Preempt", QosKey::kPreempt},
    {"PreemptMode", QosKey::kPreemptMode},
    {"UsageFactor", QosKey::kUsageFactor},
    {"MaxTRESPerUser", QosKey::kMaxTresPerUser},
    {"MaxTRESPU", QosKey::kMaxTresPerUser},
    {"MaxTRESPerAccount", QosKey::kMaxTresPerAccount},
    {"MaxTRESPA", QosKey::kMaxTresPerAccount},
    {"MaxTRESPerJob", QosKey::kMaxTresPerJob},
    {"MaxTRESPJ", QosKey::kMaxTresPerJob},
    {"MaxTRES", QosKey::kMaxTresPerJob},
    {"MaxJobsPerUser", QosKey::kMaxJobsPerUser},
    {"MaxJobsPU", QosKey::kMaxJobsPerUser},
    {"MaxJobsPerAccount", QosKey::kMaxJobsPerAccount},
    {"MaxJobsPA", QosKey::kMaxJobsPerAccount},
    {"MaxWall", QosKey::kMaxWall},
    {"MaxWallDurationPerJob", QosKey::kMaxWall},
    {"Description", QosKey::kIgnored},
    {"Flags", QosKey::kIgnored},
    {"GraceTime", QosKey::kGraceTime},
    {"GrpJobs", QosKey::kIgnored},
    {"GrpJobsAccrue", QosKey::kIgnored},
    {"GrpSubmitJobs", QosKey::kIgnored},
    {"GrpTRES", QosKey::kIgnored},
    {"GrpTRESMins", QosKey::kIgnored},
    {"GrpTRESRunMins", QosKey::kIgnored},
    {"GrpWall", QosKey::kIgnored},
    {"LimitFactor", QosKey::kIgnored},
    {"MaxJobsAccruePerAccount", QosKey::kIgnored},
    {"MaxJobsAccruePerUser", QosKey::kIgnored},
    {"MaxSubmitJobsPerAccount", QosKey::kIgnored},
    {"MaxSubmitJobsPerUser", QosKey::kIgnored},
    {"MaxSubmitJobsPA", QosKey::kIgnored},
    {"MaxSubmitJobsPU", QosKey::kIgnored},
    {"MaxTRESMinsPerJob", QosKey::kIgnored},
    {"MaxTRESPerNode", QosKey::kIgnored},
    {"MaxTRESRunMinsPerAccount", QosKey::kIgnored},
    {"MaxTRESRunMinsPerUser", QosKey::kIgnored},
    {"MinPrioThreshold", QosKey::kIgnored},
    {"MinTRESPerJob", QosKey::kIgnored},
    {"PreemptExemptTime", QosKey::kIgnored},
    {"UsageThreshold", QosKey::kIgnored},
};

enum class AccountKey { kParent, kFairshare, kGrpTres, kGrpJobs, kIgnored };

constexpr KeyName<AccountKey> kAccountKeys[] = {
    {"Parent", AccountKey::kParent},
    {"Fairshare", AccountKey::kFairshare},
    {"Shares", AccountKey::kFairshare},
    {"GrpTRES", AccountKey::kGrpTres},
    {"GrpJobs", AccountKey::kGrpJobs},
    {"Cluster", AccountKey::kIgnored},
    {"DefaultQOS", AccountKey::kIgnored},
    {"Description", AccountKey::kIgnored},
    {"GrpJobsAccrue", AccountKey::kIgnored},
    {"GrpSubmitJobs", AccountKey::kIgnored},
    {"GrpTRESMins", AccountKey::kIgnored},
    {"GrpTRESRunMins", AccountKey::kIgnored},
    {"GrpWall", AccountKey::kIgnored},
    {"MaxJobs", AccountKey::kIgnored},
    {"MaxJobsAccrue", AccountKey::kIgnored},
    {"MaxSubmitJobs", AccountKey::kIgnored},
    {"MaxTRES", AccountKey::kIgnored},
    {"MaxTRESMins", AccountKey::kIgnored},
    {"MaxTRESPerNode", AccountKey::kIgnored},
    {"MaxWall", AccountKey::kIgnored},
    {"Organization", AccountKey::kIgnored},
    {"Priority", AccountKey::kIgnored},
    {"QOS", AccountKey::kIgnored},
};

enum class UserKey { kAccount, kDefaultAccount, kFairshare, kMaxJobs, kMaxTres, kIgnored };

constexpr KeyName<UserKey> kUserKeys[] = {
    {"Account", UserKey::kAccount},
    {"Accounts", UserKey::kAccount},
    {"DefaultAccount", UserKey::kDefaultAccount},
    {"Fairshare", UserKey::kFairshare},
    {"Shares", UserKey::kFairshare},
    {"MaxJobs", UserKey::kMaxJobs},
    {"MaxTRES", UserKey::kMaxTres},
    {"MaxTRESPerJob", UserKey::kMaxTres},
    {"MaxTRESPJ", UserKey::kMaxTres},
    {"AdminLevel", UserKey::kIgnored},
    {"Cluster", UserKey::kIgnored},
    {"DefaultQOS", UserKey::kIgnored},
    {"DefaultWCKey", UserKey::kIgnored},
    {"GrpJobs", UserKey::kIgnored},
    {"GrpJobsAccrue", UserKey::kIgnored},
    {"GrpSubmitJobs", UserKey::kIgnored},
    {"GrpTRES", UserKey::kIgnored},
    {"GrpTRESMins", UserKey::kIgnored},
    {"GrpTRESRunMins", UserKey::kIgnored},
    {"GrpWall", UserKey::kIgnored},
    {"MaxJobsAccrue", UserKey::kIgnored},
    {"MaxSubmitJobs", UserKey::kIgnored},
    {"MaxTRESMins", UserKey::kIgnored},
    {"MaxTRESPerNode", UserKey::kIgnored},
    {"MaxWall", UserKey::kIgnored},
    {"Partition", UserKey::kIgnored},
    {"Priority", UserKey::kIgnored},
    {"QOS", UserKey::kIgnored},
    {"WCKeys", UserKey::kIgnored},
};

// A record's names: a comma list without empty items.
Result<std::vector<std::string>> Names(std::string_view key, std::string_view value) {
  std::vector<std::string> out;
  for (std::string_view item : Split(value, ',')) {
    if (item.empty()) return InvalidValue(key, value, "empty name");
    out.emplace_back(item);
  }
  return out;
}

// A record's names must be new, and distinct.
template <typename Spec>
Status CheckNewNames(const std::vector<std::string>& names, const std::vector<Spec>& existing,
                     std::string_view kind) {
  for (size_t i = 0; i < names.size(); ++i) {
    bool twice = std::any_of(existing.begin(), existing.end(),
                             [&](const Spec& s) { return s.name == names[i]; }) ||
                 std::find(names.begin(), names.begin() + i, names[i]) != names.begin() + i;
    if (twice) {
      return Status::InvalidArgument(std::string(kind) + " '" + names[i] + "' defined twice");
    }
  }
  return Status::Ok();
}

// sacctmgr's counts of jobs: -1 means no limit.
Result<int64_t> JobCount(std::string_view key, std::string_view value) {
  Result<int64_t> n = ParseInteger(value, -1, INT32_MAX);
  if (!n.ok()) return InvalidValue(key, value, n.status().message());
  return *n;
}

// Fairshare=N: raw shares. sacctmgr's -1 restores the default (1); "parent" is not modelled.
Result<int64_t> Shares(std::string_view key, std::string_view value) {
  if (EqualsIgnoreCase(value, "parent")) {
    return InvalidValue(key, value, "Fairshare=parent is not supported");
  }
  Result<int64_t> n = ParseInteger(value, -1, INT32_MAX);
  if (!n.ok()) return InvalidValue(key, value, n.status().message());
  return *n < 0 ? 1 : *n;
}

Result<core::TresLimits> Limits(std::string_view key, std::string_view value) {
  Result<core::TresLimits> l = ParseTresLimits(value);
  if (!l.ok()) return InvalidValue(key, value, l.status().message());
  return *l;
}

Status ReadQosValue(QosKey key, std::string_view name, std::string_view value, core::QosSpec& q,
                    std::vector<std::string>& ignored) {
  switch (key) {
    case QosKey::kPriority: {
      Result<int64_t> n = ParseInteger(value, 0, INT32_MAX);
      if (!n.ok()) return InvalidValue(name, value, n.status().message());
      q.priority = static_cast<int32_t>(*n);
      return Status::Ok();
    }
    case QosKey::kPreempt:
      q.preempt.clear();
      if (value.empty()) return Status::Ok();
      return AssignTo(q.preempt, Names(name, value));
    case QosKey::kPreemptMode:
      if (EqualsIgnoreCase(value, "cluster")) {  // sacctmgr's "use the cluster's mode"
        q.preempt_mode = core::PreemptMode::kOff;
        return Status::Ok();
      }
      return AssignTo(q.preempt_mode, ParsePreemptMode(value, "QOS:PreemptMode", ignored));
    case QosKey::kUsageFactor: {
      Result<double> f = ParseDecimal(value);
      if (!f.ok()) return InvalidValue(name, value, f.status().message());
      q.usage_factor = *f;
      return Status::Ok();
    }
    case QosKey::kMaxTresPerUser:
      return AssignTo(q.max_tres_per_user, Limits(name, value));
    case QosKey::kMaxTresPerAccount:
      return AssignTo(q.max_tres_per_account, Limits(name, value));
    case QosKey::kMaxTresPerJob:
      return AssignTo(q.max_tres_per_job, Limits(name, value));
    case QosKey::kMaxJobsPerUser:
      return AssignTo(q.max_jobs_per_user, JobCount(name, value));
    case QosKey::kMaxJobsPerAccount:
      return AssignTo(q.max_jobs_per_account, JobCount(name, value));
    case QosKey::kMaxWall: {
      Result<Duration> d = ParseConfigMinutes(value);
      if (!d.ok()) return InvalidValue(name, value, d.status().message());
      q.max_wall = *d;
      return Status::Ok();
    }
    case QosKey::kGraceTime:
      return Status::Ok();  // ApplyQos keeps it beside the QoS
    case QosKey::kIgnored:
      ignored.push_back("QOS:" + std::string(name));
      return Status::Ok();
  }
  return Status::Ok();
}

Status ApplyQos(const Pairs& pairs, ClusterConfig& config) {
  BERTH_ASSIGN_OR_RETURN(std::vector<std::string> names, Names("QOS", pairs[0].second));
  core::QosSpec q;
  std::vector<std::string> ignored;
  Duration grace = 0;
  for (size_t i = 1; i < pairs.size(); ++i) {
    const KeyName<QosKey>* k = FindKey(kQosKeys, pairs[i].first);
    if (k == nullptr) return Status::InvalidArgument("unknown key '" + pairs[i].first + "'");
    if (k->id == QosKey::kGraceTime) {  // kept beside the QoS: the controller's, not the core's
      Result<int64_t> n = ParseInteger(pairs[i].second, 0, 365LL * 24 * 3600);
      if (!n.ok()) return InvalidValue(k->name, pairs[i].second, n.status().message());
      grace = *n;
      continue;
    }
    BERTH_RETURN_IF_ERROR(ReadQosValue(k->id, k->name, pairs[i].second, q, ignored));
  }
  std::vector<core::QosSpec>& all = config.cluster.qos;
  BERTH_RETURN_IF_ERROR(CheckNewNames(names, all, "QoS"));
  for (const std::string& name : names) {
    q.name = name;
    all.push_back(q);
    if (grace > 0) config.qos_grace_s[name] = grace;
  }
  NoteIgnored(config, ignored);
  return Status::Ok();
}

Status ReadAccountValue(AccountKey key, std::string_view name, std::string_view value,
                        core::AccountSpec& a, std::vector<std::string>& ignored) {
  switch (key) {
    case AccountKey::kParent:
      if (value.empty()) return InvalidValue(name, value, "empty name");
      a.parent = std::string(value);
      return Status::Ok();
    case AccountKey::kFairshare:
      return AssignTo(a.shares, Shares(name, value));
    case AccountKey::kGrpTres:
      return AssignTo(a.grp_tres, Limits(name, value));
    case AccountKey::kGrpJobs:
      return AssignTo(a.grp_jobs, JobCount(name, value));
    case AccountKey::kIgnored:
      ignored.push_back("Account:" + std::string(name));
      return Status::Ok();
  }
  return Status::Ok();
}

Status ApplyAccount(const Pairs& pairs, ClusterConfig& config) {
  BERTH_ASSIGN_OR_RETURN(std::vector<std::string> names, Names("Account", pairs[0].second));
  core::AccountSpec a;
  std::vector<std::string> ignored;
  for (size_t i = 1; i < pairs.size(); ++i) {
    const KeyName<AccountKey>* k = FindKey(kAccountKeys, pairs[i].first);
    if (k == nullptr) return Status::InvalidArgument("unknown key '" + pairs[i].first + "'");
    BERTH_RETURN_IF_ERROR(ReadAccountValue(k->id, k->name, pairs[i].second, a, ignored));
  }
  std::vector<core::AccountSpec>& all = config.cluster.accounts;
  BERTH_RETURN_IF_ERROR(CheckNewNames(names, all, "account"));
  for (const std::string& name : names) {
    a.name = name;
    all.push_back(a);
  }
  NoteIgnored(config, ignored);
  return Status::Ok();
}

// What one User line says besides its names.
struct UserValues {
  std::vector<std::string> accounts;
  std::string default_account;  // "" = none named
  bool default_first = false;   // DefaultAccount=yes: the first account
  core::UserSpec spec;
};

Status ReadUserValue(UserKey key, std::string_view name, std::string_view value, UserValues& v,
                     std::vector<std::string>& ignored) {
  switch (key) {
    case UserKey::kAccount:
      return AssignTo(v.accounts, Names(name, value));
    case UserKey::kDefaultAccount: {
      if (value.empty()) return InvalidValue(name, value, "expected YES, NO or an account");
      Result<bool> yes = ParseBool(value);  // berth's YES/NO, else sacctmgr's account name
      v.default_first = yes.ok() && *yes;
      v.default_account = yes.ok() ? "" : std::string(value);
      return Status::Ok();
    }
    case UserKey::kFairshare:
      return AssignTo(v.spec.shares, Shares(name, value));
    case UserKey::kMaxJobs:
      return AssignTo(v.spec.max_jobs, JobCount(name, value));
    case UserKey::kMaxTres:
      return AssignTo(v.spec.max_tres_per_job, Limits(name, value));
    case UserKey::kIgnored:
      ignored.push_back("User:" + std::string(name));
      return Status::Ok();
  }
  return Status::Ok();
}

Status ApplyUser(const Pairs& pairs, ClusterConfig& config) {
  BERTH_ASSIGN_OR_RETURN(std::vector<std::string> names, Names("User", pairs[0].second));
  UserValues v;
  std::vector<std::string> ignored;
  for (size_t i = 1; i < pairs.size(); ++i) {
    const KeyName<UserKey>* k = FindKey(kUserKeys, pairs[i].first);
    if (k == nullptr) return Status::InvalidArgument("unknown key '" + pairs[i].first + "'");
    BERTH_RETURN_IF_ERROR(ReadUserValue(k->id, k->name, pairs[i].second, v, ignored));
  }
  std::vector<std::string>& accounts = v.accounts;
  if (!v.default_account.empty() &&
      std::find(accounts.begin(), accounts.end(), v.default_account) == accounts.end()) {
    accounts.push_back(v.default_account);
  }
  if (accounts.empty()) return Status::InvalidArgument("a User line needs Account=");
  if (v.default_first) v.default_account = accounts.front();
  std::vector<core::UserSpec> add;
  auto known = [](const std::vector<core::UserSpec>& list, const core::UserSpec& u) {
    return std::any_of(list.begin(), list.end(), [&](const core::UserSpec& have) {
      return have.name == u.name && have.account == u.account;
    });
  };
  for (const std::string& user : names) {
    for (const std::string& account : accounts) {
      core::UserSpec u = v.spec;
      u.name = user;
      u.account = account;
      u.is_default = account == v.default_account;
      if (known(config.cluster.users, u) || known(add, u)) {
        return Status::InvalidArgument("user '" + user + "' is in account '" + account + "' twice");
      }
      add.push_back(std::move(u));
    }
  }
  config.cluster.users.insert(config.cluster.users.end(), add.begin(), add.end());
  NoteIgnored(config, ignored);
  return Status::Ok();
}

}  // namespace

Status ApplyQosRecord(const Pairs& pairs, ClusterConfig& config) {
  return ApplyQos(pairs, config).WithContext("QOS=" + pairs[0].second);
}

Status ApplyAccountRecord(const Pairs& pairs, ClusterConfig& config) {
  return ApplyAccount(pairs, config).WithContext("Account=" + pairs[0].second);
}

Status ApplyUserRecord(const Pairs& pairs, ClusterConfig& config) {
  return ApplyUser(pairs, config).WithContext("User=" + pairs[0].second);
}

}  // namespace berth::config::internal
