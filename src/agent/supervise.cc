// Running a job attempt: see supervise_internal.h.
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <sys/prctl.h>
#include <sys/resource.h>
#include <sys/signalfd.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <filesystem>

#include "agent/control.h"
#include "agent/file_util.h"
#include "agent/node_info.h"
#include "agent/proc_tree.h"
#include "agent/supervise_internal.h"
#include "agent/supervisor.h"

namespace berth::agent {

namespace {

constexpr int kHandledSignals[] = {SIGCHLD, SIGUSR1, SIGTERM, SIGINT, SIGHUP};
constexpr int64_t kMiB = 1024 * 1024;

std::string JoinNotes(const std::vector<std::string>& notes) {
  std::string out;
  for (const std::string& n : notes) {
    if (!out.empty()) out += "; ";
    out += n;
  }
  return out;
}

}  // namespace

int64_t WallNow() {
  return std::chrono::duration_cast<std::chrono::seconds>(
             std::chrono::system_clock::now().time_since_epoch())
      .count();
}

void Log(const std::string& dir, const std::string& text) {
  std::fprintf(stderr, "berth supervise %s: %s\n", dir.c_str(), text.c_str());
  std::fflush(stderr);
}

Supervisor::Supervisor(std::string dir, SuperviseOptions options)
    : dir_(std::move(dir)), options_(std::move(options)) {}

Supervisor::~Supervisor() {
  if (signal_fd_ >= 0) close(signal_fd_);
}

Status Supervisor::StartSignals() {
  sigset_t set;
  sigemptyset(&set);
  for (int s : kHandledSignals) sigaddset(&set, s);
  if (sigprocmask(SIG_BLOCK, &set, nullptr) != 0) return ErrnoStatus("sigprocmask", errno);
  signal_fd_ = signalfd(-1, &set, SFD_CLOEXEC | SFD_NONBLOCK);
  if (signal_fd_ < 0) return ErrnoStatus("signalfd", errno);
  return Status::Ok();
}

int Supervisor::Run() {
  if (Status s = Begin(); !s.ok()) {
    Log(dir_, s.ToString());
    return 1;
  }
  return Finish();
}

Status Supervisor::Begin() {
  // Orphans of the job come back to the supervisor, so it can find, signal and reap them all.
  prctl(PR_SET_CHILD_SUBREAPER, 1);
  signal(SIGPIPE, SIG_IGN);
  BERTH_RETURN_IF_ERROR(StartSignals());
  return WriteFileAtomic(dir_ + "/supervisor.pid", std::to_string(getpid()) + "\n");
}

int Supervisor::Finish() {
  if (geteuid() == 0) {
    // A node short of memory should kill job processes, not the one that reports on them.
    (void)WriteControlFile("/proc/self/oom_score_adj", "-1000");
  }
  start_time_ = WallNow();
  Status s = LoadSpec();
  if (!s.ok()) {
    // The result must still name the attempt: the folder is "<job_id>.<attempt>".
    std::string base = std::filesystem::path(dir_).filename().string();
    spec_.job_id = static_cast<uint32_t>(std::strtoul(base.c_str(), nullptr, 10));
    size_t dot = base.find('.');
    if (dot != std::string::npos) spec_.attempt = std::atoi(base.c_str() + dot + 1);
  }
  if (s.ok()) s = ResolveUser();
  if (s.ok()) s = SetUpLimits();
  Result<JobExec> exec = s.ok() ? BuildExec() : Result<JobExec>(s);
  bool in_container = exec.ok() && !spec_.container.empty();
  if (in_container) {
    container_id_ = "berth-" + JobCgroupName(spec_.job_id, spec_.attempt, dir_);
    exec = BuildContainerExec(*exec);
  }
  // A pod's stdin/tty (supervise_attach.cc); in a container, runc create's.
  if (exec.ok()) {
    if (Status st = SetUpStdio(&*exec); !st.ok()) exec = st;
  }
  if (exec.ok()) {
    if (in_container) {
      LaunchContainer(*exec);
    } else {
      Launch(*exec);
    }
    CloseChildStdio();
  } else {
    // A container that could not be prepared is the job's (its image, its mounts): FAILED; the
    // rest is the node's.
    fail_state_ = in_container ? "FAILED" : "NODE_FAIL";
    fail_message_ = exec.status().message();
  }
  if (job_pid_ > 0 && !job_exited_) Loop();
  Drain();
  EndStdio();
  JobResult result = BuildResult();
  TearDownContainer();
  int rc = WriteResult(result);
  if (cgroup_) {
    if (Status r = cgroup_->Remove(); !r.ok()) Log(dir_, "removing cgroups: " + r.ToString());
  }
  return rc;
}

void Supervisor::Launch(const JobExec& exec) {
  Result<JobStart> start = StartJobProcess(exec);
  if (!start.ok()) {
    fail_state_ = "NODE_FAIL";
    fail_message_ = start.status().message();
    return;
  }
  started_ = Clock::now();
  start_time_ = WallNow();
  job_pid_ = start->pid;
  (void)WriteFileAtomic(dir_ + "/job.pid", std::to_string(job_pid_) + "\n");
  for (const JobStartProblem& w : start->warnings) notes_.push_back(DescribeProblem(w, exec));
  if (start->failure) {
    job_exited_ = true;
    wait_status_ = start->exit_status;
    end_time_ = WallNow();
    JobStartStage stage = start->failure->stage;
    // The job's own files and program are the user's business (FAILED, as Slurm reports an
    // output file it cannot open); the rest is the node's (NODE_FAIL).
    bool user_fault = stage == JobStartStage::kStdin || stage == JobStartStage::kStdout ||
                      stage == JobStartStage::kStderr || stage == JobStartStage::kExec;
    fail_state_ = user_fault ? "FAILED" : "NODE_FAIL";
    fail_message_ = DescribeProblem(*start->failure, exec);
    return;
  }
  Log(dir_, "job started, pid " + std::to_string(job_pid_));
  if (spec_.time_limit > 0) SetTimeLimit(spec_.time_limit);
  next_control_check_ = started_;
  next_gpu_sample_ = started_ + std::chrono::seconds(1);
}

void Supervisor::Loop() {
  while (!job_exited_) {
    Clock::time_point now = Clock::now();
    if (limit_at_ && now >= *limit_at_) {
      limit_at_.reset();
      Log(dir_, "time limit reached");
      Terminate("TIMEOUT");
    }
    if (signal_at_ && now >= *signal_at_) {
      signal_at_.reset();
      signal_sent_ = true;
      if (spec_.signal_batch_only) {
        kill(job_pid_, spec_.signal_number);
      } else {
        SignalSteps(spec_.signal_number);
      }
    }
    if (kill_at_ && now >= *kill_at_) {
      kill_at_.reset();
      KillAll();
    }
    if (now >= next_control_check_) {
      HandleControl();
      next_control_check_ = now + std::chrono::seconds(1);
    }
    if (!spec_.gpu_indices.empty() && now >= next_gpu_sample_) {
      SampleGpus();
      next_gpu_sample_ = now + std::chrono::seconds(options_.gpu_sample_seconds);
    }
    Clock::time_point wake = next_control_check_;
    for (const auto& t : {limit_at_, signal_at_, kill_at_}) {
      if (t) wake = std::min(wake, *t);
    }
    if (!spec_.gpu_indices.empty()) wake = std::min(wake, next_gpu_sample_);
    auto wait = std::chrono::ceil<std::chrono::milliseconds>(wake - Clock::now()).count();
    std::vector<pollfd> fds = {{signal_fd_, POLLIN, 0}};
    AddStdioPolls(&fds);
    poll(fds.data(), fds.size(), static_cast<int>(std::clamp<int64_t>(wait, 0, 1000)));
    HandleStdio();
    HandleSignals();
  }
}

void Supervisor::HandleSignals() {
  signalfd_siginfo info;
  while (read(signal_fd_, &info, sizeof(info)) == static_cast<ssize_t>(sizeof(info))) {
    int sig = static_cast<int>(info.ssi_signo);
    if (sig == SIGCHLD) {
      Reap();
    } else if (sig == SIGUSR1) {
      HandleControl();
    } else if (sig == SIGTERM || sig == SIGINT) {
      if (!job_exited_) {
        notes_.push_back(std::string("the supervisor got ") + sigabbrev_np(sig) +
                         ": job cancelled");
        Terminate("CANCELLED");
      }
    }
  }
  Reap();
}

void Supervisor::Reap() {
  int status = 0;
  pid_t pid;
  while ((pid = waitpid(-1, &status, WNOHANG)) > 0) {
    if (pid == job_pid_) {
      job_exited_ = true;
      wait_status_ = status;
      end_time_ = WallNow();
    }
  }
}

void Supervisor::HandleControl() {
  Result<std::vector<ControlRequest>> requests = ReadControlRequests(dir_);
  if (!requests.ok()) {
    Log(dir_, "control: " + requests.status().ToString());
    return;
  }
  for (const ControlRequest& r : *requests) {
    if (r.seq <= last_control_seq_) continue;
    last_control_seq_ = r.seq;
    if (job_exited_) continue;
    if (r.action == ControlRequest::Action::kCancel) {
      Log(dir_, "cancel requested");
      Terminate("CANCELLED");
    } else if (r.action == ControlRequest::Action::kTimeLimit) {
      SetTimeLimit(r.time_limit);
    } else if (r.batch_only) {
      kill(job_pid_, r.signal);
    } else if (r.full) {
      SignalFull(r.signal);
    } else {
      SignalSteps(r.signal, r.step);
    }
  }
}

void Supervisor::SetTimeLimit(Duration seconds) {
  if (!end_state_.empty()) return;  // ending already: a new limit changes nothing
  Log(dir_, "time limit " + std::to_string(seconds) + " s");
  limit_at_ = started_ + std::chrono::seconds(seconds);
  signal_at_.reset();
  if (spec_.signal_number > 0 && !signal_sent_) {
    Duration before = std::min(spec_.signal_before, seconds);
    signal_at_ = started_ + std::chrono::seconds(seconds - before);
  }
}

void Supervisor::Terminate(const char* state) {
  if (end_state_.empty()) end_state_ = state;
  // As Slurm: SIGCONT first, so that stopped processes see the SIGTERM.
  SignalAll(SIGCONT);
  SignalAll(SIGTERM);
  if (!kill_at_)
    kill_at_ = Clock::now() + std::chrono::seconds(std::max<Duration>(0, spec_.kill_wait));
}

std::vector<pid_t> Supervisor::JobPids() const {
  return cgroup_ ? cgroup_->Pids() : DescendantsOf(getpid());
}

void Supervisor::SignalAll(int signal) {
  if (cgroup_) {
    (void)cgroup_->Signal(signal);
    return;
  }
  for (pid_t p : DescendantsOf(getpid())) kill(p, signal);
}

namespace {

// srun passes these on to every task of its step, on this node and on the step's others (as
// Slurm's srun does); any other signal goes to this node's tasks directly.
bool PassedOnBySrun(int signal) {
  constexpr int kPassedOn[] = {SIGHUP, SIGINT, SIGQUIT, SIGTERM, SIGUSR1, SIGUSR2, SIGCONT};
  return std::find(std::begin(kPassedOn), std::end(kPassedOn), signal) != std::end(kPassedOn);
}

}  // namespace

void Supervisor::SignalFull(int signal) {
  if (signal == SIGKILL) {
    SignalAll(signal);
    return;
  }
  StepProcesses steps = FindStepProcesses(getpid());
  for (pid_t p : steps.outside) kill(p, signal);  // srun too, which passes it on to its tasks
  if (!PassedOnBySrun(signal)) {
    for (pid_t p : steps.tasks) kill(p, signal);
  }
}

void Supervisor::SignalSteps(int signal, int32_t step) {
  StepProcesses steps = FindStepProcesses(getpid(), step);
  const char* name = sigabbrev_np(signal);
  const std::string what = (name ? std::string(name) : std::to_string(signal));
  if (step >= 0 && signal == SIGKILL) {
    // scancel JOB.STEP: the step's tasks and all they started end (Slurm kills the step's
    // cgroup); its srun sees them killed and reports the step's end.
    for (pid_t p : steps.below) kill(p, SIGKILL);
    Log(dir_, "step " + std::to_string(step) + " killed: " + std::to_string(steps.below.size()) +
                  " process(es)");
    return;
  }
  const bool passed_on = PassedOnBySrun(signal);
  for (pid_t p : passed_on ? steps.launchers : steps.tasks) kill(p, signal);
  if (step >= 0) {
    Log(dir_, "signal " + what + " to step " + std::to_string(step) + ": " +
                  (steps.launchers.empty() ? "it has no task on this node" : "sent"));
    return;
  }
  Log(dir_,
      "signal " + what + ": " +
          (steps.launchers.empty() ? "no job step runs (the batch shell is not signalled)"
                                   : std::to_string(steps.launchers.size()) + " job step(s)"));
}

void Supervisor::KillAll() {
  if (cgroup_) {
    if (Status s = cgroup_->Kill(); !s.ok()) Log(dir_, "kill: " + s.ToString());
    return;
  }
  for (int round = 0; round < 50; ++round) {
    std::vector<pid_t> pids = DescendantsOf(getpid());
    if (pids.empty()) return;
    for (pid_t p : pids) kill(p, SIGKILL);
    Reap();
    usleep(10000);
  }
}

void Supervisor::SampleGpus() {
  double u = SampleGpuUtilization(NvmlIndicesOf(spec_));
  if (u >= 0) {
    gpu_sum_ += u;
    ++gpu_samples_;
  }
}

void Supervisor::Drain() {
  if (job_pid_ <= 0) return;
  // The batch script has ended: what it left behind goes too (Slurm ends the step's processes).
  if (!JobPids().empty()) KillAll();
  for (int i = 0; i < 250; ++i) {
    Reap();
    if (JobPids().empty()) return;
    pollfd p{signal_fd_, POLLIN, 0};
    poll(&p, 1, 20);
    HandleSignals();
  }
  notes_.push_back("processes survived SIGKILL for 5 s");
}

JobResult Supervisor::BuildResult() const {
  JobResult r;
  r.job_id = spec_.job_id;
  r.attempt = spec_.attempt;
  r.start_time = start_time_;
  r.end_time = end_time_ > 0 ? end_time_ : WallNow();
  int64_t oom_kills = cgroup_ ? cgroup_->OomKills() : 0;
  if (job_exited_) {
    if (WIFEXITED(wait_status_)) r.exit_code = WEXITSTATUS(wait_status_);
    if (WIFSIGNALED(wait_status_)) r.term_signal = WTERMSIG(wait_status_);
  }
  if (!fail_state_.empty()) {
    r.state = fail_state_;
  } else if (!end_state_.empty()) {
    r.state = end_state_;
  } else if (oom_kills > 0) {
    r.state = "OUT_OF_MEMORY";
  } else {
    r.state = (r.exit_code == 0 && r.term_signal == 0) ? "COMPLETED" : "FAILED";
  }
  rusage usage{};
  getrusage(RUSAGE_CHILDREN, &usage);
  double rusage_cpu = static_cast<double>(usage.ru_utime.tv_sec + usage.ru_stime.tv_sec) +
                      static_cast<double>(usage.ru_utime.tv_usec + usage.ru_stime.tv_usec) / 1e6;
  r.cpu_seconds = rusage_cpu;
  r.max_rss_mib = usage.ru_maxrss / 1024;  // the largest single process (KiB)
  r.user_cpu_seconds = static_cast<double>(usage.ru_utime.tv_sec) +
                       static_cast<double>(usage.ru_utime.tv_usec) / 1e6;
  r.system_cpu_seconds = static_cast<double>(usage.ru_stime.tv_sec) +
                         static_cast<double>(usage.ru_stime.tv_usec) / 1e6;
  r.max_task_rss_kib = usage.ru_maxrss;
  if (cgroup_) {
    if (double cpu = cgroup_->CpuSeconds(); cpu >= 0) r.cpu_seconds = cpu;
    if (int64_t peak = cgroup_->PeakMemoryBytes(); peak >= 0) r.max_rss_mib = peak / kMiB;
  }
  r.gpu_utilization = gpu_samples_ > 0 ? gpu_sum_ / gpu_samples_ : -1;
  r.image_digest = image_digest_;
  r.image_error = image_error_;
  std::vector<std::string> parts;
  if (!fail_message_.empty()) parts.push_back(fail_message_);
  if (!pull_note_.empty()) parts.push_back(pull_note_);
  if (oom_kills > 0) {
    parts.push_back(std::to_string(oom_kills) +
                    " process(es) killed for exceeding the memory limit");
  }
  parts.insert(parts.end(), notes_.begin(), notes_.end());
  r.message = JoinNotes(parts);
  return r;
}

int Supervisor::WriteResult(const JobResult& result) {
  Status s =
      WriteFileAtomic(dir_ + "/result.json", EncodeJobResult(result) + "\n", 0644, Sync::kYes);
  if (!s.ok()) {
    Log(dir_, "writing the result: " + s.ToString());
    return 1;
  }
  Log(dir_, "job ended: " + result.state);
  return 0;
}

int SuperviseMain(int argc, char** argv) {
  if (AskedForHelp(argc, argv)) {
    std::printf(
        "usage: berth supervise DIR\n\n"
        "Internal: runs the job attempt prepared in DIR (its spec.json) to its end and writes\n"
        "DIR/result.json. The agent starts one per attempt (docs/execution.md).\n");
    return 0;
  }
  if (argc != 2) {
    std::fprintf(stderr, "usage: berth supervise DIR  (started by the agent, one per job)\n");
    return 1;
  }
  std::error_code ec;
  std::string dir = std::filesystem::absolute(argv[1], ec).lexically_normal().string();
  if (ec || dir.empty()) dir = argv[1];
  while (dir.size() > 1 && dir.back() == '/') dir.pop_back();
  // Hold no directory busy for as long as the job runs.
  if (chdir("/") != 0) return 1;
  // Files the job opens must not land on 0-2 should the supervisor have been started without
  // them.
  for (int fd = open("/dev/null", O_RDWR); fd >= 0; fd = open("/dev/null", O_RDWR)) {
    if (fd > 2) {
      close(fd);
      break;
    }
  }
  Supervisor supervisor(dir, SuperviseOptions::FromEnvironment());
  return supervisor.Run();
}

}  // namespace berth::agent
