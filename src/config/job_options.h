// Job options by their sbatch long names ("nodes", "gpus-per-node", "time", "mem", ...), applied
// to a core::JobSpec with Slurm's value syntax and meaning. Used by scenario files and trace
// tools now, and by sbatch's option parser.
//
// The options (a leading "--" on the name is allowed; no abbreviations):
//   job-name, name, account, qos, reservation, user (berth's: the submitting user), uid (numeric)
//   partition        comma list
//   nodes            N or MIN-MAX, with Slurm's k/m suffixes; N > 0; MIN 0 means 1, MAX 0 none
//   ntasks, ntasks-per-node, ntasks-per-gpu, cpus-per-task, cpus-per-gpu   integers > 0
//   mem, mem-per-cpu, mem-per-gpu   sizes (common/units.h); --mem=0 asks for whole nodes
//   gpus, gpus-per-node, gpus-per-task   [type:]count
//   gres             comma list of name[:type][:count] (a "gres/" prefix allowed): gpu entries
//                    set gpus_per_node (and gpu_type), "mps:[type:]N" a share of N percent of
//                    one device (gpu_milli = 10 N, gpu_mps), the others replace spec.gres;
//                    "none" clears all. One GPU type per job: a later option with a type replaces
//                    it, one without a type keeps it.
//   time, time-min   Slurm's time limits (common/slurm_time.h)
//   begin, deadline  config/slurm_datetime.h: now[+N[unit]], uts<N>, YYYY-MM-DD[THH:MM[:SS]] UTC
//   nice             [-]N, |N| <= 2147483645; empty = 100, as in Slurm
//   priority         0..4294967293 or TOP
//   exclusive        empty (whole nodes), user, oversubscribe; mcs and topo are refused
//   oversubscribe, hold, requeue, no-requeue   flags
//   kill-on-invalid-dep   yes or no; empty = yes
//   constraint, dependency, array   the core's parsers (core/model/)
//   nodelist, exclude   hostlists; licenses   name[:count] comma list, counts > 0
#ifndef BERTH_CONFIG_JOB_OPTIONS_H_
#define BERTH_CONFIG_JOB_OPTIONS_H_

#include <cstdint>
#include <string_view>

#include "common/status.h"
#include "common/time.h"
#include "core/model/job.h"

namespace berth::config {

// Applies `--name=value` to `spec`. `now` resolves relative --begin values ("now+1hour").
// Flags without a value ("exclusive", "hold", "requeue", "no-requeue", "kill-on-invalid-dep")
// take an empty value. Errors name the option and the bad value, e.g.
// "invalid --time value '1:xx'". Unknown names: "unrecognized option '--foo'".
Status ApplyJobOption(std::string_view name, std::string_view value, Time now, core::JobSpec& spec);

// The same, with the cluster's MaxArraySize for --array (task ids must be below it; Slurm's
// default is 1001). The form above accepts any id below Slurm's own ceiling (4000001) and leaves
// the cluster's limit to whoever submits the job.
Status ApplyJobOption(std::string_view name, std::string_view value, Time now,
                      int32_t max_array_size, core::JobSpec& spec);

// Whether ApplyJobOption knows the name.
bool IsJobOption(std::string_view name);

}  // namespace berth::config

#endif  // BERTH_CONFIG_JOB_OPTIONS_H_
