// Job dependencies, as `sbatch --dependency` takes them:
//   after:ID[+MIN][:ID[+MIN]...]  afterany:ID[:ID...]  afterok:...  afternotok:...
//   aftercorr:...  singleton
// joined by "," (all must hold) or "?" (any may hold; the two separators cannot be mixed).
// An ID is a job id ("123"), an array task ("123_4"), or a whole array ("123", or "123_*").
#ifndef BERTH_CORE_MODEL_DEPENDENCY_H_
#define BERTH_CORE_MODEL_DEPENDENCY_H_

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "common/status.h"
#include "common/time.h"

namespace berth::core {

enum class DependencyType : uint8_t {
  kAfter,       // target started (or was cancelled before starting), then waited MIN minutes
  kAfterAny,    // target ended, whatever its state
  kAfterOk,     // target completed with exit code 0
  kAfterNotOk,  // target ended in any state but COMPLETED
  kAfterCorr,   // array task N of this job waits for task N of the target array (afterok)
  kSingleton,   // no other job of the same name and user is running or suspended
};

std::string_view DependencyTypeName(DependencyType t);  // "afterok", ...

inline constexpr int32_t kAllArrayTasks = -1;

struct DependencyTarget {
  uint32_t job_id = 0;
  int32_t array_task = kAllArrayTasks;  // a single task, or every task of the array
  Duration delay = 0;                   // after:ID+MIN, in seconds

  friend bool operator==(const DependencyTarget&, const DependencyTarget&) = default;
};

struct DependencyCondition {
  DependencyType type = DependencyType::kAfterAny;
  std::vector<DependencyTarget> targets;  // empty for singleton

  friend bool operator==(const DependencyCondition&, const DependencyCondition&) = default;
};

struct Dependency {
  std::vector<DependencyCondition> conditions;  // empty = no dependency
  bool any = false;                             // joined by "?" rather than ","

  bool empty() const { return conditions.empty(); }
  friend bool operator==(const Dependency&, const Dependency&) = default;
};

// Parses the --dependency value. Errors name the bad part, e.g.
// "invalid dependency type 'aftr'", "invalid job id 'x1' in dependency".
Result<Dependency> ParseDependency(std::string_view text);

// The canonical text form, e.g. "afterok:12_3,singleton" or "after:7+5?afterany:8".
// ParseDependency(FormatDependency(d)) == d.
std::string FormatDependency(const Dependency& d);

// The Dependency= field of `scontrol show job` for a job just submitted with `d` (Slurm 22.05
// _depend_list2str): one entry per target, e.g.
// "afterok:12_*(unfulfilled)?afterany:13(unfulfilled)", "singleton(unfulfilled)",
// "after:7+5(unfulfilled)"; repeated (type, job, task) entries shown once; "(null)" when `d` is
// empty. A whole-array target prints "ID_*" when ID is in `array_job_ids` (the target is a job
// array) and plain "ID" otherwise, as Slurm decides by looking the job up. Fulfilled conditions,
// which Slurm drops from the field, are the caller's to remove from `d`.
std::string FormatDependencyForScontrol(const Dependency& d,
                                        const std::vector<uint32_t>& array_job_ids = {});

}  // namespace berth::core

#endif  // BERTH_CORE_MODEL_DEPENDENCY_H_
