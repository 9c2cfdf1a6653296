#include "agent/launch.h"

#include <cstdint>
#include <limits>
#include <nlohmann/json.hpp>
#include <type_traits>

namespace berth::agent {

namespace {

using Json = nlohmann::ordered_json;

// Reads optional fields of one JSON object: a missing key keeps the default, a present key with
// the wrong type or an out-of-range number is an error (the first one found is kept).
class FieldReader {
 public:
  explicit FieldReader(const Json& object) : object_(object) {}

  template <typename T>
  void Read(const char* key, T* out) {
    if (!status_.ok()) return;
    auto it = object_.find(key);
    if (it == object_.end()) return;
    if (!Convert(*it, out)) {
      status_ = Status::InvalidArgument(std::string("field '") + key + "': expected " +
                                        TypeName(out) + ", got " + it->dump());
    }
  }

  const Status& status() const { return status_; }

 private:
  template <typename T>
  static bool Convert(const Json& v, T* out) {
    if constexpr (std::is_same_v<T, bool>) {
      if (!v.is_boolean()) return false;
      *out = v.get<bool>();
      return true;
    } else if constexpr (std::is_integral_v<T>) {
      if (v.is_number_unsigned()) {
        uint64_t u = v.get<uint64_t>();
        if (u > static_cast<uint64_t>(std::numeric_limits<T>::max())) return false;
        *out = static_cast<T>(u);
        return true;
      }
      if (!v.is_number_integer()) return false;
      int64_t i = v.get<int64_t>();
      if (i < static_cast<int64_t>(std::numeric_limits<T>::min())) return false;
      if (i > 0 && static_cast<uint64_t>(i) > static_cast<uint64_t>(std::numeric_limits<T>::max()))
        return false;
      *out = static_cast<T>(i);
      return true;
    } else if constexpr (std::is_same_v<T, double>) {
      if (!v.is_number()) return false;
      *out = v.get<double>();
      return true;
    } else if constexpr (std::is_same_v<T, std::string>) {
      if (!v.is_string()) return false;
      *out = v.get<std::string>();
      return true;
    } else if constexpr (std::is_same_v<T, std::vector<std::pair<std::string, std::string>>>) {
      if (!v.is_object()) return false;
      out->clear();
      for (auto it = v.begin(); it != v.end(); ++it) {
        if (!it.value().is_string()) return false;
        out->emplace_back(it.key(), it.value().get<std::string>());
      }
      return true;
    } else {  // std::vector<U>
      if (!v.is_array()) return false;
      T values;
      for (const Json& e : v) {
        typename T::value_type x{};
        if (!Convert(e, &x)) return false;
        values.push_back(std::move(x));
      }
      *out = std::move(values);
      return true;
    }
  }

  template <typename T>
  static const char* TypeName(const T*) {
    if constexpr (std::is_same_v<T, bool>) {
      return "a boolean";
    } else if constexpr (std::is_integral_v<T>) {
      return std::is_signed_v<T> ? "an integer in range" : "a non-negative integer in range";
    } else if constexpr (std::is_same_v<T, double>) {
      return "a number";
    } else if constexpr (std::is_same_v<T, std::string>) {
      return "a string";
    } else if constexpr (std::is_same_v<T, std::vector<std::pair<std::string, std::string>>>) {
      return "an object of strings";
    } else {
      return "an array";
    }
  }

  const Json& object_;
  Status status_;
};

Result<Json> ParseObject(std::string_view text, const char* what) {
  Json j = Json::parse(text, nullptr, /*allow_exceptions=*/false);
  if (j.is_discarded()) return Status::InvalidArgument(std::string(what) + ": not valid JSON");
  if (!j.is_object()) return Status::InvalidArgument(std::string(what) + ": not a JSON object");
  return j;
}

// One list of the fields of each struct, used for both directions so that they cannot drift.
template <typename Visitor, typename Spec>
void VisitLaunchSpec(Visitor&& v, Spec& s) {
  v("job_id", s.job_id);
  v("attempt", s.attempt);
  v("array_job_id", s.array_job_id);
  v("array_task_id", s.array_task_id);
  v("array_task_count", s.array_task_count);
  v("array_task_min", s.array_task_min);
  v("array_task_max", s.array_task_max);
  v("array_task_step", s.array_task_step);
  v("name", s.name);
  v("user", s.user);
  v("uid", s.uid);
  v("gid", s.gid);
  v("account", s.account);
  v("partition", s.partition);
  v("qos", s.qos);
  v("cluster_name", s.cluster_name);
  v("script", s.script);
  v("argv", s.argv);
  v("script_args", s.script_args);
  v("work_dir", s.work_dir);
  v("stdout_pattern", s.stdout_pattern);
  v("stderr_pattern", s.stderr_pattern);
  v("stdin_path", s.stdin_path);
  v("open_append", s.open_append);
  v("environment", s.environment);
  v("container", s.container);
  v("hostname", s.hostname);
  v("open_stdin", s.open_stdin);
  v("stdin_once", s.stdin_once);
  v("tty", s.tty);
  v("node_names", s.node_names);
  v("cpus_per_node", s.cpus_per_node);
  v("node_index", s.node_index);
  v("cpus", s.cpus);
  v("mem_mib", s.mem_mib);
  v("gpu_indices", s.gpu_indices);
  v("gpu_uuids", s.gpu_uuids);
  v("gpu_nvml_indices", s.gpu_nvml_indices);
  v("gpu_share_milli", s.gpu_share_milli);
  v("gpu_mps", s.gpu_mps);
  v("mps_pipe_dir", s.mps_pipe_dir);
  v("mps_log_dir", s.mps_log_dir);
  v("tasks", s.tasks);
  v("ntasks", s.ntasks);
  v("cpus_per_task", s.cpus_per_task);
  v("mem_per_cpu_mib", s.mem_per_cpu_mib);
  v("mem_per_node_mib", s.mem_per_node_mib);
  v("tasks_per_node", s.tasks_per_node);
  v("pids_max", s.pids_max);
  v("cpu_quota_millis", s.cpu_quota_millis);
  v("time_limit", s.time_limit);
  v("kill_wait", s.kill_wait);
  v("signal_number", s.signal_number);
  v("signal_before", s.signal_before);
  v("signal_batch_only", s.signal_batch_only);
  v("submit_dir", s.submit_dir);
  v("submit_host", s.submit_host);
  v("submit_time", s.submit_time);
  v("start_time", s.start_time);
}

template <typename Visitor, typename R>
void VisitJobResult(Visitor&& v, R& r) {
  v("job_id", r.job_id);
  v("attempt", r.attempt);
  v("state", r.state);
  v("exit_code", r.exit_code);
  v("term_signal", r.term_signal);
  v("start_time", r.start_time);
  v("end_time", r.end_time);
  v("cpu_seconds", r.cpu_seconds);
  v("max_rss_mib", r.max_rss_mib);
  v("user_cpu_seconds", r.user_cpu_seconds);
  v("system_cpu_seconds", r.system_cpu_seconds);
  v("max_task_rss_kib", r.max_task_rss_kib);
  v("gpu_utilization", r.gpu_utilization);
  v("message", r.message);
  v("fenced", r.fenced);
  v("image_digest", r.image_digest);
  v("image_error", r.image_error);
}

struct Writer {
  Json* out;
  template <typename T>
  void operator()(const char* key, const T& value) const {
    if constexpr (std::is_same_v<T, std::vector<std::pair<std::string, std::string>>>) {
      Json env = Json::object();
      for (const auto& [k, val] : value) env[k] = val;
      (*out)[key] = std::move(env);
    } else {
      (*out)[key] = value;
    }
  }
};

struct Reader {
  FieldReader* in;
  template <typename T>
  void operator()(const char* key, T& value) const {
    in->Read(key, &value);
  }
};

}  // namespace

std::string EncodeLaunchSpec(const LaunchSpec& spec) {
  Json j = Json::object();
  VisitLaunchSpec(Writer{&j}, spec);
  return j.dump(2, ' ', false, Json::error_handler_t::replace);
}

Result<LaunchSpec> DecodeLaunchSpec(std::string_view json) {
  BERTH_ASSIGN_OR_RETURN(Json j, ParseObject(json, "launch spec"));
  LaunchSpec spec;
  FieldReader reader(j);
  VisitLaunchSpec(Reader{&reader}, spec);
  if (!reader.status().ok()) return reader.status().WithContext("launch spec");
  return spec;
}

std::string EncodeJobResult(const JobResult& result) {
  Json j = Json::object();
  VisitJobResult(Writer{&j}, result);
  return j.dump(2, ' ', false, Json::error_handler_t::replace);
}

Result<JobResult> DecodeJobResult(std::string_view json) {
  BERTH_ASSIGN_OR_RETURN(Json j, ParseObject(json, "job result"));
  JobResult result;
  FieldReader reader(j);
  VisitJobResult(Reader{&reader}, result);
  if (!reader.status().ok()) return reader.status().WithContext("job result");
  return result;
}

std::vector<int32_t> NvmlIndicesOf(const LaunchSpec& spec) {
  std::vector<int32_t> out;
  for (int32_t i : spec.gpu_nvml_indices) {
    if (i >= 0) out.push_back(i);
  }
  return out;
}

}  // namespace berth::agent
