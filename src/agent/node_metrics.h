// The agent's Prometheus metrics (`berth agent --metrics-listen HOST:PORT`, GET /metrics;
// docs/metrics.md): the node's CPU time and memory from /proc, its GPUs through NVML, and the
// agent's job counts. Parsing and rendering are pure; the agent daemon gathers the input.
//
// Thread safety: all functions are pure.
#ifndef BERTH_AGENT_NODE_METRICS_H_
#define BERTH_AGENT_NODE_METRICS_H_

#include <cstdint>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "common/status.h"

namespace berth::agent {

// Seconds the node's CPUs spent in each mode since boot, summed over CPUs, from the first line
// of /proc/stat ("cpu  user nice system idle iowait irq softirq steal ..."), in that order of
// modes; `ticks_per_second` is USER_HZ (sysconf(_SC_CLK_TCK)). Lines with fewer fields (old
// kernels) give fewer modes. kInvalidArgument when there is no such line.
Result<std::vector<std::pair<std::string, double>>> ParseProcStatCpu(std::string_view text,
                                                                     double ticks_per_second);

struct NodeMemory {
  int64_t total_bytes = 0;
  int64_t available_bytes = 0;
};
// MemTotal and MemAvailable from /proc/meminfo (kB there). kInvalidArgument when either is
// missing or not a number.
Result<NodeMemory> ParseMeminfo(std::string_view text);

struct GpuSample {
  int32_t index = 0;
  std::string type;           // berth's GPU type, e.g. "h100"
  double utilization = -1;    // 0..1; < 0 = unknown (no series)
  int64_t memory_bytes = -1;  // total; < 0 = unknown
  int64_t memory_used_bytes = -1;
};

// What one scrape of an agent shows.
struct AgentMetricsInput {
  std::string node;
  std::string cgroups;  // "v1", "v2", "none"
  bool registered = false;
  int32_t cpus = 0;                                         // as declared to the controller
  std::vector<std::pair<std::string, double>> cpu_seconds;  // by mode; empty = unreadable
  NodeMemory memory;                                        // 0s = unreadable
  std::vector<GpuSample> gpus;                              // NVML's devices; empty without
  int64_t jobs_running = 0;
  uint64_t jobs_started = 0;
  uint64_t jobs_ended = 0;
};

// The exposition in Prometheus's text format 0.0.4. kInternal if the encoder refused a line
// (a bug: names are fixed here).
Result<std::string> RenderAgentMetrics(const AgentMetricsInput& in);

// "HOST:PORT", "[IPv6]:PORT" or ":PORT" (every address) with a port in 0..65535 (0: any free
// one) -> {host, port}. kInvalidArgument, quoting the text, otherwise.
Result<std::pair<std::string, uint16_t>> ParseListenAddress(std::string_view text);

}  // namespace berth::agent

#endif  // BERTH_AGENT_NODE_METRICS_H_
