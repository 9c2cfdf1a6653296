// seff (and `berth eff`): a job's CPU, memory and GPU efficiency in the layout of Slurm 22.05's
// contribs/seff script, followed by plain suggestions where the job asked for far more than it
// used ("Suggestion: memory: asked 64G, peaked at 3.1G: --mem=4G would do"). The suggestions
// are `berth report advice`'s over this one job (src/slurm/advice.h), in seff's short words.
//
// What berth measures (docs/execution.md): CPU time and the memory high-water mark of the whole
// job's cgroup, and the mean utilisation of its GPUs where the node can read it (NVML). seff's
// "Memory Utilized" is that high-water mark (Slurm sums the peaks of a step's tasks).
//
// Thread safety: all functions are pure.
#ifndef BERTH_SLURM_EFFICIENCY_H_
#define BERTH_SLURM_EFFICIENCY_H_

#include <string>
#include <vector>

#include "slurm/job_view.h"

namespace berth::slurm {

// What the report needs besides the job.
struct SeffContext {
  std::string cluster;
  int64_t alloc_mem_mib = 0;  // memory of the allocation (0: as asked)
};

// The seff report, lines ending in '\n'.
std::string SeffReport(const JobView& v, const SeffContext& c);

// The suggestions alone (also part of SeffReport), each a sentence without the "Suggestion: "
// prefix. Only for jobs that ended; none when the request fit.
std::vector<std::string> EfficiencySuggestions(const JobView& v, const SeffContext& c);

// seff's "-d" lines ("Slurm data: ...").
std::string SeffDebug(const JobView& v, const SeffContext& c);

// seff's kbytes2str: "3.10 GB", "0.00 MB".
std::string SeffMemory(double kbytes);
// seff's time2str: "00:01:23", "1-02:03:04".
std::string SeffTime(int64_t seconds);
// A short size for suggestions: "64G", "3.1G", "512M".
std::string ShortMemory(int64_t mib);

}  // namespace berth::slurm

#endif  // BERTH_SLURM_EFFICIENCY_H_
