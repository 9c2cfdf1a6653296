// The controller's Prometheus metrics (GET /metrics, docs/metrics.md): counters that the state
// thread (and whoever acts on nodes' power) increments, and the rendering of the exposition from
// those counters and the published views.
//
// Thread safety: MetricsCounters may be incremented and read from any thread (atomics, and a
// mutex inside PassHistogram); RenderMetrics reads the published views under view_mu like the
// other read-only endpoints and never waits for the state thread.
#ifndef BERTH_CONTROLLER_CONTROLLER_METRICS_H_
#define BERTH_CONTROLLER_CONTROLLER_METRICS_H_

#include <array>
#include <atomic>
#include <chrono>
#include <cstdint>
#include <map>
#include <memory>
#include <mutex>
#include <nlohmann/json_fwd.hpp>
#include <shared_mutex>
#include <string>
#include <string_view>
#include <unordered_map>
#include <utility>
#include <vector>

#include "common/prometheus_text.h"
#include "common/thread_annotations.h"
#include "common/time.h"
#include "core/model/job.h"
#include "core/model/job_state.h"
#include "net/http.h"

namespace berth::controller {

// The durations of scheduling passes (berth_scheduling_pass_duration_seconds).
class PassHistogram {
 public:
  PassHistogram();
  void Observe(std::chrono::steady_clock::duration d);
  prometheus::Histogram Snapshot() const;

 private:
  mutable Mutex mu_;
  prometheus::Histogram h_ GUARDED_BY(mu_);
};

// What the controller counts since it started (Prometheus counters start again at 0 with each
// process; rate() handles that).
struct MetricsCounters {
  // Autoscaling (power saving): incremented by the code that asks a node to power up or down,
  // and when a node does not come up within its resume timeout.
  std::atomic<uint64_t> power_resumes{0};
  std::atomic<uint64_t> power_suspends{0};
  std::atomic<uint64_t> resume_timeouts{0};
  // Jobs accepted, by the face they came through: berth's REST API (berth submit, sbatch, srun)
  // and the Kubernetes API (Pods, including those a Job controller makes).
  std::atomic<uint64_t> submissions_slurm{0};
  std::atomic<uint64_t> submissions_kubernetes{0};
  // Jobs that reached a final state (requeued ends are not final), by that state.
  std::array<std::atomic<uint64_t>, core::kNumJobStates> ends{};
  PassHistogram pass_seconds;

  void CountEnd(core::JobState s) {
    ends[static_cast<size_t>(s)].fetch_add(1, std::memory_order_relaxed);
  }
};

struct JobRecord;
struct NodeView;
struct PendingView;

// Jobs counted for GET /metrics: partition -> jobs by state, and (partition, reason) -> pending
// jobs. Every partition has its series, 0 included.
struct JobCounts {
  std::map<std::string, std::array<uint64_t, core::kNumJobStates>, std::less<>> by_state;
  std::map<std::pair<std::string, std::string_view>, uint64_t> pending;  // static names
};

// What GET /metrics reads of the controller's published views (controller_internal.h): the jobs
// counted while the caller holds the views' lock (CountJobs), the node view and the last pass.
struct MetricsSources {
  JobCounts jobs;
  std::shared_ptr<const std::vector<NodeView>> node_view;
  Time last_pass = kNoTime;
  int64_t passes = 0;
  const MetricsCounters& counters;
};

// The jobs of `records` by partition (the default partition's name for a job that names none)
// and state, and the pending ones by reason. REQUIRES: the views' lock held (shared) by the
// caller, as GET /v1/jobs holds it while it lists them.
JobCounts CountJobs(const std::map<core::JobId, std::shared_ptr<const JobRecord>>& records,
                    const std::unordered_map<core::JobId, PendingView>& pending,
                    const nlohmann::json& partitions);

// GET /metrics: the exposition in Prometheus's text format 0.0.4. It holds aggregates only (no
// user names); anyone who may reach the API may read it.
net::HttpResponse MetricsResponse(const MetricsSources& s);

}  // namespace berth::controller

#endif  // BERTH_CONTROLLER_CONTROLLER_METRICS_H_
