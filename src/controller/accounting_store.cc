#include "controller/accounting_store.h"

#include <map>

#include "api/accounting_json.h"

namespace berth::controller {
namespace {

using Rows = std::map<std::string, std::string>;  // key -> value

Rows RowsOf(const config::AccountingTables& t) {
  Rows rows;
  for (const core::QosSpec& q : t.qos) rows["qos/" + q.name] = api::QosToJson(q).dump();
  for (const core::AccountSpec& a : t.accounts) {
    rows["acct/" + a.name] = api::AccountToJson(a).dump();
  }
  for (const core::UserSpec& u : t.users) {
    rows["assoc/" + u.name + "/" + u.account] = api::UserToJson(u).dump();
  }
  for (const auto& [user, level] : t.admin_levels) rows["admin/" + user] = level;
  return rows;
}

}  // namespace

std::vector<store::Write> AccountingWrites(const config::AccountingTables& before,
                                           const config::AccountingTables& after) {
  Rows old_rows = RowsOf(before), new_rows = RowsOf(after);
  std::vector<store::Write> out;
  for (const auto& [key, value] : new_rows) {
    auto it = old_rows.find(key);
    if (it != old_rows.end() && it->second == value) continue;
    store::Write w;
    w.kind = store::Write::Kind::kPutMeta;
    w.key = key;
    w.value = value;
    out.push_back(std::move(w));
  }
  for (const auto& [key, value] : old_rows) {
    if (new_rows.contains(key)) continue;
    store::Write w;
    w.kind = store::Write::Kind::kDeleteMeta;
    w.key = key;
    out.push_back(std::move(w));
  }
  return out;
}

Result<std::optional<config::AccountingTables>> LoadAccounting(const store::Store& store,
                                                               std::vector<std::string>* bad) {
  BERTH_ASSIGN_OR_RETURN(std::optional<std::string> seeded, store.GetMeta(kAccountingSeededKey));
  if (!seeded) return std::optional<config::AccountingTables>();
  config::AccountingTables t;
  auto scan = [&](const std::string& prefix, auto decode) {
    return store.ScanMeta(prefix, [&](const std::string& key, const std::string& value) {
      nlohmann::json j = nlohmann::json::parse(value, nullptr, false);
      Status st = j.is_discarded() ? Status::InvalidArgument("not JSON") : decode(j);
      if (!st.ok() && bad != nullptr) bad->push_back(key + ": " + st.message());
    });
  };
  BERTH_RETURN_IF_ERROR(scan("qos/", [&](const nlohmann::json& j) {
    Result<core::QosSpec> q = api::QosFromJson(j);
    if (q.ok()) t.qos.push_back(std::move(*q));
    return q.status();
  }));
  BERTH_RETURN_IF_ERROR(scan("acct/", [&](const nlohmann::json& j) {
    Result<core::AccountSpec> a = api::AccountFromJson(j);
    if (a.ok()) t.accounts.push_back(std::move(*a));
    return a.status();
  }));
  BERTH_RETURN_IF_ERROR(scan("assoc/", [&](const nlohmann::json& j) {
    Result<core::UserSpec> u = api::UserFromJson(j);
    if (u.ok()) t.users.push_back(std::move(*u));
    return u.status();
  }));
  BERTH_RETURN_IF_ERROR(
      store.ScanMeta("admin/", [&](const std::string& key, const std::string& value) {
        t.admin_levels[key.substr(6)] = value;
      }));
  return std::optional<config::AccountingTables>(std::move(t));
}

}  // namespace berth::controller
