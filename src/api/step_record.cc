#include "api/step_record.h"

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <nlohmann/json.hpp>
#include <string_view>

#include "api/json_read.h"

namespace berth::api {
namespace {

using nlohmann::json;

constexpr int64_t kMaxTime = int64_t{1} << 40;    // seconds since 1970, far past any clock
constexpr int64_t kMaxRssKib = int64_t{1} << 50;  // an exbibyte
constexpr double kMaxCpuSeconds = 1e12;           // 30,000 CPU-years
constexpr size_t kMaxText = 4096;

bool KnownState(std::string_view s) {
  return s == "RUNNING" || s == "COMPLETED" || s == "FAILED" || s == "CANCELLED";
}

Status GetSeconds(const json& v, std::string_view key, double* out) {
  if (!v.is_number() || !std::isfinite(v.get<double>()) || v.get<double>() < 0 ||
      v.get<double>() > kMaxCpuSeconds) {
    return KeyError(key, "expected seconds of CPU time (0 or more), got " + ShowJson(v, 40));
  }
  *out = v.get<double>();
  return Status::Ok();
}

Status GetText(const json& v, std::string_view key, std::string* out) {
  BERTH_RETURN_IF_ERROR(GetString(v, key, out));
  if (out->size() > kMaxText) return KeyError(key, "longer than 4096 bytes");
  return Status::Ok();
}

}  // namespace

json EncodeStepRecord(const StepRecord& s) {
  json j = {{"id", s.id},
            {"attempt", s.attempt},
            {"name", s.name},
            {"state", s.state},
            {"exit_code", s.exit_code},
            {"term_signal", s.term_signal},
            {"start", s.start},
            {"ntasks", s.ntasks},
            {"ncpus", s.ncpus},
            {"nodes", s.nodes},
            {"max_rss_kib", s.max_rss_kib},
            {"max_rss_task", s.max_rss_task},
            {"max_rss_node", s.max_rss_node},
            {"ave_rss_kib", s.ave_rss_kib},
            {"user_cpu_seconds", s.user_cpu_seconds},
            {"system_cpu_seconds", s.system_cpu_seconds},
            {"min_cpu_seconds", s.min_cpu_seconds},
            {"min_cpu_task", s.min_cpu_task}};
  if (s.ended()) j["end"] = s.end;
  if (s.cancelled_by >= 0) j["cancelled_by"] = s.cancelled_by;
  return j;
}

Result<StepRecord> DecodeStepRecord(const json& j) {
  if (!j.is_object()) return Status::InvalidArgument("a step record is a JSON object");
  StepRecord s;
  auto at = [&j](const char* key) -> const json& {
    static const json kNull;
    auto it = j.find(key);
    return it == j.end() ? kNull : *it;
  };
  BERTH_RETURN_IF_ERROR(GetIntAs(at("id"), "id", 0, UINT32_MAX - 1, &s.id));
  BERTH_RETURN_IF_ERROR(GetIntAs(at("attempt"), "attempt", 0, INT32_MAX, &s.attempt));
  BERTH_RETURN_IF_ERROR(GetText(at("name"), "name", &s.name));
  BERTH_RETURN_IF_ERROR(GetString(at("state"), "state", &s.state));
  if (!KnownState(s.state)) {
    return KeyError("state", "expected RUNNING, COMPLETED, FAILED or CANCELLED, got " +
                                 ShowJson(at("state"), 40));
  }
  BERTH_RETURN_IF_ERROR(GetIntAs(at("exit_code"), "exit_code", 0, 255, &s.exit_code));
  BERTH_RETURN_IF_ERROR(GetIntAs(at("term_signal"), "term_signal", 0, 64, &s.term_signal));
  BERTH_RETURN_IF_ERROR(GetIntAs(at("start"), "start", 0, kMaxTime, &s.start));
  if (j.contains("end")) {
    BERTH_RETURN_IF_ERROR(GetIntAs(at("end"), "end", 0, kMaxTime, &s.end));
    if (s.end < s.start) return KeyError("end", "before the step's start");
    if (s.state == "RUNNING") return KeyError("end", "a RUNNING step has not ended");
  } else if (s.state != "RUNNING") {
    return KeyError("end", "required once the step has ended (state " + s.state + ")");
  }
  BERTH_RETURN_IF_ERROR(GetIntAs(at("ntasks"), "ntasks", 1, 1'000'000, &s.ntasks));
  BERTH_RETURN_IF_ERROR(GetIntAs(at("ncpus"), "ncpus", 0, 100'000'000, &s.ncpus));
  BERTH_RETURN_IF_ERROR(GetText(at("nodes"), "nodes", &s.nodes));
  BERTH_RETURN_IF_ERROR(GetInt(at("max_rss_kib"), "max_rss_kib", 0, kMaxRssKib, &s.max_rss_kib));
  BERTH_RETURN_IF_ERROR(
      GetIntAs(at("max_rss_task"), "max_rss_task", 0, 1'000'000, &s.max_rss_task));
  BERTH_RETURN_IF_ERROR(GetText(at("max_rss_node"), "max_rss_node", &s.max_rss_node));
  BERTH_RETURN_IF_ERROR(GetInt(at("ave_rss_kib"), "ave_rss_kib", 0, kMaxRssKib, &s.ave_rss_kib));
  BERTH_RETURN_IF_ERROR(
      GetSeconds(at("user_cpu_seconds"), "user_cpu_seconds", &s.user_cpu_seconds));
  BERTH_RETURN_IF_ERROR(
      GetSeconds(at("system_cpu_seconds"), "system_cpu_seconds", &s.system_cpu_seconds));
  BERTH_RETURN_IF_ERROR(GetSeconds(at("min_cpu_seconds"), "min_cpu_seconds", &s.min_cpu_seconds));
  BERTH_RETURN_IF_ERROR(
      GetIntAs(at("min_cpu_task"), "min_cpu_task", 0, 1'000'000, &s.min_cpu_task));
  if (j.contains("cancelled_by")) {
    BERTH_RETURN_IF_ERROR(
        GetInt(at("cancelled_by"), "cancelled_by", 0, UINT32_MAX - 1, &s.cancelled_by));
  }
  return s;
}

StepRecord StepAfterJobEnd(StepRecord s, Time job_end) {
  if (s.ended()) return s;
  s.state = "CANCELLED";
  s.end = std::max(s.start, job_end);
  return s;
}

}  // namespace berth::api
