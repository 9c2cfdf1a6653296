// The process tree from /proc, for supervising a job where no cgroup lists its processes: the
// supervisor is a child subreaper (PR_SET_CHILD_SUBREAPER), so every process the job starts -
// daemons that fork twice or call setsid included - stays among its descendants until reaped.
//
// Thread safety: functions read /proc only; safe from any thread.
#ifndef BERTH_AGENT_PROC_TREE_H_
#define BERTH_AGENT_PROC_TREE_H_

#include <sys/types.h>

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

namespace berth::agent {

// The parent pid from the text of /proc/PID/stat (the command name may hold spaces and
// parentheses); -1 when malformed. The state letter goes to *state when given.
pid_t ParentFromStat(std::string_view stat, char* state = nullptr);

// Every live (not zombie) descendant of `root`, children before grandchildren.
std::vector<pid_t> DescendantsOf(pid_t root);

// Whether a command line is a job step's launcher: srun (Slurm's name for berth's, or `berth srun`,
// also started through the dynamic loader, as in a container).
bool IsStepLauncher(const std::vector<std::string>& argv);

// A job's steps among root's descendants, as Slurm's scancel --signal reaches them: the step
// launchers with no launcher above them, and their tasks (the launchers' children; what the
// tasks start is not signalled, as slurmstepd signals only a step's tasks).
struct StepProcesses {
  std::vector<pid_t> launchers;
  std::vector<pid_t> tasks;
  std::vector<pid_t> outside;  // every other process: not below a launcher (launchers included)
  std::vector<pid_t> below;    // everything below the launchers (tasks and what they started)
};
// With `step` >= 0, only the launchers whose tasks are that step's (SLURM_STEP_ID in a task's
// environment, as srun sets it) and what is below them.
StepProcesses FindStepProcesses(pid_t root, int32_t step = -1);

// The SLURM_STEP_ID of a NUL-separated environment (a /proc/PID/environ text); -1 without one.
int32_t StepIdOfEnviron(std::string_view environ);

}  // namespace berth::agent

#endif  // BERTH_AGENT_PROC_TREE_H_
