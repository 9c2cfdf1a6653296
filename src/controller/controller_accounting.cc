// sacctmgr's side of the controller: accounts, users' associations and QoS kept in the store,
// seeded from the configuration file once, changed live through POST /v1/associations.
#include <cstdio>

#include "api/accounting_json.h"
#include "controller/accounting_store.h"
#include "controller/controller_internal.h"

namespace berth::controller {
namespace {

using nlohmann::json;

Result<config::AcctVerb> VerbOf(const std::string& s) {
  if (s == "add") return config::AcctVerb::kAdd;
  if (s == "modify") return config::AcctVerb::kModify;
  if (s == "delete") return config::AcctVerb::kDelete;
  return Status::InvalidArgument("\"action\": expected add, modify or delete, got '" + s + "'");
}

Result<config::AcctEntity> EntityOf(const std::string& s) {
  if (s == "account") return config::AcctEntity::kAccount;
  if (s == "user") return config::AcctEntity::kUser;
  if (s == "qos") return config::AcctEntity::kQos;
  if (s == "association") return config::AcctEntity::kAssociation;
  return Status::InvalidArgument("\"entity\": expected account, user, qos or association, got '" +
                                 s + "'");
}

// An object of key: value, or, to keep their order and repeated keys, an array of [key, value].
Result<std::vector<std::pair<std::string, std::string>>> PairsOf(const json& body,
                                                                 const char* key) {
  std::vector<std::pair<std::string, std::string>> out;
  if (!body.contains(key)) return out;
  const json& o = body.at(key);
  auto text = [](const json& v) { return v.is_string() ? v.get<std::string>() : v.dump(); };
  if (o.is_object()) {
    for (const auto& [k, v] : o.items()) out.emplace_back(k, text(v));
    return out;
  }
  if (o.is_array()) {
    for (const json& p : o) {
      if (!p.is_array() || p.size() != 2 || !p[0].is_string()) {
        return Status::InvalidArgument("\"" + std::string(key) +
                                       "\": expected [key, value] pairs, got " + p.dump());
      }
      out.emplace_back(p[0].get<std::string>(), text(p[1]));
    }
    return out;
  }
  return Status::InvalidArgument("\"" + std::string(key) + "\": expected an object or an array");
}

Result<config::AccountingChange> DecodeChange(const json& body) {
  if (!body.is_object()) return Status::InvalidArgument("the request body must be an object");
  config::AccountingChange c;
  BERTH_ASSIGN_OR_RETURN(c.verb, VerbOf(body.value("action", std::string())));
  BERTH_ASSIGN_OR_RETURN(c.entity, EntityOf(body.value("entity", std::string())));
  BERTH_ASSIGN_OR_RETURN(c.where, PairsOf(body, "where"));
  BERTH_ASSIGN_OR_RETURN(c.set, PairsOf(body, "set"));
  return c;
}

}  // namespace

Status Controller::Impl::RecoverAccounting() {
  const core::ClusterSpec& spec = cs->spec();
  config::AccountingTables from_file = config::TablesOf(spec.qos, spec.accounts, spec.users);
  std::vector<std::string> bad;
  BERTH_ASSIGN_OR_RETURN(std::optional<config::AccountingTables> stored,
                         LoadAccounting(*store, &bad));
  for (const std::string& b : bad) {
    std::fprintf(stderr, "berth controller: skipping a bad accounting record %s\n", b.c_str());
  }
  if (!stored) {  // the first start: the file seeds the store
    std::vector<store::Write> w = AccountingWrites({}, from_file);
    w.push_back({store::Write::Kind::kPutMeta,
                 {},
                 kAccountingSeededKey,
                 json{{"seeded_at", Now()}}.dump()});
    BERTH_RETURN_IF_ERROR(store->Commit(std::move(w)));
    accounting = accounting_in_store = std::move(from_file);
    return Status::Ok();
  }
  accounting_differences = config::DescribeDifferences(from_file, *stored);
  for (const std::string& d : accounting_differences) {
    std::fprintf(stderr,
                 "berth controller: the configuration file's accounts differ from the database: "
                 "%s (the database's is used; change it with sacctmgr)\n",
                 d.c_str());
  }
  Status st = cs->SetAccounting(stored->qos, stored->accounts, stored->users);
  if (!st.ok()) {  // e.g. a partition of the file allows an account the database deleted
    std::string why =
        "the database's accounts, users and QoS were not applied, the file's are "
        "in force: " +
        st.message();
    std::fprintf(stderr, "berth controller: %s\n", why.c_str());
    accounting_differences.push_back(why);
    accounting = std::move(from_file);
    accounting_in_store = std::move(*stored);
    return Status::Ok();
  }
  accounting = accounting_in_store = std::move(*stored);
  return Status::Ok();
}

json Controller::Impl::AssociationsView() const {
  json qos = json::array(), accounts = json::array(), users = json::array();
  bool has_normal = false;
  for (const core::QosSpec& q : accounting.qos) {
    has_normal = has_normal || q.name == core::kDefaultQos;
    qos.push_back(api::QosToJson(q));
  }
  if (!has_normal) {  // the implicit one, first as the state numbers it
    core::QosSpec normal;
    normal.name = core::kDefaultQos;
    qos.insert(qos.begin(), api::QosToJson(normal));
  }
  for (const core::AccountSpec& a : accounting.accounts) accounts.push_back(api::AccountToJson(a));
  for (const core::UserSpec& u : accounting.users) {
    json j = api::UserToJson(u);
    auto level = accounting.admin_levels.find(u.name);
    j["admin_level"] = level == accounting.admin_levels.end() ? "None" : level->second;
    users.push_back(std::move(j));
  }
  return {{"qos", std::move(qos)},
          {"accounts", std::move(accounts)},
          {"users", std::move(users)},
          {"config_differences", accounting_differences}};
}

Result<json> Controller::Impl::ChangeAccounting(const config::AccountingChange& change,
                                                bool dry_run, Txn& t) {
  BERTH_ASSIGN_OR_RETURN(config::AccountingOutcome out,
                         config::ApplyAccountingChange(accounting, change));
  json assocs = json::array();
  for (const auto& [account, user] : out.assocs) {
    assocs.push_back({{"account", account}, {"user", user}});
  }
  json body = {{"names", out.names},
               {"associations", std::move(assocs)},
               {"users", out.users},
               {"dry_run", dry_run}};
  if (dry_run) return body;
  // The state checks what jobs use before it changes anything; then the store's writes join
  // this batch, and the reply waits for them.
  BERTH_RETURN_IF_ERROR(cs->SetAccounting(out.tables.qos, out.tables.accounts, out.tables.users));
  std::vector<store::Write> w = AccountingWrites(accounting_in_store, out.tables);
  t.writes.insert(t.writes.end(), std::make_move_iterator(w.begin()),
                  std::make_move_iterator(w.end()));
  accounting = accounting_in_store = std::move(out.tables);
  t.reschedule = true;  // limits and reasons follow at the next pass
  return body;
}

net::HttpResponse Controller::Impl::AssociationsChangeRoute(const ApiCall& c) {
  Result<config::AccountingChange> change = DecodeChange(c.body);
  if (!change.ok()) return Error(change.status());
  const bool dry_run = c.body.is_object() && c.body.value("dry_run", false);
  return CallResponse(
      [this, ch = std::move(*change), dry_run](Txn& t, Reply* out) {
        state_thread.AssertHeld();  // a command: on the state thread
        Result<json> r = ChangeAccounting(ch, dry_run, t);
        if (r.ok()) {
          out->body = std::move(*r);
        } else {
          out->status = r.status();
        }
      },
      200);
}

}  // namespace berth::controller
