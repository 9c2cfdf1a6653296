// The native JSON form of a job (docs/formats/job-json.md), shared by the REST API and berth's
// JSON Lines traces: one table of keys, each with its checks and messages.
// nlohmann::json throws; every call into it stays inside DecodeJob's try block.
#include "api/job_json.h"

#include <algorithm>
#include <iterator>
#include <limits>
#include <nlohmann/json.hpp>
#include <optional>

#include "api/json_read.h"
#include "common/hostlist.h"
#include "common/strings.h"
#include "image/container_spec.h"

namespace berth::api {
namespace {

using nlohmann::json;

constexpr int64_t kInt32Max = std::numeric_limits<int32_t>::max();
constexpr int64_t kUint32Max = std::numeric_limits<uint32_t>::max();
// Memory in MiB: up to 2^40 MiB (an exbibyte) per node, CPU or GPU.
constexpr int64_t kMaxMemMib = INT64_C(1) << 40;

std::optional<int64_t> ParseInteger(std::string_view s) {
  if (s.empty() || s.size() > 18) return std::nullopt;
  int64_t v = 0;
  for (char c : s) {
    if (!IsDigit(c)) return std::nullopt;
    v = v * 10 + (c - '0');
  }
  return v;
}

// A list of names: a JSON array of strings, or one string with ',' between names.
Status GetNameList(const json& v, std::string_view key, std::vector<std::string>* out) {
  out->clear();
  auto add = [&](std::string_view name) -> Status {
    name = Trim(name);
    if (name.empty()) return KeyError(key, "empty name in the list");
    out->emplace_back(name);
    return Status::Ok();
  };
  if (v.is_string()) {
    std::string_view rest = v.get_ref<const std::string&>();
    while (true) {
      size_t comma = rest.find(',');
      BERTH_RETURN_IF_ERROR(add(rest.substr(0, comma)));
      if (comma == std::string_view::npos) break;
      rest.remove_prefix(comma + 1);
    }
    return Status::Ok();
  }
  if (!v.is_array()) return KeyError(key, "expected a string or an array of strings");
  for (const json& item : v) {
    if (!item.is_string())
      return KeyError(key, "expected strings in the array, got " + ShowJson(item));
    BERTH_RETURN_IF_ERROR(add(item.get_ref<const std::string&>()));
  }
  return Status::Ok();
}

// Node names: a Slurm hostlist ("gpu[01-04],cpu7") or an array of hostlists, expanded.
Status GetHostList(const json& v, std::string_view key, std::vector<std::string>* out) {
  out->clear();
  auto add = [&](const std::string& expr) -> Status {
    Result<std::vector<std::string>> names = hostlist::Expand(expr);
    if (!names.ok()) return KeyError(key, names.status().message());
    out->insert(out->end(), names->begin(), names->end());
    return Status::Ok();
  };
  if (v.is_string()) return add(v.get_ref<const std::string&>());
  if (!v.is_array()) return KeyError(key, "expected a hostlist string or an array of them");
  for (const json& item : v) {
    if (!item.is_string())
      return KeyError(key, "expected strings in the array, got " + ShowJson(item));
    BERTH_RETURN_IF_ERROR(add(item.get_ref<const std::string&>()));
  }
  return Status::Ok();
}

// {"name": count, ...}
Status GetCounts(const json& v, std::string_view key, std::vector<core::NamedCount>* out) {
  if (!v.is_object()) return KeyError(key, "expected an object of counts, like {\"shard\": 2}");
  out->clear();
  for (const auto& [name, count] : v.items()) {
    if (name.empty()) return KeyError(key, "empty name");
    core::NamedCount nc{name, 0};
    BERTH_RETURN_IF_ERROR(GetInt(count, std::string(key) + "." + name, 0, kInt32Max, &nc.count));
    out->push_back(std::move(nc));
  }
  return Status::Ok();
}

// "nodes": 2 (exactly two), "2-4" or "2".
Status SetNodes(const json& v, core::JobSpec& s) {
  if (!v.is_string()) {
    BERTH_RETURN_IF_ERROR(GetIntAs(v, "nodes", 1, kInt32Max, &s.min_nodes));
    s.max_nodes = s.min_nodes;
    return Status::Ok();
  }
  const std::string& text = v.get_ref<const std::string&>();
  std::string_view t = text;
  size_t dash = t.find('-');
  std::optional<int64_t> lo = ParseInteger(t.substr(0, dash));
  std::optional<int64_t> hi =
      dash == std::string_view::npos ? lo : ParseInteger(t.substr(dash + 1));
  if (!lo || !hi || *lo < 1 || *hi < *lo || *hi > kInt32Max) {
    return KeyError("nodes", "expected a count or a range like \"2-4\", got " + QuoteForMessage(t));
  }
  s.min_nodes = static_cast<int32_t>(*lo);
  s.max_nodes = static_cast<int32_t>(*hi);
  return Status::Ok();
}

// A duration that may be unlimited: seconds, or "UNLIMITED"/"INFINITE" (sbatch's 0 or
// "infinite" for --time and --time-min).
Status GetDuration(const json& v, const char* key, Duration* out) {
  if (v.is_string()) {
    const std::string& text = v.get_ref<const std::string&>();
    if (text == "UNLIMITED" || text == "INFINITE") {
      *out = kInfinite;
      return Status::Ok();
    }
  }
  return GetInt(v, key, 1, kMaxJsonNumber, out);
}

Status SetTimeLimit(const json& v, core::JobSpec& s) {
  return GetDuration(v, "time_limit", &s.time_limit);
}

Status SetHold(const json& v, core::JobSpec& s) {
  core::HoldKind& hold = s.hold;
  if (v.is_boolean()) {
    hold = v.get<bool>() ? core::HoldKind::kUser : core::HoldKind::kNone;
  } else if (v == "user") {
    hold = core::HoldKind::kUser;
  } else if (v == "admin") {
    hold = core::HoldKind::kAdmin;
  } else {
    return KeyError("hold", "expected true, false, \"user\" or \"admin\", got " + ShowJson(v));
  }
  return Status::Ok();
}

Status SetExclusive(const json& v, core::JobSpec& s) {
  core::ExclusiveMode& mode = s.exclusive;
  if (v.is_boolean()) {
    mode = v.get<bool>() ? core::ExclusiveMode::kNode : core::ExclusiveMode::kNo;
  } else if (v == "node") {
    mode = core::ExclusiveMode::kNode;
  } else if (v == "user") {
    mode = core::ExclusiveMode::kUser;
  } else {
    return KeyError("exclusive", "expected true, false, \"node\" or \"user\", got " + ShowJson(v));
  }
  return Status::Ok();
}

Status SetConstraint(const json& v, core::JobSpec& s) {
  std::string text;
  BERTH_RETURN_IF_ERROR(GetString(v, "constraint", &text));
  Result<core::Constraint> c = core::Constraint::Parse(text);
  if (!c.ok()) return KeyError("constraint", c.status().message());
  s.constraint = std::move(c).value();
  return Status::Ok();
}

Status SetDependency(const json& v, core::JobSpec& s) {
  std::string text;
  BERTH_RETURN_IF_ERROR(GetString(v, "dependency", &text));
  Result<core::Dependency> d = core::ParseDependency(text);
  if (!d.ok()) return KeyError("dependency", d.status().message());
  s.dependency = std::move(d).value();
  return Status::Ok();
}

Status SetArray(const json& v, core::JobSpec& s) {
  std::string text;
  BERTH_RETURN_IF_ERROR(GetString(v, "array", &text));
  // Slurm's ceiling, not a cluster's MaxArraySize: the controller's ClusterState::Submit checks
  // the task ids against the cluster's own limit (as slurmctld does), which may be above the
  // default 1001.
  Result<core::ArraySpec> a = core::ParseArraySpec(text, core::kSlurmMaxArraySize);
  if (!a.ok()) return KeyError("array", a.status().message());
  s.array = std::move(a).value();
  return Status::Ok();
}

struct SpecKey {
  std::string_view key;
  Status (*set)(const json& v, core::JobSpec& s);
};

// Every key of the job format, in the order docs/formats/job-json.md lists them.
constexpr SpecKey kSpecKeys[] = {
    {"time_limit", SetTimeLimit},
    {"time_min",
     [](const json& v, core::JobSpec& s) { return GetDuration(v, "time_min", &s.time_min); }},
    {"name", [](const json& v, core::JobSpec& s) { return GetString(v, "name", &s.name); }},
    {"user", [](const json& v, core::JobSpec& s) { return GetString(v, "user", &s.user); }},
    {"uid",
     [](const json& v, core::JobSpec& s) { return GetIntAs(v, "uid", 0, kUint32Max, &s.uid); }},
    {"gid",
     [](const json& v, core::JobSpec& s) { return GetIntAs(v, "gid", 0, kUint32Max, &s.gid); }},
    {"account",
     [](const json& v, core::JobSpec& s) { return GetString(v, "account", &s.account); }},
    {"partition",
     [](const json& v, core::JobSpec& s) { return GetNameList(v, "partition", &s.partitions); }},
    {"qos", [](const json& v, core::JobSpec& s) { return GetString(v, "qos", &s.qos); }},
    {"reservation",
     [](const json& v, core::JobSpec& s) { return GetString(v, "reservation", &s.reservation); }},
    {"begin",
     [](const json& v, core::JobSpec& s) {
       return GetInt(v, "begin", 0, kMaxJsonNumber, &s.begin_time);
     }},
    {"deadline",
     [](const json& v, core::JobSpec& s) {
       return GetInt(v, "deadline", 0, kMaxJsonNumber, &s.deadline);
     }},
    {"nice", [](const json& v,
                core::JobSpec& s) { return GetIntAs(v, "nice", -kInt32Max, kInt32Max, &s.nice); }},
    {"priority",
     [](const json& v, core::JobSpec& s) {
       return GetInt(v, "priority", 0, kUint32Max, &s.admin_priority);
     }},
    {"hold", SetHold},
    {"requeue", [](const json& v, core::JobSpec& s) { return GetBool(v, "requeue", &s.requeue); }},
    {"nodes", SetNodes},
    {"ntasks", [](const json& v,
                  core::JobSpec& s) { return GetIntAs(v, "ntasks", 0, kInt32Max, &s.ntasks); }},
    {"ntasks_per_node",
     [](const json& v, core::JobSpec& s) {
       return GetIntAs(v, "ntasks_per_node", 0, kInt32Max, &s.ntasks_per_node);
     }},
    {"ntasks_per_socket",
     [](const json& v, core::JobSpec& s) {
       return GetIntAs(v, "ntasks_per_socket", 0, kInt32Max, &s.ntasks_per_socket);
     }},
    {"ntasks_per_core",
     [](const json& v, core::JobSpec& s) {
       return GetIntAs(v, "ntasks_per_core", 0, kInt32Max, &s.ntasks_per_core);
     }},
    {"overcommit",
     [](const json& v, core::JobSpec& s) { return GetBool(v, "overcommit", &s.overcommit); }},
    {"ntasks_per_gpu",
     [](const json& v, core::JobSpec& s) {
       return GetIntAs(v, "ntasks_per_gpu", 0, kInt32Max, &s.ntasks_per_gpu);
     }},
    {"cpus_per_task",
     [](const json& v, core::JobSpec& s) {
       return GetIntAs(v, "cpus_per_task", 0, kInt32Max, &s.cpus_per_task);
     }},
    {"cpus_per_gpu",
     [](const json& v, core::JobSpec& s) {
       return GetIntAs(v, "cpus_per_gpu", 0, kInt32Max, &s.cpus_per_gpu);
     }},
    {"mem_per_node",
     [](const json& v, core::JobSpec& s) {
       return GetInt(v, "mem_per_node", 0, kMaxMemMib, &s.mem_per_node_mib);
     }},
    {"mem_per_cpu",
     [](const json& v, core::JobSpec& s) {
       return GetInt(v, "mem_per_cpu", 0, kMaxMemMib, &s.mem_per_cpu_mib);
     }},
    {"mem_per_gpu",
     [](const json& v, core::JobSpec& s) {
       return GetInt(v, "mem_per_gpu", 0, kMaxMemMib, &s.mem_per_gpu_mib);
     }},
    {"gpus",
     [](const json& v, core::JobSpec& s) { return GetIntAs(v, "gpus", 0, kInt32Max, &s.gpus); }},
    {"gpus_per_node",
     [](const json& v, core::JobSpec& s) {
       return GetIntAs(v, "gpus_per_node", 0, kInt32Max, &s.gpus_per_node);
     }},
    {"gpus_per_task",
     [](const json& v, core::JobSpec& s) {
       return GetIntAs(v, "gpus_per_task", 0, kInt32Max, &s.gpus_per_task);
     }},
    {"gpu_type",
     [](const json& v, core::JobSpec& s) { return GetString(v, "gpu_type", &s.gpu_type); }},
    {"gpu_milli",
     [](const json& v, core::JobSpec& s) {
       return GetIntAs(v, "gpu_milli", 0, core::kGpuMilliPerDevice, &s.gpu_milli);
     }},
    {"gpu_mps", [](const json& v, core::JobSpec& s) { return GetBool(v, "gpu_mps", &s.gpu_mps); }},
    {"gres", [](const json& v, core::JobSpec& s) { return GetCounts(v, "gres", &s.gres); }},
    {"licenses",
     [](const json& v, core::JobSpec& s) { return GetCounts(v, "licenses", &s.licenses); }},
    {"exclusive", SetExclusive},
    {"oversubscribe",
     [](const json& v, core::JobSpec& s) { return GetBool(v, "oversubscribe", &s.oversubscribe); }},
    {"constraint", SetConstraint},
    {"nodelist",
     [](const json& v, core::JobSpec& s) { return GetHostList(v, "nodelist", &s.nodelist); }},
    {"exclude",
     [](const json& v, core::JobSpec& s) { return GetHostList(v, "exclude", &s.exclude); }},
    {"dependency", SetDependency},
    {"kill_on_invalid_dep",
     [](const json& v,
        core::JobSpec& s) { return GetBool(v, "kill_on_invalid_dep", &s.kill_on_invalid_dep); }},
    {"wait_if_infeasible",
     [](const json& v,
        core::JobSpec& s) { return GetBool(v, "wait_if_infeasible", &s.wait_if_infeasible); }},
    {"array", SetArray},
};

// ---- How to run it (JobExecSpec)

Status GetEnvironment(const json& v, core::JobExecSpec& e) {
  if (!v.is_object()) return KeyError("environment", "expected an object of strings");
  e.environment.clear();
  for (const auto& [name, value] : v.items()) {
    if (name.empty() || name.find('=') != std::string::npos) {
      return KeyError("environment", "bad variable name " + QuoteForMessage(name));
    }
    if (!value.is_string()) return KeyError("environment." + name, "expected a string");
    e.environment.emplace_back(name, value.get<std::string>());
  }
  return Status::Ok();
}

Status GetStrings(const json& v, const char* key, std::vector<std::string>& out) {
  if (!v.is_array()) return KeyError(key, "expected an array of strings");
  out.clear();
  for (const json& item : v) {
    if (!item.is_string()) return KeyError(key, "expected strings, got " + ShowJson(item));
    out.push_back(item.get<std::string>());
  }
  return Status::Ok();
}

Status GetArgv(const json& v, core::JobExecSpec& e) {
  return GetStrings(v, "argv", e.argv);
}

Status GetScriptArgs(const json& v, core::JobExecSpec& e) {
  return GetStrings(v, "script_args", e.script_args);
}

Status GetOpenMode(const json& v, core::JobExecSpec& e) {
  if (v == "append") {
    e.open_append = true;
  } else if (v == "truncate") {
    e.open_append = false;
  } else {
    return KeyError("open_mode", "expected \"append\" or \"truncate\", got " + ShowJson(v));
  }
  return Status::Ok();
}

Status GetSignal(const json& v, core::JobExecSpec& e) {
  std::string text;
  BERTH_RETURN_IF_ERROR(GetString(v, "signal", &text));
  Status st = ParseSignalSpec(text, &e);
  return st.ok() ? st : KeyError("signal", st.message());
}

Status GetContainer(const json& v, core::JobExecSpec& e) {
  Result<image::ContainerSpec> spec = image::DecodeContainerSpec(v);
  if (!spec.ok()) return spec.status();  // "container.KEY: what"
  if (spec->image.empty()) {
    return Status::InvalidArgument(
        "container.image: required (a name alone names a container of a job step's own job)");
  }
  e.container = image::EncodeContainerSpec(*spec).dump();
  return Status::Ok();
}

// A host name as kubelet gives a Pod one: 1 to 63 lower-case letters, digits, '-' and '.'
// (a Pod's name may hold dots), starting and ending with a letter or digit.
Status GetHostname(const json& v, core::JobExecSpec& e) {
  std::string h;
  BERTH_RETURN_IF_ERROR(GetString(v, "hostname", &h));
  auto alnum = [](char c) { return (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9'); };
  bool ok =
      !h.empty() && h.size() <= 63 && alnum(h.front()) && alnum(h.back()) &&
      std::all_of(h.begin(), h.end(), [&](char c) { return alnum(c) || c == '-' || c == '.'; });
  if (!ok) {
    return KeyError("hostname",
                    "expected a host name (1-63 of a-z, 0-9, '-', '.'; starting and "
                    "ending with a letter or digit), got " +
                        ShowJson(v));
  }
  e.hostname = h;
  return Status::Ok();
}

struct ExecKey {
  std::string_view key;
  Status (*set)(const json& v, core::JobExecSpec& e);
};

constexpr ExecKey kExecKeys[] = {
    {"script",
     [](const json& v, core::JobExecSpec& e) { return GetString(v, "script", &e.script); }},
    {"argv", GetArgv},
    {"script_args", GetScriptArgs},
    {"work_dir",
     [](const json& v, core::JobExecSpec& e) { return GetString(v, "work_dir", &e.work_dir); }},
    {"stdout",
     [](const json& v, core::JobExecSpec& e) { return GetString(v, "stdout", &e.stdout_pattern); }},
    {"stderr",
     [](const json& v, core::JobExecSpec& e) { return GetString(v, "stderr", &e.stderr_pattern); }},
    {"stdin",
     [](const json& v, core::JobExecSpec& e) { return GetString(v, "stdin", &e.stdin_path); }},
    {"open_mode", GetOpenMode},
    {"environment", GetEnvironment},
    {"signal", GetSignal},
    {"comment",
     [](const json& v, core::JobExecSpec& e) { return GetString(v, "comment", &e.comment); }},
    {"command",
     [](const json& v, core::JobExecSpec& e) { return GetString(v, "command", &e.command); }},
    {"mail_type",
     [](const json& v, core::JobExecSpec& e) { return GetString(v, "mail_type", &e.mail_type); }},
    {"mail_user",
     [](const json& v, core::JobExecSpec& e) { return GetString(v, "mail_user", &e.mail_user); }},
    {"gpu_bind",
     [](const json& v, core::JobExecSpec& e) { return GetString(v, "gpu_bind", &e.gpu_bind); }},
    {"cpu_bind",
     [](const json& v, core::JobExecSpec& e) { return GetString(v, "cpu_bind", &e.cpu_bind); }},
    {"container", GetContainer},
    {"hostname", GetHostname},
    {"open_stdin",
     [](const json& v, core::JobExecSpec& e) { return GetBool(v, "open_stdin", &e.open_stdin); }},
    {"stdin_once",
     [](const json& v, core::JobExecSpec& e) { return GetBool(v, "stdin_once", &e.stdin_once); }},
    {"tty", [](const json& v, core::JobExecSpec& e) { return GetBool(v, "tty", &e.tty); }},
};

struct NamedSignal {
  std::string_view name;
  int number;
};
constexpr NamedSignal kSignals[] = {
    {"HUP", 1},   {"INT", 2},     {"QUIT", 3},  {"ABRT", 6},   {"KILL", 9},  {"USR1", 10},
    {"SEGV", 11}, {"USR2", 12},   {"PIPE", 13}, {"ALRM", 14},  {"TERM", 15}, {"CONT", 18},
    {"STOP", 19}, {"TSTP", 20},   {"TTIN", 21}, {"TTOU", 22},  {"URG", 23},  {"XCPU", 24},
    {"XFSZ", 25}, {"VTALRM", 26}, {"PROF", 27}, {"WINCH", 28}, {"IO", 29},   {"PWR", 30},
};

std::string NameOfSignal(int number) {
  for (const NamedSignal& s : kSignals) {
    if (s.number == number) return std::string(s.name);
  }
  return std::to_string(number);
}

std::string JsonMessage(const std::exception& e) {
  std::string_view what = e.what();
  size_t close = what.find("] ");
  if (what.rfind("[json.exception", 0) == 0 && close != std::string_view::npos) {
    what.remove_prefix(close + 2);
  }
  return std::string(what.substr(0, 200));
}

}  // namespace

int SignalNumber(std::string_view name) {
  if (name.empty()) return 0;
  if (std::optional<int64_t> n = ParseInteger(name))
    return *n >= 1 && *n <= 64 ? static_cast<int>(*n) : 0;
  std::string upper = ToUpper(name);
  std::string_view u = upper;
  if (u.substr(0, 3) == "SIG") u.remove_prefix(3);
  for (const NamedSignal& s : kSignals) {
    if (s.name == u) return s.number;
  }
  return 0;
}

Status ParseSignalSpec(std::string_view text, core::JobExecSpec* exec) {
  std::string_view t = text;
  bool batch = false;
  if (t.size() > 2 && t[1] == ':' && (t[0] == 'B' || t[0] == 'R' || t[0] == 'b' || t[0] == 'r')) {
    batch = t[0] == 'B' || t[0] == 'b';
    t.remove_prefix(2);
  }
  size_t at = t.find('@');
  int sig = SignalNumber(t.substr(0, at));
  if (sig == 0)
    return Status::InvalidArgument("Invalid --signal specification: " + QuoteForMessage(text));
  Duration before = 60;
  if (at != std::string_view::npos) {
    std::optional<int64_t> secs = ParseInteger(t.substr(at + 1));
    if (!secs || *secs > 65535) {
      return Status::InvalidArgument("Invalid --signal specification: " + QuoteForMessage(text));
    }
    before = *secs;
  }
  exec->signal_number = sig;
  exec->signal_before = before;
  exec->signal_batch_only = batch;
  return Status::Ok();
}

std::string FormatSignalSpec(const core::JobExecSpec& e) {
  if (e.signal_number == 0) return "";
  return std::string(e.signal_batch_only ? "B:" : "") + NameOfSignal(e.signal_number) + "@" +
         std::to_string(e.signal_before);
}

Status ApplyJobKey(std::string_view key, const json& value, core::JobSpec* spec,
                   core::JobExecSpec* exec) {
  try {
    auto s = std::find_if(std::begin(kSpecKeys), std::end(kSpecKeys),
                          [&](const SpecKey& k) { return k.key == key; });
    if (s != std::end(kSpecKeys)) return s->set(value, *spec);
    if (exec != nullptr) {
      auto e = std::find_if(std::begin(kExecKeys), std::end(kExecKeys),
                            [&](const ExecKey& k) { return k.key == key; });
      if (e != std::end(kExecKeys)) return e->set(value, *exec);
    }
  } catch (const std::exception& ex) {
    return KeyError(key, JsonMessage(ex));
  }
  return Status::NotFound("unknown key " + QuoteForMessage(key));
}

Status DecodeJob(const json& object, core::JobSpec* spec, core::JobExecSpec* exec) {
  if (!object.is_object()) return Status::InvalidArgument("a job is a JSON object {...}");
  for (const auto& item : object.items()) {
    Status st = ApplyJobKey(item.key(), item.value(), spec, exec);
    if (st.code() == StatusCode::kNotFound) {
      return Status::InvalidArgument(st.message() + " (docs/formats/job-json.md lists the keys)");
    }
    BERTH_RETURN_IF_ERROR(st);
  }
  if (spec->time_min != kNoTime && spec->time_limit != kNoTime &&
      spec->time_min > spec->time_limit) {
    return Status::InvalidArgument("\"time_min\" exceeds \"time_limit\"");
  }
  return Status::Ok();
}

namespace {

json Counts(const std::vector<core::NamedCount>& counts) {
  json o = json::object();
  for (const core::NamedCount& c : counts) o[c.name] = c.count;
  return o;
}

void EncodeShape(const core::JobSpec& s, const core::JobSpec& d, json& j) {
  if (s.min_nodes != d.min_nodes || s.max_nodes != d.max_nodes) {
    j["nodes"] = s.max_nodes > s.min_nodes
                     ? json(std::to_string(s.min_nodes) + "-" + std::to_string(s.max_nodes))
                     : json(s.min_nodes);
  }
  auto put = [&](const char* key, auto v, auto dv) {
    if (v != dv) j[key] = v;
  };
  put("ntasks", s.ntasks, d.ntasks);
  put("ntasks_per_node", s.ntasks_per_node, d.ntasks_per_node);
  put("ntasks_per_gpu", s.ntasks_per_gpu, d.ntasks_per_gpu);
  put("ntasks_per_socket", s.ntasks_per_socket, d.ntasks_per_socket);
  put("ntasks_per_core", s.ntasks_per_core, d.ntasks_per_core);
  put("overcommit", s.overcommit, d.overcommit);
  put("cpus_per_task", s.cpus_per_task, d.cpus_per_task);
  put("cpus_per_gpu", s.cpus_per_gpu, d.cpus_per_gpu);
  put("mem_per_node", s.mem_per_node_mib, d.mem_per_node_mib);
  put("mem_per_cpu", s.mem_per_cpu_mib, d.mem_per_cpu_mib);
  put("mem_per_gpu", s.mem_per_gpu_mib, d.mem_per_gpu_mib);
  put("gpus", s.gpus, d.gpus);
  put("gpus_per_node", s.gpus_per_node, d.gpus_per_node);
  put("gpus_per_task", s.gpus_per_task, d.gpus_per_task);
  put("gpu_type", s.gpu_type, d.gpu_type);
  put("gpu_milli", s.gpu_milli, d.gpu_milli);
  put("gpu_mps", s.gpu_mps, d.gpu_mps);
  if (!s.gres.empty()) j["gres"] = Counts(s.gres);
  if (!s.licenses.empty()) j["licenses"] = Counts(s.licenses);
}

}  // namespace

json EncodeJob(const core::JobSpec& s, const core::JobExecSpec* e) {
  const core::JobSpec d;
  json j = json::object();
  auto put = [&](const char* key, auto v, auto dv) {
    if (v != dv) j[key] = v;
  };
  put("name", s.name, d.name);
  put("user", s.user, d.user);
  put("uid", s.uid, d.uid);
  put("gid", s.gid, d.gid);
  put("account", s.account, d.account);
  if (!s.partitions.empty()) j["partition"] = s.partitions;
  put("qos", s.qos, d.qos);
  put("reservation", s.reservation, d.reservation);
  if (s.time_limit != d.time_limit) {
    j["time_limit"] = s.time_limit >= kInfinite ? json("UNLIMITED") : json(s.time_limit);
  }
  if (s.time_min != d.time_min) {
    j["time_min"] = s.time_min >= kInfinite ? json("UNLIMITED") : json(s.time_min);
  }
  put("begin", s.begin_time, d.begin_time);
  put("deadline", s.deadline, d.deadline);
  put("nice", s.nice, d.nice);
  put("priority", s.admin_priority, d.admin_priority);
  if (s.hold != core::HoldKind::kNone)
    j["hold"] = s.hold == core::HoldKind::kAdmin ? "admin" : "user";
  put("requeue", s.requeue, d.requeue);
  EncodeShape(s, d, j);
  if (s.exclusive != core::ExclusiveMode::kNo) {
    j["exclusive"] = s.exclusive == core::ExclusiveMode::kUser ? "user" : "node";
  }
  put("oversubscribe", s.oversubscribe, d.oversubscribe);
  if (!s.constraint.empty()) j["constraint"] = s.constraint.text();
  if (!s.nodelist.empty()) j["nodelist"] = hostlist::Compress(s.nodelist);
  if (!s.exclude.empty()) j["exclude"] = hostlist::Compress(s.exclude);
  if (!s.dependency.empty()) j["dependency"] = core::FormatDependency(s.dependency);
  put("kill_on_invalid_dep", s.kill_on_invalid_dep, d.kill_on_invalid_dep);
  put("wait_if_infeasible", s.wait_if_infeasible, d.wait_if_infeasible);
  if (!s.array.empty())
    j["array"] = core::FormatArrayTaskIds(s.array.task_ids, s.array.max_running);
  if (e == nullptr) return j;
  const core::JobExecSpec de;
  put("script", e->script, de.script);
  if (!e->argv.empty()) j["argv"] = e->argv;
  if (!e->script_args.empty()) j["script_args"] = e->script_args;
  put("work_dir", e->work_dir, de.work_dir);
  put("stdout", e->stdout_pattern, de.stdout_pattern);
  put("stderr", e->stderr_pattern, de.stderr_pattern);
  put("stdin", e->stdin_path, de.stdin_path);
  if (e->open_append) j["open_mode"] = "append";
  if (!e->environment.empty()) {
    json env = json::object();
    for (const auto& [k, v] : e->environment) env[k] = v;
    j["environment"] = env;
  }
  if (e->signal_number != 0) j["signal"] = FormatSignalSpec(*e);
  put("comment", e->comment, de.comment);
  put("command", e->command, de.command);
  put("mail_type", e->mail_type, de.mail_type);
  put("mail_user", e->mail_user, de.mail_user);
  put("gpu_bind", e->gpu_bind, de.gpu_bind);
  put("cpu_bind", e->cpu_bind, de.cpu_bind);
  put("hostname", e->hostname, de.hostname);
  put("open_stdin", e->open_stdin, de.open_stdin);
  put("stdin_once", e->stdin_once, de.stdin_once);
  put("tty", e->tty, de.tty);
  if (!e->container.empty()) j["container"] = json::parse(e->container, nullptr, false);
  return j;
}

}  // namespace berth::api
