// sinfo's fields: for each -o letter and -O name, its header, its value for a line, and how it
// groups nodes (Slurm 22.05 src/sinfo/print.c and opts.c, checked against sinfo 22.05.8).
#include <algorithm>
#include <cctype>
#include <functional>

#include "common/hostlist.h"
#include "common/slurm_time.h"
#include "common/strings.h"
#include "slurm/sinfo_internal.h"
#include "slurm/squeue_view.h"

namespace berth::slurm::sinfo_internal {
namespace {

Cell Text(std::string s) {
  return Cell{std::move(s), true};
}

std::string Join(const std::vector<std::string>& items) {
  std::string out;
  for (const std::string& s : items) out += (out.empty() ? "" : ",") + s;
  return out;
}

// sinfo's _build_min_max_*_string without a range: "64", or "32+" when the nodes differ.
std::string MinPlus(const Record& r, const std::function<int64_t(const SinfoNode&)>& get) {
  if (r.nodes.empty()) return "0";
  int64_t lo = get(*r.nodes.front()), hi = lo;
  for (const SinfoNode* n : r.nodes) {
    lo = std::min(lo, get(*n));
    hi = std::max(hi, get(*n));
  }
  return lo == hi ? std::to_string(lo) : std::to_string(lo) + "+";
}

std::string NodeList(const Record& r) {
  std::vector<std::string> names;
  for (const SinfoNode* n : r.nodes) names.push_back(n->name);
  return hostlist::CompressSorted(names);
}

const SinfoNode* First(const Record& r) {
  return r.nodes.empty() ? nullptr : r.nodes.front();
}

// Node counts by what sinfo calls allocated (CPUs in use), idle, and other (down, drained, not
// responding).
struct Counts {
  int64_t nodes_alloc = 0, nodes_idle = 0, nodes_other = 0;
  int64_t cpus_alloc = 0, cpus_idle = 0, cpus_other = 0, cpus_total = 0;
};

bool Unavailable(const SinfoNode& n) {
  return !n.responding || n.state == "DOWN" || n.state == "DRAINED" || n.state == "DRAINING";
}

Counts CountsOf(const Record& r) {
  Counts c;
  for (const SinfoNode* n : r.nodes) {
    c.cpus_total += n->cpus;
    c.cpus_alloc += n->alloc_cpus;
    if (Unavailable(*n)) {
      c.cpus_other += n->cpus - n->alloc_cpus;
    } else {
      c.cpus_idle += n->cpus - n->alloc_cpus;
    }
    if (n->alloc_cpus > 0) {
      ++c.nodes_alloc;
    } else if (Unavailable(*n)) {
      ++c.nodes_other;
    } else {
      ++c.nodes_idle;
    }
  }
  return c;
}

Cell PartitionValue(const Record& r, int width) {
  if (r.part == nullptr) return Text("n/a");
  return Text(PartitionLabel(*r.part, width));
}

std::string AvailText(const SinfoPartition& p) {
  if (p.state == "UP") return "up";
  if (p.state == "DOWN") return "down";
  if (p.state == "DRAIN") return "drain";
  if (p.state == "INACTIVE") return "inact";
  return "unknown";
}

std::string SecsText(Duration d) {
  // sinfo's _print_secs: no "INVALID" limit, unlike squeue's.
  if (d < 0) return "0:00";
  int64_t days = d / 86400, hours = d / 3600 % 24, mins = d / 60 % 60, secs = d % 60;
  char buf[64];
  if (days > 0) {
    std::snprintf(buf, sizeof(buf), "%lld-%02lld:%02lld:%02lld", static_cast<long long>(days),
                  static_cast<long long>(hours), static_cast<long long>(mins),
                  static_cast<long long>(secs));
  } else if (hours > 0) {
    std::snprintf(buf, sizeof(buf), "%lld:%02lld:%02lld", static_cast<long long>(hours),
                  static_cast<long long>(mins), static_cast<long long>(secs));
  } else {
    std::snprintf(buf, sizeof(buf), "%lld:%02lld", static_cast<long long>(mins),
                  static_cast<long long>(secs));
  }
  return buf;
}

std::string MaxTimeText(const SinfoPartition& p) {
  return p.max_time >= kInfinite ? "infinite" : SecsText(p.max_time);
}

std::string DefaultTimeText(const SinfoPartition& p) {
  if (p.default_time == kNoTime) return "n/a";
  return p.default_time >= kInfinite ? "infinite" : SecsText(p.default_time);
}

std::string SizeText(const SinfoPartition& p) {
  if (p.max_nodes <= 0) return "1-infinite";
  return p.max_nodes == 1 ? "1" : "1-" + std::to_string(p.max_nodes);
}

// A partition attribute for a line that may have no partition.
Cell PartAttr(const Record& r, std::string (*f)(const SinfoPartition&)) {
  return Text(r.part == nullptr ? "n/a" : f(*r.part));
}

std::string Features(const SinfoNode& n) {
  return n.features.empty() ? "(null)" : Join(n.features);
}

std::string Reason(const SinfoNode& n) {
  return n.reason.empty() ? "none" : n.reason;
}

std::string ReasonTime(const SinfoNode& n) {
  return n.reason_time == kNoTime ? "Unknown" : SqueueTimeText(n.reason_time);
}

std::string ReasonUser(const SinfoNode& n) {
  return n.reason_user.empty() ? "Unknown" : n.reason_user;
}

std::string ReasonUserLong(const SinfoNode& n) {
  if (n.reason_user.empty()) return "Unknown";
  return n.reason_user + "(" + (n.reason_uid >= 0 ? std::to_string(n.reason_uid) : "?") + ")";
}

std::string Sct(const Record& r) {
  return MinPlus(r, [](const SinfoNode& n) { return n.sockets; }) + ":" +
         MinPlus(r, [](const SinfoNode& n) { return n.cores; }) + ":" +
         MinPlus(r, [](const SinfoNode& n) { return n.threads; });
}

Cell FromNode(const Record& r, std::string (*f)(const SinfoNode&)) {
  const SinfoNode* n = First(r);
  return Text(n == nullptr ? "n/a" : f(*n));
}

std::string StateComplete(const SinfoNode& n) {
  std::string s = NodeStateLong(n);
  if (!s.empty() && (s.back() == '*' || s.back() == '~' || s.back() == '#' || s.back() == '%')) {
    s.pop_back();
  }
  if (n.state.find("POWERED_DOWN") != std::string::npos) s += "+powered_down";
  if (n.state.find("POWERING_UP") != std::string::npos) s += "+powering_up";
  if (n.state.find("POWERING_DOWN") != std::string::npos) s += "+powering_down";
  if (!n.responding) s += "+not_responding";
  return s;
}

std::string Num(int64_t v) {
  return std::to_string(v);
}

const std::vector<SinfoField>& Fields() {
  using R = const Record&;
  static const std::vector<SinfoField> kFields = {
      {'a',
       {"available"},
       "AVAIL",
       [](R r, int) { return PartAttr(r, AvailText); },
       Match::kPartition,
       nullptr,
       AvailText},
      {'A',
       {"nodeai"},
       "NODES(A/I)",
       [](R r, int) {
         Counts c = CountsOf(r);
         return Text(Num(c.nodes_alloc) + "/" + Num(c.nodes_idle));
       },
       Match::kNone},
      {'b',
       {"features_act"},
       "ACTIVE_FEATURES",
       [](R r, int) { return FromNode(r, Features); },
       Match::kNode,
       Features},
      {'B',
       {"maxcpuspernode"},
       "MAX_CPUS_PER_NODE",
       [](R, int) { return Text("UNLIMITED"); },
       Match::kPartition,
       nullptr,
       [](const SinfoPartition&) { return std::string("UNLIMITED"); }},
      {'c',
       {"cpus"},
       "CPUS",
       [](R r, int) { return Text(MinPlus(r, [](const SinfoNode& n) { return n.cpus; })); },
       Match::kExact,
       [](const SinfoNode& n) { return Num(n.cpus); }},
      {'C',
       {"cpusstate"},
       "CPUS(A/I/O/T)",
       [](R r, int) {
         Counts c = CountsOf(r);
         return Text(Num(c.cpus_alloc) + "/" + Num(c.cpus_idle) + "/" + Num(c.cpus_other) + "/" +
                     Num(c.cpus_total));
       },
       Match::kExact,
       [](const SinfoNode& n) { return Num(n.cpus); }},
      {'d', {"disk"}, "TMP_DISK", [](R, int) { return Text("0"); }, Match::kNone},
      {'D',
       {"nodes"},
       "NODES",
       [](R r, int) { return Text(Num(static_cast<int64_t>(r.nodes.size()))); },
       Match::kNone},
      {'e', {"freemem"}, "FREE_MEM", [](R, int) { return Text("N/A"); }, Match::kNone},
      {'E',
       {"reason"},
       "REASON",
       [](R r, int) { return FromNode(r, Reason); },
       Match::kNode,
       Reason},
      {'f',
       {"features"},
       "AVAIL_FEATURES",
       [](R r, int) { return FromNode(r, Features); },
       Match::kNode,
       Features},
      {'F',
       {"nodeaiot"},
       "NODES(A/I/O/T)",
       [](R r, int) {
         Counts c = CountsOf(r);
         return Text(Num(c.nodes_alloc) + "/" + Num(c.nodes_idle) + "/" + Num(c.nodes_other) + "/" +
                     Num(static_cast<int64_t>(r.nodes.size())));
       },
       Match::kNone},
      {'g',
       {"groups"},
       "GROUPS",
       [](R r, int) { return Text(r.part ? "all" : "n/a"); },
       Match::kNone},
      {'G',
       {"gres"},
       "GRES",
       [](R r, int) { return FromNode(r, NodeGres); },
       Match::kNode,
       NodeGres},
      {'h',
       {"oversubscribe", "share"},
       "OVERSUBSCRIBE",
       [](R r, int) { return Text(r.part ? "NO" : "n/a"); },
       Match::kNone},
      {'H',
       {"timestamp"},
       "TIMESTAMP",
       [](R r, int) { return FromNode(r, ReasonTime); },
       Match::kNode,
       ReasonTime},
      {'I',
       {"priorityjobfactor"},
       "PRIO_JOB_FACTOR",
       [](R, int) { return Text("1"); },
       Match::kNone},
      {'l',
       {"time"},
       "TIMELIMIT",
       [](R r, int) { return PartAttr(r, MaxTimeText); },
       Match::kPartition,
       nullptr,
       MaxTimeText},
      {'L',
       {"defaulttime"},
       "DEFAULTTIME",
       [](R r, int) { return PartAttr(r, DefaultTimeText); },
       Match::kPartition,
       nullptr,
       DefaultTimeText},
      {'m',
       {"memory"},
       "MEMORY",
       [](R r, int) { return Text(MinPlus(r, [](const SinfoNode& n) { return n.mem_mib; })); },
       Match::kExact,
       [](const SinfoNode& n) { return Num(n.mem_mib); }},
      {'M', {"preemptmode"}, "PREEMPT_MODE", [](R, int) { return Text("OFF"); }, Match::kNone},
      {'n',
       {"nodehost"},
       "HOSTNAMES",
       [](R r, int) { return Text(NodeList(r)); },
       Match::kNone,
       nullptr,
       nullptr,
       false},
      {'N',
       {"nodelist"},
       "NODELIST",
       [](R r, int) { return Text(NodeList(r)); },
       Match::kNone,
       nullptr,
       nullptr,
       false},
      {'o',
       {"nodeaddr"},
       "NODE_ADDR",
       [](R r, int) { return Text(NodeList(r)); },
       Match::kNone,
       nullptr,
       nullptr,
       false},
      {'O', {"cpusload"}, "CPU_LOAD", [](R, int) { return Text("N/A"); }, Match::kNone},
      {'p',
       {"prioritytier", "priority"},
       "PRIO_TIER",
       [](R r, int) {
         return PartAttr(r, [](const SinfoPartition& p) { return Num(p.priority_tier); });
       },
       Match::kPartition,
       nullptr,
       [](const SinfoPartition& p) { return Num(p.priority_tier); }},
      {'P',
       {"partition"},
       "PARTITION",
       PartitionValue,
       Match::kPartition,
       nullptr,
       [](const SinfoPartition& p) { return p.name; }},
      {'r', {"root"}, "ROOT", [](R r, int) { return Text(r.part ? "no" : "n/a"); }, Match::kNone},
      {'R',
       {"partitionname"},
       "PARTITION",
       [](R r, int) { return Text(r.part ? r.part->name : "n/a"); },
       Match::kPartition,
       nullptr,
       [](const SinfoPartition& p) { return p.name; }},
      {'s',
       {"size"},
       "JOB_SIZE",
       [](R r, int) { return PartAttr(r, SizeText); },
       Match::kPartition,
       nullptr,
       SizeText},
      {'S',
       {"allocnodes"},
       "ALLOCNODES",
       [](R r, int) { return Text(r.part ? "all" : "n/a"); },
       Match::kNone},
      {'t',
       {"statecompact"},
       "STATE",
       [](R r, int) { return FromNode(r, NodeStateCompact); },
       Match::kNode,
       NodeStateCompact},
      {'T',
       {"statelong"},
       "STATE",
       [](R r, int) { return FromNode(r, NodeStateLong); },
       Match::kNode,
       NodeStateCompact},
      {'u',
       {"user"},
       "USER",
       [](R r, int) { return FromNode(r, ReasonUser); },
       Match::kNode,
       ReasonUser},
      {'U',
       {"userlong"},
       "USER",
       [](R r, int) { return FromNode(r, ReasonUserLong); },
       Match::kNode,
       ReasonUserLong},
      {'v', {"version"}, "VERSION", [](R, int) { return Text("N/A"); }, Match::kNone},
      {'V', {"cluster"}, "CLUSTER", [](R, int) { return Text("N/A"); }, Match::kNone},
      {'w',
       {"weight"},
       "WEIGHT",
       [](R r, int) { return Text(MinPlus(r, [](const SinfoNode& n) { return n.weight; })); },
       Match::kExact,
       [](const SinfoNode& n) { return Num(n.weight); }},
      {'X',
       {"sockets"},
       "SOCKETS",
       [](R r, int) { return Text(MinPlus(r, [](const SinfoNode& n) { return n.sockets; })); },
       Match::kExact,
       [](const SinfoNode& n) { return Num(n.sockets); }},
      {'Y',
       {"cores"},
       "CORES",
       [](R r, int) { return Text(MinPlus(r, [](const SinfoNode& n) { return n.cores; })); },
       Match::kExact,
       [](const SinfoNode& n) { return Num(n.cores); }},
      {'Z',
       {"threads"},
       "THREADS",
       [](R r, int) { return Text(MinPlus(r, [](const SinfoNode& n) { return n.threads; })); },
       Match::kExact,
       [](const SinfoNode& n) { return Num(n.threads); }},
      {'z',
       {"socketcorethread"},
       "S:C:T",
       [](R r, int) { return Text(Sct(r)); },
       Match::kExact,
       [](const SinfoNode& n) {
         return Num(n.sockets) + ":" + Num(n.cores) + ":" + Num(n.threads);
       }},
      // -O only.
      {0,
       {"allocmem"},
       "ALLOCMEM",
       [](R r, int) {
         return Text(MinPlus(r, [](const SinfoNode& n) { return n.alloc_mem_mib; }));
       },
       Match::kExact,
       [](const SinfoNode& n) { return Num(n.alloc_mem_mib); }},
      {0, {"comment"}, "COMMENT", [](R, int) { return Text("(null)"); }, Match::kNone},
      {0, {"extra"}, "EXTRA", [](R, int) { return Text("(null)"); }, Match::kNone},
      {0,
       {"gresused"},
       "GRES_USED",
       [](R r, int) { return FromNode(r, NodeGresUsed); },
       Match::kNode,
       NodeGresUsed},
      {0, {"port"}, "PORT", [](R, int) { return Text("0"); }, Match::kNone},
      {0,
       {"statecomplete"},
       "STATECOMPLETE",
       [](R r, int) { return FromNode(r, StateComplete); },
       Match::kNode,
       StateComplete},
  };
  return kFields;
}

}  // namespace

std::string PartitionLabel(const SinfoPartition& p, int width) {
  std::string name = p.name;
  if (!p.is_default) return name;
  // sinfo marks the default partition with '*', in place of the last character when the name
  // fills the field.
  if (width <= 0 || static_cast<int>(name.size()) < width) return name + "*";
  name[width - 1] = '*';
  return name;
}

const SinfoField* FindSinfoField(std::string_view key, bool percent_form) {
  if (percent_form) {
    if (key.size() != 1) return nullptr;
    for (const SinfoField& f : Fields()) {
      if (f.letter != 0 && f.letter == key[0]) return &f;
    }
    return nullptr;
  }
  std::string name = ToLower(key);
  for (const SinfoField& f : Fields()) {
    for (std::string_view n : f.names) {
      if (n == name) return &f;
    }
  }
  return nullptr;
}

}  // namespace berth::slurm::sinfo_internal

namespace berth::slurm {

bool IsSinfoLetter(std::string_view key) {
  return sinfo_internal::FindSinfoField(key, true) != nullptr;
}

bool IsSinfoFieldName(std::string_view name) {
  return sinfo_internal::FindSinfoField(name, false) != nullptr;
}

}  // namespace berth::slurm
