// SVG plots of simulated runs, drawn by berth itself (no plotting library): plain SVG 1.1 files
// that any browser opens. One line per policy, so that runs of one trace compare at a glance.
#ifndef BERTH_SIM_PLOT_H_
#define BERTH_SIM_PLOT_H_

#include <cstdint>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "common/status.h"
#include "sim/metrics.h"

namespace berth::sim {

// One policy's run of a trace.
struct PolicyRun {
  std::string policy;  // the legend's label
  std::vector<JobResult> jobs;
  int64_t capacity_procs = 0;  // the cluster's CPUs (SWF: P)
  int64_t capacity_gpus = 0;   // the cluster's GPUs (0 when none)
};

// utilization.svg samples time into at most this many buckets (each point is the bucket's
// average), so a year-long trace still makes a file of tens of kilobytes.
inline constexpr int kMaxPlotBuckets = 1000;

// Writes `dir`/utilization.svg (allocated CPUs, or GPUs when the runs used GPUs, as a fraction
// of capacity over time) and `dir`/wait_cdf.svg (the distribution of wait times, log-scale x),
// creating `dir` if missing. Errors name the path. Runs without jobs or capacity get a legend
// entry but no line.
[[nodiscard]] Status WritePlots(const std::string& dir, const std::vector<PolicyRun>& runs);

// A line chart in data coordinates, one line per series, for plots other than the two above (the
// GPU fill experiment's): x from x_min, y from 0, each to a round number above the data; points
// left of x_min are not drawn.
struct LineSeries {
  std::string label;
  std::vector<std::pair<double, double>> points;  // (x, y), x ascending
};
std::string LineChartSvg(std::string_view title, std::string_view x_label, std::string_view y_label,
                         const std::vector<LineSeries>& series, double x_min = 0);
// Writes `svg` to `dir`/`file`, creating `dir` if missing. Errors name the path.
[[nodiscard]] Status WriteSvg(const std::string& dir, const std::string& file,
                              const std::string& svg);

// The two documents WritePlots writes.
std::string UtilizationSvg(const std::vector<PolicyRun>& runs);
std::string WaitCdfSvg(const std::vector<PolicyRun>& runs);

}  // namespace berth::sim

#endif  // BERTH_SIM_PLOT_H_
