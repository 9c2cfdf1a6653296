// Slurm's small value formats. The first byte picks the parser, the rest is the text:
//   0 ParseTimeLimit  1 ParseTimeSeconds  2 ParseMemoryMiB  3 ParseArraySpec  4 ParseDependency
// Invariants: what parses gives an error with a message or a value in range, a time in seconds
// prints (FormatTimeLimit) as text that parses back to it, and a dependency's canonical form
// parses back to it (dependency.h promises ParseDependency(FormatDependency(d)) == d).
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <string_view>

#include "common/slurm_time.h"
#include "common/units.h"
#include "core/model/array_spec.h"
#include "core/model/dependency.h"

namespace {

template <typename T>
bool Failed(const berth::Result<T>& r) {
  if (!r.ok() && r.status().message().empty()) std::abort();
  return !r.ok();
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  if (size == 0) return 0;
  const std::string_view text(reinterpret_cast<const char*>(data) + 1, size - 1);
  switch (data[0] % 5) {
    case 0: {
      berth::Result<berth::Duration> limit = berth::ParseTimeLimit(text);
      if (Failed(limit)) break;
      if (*limit != berth::kInfinite && (*limit <= 0 || *limit % 60 != 0)) std::abort();
      break;
    }
    case 1: {
      berth::Result<berth::Duration> secs = berth::ParseTimeSeconds(text);
      if (Failed(secs) || *secs == berth::kInfinite) break;
      if (*secs < 0 || *secs > berth::kMaxSlurmDuration) std::abort();
      berth::Result<berth::Duration> again = berth::ParseTimeSeconds(berth::FormatTimeLimit(*secs));
      if (!again.ok() || *again != *secs) std::abort();
      break;
    }
    case 2: {
      berth::Result<int64_t> mib = berth::ParseMemoryMiB(text);
      if (Failed(mib)) break;
      if (*mib < 0 || *mib > berth::kMaxMemoryMiB) std::abort();
      break;
    }
    case 3: {
      berth::Result<berth::core::ArraySpec> spec = berth::core::ParseArraySpec(text, 100'001);
      if (Failed(spec)) break;
      if (spec->max_running < 0) std::abort();
      for (size_t i = 0; i < spec->task_ids.size(); ++i) {
        if (spec->task_ids[i] < 0 || spec->task_ids[i] >= 100'001) std::abort();
        if (i > 0 && spec->task_ids[i - 1] >= spec->task_ids[i]) std::abort();
      }
      break;
    }
    case 4: {
      berth::Result<berth::core::Dependency> dep = berth::core::ParseDependency(text);
      if (Failed(dep)) break;
      berth::Result<berth::core::Dependency> again =
          berth::core::ParseDependency(berth::core::FormatDependency(*dep));
      if (!again.ok() || !(*again == *dep)) std::abort();
      break;
    }
  }
  return 0;
}
