// The supervisor process of one job attempt (`berth supervise DIR`), split in two files:
// supervise_setup.cc prepares the attempt (spec, user, cgroups or rlimits, script, paths,
// environment); supervise.cc starts the job, enforces its limits, answers control requests and
// writes the result. See supervisor.h for the contract and docs/execution.md for the behaviour.
//
// Thread safety: a Supervisor runs on the process's one thread (it forks the job, so it starts
// no threads before that).
#ifndef BERTH_AGENT_SUPERVISE_INTERNAL_H_
#define BERTH_AGENT_SUPERVISE_INTERNAL_H_

#include <poll.h>
#include <sys/types.h>

#include <chrono>
#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "agent/container_settings.h"
#include "agent/job_cgroup.h"
#include "agent/job_env.h"
#include "agent/job_process.h"
#include "agent/launch.h"
#include "agent/named_container.h"
#include "common/status.h"
#include "image/container_spec.h"
#include "image/store.h"

namespace berth::agent {

// Node-wide settings of the supervisor, from its environment (set by the agent):
//   BERTH_SUPERVISE_NO_CGROUPS=1  run without cgroups even as root (rlimits, affinity instead)
//   BERTH_CGROUP_PARENT=NAME      the parent group of job groups (default "berth")
//   BERTH_CGROUP_AT_ROOT=1        put the parent at the hierarchy root (v1/hybrid)
//   BERTH_PIDS_MAX=N              pids.max when the spec gives none (default 4096)
//   BERTH_GPU_SAMPLE_SECONDS=N    GPU utilisation sampling period (default 10)
// Containers: the agent's settings file STATE/containers.json (ContainerSettings, agent
// /container_settings.h), read when a job asks for a container.
struct SuperviseOptions {
  bool use_cgroups = true;
  std::string cgroup_parent = "berth";
  bool cgroup_parent_at_root = false;
  int64_t default_pids_max = 4096;
  int64_t gpu_sample_seconds = 10;
  // The cgroup layout, found once by `berth supervise-server` for every supervisor it forks;
  // null: found by the supervisor (an exec'd one).
  std::shared_ptr<const CgroupLayout> layout;

  static SuperviseOptions FromEnvironment();
};

class Supervisor {
 public:
  Supervisor(std::string dir, SuperviseOptions options);
  ~Supervisor();

  // Runs the attempt to its end; returns SuperviseMain's exit code. The same as Begin() then,
  // once it succeeded, Finish().
  int Run();
  // The first part: the signals the supervisor handles blocked (so that none the agent sends
  // once it sees the pid file is lost) and DIR/supervisor.pid written. A forked supervisor
  // (supervise_server.cc) tells its server its pid between the two parts.
  Status Begin();
  // The rest: the attempt set up, run, and its result written; returns the exit code.
  int Finish();

 private:
  using Clock = std::chrono::steady_clock;

  // Set-up (supervise_setup.cc). An error is why the attempt cannot start (NODE_FAIL).
  Status LoadSpec();
  Status ResolveUser();
  Status SetUpLimits();
  Status SetUpCgroups();
  void SetUpRlimits();
  std::vector<int32_t> CpusOfOtherJobs() const;
  Status WriteScript(std::string* path);
  Result<JobExec> BuildExec();

  // Containers (supervise_container.cc): the image present and held, its overlay root mounted,
  // config.json written; `runc create` + `runc start`; `runc delete` and the unmount.
  Status PrepareImage();
  Status MountRoot();
  Result<JobExec> BuildContainerExec(const JobExec& job);
  void LaunchContainer(const JobExec& exec);
  void TearDownContainer();

  // Running (supervise.cc).
  Status StartSignals();
  void Launch(const JobExec& exec);
  void Loop();
  void HandleSignals();
  void HandleControl();
  void Reap();
  void Terminate(const char* state);
  // (Re)arms the time limit and the --signal warning before it (scontrol update TimeLimit).
  void SetTimeLimit(Duration seconds);
  void SignalAll(int signal);
  // The job's steps only (what its srun launched), as Slurm's scancel --signal and sbatch's
  // --signal without B: reach them; the batch shell is left alone. `step` >= 0: that step only
  // (scancel JOB.STEP; SIGKILL there ends the step's tasks and all below them).
  void SignalSteps(int signal, int32_t step = -1);
  // scancel --full: every process of the batch step (the shell, its children, srun itself) and
  // the steps' tasks, but not what the tasks start, as Slurm 22.05 does; KILL reaches all.
  void SignalFull(int signal);
  void KillAll();
  // A pod's stdin and terminal (supervise_attach.cc, attach_socket.h): the pipe or the
  // pseudo-terminal made before the launch, the socket that hands their ends to the agent, the
  // terminal's output copied to the job's stdout file. In a container the pipe is runc create's
  // stdin (runc passes it on to the container's process) and the terminal is runc's, its master
  // received on the console socket (ReceiveConsole, after `runc create`).
  Status SetUpStdio(JobExec* exec);
  Status OpenTerminalLog(const JobExec& exec);
  std::string ConsoleSocketPath() const { return dir_ + "/console.sock"; }
  Status ReceiveConsole();
  void CloseChildStdio();  // after the launch: the child's ends
  void AddStdioPolls(std::vector<pollfd>* fds) const;
  void HandleStdio();
  void AnswerAttach(int conn);
  void PumpTerminal();
  void EndStdio();  // after the job: its terminal's last output; the socket removed
  std::vector<pid_t> JobPids() const;
  void SampleGpus();
  void Drain();
  JobResult BuildResult() const;
  int WriteResult(const JobResult& result);

  std::string dir_;
  SuperviseOptions options_;
  LaunchSpec spec_;
  JobUser user_;
  bool switch_user_ = false;
  std::vector<gid_t> groups_;
  std::string node_name_;
  std::unique_ptr<JobCgroup> cgroup_;
  std::string cgroup2_root_;         // the cgroup2 mount point ("" without one)
  std::vector<int32_t> cpus_;        // the job's CPUs
  bool cpuset_by_affinity_ = false;  // no cpuset cgroup: bind with sched_setaffinity
  int64_t rlimit_data_bytes_ = 0;
  std::vector<std::string> notes_;  // for JobResult::message

  int signal_fd_ = -1;
  pid_t job_pid_ = -1;
  bool job_exited_ = false;
  int wait_status_ = 0;
  std::string end_state_;   // "TIMEOUT" or "CANCELLED" once decided
  std::string fail_state_;  // set when the job could not run (NODE_FAIL, FAILED)
  std::string fail_message_;
  int64_t last_control_seq_ = 0;
  int64_t start_time_ = 0;
  int64_t end_time_ = 0;
  Clock::time_point started_;
  std::optional<Clock::time_point> limit_at_;
  std::optional<Clock::time_point> signal_at_;
  bool signal_sent_ = false;  // the --signal warning went out (a new limit does not repeat it)
  std::optional<Clock::time_point> kill_at_;
  Clock::time_point next_control_check_;
  Clock::time_point next_gpu_sample_;
  double gpu_sum_ = 0;
  int gpu_samples_ = 0;

  ContainerSettings containers_;
  std::optional<image::ContainerSpec> container_;  // set when the job runs in a container
  std::string container_id_;                       // runc's name for it
  std::unique_ptr<image::Store> store_;
  image::ImageRecord image_;
  std::string image_holder_;
  std::string image_digest_;
  std::string image_error_;  // JobResult::image_error
  std::string pull_note_;
  bool image_pulled_ = false;  // this attempt pulled its image (else the node had it)
  double pull_seconds_ = 0;
  bool rootfs_mounted_ = false;  // this attempt's own overlay (a named container's stays)
  bool container_created_ = false;
  std::string rootfs_;  // the container's root: DIR/ctr/rootfs, or the named container's
  // --container-name (named_container.h): its folder, and its lock while it is being set up.
  std::string named_dir_;
  std::optional<NamedContainerLock> named_lock_;
  bool named_exists_ = false;  // an earlier step made it

  int stdin_read_ = -1;   // the child's end of the stdin pipe (until the launch)
  int stdin_write_ = -1;  // the held end, handed to attach -i
  int pty_master_ = -1;
  int pty_slave_ = -1;        // until the launch
  bool pty_open_ = false;     // the master still gives output
  int attach_listen_ = -1;    // DIR/attach.sock
  int console_listen_ = -1;   // a container's DIR/console.sock, until runc sent the terminal
  int terminal_log_fd_ = -1;  // the stdout file the terminal's output goes to
  bool stdin_ended_ = false;  // stdinOnce: the first client's stdin ended
};

// The supervisor's log line: "berth supervise DIR: text" on stderr.
void Log(const std::string& dir, const std::string& text);
int64_t WallNow();

// The internal commands' help: `--help` or `-h` as their only argument.
inline bool AskedForHelp(int argc, char** argv) {
  return argc == 2 && (std::string_view(argv[1]) == "--help" || std::string_view(argv[1]) == "-h");
}

}  // namespace berth::agent

#endif  // BERTH_AGENT_SUPERVISE_INTERNAL_H_
