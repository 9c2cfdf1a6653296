// Accounts, users' associations and QoS as sacctmgr changes them: the tables the controller keeps
// in its store (seeded from the cluster file's Account=, User= and QOS= records), and one
// sacctmgr request (add, modify or delete; account, user, qos or association; its where and set
// key=value pairs with sacctmgr's names) applied to them.
//
// Thread safety: all functions are pure.
#ifndef BERTH_CONFIG_ACCOUNTING_CHANGE_H_
#define BERTH_CONFIG_ACCOUNTING_CHANGE_H_

#include <map>
#include <string>
#include <utility>
#include <vector>

#include "common/status.h"
#include "core/model/account.h"

namespace berth::config {

// What sacctmgr keeps: the QoS, the accounts (not "root", which is implicit unless it carries
// limits), the users' associations with accounts, and users' admin levels.
struct AccountingTables {
  std::vector<core::QosSpec> qos;
  std::vector<core::AccountSpec> accounts;
  std::vector<core::UserSpec> users;
  std::map<std::string, std::string> admin_levels;  // user -> "Operator" | "Administrator"
  friend bool operator==(const AccountingTables&, const AccountingTables&) = default;
};

enum class AcctVerb { kAdd, kModify, kDelete };
enum class AcctEntity { kAccount, kUser, kQos, kAssociation };

// One sacctmgr request. For add, the names are `where`'s Name= and the rest is in `set`.
struct AccountingChange {
  AcctVerb verb = AcctVerb::kAdd;
  AcctEntity entity = AcctEntity::kAccount;
  std::vector<std::pair<std::string, std::string>> where;  // Name=, Account=, User=, Parent=
  std::vector<std::pair<std::string, std::string>> set;
};

// What a change did, for sacctmgr's messages: the entities created, changed or deleted (accounts
// and QoS by name; associations as (account, user), user "" for an account's own), and the users
// whose own settings (default account, admin level) changed.
struct AccountingOutcome {
  AccountingTables tables;
  std::vector<std::string> names;                           // accounts, QoS or users
  std::vector<std::pair<std::string, std::string>> assocs;  // (account, user)
  std::vector<std::string> users;                           // users whose settings changed
};

// Applies `change` to `tables`. Errors (nothing applied): kInvalidArgument for an unknown or
// unsupported key or a bad value ("Unknown option: X", "invalid GrpJobs value 'x': ..."),
// kNotFound when nothing matches ("Nothing modified", "Nothing deleted", "This account 'x'
// doesn't exist"), kAlreadyExists when an add adds nothing ("Nothing new added"),
// kFailedPrecondition when a delete would leave users or sub-accounts without their account.
Result<AccountingOutcome> ApplyAccountingChange(const AccountingTables& tables,
                                                const AccountingChange& change);

// The tables of a cluster file's records (what seeds the store on the first start); a user with
// no default association gets its first one as the default, as the file reads.
AccountingTables TablesOf(const std::vector<core::QosSpec>& qos,
                          const std::vector<core::AccountSpec>& accounts,
                          const std::vector<core::UserSpec>& users);

// How `config` differs from `db`, one line per entity ("account 'x' only in the configuration",
// "QoS 'y' differs"); empty when they agree.
std::vector<std::string> DescribeDifferences(const AccountingTables& config,
                                             const AccountingTables& db);

// "Administrator", "Operator" or "None" for sacctmgr's AdminLevel= (any case, and its short
// forms "admin", "oper"); an error otherwise.
Result<std::string> ParseAdminLevel(std::string_view text);

}  // namespace berth::config

#endif  // BERTH_CONFIG_ACCOUNTING_CHANGE_H_
