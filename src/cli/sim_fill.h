// `berth sim POD_LIST --cluster NODE_LIST --fill`: the GPU fill experiment (sim/gpu_fill.h) with
// its table, JSON and plot.
#ifndef BERTH_CLI_SIM_FILL_H_
#define BERTH_CLI_SIM_FILL_H_

#include <cstdint>
#include <string>

namespace berth::cli {

struct FillArgs {
  std::string pod_list;
  std::string node_list;
  std::string placements;  // comma-separated; "" = all five
  uint64_t seed = 1;
  bool json = false;
  std::string plot_dir;
};

// Runs it and prints the results; returns the exit code (1 on bad input, with the message on
// stderr).
int RunFillCommand(const FillArgs& args);

}  // namespace berth::cli

#endif  // BERTH_CLI_SIM_FILL_H_
