#include "sim/gpu_fill.h"

#include <map>
#include <random>

namespace berth::sim {
namespace {

using core::GpuDeviceFree;
using core::GpuNodeFree;
using core::GpuRequest;

// A type bit that no device has: the request of a pod whose GPU models are all absent.
constexpr int kNoSuchType = core::kMaxGpuTypes - 1;

// The cluster as the policies see it: one GpuNodeFree per node over per-node device storage.
struct FillCluster {
  std::vector<std::vector<GpuDeviceFree>> devices;
  std::vector<GpuNodeFree> nodes;
  std::map<std::string, int> type_ids;  // GPU model -> type id
  int64_t gpus_total = 0;
};

Result<FillCluster> MakeCluster(const NodeList& list) {
  FillCluster c;
  c.devices.resize(list.nodes.size());
  for (size_t i = 0; i < list.nodes.size(); ++i) {
    const ListedNode& n = list.nodes[i];
    int type = 0;
    if (n.gpus > 0) {
      auto [it, added] = c.type_ids.emplace(n.model, static_cast<int>(c.type_ids.size()));
      if (it->second >= kNoSuchType) {
        return Status::InvalidArgument(list.name + ":" + std::to_string(n.line) + ": more than " +
                                       std::to_string(kNoSuchType) + " GPU models");
      }
      type = it->second;
    }
    c.devices[i].assign(static_cast<size_t>(n.gpus),
                        GpuDeviceFree{core::kMilliPerGpu, static_cast<uint8_t>(type)});
    c.gpus_total += n.gpus;
  }
  for (size_t i = 0; i < list.nodes.size(); ++i) {
    const ListedNode& n = list.nodes[i];
    c.nodes.push_back({n.cpu_milli, n.cpu_milli, n.mem_mib, n.mem_mib, c.devices[i]});
  }
  if (c.gpus_total == 0) return Status::InvalidArgument(list.name + ": the nodes have no GPUs");
  return c;
}

GpuRequest ToRequest(const PodShape& p, const std::map<std::string, int>& type_ids) {
  GpuRequest r;
  r.cpu_milli = p.cpu_milli;
  r.mem_mib = p.mem_mib;
  r.gpus = p.gpus;
  r.share_milli = p.share_milli;
  for (const std::string& m : p.gpu_models) {
    auto it = type_ids.find(m);
    if (it != type_ids.end()) r.allowed_types |= uint64_t{1} << it->second;
  }
  if (!p.gpu_models.empty() && r.allowed_types == 0) r.allowed_types = uint64_t{1} << kNoSuchType;
  return r;
}

double Demand(const GpuRequest& r) {
  return static_cast<double>(r.total_gpu_milli()) / core::kMilliPerGpu;
}

// The arrivals: the list in order, then seeded draws until 130% of the GPUs have arrived.
std::vector<uint32_t> Arrivals(const std::vector<GpuRequest>& requests, double gpus_total,
                               uint64_t seed, int64_t* sampled) {
  const double target = gpus_total * kFillCheckpoints.back() / 100.0;
  std::vector<uint32_t> order;
  double arrived = 0;
  for (uint32_t i = 0; i < requests.size() && arrived < target; ++i) {
    order.push_back(i);
    arrived += Demand(requests[i]);
  }
  bool any_gpu = false;
  for (const GpuRequest& r : requests) any_gpu = any_gpu || Demand(r) > 0;
  std::mt19937_64 rng(seed);
  std::uniform_int_distribution<size_t> pick(0, requests.empty() ? 0 : requests.size() - 1);
  while (any_gpu && arrived < target) {
    const uint32_t i = static_cast<uint32_t>(pick(rng));
    order.push_back(i);
    arrived += Demand(requests[i]);
    ++*sampled;
  }
  return order;
}

FillResult RunOne(core::GpuPlacement placement, const FillCluster& initial,
                  const std::vector<GpuRequest>& requests, const std::vector<uint32_t>& order,
                  const core::FgdWorkload& workload) {
  FillCluster c = initial;  // fresh device storage: re-point the views
  for (size_t i = 0; i < c.nodes.size(); ++i) c.nodes[i].devices = c.devices[i];
  core::FgdCache cache(&workload);
  FillResult r;
  r.placement = placement;
  r.gpus_total = c.gpus_total;
  const double total = static_cast<double>(c.gpus_total);
  double arrived = 0;
  int64_t allocated_milli = 0;
  size_t next_checkpoint = 0;
  double next_curve = 0;
  r.curve.emplace_back(0, total);
  for (uint32_t index : order) {
    const GpuRequest& req = requests[index];
    ++r.pods_arrived;
    std::optional<core::GpuChoice> choice = core::PickGpuPlacement(placement, req, c.nodes, &cache);
    if (choice) {
      GpuNodeFree& node = c.nodes[static_cast<size_t>(choice->node)];
      std::vector<GpuDeviceFree>& devs = c.devices[static_cast<size_t>(choice->node)];
      node.cpu_free_milli -= req.cpu_milli;
      node.mem_free_mib -= req.mem_mib;
      for (size_t d = 0; d < devs.size(); ++d) {
        if ((choice->devices >> d) & 1) devs[d].free_milli -= req.milli_per_device();
      }
      allocated_milli += req.total_gpu_milli();
      ++r.pods_placed;
    } else {
      ++r.pods_refused;
      if (req.total_gpu_milli() > 0) ++r.gpu_pods_refused;
    }
    arrived += Demand(req);
    const double pct = 100.0 * arrived / total;
    const double unallocated = total - static_cast<double>(allocated_milli) / core::kMilliPerGpu;
    if (pct >= next_curve) {
      r.curve.emplace_back(pct, unallocated);
      while (next_curve <= pct) next_curve += 0.5;
    }
    while (next_checkpoint < kFillCheckpoints.size() &&
           pct >= kFillCheckpoints[next_checkpoint] - 1e-9) {
      r.unallocated_gpus[next_checkpoint] = unallocated;
      r.allocated_share[next_checkpoint] = 1 - unallocated / total;
      ++next_checkpoint;
    }
  }
  // A list too small to reach a checkpoint (no GPU pods at all): what is unallocated at the end.
  for (; next_checkpoint < kFillCheckpoints.size(); ++next_checkpoint) {
    r.unallocated_gpus[next_checkpoint] =
        total - static_cast<double>(allocated_milli) / core::kMilliPerGpu;
    r.allocated_share[next_checkpoint] = 1 - r.unallocated_gpus[next_checkpoint] / total;
  }
  return r;
}

}  // namespace

Result<FillRun> RunFill(const NodeList& nodes, const PodList& pods, const FillOptions& options) {
  BERTH_ASSIGN_OR_RETURN(FillCluster cluster, MakeCluster(nodes));
  std::vector<GpuRequest> requests;
  requests.reserve(pods.pods.size());
  FillRun run;
  for (const PodShape& p : pods.pods) {
    requests.push_back(ToRequest(p, cluster.type_ids));
    run.list_demand_gpus += Demand(requests.back());
  }
  run.list_pods = static_cast<int64_t>(requests.size());
  // FGD's workload: the shapes of the whole list, each pod weighing 1, and the cluster's
  // devices per type, which set each type's scarcity.
  const std::vector<double> weights(requests.size(), 1.0);
  std::vector<int64_t> supply(core::kMaxGpuTypes, 0);
  for (const std::vector<GpuDeviceFree>& devs : cluster.devices) {
    for (const GpuDeviceFree& d : devs) ++supply[d.type];
  }
  const core::FgdWorkload workload = core::FgdWorkload::Build(requests, weights, supply);
  const std::vector<uint32_t> order =
      Arrivals(requests, static_cast<double>(cluster.gpus_total), options.seed, &run.sampled_pods);
  for (core::GpuPlacement p : options.placements) {
    run.results.push_back(RunOne(p, cluster, requests, order, workload));
  }
  return run;
}

}  // namespace berth::sim
