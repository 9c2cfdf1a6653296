// Shared by the Slurm-named commands.
#include "slurm/slurm.h"

namespace berth::slurm {

const std::vector<std::string_view>& CommandNames() {
  static const std::vector<std::string_view> kNames = {
      "sbatch", "squeue", "sinfo", "scancel", "scontrol", "sacct", "sprio", "seff", "srun"};
  return kNames;
}

}  // namespace berth::slurm
