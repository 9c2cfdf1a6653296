// Scenario files: a cluster (configuration lines, docs/formats/cluster-config.md), then timed
// events, run through the production scheduler and state in virtual time; the output is a
// decision log. Golden tests diff the log against an expected file (docs/formats/scenario.md).
//
//   NodeName=gpu[01-04] CPUs=64 RealMemory=512000 Gres=gpu:h100:8
//   PartitionName=gpu Nodes=gpu[01-04] Default=YES MaxTime=1-00:00:00
//   at 0 submit --user=alice --nodes=2 --gpus-per-node=8 --time=60 --run=1800
//   at 0 submit --user=bob --gpus-per-node=1 --time=10
//   at 600 drain gpu03 maintenance
//   at 900 end 1 failed
//
// Each distinct time runs, in order: automatic ends (jobs reaching min(--run, time limit)),
// the file's events at that time in file order, then one scheduling pass (more at the same time
// when the pass preempted jobs, whose victims stop at once).
#ifndef BERTH_SIM_SCENARIO_H_
#define BERTH_SIM_SCENARIO_H_

#include <string>
#include <string_view>

#include "common/status.h"

namespace berth::sim {

// Runs a scenario's text and returns its decision log. Errors name the line.
Result<std::string> RunScenario(std::string_view text, std::string_view name);

}  // namespace berth::sim

#endif  // BERTH_SIM_SCENARIO_H_
