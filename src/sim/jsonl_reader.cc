// berth's JSON Lines trace format: one job per line, keys as in docs/formats/trace-jsonl.md.
// nlohmann::json throws; every call into it stays inside ParseJobLine's try block.
#include <algorithm>
#include <cstdint>
#include <exception>
#include <iterator>
#include <limits>
#include <nlohmann/json.hpp>
#include <string>
#include <unordered_map>
#include <utility>
#include <vector>

#include "api/job_json.h"
#include "api/json_read.h"
#include "common/strings.h"
#include "sim/readers.h"
#include "sim/text_scan.h"

namespace berth::sim::internal {
namespace {

using nlohmann::json;

constexpr int64_t kUint32Max = std::numeric_limits<uint32_t>::max();

// A job being read: the TraceJob plus which keys were given.
struct JobBuilder {
  TraceJob job;
  bool has_submit = false;
  bool has_run = false;
  core::JobSpec& spec() { return job.spec; }
};

using api::KeyError;

// Trace messages show at most kMaxQuoted characters of a bad value, as the other readers do.
Status GetInt(const json& v, std::string_view key, int64_t min, int64_t max, int64_t* out) {
  return api::GetInt(v, key, min, max, out, kMaxQuoted);
}

template <typename T>
Status GetIntAs(const json& v, std::string_view key, int64_t min, int64_t max, T* out) {
  return api::GetIntAs(v, key, min, max, out, kMaxQuoted);
}

struct KeyHandler {
  std::string_view key;
  Status (*set)(const json& v, JobBuilder* b);
};

// The trace's own keys; every other key is a job key (api::ApplyJobKey).
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
    {"exit_code",
     [](const json& v, JobBuilder* b) {
       return GetIntAs(v, "exit_code", 0, 255, &b->job.exit_code);
     }},
    {"comment", [](const json&, JobBuilder*) { return Status::Ok(); }},
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
  b->job.requested = s.time_limit != kNoTime ? s.time_limit : b->job.run_time;
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
  return Printable(what, 200);
}

Status ApplyKeys(const json& object, JobBuilder* b) {
  for (const auto& item : object.items()) {
    const std::string& key = item.key();
    auto it = std::find_if(std::begin(kKeys), std::end(kKeys),
                           [&](const KeyHandler& h) { return h.key == key; });
    if (it != std::end(kKeys)) {
      BERTH_RETURN_IF_ERROR(it->set(item.value(), b));
      continue;
    }
    Status st = api::ApplyJobKey(key, item.value(), &b->spec(), nullptr);
    if (st.code() == StatusCode::kNotFound) {
      return Status::InvalidArgument("unknown key " + Quote(key) +
                                     " (docs/formats/trace-jsonl.md lists the keys)");
    }
    BERTH_RETURN_IF_ERROR(st);
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
    line = TrimWhitespace(line);
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
