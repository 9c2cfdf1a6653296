// ClusterState: accounts, users' associations and QoS replaced live (sacctmgr). Ids never move:
// jobs, counters and the scheduler's tables refer to them, so an entry that goes is marked
// removed and taken out of the tree, and one that comes back by name takes its old id again.
#include <algorithm>
#include <set>

#include "core/state/cluster_state.h"

namespace berth::core {
namespace {

std::string ParentName(const AccountSpec& a) {
  return a.parent.empty() ? std::string(kRootAccount) : a.parent;
}

const AccountSpec* FindSpec(const std::vector<AccountSpec>& accounts, std::string_view name) {
  for (const AccountSpec& a : accounts) {
    if (a.name == name) return &a;
  }
  return nullptr;
}

bool HasQos(const std::vector<QosSpec>& qos, std::string_view name) {
  return name == kDefaultQos ||
         std::any_of(qos.begin(), qos.end(), [&](const QosSpec& q) { return q.name == name; });
}

Status InUse(std::string_view what, std::string_view name, JobId job) {
  return Status::FailedPrecondition(
      "Job(s) active, cancel job(s) before remove: " + std::string(what) + " '" +
      std::string(name) + "' is used by job " + std::to_string(job));
}

}  // namespace

Status ClusterState::CheckAccounting(const std::vector<QosSpec>& qos,
                                     const std::vector<AccountSpec>& accounts,
                                     const std::vector<UserSpec>& users) const {
  std::set<std::string> names;
  for (const QosSpec& q : qos) {
    if (!names.insert(q.name).second) {
      return Status::InvalidArgument("QoS '" + q.name + "' defined twice");
    }
    for (const std::string& p : q.preempt) {
      if (!HasQos(qos, p)) {
        return Status::InvalidArgument("QoS '" + q.name + "' preempts unknown QoS '" + p + "'");
      }
    }
  }
  names.clear();
  for (const AccountSpec& a : accounts) {
    if (a.name == kRootAccount) continue;
    if (!names.insert(a.name).second) {
      return Status::InvalidArgument("account '" + a.name + "' defined twice");
    }
    if (a.shares < 0) return Status::InvalidArgument("account '" + a.name + "': shares < 0");
    // Walk up: every ancestor must exist, and the walk must reach root (no cycle).
    std::string at = ParentName(a);
    for (size_t steps = 0; at != kRootAccount; ++steps) {
      const AccountSpec* up = FindSpec(accounts, at);
      if (up == nullptr) {
        return Status::InvalidArgument("account '" + a.name + "' has unknown parent '" + at + "'");
      }
      if (steps > accounts.size()) {
        return Status::InvalidArgument("account '" + a.name + "': its parents form a cycle");
      }
      at = ParentName(*up);
    }
  }
  std::set<std::pair<std::string, std::string>> pairs;
  for (const UserSpec& u : users) {
    if (u.account != kRootAccount && FindSpec(accounts, u.account) == nullptr) {
      return Status::InvalidArgument("user '" + u.name + "' is in unknown account '" + u.account +
                                     "'");
    }
    if (!pairs.emplace(u.name, u.account).second) {
      return Status::InvalidArgument("user '" + u.name + "' is in account '" + u.account +
                                     "' twice");
    }
  }
  // What goes must be unused.
  for (const QosInfo& q : qos_) {
    if (q.removed || HasQos(qos, q.spec.name)) continue;
    for (const auto& [id, e] : jobs_) {
      if (e.qos == q.index) return InUse("QOS", q.spec.name, id);
    }
    for (const PartitionInfo& p : partitions_) {
      if (std::find(p.allow_qos.begin(), p.allow_qos.end(), q.index) != p.allow_qos.end()) {
        return Status::FailedPrecondition("QOS '" + q.spec.name + "' is allowed by partition " +
                                          p.spec.name + " (AllowQos)");
      }
    }
  }
  for (const AccountInfo& a : accounts_) {
    if (a.removed || a.implicit || a.index == 0 || FindSpec(accounts, a.spec.name)) continue;
    for (const auto& [id, e] : jobs_) {
      if (e.account == a.index) return InUse("account", a.spec.name, id);
    }
    for (int32_t as : a.assocs) {
      if (assocs_[as].implicit) {
        return Status::FailedPrecondition("account '" + a.spec.name + "' has user '" +
                                          user_names_[assocs_[as].user] + "'");
      }
    }
    for (int32_t c : a.children) {
      if (accounts_[c].implicit) {
        return Status::FailedPrecondition("account '" + a.spec.name + "' has sub-account '" +
                                          accounts_[c].spec.name + "'");
      }
    }
    for (const PartitionInfo& p : partitions_) {
      auto& allowed = p.allow_accounts;
      if (std::find(allowed.begin(), allowed.end(), a.index) != allowed.end()) {
        return Status::FailedPrecondition("account '" + a.spec.name + "' is allowed by partition " +
                                          p.spec.name + " (AllowAccounts)");
      }
    }
  }
  for (const AssocInfo& as : assocs_) {
    if (as.removed || as.implicit) continue;
    const std::string& user = user_names_[as.user];
    const std::string& account = accounts_[as.account].spec.name;
    if (pairs.contains({user, account})) continue;
    for (const auto& [id, e] : jobs_) {
      if (e.assoc == as.index) return InUse("association " + account + "/", user, id);
    }
  }
  return Status::Ok();
}

Status ClusterState::SetAccounting(const std::vector<QosSpec>& qos,
                                   const std::vector<AccountSpec>& accounts,
                                   const std::vector<UserSpec>& users) {
  BERTH_RETURN_IF_ERROR(CheckAccounting(qos, accounts, users));
  ApplyQosTable(qos);
  ApplyAccountTable(accounts);
  ApplyUserTable(users);
  spec_.qos = qos;
  spec_.accounts = accounts;
  spec_.users = users;
  return Status::Ok();
}

void ClusterState::ApplyQosTable(const std::vector<QosSpec>& qos) {
  std::vector<QosSpec> all = qos;
  if (!std::any_of(all.begin(), all.end(),
                   [](const QosSpec& q) { return q.name == kDefaultQos; })) {
    QosSpec normal;
    normal.name = kDefaultQos;
    all.insert(all.begin(), normal);
  }
  for (QosInfo& q : qos_) {
    if (!q.removed && !HasQos(all, q.spec.name)) {
      q.removed = true;
      q.spec.priority = 0;  // out of the priority factor's normalisation
      q.preempt.clear();
    }
  }
  for (const QosSpec& spec : all) {
    auto it = std::find_if(qos_.begin(), qos_.end(),
                           [&](const QosInfo& q) { return q.spec.name == spec.name; });
    if (it == qos_.end()) {
      QosInfo info;
      info.index = static_cast<int16_t>(qos_.size());
      qos_.push_back(std::move(info));
      it = qos_.end() - 1;
    }
    it->spec = spec;
    it->removed = false;
  }
  for (QosInfo& q : qos_) {
    q.preempt.clear();
    if (q.removed) continue;
    for (const std::string& p : q.spec.preempt) q.preempt.push_back(*FindQos(p));
  }
}

void ClusterState::MoveAccount(int32_t account, int32_t parent) {
  AccountInfo& a = accounts_[account];
  if (a.parent == parent) return;
  if (a.parent >= 0) {
    std::erase(accounts_[a.parent].children, account);
    for (int32_t up = a.parent; up >= 0; up = accounts_[up].parent) {
      accounts_[up].running.Add(a.running, -1);
    }
  }
  a.parent = parent;
  if (parent >= 0) {
    accounts_[parent].children.push_back(account);
    for (int32_t up = parent; up >= 0; up = accounts_[up].parent) {
      accounts_[up].running.Add(a.running, +1);
    }
  }
}

void ClusterState::ApplyAccountTable(const std::vector<AccountSpec>& accounts) {
  AccountSpec root;
  root.name = kRootAccount;
  root.parent.clear();
  if (const AccountSpec* r = FindSpec(accounts, kRootAccount)) {
    root.grp_tres = r->grp_tres;
    root.grp_jobs = r->grp_jobs;
  }
  accounts_[0].spec = root;
  for (AccountInfo& a : accounts_) {
    if (a.index == 0 || a.removed || a.implicit || FindSpec(accounts, a.spec.name)) continue;
    MoveAccount(a.index, -1);
    a.removed = true;
  }
  // Every account in the table gets its id (an old one when its name had one), then its parent.
  for (const AccountSpec& spec : accounts) {
    if (spec.name == kRootAccount) continue;
    auto it = std::find_if(accounts_.begin(), accounts_.end(),
                           [&](const AccountInfo& a) { return a.spec.name == spec.name; });
    if (it == accounts_.end()) {
      AccountInfo info;
      info.index = static_cast<int32_t>(accounts_.size());
      info.parent = -1;
      accounts_.push_back(std::move(info));
      it = accounts_.end() - 1;
    }
    it->spec = spec;
    it->implicit = false;
    it->removed = false;
  }
  for (const AccountSpec& spec : accounts) {
    if (spec.name == kRootAccount) continue;
    MoveAccount(*FindAccount(spec.name), *FindAccount(ParentName(spec)));
  }
}

void ClusterState::ApplyUserTable(const std::vector<UserSpec>& users) {
  for (AssocInfo& as : assocs_) {
    if (as.removed || as.implicit) continue;
    const std::string& user = user_names_[as.user];
    const std::string& account = accounts_[as.account].spec.name;
    bool stays = std::any_of(users.begin(), users.end(), [&](const UserSpec& u) {
      return u.name == user && u.account == account && !accounts_[as.account].removed;
    });
    if (stays) continue;
    as.removed = true;
    as.usage = {};
    std::erase(accounts_[as.account].assocs, as.index);
  }
  for (const UserSpec& u : users) {
    int32_t user = InternUser(u.name);
    int32_t account = *FindAccount(u.account);
    auto it = std::find_if(assocs_.begin(), assocs_.end(), [&](const AssocInfo& as) {
      return as.user == user && as.account == account;
    });
    if (it == assocs_.end()) {
      AssocInfo info;
      info.index = static_cast<int32_t>(assocs_.size());
      info.account = account;
      info.user = user;
      info.removed = true;  // joins its account's list below
      assocs_.push_back(std::move(info));
      it = assocs_.end() - 1;
    }
    if (it->removed) accounts_[account].assocs.push_back(it->index);
    it->spec = u;
    it->implicit = false;
    it->removed = false;
  }
  std::fill(default_assoc_of_user_.begin(), default_assoc_of_user_.end(), -1);
  for (const AssocInfo& as : assocs_) {
    if (as.removed) continue;
    if (as.spec.is_default || default_assoc_of_user_[as.user] < 0) {
      default_assoc_of_user_[as.user] = as.index;
    }
  }
}

}  // namespace berth::core
