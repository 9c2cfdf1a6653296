#include "cli/sim_fill.h"

#include <chrono>
#include <cmath>
#include <cstdio>
#include <iterator>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "common/strings.h"
#include "core/sched/gpu_policy.h"
#include "sim/gpu_fill.h"
#include "sim/node_list.h"
#include "sim/plot.h"

namespace berth::cli {
namespace {

Result<std::vector<core::GpuPlacement>> ParsePlacements(const std::string& text) {
  std::vector<core::GpuPlacement> out;
  if (text.empty()) {
    out.assign(std::begin(core::kAllGpuPlacements), std::end(core::kAllGpuPlacements));
    return out;
  }
  for (const std::string& name : SplitNonEmpty(text)) {
    Result<core::GpuPlacement> p = core::ParseGpuPlacement(name);
    if (!p.ok()) return p.status().WithContext("--placement");
    out.push_back(*p);
  }
  if (out.empty()) return Status::InvalidArgument("--placement needs at least one policy");
  return out;
}

nlohmann::json ByCheckpoint(const std::array<double, sim::kFillCheckpoints.size()>& values) {
  nlohmann::json j = nlohmann::json::object();
  for (size_t i = 0; i < values.size(); ++i) {
    // Three decimals: shares are in milli-GPUs, so this is exact.
    j[std::to_string(sim::kFillCheckpoints[i])] = std::round(values[i] * 1000) / 1000;
  }
  return j;
}

nlohmann::json ToJson(const FillArgs& args, const sim::PodList& pods, const sim::NodeList& nodes,
                      const sim::FillRun& run, const sim::FillResult& r, double wall_s) {
  return {
      {"pod_list", pods.name},
      {"node_list", nodes.name},
      {"placement", std::string(core::GpuPlacementName(r.placement))},
      {"nodes", nodes.nodes.size()},
      {"gpus_total", r.gpus_total},
      {"unallocated_gpus", ByCheckpoint(r.unallocated_gpus)},
      {"allocated_share", ByCheckpoint(r.allocated_share)},
      {"list_pods", run.list_pods},
      {"list_demand_gpus", std::round(run.list_demand_gpus * 1000) / 1000},
      {"sampled_pods", run.sampled_pods},
      {"seed", args.seed},
      {"pods_arrived", r.pods_arrived},
      {"pods_placed", r.pods_placed},
      {"pods_refused", r.pods_refused},
      {"gpu_pods_refused", r.gpu_pods_refused},
      {"wall_s", std::round(wall_s * 1000) / 1000},
  };
}

void PrintTable(const sim::PodList& pods, const sim::NodeList& nodes, const sim::FillRun& run,
                uint64_t seed) {
  const int64_t gpus = run.results.empty() ? nodes.total_gpus : run.results[0].gpus_total;
  std::printf("pods     %s: %lld pods asking for %.1f GPUs (%.0f%% of the cluster)",
              pods.name.c_str(), static_cast<long long>(run.list_pods), run.list_demand_gpus,
              100.0 * run.list_demand_gpus / static_cast<double>(gpus));
  if (run.sampled_pods > 0) {
    std::printf(", then %lld drawn from it (seed %llu)", static_cast<long long>(run.sampled_pods),
                static_cast<unsigned long long>(seed));
  }
  std::printf("\ncluster  %s: %zu nodes, %lld GPUs\n\n", nodes.name.c_str(), nodes.nodes.size(),
              static_cast<long long>(gpus));
  std::printf("GPUs left unallocated when the arrived GPU demand reaches\n");
  std::printf("%-12s", "placement");
  for (int c : sim::kFillCheckpoints) std::printf(" %9d%%", c);
  std::printf(" %10s %9s\n", "placed", "refused");
  for (const sim::FillResult& r : run.results) {
    std::printf("%-12s", std::string(core::GpuPlacementName(r.placement)).c_str());
    for (double u : r.unallocated_gpus) std::printf(" %10.1f", u);
    std::printf(" %10lld %9lld\n", static_cast<long long>(r.pods_placed),
                static_cast<long long>(r.pods_refused));
  }
}

// The plot starts at 60% arrived demand: below, every policy has placed nearly every pod.
constexpr double kPlotFrom = 60;

// One SVG named after the pod list: unallocated GPUs against the arrived demand.
Status WritePlot(const std::string& dir, const sim::PodList& pods, const sim::FillRun& run) {
  std::vector<sim::LineSeries> series;
  for (const sim::FillResult& r : run.results) {
    series.push_back({std::string(core::GpuPlacementName(r.placement)), r.curve});
  }
  std::string stem = pods.name;
  if (stem.size() > 4 && stem.compare(stem.size() - 4, 4, ".csv") == 0)
    stem.resize(stem.size() - 4);
  const std::string title = "GPU fill: " + stem + " (" +
                            std::to_string(run.results.empty() ? 0 : run.results[0].gpus_total) +
                            " GPUs)";
  return sim::WriteSvg(dir, "fill_" + stem + ".svg",
                       sim::LineChartSvg(title, "arrived GPU demand (% of the cluster's GPUs)",
                                         "GPUs left unallocated", series, kPlotFrom));
}

}  // namespace

int RunFillCommand(const FillArgs& args) {
  auto fail = [](const Status& st) {
    std::fprintf(stderr, "berth sim: %s\n", st.message().c_str());
    return 1;
  };
  if (args.node_list.empty()) {
    return fail(Status::InvalidArgument(
        "--fill needs --cluster NODE_LIST (a node list such as openb_node_list_gpu_node.csv)"));
  }
  Result<std::vector<core::GpuPlacement>> placements = ParsePlacements(args.placements);
  if (!placements.ok()) return fail(placements.status());
  if (!sim::IsNodeListFile(args.node_list)) {
    return fail(Status::InvalidArgument(
        "--fill: " + args.node_list +
        " is not a node list (expected a header with sn, cpu_milli, memory_mib, gpu, model)"));
  }
  Result<sim::NodeList> nodes = sim::ReadNodeList(args.node_list);
  if (!nodes.ok()) return fail(nodes.status());
  Result<sim::PodList> pods = sim::ReadPodList(args.pod_list);
  if (!pods.ok()) return fail(pods.status());
  sim::FillOptions options;
  options.placements = *placements;
  options.seed = args.seed;
  const auto start = std::chrono::steady_clock::now();
  Result<sim::FillRun> run = sim::RunFill(*nodes, *pods, options);
  const double wall_s =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  if (!run.ok()) return fail(run.status());
  if (args.json) {
    nlohmann::json all = nlohmann::json::array();
    for (const sim::FillResult& r : run->results) {
      all.push_back(ToJson(args, *pods, *nodes, *run, r, wall_s));
    }
    std::printf("%s\n", all.dump(2).c_str());
  } else {
    PrintTable(*pods, *nodes, *run, args.seed);
  }
  if (!args.plot_dir.empty()) {
    Status st = WritePlot(args.plot_dir, *pods, *run);
    if (!st.ok()) return fail(st);
  }
  return 0;
}

}  // namespace berth::cli
