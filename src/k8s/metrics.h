// metrics.k8s.io/v1beta1 (docs/kubernetes.md, "kubectl top"): what the node agents measured,
// turned into the PodMetrics and NodeMetrics that metrics-server serves. Agents report cumulative
// readings (CPU time so far, the memory working set now) with every status report; a rate needs
// two of them, so a usage is the CPU time between a node's (or a job's) last two readings divided
// by the time between them (metrics-server's `window`), stamped with the later one's time.
//
// Thread safety: pure functions and plain data.
#ifndef BERTH_K8S_METRICS_H_
#define BERTH_K8S_METRICS_H_

#include <cstdint>
#include <map>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>

namespace berth::k8s {

// One reading of a node or a job, as its agent took it.
struct UsageSample {
  int64_t time_ms = 0;       // when (Unix milliseconds)
  double cpu_seconds = 0;    // CPU time spent so far (cumulative)
  int64_t memory_bytes = 0;  // the working set now
};

// A usage as metrics-server shows it: over the window that ends at `timestamp_ms`.
struct MeasuredUsage {
  int64_t timestamp_ms = 0;
  int64_t window_ms = 0;
  int64_t cpu_nanocores = 0;
  int64_t memory_bytes = 0;
};

// The usage between two readings of the same counter; nullopt when `later` is not later, or its
// CPU time went backwards (the counter restarted: a new attempt, a rebooted node).
std::optional<MeasuredUsage> UsageBetween(const UsageSample& earlier, const UsageSample& later);

// What the agents measured: each node's usage by name, each running job's by id.
struct UsageView {
  std::map<std::string, MeasuredUsage> nodes;
  std::map<uint32_t, MeasuredUsage> jobs;
};

// Quantities as the API server writes them: CPU in canonical decimal form ("250m", "1",
// "123456n"), memory in canonical binary form ("2Ki", "1500", "3Mi").
std::string CpuQuantityOf(int64_t nanocores);
std::string BytesQuantityOf(int64_t bytes);
// A duration as Go's time.Duration prints it, to the millisecond ("10.062s", "500ms", "1m5s").
std::string GoDuration(int64_t ms);

// A PodMetrics of a Pod (its name, namespace, labels and one container's usage) and a NodeMetrics
// of a Node, `now` their creationTimestamp as metrics-server stamps objects it makes per request.
nlohmann::json EncodePodMetrics(const nlohmann::json& pod, const MeasuredUsage& usage, int64_t now);
nlohmann::json EncodeNodeMetrics(const nlohmann::json& node, const MeasuredUsage& usage,
                                 int64_t now);
// Table columns and cells (`kubectl get podmetrics` / `nodemetrics`): NAME, CPU, MEMORY, WINDOW.
nlohmann::json MetricsTableColumns();
nlohmann::json PodMetricsTableCells(const nlohmann::json& metrics, int64_t now);
nlohmann::json NodeMetricsTableCells(const nlohmann::json& metrics, int64_t now);

}  // namespace berth::k8s

#endif  // BERTH_K8S_METRICS_H_
