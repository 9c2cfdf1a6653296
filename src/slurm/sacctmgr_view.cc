// sacctmgr's tables (show) and messages (add, modify, delete).
#include <algorithm>
#include <cstdio>
#include <functional>
#include <set>

#include "api/accounting_json.h"
#include "common/slurm_time.h"
#include "common/strings.h"
#include "slurm/sacctmgr.h"

namespace berth::slurm {
namespace {

using config::AcctEntity;
using nlohmann::json;

struct FieldDef {
  const char* name;
  const char* header;
  int width;
};

// Slurm 22.05's fields of each entity (print names and widths), in its order.
constexpr FieldDef kAccountFields[] = {
    {"Account", "Account", 10}, {"Description", "Descr", 20},   {"Organization", "Org", 20},
    {"Cluster", "Cluster", 10}, {"ParentName", "Par Name", 10}, {"User", "User", 10},
    {"Fairshare", "Share", 9},  {"GrpJobs", "GrpJobs", 7},      {"GrpTRES", "GrpTRES", 13},
    {"MaxJobs", "MaxJobs", 7},  {"MaxTRES", "MaxTRES", 13},     {"QOS", "QOS", 20},
};
constexpr FieldDef kUserFields[] = {
    {"User", "User", 10},       {"DefaultAccount", "Def Acct", 10}, {"AdminLevel", "Admin", 9},
    {"Cluster", "Cluster", 10}, {"Account", "Account", 10},         {"Partition", "Partition", 10},
    {"Fairshare", "Share", 9},  {"MaxJobs", "MaxJobs", 7},          {"MaxTRES", "MaxTRES", 13},
    {"QOS", "QOS", 20},
};
constexpr FieldDef kQosFields[] = {
    {"Name", "Name", 10},
    {"Priority", "Priority", 10},
    {"GraceTime", "GraceTime", 10},
    {"Preempt", "Preempt", 10},
    {"PreemptExemptTime", "PreemptExemptTime", 19},
    {"PreemptMode", "PreemptMode", 11},
    {"Flags", "Flags", 20},
    {"UsageThreshold", "UsageThres", 10},
    {"UsageFactor", "UsageFactor", 11},
    {"GrpTRES", "GrpTRES", 13},
    {"GrpTRESMins", "GrpTRESMins", 13},
    {"GrpTRESRunMins", "GrpTRESRunMins", 13},
    {"GrpJobs", "GrpJobs", 7},
    {"GrpSubmitJobs", "GrpSubmit", 9},
    {"GrpWall", "GrpWall", 11},
    {"MaxTRES", "MaxTRES", 13},
    {"MaxTRESPerNode", "MaxTRESPerNode", 14},
    {"MaxTRESMins", "MaxTRESMins", 13},
    {"MaxWall", "MaxWall", 11},
    {"MaxTRESPU", "MaxTRESPU", 13},
    {"MaxJobsPU", "MaxJobsPU", 9},
    {"MaxSubmitPU", "MaxSubmitPU", 11},
    {"MaxTRESPA", "MaxTRESPA", 13},
    {"MaxJobsPA", "MaxJobsPA", 9},
    {"MaxSubmitPA", "MaxSubmitPA", 11},
    {"MinTRES", "MinTRES", 13},
    {"ID", "ID", 6},
    {"Description", "Descr", 11},
};
constexpr FieldDef kAssocFields[] = {
    {"Cluster", "Cluster", 10},
    {"Account", "Account", 10},
    {"User", "User", 10},
    {"Partition", "Partition", 10},
    {"Fairshare", "Share", 9},
    {"Priority", "Priority", 10},
    {"GrpJobs", "GrpJobs", 7},
    {"GrpTRES", "GrpTRES", 13},
    {"GrpSubmitJobs", "GrpSubmit", 9},
    {"GrpWall", "GrpWall", 11},
    {"GrpTRESMins", "GrpTRESMins", 13},
    {"MaxJobs", "MaxJobs", 7},
    {"MaxTRES", "MaxTRES", 13},
    {"MaxTRESPerNode", "MaxTRESPerNode", 14},
    {"MaxSubmitJobs", "MaxSubmit", 9},
    {"MaxWall", "MaxWall", 11},
    {"MaxTRESMins", "MaxTRESMins", 13},
    {"QOS", "QOS", 20},
    {"DefaultQOS", "Def QOS", 9},
    {"GrpTRESRunMins", "GrpTRESRunMins", 13},
    {"ParentName", "Par Name", 10},
};

std::span<const FieldDef> FieldsOf(AcctEntity e) {
  switch (e) {
    case AcctEntity::kAccount:
      return kAccountFields;
    case AcctEntity::kUser:
      return kUserFields;
    case AcctEntity::kQos:
      return kQosFields;
    case AcctEntity::kAssociation:
      return kAssocFields;
  }
  return kAccountFields;
}

SacctmgrField FieldOf(const FieldDef& d) {
  return {d.name, d.header, d.width};
}

// Slurm's print_fields: a value wider than its column ends in '+'; right-justified unless the
// width is negative; one blank after each column. -p: '|' after each; -P: '|' between.
// Headers are cut without the '+'.
std::string Cell(std::string value, int width, int parsable, bool last, bool header) {
  if (parsable > 0) return value + (parsable == 1 || !last ? "|" : "");
  size_t w = static_cast<size_t>(std::abs(width));
  if (value.size() > w) {
    value = header ? value.substr(0, w) : value.substr(0, w == 0 ? 0 : w - 1) + "+";
  }
  std::string pad(w - value.size(), ' ');
  return (width < 0 ? value + pad : pad + value) + (last ? "" : " ");
}

std::string Line(const std::vector<SacctmgrField>& fields, int parsable,
                 const std::function<std::string(const SacctmgrField&)>& value,
                 bool header = false) {
  std::string out;
  for (size_t i = 0; i < fields.size(); ++i) {
    out += Cell(value(fields[i]), fields[i].width, parsable, i + 1 == fields.size(), header);
  }
  // Slurm leaves the blank after the last column of the table form.
  if (parsable == 0 && !fields.empty()) out += ' ';
  return out + "\n";
}

std::string Count(int64_t n) {
  return n < 0 ? "" : std::to_string(n);
}

std::string Minutes(Duration d) {
  if (d >= kInfinite) return "";
  return FormatTimeLimit(d);
}

std::string Joined(const std::vector<std::string>& v) {
  std::string out;
  for (const std::string& s : v) out += (out.empty() ? "" : ",") + s;
  return out;
}

std::string AccountValue(const std::string& f, const core::AccountSpec& a,
                         const std::string& cluster) {
  if (f == "Account") return a.name;
  const bool root = a.name == core::kRootAccount;
  if (f == "Description") return root ? "default root account" : a.name;
  if (f == "Organization") {
    return root || a.parent.empty() || a.parent == core::kRootAccount ? a.name : a.parent;
  }
  if (f == "Cluster") return cluster;
  if (f == "ParentName") return a.name == core::kRootAccount ? "" : a.parent;
  if (f == "Fairshare") return std::to_string(a.shares);
  if (f == "GrpJobs") return Count(a.grp_jobs);
  if (f == "GrpTRES") return SacctmgrTres(a.grp_tres);
  return "";
}

std::string UserValue(const std::string& f, const core::UserSpec& u, const SacctmgrData& d) {
  if (f == "User") return u.name;
  if (f == "Account") return u.account;
  if (f == "Cluster") return d.cluster;
  if (f == "Fairshare") return std::to_string(u.shares);
  if (f == "MaxJobs") return Count(u.max_jobs);
  if (f == "MaxTRES") return SacctmgrTres(u.max_tres_per_job);
  if (f == "AdminLevel") {
    auto it = d.admin_levels.find(u.name);
    return it == d.admin_levels.end() ? "None" : it->second;
  }
  if (f == "DefaultAccount") {
    for (const core::UserSpec& o : d.users) {
      if (o.name == u.name && o.is_default) return o.account;
    }
  }
  return "";
}

std::string QosValue(const std::string& f, const core::QosSpec& q, size_t index) {
  if (f == "Name") return q.name;
  if (f == "ID") return std::to_string(index + 1);
  if (f == "Priority") return std::to_string(q.priority);
  if (f == "GraceTime") return "00:00:00";
  if (f == "Preempt") return Joined(q.preempt);
  if (f == "PreemptMode") {
    return q.preempt_mode == core::PreemptMode::kOff
               ? "cluster"
               : ToLower(std::string(core::PreemptModeName(q.preempt_mode)));
  }
  if (f == "UsageFactor") {
    char buf[32];
    std::snprintf(buf, sizeof(buf), "%f", q.usage_factor);
    return buf;
  }
  if (f == "MaxTRES") return SacctmgrTres(q.max_tres_per_job);
  if (f == "MaxWall") return Minutes(q.max_wall);
  if (f == "MaxTRESPU") return SacctmgrTres(q.max_tres_per_user);
  if (f == "MaxJobsPU") return Count(q.max_jobs_per_user);
  if (f == "MaxTRESPA") return SacctmgrTres(q.max_tres_per_account);
  if (f == "MaxJobsPA") return Count(q.max_jobs_per_account);
  return "";
}

bool Selected(const std::vector<std::pair<std::string, std::string>>& where, std::string_view key,
              const std::string& value, bool any_case) {
  bool constrained = false, hit = false;
  for (const auto& [k, v] : where) {
    if (!EqualsIgnoreCase(k, key)) continue;
    constrained = true;
    for (std::string_view item : Split(v, ',')) {
      hit = hit || (any_case ? EqualsIgnoreCase(item, value) : item == value);
    }
  }
  return !constrained || hit;
}

// Accounts in Slurm's association order: depth first from root, siblings by name.
std::vector<const core::AccountSpec*> TreeOrder(const SacctmgrData& d,
                                                const core::AccountSpec& root) {
  std::vector<const core::AccountSpec*> out;
  std::function<void(const core::AccountSpec&)> visit = [&](const core::AccountSpec& a) {
    out.push_back(&a);
    std::vector<const core::AccountSpec*> kids;
    for (const core::AccountSpec& c : d.accounts) {
      std::string parent = c.parent.empty() ? core::kRootAccount : c.parent;
      if (c.name != core::kRootAccount && parent == a.name) kids.push_back(&c);
    }
    std::sort(kids.begin(), kids.end(), [](auto* x, auto* y) { return x->name < y->name; });
    for (const core::AccountSpec* k : kids) visit(*k);
  };
  visit(root);
  return out;
}

std::string Header(const SacctmgrCommand& c) {
  if (c.no_header) return "";
  std::string out = Line(
      c.format, c.parsable, [](const SacctmgrField& f) { return f.header; }, true);
  if (c.parsable == 0) {
    out += Line(c.format, 0, [](const SacctmgrField& f) {
      return std::string(static_cast<size_t>(std::abs(f.width)), '-');
    });
  }
  return out;
}

}  // namespace

std::string SacctmgrTres(const core::TresLimits& l) {
  std::string out;
  auto add = [&](const char* name, const std::string& v) {
    out += (out.empty() ? "" : ",") + std::string(name) + "=" + v;
  };
  if (l.cpus >= 0) add("cpu", std::to_string(l.cpus));
  if (l.mem_mib >= 0) {
    add("mem", l.mem_mib % 1024 == 0 && l.mem_mib > 0 ? std::to_string(l.mem_mib / 1024) + "G"
                                                      : std::to_string(l.mem_mib) + "M");
  }
  if (l.nodes >= 0) add("node", std::to_string(l.nodes));
  if (l.gpus >= 0) add("gres/gpu", std::to_string(l.gpus));
  return out;
}

std::vector<SacctmgrField> DefaultSacctmgrFields(AcctEntity entity, bool with_assoc) {
  std::vector<std::string> names;
  switch (entity) {
    case AcctEntity::kAccount:
      names = {"Account", "Description", "Organization"};
      if (with_assoc) {
        names.insert(names.end(), {"Cluster", "ParentName", "User", "Fairshare", "GrpJobs",
                                   "GrpTRES", "MaxJobs", "MaxTRES", "QOS"});
      }
      break;
    case AcctEntity::kUser:
      names = {"User", "DefaultAccount", "AdminLevel"};
      if (with_assoc) {
        names.insert(names.end(),
                     {"Cluster", "Account", "Partition", "Fairshare", "MaxJobs", "MaxTRES", "QOS"});
      }
      break;
    case AcctEntity::kQos:
      for (const FieldDef& d : kQosFields) {
        if (std::string_view(d.name) != "ID" && std::string_view(d.name) != "Description") {
          names.push_back(d.name);
        }
      }
      break;
    case AcctEntity::kAssociation:
      for (const FieldDef& d : kAssocFields) {
        if (std::string_view(d.name) != "ParentName") names.push_back(d.name);
      }
      break;
  }
  std::vector<SacctmgrField> out;
  for (const std::string& n : names) {
    for (const FieldDef& d : FieldsOf(entity)) {
      if (n == d.name) out.push_back(FieldOf(d));
    }
  }
  return out;
}

Result<std::vector<SacctmgrField>> ParseSacctmgrFormat(AcctEntity entity, std::string_view text) {
  std::vector<SacctmgrField> out;
  for (std::string_view item : Split(text, ',')) {
    if (item.empty()) continue;
    std::string_view name = item;
    std::optional<int> width;
    if (size_t pct = item.find('%'); pct != std::string_view::npos) {
      name = item.substr(0, pct);
      std::string w(item.substr(pct + 1));
      char* end = nullptr;
      long n = std::strtol(w.c_str(), &end, 10);
      if (w.empty() || *end != '\0' || n == 0) {
        return Status::InvalidArgument("Unknown field '" + std::string(item) + "'");
      }
      width = static_cast<int>(n);
    }
    const FieldDef* found = nullptr;
    for (const FieldDef& d : FieldsOf(entity)) {  // exact names first, then prefixes
      if (EqualsIgnoreCase(name, d.name) || EqualsIgnoreCase(name, d.header)) {
        found = &d;
        break;
      }
    }
    for (const FieldDef& d : FieldsOf(entity)) {
      if (found != nullptr || name.empty()) break;
      std::string_view full = d.name;
      if (name.size() <= full.size() && EqualsIgnoreCase(name, full.substr(0, name.size()))) {
        found = &d;
      }
    }
    if (found == nullptr)
      return Status::InvalidArgument("Unknown field '" + std::string(name) + "'");
    SacctmgrField f = FieldOf(*found);
    if (width) f.width = *width;
    out.push_back(std::move(f));
  }
  if (out.empty()) return Status::InvalidArgument("format= names no field");
  return out;
}

Result<SacctmgrData> SacctmgrDataFromJson(const json& body) {
  SacctmgrData d;
  if (!body.is_object()) return Status::InvalidArgument("GET /v1/associations: not an object");
  for (const json& j : body.value("qos", json::array())) {
    BERTH_ASSIGN_OR_RETURN(core::QosSpec q, api::QosFromJson(j));
    d.qos.push_back(std::move(q));
  }
  for (const json& j : body.value("accounts", json::array())) {
    BERTH_ASSIGN_OR_RETURN(core::AccountSpec a, api::AccountFromJson(j));
    d.accounts.push_back(std::move(a));
  }
  for (const json& j : body.value("users", json::array())) {
    BERTH_ASSIGN_OR_RETURN(core::UserSpec u, api::UserFromJson(j));
    std::string level = j.is_object() && j.contains("admin_level") && j["admin_level"].is_string()
                            ? j["admin_level"].get<std::string>()
                            : "None";
    if (level != "None") d.admin_levels[u.name] = level;
    d.users.push_back(std::move(u));
  }
  return d;
}

namespace {

// Prints one row: the value of each field, by the field's name.
using RowFn = std::function<void(const std::function<std::string(const std::string&)>&)>;

core::AccountSpec RootOf(const SacctmgrData& d) {
  core::AccountSpec root;
  root.name = core::kRootAccount;
  for (const core::AccountSpec& a : d.accounts) {
    if (a.name == core::kRootAccount) root = a;
  }
  root.parent.clear();
  return root;
}

// An account's users (that the where conditions select), by name.
std::vector<const core::UserSpec*> UsersOf(const SacctmgrData& d, const std::string& account,
                                           const SacctmgrCommand& c) {
  std::vector<const core::UserSpec*> users;
  for (const core::UserSpec& u : d.users) {
    if (u.account == account && Selected(c.where, "User", u.name, false)) users.push_back(&u);
  }
  std::sort(users.begin(), users.end(), [](auto* x, auto* y) { return x->name < y->name; });
  return users;
}

void ShowAccounts(const SacctmgrCommand& c, const SacctmgrData& d, const RowFn& row) {
  const core::AccountSpec root = RootOf(d);
  for (const core::AccountSpec* a : TreeOrder(d, root)) {
    if (!Selected(c.where, "Name", a->name, true) ||
        !Selected(c.where, "Parent", a->parent, true)) {
      continue;
    }
    row([&](const std::string& f) { return AccountValue(f, *a, d.cluster); });
    if (!c.with_assoc) continue;
    for (const core::UserSpec* u : UsersOf(d, a->name, c)) {
      row([&](const std::string& f) {
        if (f == "User" || f == "Fairshare" || f == "MaxJobs" || f == "MaxTRES") {
          return UserValue(f, *u, d);
        }
        if (f == "GrpJobs" || f == "GrpTRES") return std::string();
        return AccountValue(f, *a, d.cluster);
      });
    }
  }
}

void ShowUsers(const SacctmgrCommand& c, const SacctmgrData& d, const RowFn& row) {
  std::vector<const core::UserSpec*> users;
  for (const core::UserSpec& u : d.users) users.push_back(&u);
  std::stable_sort(users.begin(), users.end(), [](auto* x, auto* y) { return x->name < y->name; });
  std::set<std::string> seen;
  for (const core::UserSpec* u : users) {
    if (!Selected(c.where, "Name", u->name, false) || !Selected(c.where, "User", u->name, false)) {
      continue;
    }
    // Without associations, one row per user; with them, one per association.
    if (c.with_assoc ? Selected(c.where, "Account", u->account, true)
                     : seen.insert(u->name).second) {
      row([&](const std::string& f) { return UserValue(f, *u, d); });
    }
  }
}

void ShowQos(const SacctmgrCommand& c, const SacctmgrData& d, const RowFn& row) {
  for (size_t i = 0; i < d.qos.size(); ++i) {
    if (!Selected(c.where, "Name", d.qos[i].name, true)) continue;
    row([&](const std::string& f) { return QosValue(f, d.qos[i], i); });
  }
}

// Slurm's association order: each account's own row, its users, then its sub-accounts.
void ShowAssociations(const SacctmgrCommand& c, const SacctmgrData& d, const RowFn& row) {
  const bool users_only = std::any_of(c.where.begin(), c.where.end(), [](const auto& p) {
    return EqualsIgnoreCase(p.first, "User");
  });
  const core::AccountSpec root = RootOf(d);  // TreeOrder points into it
  for (const core::AccountSpec* a : TreeOrder(d, root)) {
    if (!Selected(c.where, "Account", a->name, true) || !Selected(c.where, "Name", a->name, true)) {
      continue;
    }
    if (!users_only) {
      row([&](const std::string& f) {
        if (f == "User" || f == "MaxJobs" || f == "MaxTRES") return std::string();
        return AccountValue(f, *a, d.cluster);
      });
    }
    for (const core::UserSpec* u : UsersOf(d, a->name, c)) {
      row([&](const std::string& f) {
        if (f == "GrpJobs" || f == "GrpTRES") return std::string();
        if (f == "ParentName") return a->name;
        return UserValue(f, *u, d);
      });
    }
  }
}

}  // namespace

std::string RenderSacctmgrShow(const SacctmgrCommand& c, const SacctmgrData& d) {
  std::string out = Header(c);
  RowFn row = [&](const std::function<std::string(const std::string&)>& value) {
    out += Line(c.format, c.parsable, [&](const SacctmgrField& f) { return value(f.name); });
  };
  switch (c.entity) {
    case AcctEntity::kAccount:
      ShowAccounts(c, d, row);
      break;
    case AcctEntity::kUser:
      ShowUsers(c, d, row);
      break;
    case AcctEntity::kQos:
      ShowQos(c, d, row);
      break;
    case AcctEntity::kAssociation:
      ShowAssociations(c, d, row);
      break;
  }
  return out;
}

namespace {

std::string Padded(std::string_view s, size_t width) {
  std::string out(s.substr(0, width));
  out.resize(std::max(width, out.size()), ' ');
  return out;
}

// The settings sacctmgr prints, in its order: the name it prints, and the names it takes for it.
struct Setting {
  const char* shown;
  std::vector<std::string_view> names;
};
const std::vector<Setting>& Settings(bool qos) {
  static const std::vector<Setting> kAssoc = {
      {"Description", {"Description"}},
      {"Organization", {"Organization"}},
      {"Fairshare", {"Fairshare", "Shares"}},
      {"GrpJobs", {"GrpJobs"}},
      {"GrpTRES", {"GrpTRES"}},
      {"MaxJobs", {"MaxJobs"}},
      {"MaxTRES", {"MaxTRES", "MaxTRESPerJob", "MaxTRESPJ"}},
      {"Parent", {"Parent"}},
  };
  static const std::vector<Setting> kQos = {
      {"Flags", {"Flags"}},
      {"MaxJobsPerAccount", {"MaxJobsPerAccount", "MaxJobsPA"}},
      {"MaxJobsPerUser", {"MaxJobsPerUser", "MaxJobsPU"}},
      {"MaxTRESPerAccount", {"MaxTRESPerAccount", "MaxTRESPA"}},
      {"MaxTRESPerJob", {"MaxTRESPerJob", "MaxTRES", "MaxTRESPJ"}},
      {"MaxTRESPerUser", {"MaxTRESPerUser", "MaxTRESPU"}},
      {"MaxWall", {"MaxWall", "MaxWallDurationPerJob"}},
      {"Preempt", {"Preempt"}},
      {"PreemptMode", {"PreemptMode"}},
      {"Priority", {"Priority"}},
      {"UsageFactor", {"UsageFactor"}},
  };
  return qos ? kQos : kAssoc;
}

// The settings lines of an add, as Slurm prints a limit it was given ("  MaxJobs       = 2";
// -1 as NONE), in sacctmgr's order and by the names it prints.
std::string SettingLines(const std::vector<std::pair<std::string, std::string>>& set, bool qos,
                         const std::set<std::string>& skip) {
  const size_t key_width = qos ? 25 : 14;
  std::string out;
  for (const Setting& s : Settings(qos)) {
    if (skip.contains(s.shown)) continue;
    for (const auto& [k, v] : set) {
      bool named = std::any_of(s.names.begin(), s.names.end(),
                               [&key = k](std::string_view n) { return EqualsIgnoreCase(key, n); });
      if (!named) continue;
      out += "  " + Padded(s.shown, key_width) + "= " + (v == "-1" ? "NONE" : v) + "\n";
    }
  }
  return out;
}

std::string Lines(const json& names) {
  std::string out;
  for (const json& n : names) out += "  " + n.get<std::string>() + "\n";
  return out;
}

std::string ValueOf(const std::vector<std::pair<std::string, std::string>>& set,
                    std::string_view key) {
  for (const auto& [k, v] : set) {
    if (EqualsIgnoreCase(k, key)) return v;
  }
  return "";
}

}  // namespace

std::string RenderSacctmgrChange(const SacctmgrCommand& c, const json& answer,
                                 const std::string& cluster) {
  const json names = answer.value("names", json::array());
  const json assocs = answer.value("associations", json::array());
  const std::string cl = Padded(cluster, 10);
  std::string out;
  auto assoc_line = [&](const json& a, bool user_first) {
    std::string acct = a.value("account", ""), user = a.value("user", "");
    if (user_first)
      return "  U = " + Padded(user, 9) + " A = " + Padded(acct, 10) + " C = " + cl + "\n";
    if (user.empty()) return "  C = " + cl + " A = " + Padded(acct, 20) + "\n";
    return "  C = " + cl + " A = " + Padded(acct, 20) + " U = " + Padded(user, 9) + "\n";
  };
  switch (c.verb) {
    case SacctmgrVerb::kShow:
      break;
    case SacctmgrVerb::kAdd:
      if (c.entity == AcctEntity::kAccount) {
        out += " Adding Account(s)\n" + Lines(names);
        out += " Settings\n";
        std::string descr = ValueOf(c.set, "Description"), org = ValueOf(c.set, "Organization");
        out += "  Description     = " + (descr.empty() ? "Account Name" : descr) + "\n";
        out += "  Organization    = " + (org.empty() ? "Parent/Account Name" : org) + "\n";
        out += " Associations\n";
        for (const json& a : assocs) {
          out += "  A = " + Padded(a.value("account", ""), 10) + " C = " + cl + "\n";
        }
        std::string limits = SettingLines(c.set, false, {"Description", "Organization"});
        if (!limits.empty()) out += " Settings\n" + limits;
      } else if (c.entity == AcctEntity::kUser) {
        out += " Adding User(s)\n" + Lines(names);
        std::string def = ValueOf(c.set, "DefaultAccount"), admin = ValueOf(c.set, "AdminLevel");
        if (!def.empty() || !admin.empty()) {
          out += " Settings =\n";
          if (!def.empty()) out += "  Default Account = " + def + "\n";
          if (!admin.empty()) {
            Result<std::string> level = config::ParseAdminLevel(admin);
            out += "  Admin Level     = " + (level.ok() ? *level : admin) + "\n";
          }
        }
        out += " Associations =\n";
        for (const json& a : assocs) out += assoc_line(a, true);
        out += " Non Default Settings\n";
        out += SettingLines(c.set, false, {});
      } else {
        out += " Adding QOS(s)\n" + Lines(names);
        out += " Settings\n";
        std::string descr = ValueOf(c.set, "Description");
        out += "  Description    = " + (descr.empty() ? "QOS Name" : descr) + "\n";
        out += SettingLines(c.set, true, {});
      }
      break;
    case SacctmgrVerb::kModify:
      if (c.entity == AcctEntity::kQos) {
        out += " Modified qos...\n" + Lines(names);
        break;
      }
      if (!assocs.empty()) {
        out += c.entity == AcctEntity::kAccount ? " Modified account associations...\n"
                                                : " Modified user associations...\n";
        for (const json& a : assocs) out += assoc_line(a, false);
      }
      if (!answer.value("users", json::array()).empty()) {
        out += " Modified users...\n" + Lines(answer["users"]);
      }
      break;
    case SacctmgrVerb::kDelete:
      if (c.entity == AcctEntity::kAccount) {
        out += " Deleting accounts...\n" + Lines(names);
      } else if (c.entity == AcctEntity::kQos) {
        out += " Deleting QOS(s)...\n" + Lines(names);
      } else if (!ValueOf(c.where, "Account").empty()) {
        out += " Deleting user associations...\n";
        for (const json& a : assocs) out += assoc_line(a, false);
      } else {
        out += " Deleting users...\n" + Lines(names);
      }
      break;
  }
  return out;
}

}  // namespace berth::slurm
