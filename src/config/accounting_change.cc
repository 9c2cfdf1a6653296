#include "config/accounting_change.h"

#include <algorithm>
#include <set>

#include "common/strings.h"
#include "config/cluster_config_internal.h"
#include "config/tres_text.h"
#include "config/value_text.h"

namespace berth::config {
namespace {

using internal::FindKey;
using internal::KeyName;
using KeyValues = std::vector<std::pair<std::string, std::string>>;

std::string Lower(std::string_view s) {
  std::string out(s);
  for (char& c : out) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  return out;
}

// Slurm keeps account and QoS names in lower case.
Result<std::vector<std::string>> NameList(std::string_view key, std::string_view value,
                                          bool lower) {
  std::vector<std::string> out;
  for (std::string_view item : Split(value, ',')) {
    if (item.empty()) return InvalidValue(key, value, "empty name");
    for (char c : item) {
      if (!std::isalnum(static_cast<unsigned char>(c)) && c != '_' && c != '-' && c != '.' &&
          c != '@') {
        return InvalidValue(key, value, "a name holds letters, digits, '_', '-', '.' and '@'");
      }
    }
    std::string name = lower ? Lower(item) : std::string(item);
    if (std::find(out.begin(), out.end(), name) == out.end()) out.push_back(std::move(name));
  }
  return out;
}

bool Contains(const std::vector<std::string>& list, const std::string& s) {
  return std::find(list.begin(), list.end(), s) != list.end();
}

Result<int32_t> Count(std::string_view key, std::string_view value) {
  Result<int64_t> n = ParseInteger(value, -1, INT32_MAX);
  if (!n.ok()) return InvalidValue(key, value, n.status().message());
  return static_cast<int32_t>(*n);
}

// Fairshare=N; -1 restores the default (1). "parent" is not modelled.
Result<int32_t> Shares(std::string_view key, std::string_view value) {
  if (EqualsIgnoreCase(value, "parent")) {
    return InvalidValue(key, value, "Fairshare=parent is not supported by berth");
  }
  BERTH_ASSIGN_OR_RETURN(int32_t n, Count(key, value));
  return n < 0 ? 1 : n;
}

Status Tres(std::string_view key, std::string_view value, core::TresLimits& limits) {
  Status st = MergeTresLimits(value, limits);
  return st.ok() ? st : InvalidValue(key, value, Reason(st));
}

Status Unsupported(std::string_view key, std::string_view what) {
  return Status::InvalidArgument(std::string(key) + " is not supported by berth on " +
                                 std::string(what));
}

// ---- The where conditions.

struct Where {
  std::vector<std::string> names;
  std::vector<std::string> accounts;
  std::vector<std::string> users;
  std::vector<std::string> parents;
};

enum class WhereKey { kName, kAccount, kUser, kParent, kCluster };
constexpr KeyName<WhereKey> kWhereKeys[] = {
    {"Name", WhereKey::kName},       {"Names", WhereKey::kName},
    {"Account", WhereKey::kAccount}, {"Accounts", WhereKey::kAccount},
    {"Acct", WhereKey::kAccount},    {"User", WhereKey::kUser},
    {"Users", WhereKey::kUser},      {"Parent", WhereKey::kParent},
    {"Cluster", WhereKey::kCluster}, {"Clusters", WhereKey::kCluster},
};

Result<Where> ReadWhere(const AccountingChange& c) {
  Where w;
  for (const auto& [key, value] : c.where) {
    const KeyName<WhereKey>* k = FindKey(kWhereKeys, key);
    if (k == nullptr) return Status::InvalidArgument("Unknown condition: " + key);
    switch (k->id) {
      case WhereKey::kName: {
        bool lower = c.entity != AcctEntity::kUser;
        BERTH_ASSIGN_OR_RETURN(std::vector<std::string> n, NameList(k->name, value, lower));
        w.names.insert(w.names.end(), n.begin(), n.end());
        break;
      }
      case WhereKey::kAccount: {
        BERTH_ASSIGN_OR_RETURN(std::vector<std::string> n, NameList(k->name, value, true));
        w.accounts.insert(w.accounts.end(), n.begin(), n.end());
        break;
      }
      case WhereKey::kUser: {
        BERTH_ASSIGN_OR_RETURN(std::vector<std::string> n, NameList(k->name, value, false));
        w.users.insert(w.users.end(), n.begin(), n.end());
        break;
      }
      case WhereKey::kParent: {
        BERTH_ASSIGN_OR_RETURN(std::vector<std::string> n, NameList(k->name, value, true));
        w.parents.insert(w.parents.end(), n.begin(), n.end());
        break;
      }
      case WhereKey::kCluster:
        break;  // one cluster: every condition on it holds
    }
  }
  // For users, sacctmgr's Name= and User= are the same; for accounts, Name= and Account=.
  if (c.entity == AcctEntity::kUser) {
    w.users.insert(w.users.end(), w.names.begin(), w.names.end());
    w.names.clear();
  } else if (c.entity == AcctEntity::kAccount) {
    w.names.insert(w.names.end(), w.accounts.begin(), w.accounts.end());
    w.accounts.clear();
  }
  return w;
}

// ---- The settings of each entity.

enum class AcctKey { kParent, kFairshare, kGrpTres, kGrpJobs, kDescription, kUnsupported };
constexpr KeyName<AcctKey> kAccountKeys[] = {
    {"Parent", AcctKey::kParent},
    {"Fairshare", AcctKey::kFairshare},
    {"Shares", AcctKey::kFairshare},
    {"GrpTRES", AcctKey::kGrpTres},
    {"GrpJobs", AcctKey::kGrpJobs},
    {"Description", AcctKey::kDescription},
    {"Organization", AcctKey::kDescription},
    {"Cluster", AcctKey::kDescription},
    {"Clusters", AcctKey::kDescription},
    {"DefaultQOS", AcctKey::kUnsupported},
    {"GrpJobsAccrue", AcctKey::kUnsupported},
    {"GrpSubmitJobs", AcctKey::kUnsupported},
    {"GrpTRESMins", AcctKey::kUnsupported},
    {"GrpTRESRunMins", AcctKey::kUnsupported},
    {"GrpWall", AcctKey::kUnsupported},
    {"MaxJobs", AcctKey::kUnsupported},
    {"MaxSubmitJobs", AcctKey::kUnsupported},
    {"MaxTRES", AcctKey::kUnsupported},
    {"MaxTRESPerJob", AcctKey::kUnsupported},
    {"MaxTRESMins", AcctKey::kUnsupported},
    {"MaxTRESPerNode", AcctKey::kUnsupported},
    {"MaxWall", AcctKey::kUnsupported},
    {"Priority", AcctKey::kUnsupported},
    {"QOS", AcctKey::kUnsupported},
};

// Reads an account's settings onto `a`; Parent= is returned in `parent` ("" when absent).
Status ApplyAccountSettings(const KeyValues& set, core::AccountSpec& a, std::string& parent) {
  for (const auto& [key, value] : set) {
    const KeyName<AcctKey>* k = FindKey(kAccountKeys, key);
    if (k == nullptr) return Status::InvalidArgument("Unknown option: " + key);
    switch (k->id) {
      case AcctKey::kParent: {
        BERTH_ASSIGN_OR_RETURN(std::vector<std::string> p, NameList(k->name, value, true));
        if (p.size() != 1) return InvalidValue(k->name, value, "one account");
        parent = p[0];
        break;
      }
      case AcctKey::kFairshare:
        BERTH_RETURN_IF_ERROR(internal::AssignTo(a.shares, Shares(k->name, value)));
        break;
      case AcctKey::kGrpTres:
        BERTH_RETURN_IF_ERROR(Tres(k->name, value, a.grp_tres));
        break;
      case AcctKey::kGrpJobs:
        BERTH_RETURN_IF_ERROR(internal::AssignTo(a.grp_jobs, Count(k->name, value)));
        break;
      case AcctKey::kDescription:
        break;  // accepted and not kept
      case AcctKey::kUnsupported:
        return Unsupported(k->name, "accounts");
    }
  }
  return Status::Ok();
}

enum class UserKey {
  kAccount,
  kDefaultAccount,
  kAdminLevel,
  kFairshare,
  kMaxJobs,
  kMaxTres,
  kIgnored,
  kUnsupported
};
constexpr KeyName<UserKey> kUserKeys[] = {
    {"Account", UserKey::kAccount},
    {"Accounts", UserKey::kAccount},
    {"DefaultAccount", UserKey::kDefaultAccount},
    {"AdminLevel", UserKey::kAdminLevel},
    {"Fairshare", UserKey::kFairshare},
    {"Shares", UserKey::kFairshare},
    {"MaxJobs", UserKey::kMaxJobs},
    {"MaxTRES", UserKey::kMaxTres},
    {"MaxTRESPerJob", UserKey::kMaxTres},
    {"MaxTRESPJ", UserKey::kMaxTres},
    {"Cluster", UserKey::kIgnored},
    {"Clusters", UserKey::kIgnored},
    {"DefaultQOS", UserKey::kUnsupported},
    {"DefaultWCKey", UserKey::kUnsupported},
    {"GrpJobs", UserKey::kUnsupported},
    {"GrpTRES", UserKey::kUnsupported},
    {"GrpSubmitJobs", UserKey::kUnsupported},
    {"GrpWall", UserKey::kUnsupported},
    {"MaxSubmitJobs", UserKey::kUnsupported},
    {"MaxWall", UserKey::kUnsupported},
    {"Partition", UserKey::kUnsupported},
    {"Priority", UserKey::kUnsupported},
    {"QOS", UserKey::kUnsupported},
    {"WCKeys", UserKey::kUnsupported},
};

// A user line's settings: what goes on each association, and the user's own.
struct UserSettings {
  std::vector<std::string> accounts;  // Account= (add only)
  std::string default_account;
  std::string admin_level;
  KeyValues limits;  // Fairshare, MaxJobs, MaxTRES, applied per association
};

Result<UserSettings> ReadUserSettings(const KeyValues& set) {
  UserSettings s;
  for (const auto& [key, value] : set) {
    const KeyName<UserKey>* k = FindKey(kUserKeys, key);
    if (k == nullptr) return Status::InvalidArgument("Unknown option: " + key);
    switch (k->id) {
      case UserKey::kAccount: {
        BERTH_ASSIGN_OR_RETURN(std::vector<std::string> a, NameList(k->name, value, true));
        s.accounts.insert(s.accounts.end(), a.begin(), a.end());
        break;
      }
      case UserKey::kDefaultAccount: {
        BERTH_ASSIGN_OR_RETURN(std::vector<std::string> a, NameList(k->name, value, true));
        if (a.size() != 1) return InvalidValue(k->name, value, "one account");
        s.default_account = a[0];
        break;
      }
      case UserKey::kAdminLevel: {
        BERTH_ASSIGN_OR_RETURN(s.admin_level, ParseAdminLevel(value));
        break;
      }
      case UserKey::kFairshare:
      case UserKey::kMaxJobs:
      case UserKey::kMaxTres:
        s.limits.emplace_back(k->name, value);
        break;
      case UserKey::kIgnored:
        break;
      case UserKey::kUnsupported:
        return Unsupported(k->name, "users");
    }
  }
  return s;
}

Status ApplyAssocLimits(const KeyValues& limits, core::UserSpec& u) {
  for (const auto& [key, value] : limits) {
    if (key == "Fairshare") {
      BERTH_RETURN_IF_ERROR(internal::AssignTo(u.shares, Shares(key, value)));
    } else if (key == "MaxJobs") {
      BERTH_RETURN_IF_ERROR(internal::AssignTo(u.max_jobs, Count(key, value)));
    } else {
      BERTH_RETURN_IF_ERROR(Tres(key, value, u.max_tres_per_job));
    }
  }
  return Status::Ok();
}

enum class QosKey {
  kPriority,
  kPreempt,
  kPreemptAdd,
  kPreemptRemove,
  kPreemptMode,
  kUsageFactor,
  kMaxTresPerUser,
  kMaxTresPerAccount,
  kMaxTresPerJob,
  kMaxJobsPerUser,
  kMaxJobsPerAccount,
  kMaxWall,
  kDescription,
  kFlags,
  kUnsupported,
};
constexpr KeyName<QosKey> kQosKeys[] = {
    {"Priority", QosKey::kPriority},
    {"Preempt", QosKey::kPreempt},
    {"Preempt+", QosKey::kPreemptAdd},
    {"Preempt-", QosKey::kPreemptRemove},
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
    {"Description", QosKey::kDescription},
    {"Flags", QosKey::kFlags},
    {"GraceTime", QosKey::kUnsupported},
    {"GrpJobs", QosKey::kUnsupported},
    {"GrpSubmitJobs", QosKey::kUnsupported},
    {"GrpTRES", QosKey::kUnsupported},
    {"GrpTRESMins", QosKey::kUnsupported},
    {"GrpWall", QosKey::kUnsupported},
    {"MaxSubmitJobsPerUser", QosKey::kUnsupported},
    {"MaxSubmitJobsPU", QosKey::kUnsupported},
    {"MaxTRESPerNode", QosKey::kUnsupported},
    {"MaxTRESMinsPerJob", QosKey::kUnsupported},
    {"MinTRESPerJob", QosKey::kUnsupported},
    {"PreemptExemptTime", QosKey::kUnsupported},
    {"UsageThreshold", QosKey::kUnsupported},
};

Status ApplyQosSettings(const KeyValues& set, core::QosSpec& q) {
  for (const auto& [key, value] : set) {
    const KeyName<QosKey>* k = FindKey(kQosKeys, key);
    if (k == nullptr) return Status::InvalidArgument("Unknown option: " + key);
    switch (k->id) {
      case QosKey::kPriority: {
        Result<int64_t> n = ParseInteger(value, 0, INT32_MAX);
        if (!n.ok()) return InvalidValue(k->name, value, n.status().message());
        q.priority = static_cast<int32_t>(*n);
        break;
      }
      case QosKey::kPreempt: {
        q.preempt.clear();
        if (value.empty() || value == "''") break;
        BERTH_ASSIGN_OR_RETURN(q.preempt, NameList(k->name, value, true));
        break;
      }
      case QosKey::kPreemptAdd:
      case QosKey::kPreemptRemove: {
        BERTH_ASSIGN_OR_RETURN(std::vector<std::string> n, NameList("Preempt", value, true));
        for (const std::string& name : n) {
          auto it = std::find(q.preempt.begin(), q.preempt.end(), name);
          if (k->id == QosKey::kPreemptAdd && it == q.preempt.end()) q.preempt.push_back(name);
          if (k->id == QosKey::kPreemptRemove && it != q.preempt.end()) q.preempt.erase(it);
        }
        break;
      }
      case QosKey::kPreemptMode: {
        if (EqualsIgnoreCase(value, "cluster")) {
          q.preempt_mode = core::PreemptMode::kOff;
          break;
        }
        std::vector<std::string> ignored;
        BERTH_RETURN_IF_ERROR(internal::AssignTo(
            q.preempt_mode, internal::ParsePreemptMode(value, "PreemptMode", ignored)));
        if (!ignored.empty()) return InvalidValue(k->name, value, "only OFF, CANCEL or REQUEUE");
        break;
      }
      case QosKey::kUsageFactor: {
        Result<double> f = ParseDecimal(value);
        if (!f.ok()) return InvalidValue(k->name, value, f.status().message());
        q.usage_factor = *f;
        break;
      }
      case QosKey::kMaxTresPerUser:
        BERTH_RETURN_IF_ERROR(Tres(k->name, value, q.max_tres_per_user));
        break;
      case QosKey::kMaxTresPerAccount:
        BERTH_RETURN_IF_ERROR(Tres(k->name, value, q.max_tres_per_account));
        break;
      case QosKey::kMaxTresPerJob:
        BERTH_RETURN_IF_ERROR(Tres(k->name, value, q.max_tres_per_job));
        break;
      case QosKey::kMaxJobsPerUser:
        BERTH_RETURN_IF_ERROR(internal::AssignTo(q.max_jobs_per_user, Count(k->name, value)));
        break;
      case QosKey::kMaxJobsPerAccount:
        BERTH_RETURN_IF_ERROR(internal::AssignTo(q.max_jobs_per_account, Count(k->name, value)));
        break;
      case QosKey::kMaxWall: {
        Result<Duration> d = ParseConfigMinutes(value);
        if (!d.ok()) return InvalidValue(k->name, value, d.status().message());
        q.max_wall = *d;
        break;
      }
      case QosKey::kDescription:
        break;  // accepted and not kept
      case QosKey::kFlags:
        if (!value.empty() && value != "-1" && !EqualsIgnoreCase(value, "none")) {
          return InvalidValue(k->name, value, "berth supports no QoS flags");
        }
        break;
      case QosKey::kUnsupported:
        return Unsupported(k->name, "QoS");
    }
  }
  return Status::Ok();
}

// ---- The verbs.

// sacctmgr's names are lower-cased; one that names an account or QoS of the file written with
// capitals ("Physics") means that one.
std::string Canonical(const AccountingTables& t, const std::string& name, bool qos) {
  if (qos) {
    for (const core::QosSpec& q : t.qos) {
      if (EqualsIgnoreCase(q.name, name)) return q.name;
    }
  } else {
    for (const core::AccountSpec& a : t.accounts) {
      if (EqualsIgnoreCase(a.name, name)) return a.name;
    }
  }
  return name;
}

void Canonicalize(const AccountingTables& t, std::vector<std::string>& names, bool qos) {
  for (std::string& n : names) n = Canonical(t, n, qos);
}

bool AccountExists(const AccountingTables& t, const std::string& name) {
  return name == core::kRootAccount ||
         std::any_of(t.accounts.begin(), t.accounts.end(),
                     [&](const core::AccountSpec& a) { return a.name == name; });
}

// Whether `account` is `ancestor` or below it.
bool IsUnder(const AccountingTables& t, std::string account, const std::string& ancestor) {
  for (size_t guard = 0; guard <= t.accounts.size() + 1; ++guard) {
    if (account == ancestor) return true;
    if (account == core::kRootAccount) return false;
    const core::AccountSpec* a = nullptr;
    for (const core::AccountSpec& x : t.accounts) {
      if (x.name == account) a = &x;
    }
    if (a == nullptr) return false;
    account = a->parent.empty() ? core::kRootAccount : a->parent;
  }
  return false;
}

Status NeedNames(const Where& w, std::string_view what) {
  if (w.names.empty() && w.users.empty()) {
    return Status::InvalidArgument("Need name of " + std::string(what) + " to add.");
  }
  return Status::Ok();
}

Result<AccountingOutcome> AddAccounts(const AccountingTables& in, const Where& w,
                                      const KeyValues& set) {
  BERTH_RETURN_IF_ERROR(NeedNames(w, "account"));
  AccountingOutcome out{in, {}, {}, {}};
  core::AccountSpec spec;
  std::string parent;
  BERTH_RETURN_IF_ERROR(ApplyAccountSettings(set, spec, parent));
  spec.parent = parent.empty() ? core::kRootAccount : Canonical(in, parent, false);
  if (!AccountExists(in, spec.parent)) {
    return Status::NotFound("Parent account '" + spec.parent + "' doesn't exist");
  }
  for (const std::string& name : w.names) {
    if (AccountExists(in, name)) continue;
    spec.name = name;
    out.tables.accounts.push_back(spec);
    out.names.push_back(name);
    out.assocs.emplace_back(name, "");
  }
  if (out.names.empty()) return Status::AlreadyExists("Nothing new added.");
  return out;
}

Result<AccountingOutcome> AddUsers(const AccountingTables& in, const Where& w,
                                   const KeyValues& set) {
  BERTH_RETURN_IF_ERROR(NeedNames(w, "user"));
  BERTH_ASSIGN_OR_RETURN(UserSettings s, ReadUserSettings(set));
  if (!s.default_account.empty() && !Contains(s.accounts, s.default_account)) {
    s.accounts.insert(s.accounts.begin(), s.default_account);
  }
  if (s.accounts.empty()) {
    return Status::InvalidArgument("Need a default account for these users to add.");
  }
  Canonicalize(in, s.accounts, false);
  if (!s.default_account.empty()) s.default_account = Canonical(in, s.default_account, false);
  for (const std::string& a : s.accounts) {
    if (!AccountExists(in, a)) return Status::NotFound("This account '" + a + "' doesn't exist.");
  }
  core::UserSpec limits;
  BERTH_RETURN_IF_ERROR(ApplyAssocLimits(s.limits, limits));
  AccountingOutcome out{in, {}, {}, {}};
  for (const std::string& user : w.users) {
    bool had_any = std::any_of(in.users.begin(), in.users.end(),
                               [&](const core::UserSpec& u) { return u.name == user; });
    const std::string& default_account =
        s.default_account.empty() ? s.accounts.front() : s.default_account;
    bool added = false;
    for (const std::string& account : s.accounts) {
      bool exists = std::any_of(in.users.begin(), in.users.end(), [&](const core::UserSpec& u) {
        return u.name == user && u.account == account;
      });
      if (exists) continue;
      core::UserSpec u = limits;
      u.name = user;
      u.account = account;
      u.is_default = !had_any && account == default_account;
      out.tables.users.push_back(u);
      out.assocs.emplace_back(account, user);
      added = true;
    }
    if (!s.admin_level.empty() && (added || !had_any)) {
      if (s.admin_level == "None") {
        out.tables.admin_levels.erase(user);
      } else {
        out.tables.admin_levels[user] = s.admin_level;
      }
    }
    if (added) out.names.push_back(user);
  }
  if (out.names.empty()) return Status::AlreadyExists("Nothing new added.");
  return out;
}

Result<AccountingOutcome> AddQos(const AccountingTables& in, const Where& w, const KeyValues& set) {
  BERTH_RETURN_IF_ERROR(NeedNames(w, "QOS"));
  core::QosSpec spec;
  BERTH_RETURN_IF_ERROR(ApplyQosSettings(set, spec));
  AccountingOutcome out{in, {}, {}, {}};
  for (const std::string& name : w.names) {
    bool exists = name == core::kDefaultQos ||
                  std::any_of(in.qos.begin(), in.qos.end(),
                              [&](const core::QosSpec& q) { return q.name == name; });
    if (exists) continue;
    spec.name = name;
    out.tables.qos.push_back(spec);
    out.names.push_back(name);
  }
  if (out.names.empty()) return Status::AlreadyExists("Nothing new added.");
  return out;
}

bool Selects(const std::vector<std::string>& list, const std::string& value) {
  return list.empty() || Contains(list, value);
}

Result<AccountingOutcome> ModifyAccounts(const AccountingTables& in, const Where& w,
                                         const KeyValues& set) {
  AccountingOutcome out{in, {}, {}, {}};
  for (core::AccountSpec& a : out.tables.accounts) {
    if (!Selects(w.names, a.name) || !Selects(w.parents, a.parent)) continue;
    std::string parent;
    BERTH_RETURN_IF_ERROR(ApplyAccountSettings(set, a, parent));
    if (!parent.empty()) {
      parent = Canonical(in, parent, false);
      if (!AccountExists(in, parent)) {
        return Status::NotFound("Parent account '" + parent + "' doesn't exist");
      }
      if (IsUnder(in, parent, a.name)) {
        return Status::InvalidArgument("Account '" + a.name + "' can't be its own ancestor ('" +
                                       parent + "' is under it)");
      }
      a.parent = parent;
    }
    out.names.push_back(a.name);
    out.assocs.emplace_back(a.name, "");
  }
  if (out.names.empty()) return Status::NotFound("Nothing modified");
  return out;
}

Result<AccountingOutcome> ModifyUsers(const AccountingTables& in, const Where& w,
                                      const KeyValues& set) {
  BERTH_ASSIGN_OR_RETURN(UserSettings s, ReadUserSettings(set));
  if (!s.accounts.empty()) {
    return Status::InvalidArgument(
        "Account= can't be set on users: add the user to the account instead");
  }
  if (!s.default_account.empty()) s.default_account = Canonical(in, s.default_account, false);
  AccountingOutcome out{in, {}, {}, {}};
  std::set<std::string> matched;
  for (core::UserSpec& u : out.tables.users) {
    if (!Selects(w.users, u.name) || !Selects(w.accounts, u.account)) continue;
    matched.insert(u.name);
    if (s.limits.empty()) continue;
    BERTH_RETURN_IF_ERROR(ApplyAssocLimits(s.limits, u));
    out.assocs.emplace_back(u.account, u.name);
  }
  for (const std::string& user : matched) {
    bool changed = false;
    if (!s.default_account.empty()) {
      bool member = std::any_of(in.users.begin(), in.users.end(), [&](const core::UserSpec& u) {
        return u.name == user && u.account == s.default_account;
      });
      if (!member) {
        return Status::FailedPrecondition("User '" + user + "' has no association with account '" +
                                          s.default_account + "'");
      }
      for (core::UserSpec& u : out.tables.users) {
        if (u.name == user) u.is_default = u.account == s.default_account;
      }
      changed = true;
    }
    if (!s.admin_level.empty()) {
      if (s.admin_level == "None") {
        out.tables.admin_levels.erase(user);
      } else {
        out.tables.admin_levels[user] = s.admin_level;
      }
      changed = true;
    }
    if (changed) out.users.push_back(user);
    out.names.push_back(user);
  }
  if (matched.empty()) return Status::NotFound("Nothing modified");
  return out;
}

Result<AccountingOutcome> ModifyQos(const AccountingTables& in, const Where& w,
                                    const KeyValues& set) {
  AccountingOutcome out{in, {}, {}, {}};
  bool has_normal = std::any_of(in.qos.begin(), in.qos.end(),
                                [](const core::QosSpec& q) { return q.name == core::kDefaultQos; });
  if (!has_normal && Selects(w.names, core::kDefaultQos)) {  // the implicit "normal", made real
    core::QosSpec normal;
    normal.name = core::kDefaultQos;
    out.tables.qos.insert(out.tables.qos.begin(), normal);
  }
  for (core::QosSpec& q : out.tables.qos) {
    if (!Selects(w.names, q.name)) continue;
    BERTH_RETURN_IF_ERROR(ApplyQosSettings(set, q));
    out.names.push_back(q.name);
  }
  if (out.names.empty()) return Status::NotFound("Nothing modified");
  return out;
}

// modify association where account=A [user=U] set ...: an account's own settings without
// user=, the users' associations with it.
Result<AccountingOutcome> ModifyAssociations(const AccountingTables& in, const Where& w,
                                             const KeyValues& set) {
  if (w.users.empty()) {
    Where aw = w;
    aw.names.insert(aw.names.end(), w.accounts.begin(), w.accounts.end());
    aw.accounts.clear();
    return ModifyAccounts(in, aw, set);
  }
  for (const auto& [key, value] : set) {
    const KeyName<UserKey>* k = FindKey(kUserKeys, key);
    if (k != nullptr && (k->id == UserKey::kDefaultAccount || k->id == UserKey::kAdminLevel)) {
      return Status::InvalidArgument(key + " is a user's setting: modify user instead");
    }
  }
  return ModifyUsers(in, w, set);
}

Result<AccountingOutcome> DeleteAccounts(const AccountingTables& in, const Where& w) {
  AccountingOutcome out{in, {}, {}, {}};
  std::vector<std::string> gone;
  for (const core::AccountSpec& a : in.accounts) {
    if (Selects(w.names, a.name) && Selects(w.parents, a.parent) &&
        !(w.names.empty() && w.parents.empty())) {
      gone.push_back(a.name);
    }
  }
  if (Contains(w.names, core::kRootAccount)) {
    return Status::FailedPrecondition("The root account can't be deleted");
  }
  if (gone.empty()) return Status::NotFound("Nothing deleted");
  for (const std::string& name : gone) {
    for (const core::AccountSpec& a : in.accounts) {
      if (a.parent == name && !Contains(gone, a.name)) {
        return Status::FailedPrecondition("Account '" + name + "' has sub-accounts ('" + a.name +
                                          "'): delete or move them first");
      }
    }
    for (const core::UserSpec& u : in.users) {
      if (u.account == name) {
        return Status::FailedPrecondition("Account '" + name + "' has users ('" + u.name +
                                          "'): delete their associations first");
      }
    }
  }
  std::erase_if(out.tables.accounts,
                [&](const core::AccountSpec& a) { return Contains(gone, a.name); });
  out.names = gone;
  for (const std::string& name : gone) out.assocs.emplace_back(name, "");
  return out;
}

Result<AccountingOutcome> DeleteUsers(const AccountingTables& in, const Where& w) {
  if (w.users.empty()) return Status::InvalidArgument("Need name of user to delete.");
  AccountingOutcome out{in, {}, {}, {}};
  std::set<std::string> touched;
  std::erase_if(out.tables.users, [&](const core::UserSpec& u) {
    if (!Contains(w.users, u.name) || !Selects(w.accounts, u.account)) return false;
    out.assocs.emplace_back(u.account, u.name);
    touched.insert(u.name);
    return true;
  });
  if (touched.empty()) return Status::NotFound("Nothing deleted");
  for (const std::string& user : touched) {
    bool any = false, has_default = false;
    for (const core::UserSpec& u : out.tables.users) {
      if (u.name != user) continue;
      any = true;
      has_default = has_default || u.is_default;
    }
    if (!any) {
      out.tables.admin_levels.erase(user);
      out.names.push_back(user);
    } else if (!has_default) {  // its default account went: the first one left takes over
      for (core::UserSpec& u : out.tables.users) {
        if (u.name == user) {
          u.is_default = true;
          break;
        }
      }
    }
  }
  return out;
}

Result<AccountingOutcome> DeleteQos(const AccountingTables& in, const Where& w) {
  if (w.names.empty()) return Status::InvalidArgument("Need name of QOS to delete.");
  if (Contains(w.names, core::kDefaultQos)) {
    return Status::FailedPrecondition("The default QOS 'normal' can't be deleted");
  }
  AccountingOutcome out{in, {}, {}, {}};
  std::erase_if(out.tables.qos, [&](const core::QosSpec& q) {
    if (!Contains(w.names, q.name)) return false;
    out.names.push_back(q.name);
    return true;
  });
  if (out.names.empty()) return Status::NotFound("Nothing deleted");
  for (core::QosSpec& q : out.tables.qos) {  // as Slurm: others stop preempting it
    std::erase_if(q.preempt, [&](const std::string& p) { return Contains(out.names, p); });
  }
  return out;
}

}  // namespace

Result<std::string> ParseAdminLevel(std::string_view text) {
  if (EqualsIgnoreCase(text, "administrator") || EqualsIgnoreCase(text, "admin")) {
    return std::string("Administrator");
  }
  if (EqualsIgnoreCase(text, "operator") || EqualsIgnoreCase(text, "oper")) {
    return std::string("Operator");
  }
  if (EqualsIgnoreCase(text, "none")) return std::string("None");
  return InvalidValue("AdminLevel", text, "expected Administrator, Operator or None");
}

Result<AccountingOutcome> ApplyAccountingChange(const AccountingTables& tables,
                                                const AccountingChange& change) {
  BERTH_ASSIGN_OR_RETURN(Where w, ReadWhere(change));
  Canonicalize(tables, w.names, change.entity == AcctEntity::kQos);
  Canonicalize(tables, w.accounts, false);
  Canonicalize(tables, w.parents, false);
  switch (change.verb) {
    case AcctVerb::kAdd:
      switch (change.entity) {
        case AcctEntity::kAccount:
          return AddAccounts(tables, w, change.set);
        case AcctEntity::kUser:
          return AddUsers(tables, w, change.set);
        case AcctEntity::kQos:
          return AddQos(tables, w, change.set);
        case AcctEntity::kAssociation:
          return Status::InvalidArgument(
              "Associations are added with 'add user NAME account=A' or 'add account NAME'");
      }
      break;
    case AcctVerb::kModify:
      if (change.set.empty()) return Status::InvalidArgument("Nothing to set");
      switch (change.entity) {
        case AcctEntity::kAccount:
          return ModifyAccounts(tables, w, change.set);
        case AcctEntity::kUser:
          return ModifyUsers(tables, w, change.set);
        case AcctEntity::kQos:
          return ModifyQos(tables, w, change.set);
        case AcctEntity::kAssociation:
          return ModifyAssociations(tables, w, change.set);
      }
      break;
    case AcctVerb::kDelete:
      switch (change.entity) {
        case AcctEntity::kAccount:
          return DeleteAccounts(tables, w);
        case AcctEntity::kUser:
          return DeleteUsers(tables, w);
        case AcctEntity::kQos:
          return DeleteQos(tables, w);
        case AcctEntity::kAssociation:
          return Status::InvalidArgument(
              "Associations are deleted with 'delete user NAME account=A' or 'delete account'");
      }
      break;
  }
  return Status::InvalidArgument("unknown sacctmgr request");
}

AccountingTables TablesOf(const std::vector<core::QosSpec>& qos,
                          const std::vector<core::AccountSpec>& accounts,
                          const std::vector<core::UserSpec>& users) {
  AccountingTables t;
  t.qos = qos;
  t.accounts = accounts;
  t.users = users;
  // The file's rule (a user's first association is the default unless one says otherwise) made
  // explicit, so that it survives the store's order.
  for (core::UserSpec& u : t.users) {
    bool has_default = std::any_of(t.users.begin(), t.users.end(), [&](const core::UserSpec& o) {
      return o.name == u.name && o.is_default;
    });
    if (!has_default) u.is_default = true;
  }
  return t;
}

namespace {

template <typename Spec, typename KeyOf>
void Compare(std::string_view what, const std::vector<Spec>& config, const std::vector<Spec>& db,
             KeyOf key, std::vector<std::string>& out) {
  for (const Spec& c : config) {
    auto it = std::find_if(db.begin(), db.end(), [&](const Spec& d) { return key(d) == key(c); });
    if (it == db.end()) {
      out.push_back(std::string(what) + " '" + key(c) + "' only in the configuration");
    } else if (!(*it == c)) {
      out.push_back(std::string(what) + " '" + key(c) +
                    "' differs between the configuration and the database");
    }
  }
  for (const Spec& d : db) {
    if (std::none_of(config.begin(), config.end(),
                     [&](const Spec& c) { return key(d) == key(c); })) {
      out.push_back(std::string(what) + " '" + key(d) + "' only in the database");
    }
  }
}

}  // namespace

std::vector<std::string> DescribeDifferences(const AccountingTables& config,
                                             const AccountingTables& db) {
  std::vector<std::string> out;
  Compare(
      "QoS", config.qos, db.qos, [](const core::QosSpec& q) { return q.name; }, out);
  Compare(
      "account", config.accounts, db.accounts, [](const core::AccountSpec& a) { return a.name; },
      out);
  Compare(
      "user association", config.users, db.users,
      [](const core::UserSpec& u) { return u.name + "/" + u.account; }, out);
  return out;
}

}  // namespace berth::config
