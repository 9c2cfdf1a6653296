// The environment a batch job starts with: a clean base (HOME, USER, LOGNAME, SHELL from the
// user's passwd entry, a default PATH), then the job's exported variables, then the job
// variables with Slurm 22.05's names and value formats (SLURM_JOB_ID, SLURM_JOB_NODELIST,
// SLURM_JOB_CPUS_PER_NODE="4(x2),2", CUDA_VISIBLE_DEVICES, ...) and berth's own (BERTH_JOB_ID,
// BERTH_ATTEMPT, BERTH_GPUS). docs/execution.md lists every variable.
//
// As in Slurm, some variables exist only when the job asked for them: sbatch exports them from
// its request (SLURM_NTASKS/SLURM_NPROCS for -n or --ntasks-per-node, SLURM_CPUS_PER_TASK for -c,
// SLURM_MEM_PER_NODE for --mem, SLURM_GPUS_PER_NODE, SLURM_SUBMIT_DIR, ...; see
// src/slurm/sbatch_job.h). Here they are kept, except that a requested task count becomes the
// count the allocation really has; the allocation's own memory and task count are not turned into
// SLURM_MEM_PER_NODE or SLURM_NTASKS when the job did not ask.
//
// Thread safety: all functions are pure.
#ifndef BERTH_AGENT_JOB_ENV_H_
#define BERTH_AGENT_JOB_ENV_H_

#include <cstdint>
#include <string>
#include <vector>

#include "agent/launch.h"
#include "common/time.h"

namespace berth::agent {

// Who the job runs as, from the passwd database.
struct JobUser {
  std::string name;
  uint32_t uid = 0;
  uint32_t gid = 0;
  std::string home;
  std::string shell;
};

// The PATH a job gets when it exports none.
inline constexpr const char* kDefaultJobPath = "/usr/local/bin:/usr/bin:/bin";

// "NAME=value" strings for execve. node_name is this node's name (SLURMD_NODENAME);
// start_time is when the job started (SLURM_JOB_START_TIME when spec.start_time is 0).
std::vector<std::string> BuildJobEnvironment(const LaunchSpec& spec, const JobUser& user,
                                             const std::string& node_name, Time start_time);

// Slurm's compressed list of counts: runs of equal values as "value(xN)", e.g. {4, 4, 2} ->
// "4(x2),2" (SLURM_JOB_CPUS_PER_NODE, SLURM_TASKS_PER_NODE).
std::string CompressCounts(const std::vector<int32_t>& counts);

// Every node's task count: spec.tasks_per_node when given, else Slurm's block layout of
// spec.ntasks over spec.cpus_per_node (see launch.h).
std::vector<int32_t> TasksPerNode(const LaunchSpec& spec);

// "0,1,3" from a list of indices.
std::string JoinIndices(const std::vector<int32_t>& indices);

}  // namespace berth::agent

#endif  // BERTH_AGENT_JOB_ENV_H_
