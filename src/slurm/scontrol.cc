// scontrol's records and update arguments (Slurm 22.05: src/api/job_info.c, node_info.c,
// partition_info.c slurm_sprint_*; src/scontrol/update_job.c, update_node.c).
#include "slurm/scontrol.h"

#include <algorithm>
#include <charconv>
#include <map>
#include <nlohmann/json.hpp>
#include <set>

#include "common/hostlist.h"
#include "common/slurm_time.h"
#include "common/strings.h"
#include "common/units.h"

namespace berth::slurm {
namespace {

using nlohmann::json;

// How one record kind is laid out: the keys that begin a new line, and the keys Slurm prints
// with a blank after the value ("Comment=%s ").
struct Layout {
  std::set<std::string_view> line_starts;
  std::set<std::string_view> trailing_blank;
  bool end_with_line_break = false;  // jobs end with one more separator before the newline
};

const Layout& JobLayout() {
  static const Layout kLayout = {
      {"UserId",        "Priority",    "JobState",     "Requeue",     "DerivedExitCode",
       "RunTime",       "SubmitTime",  "AccrueTime",   "StartTime",   "SuspendTime",
       "Partition",     "ReqNodeList", "NodeList",     "BatchHost",   "NumNodes",
       "TRES",          "Socks/Node",  "MinCPUsNode",  "Features",    "Reservation",
       "OverSubscribe", "Command",     "WorkDir",      "Comment",     "StdErr",
       "StdIn",         "StdOut",      "Switches",     "Power",       "KillOInInvalidDependent",
       "CpusPerTres",   "MemPerTres",  "TresPerJob",   "TresPerNode", "TresPerSocket",
       "TresPerTask",   "MailUser",    "NtasksPerTRES"},
      {"Comment"},
      true};
  return kLayout;
}

const Layout& NodeLayout() {
  static const Layout kLayout = {
      {"CPUAlloc", "AvailableFeatures", "ActiveFeatures", "Gres", "NodeAddr", "RealMemory", "State",
       "Partitions", "BootTime", "LastBusyTime", "CfgTRES", "AllocTRES", "CapWatts", "CurrentWatts",
       "ExtSensorsJoules", "Reason"},
      {"CoresPerSocket"},
      false};
  return kLayout;
}

const Layout& PartitionLayout() {
  static const Layout kLayout = {
      {"AllowGroups", "AllocNodes", "DefaultTime", "MaxNodes", "Nodes", "PriorityJobFactor",
       "OverTimeLimit", "State", "JobDefaults", "DefMemPerNode", "TRES"},
      {},
      false};
  return kLayout;
}

std::string FormatRecord(const KeyValues& fields, const Layout& layout, bool one_liner) {
  const std::string line_end = one_liner ? " " : "\n   ";
  std::string out;
  bool pending_blank = false;  // the last value asked for a blank after it
  for (size_t i = 0; i < fields.size(); ++i) {
    const auto& [key, value] = fields[i];
    if (i > 0) {
      if (pending_blank) out += ' ';
      out += layout.line_starts.count(key) ? line_end : std::string(pending_blank ? "" : " ");
    }
    out += key + "=" + value;
    pending_blank = layout.trailing_blank.count(key) > 0;
  }
  if (pending_blank) out += ' ';
  if (layout.end_with_line_break) out += line_end;
  out += one_liner ? "\n" : "\n\n";
  return out;
}

std::string Join(const json& list, const char* sep = ",") {
  std::string out;
  if (!list.is_array()) return out;
  for (const json& item : list) {
    if (!item.is_string()) continue;
    if (!out.empty()) out += sep;
    out += item.get<std::string>();
  }
  return out;
}

std::string OrNullText(const std::string& s) {
  return s.empty() ? "(null)" : s;
}

// "gpu:a100:8,shard:4" from a node's per-device GPU types and other gres.
std::string NodeGres(const json& node) {
  std::vector<std::pair<std::string, int>> by_type;  // in first-seen order
  if (node.contains("gpus") && node.at("gpus").is_array()) {
    for (const json& g : node.at("gpus")) {
      std::string type = g.is_string() ? g.get<std::string>() : "";
      auto it = std::find_if(by_type.begin(), by_type.end(),
                             [&](const auto& p) { return p.first == type; });
      if (it == by_type.end()) {
        by_type.emplace_back(type, 1);
      } else {
        ++it->second;
      }
    }
  }
  std::string out;
  for (const auto& [type, count] : by_type) {
    if (!out.empty()) out += ",";
    out += "gpu:" + (type.empty() ? "" : type + ":") + std::to_string(count);
  }
  if (node.contains("gres") && node.at("gres").is_object()) {
    for (const auto& [name, count] : node.at("gres").items()) {
      if (name == "gpu" || !count.is_number_integer()) continue;
      if (!out.empty()) out += ",";
      out += name + ":" + std::to_string(count.get<int64_t>());
    }
  }
  return out;
}

// Slurm's state names with its flags: "*" when the node does not respond, "+DRAIN".
std::string NodeStateText(const json& node) {
  std::string state = node.value("state", "UNKNOWN");
  if (state == "DRAINED") state = "IDLE+DRAIN";
  if (state == "DRAINING") state = "MIXED+DRAIN";
  // An active reservation's flags (Slurm's node state flags MAINT and RESERVED).
  std::string resv = node.value("reservation_state", "");
  if (!resv.empty()) state += "+" + resv;
  if (!node.value("agent_connected", false)) {
    size_t plus = state.find('+');
    state.insert(plus == std::string::npos ? state.size() : plus, "*");
  }
  return state;
}

// As Slurm's TRES strings: FormatMemoryMiB's exact units ("62.50G").
std::string TresMemText(int64_t mib) {
  return FormatMemoryMiB(mib);
}

std::string NodeTres(int64_t cpus, int64_t mem_mib, int64_t gpus) {
  if (cpus <= 0 && mem_mib <= 0 && gpus <= 0) return "";
  std::string t = "cpu=" + std::to_string(cpus);
  if (mem_mib > 0) t += ",mem=" + TresMemText(mem_mib);
  t += ",billing=" + std::to_string(cpus);
  if (gpus > 0) t += ",gres/gpu=" + std::to_string(gpus);
  return t;
}

std::string LimitText(const json& v, const char* unlimited) {
  if (!v.is_number_integer()) return unlimited;
  int64_t n = v.get<int64_t>();
  return n <= 0 || n >= kInfinite ? unlimited : FormatTimeLimit(n);
}

// "Key=Value" (the value may itself hold '='); the key in lower case.
std::pair<std::string, std::string> SplitArg(const std::string& arg) {
  size_t eq = arg.find('=');
  if (eq == std::string::npos) return {ToLower(arg), ""};
  return {ToLower(arg.substr(0, eq)), arg.substr(eq + 1)};
}

Result<int64_t> ParseInt(std::string_view text, const std::string& what) {
  int64_t v = 0;
  const char* end = text.data() + text.size();
  auto [p, ec] = std::from_chars(text.data(), end, v);
  if (text.empty() || ec != std::errc() || p != end) {
    return Status::InvalidArgument("Invalid " + what + " value: " + std::string(text));
  }
  return v;
}

Result<Duration> ParseTimeLimitArg(const std::string& value, Duration current, const char* what) {
  if (!value.empty() && (value[0] == '+' || value[0] == '-')) {
    Result<Duration> delta = ParseTimeLimit(value.substr(1));
    if (!delta.ok() || *delta >= kInfinite || current >= kInfinite || current <= 0) {
      return Status::InvalidArgument(std::string("Invalid ") + what + " value: " + value);
    }
    Duration limit = value[0] == '+' ? current + *delta : current - *delta;
    if (limit <= 0)
      return Status::InvalidArgument(std::string("Invalid ") + what + " value: " + value);
    return limit;
  }
  Result<Duration> limit = ParseTimeLimit(value);
  if (!limit.ok())
    return Status::InvalidArgument(std::string("Invalid ") + what + " value: " + value);
  return *limit;
}

Status ApplyJobKey(const std::string& key, const std::string& value, const std::string& arg,
                   Duration current_limit, json& body) {
  if (key == "timelimit") {
    BERTH_ASSIGN_OR_RETURN(Duration d, ParseTimeLimitArg(value, current_limit, "TimeLimit"));
    body["time_limit"] = std::min<Duration>(d, kInfinite);  // kInfinite: UNLIMITED
  } else if (key == "timemin") {
    BERTH_ASSIGN_OR_RETURN(Duration d, ParseTimeLimitArg(value, current_limit, "TimeMin"));
    body["time_min"] = d;
  } else if (key == "nice") {
    BERTH_ASSIGN_OR_RETURN(int64_t n, ParseInt(value.empty() ? "100" : value, "Nice"));
    if (n < -2147483645 || n > 2147483645) {
      return Status::InvalidArgument(
          "Invalid nice value, must be between -2147483645 and "
          "2147483645");
    }
    body["nice"] = n;
  } else if (key == "partition") {
    body["partition"] = value;
  } else if (key == "numnodes" || key == "reqnodes") {
    body["num_nodes"] = value;
  } else if (key == "features" || key == "constraint") {
    body["features"] = value;
  } else if (key == "qos") {
    body["qos"] = value;
  } else if (key == "account") {
    body["account"] = value;
  } else if (key == "comment") {
    body["comment"] = value;
  } else if (key == "numtasks") {
    body["num_tasks"] = value;
  } else if (key == "name" || key == "jobname") {
    body["name"] = value;
  } else if (key == "licenses") {
    body["licenses"] = value;
  } else if (key == "dependency") {
    body["dependency"] = value;
  } else if (key == "reservation" || key == "reservationname") {
    body["reservation"] = value;
  } else {
    return Status::InvalidArgument("Update of this parameter is not supported: " + arg);
  }
  return Status::Ok();
}

}  // namespace

std::string FormatScontrolJob(const JobView& v, bool one_liner, bool details) {
  return FormatRecord(ScontrolJobFields(v, details), JobLayout(), one_liner);
}

KeyValues ScontrolNodeFields(const json& n) {
  KeyValues f;
  auto add = [&](std::string k, std::string v) { f.emplace_back(std::move(k), std::move(v)); };
  auto num = [&](const char* key) {
    return n.contains(key) && n.at(key).is_number_integer() ? n.at(key).get<int64_t>() : int64_t{0};
  };
  const bool up = n.value("agent_connected", false);
  const int64_t cpus = num("cpus");
  const int64_t gpus = n.contains("gpus") && n.at("gpus").is_array()
                           ? static_cast<int64_t>(n.at("gpus").size())
                           : num("gpus");
  std::string name = n.value("name", "");
  std::string features = Join(n.value("features", json::array()));
  std::string gres = NodeGres(n);
  add("NodeName", name);
  add("CoresPerSocket", std::to_string(std::max<int64_t>(1, num("cores_per_socket"))));
  add("CPUAlloc", std::to_string(num("alloc_cpus")));
  add("CPUEfctv", std::to_string(cpus));
  add("CPUTot", std::to_string(cpus));
  add("CPULoad", "N/A");
  add("AvailableFeatures", OrNullText(features));
  add("ActiveFeatures", OrNullText(features));
  add("Gres", OrNullText(gres));
  add("NodeAddr", name);
  add("NodeHostName", name);
  add("Version", up ? "berth" : "(null)");
  add("RealMemory", std::to_string(num("mem_mib")));
  add("AllocMem", std::to_string(num("alloc_mem_mib")));
  add("FreeMem", "N/A");
  add("Sockets", std::to_string(std::max<int64_t>(1, num("sockets"))));
  add("Boards", "1");
  add("State", NodeStateText(n));
  add("ThreadsPerCore", std::to_string(std::max<int64_t>(1, num("threads_per_core"))));
  add("TmpDisk", "0");
  add("Weight", std::to_string(std::max<int64_t>(1, num("weight"))));
  add("Owner", "N/A");
  add("MCS_label", "N/A");
  add("Partitions", Join(n.value("partitions", json::array())));
  add("BootTime", "None");
  add("SlurmdStartTime", "None");
  Time seen = num("last_seen");
  add("LastBusyTime", seen > 0 ? SlurmTimeText(seen) : "Unknown");
  add("CfgTRES", NodeTres(cpus, num("mem_mib"), gpus));
  add("AllocTRES", NodeTres(num("alloc_cpus"), num("alloc_mem_mib"), num("alloc_gpus")));
  add("CapWatts", "n/a");
  add("CurrentWatts", "0");
  add("AveWatts", "0");
  add("ExtSensorsJoules", "n/s");
  add("ExtSensorsWatts", "0");
  add("ExtSensorsTemp", "n/s");
  std::string reason = n.value("reason", "");
  if (!reason.empty()) add("Reason", reason);
  return f;
}

std::string FormatScontrolNode(const json& node, bool one_liner) {
  return FormatRecord(ScontrolNodeFields(node), NodeLayout(), one_liner);
}

KeyValues ScontrolPartitionFields(const json& p) {
  KeyValues f;
  auto add = [&](std::string k, std::string v) { f.emplace_back(std::move(k), std::move(v)); };
  auto num = [&](const char* key) {
    return p.contains(key) && p.at(key).is_number_integer() ? p.at(key).get<int64_t>() : int64_t{0};
  };
  add("PartitionName", p.value("name", ""));
  add("AllowGroups", "ALL");
  add("AllowAccounts", "ALL");
  add("AllowQos", "ALL");
  add("AllocNodes", "ALL");
  add("Default", p.value("default", false) ? "YES" : "NO");
  add("QoS", "N/A");
  add("DefaultTime", LimitText(p.value("default_time", json()), "NONE"));
  add("DisableRootJobs", "NO");
  add("ExclusiveUser", "NO");
  add("GraceTime", "0");
  add("Hidden", "NO");
  add("MaxNodes", num("max_nodes") > 0 ? std::to_string(num("max_nodes")) : "UNLIMITED");
  add("MaxTime", LimitText(p.value("max_time", json()), "UNLIMITED"));
  add("MinNodes", "0");
  add("LLN", "NO");
  add("MaxCPUsPerNode", "UNLIMITED");
  add("Nodes", OrNullText(p.value("nodes", "")));
  add("PriorityJobFactor", "1");
  add("PriorityTier", std::to_string(p.contains("priority_tier") ? num("priority_tier") : 1));
  add("RootOnly", "NO");
  add("ReqResv", "NO");
  add("OverSubscribe", p.value("oversubscribe", "NO"));
  add("OverTimeLimit", "NONE");
  add("PreemptMode", p.value("preempt_mode", "OFF"));
  add("State", p.value("state", "UP"));
  add("TotalCPUs", std::to_string(num("total_cpus")));
  add("TotalNodes", std::to_string(num("total_nodes")));
  add("SelectTypeParameters", "NONE");
  add("JobDefaults", "(null)");
  add("DefMemPerNode", "UNLIMITED");
  add("MaxMemPerNode", "UNLIMITED");
  std::string tres = "cpu=" + std::to_string(num("total_cpus"));
  if (num("total_mem_mib") > 0) tres += ",mem=" + TresMemText(num("total_mem_mib"));
  tres += ",node=" + std::to_string(num("total_nodes")) +
          ",billing=" + std::to_string(num("total_cpus"));
  if (num("total_gpus") > 0) tres += ",gres/gpu=" + std::to_string(num("total_gpus"));
  add("TRES", tres);
  return f;
}

std::string FormatScontrolPartition(const json& partition, bool one_liner) {
  return FormatRecord(ScontrolPartitionFields(partition), PartitionLayout(), one_liner);
}

std::string FormatScontrolConfig(const KeyValues& pairs, Time now) {
  std::string out = "Configuration data as of " + SlurmTimeText(now) + "\n";
  for (const auto& [key, value] : pairs) {
    std::string k = key;
    if (k.size() < 23) k.resize(23, ' ');
    out += k + " = " + value + "\n";
  }
  return out;
}

bool NeedsCurrentTimeLimit(const std::vector<std::string>& args) {
  for (const std::string& a : args) {
    auto [key, value] = SplitArg(a);
    if ((key == "timelimit" || key == "timemin") && !value.empty() &&
        (value[0] == '+' || value[0] == '-')) {
      return true;
    }
  }
  return false;
}

Result<std::pair<std::string, json>> ParseJobUpdate(const std::vector<std::string>& args,
                                                    Duration current_limit) {
  std::string job_id;
  json body = json::object();
  for (const std::string& arg : args) {
    auto [key, value] = SplitArg(arg);
    if (arg.find('=') == std::string::npos) {
      return Status::InvalidArgument("Invalid input: " + arg + "\nRequest aborted");
    }
    if (key == "jobid") {
      job_id = std::string(Trim(value));
      continue;
    }
    BERTH_RETURN_IF_ERROR(ApplyJobKey(key, value, arg, current_limit, body));
  }
  if (job_id.empty()) return Status::InvalidArgument("No job identification provided");
  if (body.empty()) return Status::InvalidArgument("No changes specified");
  return std::make_pair(job_id, body);
}

Result<NodeUpdate> ParseNodeUpdate(const std::vector<std::string>& args) {
  NodeUpdate u;
  std::string names, state;
  for (const std::string& arg : args) {
    if (arg.find('=') == std::string::npos) {
      return Status::InvalidArgument("Invalid input: " + arg + "\nRequest aborted");
    }
    auto [key, value] = SplitArg(arg);
    if (key == "nodename") {
      names = value;
    } else if (key == "state") {
      state = ToLower(value);
    } else if (key == "reason") {
      u.reason = value;
    } else {
      return Status::InvalidArgument("Update of this parameter is not supported: " + arg);
    }
  }
  if (names.empty()) return Status::InvalidArgument("No node name specified");
  BERTH_ASSIGN_OR_RETURN(u.nodes, hostlist::Expand(names));
  if (state == "drain") {
    u.action = "drain";
  } else if (state == "down") {
    u.action = "down";
  } else if (state == "resume" || state == "undrain" || state == "idle") {
    u.action = "resume";
  } else if (state.empty()) {
    return Status::InvalidArgument("No changes specified");
  } else {
    return Status::InvalidArgument("Invalid node state specified");
  }
  if ((u.action == "drain" || u.action == "down") && u.reason.empty()) {
    return Status::InvalidArgument(
        "You must specify a reason when DOWNING or DRAINING a node. Request denied");
  }
  return u;
}

}  // namespace berth::slurm
