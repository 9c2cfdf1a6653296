#include "core/state/shape.h"

#include <algorithm>

#include "core/state/cluster_state.h"

namespace berth::core {
namespace {

int32_t CeilDiv(int64_t a, int64_t b) {
  return static_cast<int32_t>((a + b - 1) / b);
}

// Fills the memory part of a shape. `per` is what one unit (a node in node mode, a task in task
// mode) holds.
void ShapeMemory(const JobSpec& spec, int64_t def_mem_per_cpu, JobShape& s) {
  s.mem_given = true;
  if (spec.mem_per_node_mib == 0) {
    s.whole_mem = true;
  } else if (spec.mem_per_node_mib > 0) {
    if (s.task_mode) {
      s.mem_per_node_mib = spec.mem_per_node_mib;
    } else {
      s.mem_mib = spec.mem_per_node_mib;
    }
  } else if (spec.mem_per_cpu_mib > 0) {
    s.mem_mib = spec.mem_per_cpu_mib * s.cpus;
  } else if (spec.mem_per_gpu_mib > 0) {
    s.mem_mib = spec.mem_per_gpu_mib * s.gpus;
  } else {
    s.mem_given = false;
    s.def_mem_per_cpu_mib = def_mem_per_cpu;
  }
}

}  // namespace

ShapeTotals MinimumTotals(const JobShape& s) {
  ShapeTotals t;
  if (s.task_mode) {
    t.cpus = static_cast<int64_t>(s.tasks) * s.cpus;
    t.gpus = static_cast<int64_t>(s.tasks) * s.gpus;
    t.nodes = 1;
  } else {
    t.cpus = static_cast<int64_t>(s.min_nodes) * s.cpus;
    t.gpus = static_cast<int64_t>(s.min_nodes) * s.gpus;
    t.nodes = s.min_nodes;
  }
  return t;
}

std::string ShapeKeyText(int16_t partition, const std::string& constraint, const JobShape& s,
                         const std::vector<uint32_t>& exclude) {
  std::string key =
      std::to_string(partition) + '|' + constraint + '|' + std::to_string(s.task_mode) + '|' +
      std::to_string(s.min_nodes) + '-' + std::to_string(s.max_nodes) + '|' +
      std::to_string(s.cpus) + '|' + std::to_string(s.gpus) + ':' + std::to_string(s.gpu_type) +
      'm' + std::to_string(s.gpu_milli) + '|' + std::to_string(s.mem_mib) + '|' +
      std::to_string(s.tasks) + '|' + std::to_string(s.mem_per_node_mib) + '|' +
      std::to_string(s.whole_node) + std::to_string(s.whole_mem) + std::to_string(s.mem_given) +
      std::to_string(s.exclusive_user) + '|' + std::to_string(s.def_mem_per_cpu_mib);
  for (const GresNeed& g : s.gres)
    key += '|' + std::to_string(g.gres_id) + ':' + std::to_string(g.count);
  for (uint32_t n : exclude) key += "|x" + std::to_string(n);
  return key;
}

Result<JobShape> ClusterState::ComputeShape(const JobSpec& spec, const PartitionInfo& p) const {
  auto bad = [](const std::string& m) { return Status::InvalidArgument(m); };
  if (spec.min_nodes < 0 || spec.max_nodes < 0 || spec.ntasks < 0 || spec.cpus_per_task < 0 ||
      spec.gpus < 0 || spec.gpus_per_node < 0 || spec.gpus_per_task < 0 ||
      spec.ntasks_per_node < 0 || spec.cpus_per_gpu < 0 || spec.ntasks_per_gpu < 0) {
    return bad("negative resource count");
  }
  if (spec.gpu_milli < 0 || spec.gpu_milli > kGpuMilliPerDevice) {
    return bad("a GPU share must be 1..1000 thousandths of one device");
  }
  if (spec.gpu_milli > 0 && (spec.gpus > 0 || spec.gpus_per_node > 0 || spec.gpus_per_task > 0)) {
    return bad("a job cannot ask for a GPU share and whole GPUs together");
  }
  if (spec.max_nodes > 0 && spec.min_nodes > spec.max_nodes) {
    return bad("minimum node count exceeds the maximum");
  }
  JobShape s;
  const int32_t cpt = std::max(1, spec.cpus_per_task);
  s.whole_node =
      spec.exclusive == ExclusiveMode::kNode || p.spec.oversubscribe == OverSubscribe::kExclusive;
  s.exclusive_user = spec.exclusive == ExclusiveMode::kUser;
  if (!spec.gpu_type.empty()) {
    std::optional<int16_t> t = FindGpuType(spec.gpu_type);
    if (!t)
      return bad("Invalid generic resource (gres) specification: no GPU of type '" + spec.gpu_type +
                 "'");
    s.gpu_type = *t;
  }
  for (const NamedCount& g : spec.gres) {
    std::optional<int32_t> id = FindGres(g.name);
    if (!id || g.count < 0) {
      return bad("Invalid generic resource (gres) specification: '" + g.name + "'");
    }
    if (g.count > 0) s.gres.push_back({*id, g.count});
  }
  int64_t def_mem =
      p.spec.def_mem_per_cpu_mib > 0 ? p.spec.def_mem_per_cpu_mib : spec_.def_mem_per_cpu_mib;
  const bool nodes_given = spec.min_nodes > 0;
  // GPUs asked per node (or as a total, or tasks per GPU) fix a per-node layout: node mode.
  // An overcommitted job (-O) packs its tasks on the nodes it names: one task's CPUs a node.
  s.task_mode = !spec.overcommit && spec.ntasks > 1 && !nodes_given && spec.ntasks_per_node == 0 &&
                spec.gpus == 0 && spec.gpus_per_node == 0 && spec.ntasks_per_gpu == 0 &&
                spec.gpu_milli == 0;
  if (s.task_mode) {
    s.tasks = spec.ntasks;
    s.cpus = cpt;
    s.gpus = spec.gpus_per_task;
    if (spec.cpus_per_gpu > 0) s.cpus = std::max(s.cpus, s.gpus * spec.cpus_per_gpu);
    s.min_nodes = 1;
    s.max_nodes = spec.max_nodes > 0 ? spec.max_nodes : spec.ntasks;
    ShapeMemory(spec, def_mem, s);
    return s;
  }
  int32_t n = 1;
  if (nodes_given) {
    n = spec.min_nodes;
  } else if (spec.ntasks_per_node > 0 && spec.ntasks > 0) {
    n = CeilDiv(spec.ntasks, spec.ntasks_per_node);
  }
  s.min_nodes = n;
  // A node range lets the job grow up to max only when the task count does not fix the layout.
  s.max_nodes = (spec.max_nodes > n && spec.ntasks == 0) ? spec.max_nodes : n;
  int32_t tpn = 1;
  if (spec.ntasks_per_node > 0) {
    tpn = spec.ntasks_per_node;
  } else if (spec.ntasks > 0) {
    tpn = CeilDiv(spec.ntasks, n);
  }
  if (spec.gpus_per_node > 0) {
    s.gpus = spec.gpus_per_node;
  } else if (spec.gpus_per_task > 0) {
    s.gpus = spec.gpus_per_task * tpn;
  } else if (spec.gpus > 0) {
    s.gpus = CeilDiv(spec.gpus, n);
  }
  s.gpu_milli = spec.gpu_milli;
  if (spec.ntasks_per_gpu > 0 && spec.ntasks == 0 && spec.ntasks_per_node == 0) {
    tpn = std::max(1, s.gpus * spec.ntasks_per_gpu);
  }
  s.tasks = tpn;
  s.cpus = spec.overcommit ? cpt : tpn * cpt;
  if (spec.cpus_per_gpu > 0) s.cpus = std::max(s.cpus, s.gpus * spec.cpus_per_gpu);
  ShapeMemory(spec, def_mem, s);
  return s;
}

}  // namespace berth::core
