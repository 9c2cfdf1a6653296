// The virtual-time driver of `berth sim`: replays a trace through the production scheduler
// (core::Scheduler) and the production state (core::ClusterState), applying each Plan exactly as
// the controller does (ClusterState::Apply). Only the clock and the processes are simulated: a
// job "runs" from its start until min(run time, time limit), and preempted jobs stop at once.
//
// Event order at each distinct time t (as docs/sim.md specifies): every job end at t, then every
// submission at t, then one scheduling pass (repeated at the same t when it preempted jobs).
#ifndef BERTH_SIM_DRIVER_H_
#define BERTH_SIM_DRIVER_H_

#include <cstdint>
#include <functional>
#include <string>
#include <vector>

#include "common/status.h"
#include "core/config.h"
#include "core/model/cluster_spec.h"
#include "sim/metrics.h"
#include "sim/power.h"
#include "sim/trace.h"

namespace berth::sim {

// How the trace's generic requests become jobs on the simulated cluster.
struct ClusterShape {
  // One pool (SWF's model): a single node with `pool_procs` CPUs; each job asks for its procs.
  bool single_pool = false;
  int64_t pool_procs = 0;
  // Otherwise: nodes as described by the ClusterSpec; SWF jobs ask for procs tasks of one CPU,
  // GPU jobs for their GPUs (whole nodes of gpus_per_node first) and a CPU share per GPU.
  int32_t gpus_per_node = 0;
  int32_t cpus_per_gpu = 1;
};

struct SimProgress {
  int64_t jobs_done = 0;
  int64_t jobs_total = 0;
  Time now = 0;
};

struct SimOptions {
  core::SchedulerConfig scheduler = core::SchedulerConfig::Easy();
  ClusterShape shape;
  // Power saving in virtual time (sim/power.h); off by default.
  PowerOptions power;
  // Called now and then (every few thousand events); may be empty.
  std::function<void(const SimProgress&)> progress;
  // Each finished job's node list (JobResult::node_list, which only --jobs-out prints): off, a
  // replay spares a name copy per node of every job.
  bool node_lists = true;
};

struct SimResult {
  std::vector<JobResult> jobs;  // finished jobs, in order of their end
  int64_t capacity_procs = 0;   // CPUs of the cluster (P for a single pool)
  int64_t capacity_gpus = 0;
  int64_t passes = 0;                   // scheduling passes run
  int64_t rejected = 0;                 // jobs the cluster refused at submission
  std::vector<std::string> rejections;  // the first few refusals, "trace id N: why"
  int64_t never_started = 0;            // jobs still pending when nothing more could happen
  int64_t preemptions = 0;
  PowerStats power;  // enabled only when options.power was
};

// Builds the JobSpec of a trace job for the cluster shape (JSON Lines jobs keep their own spec).
core::JobSpec ToJobSpec(const TraceJob& job, const ClusterShape& shape);

// Runs the whole trace.
Result<SimResult> Simulate(const Trace& trace, const core::ClusterSpec& cluster,
                           const SimOptions& options);

}  // namespace berth::sim

#endif  // BERTH_SIM_DRIVER_H_
