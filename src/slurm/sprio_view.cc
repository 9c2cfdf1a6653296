// sprio (Slurm 22.05 src/sprio/sprio.c, opts.c, print.c, sort.c).
#include "slurm/sprio_view.h"

#include <pwd.h>

#include <algorithm>
#include <charconv>
#include <cstdio>
#include <nlohmann/json.hpp>

namespace berth::slurm {
namespace {

using nlohmann::json;

std::map<std::string, double> Numbers(const json& o) {
  std::map<std::string, double> out;
  if (!o.is_object()) return out;
  for (const auto& [k, v] : o.items()) {
    if (v.is_number()) out[k] = v.get<double>();
  }
  return out;
}

SprioJob JobFromJson(const json& j) {
  SprioJob s;
  s.id = j.value("id", 0u);
  s.user = j.value("user", "");
  s.account = j.value("account", "");
  s.partition = j.value("partition", "");
  s.qos = j.value("qos", "");
  s.priority = j.value("priority", int64_t{0});
  s.nice = j.value("nice", 0);
  s.admin_set = j.value("admin_set", false);
  const json factors = j.value("factors", json::object());
  s.weighted = Numbers(factors);
  s.normalized = Numbers(j.value("normalized", json::object()));
  if (factors.contains("tres")) {
    const json& t = factors.at("tres");
    if (t.is_object()) {
      s.tres = Numbers(t);
    } else if (t.is_number() && t.get<double>() != 0) {
      s.tres[""] = t.get<double>();
    }
  }
  return s;
}

}  // namespace

Result<SprioData> SprioDataFromJson(const json& body) {
  if (!body.is_object() || !body.contains("jobs") || !body.at("jobs").is_array()) {
    return Status::InvalidArgument("the priority list has no \"jobs\"");
  }
  SprioData d;
  try {
    d.priority_type = body.value("priority_type", std::string("priority/multifactor"));
    d.multifactor = d.priority_type != "priority/basic";
    const json w = body.value("weights", json::object());
    for (const auto& [k, v] : w.items()) {
      if (v.is_number()) d.weights[k] = v.get<int64_t>();
    }
    if (w.contains("tres") && w.at("tres").is_object()) {
      for (const auto& [k, v] : w.at("tres").items()) {
        if (v.is_number()) d.tres_weights[k] = v.get<int64_t>();
      }
    }
    for (const json& j : body.at("jobs")) d.jobs.push_back(JobFromJson(j));
  } catch (const std::exception& e) {
    return Status::InvalidArgument(std::string("bad priority record: ") + e.what());
  }
  return d;
}

// ---- Fields

namespace {

int64_t Weight(const SprioData& d, const char* name) {
  auto it = d.weights.find(name);
  return it == d.weights.end() ? 0 : it->second;
}

double Get(const std::map<std::string, double>& m, const char* name) {
  auto it = m.find(name);
  return it == m.end() ? 0 : it->second;
}

std::string Whole(double v) {
  char buf[64];
  std::snprintf(buf, sizeof(buf), "%.0f", v);
  return buf;
}

std::string Norm(double v) {
  char buf[64];
  std::snprintf(buf, sizeof(buf), "%.7f", v);
  return buf;
}

std::string Fraction(double v) {
  char buf[64];
  std::snprintf(buf, sizeof(buf), "%16.14f", v);
  return buf;
}

// The TRES column: "cpu=120,mem=30" (weighted, whole) or normalized with two decimals.
std::string TresText(const SprioJob& j, const SprioData& d, bool normalized) {
  std::string out;
  for (const auto& [name, value] : j.tres) {
    if (value == 0) continue;
    std::string label = name;
    if (label.empty()) label = d.tres_weights.size() == 1 ? d.tres_weights.begin()->first : "tres";
    char buf[128];
    if (normalized) {
      auto w = d.tres_weights.find(label);
      double weight = w == d.tres_weights.end() || w->second == 0 ? 1 : w->second;
      std::snprintf(buf, sizeof(buf), "%s=%.2f", label.c_str(), value / weight);
    } else {
      std::snprintf(buf, sizeof(buf), "%s=%.0f", label.c_str(), value);
    }
    out += (out.empty() ? "" : ",") + std::string(buf);
  }
  return out;
}

std::string TresWeights(const SprioData& d) {
  std::string out;
  for (const auto& [name, w] : d.tres_weights) {
    out += (out.empty() ? "" : ",") + name + "=" + std::to_string(w);
  }
  return out;
}

// One line's subject: a job, or -w's weights line (job == nullptr).
struct Line {
  const SprioJob* job;
  const SprioData& d;
};

// A factor column: header, weight name (for -w and normalization) and JSON factor name.
struct Factor {
  char weighted, normalized;
  const char* header;
  const char* name;
};

constexpr Factor kFactors[] = {
    {'A', 'a', "AGE", "age"},
    {'B', 'b', "ASSOC", "assoc"},
    {'F', 'f', "FAIRSHARE", "fairshare"},
    {'J', 'j', "JOBSIZE", "jobsize"},
    {'P', 'p', "PARTITION", "partition"},
    {'Q', 'q', "QOS", "qos"},
};

const Factor* FindFactor(char c) {
  for (const Factor& f : kFactors) {
    if (f.weighted == c || f.normalized == c) return &f;
  }
  return nullptr;
}

std::string FactorValue(const Factor& f, bool normalized, const Line& l) {
  if (l.job == nullptr) return std::to_string(Weight(l.d, f.name));
  if (l.job->admin_set) return "0";
  if (!normalized) return Whole(Get(l.job->weighted, f.name));
  int64_t w = Weight(l.d, f.name);
  double v = w > 0 ? Get(l.job->weighted, f.name) / static_cast<double>(w) : 0;
  return Norm(v);
}

std::string Header(char c) {
  if (const Factor* f = FindFactor(c)) return f->header;
  switch (c) {
    case 'c':
      return "CLUSTER";
    case 'i':
      return "JOBID";
    case 'N':
      return "NICE";
    case 'r':
      return "PARTITION";
    case 'S':
      return "SITE";
    case 't':
    case 'T':
      return "TRES";
    case 'u':
      return "USER";
    case 'y':
    case 'Y':
      return "PRIORITY";
    default:
      return "";
  }
}

std::string Value(char c, const Line& l) {
  if (const Factor* f = FindFactor(c)) return FactorValue(*f, c == f->normalized, l);
  const SprioJob* j = l.job;
  switch (c) {
    case 'c':
      return j ? "berth" : "";
    case 'i':
      return j ? std::to_string(j->id) : "Weights";
    case 'N':
      return j ? (j->admin_set ? "0" : std::to_string(j->nice)) : "";
    case 'r':
      return j ? j->partition : "";
    case 'S':
      return j ? (j->admin_set ? "0" : Whole(Get(j->weighted, "site"))) : "1";
    case 't':
      return j ? (j->admin_set ? "" : TresText(*j, l.d, true)) : "";
    case 'T':
      return j ? (j->admin_set ? "" : TresText(*j, l.d, false)) : TresWeights(l.d);
    case 'u':
      return j ? j->user : "";
    case 'y':
      if (j == nullptr) return "";
      return Fraction(static_cast<double>(j->priority) /
                      (j->admin_set ? 1.0 : static_cast<double>(0xffffffffu)));
    case 'Y':
      return j ? std::to_string(j->priority) : "";
    default:
      return "";
  }
}

constexpr std::string_view kLetters = "aAbBcfFijJNpPqQrStTuyY";

}  // namespace

bool IsSprioLetter(std::string_view key) {
  return key.size() == 1 && kLetters.find(key[0]) != std::string_view::npos;
}

std::string SprioDefaultFormat(const SprioOptions& o, const SprioData& d) {
  if (o.long_list) return o.normalized ? kSprioNormLongFormat : kSprioLongFormat;
  std::string f = "%.15i %9r";
  if (o.users_given) f += " %.8u";
  f += o.normalized ? " %10y" : " %.10Y %.10S";
  for (const Factor& factor : kFactors) {
    if (Weight(d, factor.name) == 0) continue;
    f += o.normalized ? std::string(" %10") + factor.normalized
                      : std::string(" %.10") + factor.weighted;
  }
  if (!d.tres_weights.empty()) f += o.normalized ? " %20t" : " %.20T";
  return f;
}

// ---- Sorting (sprio's sort.c)

namespace {

template <typename T>
int Compare(const T& a, const T& b) {
  return a < b ? -1 : (b < a ? 1 : 0);
}

int CompareJobs(char key, const SprioJob& a, const SprioJob& b) {
  if (const Factor* f = FindFactor(key)) {
    return Compare(Get(a.weighted, f->name), Get(b.weighted, f->name));
  }
  switch (key) {
    case 'i':
      return Compare(a.id, b.id);
    case 'N':
      return Compare(a.nice, b.nice);
    case 'r':
      return Compare(a.partition, b.partition);
    case 'S':
      return Compare(Get(a.weighted, "site"), Get(b.weighted, "site"));
    case 'u':
      return Compare(a.user, b.user);
    case 'y':
    case 'Y':
      return Compare(a.priority, b.priority);
    default:
      return 0;
  }
}

bool Wanted(const SprioOptions& o, const SprioJob& j) {
  if (o.jobs_given && std::find(o.jobs.begin(), o.jobs.end(), j.id) == o.jobs.end()) return false;
  if (!o.partitions.empty() &&
      std::find(o.partitions.begin(), o.partitions.end(), j.partition) == o.partitions.end()) {
    return false;
  }
  if (o.users_given && std::find(o.users.begin(), o.users.end(), j.user) == o.users.end()) {
    struct passwd pw, *found = nullptr;
    char buf[4096];
    bool uid_match = getpwnam_r(j.user.c_str(), &pw, buf, sizeof(buf), &found) == 0 &&
                     found != nullptr &&
                     std::find(o.uids.begin(), o.uids.end(), found->pw_uid) != o.uids.end();
    if (!uid_match) return false;
  }
  return true;
}

}  // namespace

Status CheckSprioSortKeys(const std::vector<SortKey>& keys) {
  for (const SortKey& k : keys) {
    if (k.key.size() != 1 || !IsSprioLetter(k.key) || k.key == "c" || k.key == "t" ||
        k.key == "T") {
      return Status::InvalidArgument("Invalid sort specification: " + k.key);
    }
  }
  return Status::Ok();
}

std::string RenderSprio(const SprioOptions& o, const OutputFormat& format, const SprioData& d) {
  std::vector<const SprioJob*> jobs;
  for (const SprioJob& j : d.jobs) {
    if (Wanted(o, j)) jobs.push_back(&j);
  }
  if (o.jobs_given && !o.weights && jobs.empty()) {
    return "Unable to find jobs matching user/id(s) specified\n";
  }
  std::vector<SortKey> keys = ParseSortList(o.sort);
  std::stable_sort(jobs.begin(), jobs.end(), [&](const SprioJob* a, const SprioJob* b) {
    for (const SortKey& k : keys) {
      int c = k.key.size() == 1 ? CompareJobs(k.key[0], *a, *b) : 0;
      if (c != 0) return k.descending ? c > 0 : c < 0;
    }
    return false;
  });
  auto cell = [](const std::string& text) { return Cell{text, true}; };
  std::string out;
  if (!o.no_header) {
    out += RenderLine(format, [&](const FormatField& f) { return cell(Header(f.key[0])); });
    out += '\n';
  }
  auto line = [&](const SprioJob* j) {
    Line l{j, d};
    out += RenderLine(format, [&](const FormatField& f) { return cell(Value(f.key[0], l)); });
    out += '\n';
  };
  if (o.weights) {
    line(nullptr);
    return out;
  }
  for (const SprioJob* j : jobs) line(j);
  return out;
}

}  // namespace berth::slurm
