#include "agent/node_metrics.h"

#include <charconv>

#include "common/prometheus_text.h"

namespace berth::agent {

namespace {

using prometheus::MetricType;

// The next whitespace-separated field of `s`, consumed; "" at the end.
std::string_view NextField(std::string_view& s) {
  size_t start = s.find_first_not_of(" \t");
  if (start == std::string_view::npos) {
    s = {};
    return {};
  }
  size_t end = s.find_first_of(" \t", start);
  if (end == std::string_view::npos) end = s.size();
  std::string_view field = s.substr(start, end - start);
  s.remove_prefix(end);
  return field;
}

template <typename T>
bool ParseWhole(std::string_view s, T& out) {
  auto [p, ec] = std::from_chars(s.data(), s.data() + s.size(), out);
  return ec == std::errc() && p == s.data() + s.size() && !s.empty();
}

}  // namespace

Result<std::vector<std::pair<std::string, double>>> ParseProcStatCpu(std::string_view text,
                                                                     double ticks_per_second) {
  static constexpr const char* kModes[] = {"user",   "nice", "system",  "idle",
                                           "iowait", "irq",  "softirq", "steal"};
  if (ticks_per_second <= 0) return Status::InvalidArgument("ticks per second must be positive");
  while (!text.empty()) {
    size_t eol = text.find('\n');
    std::string_view line = text.substr(0, eol);
    text = eol == std::string_view::npos ? std::string_view() : text.substr(eol + 1);
    if (NextField(line) != "cpu") continue;
    std::vector<std::pair<std::string, double>> out;
    for (const char* mode : kModes) {
      std::string_view field = NextField(line);
      if (field.empty()) break;
      uint64_t ticks = 0;
      if (!ParseWhole(field, ticks)) {
        return Status::InvalidArgument("/proc/stat: the cpu line has a bad " + std::string(mode) +
                                       " field '" + std::string(field) + "'");
      }
      out.emplace_back(mode, static_cast<double>(ticks) / ticks_per_second);
    }
    if (out.empty()) return Status::InvalidArgument("/proc/stat: the cpu line has no fields");
    return out;
  }
  return Status::InvalidArgument("/proc/stat: no 'cpu' line");
}

Result<NodeMemory> ParseMeminfo(std::string_view text) {
  int64_t total_kb = -1, available_kb = -1;
  while (!text.empty()) {
    size_t eol = text.find('\n');
    std::string_view line = text.substr(0, eol);
    text = eol == std::string_view::npos ? std::string_view() : text.substr(eol + 1);
    std::string_view key = NextField(line);
    int64_t* target = key == "MemTotal:"       ? &total_kb
                      : key == "MemAvailable:" ? &available_kb
                                               : nullptr;
    if (target == nullptr) continue;
    std::string_view value = NextField(line);
    if (!ParseWhole(value, *target) || *target < 0) {
      return Status::InvalidArgument("/proc/meminfo: bad " + std::string(key) + " '" +
                                     std::string(value) + "'");
    }
  }
  if (total_kb < 0 || available_kb < 0) {
    return Status::InvalidArgument(std::string("/proc/meminfo: no ") +
                                   (total_kb < 0 ? "MemTotal" : "MemAvailable"));
  }
  return NodeMemory{total_kb * 1024, available_kb * 1024};
}

Result<std::string> RenderAgentMetrics(const AgentMetricsInput& in) {
  prometheus::TextEncoder e;
  e.Family("berth_node_info", MetricType::kGauge,
           "This agent's node name and cgroup version (always 1).");
  e.Sample({{"node", in.node}, {"cgroups", in.cgroups}}, 1);
  e.Family("berth_agent_registered", MetricType::kGauge,
           "1 while the agent is registered with the controller, else 0.");
  e.Sample(in.registered ? 1 : 0);
  e.Family("berth_node_cpus", MetricType::kGauge, "CPUs the agent declares to the controller.");
  e.Sample(in.cpus);
  if (!in.cpu_seconds.empty()) {
    e.Family("berth_node_cpu_seconds_total", MetricType::kCounter,
             "Seconds the node's CPUs spent in each mode since boot, summed over CPUs "
             "(/proc/stat).");
    for (const auto& [mode, seconds] : in.cpu_seconds) e.Sample({{"mode", mode}}, seconds);
  }
  if (in.memory.total_bytes > 0) {
    e.Family("berth_node_memory_size_bytes", MetricType::kGauge,
             "The node's memory (MemTotal in /proc/meminfo).");
    e.Sample(static_cast<double>(in.memory.total_bytes));
    e.Family("berth_node_memory_available_bytes", MetricType::kGauge,
             "Memory available for new work without swapping (MemAvailable in /proc/meminfo).");
    e.Sample(static_cast<double>(in.memory.available_bytes));
  }
  if (!in.gpus.empty()) {
    auto labels = [](const GpuSample& g) -> prometheus::Labels {
      return {{"gpu", std::to_string(g.index)}, {"type", g.type}};
    };
    e.Family("berth_node_gpu_utilization_ratio", MetricType::kGauge,
             "The share of NVML's last sample period in which a kernel ran on the GPU (0 to 1).");
    for (const GpuSample& g : in.gpus) {
      if (g.utilization >= 0) e.Sample(labels(g), g.utilization);
    }
    e.Family("berth_node_gpu_memory_size_bytes", MetricType::kGauge, "The GPU's memory (NVML).");
    for (const GpuSample& g : in.gpus) {
      if (g.memory_bytes >= 0) e.Sample(labels(g), static_cast<double>(g.memory_bytes));
    }
    e.Family("berth_node_gpu_memory_used_bytes", MetricType::kGauge,
             "The GPU's memory in use (NVML).");
    for (const GpuSample& g : in.gpus) {
      if (g.memory_used_bytes >= 0) e.Sample(labels(g), static_cast<double>(g.memory_used_bytes));
    }
  }
  e.Family("berth_agent_jobs_running", MetricType::kGauge,
           "Job attempts whose supervisor runs on this node.");
  e.Sample(static_cast<double>(in.jobs_running));
  e.Family("berth_agent_jobs_started_total", MetricType::kCounter,
           "Job attempts this agent started (since the agent started).");
  e.Sample(static_cast<double>(in.jobs_started));
  e.Family("berth_agent_jobs_ended_total", MetricType::kCounter,
           "Ended job attempts this agent reported to the controller (since the agent started).");
  e.Sample(static_cast<double>(in.jobs_ended));
  if (!e.status().ok()) return Status::Internal("agent metrics: " + e.status().message());
  return e.text();
}

Result<std::pair<std::string, uint16_t>> ParseListenAddress(std::string_view text) {
  auto bad = [&](const std::string& why) {
    return Status::InvalidArgument("expected HOST:PORT (e.g. 0.0.0.0:9464 or 127.0.0.1:0), got '" +
                                   std::string(text) + "': " + why);
  };
  const size_t colon = text.rfind(':');
  if (colon == std::string_view::npos) return bad("no port");
  std::string_view host = text.substr(0, colon);
  std::string_view port_text = text.substr(colon + 1);
  if (!host.empty() && host.front() == '[') {
    if (host.size() < 3 || host.back() != ']') return bad("an unclosed '['");
    host = host.substr(1, host.size() - 2);
  } else if (host.find(':') != std::string_view::npos) {
    return bad("an IPv6 address goes in brackets, e.g. [::1]:9464");
  }
  uint32_t port = 0;
  if (!ParseWhole(port_text, port) || port > 65535) return bad("the port is not in 0..65535");
  return std::make_pair(std::string(host), static_cast<uint16_t>(port));
}

}  // namespace berth::agent
