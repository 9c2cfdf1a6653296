// sshare's rows, fields and layout (Slurm 22.05: src/sshare/process.c, src/common/print_fields.c,
// slurmdb_tree_name_get).
#include "slurm/sshare_view.h"

#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <map>
#include <nlohmann/json.hpp>

#include "common/strings.h"

namespace berth::slurm {
namespace {

using nlohmann::json;

// Slurm's fields, in its order: a -o name picks the first whose name it prefixes. Made at the
// first use, not at the start of every berth process.
const std::vector<SshareField>& Fields() {
  static const std::vector<SshareField> fields = {
      {"Account", -20},    {"Cluster", 10},     {"EffectvUsage", 13}, {"FairShare", 10},
      {"LevelFS", 10},     {"ID", 6},           {"NormShares", 11},   {"NormUsage", 11},
      {"Partition", 12},   {"RawShares", 10},   {"RawUsage", 11},     {"User", 10},
      {"GrpTRESMins", 30}, {"TRESRunMins", 30},
  };
  return fields;
}

bool SameName(const std::string& a, const std::string& b) {
  return ToLower(a) == ToLower(b);
}

bool InList(const std::vector<std::string>& list, const std::string& name) {
  for (const std::string& s : list) {
    if (SameName(s, name)) return true;
  }
  return false;
}

std::string Justify(const std::string& s, int width) {
  const size_t w = static_cast<size_t>(std::abs(width));
  if (s.size() >= w) return s;
  std::string pad(w - s.size(), ' ');
  return width < 0 ? s + pad : pad + s;
}

// A value of one row and field; nullopt prints as Slurm's unset value (blank).
struct Cell {
  enum Kind { kText, kDouble, kUnsigned } kind = kText;
  std::optional<std::string> text;
  double number = 0;
  bool unset = false;
};

Cell Text(std::optional<std::string> s) {
  Cell c;
  c.text = std::move(s);
  return c;
}
Cell Double(double v) {
  Cell c;
  c.kind = Cell::kDouble;
  c.number = v;
  return c;
}
Cell Unsigned(std::optional<double> v) {
  Cell c;
  c.kind = Cell::kUnsigned;
  c.unset = !v.has_value();
  c.number = v.value_or(0);
  return c;
}

std::string UnsignedText(double v) {
  // Slurm casts the usage to uint64_t: truncation.
  return std::to_string(static_cast<unsigned long long>(v < 0 ? 0 : v));
}

std::string DoubleText(double v) {
  char buf[512];
  std::snprintf(buf, sizeof(buf), "%f", v);
  return buf;
}

// print_fields' text for a cell, without the delimiter or the trailing space.
std::string Fit(const Cell& c, int width, bool parsable) {
  const int abs_width = std::abs(width);
  switch (c.kind) {
    case Cell::kText: {
      if (parsable) return c.text.value_or("");
      if (!c.text) return Justify(" ", width);
      std::string v = *c.text;
      if (static_cast<int>(v.size()) > abs_width) {
        v.resize(static_cast<size_t>(abs_width));
        if (abs_width > 0) v.back() = '+';
      }
      return Justify(v, width);
    }
    case Cell::kUnsigned:
      if (c.unset) return parsable ? "" : Justify(" ", width);
      return parsable ? UnsignedText(c.number) : Justify(UnsignedText(c.number), width);
    case Cell::kDouble:
      return parsable ? DoubleText(c.number) : SshareDouble(c.number, width);
  }
  return "";
}

// The Account column's text, as slurmdb_tree_name_get builds it: a row one space deeper than its
// parent when the parent account was printed; a user row shows its account.
class TreeNames {
 public:
  std::string Name(const SshareRow& r) {
    if (!r.user.empty()) {
      auto p = spaces_.find(r.account);
      return p == spaces_.end() ? r.account : p->second + " " + r.account;
    }
    auto self = spaces_.find(r.account);
    if (self != spaces_.end()) return self->second + r.account;
    auto p = r.parent.empty() ? spaces_.end() : spaces_.find(r.parent);
    std::string spaces = p == spaces_.end() ? "" : " " + p->second;
    spaces_[r.account] = spaces;
    return spaces + r.account;
  }

 private:
  std::map<std::string, std::string> spaces_;  // printed accounts' indentation
};

Cell ValueOf(const std::string& field, const SshareRow& r, const SshareData& d, TreeNames& names) {
  const bool user = !r.user.empty();
  if (field == "Account") return Text(names.Name(r));
  if (field == "Cluster") return Text(d.cluster);
  if (field == "EffectvUsage") return Double(r.effective_usage);
  if (field == "FairShare") {
    if (!r.fairshare) return Text(std::nullopt);
    return Double(*r.fairshare);
  }
  if (field == "LevelFS") return Double(r.level_fs);
  if (field == "ID") return Unsigned(static_cast<double>(r.id));
  if (field == "NormShares") return Double(r.norm_shares);
  if (field == "NormUsage") return Double(r.norm_usage);
  if (field == "Partition") return Text(std::nullopt);
  if (field == "RawShares") {
    if (!r.raw_shares) return Unsigned(std::nullopt);
    return Unsigned(static_cast<double>(*r.raw_shares));
  }
  if (field == "RawUsage") return Unsigned(r.raw_usage);
  if (field == "User") return Text(user ? std::optional<std::string>(r.user) : std::nullopt);
  // GrpTRESMins, TRESRunMins: berth has no TRES-minute limits and does not total running jobs'
  // TRES-minutes; Slurm prints its empty TRES string.
  return Text(std::string());
}

Result<double> NumberAt(const json& row, const char* key) {
  if (!row.contains(key))
    return Status::InvalidArgument(std::string("row without \"") + key + "\"");
  const json& v = row.at(key);
  if (v.is_number()) return v.get<double>();
  if (v.is_string() && v.get<std::string>() == "inf") return HUGE_VAL;
  return Status::InvalidArgument(std::string("\"") + key + "\" is not a number");
}

}  // namespace

std::string SshareDouble(double v, int width) {
  const int abs_width = std::abs(width);
  char fixed[512];
  std::snprintf(fixed, sizeof(fixed), "%*f", abs_width, v);
  int w = abs_width;
  if (static_cast<int>(std::string(fixed).size()) > w) {
    char sci[512];
    std::snprintf(sci, sizeof(sci), "%*.*e", w, w, v);
    const int len = static_cast<int>(std::string(sci).size());
    if (len > w) w -= len - w;
    std::snprintf(sci, sizeof(sci), width < 0 ? "%-*.*e" : "%*.*e", w, w, v);
    return sci;
  }
  std::snprintf(fixed, sizeof(fixed), width < 0 ? "%-*f" : "%*f", abs_width, v);
  return fixed;
}

Result<SshareData> SshareDataFromJson(const json& body) {
  if (!body.is_object() || !body.contains("rows") || !body.at("rows").is_array()) {
    return Status::InvalidArgument("the controller's fair-share answer has no \"rows\"");
  }
  SshareData d;
  d.cluster = body.value("cluster", std::string());
  d.fair_tree = body.value("algorithm", std::string("fair_tree")) != "classic";
  for (const json& row : body.at("rows")) {
    if (!row.is_object()) return Status::InvalidArgument("a fair-share row is not an object");
    SshareRow r;
    r.id = row.value("id", 0);
    r.account = row.value("account", std::string());
    r.parent = row.value("parent", std::string());
    r.user = row.value("user", std::string());
    if (row.contains("raw_shares") && row.at("raw_shares").is_number()) {
      r.raw_shares = row.at("raw_shares").get<int64_t>();
    }
    BERTH_ASSIGN_OR_RETURN(r.norm_shares, NumberAt(row, "norm_shares"));
    BERTH_ASSIGN_OR_RETURN(r.raw_usage, NumberAt(row, "raw_usage"));
    BERTH_ASSIGN_OR_RETURN(r.norm_usage, NumberAt(row, "norm_usage"));
    BERTH_ASSIGN_OR_RETURN(r.effective_usage, NumberAt(row, "effective_usage"));
    BERTH_ASSIGN_OR_RETURN(r.level_fs, NumberAt(row, "level_fs"));
    if (row.contains("fairshare") && row.at("fairshare").is_number()) {
      r.fairshare = row.at("fairshare").get<double>();
    }
    d.rows.push_back(std::move(r));
  }
  return d;
}

Result<std::vector<SshareField>> SshareFields(const SshareOptions& o, bool fair_tree) {
  std::vector<std::string> names = o.fields;
  if (names.empty()) {
    const std::string part = o.partitions ? "P," : "";
    if (o.long_list) {
      names = SplitNonEmpty("A,User," + part + "RawShares,NormShares,RawUsage,NormUsage,Eff," +
                            (fair_tree ? "Fairshare,LevelFS," : "Fairshare,") +
                            "GrpTRESMins,TRESRunMins");
    } else {
      names = SplitNonEmpty("A,User," + part + "RawShares,NormShares,RawUsage,Eff,Fairshare");
    }
  }
  std::vector<SshareField> out;
  for (std::string name : names) {
    int width = 0;
    if (size_t pct = name.find('%'); pct != std::string::npos) {
      width = std::atoi(name.c_str() + pct + 1);
      name.resize(pct);
    }
    const SshareField* found = nullptr;
    for (const SshareField& f : Fields()) {
      if (name.size() <= f.name.size() && SameName(f.name.substr(0, name.size()), name)) {
        found = &f;
        break;
      }
    }
    if (found == nullptr) {
      return Status::InvalidArgument("Invalid field requested: \"" + name + "\"");
    }
    SshareField f = *found;
    if (width != 0) f.width = width;
    out.push_back(f);
  }
  return out;
}

std::string SshareHelpFormat() {
  std::string out;
  int i = 0;
  for (const SshareField& f : Fields()) {
    if ((i & 3) != 0) {
      out += " ";
    } else if (i != 0) {
      out += "\n";
    }
    char buf[64];
    std::snprintf(buf, sizeof(buf), "%-17s", f.name.c_str());
    out += buf;
    ++i;
  }
  return out + "\n";
}

std::vector<const SshareRow*> SelectSshareRows(const SshareOptions& o, const SshareData& d) {
  std::vector<const SshareRow*> out;
  for (const SshareRow& r : d.rows) {
    const bool user = !r.user.empty();
    if (user && !o.all_users && !o.users.empty() && !InList(o.users, r.user)) continue;
    if (!o.accounts.empty() && !InList(o.accounts, r.account)) continue;
    if (o.users_only && !user) continue;
    out.push_back(&r);
  }
  return out;
}

std::string RenderSshare(const SshareOptions& o, const std::vector<SshareField>& fields,
                         const SshareData& d) {
  const bool parsable = o.parsable != 0;
  auto end_of = [&](size_t i) {
    if (!parsable) return std::string(" ");
    return o.parsable == 2 && i + 1 == fields.size() ? std::string() : std::string("|");
  };
  std::string out;
  if (!o.no_header) {
    for (size_t i = 0; i < fields.size(); ++i) {
      const SshareField& f = fields[i];
      std::string name = f.name;
      if (!parsable)
        name = Justify(name.substr(0, static_cast<size_t>(std::abs(f.width))), f.width);
      out += name + end_of(i);
    }
    out += "\n";
    if (!parsable) {
      for (const SshareField& f : fields) out += std::string(std::abs(f.width), '-') + " ";
      out += "\n";
    }
  }
  TreeNames names;
  for (const SshareRow* r : SelectSshareRows(o, d)) {
    for (size_t i = 0; i < fields.size(); ++i) {
      out += Fit(ValueOf(fields[i].name, *r, d, names), fields[i].width, parsable) + end_of(i);
    }
    out += "\n";
  }
  return out;
}

}  // namespace berth::slurm
