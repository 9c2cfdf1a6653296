// One job attempt's cgroups: created fresh for each attempt (after cgroup.kill a group kills
// every later child cloned into it, so a group is never reused), with its limits set before any
// process joins, and removed at the end.
//
// Placement: under a parent group (e.g. "berth") that sits, on v1 and hybrid hosts, below this
// process's own cgroup in each hierarchy (a delegated subtree: a supervisor started inside a
// container or service stays inside it), or at the hierarchy root when asked (Slurm's
// /sys/fs/cgroup/<controller>/slurm). On cgroup-v2 hosts the parent is always at the root: v2
// lets a group that holds processes enable controllers for its children only at the root.
//
//   v1: memory (memory.limit_in_bytes, and memory.memsw.limit_in_bytes set to the same value
//       where swap accounting exists, so swap cannot stretch the limit), cpuset (cpuset.cpus,
//       cpuset.mems copied from the parent), pids (pids.max), cpuacct (usage), freezer, plus the
//       cgroup2 mount of a hybrid host for cgroup.kill, cgroup.freeze and the process list.
//   v2: memory.max, memory.swap.max = 0, cpuset.cpus, cpu.max (the CPU count as quota), pids.max.
//
// Thread safety: a JobCgroup is used by one thread.
#ifndef BERTH_AGENT_JOB_CGROUP_H_
#define BERTH_AGENT_JOB_CGROUP_H_

#include <sys/types.h>

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "agent/cgroup_layout.h"
#include "common/status.h"

namespace berth::agent {

struct JobCgroupSpec {
  std::string parent = "berth";  // the parent group's name, shared by every job on the node
  bool parent_at_root = false;   // v1/hybrid: at the hierarchy root instead of below our own
  std::string name;              // e.g. "job_12_0"
  std::vector<int32_t> cpus;     // empty: the parent's CPUs
  int64_t memory_bytes = 0;      // 0: no limit
  int64_t pids_max = 0;          // 0: no limit
  // CPU bandwidth in thousandths of a CPU (cgroup v2 cpu.max, v1 cpu.cfs_quota_us); 0: v2 caps
  // at the CPUs held, v1 sets none (the CPUs are pinned).
  int64_t cpu_quota_millis = 0;
  // v1: join a cpuset group. Joining one costs about 10 ms per job on these kernels (the attach
  // waits for an RCU grace period), so by default jobs are bound with CPU affinity instead;
  // BERTH_CPUSET_CGROUP=1 in the agent's environment turns cpuset groups on.
  bool v1_cpuset = false;
};

// The group name of an attempt: "job_<id>_<attempt>_<tag>", the tag a hash of the job's folder,
// so that two agents on one kernel (test clusters, `berth up` next to a real agent) never share a
// group, while the same attempt always gets the same name.
std::string JobCgroupName(uint32_t job_id, int32_t attempt, const std::string& job_dir);

// The parent group's directory in the hierarchy that holds the cpuset controller ("" when there
// is none): where other jobs' groups (and their cpuset.cpus) are.
std::string CpusetParentDir(const CgroupLayout& layout, const JobCgroupSpec& spec);

// The CPUs the parent group may use (creating the parent and filling in its cpuset.cpus and
// cpuset.mems from its own parent if they are empty, as v1 requires), and the CPUs that the
// other job groups under it hold, one entry per group and CPU (stale empty groups removed
// first, as in JobCgroup::Create).
struct CpusetView {
  std::vector<int32_t> allowed;
  std::vector<int32_t> taken;
};
Result<CpusetView> ReadCpusetView(const CgroupLayout& layout, const JobCgroupSpec& spec);

class JobCgroup {
 public:
  // Creates the groups and sets the limits. A leftover group of the same name (an earlier
  // supervisor of this attempt died) is emptied and replaced; empty job groups older than a
  // minute under the parent (their supervisor was killed before it could remove them) are
  // removed. `notes` gets what could not be enforced (e.g. no pids controller).
  // REQUIRES: layout.mode != kNone.
  static Result<std::unique_ptr<JobCgroup>> Create(const CgroupLayout& layout,
                                                   const JobCgroupSpec& spec,
                                                   std::vector<std::string>* notes);
  ~JobCgroup();  // closes the cgroup.procs files; the groups stay until Remove()

  JobCgroup(const JobCgroup&) = delete;
  JobCgroup& operator=(const JobCgroup&) = delete;

  // Open (O_CLOEXEC) files, one per group: the job's first process writes "0" into each before
  // exec, so that it runs inside its limits from its first instruction. v1 groups use `tasks`.
  const std::vector<int>& join_fds() const { return join_fds_; }
  // The v2 group's directory (O_RDONLY), for clone3(CLONE_INTO_CGROUP), and the index of its
  // cgroup.procs in join_fds(); -1 when there is no v2 group.
  int v2_dir_fd() const { return v2_dir_fd_; }
  int v2_join_index() const { return v2_join_index_; }

  // The processes in the job's groups now.
  std::vector<pid_t> Pids() const;
  // Sends `signal` to every process, with the group frozen meanwhile where a freezer exists (so
  // that no process forks past the signal).
  Status Signal(int signal);
  // SIGKILLs every process: cgroup.kill where the kernel has it, else freeze-kill-thaw rounds.
  Status Kill();

  int64_t OomKills() const;         // OOM kills inside the group; 0 when unknown
  double CpuSeconds() const;        // CPU time of all its processes, dead ones too; -1 unknown
  int64_t PeakMemoryBytes() const;  // memory high-water mark; -1 unknown

  // Removes the groups (retrying while their last processes exit, up to about 2 s).
  Status Remove();

  const std::vector<std::string>& dirs() const { return dirs_; }
  CgroupMode mode() const { return mode_; }
  // The group whose cgroup.procs lists the job's processes (v2, or a hybrid host's cgroup2 group;
  // a v1 freezer group otherwise); "" when none.
  const std::string& procs_dir() const { return procs_dir_; }

 private:
  JobCgroup() = default;
  Status Freeze(bool frozen);
  // Opens the file through which the job joins each group (join_fds_, v2_dir_fd_).
  Status OpenJoinFiles();

  CgroupMode mode_ = CgroupMode::kNone;
  std::vector<std::string> dirs_;  // every group directory created
  std::vector<int> join_fds_;
  int v2_dir_fd_ = -1;
  int v2_join_index_ = -1;
  std::string procs_dir_;  // where cgroup.procs lists the job's processes
  std::string memory_dir_;
  std::string cpu_dir_;     // v1 cpuacct or v2 group
  std::string freeze_dir_;  // cgroup2 group (cgroup.freeze) or v1 freezer group
  bool v2_freeze_ = false;
  std::string kill_dir_;  // a cgroup2 group with cgroup.kill, or ""
};

}  // namespace berth::agent

#endif  // BERTH_AGENT_JOB_CGROUP_H_
