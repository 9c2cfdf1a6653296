// Starting the job's first process: a child (on x86-64 one that shares the supervisor's memory
// until it execs, as posix_spawn's does; a fork elsewhere), then in it, in this order: a session of
// its own, its cgroups (written into cgroup.procs before anything of the job runs), CPU affinity
// and RLIMIT_DATA where no cgroups enforce them, the user's groups/gid/uid, then - as the user, so
// that a job cannot write where its user may not - stdin/stdout/stderr, the working directory
// (Slurm's rule: if it fails, a warning on stderr and /tmp instead), and exec.
//
// The child reports each problem through a close-on-exec pipe: a successful exec closes the pipe
// without a fatal report. Everything the child uses is prepared before fork (argument and
// environment arrays, paths, the group list), so that the child calls nothing but system calls.
//
// Thread safety: StartJobProcess forks; call it while the process has a single thread. It blocks
// every signal while the child starts and restores the mask.
#ifndef BERTH_AGENT_JOB_PROCESS_H_
#define BERTH_AGENT_JOB_PROCESS_H_

#include <sys/types.h>

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "common/status.h"

namespace berth::agent {

// For a process between fork and exec (system calls only, nothing allocated):
// the signal state a new program starts with: nothing blocked, every disposition the default;
void ResetSignals();
// stdin from /dev/null, stdout and stderr appended to `log_path` (left as they are without
// one), none of the three closed on exec. Returns 0, or the errno of the open that failed.
int RedirectStdio(const char* log_path);

struct JobExec {
  std::vector<std::string> exec_paths;  // tried in order (a PATH search, done in advance)
  std::vector<std::string> argv;
  std::vector<std::string> env;  // "NAME=value"
  bool switch_user = false;      // set groups, gid, uid (needs root)
  // Without switch_user: open stdin/stdout/stderr with the user's groups and fsuid/fsgid (the
  // process itself stays root: `runc create`, which passes the files on to the container).
  bool files_as_user = false;
  uid_t uid = 0;
  gid_t gid = 0;
  std::vector<gid_t> groups;  // supplementary groups
  std::string work_dir;
  std::string stdin_path = "/dev/null";
  // Set: the job's stdin instead of stdin_path (the read end of a pipe the supervisor holds).
  int stdin_fd = -1;
  // Set: a pseudo-terminal's slave, the job's stdin, stdout and stderr and its controlling
  // terminal (the paths are then not opened).
  int terminal_fd = -1;
  std::string stdout_path;
  std::string stderr_path;            // "" = the stdout file
  bool append = false;                // else truncate
  std::vector<int> join_fds;          // cgroup `tasks`/cgroup.procs files to write "0" into
  int cgroup_dir_fd = -1;             // a v2 group to clone the child into (CLONE_INTO_CGROUP)
  int cgroup_dir_join_index = -1;     // its entry in join_fds, skipped when the clone did it
  std::vector<int32_t> cpu_affinity;  // empty = inherit
  int64_t rlimit_data_bytes = 0;      // 0 = inherit
  bool reset_oom_score = false;       // write 0 to oom_score_adj (the supervisor's is -1000)
};

enum class JobStartStage {
  kCgroup,    // joining a cgroup failed (fatal)
  kOomScore,  // resetting oom_score_adj failed (warning)
  kAffinity,  // sched_setaffinity failed (warning)
  kRlimit,    // setrlimit failed (warning)
  kUser,      // setgroups/setgid/setuid failed (fatal)
  kStdin,     // opening the input failed (fatal)
  kStdout,    // opening the output failed (fatal)
  kStderr,    // opening the error file failed (fatal)
  kChdir,     // the working directory failed; the job runs in /tmp (warning)
  kExec,      // execve failed (fatal; the process exits 127, or 126 when not executable)
};

struct JobStartProblem {
  JobStartStage stage = JobStartStage::kExec;
  int err = 0;  // errno
};

struct JobStart {
  pid_t pid = -1;
  std::vector<JobStartProblem> warnings;
  // Set when the child did not reach the job: it has exited and been reaped, with exit_status
  // its wait status.
  std::optional<JobStartProblem> failure;
  int exit_status = 0;
};

// Forks and starts the job. An error only when fork itself fails.
Result<JobStart> StartJobProcess(const JobExec& exec);

// "could not open stdout file /x/y.out: Permission denied", and so on.
std::string DescribeProblem(const JobStartProblem& problem, const JobExec& exec);

}  // namespace berth::agent

#endif  // BERTH_AGENT_JOB_PROCESS_H_
