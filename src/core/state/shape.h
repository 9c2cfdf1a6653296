// JobShape: a job's request normalised into what the allocator places, for one partition.
//
// Rules (see docs/scheduling.md), with Slurm's meaning of each option:
// * Node mode (the common case): `nodes` nodes (min..max; as many as fit up to max), each given
//   exactly cpus/mem/gpus per node. Used when -N or --ntasks-per-node is given, when the job
//   has one task, or when GPUs are asked for per node or as a total (-G).
//   tasks per node = --ntasks-per-node, else ceil(ntasks / min nodes), else 1;
//   CPUs per node  = max(tasks x cpus-per-task, GPUs x cpus-per-gpu);
//   GPUs per node  = --gpus-per-node, else tasks x --gpus-per-task, else ceil(-G / min nodes);
//   memory per node = --mem, else --mem-per-cpu x CPUs, else --mem-per-gpu x GPUs, else the
//   default per CPU x CPUs. --mem=0 and --exclusive take whole nodes.
// * Task mode: -n > 1 without -N, --ntasks-per-node or per-node GPUs: tasks (each cpus-per-task
// CPUs, its
//   memory and --gpus-per-task GPUs) are packed onto as few nodes as the allocator finds, as
//   Slurm's default block distribution does; --mem then applies to each node used.
#ifndef BERTH_CORE_STATE_SHAPE_H_
#define BERTH_CORE_STATE_SHAPE_H_

#include <cstdint>
#include <string>
#include <vector>

#include "core/model/job.h"

namespace berth::core {

inline constexpr int16_t kAnyGpuType = -1;

struct GresNeed {
  int32_t gres_id = 0;  // interned name
  int64_t count = 0;
  friend bool operator==(const GresNeed&, const GresNeed&) = default;
};

struct JobShape {
  bool task_mode = false;
  int32_t min_nodes = 1;
  int32_t max_nodes = 1;
  // Node mode: per node. Task mode: per task (cpus, mem when not per node, gpus).
  int32_t cpus = 1;
  int64_t mem_mib = 0;
  int32_t gpus = 0;
  // Node mode only: a share of one device on each node (JobSpec::gpu_milli); 0 = none.
  int32_t gpu_milli = 0;
  int32_t tasks = 1;             // node mode: tasks per node; task mode: total tasks
  int64_t mem_per_node_mib = 0;  // task mode with --mem: each node used needs this much
  bool whole_node = false;       // --exclusive, partition OverSubscribe=EXCLUSIVE
  bool whole_mem = false;        // --mem=0
  bool exclusive_user = false;   // --exclusive=user
  int16_t gpu_type = kAnyGpuType;
  std::vector<GresNeed> gres;  // per node
  // Default memory per CPU to use for this job on a node whose own default applies (0 = the
  // node's memory / CPUs). Only read when no memory option was given.
  int64_t def_mem_per_cpu_mib = 0;
  bool mem_given = false;

  friend bool operator==(const JobShape&, const JobShape&) = default;
};

// The smallest total request, for the job-size priority factor and for TRES limits.
struct ShapeTotals {
  int64_t cpus = 0;
  int64_t gpus = 0;
  int64_t nodes = 0;
};
ShapeTotals MinimumTotals(const JobShape& shape);

// A text that is equal for two requests exactly when they are placed identically: partition,
// constraint, shape and excluded nodes.
std::string ShapeKeyText(int16_t partition, const std::string& constraint, const JobShape& shape,
                         const std::vector<uint32_t>& exclude);

}  // namespace berth::core

#endif  // BERTH_CORE_STATE_SHAPE_H_
