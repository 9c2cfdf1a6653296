// The per-job supervisor. The agent never runs user code itself: for each job attempt it starts
// `berth supervise DIR` in a session of its own (so it outlives an agent restart). The
// supervisor makes a fresh cgroup for the attempt (v1 hierarchies found in /proc/self/mountinfo,
// or cgroup v2 where the host has v2 controllers), sets memory, CPU-set and pids limits, starts
// the job as the submitting user with CUDA_VISIBLE_DEVICES and the SLURM_*/BERTH_* variables,
// its output files opened only after dropping to the user, enforces the time limit (SIGTERM,
// then SIGKILL to the whole cgroup after kill_wait; --signal before the limit), forwards
// cancels and signals to every process of the job, detects OOM kills, samples usage, and writes
// the result. Without root or cgroups it still runs jobs, with rlimits, and says what it cannot
// enforce (JobResult::message).
//
// The job's folder DIR holds: spec.json (the LaunchSpec, written by the agent), supervisor.pid,
// job.pid, control (requests from the agent), result.json (written last, atomically), and the
// script. Everything the agent needs after a restart is there.
//
// The agent does not exec the binary for each attempt: it starts `berth supervise-server` once
// (SupervisorSpawner), which has the loader's work, the NSS modules and the cgroup layout done
// once, and forks a supervisor for each attempt. A forked supervisor is the same process as an
// exec'd one would be (a session of its own, no child of the agent, nothing of the agent's open,
// the agent's environment) and shows the same command line, `berth supervise DIR`, written over
// the server's arguments, so that the agent recognises it after a restart in the same way. It is
// the server's child (reaped by it) until the server exits, and then init's.
#ifndef BERTH_AGENT_SUPERVISOR_H_
#define BERTH_AGENT_SUPERVISOR_H_

#include <chrono>
#include <compare>
#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "agent/control.h"
#include "agent/launch.h"
#include "common/status.h"
#include "common/thread_annotations.h"

namespace berth::agent {

// `berth supervise DIR`: runs one attempt to its end and writes DIR/result.json. Exit code 0
// once the result is written (whatever the job's own exit), 1 if it could not be.
int SuperviseMain(int argc, char** argv);

// `berth supervise-server FD ROOM`: the agent's supervisor server. Reads a job folder per packet
// on the SOCK_SEQPACKET socket FD and answers each with the pid of the supervisor it forked for
// it (once that has written its pid file), or a negative errno; ROOM is blank room in its
// command line for a supervisor's `berth supervise DIR`. Exits when the agent closes the socket.
int SuperviseServerMain(int argc, char** argv);

// The agent's side.
struct SupervisorHandle {
  std::string dir;   // the job attempt's folder
  int64_t pid = -1;  // the supervisor process
};

// The agent's link to its `berth supervise-server`. Spawn() may be called from any thread (one
// spawn at a time goes to the server); the server is started again when it has gone.
class SupervisorSpawner {
 public:
  // Starts the server (exec'd from `berth_binary`) with room for the folders under jobs_dir.
  // A server that has not answered a spawn within `answer_timeout` is killed (and started again
  // at the next spawn).
  static Result<std::unique_ptr<SupervisorSpawner>> Start(
      const std::string& berth_binary, const std::string& jobs_dir,
      std::chrono::milliseconds answer_timeout = std::chrono::seconds(20));
  // Closes the link: the server exits; the supervisors it forked run on.
  ~SupervisorSpawner();
  SupervisorSpawner(const SupervisorSpawner&) = delete;
  SupervisorSpawner& operator=(const SupervisorSpawner&) = delete;

  // Forks the supervisor of the prepared folder `dir` (absolute); returns its pid once it has
  // written dir/supervisor.pid. kResourceExhausted: `dir` does not fit in the server's command
  // line (exec one instead); kUnavailable: no server (exec one instead); other errors: the
  // supervisor did not start, or the server did not answer in time (then one may still start;
  // it is not started again).
  Result<int64_t> Spawn(const std::string& dir) EXCLUDES(mu_);

  // The server's pid (for tests).
  int64_t server_pid() const EXCLUDES(mu_);

 private:
  SupervisorSpawner(std::string binary, std::string jobs_dir,
                    std::chrono::milliseconds answer_timeout);
  Status Connect() REQUIRES(mu_);
  void Disconnect() REQUIRES(mu_);

  const std::string binary_;
  const std::string jobs_dir_;
  const std::chrono::milliseconds answer_timeout_;
  mutable Mutex mu_;
  int fd_ GUARDED_BY(mu_) = -1;
  int64_t pid_ GUARDED_BY(mu_) = -1;
};

// Writes DIR = jobs_dir/<job_id>.<attempt>/spec.json (or jobs_dir/<folder> when `folder` is
// given: a job step's part on another node), starts the supervisor of DIR in a new session
// (forked by `spawner`'s server, or `berth_binary supervise DIR` exec'd without one or when the
// server cannot take it), and returns once the supervisor has written its pid file (or has
// failed).
Result<SupervisorHandle> StartSupervisor(const std::string& berth_binary,
                                         const std::string& jobs_dir, const LaunchSpec& spec,
                                         const std::string& folder = "",
                                         SupervisorSpawner* spawner = nullptr);

// Job folders under jobs_dir (for adopting jobs after an agent restart).
std::vector<std::string> ListJobDirs(const std::string& jobs_dir);

// The supervisor of DIR is alive.
bool SupervisorRunning(const std::string& dir);

// The attempt's result, once written.
std::optional<JobResult> ReadResult(const std::string& dir);

// Reads the LaunchSpec back from DIR.
Result<LaunchSpec> ReadSpec(const std::string& dir);

// What a process is to a job folder, from its /proc/PID/stat and /proc/PID/cmdline texts:
// `berth supervise DIR` alive (kSupervisor; a forked one's command line has the rest of the
// server's room after it, as NUL bytes); an exec under way, whose arguments the kernel has not
// set up yet (an empty command line: kExecuting); anything else, a zombie included (kOther).
enum class SupervisorProcess { kSupervisor, kExecuting, kOther };
SupervisorProcess ClassifySupervisorProcess(std::string_view stat, std::string_view cmdline,
                                            const std::string& dir);

// The job id and attempt a job folder stands for, from its name ("<job_id>.<attempt>", as
// StartSupervisor names it); nothing for another name. Reading no file, it costs nothing per
// report, however many jobs the node runs.
std::optional<std::pair<uint32_t, int32_t>> JobDirKey(const std::string& dir);

// A job step's part on this node (srun across hosts) has its folder beside the attempts':
// "<job_id>.<attempt>.<step_id>", so that every supervisor of the node chooses CPUs under the same
// lock. Name() is what StartSupervisor's `folder` gets; Of() reads one back, nothing for another
// name (an attempt's folder included).
struct StepDirKey {
  uint32_t job_id = 0;
  int32_t attempt = 0;
  uint32_t step_id = 0;
  auto operator<=>(const StepDirKey&) const = default;
  std::string Name() const;
  static std::optional<StepDirKey> Of(const std::string& dir);
};

// Asks the supervisor to cancel the job (SIGTERM to every process, SIGKILL after kill_wait;
// the result's state becomes CANCELLED), or to send `signal` to the processes `scope` names (the
// job's steps by default: SignalScope). No-ops once the job has ended.
Status CancelJob(const std::string& dir);
Status SignalJob(const std::string& dir, int signal, SignalScope scope);
// A new time limit (seconds from the job's start) for a running job: `scontrol update TimeLimit`.
Status SetJobTimeLimit(const std::string& dir, int64_t seconds);

// Removes DIR (after its result has been reported). REQUIRES: the supervisor has exited.
Status RemoveJobDir(const std::string& dir);

}  // namespace berth::agent

#endif  // BERTH_AGENT_SUPERVISOR_H_
