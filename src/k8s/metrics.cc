// metrics.k8s.io objects (metrics.h).
#include "k8s/metrics.h"

#include <cmath>

#include "k8s/codec.h"

namespace berth::k8s {

using nlohmann::json;

std::optional<MeasuredUsage> UsageBetween(const UsageSample& earlier, const UsageSample& later) {
  const int64_t window_ms = later.time_ms - earlier.time_ms;
  const double cpu = later.cpu_seconds - earlier.cpu_seconds;
  if (window_ms <= 0 || cpu < 0) return std::nullopt;
  MeasuredUsage u;
  u.timestamp_ms = later.time_ms;
  u.window_ms = window_ms;
  u.cpu_nanocores = std::llround(cpu * 1e12 / static_cast<double>(window_ms));
  u.memory_bytes = std::max<int64_t>(0, later.memory_bytes);
  return u;
}

std::string CpuQuantityOf(int64_t nanocores) {
  if (nanocores <= 0) return "0";
  static constexpr const char* kSuffix[] = {"n", "u", "m", ""};
  int i = 0;
  while (i < 3 && nanocores % 1000 == 0) {
    nanocores /= 1000;
    ++i;
  }
  return std::to_string(nanocores) + kSuffix[i];
}

std::string BytesQuantityOf(int64_t bytes) {
  if (bytes <= 0) return "0";
  static constexpr const char* kSuffix[] = {"", "Ki", "Mi", "Gi", "Ti", "Pi", "Ei"};
  int i = 0;
  while (i < 6 && bytes % 1024 == 0) {
    bytes /= 1024;
    ++i;
  }
  return std::to_string(bytes) + kSuffix[i];
}

std::string GoDuration(int64_t ms) {
  if (ms == 0) return "0s";
  std::string sign = ms < 0 ? "-" : "";
  if (ms < 0) ms = -ms;
  if (ms < 1000) return sign + std::to_string(ms) + "ms";
  std::string out = sign;
  const int64_t hours = ms / 3'600'000, minutes = ms / 60'000 % 60;
  if (hours > 0) out += std::to_string(hours) + "h";
  if (hours > 0 || minutes > 0) out += std::to_string(minutes) + "m";
  out += std::to_string(ms / 1000 % 60);
  if (int64_t frac = ms % 1000; frac != 0) {
    std::string digits = std::to_string(frac);
    digits.insert(0, 3 - digits.size(), '0');
    while (digits.back() == '0') digits.pop_back();
    out += "." + digits;
  }
  return out + "s";
}

namespace {

json MetricsMeta(const json& object, int64_t now) {
  const json& meta = object.at("metadata");
  json m = {{"name", meta.value("name", "")}, {"creationTimestamp", Rfc3339(now)}};
  if (meta.contains("namespace")) m["namespace"] = meta["namespace"];
  m["labels"] = meta.value("labels", json::object());
  return m;
}

json UsageJson(const MeasuredUsage& u) {
  return {{"cpu", CpuQuantityOf(u.cpu_nanocores)}, {"memory", BytesQuantityOf(u.memory_bytes)}};
}

}  // namespace

json EncodePodMetrics(const json& pod, const MeasuredUsage& usage, int64_t now) {
  std::string container = "main";
  const json& cs = pod["spec"]["containers"];
  if (cs.is_array() && !cs.empty()) container = cs[0].value("name", "main");
  return {{"kind", "PodMetrics"},
          {"apiVersion", "metrics.k8s.io/v1beta1"},
          {"metadata", MetricsMeta(pod, now)},
          {"timestamp", Rfc3339(usage.timestamp_ms / 1000)},
          {"window", GoDuration(usage.window_ms)},
          {"containers", json::array({{{"name", container}, {"usage", UsageJson(usage)}}})}};
}

json EncodeNodeMetrics(const json& node, const MeasuredUsage& usage, int64_t now) {
  return {{"kind", "NodeMetrics"},
          {"apiVersion", "metrics.k8s.io/v1beta1"},
          {"metadata", MetricsMeta(node, now)},
          {"timestamp", Rfc3339(usage.timestamp_ms / 1000)},
          {"window", GoDuration(usage.window_ms)},
          {"usage", UsageJson(usage)}};
}

json MetricsTableColumns() {
  return json::array({TableColumn("Name", "string", "name", "Name of the resource", 0),
                      TableColumn("CPU", "string", "", "CPU usage", 0),
                      TableColumn("Memory", "string", "", "Memory usage", 0),
                      TableColumn("Window", "string", "", "Time window of the usage", 0)});
}

json PodMetricsTableCells(const json& metrics, int64_t) {
  // berth's pods have one container each.
  std::string cpu = "0", memory = "0";
  const json& cs = metrics["containers"];
  if (cs.is_array() && !cs.empty()) {
    cpu = cs[0]["usage"].value("cpu", "0");
    memory = cs[0]["usage"].value("memory", "0");
  }
  return json::array(
      {metrics["metadata"].value("name", ""), cpu, memory, metrics.value("window", "")});
}

json NodeMetricsTableCells(const json& metrics, int64_t) {
  return json::array({metrics["metadata"].value("name", ""), metrics["usage"].value("cpu", "0"),
                      metrics["usage"].value("memory", "0"), metrics.value("window", "")});
}

}  // namespace berth::k8s
