// The parts of `berth sim` around the driver: building the simulated cluster from flags or a
// file, running one policy with a progress bar, and writing the table, JSON, CSV and plots.
#ifndef BERTH_CLI_SIM_REPORT_H_
#define BERTH_CLI_SIM_REPORT_H_

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "common/status.h"
#include "config/cluster_config.h"
#include "core/config.h"
#include "core/model/cluster_spec.h"
#include "sim/driver.h"
#include "sim/metrics.h"
#include "sim/power.h"
#include "sim/trace.h"

namespace berth::cli {

struct SimSetup {
  core::ClusterSpec cluster;
  sim::ClusterShape shape;
  bool has_scheduler_config = false;  // --config or --cluster set scheduler keys
  core::SchedulerConfig scheduler;
  std::string description;    // "1 pool of 100 processors", "64 nodes x ..."
  config::PowerSaving power;  // from --cluster / --config (enabled() when ResumeProgram is set)
  std::optional<Duration> restart_delay;  // --restart-delay: overrides LasRestartDelay
  bool node_lists = true;                 // each job's node list is made (--jobs-out prints it)
};

// The power-saving flags of `berth sim`.
struct PowerFlags {
  bool given = false;      // any of the flags below: power saving is modelled
  bool power_all = false;  // --power-all
  Duration boot_time = 120;
  std::optional<Duration> suspend_time;  // --suspend-time (-1: never)
};

// The power model of a run: on when the configuration enables power saving or a flag asks for
// it; SuspendTime and the rest from the configuration (suspending only with a SuspendProgram,
// as the controller), --suspend-time overriding.
sim::PowerOptions MakePowerOptions(const SimSetup& setup, const PowerFlags& flags);

// Chooses the cluster: --cluster FILE, else --nodes ..., else for SWF one pool of P processors,
// else (GPU traces) 128 nodes of 64 CPUs, 512 GiB and 8 GPUs.
Result<SimSetup> MakeSimSetup(const sim::Trace& trace, const std::string& cluster_file,
                              const std::string& config_file, int64_t nodes, int64_t cpus_per_node,
                              int64_t mem_per_node, int64_t gpus_per_node,
                              const std::string& gpu_type);

struct PolicyOutcome {
  std::string policy;
  sim::SimResult result;
  sim::Metrics metrics;
  double wall_s = 0;
};

// Runs the trace under `policy` (a preset name; with a --config/--cluster scheduler and no
// --policy given, "config" runs that configuration).
Result<PolicyOutcome> RunPolicy(const sim::Trace& trace, const SimSetup& setup,
                                const std::string& policy, bool policy_given, bool progress,
                                const sim::PowerOptions& power = {});

// Prints the table (or JSON) to stdout and writes --jobs-out / --plot files.
Status WriteOutputs(const sim::Trace& trace, const SimSetup& setup,
                    const std::vector<PolicyOutcome>& outcomes, bool json,
                    const std::string& jobs_out, const std::string& plot_dir);

}  // namespace berth::cli

#endif  // BERTH_CLI_SIM_REPORT_H_
