// The Alibaba 2023 ("openb") lists that the GPU fill experiment reads (docs/formats/gpu-traces.md
// "Node list" and docs/sim.md "GPU fill experiment"):
//
//   node list:  sn,cpu_milli,memory_mib,gpu,model            (openb_node_list_gpu_node.csv)
//   pod shapes: name,cpu_milli,memory_mib,num_gpu,gpu_milli[,gpu_spec,...]  (every pod list)
//
// Columns are found by name (any order, extra columns ignored), as the trace readers do. A row
// that is not well-formed fails the read with "file:line: what is wrong".
#ifndef BERTH_SIM_NODE_LIST_H_
#define BERTH_SIM_NODE_LIST_H_

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "common/status.h"
#include "core/model/cluster_spec.h"

namespace berth::sim {

struct ListedNode {
  std::string name;  // sn
  int64_t cpu_milli = 0;
  int64_t mem_mib = 0;
  int32_t gpus = 0;   // 0..64
  std::string model;  // "" for a CPU node
  int64_t line = 0;
};

struct NodeList {
  std::string name;  // file name without directories
  std::vector<ListedNode> nodes;
  int64_t total_gpus = 0;
};

// Whether a CSV header line is an openb node list (has sn, cpu_milli and gpu columns).
bool IsNodeListHeader(std::string_view header_line);
// Whether the file at `path` starts with such a header (false when it cannot be read).
bool IsNodeListFile(const std::string& path);

Result<NodeList> ParseNodeList(std::string_view text, std::string_view name);
Result<NodeList> ReadNodeList(const std::string& path);

// The nodes as a cluster for the normal replay: whole CPUs (cpu_milli / 1000, at least 1), the
// memory, and `gpu` GPUs typed by the model. One default partition, as --nodes gives.
core::ClusterSpec NodeListCluster(const NodeList& list);

// One pod of a pod list, as the fill experiment needs it: every row is kept (times and phase
// are not read, so Pending pods count too).
struct PodShape {
  int64_t cpu_milli = 0;
  int64_t mem_mib = 0;
  int32_t gpus = 0;         // whole GPUs (num_gpu > 1, or num_gpu 1 with gpu_milli 1000)
  int32_t share_milli = 0;  // num_gpu 1 with gpu_milli 1..999: a share of one GPU
  std::vector<std::string> gpu_models;  // gpu_spec split at '|'; empty: any model
  int64_t line = 0;
};

struct PodList {
  std::string name;
  std::vector<PodShape> pods;
};

Result<PodList> ParsePodList(std::string_view text, std::string_view name);
Result<PodList> ReadPodList(const std::string& path);

}  // namespace berth::sim

#endif  // BERTH_SIM_NODE_LIST_H_
