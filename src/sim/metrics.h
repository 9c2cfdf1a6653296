// Metrics over a simulated run: waits, bounded slowdown, utilisation, job completion times,
// fairness. The formulas for the SWF metrics are fixed by the spec in docs/sim.md.
#ifndef BERTH_SIM_METRICS_H_
#define BERTH_SIM_METRICS_H_

#include <cstdint>
#include <string>
#include <vector>

#include "common/time.h"

namespace berth::sim {

// One simulated job, as it ran.
struct JobResult {
  uint64_t trace_id = 0;
  uint32_t job_id = 0;  // berth's id
  std::string user;
  Time submit = 0;
  Time start = 0;
  Time end = 0;           // start + actual
  int64_t procs = 0;      // CPUs allocated in total (SWF: the job's procs)
  int64_t gpus = 0;       // GPUs allocated in total
  int64_t gpu_milli = 0;  // GPU shares allocated in total (thousandths of a device)
  int32_t nodes = 0;
  std::string node_list;  // hostlist form, for --jobs-out
  std::string state;      // "COMPLETED", "TIMEOUT" (cut at its limit), ...
};

struct Metrics {
  int64_t jobs = 0;
  double avg_wait_s = 0;
  double median_wait_s = 0;  // mean of the two middle values for an even count
  double max_wait_s = 0;
  double p95_wait_s = 0;   // nearest-rank 95th percentile (reported with power saving)
  double avg_bsld = 0;     // mean of max(1, (wait + actual) / max(actual, 10))
  double utilization = 0;  // sum(procs x actual) / (P x makespan)
  double makespan_s = 0;   // last end - first submit
  // GPU traces (when any job used GPUs):
  bool has_gpus = false;
  double avg_jct_s = 0;        // job completion time = end - submit
  double p95_jct_s = 0;        // nearest-rank 95th percentile
  double gpu_utilization = 0;  // sum(gpus x actual) / (total GPUs x makespan)
  // Fairness: Jain's index over users of their mean bounded slowdown; 0 when < 2 users.
  bool has_users = false;
  double fairness_jain = 0;
};

// Computes the metrics. `capacity_procs` is P (or the cluster's CPUs); `capacity_gpus` the
// cluster's GPUs (0 when none).
Metrics ComputeMetrics(const std::vector<JobResult>& jobs, int64_t capacity_procs,
                       int64_t capacity_gpus);

}  // namespace berth::sim

#endif  // BERTH_SIM_METRICS_H_
