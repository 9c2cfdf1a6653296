// berth's JSON Lines trace format: one job per line, keys as in docs/formats/trace-jsonl.md.
// nlohmann::json throws; every call into it stays inside ParseJobLine's try block.
#include <algorithm>
#include <cmath>
#include <cstdint>
#include <exception>
#include <iterator>
#include <limits>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <unordered_map>
#include <utility>
#include <vector>

#include "common/hostlist.h"
#include "sim/readers.h"
#include "sim/text_scan.h"

namespace berth::sim::internal {
namespace {

using nlohmann::json;

constexpr int64_t kInt32Max = std::numeric_limits<int32_t>::max();
constexpr int64_t kUint32Max = std::numeric_limits<uint32_t>::max();
// Memory in MiB: up to 2^40 MiB (an exbibyte) per node, CPU or GPU.
constexpr int64_t kMaxMemMib = INT64_C(1) << 40;

// A job being read: the TraceJob plus which keys were given.
struct JobBuilder {
  TraceJob job;
  bool has_submit = false;
  bool has_run = false;
  bool has_time_limit = false;
  core::JobSpec& spec() { return job.spec; }
};

Status KeyError(std::string_view key, std::string_view what) {
  return Status::InvalidArgument("\"" + std::string(key) + "\": " + std::string(what));
}

std::string Show(const json& v) {
  return Quote(v.dump(-1, ' ', false, json::error_handler_t::replace));
}

// A whole number in [min, max]; an integral float such as 3600.0 counts as whole.
Status GetInt(const json& v, std::string_view key, int64_t min, int64_t max, int64_t* out) {
  if (!v.is_number()) return KeyError(key, "expected a whole number, got " + Show(v));
  std::optional<int64_t> n;  // empty when beyond kMaxTraceNumber
  if (v.is_number_unsigned()) {
    uint64_t u = v.get<uint64_t>();
    if (u <= static_cast<uint64_t>(kMaxTraceNumber)) n = static_cast<int64_t>(u);
  } else if (v.is_number_integer()) {
    int64_t i = v.get<int64_t>();
    if (i >= -kMaxTraceNumber && i <= kMaxTraceNumber) n = i;
  } else {
    double d = v.get<double>();
    if (!std::isfinite(d) || std::floor(d) != d) {
      return KeyError(key, "expected a whole number, got " + Show(v));
    }
    if (std::fabs(d) <= static_cast<double>(kMaxTraceNumber)) n = static_cast<int64_t>(d);
  }
  if (!n || *n < min || *n > max) {
    return KeyError(key, "must be from " + std::to_string(min) + " to " + std::to_string(max) +
                             ", got " + (n ? std::to_string(*n) : Show(v)));
  }
  *out = *n;
  return Status::Ok();
}

template <typename T>
Status GetIntAs(const json& v, std::string_view key, int64_t min, int64_t max, T* out) {
  int64_t n = 0;
  BERTH_RETURN_IF_ERROR(GetInt(v, key, min, max, &n));
  *out = static_cast<T>(n);
  return Status::Ok();
}

Status GetString(const json& v, std::string_view key, std::string* out) {
  if (!v.is_string()) return KeyError(key, "expected a string, got " + Show(v));
  *out = v.get<std::string>();
  return Status::Ok();
}

Status GetBool(const json& v, std::string_view key, bool* out) {
  if (!v.is_boolean()) return KeyError(key, "expected true or false, got " + Show(v));
  *out = v.get<bool>();
  return Status::Ok();
}

// A list of names: a JSON array of strings, or one string with ',' between names.
Status GetNameList(const json& v, std::string_view key, std::vector<std::string>* out) {
  out->clear();
  auto add = [&](std::string_view name) -> Status {
    name = TrimSpace(name);
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
    if (!item.is_string()) return KeyError(key, "expected strings in the array, got " + Show(item));
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
    if (!item.is_string()) return KeyError(key, "expected strings in the array, got " + Show(item));
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
Status SetNodes(const json& v, JobBuilder* b) {
  core::JobSpec& s = b->spec();
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
    return KeyError("nodes", "expected a count or a range like \"2-4\", got " + Quote(t));
  }
  s.min_nodes = static_cast<int32_t>(*lo);
  s.max_nodes = static_cast<int32_t>(*hi);
  return Status::Ok();
}

Status SetTimeLimit(const json& v, JobBuilder* b) {
  b->has_time_limit = true;
  if (v.is_string()) {
    const std::string& text = v.get_ref<const std::string&>();
    if (text == "UNLIMITED" || text == "INFINITE") {
      b->spec().time_limit = kInfinite;
      return Status::Ok();
    }
  }
  return GetInt(v, "time_limit", 1, kMaxTraceNumber, &b->spec().time_limit);
}

Status SetHold(const json& v, JobBuilder* b) {
  core::HoldKind& hold = b->spec().hold;
  if (v.is_boolean()) {
    hold = v.get<bool>() ? core::HoldKind::kUser : core::HoldKind::kNone;
  } else if (v == "user") {
    hold = core::HoldKind::kUser;
  } else if (v == "admin") {
    hold = core::HoldKind::kAdmin;
  } else {
    return KeyError("hold", "expected true, false, \"user\" or \"admin\", got " + Show(v));
  }
  return Status::Ok();
}

Status SetExclusive(const json& v, JobBuilder* b) {
  core::ExclusiveMode& mode = b->spec().exclusive;
  if (v.is_boolean()) {
    mode = v.get<bool>() ? core::ExclusiveMode::kNode : core::ExclusiveMode::kNo;
  } else if (v == "node") {
    mode = core::ExclusiveMode::kNode;
  } else if (v == "user") {
    mode = core::ExclusiveMode::kUser;
  } else {
    return KeyError("exclusive", "expected true, false, \"node\" or \"user\", got " + Show(v));
  }
  return Status::Ok();
}

Status SetConstraint(const json& v, JobBuilder* b) {
  std::string text;
  BERTH_RETURN_IF_ERROR(GetString(v, "constraint", &text));
  Result<core::Constraint> c = core::Constraint::Parse(text);
  if (!c.ok()) return KeyError("constraint", c.status().message());
  b->spec().constraint = std::move(c).value();
  return Status::Ok();
}

Status SetDependency(const json& v, JobBuilder* b) {
  std::string text;
  BERTH_RETURN_IF_ERROR(GetString(v, "dependency", &text));
  Result<core::Dependency> d = core::ParseDependency(text);
  if (!d.ok()) return KeyError("dependency", d.status().message());
  b->spec().dependency = std::move(d).value();
  return Status::Ok();
}

Status SetArray(const json& v, JobBuilder* b) {
  std::string text;
  BERTH_RETURN_IF_ERROR(GetString(v, "array", &text));
  Result<core::ArraySpec> a = core::ParseArraySpec(text);
  if (!a.ok()) return KeyError("array", a.status().message());
  b->spec().array = std::move(a).value();
  return Status::Ok();
}

struct KeyHandler {
  std::string_view key;
  Status (*set)(const json& v, JobBuilder* b);
};

// Every key the format knows, in the order docs/formats/trace-jsonl.md lists them.
constexpr KeyHandler kKeys[] = {
    {"id", [](const json& v,
              JobBuilder* b) { return GetIntAs(v, "id", 1, kUint32Max, &b->job.trace_id); }},
    {"submit",
     [](const json& v, JobBuilder* b) {
       b->has_submit = true;
       return GetInt(v, "submit", 0, kMaxTraceNumber, &b->job.submit);
     }},
    {"run",
     [](const json& v, JobBuilder* b) {
       b->has_run = true;
       return GetInt(v, "run", 1, kMaxTraceNumber, &b->job.run_time);
     }},
    {"time_limit", SetTimeLimit},
    {"time_min",
     [](const json& v, JobBuilder* b) {
       return GetInt(v, "time_min", 1, kMaxTraceNumber, &b->spec().time_min);
     }},
    {"exit_code",
     [](const json& v, JobBuilder* b) {
       return GetIntAs(v, "exit_code", 0, 255, &b->job.exit_code);
     }},
    {"name", [](const json& v, JobBuilder* b) { return GetString(v, "name", &b->spec().name); }},
    {"comment", [](const json&, JobBuilder*) { return Status::Ok(); }},
    {"user", [](const json& v, JobBuilder* b) { return GetString(v, "user", &b->spec().user); }},
    {"uid", [](const json& v,
               JobBuilder* b) { return GetIntAs(v, "uid", 0, kUint32Max, &b->spec().uid); }},
    {"gid", [](const json& v,
               JobBuilder* b) { return GetIntAs(v, "gid", 0, kUint32Max, &b->spec().gid); }},
    {"account",
     [](const json& v, JobBuilder* b) { return GetString(v, "account", &b->spec().account); }},
    {"partition", [](const json& v,
                     JobBuilder* b) { return GetNameList(v, "partition", &b->spec().partitions); }},
    {"qos", [](const json& v, JobBuilder* b) { return GetString(v, "qos", &b->spec().qos); }},
    {"reservation",
     [](const json& v, JobBuilder* b) {
       return GetString(v, "reservation", &b->spec().reservation);
     }},
    {"begin",
     [](const json& v, JobBuilder* b) {
       return GetInt(v, "begin", 0, kMaxTraceNumber, &b->spec().begin_time);
     }},
    {"deadline",
     [](const json& v, JobBuilder* b) {
       return GetInt(v, "deadline", 0, kMaxTraceNumber, &b->spec().deadline);
     }},
    {"nice",
     [](const json& v, JobBuilder* b) {
       return GetIntAs(v, "nice", -kInt32Max, kInt32Max, &b->spec().nice);
     }},
    {"priority",
     [](const json& v, JobBuilder* b) {
       return GetInt(v, "priority", 0, kUint32Max, &b->spec().admin_priority);
     }},
    {"hold", SetHold},
    {"requeue",
     [](const json& v, JobBuilder* b) { return GetBool(v, "requeue", &b->spec().requeue); }},
    {"nodes", SetNodes},
    {"ntasks",
     [](const json& v, JobBuilder* b) {
       return GetIntAs(v, "ntasks", 0, kInt32Max, &b->spec().ntasks);
     }},
    {"ntasks_per_node",
     [](const json& v, JobBuilder* b) {
       return GetIntAs(v, "ntasks_per_node", 0, kInt32Max, &b->spec().ntasks_per_node);
     }},
    {"ntasks_per_gpu",
     [](const json& v, JobBuilder* b) {
       return GetIntAs(v, "ntasks_per_gpu", 0, kInt32Max, &b->spec().ntasks_per_gpu);
     }},
    {"cpus_per_task",
     [](const json& v, JobBuilder* b) {
       return GetIntAs(v, "cpus_per_task", 0, kInt32Max, &b->spec().cpus_per_task);
     }},
    {"cpus_per_gpu",
     [](const json& v, JobBuilder* b) {
       return GetIntAs(v, "cpus_per_gpu", 0, kInt32Max, &b->spec().cpus_per_gpu);
     }},
    {"mem_per_node",
     [](const json& v, JobBuilder* b) {
       return GetInt(v, "mem_per_node", 0, kMaxMemMib, &b->spec().mem_per_node_mib);
     }},
    {"mem_per_cpu",
     [](const json& v, JobBuilder* b) {
       return GetInt(v, "mem_per_cpu", 0, kMaxMemMib, &b->spec().mem_per_cpu_mib);
     }},
    {"mem_per_gpu",
     [](const json& v, JobBuilder* b) {
       return GetInt(v, "mem_per_gpu", 0, kMaxMemMib, &b->spec().mem_per_gpu_mib);
     }},
    {"gpus", [](const json& v,
                JobBuilder* b) { return GetIntAs(v, "gpus", 0, kInt32Max, &b->spec().gpus); }},
    {"gpus_per_node",
     [](const json& v, JobBuilder* b) {
       return GetIntAs(v, "gpus_per_node", 0, kInt32Max, &b->spec().gpus_per_node);
     }},
    {"gpus_per_task",
     [](const json& v, JobBuilder* b) {
       return GetIntAs(v, "gpus_per_task", 0, kInt32Max, &b->spec().gpus_per_task);
     }},
    {"gpu_type",
     [](const json& v, JobBuilder* b) { return GetString(v, "gpu_type", &b->spec().gpu_type); }},
    {"gres", [](const json& v, JobBuilder* b) { return GetCounts(v, "gres", &b->spec().gres); }},
    {"licenses",
     [](const json& v, JobBuilder* b) { return GetCounts(v, "licenses", &b->spec().licenses); }},
    {"exclusive", SetExclusive},
    {"oversubscribe",
     [](const json& v, JobBuilder* b) {
       return GetBool(v, "oversubscribe", &b->spec().oversubscribe);
     }},
    {"constraint", SetConstraint},
    {"nodelist",
     [](const json& v, JobBuilder* b) { return GetHostList(v, "nodelist", &b->spec().nodelist); }},
    {"exclude",
     [](const json& v, JobBuilder* b) { return GetHostList(v, "exclude", &b->spec().exclude); }},
    {"dependency", SetDependency},
    {"kill_on_invalid_dep",
     [](const json& v, JobBuilder* b) {
       return GetBool(v, "kill_on_invalid_dep", &b->spec().kill_on_invalid_dep);
     }},
    {"array", SetArray},
    {"requested",
     [](const json&, JobBuilder*) {
       return KeyError("requested", "write the user's estimate as \"time_limit\"");
     }},
};

int64_t SaturatingMul(int64_t a, int64_t b) {
  int64_t r = 0;
  if (__builtin_mul_overflow(a, b, &r)) return std::numeric_limits<int64_t>::max();
  return r;
}

// Totals for metrics and for drivers that want one number: an estimate from the request,
// since the real allocation (whole nodes for --exclusive, defaults) is the scheduler's business.
void EstimateTotals(TraceJob* job) {
  const core::JobSpec& s = job->spec;
  const int64_t nodes = std::max<int64_t>(s.min_nodes, 1);
  int64_t gpus = s.gpus > 0 ? s.gpus : SaturatingMul(s.gpus_per_node, nodes);
  int64_t tasks = 1;
  if (s.ntasks > 0) {
    tasks = s.ntasks;
  } else if (s.ntasks_per_node > 0) {
    tasks = SaturatingMul(s.ntasks_per_node, nodes);
  } else if (s.ntasks_per_gpu > 0 && gpus > 0) {
    tasks = SaturatingMul(s.ntasks_per_gpu, gpus);
  } else {
    tasks = nodes;
  }
  if (gpus == 0) gpus = SaturatingMul(s.gpus_per_task, tasks);
  int64_t cpus = SaturatingMul(tasks, std::max<int32_t>(s.cpus_per_task, 1));
  cpus = std::max({cpus, SaturatingMul(gpus, s.cpus_per_gpu), nodes});
  int64_t mem = 0;
  if (s.mem_per_node_mib > 0) {
    mem = SaturatingMul(s.mem_per_node_mib, nodes);
  } else if (s.mem_per_cpu_mib > 0) {
    mem = SaturatingMul(s.mem_per_cpu_mib, cpus);
  } else if (s.mem_per_gpu_mib > 0) {
    mem = SaturatingMul(s.mem_per_gpu_mib, gpus);
  }
  job->procs = cpus;
  job->gpus = gpus;
  job->mem_mib = mem;
}

// Checks what only the whole object can tell, and fills the derived fields.
Status Finish(JobBuilder* b) {
  if (!b->has_submit) return Status::InvalidArgument("missing \"submit\"");
  if (!b->has_run) return Status::InvalidArgument("missing \"run\"");
  core::JobSpec& s = b->spec();
  if (s.time_min != kNoTime && s.time_limit != kNoTime && s.time_min > s.time_limit) {
    return Status::InvalidArgument("\"time_min\" exceeds \"time_limit\"");
  }
  s.submit_time = b->job.submit;
  b->job.requested = b->has_time_limit ? s.time_limit : b->job.run_time;
  b->job.user = s.user;
  b->job.account = s.account;
  b->job.gpu_type = s.gpu_type;
  b->job.has_spec = true;
  EstimateTotals(&b->job);
  return Status::Ok();
}

// nlohmann's messages start with "[json.exception.parse_error.101] "; keep what follows.
std::string JsonMessage(const std::exception& e) {
  std::string_view what = e.what();
  size_t close = what.find("] ");
  if (what.rfind("[json.exception", 0) == 0 && close != std::string_view::npos) {
    what.remove_prefix(close + 2);
  }
  std::string out;
  for (size_t i = 0; i < what.size() && i < 200; ++i) {
    unsigned char c = static_cast<unsigned char>(what[i]);
    out += (c >= 0x20 && c < 0x7f) ? static_cast<char>(c) : '?';
  }
  return out;
}

Status ApplyKeys(const json& object, JobBuilder* b) {
  for (const auto& item : object.items()) {
    const std::string& key = item.key();
    auto it = std::find_if(std::begin(kKeys), std::end(kKeys),
                           [&](const KeyHandler& h) { return h.key == key; });
    if (it == std::end(kKeys)) {
      return Status::InvalidArgument("unknown key " + Quote(key) +
                                     " (docs/formats/trace-jsonl.md lists the keys)");
    }
    BERTH_RETURN_IF_ERROR(it->set(item.value(), b));
  }
  return Finish(b);
}

// Parses one line; `ordinal` (1-based among job lines) is the id when the line gives none.
Status ParseJobLine(std::string_view line, uint64_t ordinal, TraceJob* job) {
  try {
    // nlohmann keeps the last of two equal keys; a repeated key is more likely a mistake.
    std::vector<std::string> keys;
    std::string repeated;
    auto note_key = [&](int depth, json::parse_event_t event, json& parsed) {
      if (event == json::parse_event_t::key && depth == 1 && parsed.is_string()) {
        const std::string& key = parsed.get_ref<const std::string&>();
        if (std::find(keys.begin(), keys.end(), key) != keys.end()) {
          if (repeated.empty()) repeated = key;
        } else {
          keys.push_back(key);
        }
      }
      return true;
    };
    json object = json::parse(line, note_key);
    if (!object.is_object()) return Status::InvalidArgument("expected a JSON object {...}");
    if (!repeated.empty()) {
      return Status::InvalidArgument("key " + Quote(repeated) + " given twice");
    }
    JobBuilder builder;
    builder.job.trace_id = ordinal;
    BERTH_RETURN_IF_ERROR(ApplyKeys(object, &builder));
    *job = std::move(builder.job);
    return Status::Ok();
  } catch (const json::parse_error& e) {
    // "parse error at line 1, column 12: ..." counts within this line only: keep the column.
    std::string message = JsonMessage(e);
    size_t column = message.find("column ");
    if (column != std::string::npos) message = message.substr(column);
    return Status::InvalidArgument("not valid JSON at " + message);
  } catch (const std::exception& e) {
    return Status::InvalidArgument(JsonMessage(e));
  }
}

// A dependency on a job the trace does not have (or on the job itself) is a typo.
std::string BadDependency(const TraceJob& job,
                          const std::unordered_map<uint64_t, int64_t>& lines_by_id) {
  for (const core::DependencyCondition& c : job.spec.dependency.conditions) {
    for (const core::DependencyTarget& t : c.targets) {
      if (t.job_id == job.trace_id) return "the job depends on itself";
      if (!lines_by_id.contains(t.job_id)) {
        return "\"dependency\": the trace has no job " + std::to_string(t.job_id);
      }
    }
  }
  return "";
}

}  // namespace

Status ReadJsonl(std::string_view text, std::string_view name, const ReadOptions& options,
                 Trace* trace) {
  BadLineSink bad(name, options.skip_bad, trace);
  std::unordered_map<uint64_t, int64_t> lines_by_id;
  LineScanner lines(text);
  std::string_view line;
  uint64_t ordinal = 0;
  while (lines.Next(&line)) {
    line = TrimSpace(line);
    if (line.empty()) continue;
    ++ordinal;
    TraceJob job;
    Status status = ParseJobLine(line, ordinal, &job);
    if (status.ok()) {
      auto [it, inserted] = lines_by_id.emplace(job.trace_id, lines.line_number());
      if (!inserted) {
        status = Status::InvalidArgument("job id " + std::to_string(job.trace_id) +
                                         " is used already on line " + std::to_string(it->second));
      }
    }
    if (!status.ok()) {
      BERTH_RETURN_IF_ERROR(bad.Report(lines.line_number(), status.message()));
      continue;
    }
    job.line = lines.line_number();
    trace->jobs.push_back(std::move(job));
  }
  std::vector<TraceJob> kept;
  kept.reserve(trace->jobs.size());
  for (TraceJob& job : trace->jobs) {
    std::string problem = BadDependency(job, lines_by_id);
    if (!problem.empty()) {
      BERTH_RETURN_IF_ERROR(bad.Report(job.line, problem));
      continue;
    }
    trace->largest_procs = std::max(trace->largest_procs, job.procs);
    kept.push_back(std::move(job));
  }
  trace->jobs = std::move(kept);
  trace->pool_procs = options.procs;
  return Status::Ok();
}

}  // namespace berth::sim::internal
