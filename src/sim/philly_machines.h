// The Philly machine list (`cluster_machine_list.csv` beside the Philly-derived job trace):
// `machineId, number of GPUs, single GPU mem`, e.g. `m0,2, 12GB`. `berth sim --cluster` reads it
// as the cluster to replay the trace on (docs/formats/gpu-traces.md).
#ifndef BERTH_SIM_PHILLY_MACHINES_H_
#define BERTH_SIM_PHILLY_MACHINES_H_

#include <cstdint>
#include <string_view>

#include "common/status.h"
#include "core/model/cluster_spec.h"

namespace berth::sim {

// The list gives no CPUs or memory: each node gets this many per GPU (an 8-GPU machine: 64 CPUs
// and 512 GiB, as the simulator's default GPU node).
inline constexpr int32_t kPhillyCpusPerGpu = 8;
inline constexpr int64_t kPhillyMemPerGpuMib = 64 * 1024;

// Whether the text's first non-blank line is the machine list's header (columns found by name,
// without case, as the trace readers do).
bool IsPhillyMachineList(std::string_view text);

// One node per row, named by machineId, with its GPUs typed by their memory ("12gb", "24gb").
// Columns are found by name; a malformed row (wrong field count, GPUs not in 1..64, a memory
// that is not a number of GB, a machine named twice) fails with "name:line: what is wrong".
Result<core::ClusterSpec> ReadPhillyMachineList(std::string_view text, std::string_view name);

}  // namespace berth::sim

#endif  // BERTH_SIM_PHILLY_MACHINES_H_
