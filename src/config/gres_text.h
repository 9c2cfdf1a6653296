// Slurm's generic-resource (GRES) lists, as slurm.conf's NodeName Gres= and sbatch --gres take
// them: comma-separated "name[:type][:count]", e.g. "gpu:h100:8,shard:16", "gpu:2", "gpu".
//
// Thread safety: all functions are pure.
#ifndef BERTH_CONFIG_GRES_TEXT_H_
#define BERTH_CONFIG_GRES_TEXT_H_

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "common/status.h"

namespace berth::config {

struct GresEntry {
  std::string name;  // "gpu", "shard"
  std::string type;  // "h100"; "" when untyped
  int64_t count = 1;

  friend bool operator==(const GresEntry&, const GresEntry&) = default;
};

enum class GresSyntax {
  kNodeConfig,  // slurm.conf Gres=: also "name[:type]:no_consume:count" (the flag is dropped)
  kJobRequest,  // sbatch --gres: also a "gres/" prefix ("gres/gpu:2"), as Slurm adds one itself
};

// Parses a GRES list. The last ':' field is the count when it is a number (with an optional
// K/M/G/T/P suffix, x1024 each), otherwise the type, and the count is 1. At most one type.
// Errors (kInvalidArgument) name the bad entry: "bad GRES entry 'gpu:a:b:2': ...".
Result<std::vector<GresEntry>> ParseGresList(std::string_view text, GresSyntax syntax);

}  // namespace berth::config

#endif  // BERTH_CONFIG_GRES_TEXT_H_
