// Slurm's memory sizes: what `sbatch --mem`, `--mem-per-cpu` and `--mem-per-gpu` accept, and how
// scontrol prints MinMemoryNode=/MinMemoryCPU=/MinTmpDiskNode=.
//
// Thread safety: all functions are pure.
#ifndef BERTH_COMMON_UNITS_H_
#define BERTH_COMMON_UNITS_H_

#include <cstdint>
#include <string>
#include <string_view>

#include "common/status.h"

namespace berth {

// The largest size ParseMemoryMiB accepts, in MiB (2^62; Slurm keeps sizes in a uint64 whose
// top bit flags "per CPU").
inline constexpr int64_t kMaxMemoryMiB = INT64_C(1) << 62;

// Parses a memory size in MiB, as Slurm 22.05's str_to_mbytes() (src/common/proc_args.c): a
// decimal integer with an optional unit K, M, G or T (any case, powers of 1024), optionally
// followed by 'B' or 'b': "4096", "4G", "4GB", "500m", "1tb", "5MB". No unit means MiB. K rounds
// up to whole MiB ("1K" and "1024K" are 1, "1025K" is 2). "0" is valid (for --mem it asks for all
// of a node's memory). Errors (kInvalidArgument) quote the text; rejected are negatives, spaces,
// fractions ("1.5G"), a lone "B", other units ("4P", "4GiB") and sizes over kMaxMemoryMiB.
// (Slurm's strtoll also takes leading blanks and a '+' sign; berth does not.)
Result<int64_t> ParseMemoryMiB(std::string_view text);

// A size in MiB as scontrol prints it (convert_num_unit(..., UNIT_MEGA, NO_VAL,
// CONVERT_NUM_UNIT_EXACT) on a float): scaled by 1024 while the value is a multiple of 512, so
// 0 -> "0", 500 -> "500M", 2600 -> "2600M", 4096 -> "4G", 128000 -> "125G", 1048576 -> "1T",
// 1536 -> "1.50G" (a half unit counts as exact and prints with two decimals). Like Slurm it goes
// through a float, so values above 2^24 MiB may be rounded. Negative values print as "<n>M".
std::string FormatMemoryMiB(int64_t mib);

}  // namespace berth

#endif  // BERTH_COMMON_UNITS_H_
