// Accounts, users' associations and QoS in the controller's store (sacctmgr's database): one
// meta row per entity, JSON (api/accounting_json.h), under the keys
//   acct/NAME  qos/NAME  assoc/USER/ACCOUNT  admin/USER (the admin level)
// and "acctdb", written once when the configuration file's records seeded them (the first start).
// From then on the store is the truth; the file is only compared with it.
//
// Thread safety: pure functions, except that Load reads the store (safe beside Commit).
#ifndef BERTH_CONTROLLER_ACCOUNTING_STORE_H_
#define BERTH_CONTROLLER_ACCOUNTING_STORE_H_

#include <optional>
#include <string>
#include <vector>

#include "common/status.h"
#include "config/accounting_change.h"
#include "store/store.h"

namespace berth::controller {

inline constexpr const char* kAccountingSeededKey = "acctdb";

// The writes that turn the stored `before` into `after`: puts for new and changed entities,
// deletes for those that went.
std::vector<store::Write> AccountingWrites(const config::AccountingTables& before,
                                           const config::AccountingTables& after);

// The stored tables; nullopt when they were never seeded. A record that does not decode is
// skipped and named in `bad` (it stays in the store).
Result<std::optional<config::AccountingTables>> LoadAccounting(const store::Store& store,
                                                               std::vector<std::string>* bad);

}  // namespace berth::controller

#endif  // BERTH_CONTROLLER_ACCOUNTING_STORE_H_
