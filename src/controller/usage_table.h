// The usage the node agents measured (`kubectl top`, metrics.k8s.io; docs/kubernetes.md): each
// agent's status report carries its node's cumulative CPU time and memory working set, and each
// running job's there; the table keeps each node's and job's recent readings and turns the
// latest one and the newest one at least a second older into a rate (k8s::UsageBetween).
// In memory only: agents report again every heartbeat, so a restarted controller has usage again
// within two of them.
//
// Thread safety: every method may be called from any thread (one mutex inside). The state thread
// records agents' reports; the Kubernetes face's connection threads read View.
// Used by Controller::Impl (controller_agents.cc) and its Kubernetes port (k8s_port.cc).
#ifndef BERTH_CONTROLLER_USAGE_TABLE_H_
#define BERTH_CONTROLLER_USAGE_TABLE_H_

#include <cstdint>
#include <deque>
#include <map>
#include <string>
#include <vector>

#include "common/thread_annotations.h"
#include "k8s/metrics.h"

namespace berth::controller {

class UsageTable {
 public:
  struct JobReading {
    uint32_t job = 0;
    int32_t attempt = 0;
    k8s::UsageSample sample;
  };
  // One GPU's use as the node's agent measured it (NVML) when it reported.
  struct GpuReading {
    int32_t index = 0;               // berth's device index on the node
    int32_t utilization = 0;         // percent of the last sample period, 0..100
    int64_t memory_used_bytes = -1;  // < 0: not reported
  };

  // One report of `node`, received at `now_ms` (the controller's clock): its own reading, those
  // of the jobs running there, and its GPUs' (empty when it measures none). A job the node no
  // longer reports is forgotten; a job's new attempt starts its readings afresh.
  void Record(const std::string& node, int64_t now_ms, const k8s::UsageSample& node_reading,
              const std::vector<JobReading>& jobs, std::vector<GpuReading> gpus = {}) EXCLUDES(mu_);
  // Forgets a node and its jobs (it went down, or was removed).
  void ForgetNode(const std::string& node) EXCLUDES(mu_);
  // The usage of every node and job that has two readings, the latest received after
  // `now_ms - kStaleMs` (an agent that stopped reporting shows none).
  k8s::UsageView View(int64_t now_ms) const EXCLUDES(mu_);

  // sstat's view of a running job: its latest reading and the largest working set of all its
  // attempt's readings (sampled each heartbeat: a peak between two readings is missed).
  struct JobLatest {
    uint32_t job = 0;
    std::string node;
    int32_t attempt = 0;
    k8s::UsageSample latest;
    int64_t max_memory_bytes = 0;
  };
  // Every job with a reading received after `now_ms - kStaleMs`, by id.
  std::vector<JobLatest> Latest(int64_t now_ms) const EXCLUDES(mu_);

  // Each node's GPU readings of its last report, when that came after `now_ms - kStaleMs` and
  // measured at least one GPU, by node name.
  std::map<std::string, std::vector<GpuReading>> GpuLatest(int64_t now_ms) const EXCLUDES(mu_);

  // The clock the callers pass as `now_ms`: wall time in milliseconds since the epoch.
  static int64_t ClockMs();

  static constexpr int64_t kMinWindowMs = 1000;
  static constexpr int64_t kStaleMs = 60'000;

 private:
  struct Series {
    int32_t attempt = 0;
    std::deque<k8s::UsageSample> readings;  // the agent's, oldest first, the last kKeepMs
    int64_t received_ms = 0;                // when the last one came
    int64_t max_memory_bytes = 0;           // the largest working set of the attempt
  };
  static void Add(Series& s, int64_t now_ms, const k8s::UsageSample& r);
  static std::optional<k8s::MeasuredUsage> UsageOf(const Series& s, int64_t now_ms);
  static constexpr int64_t kKeepMs = 60'000;

  mutable Mutex mu_;
  std::map<std::string, Series> nodes_ GUARDED_BY(mu_);
  std::map<uint32_t, std::pair<std::string, Series>> jobs_ GUARDED_BY(mu_);  // id -> node, series
  struct NodeGpus {
    int64_t received_ms = 0;
    std::vector<GpuReading> gpus;
  };
  std::map<std::string, NodeGpus> gpus_ GUARDED_BY(mu_);
};

}  // namespace berth::controller

#endif  // BERTH_CONTROLLER_USAGE_TABLE_H_
