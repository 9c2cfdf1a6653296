// Small text helpers shared by sacct's option parsing and its view (not part of the interface).
#ifndef BERTH_SLURM_SACCT_INTERNAL_H_
#define BERTH_SLURM_SACCT_INTERNAL_H_

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace berth::slurm::sacct_internal {

std::optional<int64_t> Number(std::string_view s);  // a whole decimal integer

}  // namespace berth::slurm::sacct_internal

#endif  // BERTH_SLURM_SACCT_INTERNAL_H_
