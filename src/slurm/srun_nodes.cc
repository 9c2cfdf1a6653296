// A step over several nodes: which node is this one, the layout as it travels to the others
// (BERTH_STEP), and the variables that stay on the batch node. See srun.h.
#include <nlohmann/json.hpp>
#include <stdexcept>

#include "slurm/srun.h"

namespace berth::slurm {

StepSplit SplitStep(const StepLayout& layout, const Allocation& alloc, bool in_container) {
  StepSplit out;
  out.local = layout.nodes.size();
  for (size_t i = 0; i < layout.nodes.size(); ++i) {
    if (layout.node_index[i] == alloc.this_node && !in_container) {
      out.local = i;
    } else {
      out.others.push_back(layout.nodes[i]);
    }
  }
  return out;
}

bool NodeSpecificVariable(std::string_view name) {
  static constexpr std::string_view kNames[] = {
      "CUDA_VISIBLE_DEVICES", "GPU_DEVICE_ORDINAL", "SLURM_JOB_GPUS",  "SLURM_GPUS_ON_NODE",
      "SLURM_STEP_GPUS",      "BERTH_GPUS",         "BERTH_JOB_TOKEN", "SLURM_TASK_PID",
      "SLURM_CPUS_ON_NODE",   "SLURMD_NODENAME",    "HOSTNAME",        "SLURM_TOPOLOGY_ADDR",
      kStepVariable};
  for (std::string_view n : kNames) {
    if (name == n) return true;
  }
  return false;
}

std::string EncodeStepLayout(const StepLayout& l, uint32_t step_id) {
  return nlohmann::json{{"step_id", step_id},         {"nodes", l.nodes},
                        {"node_index", l.node_index}, {"tasks_per_node", l.tasks_per_node},
                        {"ntasks", l.ntasks},         {"cpus_per_task", l.cpus_per_task}}
      .dump();
}

Result<std::pair<StepLayout, uint32_t>> DecodeStepLayout(std::string_view text) {
  nlohmann::json j = nlohmann::json::parse(text, nullptr, false);
  StepLayout l;
  try {
    if (!j.is_object()) throw std::invalid_argument("not a JSON object");
    l.nodes = j.at("nodes").get<std::vector<std::string>>();
    l.node_index = j.at("node_index").get<std::vector<int32_t>>();
    l.tasks_per_node = j.at("tasks_per_node").get<std::vector<int32_t>>();
    l.ntasks = j.at("ntasks").get<int32_t>();
    l.cpus_per_task = j.at("cpus_per_task").get<int32_t>();
    if (!j.at("step_id").is_number_unsigned() || j["step_id"].get<uint64_t>() > UINT32_MAX) {
      throw std::invalid_argument("step_id is not a step number");
    }
    const uint32_t step_id = j["step_id"].get<uint32_t>();
    if (l.nodes.empty() || l.nodes.size() != l.node_index.size() ||
        l.nodes.size() != l.tasks_per_node.size()) {
      throw std::invalid_argument("nodes, node_index and tasks_per_node differ in length");
    }
    int32_t sum = 0;
    for (int32_t t : l.tasks_per_node) {
      if (t < 0 || t > l.ntasks) throw std::invalid_argument("a node's task count is out of range");
      sum += t;
    }
    if (sum != l.ntasks || l.cpus_per_task < 1) {
      throw std::invalid_argument("the task counts do not add up to ntasks");
    }
    return std::make_pair(std::move(l), step_id);
  } catch (const std::exception& e) {
    return Status::InvalidArgument("srun: error: bad " + std::string(kStepVariable) + ": " +
                                   e.what());
  }
}

}  // namespace berth::slurm
