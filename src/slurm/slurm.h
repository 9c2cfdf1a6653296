// berth_slurm's common declarations.
#ifndef BERTH_SLURM_SLURM_H_
#define BERTH_SLURM_SLURM_H_

#include <string_view>
#include <vector>

namespace berth::slurm {

// The Slurm command names that berth answers to (as `berth NAME` or through a symlink NAME).
const std::vector<std::string_view>& CommandNames();

}  // namespace berth::slurm

#endif  // BERTH_SLURM_SLURM_H_
