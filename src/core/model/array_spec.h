// Job array specifications, as `sbatch --array` takes them: "0-15", "0-15:4", "1,3,5-7",
// "0-99%10" (at most 10 tasks running at once).
#ifndef BERTH_CORE_MODEL_ARRAY_SPEC_H_
#define BERTH_CORE_MODEL_ARRAY_SPEC_H_

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "common/status.h"

namespace berth::core {

struct ArraySpec {
  std::vector<int32_t> task_ids;  // sorted ascending, no duplicates; empty = not an array job
  int32_t max_running = 0;        // the "%N" throttle; 0 = no limit

  bool empty() const { return task_ids.empty(); }
  friend bool operator==(const ArraySpec&, const ArraySpec&) = default;
};

// Slurm's ceiling on MaxArraySize (read_config.c): no cluster allows a task id at or above it.
inline constexpr int32_t kSlurmMaxArraySize = 4000001;

// Parses Slurm's --array syntax. Task ids must be >= 0 and < max_array_size (Slurm's
// MaxArraySize, default 1001). Errors name the offending part, e.g. "bad array range '5-2'".
Result<ArraySpec> ParseArraySpec(std::string_view text, int32_t max_array_size = 1001);

// Formats task ids the way scontrol shows ArrayTaskId: six or more ids in one arithmetic series
// of step > 1 spanning more than 10 as "first-last:step"; otherwise runs of consecutive ids as
// "a-b", other ids singly, joined by ","; then "%N" when throttled.
// Examples: {0,4,8,12}, max 2 -> "0,4,8,12%2"; {1,3,5,6,7} -> "1,3,5-7";
// {500,1500,...,16500}, max 26 -> "500-16500:1000%26".
std::string FormatArrayTaskIds(const std::vector<int32_t>& task_ids, int32_t max_running = 0);

}  // namespace berth::core

#endif  // BERTH_CORE_MODEL_ARRAY_SPEC_H_
