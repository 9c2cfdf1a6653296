// The agent's side of the supervisor: see supervisor.h.
#include "agent/supervisor.h"

#include <fcntl.h>
#include <signal.h>
#include <sys/mount.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/time.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <charconv>
#include <chrono>
#include <filesystem>
#include <thread>

#include "agent/container_settings.h"
#include "agent/control.h"
#include "agent/file_util.h"
#include "agent/job_cgroup.h"
#include "agent/job_process.h"
#include "agent/proc_tree.h"

namespace berth::agent {

namespace {

// How long StartSupervisor waits for the supervisor's pid file.
constexpr auto kStartTimeout = std::chrono::seconds(20);

std::string AbsoluteDir(const std::string& path) {
  std::error_code ec;
  std::string abs = std::filesystem::absolute(path, ec).lexically_normal().string();
  if (ec) abs = path;
  while (abs.size() > 1 && abs.back() == '/') abs.pop_back();
  return abs;
}

Result<pid_t> ReadPid(const std::string& path) {
  BERTH_ASSIGN_OR_RETURN(std::string text, ReadFile(path));
  char* end = nullptr;
  long pid = std::strtol(text.c_str(), &end, 10);
  if (end == text.c_str() || pid <= 0) return Status::InvalidArgument(path + ": not a pid");
  return static_cast<pid_t>(pid);
}

// What /proc/PID says `pid` is; a pid file can outlive its process, and the pid be reused.
SupervisorProcess ProbeSupervisor(pid_t pid, const std::string& dir) {
  std::string proc = "/proc/" + std::to_string(pid);
  Result<std::string> stat = ReadFile(proc + "/stat");
  if (!stat.ok()) return SupervisorProcess::kOther;
  Result<std::string> cmdline = ReadFile(proc + "/cmdline");
  if (!cmdline.ok()) return SupervisorProcess::kOther;
  return ClassifySupervisorProcess(*stat, *cmdline, dir);
}

// `pid` is alive (not a zombie) and is `berth supervise DIR` for this dir.
bool IsSupervisorOf(pid_t pid, const std::string& dir) {
  return ProbeSupervisor(pid, dir) == SupervisorProcess::kSupervisor;
}

// The fd a supervisor server has its socket on.
constexpr int kServerFd = 3;

// In the grandchild: execs `args`, or reports errno on `report` and exits. stdout and stderr
// go to `log_path` (kept as they are without one); `keep` >= 0 is passed on as kServerFd.
// Allocates nothing: the agent may have threads, and this runs between fork and exec.
[[noreturn]] void ExecDetached(const char* const* args, const char* const* env,
                               const char* log_path, int keep, int report) {
  // Out of the way of kServerFd first: either may be there, or the files opened below.
  report = fcntl(report, F_DUPFD_CLOEXEC, kServerFd + 1);
  if (keep >= 0) {
    keep = fcntl(keep, F_DUPFD_CLOEXEC, kServerFd + 1);
    if (keep < 0 || dup2(keep, kServerFd) < 0) {  // dup2: not closed on exec
      int err = errno;
      (void)!write(report, &err, sizeof(err));
      _exit(127);
    }
  }
  if (int err = RedirectStdio(log_path); err != 0) {
    (void)!write(report, &err, sizeof(err));
    _exit(127);
  }
  // Nothing of the agent (sockets, files) may leak into the supervisor and its jobs.
  close_range(keep >= 0 ? kServerFd + 1 : 3, ~0U, CLOSE_RANGE_CLOEXEC);
  ResetSignals();
  execve(args[0], const_cast<char* const*>(args), const_cast<char* const*>(env));
  int err = errno;
  (void)!write(report, &err, sizeof(err));
  _exit(127);
}

// Forks twice and execs `args` (ExecDetached): the process is then no child of the agent (no zombie
// to reap, and an agent restart does not touch it), and runs in a session of its own. Returns its
// pid.
Result<pid_t> SpawnDetached(const char* const* args, const char* const* env, const char* log_path,
                            int keep) {
  int fds[2];
  if (pipe2(fds, O_CLOEXEC) != 0) return ErrnoStatus("pipe2", errno);
  pid_t middle = fork();
  if (middle < 0) {
    int err = errno;
    close(fds[0]);
    close(fds[1]);
    return ErrnoStatus("fork", err);
  }
  if (middle == 0) {
    close(fds[0]);
    setsid();
    pid_t pid = fork();
    if (pid == 0) ExecDetached(args, env, log_path, keep, fds[1]);
    int32_t sent = pid;  // the process's pid, or -1
    (void)!write(fds[1], &sent, sizeof(sent));
    _exit(pid < 0 ? 1 : 0);
  }
  close(fds[1]);
  int status = 0;
  while (waitpid(middle, &status, 0) < 0 && errno == EINTR) {
  }
  int32_t pid = -1;
  int exec_err = 0;
  ssize_t n = read(fds[0], &pid, sizeof(pid));
  // The exec closes the pipe; a failed exec writes its errno first.
  ssize_t m = n == sizeof(pid) ? read(fds[0], &exec_err, sizeof(exec_err)) : 0;
  close(fds[0]);
  if (n != sizeof(pid) || pid <= 0) {
    return Status::Internal("could not fork " + std::string(args[0]));
  }
  if (m == sizeof(exec_err)) return ErrnoStatus("exec " + std::string(args[0]), exec_err);
  return static_cast<pid_t>(pid);
}

}  // namespace

SupervisorProcess ClassifySupervisorProcess(std::string_view stat, std::string_view cmdline,
                                            const std::string& dir) {
  char state = 0;
  if (ParentFromStat(stat, &state) < 0 || state == 'Z' || state == 'X') {
    return SupervisorProcess::kOther;
  }
  if (cmdline.empty()) return SupervisorProcess::kExecuting;
  // A forked supervisor's arguments are followed by the rest of its server's room, zeroed.
  while (cmdline.size() > 1 && cmdline.back() == '\0' && cmdline[cmdline.size() - 2] == '\0') {
    cmdline.remove_suffix(1);
  }
  std::vector<std::string_view> args;
  size_t start = 0;
  while (start < cmdline.size()) {
    size_t end = cmdline.find('\0', start);
    if (end == std::string_view::npos) end = cmdline.size();
    args.push_back(cmdline.substr(start, end - start));
    start = end + 1;
  }
  return args.size() >= 3 && args[args.size() - 2] == "supervise" && args.back() == dir
             ? SupervisorProcess::kSupervisor
             : SupervisorProcess::kOther;
}

SupervisorSpawner::SupervisorSpawner(std::string binary, std::string jobs_dir,
                                     std::chrono::milliseconds answer_timeout)
    : binary_(std::move(binary)),
      jobs_dir_(AbsoluteDir(jobs_dir)),
      answer_timeout_(answer_timeout) {}

Result<std::unique_ptr<SupervisorSpawner>> SupervisorSpawner::Start(
    const std::string& berth_binary, const std::string& jobs_dir,
    std::chrono::milliseconds answer_timeout) {
  std::unique_ptr<SupervisorSpawner> s(
      new SupervisorSpawner(berth_binary, jobs_dir, answer_timeout));
  MutexLock<Mutex> l(s->mu_);
  BERTH_RETURN_IF_ERROR(s->Connect());
  return s;
}

SupervisorSpawner::~SupervisorSpawner() {
  MutexLock<Mutex> l(mu_);
  Disconnect();
}

int64_t SupervisorSpawner::server_pid() const {
  MutexLock<Mutex> l(mu_);
  return pid_;
}

void SupervisorSpawner::Disconnect() {
  if (fd_ >= 0) close(fd_);
  fd_ = -1;
  pid_ = -1;
}

Status SupervisorSpawner::Connect() {
  Disconnect();
  int fds[2];
  if (socketpair(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0, fds) != 0) {
    return ErrnoStatus("socketpair", errno);
  }
  // Room for the folder names the agent makes ("<job>.<attempt>.<step>", at most 32 bytes) with
  // some to spare; blanks, so that `ps` shows nothing of it.
  const std::string room(jobs_dir_.size() + 64, ' ');
  const std::string fd_arg = std::to_string(kServerFd);
  const char* args[] = {binary_.c_str(), "supervise-server", fd_arg.c_str(), room.c_str(), nullptr};
  // The agent's environment, and the loader told to bind every symbol at the start, so that
  // the supervisors it forks share the bound table instead of each binding (and copying) it
  // again; the server takes LD_BIND_NOW out of its environment once started.
  std::vector<const char*> env;
  for (char** e = environ; *e != nullptr; ++e) {
    if (!std::string_view(*e).starts_with("LD_BIND_NOW=")) env.push_back(*e);
  }
  env.push_back("LD_BIND_NOW=1");
  env.push_back(nullptr);
  // Its own messages go where the agent's go.
  Result<pid_t> pid = SpawnDetached(args, env.data(), nullptr, fds[1]);
  close(fds[1]);
  if (!pid.ok()) {
    close(fds[0]);
    return pid.status();
  }
  fd_ = fds[0];
  pid_ = *pid;
  // A server stuck on a supervisor (a hung file system) must not hold every launch for ever.
  const timeval limit{static_cast<time_t>(answer_timeout_.count() / 1000),
                      static_cast<suseconds_t>(answer_timeout_.count() % 1000 * 1000)};
  setsockopt(fd_, SOL_SOCKET, SO_RCVTIMEO, &limit, sizeof(limit));
  return Status::Ok();
}

Result<int64_t> SupervisorSpawner::Spawn(const std::string& dir) {
  MutexLock<Mutex> l(mu_);
  for (int attempt = 0; attempt < 2; ++attempt) {
    if (fd_ < 0) {
      if (Status st = Connect(); !st.ok()) {
        return Status::Unavailable("no supervisor server: " + st.message());
      }
    }
    if (send(fd_, dir.data(), dir.size(), MSG_NOSIGNAL) < 0) {
      // Nothing reached the server (gone since the last spawn): no supervisor was started.
      Disconnect();
      continue;
    }
    int32_t answer = 0;
    ssize_t n;
    while ((n = recv(fd_, &answer, sizeof(answer), 0)) < 0 && errno == EINTR) {
    }
    if (n == sizeof(answer) && answer > 0) return int64_t{answer};
    if (n == sizeof(answer)) {
      return answer == -ERANGE ? Status::ResourceExhausted(
                                     dir + ": too long for the supervisor server's command line")
                               : ErrnoStatus("starting the supervisor", -answer);
    }
    // The server went, or did not answer in time, while it had the folder: a supervisor may
    // have started (and one still may: not started again here).
    const bool timed_out = n < 0;
    if (timed_out && pid_ > 0) kill(static_cast<pid_t>(pid_), SIGKILL);
    Disconnect();
    if (Result<pid_t> pid = ReadPid(dir + "/supervisor.pid"); pid.ok()) return int64_t{*pid};
    return Status::Internal(timed_out ? "the supervisor server did not answer in " +
                                            std::to_string(answer_timeout_.count()) +
                                            " ms while starting " + dir + " (killed)"
                                      : "the supervisor server ended while starting " + dir);
  }
  return Status::Unavailable("the supervisor server is gone");
}

Result<SupervisorHandle> StartSupervisor(const std::string& berth_binary,
                                         const std::string& jobs_dir, const LaunchSpec& spec,
                                         const std::string& folder, SupervisorSpawner* spawner) {
  std::string dir =
      AbsoluteDir(jobs_dir) + "/" +
      (folder.empty() ? std::to_string(spec.job_id) + "." + std::to_string(spec.attempt) : folder);
  // 0711: the job's user must reach its script in here, but not list or change the folder.
  if (mkdir(dir.c_str(), 0711) != 0) {
    if (errno == EEXIST) return Status::AlreadyExists(dir + " exists (attempt already started)");
    return ErrnoStatus("mkdir " + dir, errno);
  }
  if (chmod(dir.c_str(), 0711) != 0) return ErrnoStatus("chmod " + dir, errno);
  // The spec may hold secrets in the job's environment.
  BERTH_RETURN_IF_ERROR(WriteFileAtomic(dir + "/spec.json", EncodeLaunchSpec(spec) + "\n", 0600));
  if (spawner != nullptr) {
    Result<int64_t> forked = spawner->Spawn(dir);
    if (forked.ok()) return SupervisorHandle{dir, *forked};
    const StatusCode code = forked.status().code();
    if (code != StatusCode::kResourceExhausted && code != StatusCode::kUnavailable) {
      return forked.status();
    }
  }
  const char* args[] = {berth_binary.c_str(), "supervise", dir.c_str(), nullptr};
  BERTH_ASSIGN_OR_RETURN(pid_t pid,
                         SpawnDetached(args, environ, (dir + "/supervisor.log").c_str(), -1));
  auto deadline = std::chrono::steady_clock::now() + kStartTimeout;
  while (std::chrono::steady_clock::now() < deadline) {
    if (access((dir + "/supervisor.pid").c_str(), F_OK) == 0) return SupervisorHandle{dir, pid};
    // Between closing the exec pipe and setting up the new program's arguments the kernel shows
    // an empty command line: the supervisor is still starting then, not gone.
    if (kill(pid, 0) != 0 || ProbeSupervisor(pid, dir) == SupervisorProcess::kOther) {
      // It ended before writing its pid file: its log says why.
      if (access((dir + "/supervisor.pid").c_str(), F_OK) == 0) return SupervisorHandle{dir, pid};
      Result<std::string> log = ReadFile(dir + "/supervisor.log");
      return Status::Internal("the supervisor exited at once: " + (log.ok() ? *log : ""));
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(5));
  }
  return Status::Unavailable("the supervisor wrote no pid file within 20 s");
}

std::vector<std::string> ListJobDirs(const std::string& jobs_dir) {
  std::vector<std::string> dirs;
  std::error_code ec;
  for (const auto& entry : std::filesystem::directory_iterator(AbsoluteDir(jobs_dir), ec)) {
    if (entry.is_directory(ec) && std::filesystem::exists(entry.path() / "spec.json", ec)) {
      dirs.push_back(entry.path().string());
    }
  }
  std::sort(dirs.begin(), dirs.end());
  return dirs;
}

std::optional<std::pair<uint32_t, int32_t>> JobDirKey(const std::string& dir) {
  const std::string name = dir.substr(dir.find_last_of('/') + 1);
  const size_t dot = name.find('.');
  if (dot == std::string::npos || dot == 0 || dot + 1 == name.size()) return std::nullopt;
  uint32_t id = 0;
  int32_t attempt = 0;
  const char* end = name.data() + name.size();
  auto [p1, e1] = std::from_chars(name.data(), name.data() + dot, id);
  auto [p2, e2] = std::from_chars(name.data() + dot + 1, end, attempt);
  if (e1 != std::errc() || p1 != name.data() + dot || e2 != std::errc() || p2 != end ||
      attempt < 0) {
    return std::nullopt;
  }
  return std::make_pair(id, attempt);
}

std::string StepDirKey::Name() const {
  return std::to_string(job_id) + "." + std::to_string(attempt) + "." + std::to_string(step_id);
}

std::optional<StepDirKey> StepDirKey::Of(const std::string& dir) {
  const std::string name = dir.substr(dir.find_last_of('/') + 1);
  StepDirKey k;
  const char* end = name.data() + name.size();
  auto [a, e1] = std::from_chars(name.data(), end, k.job_id);
  if (e1 != std::errc() || a == name.data() || a == end || *a != '.') return std::nullopt;
  auto [b, e2] = std::from_chars(a + 1, end, k.attempt);
  if (e2 != std::errc() || b == a + 1 || b == end || *b != '.' || k.attempt < 0) {
    return std::nullopt;
  }
  auto [c, e3] = std::from_chars(b + 1, end, k.step_id);
  if (e3 != std::errc() || c == b + 1 || c != end) return std::nullopt;
  return k;
}

bool SupervisorRunning(const std::string& dir) {
  std::string abs = AbsoluteDir(dir);
  Result<pid_t> pid = ReadPid(abs + "/supervisor.pid");
  return pid.ok() && IsSupervisorOf(*pid, abs);
}

std::optional<JobResult> ReadResult(const std::string& dir) {
  Result<std::string> text = ReadFile(dir + "/result.json");
  if (!text.ok()) return std::nullopt;
  Result<JobResult> result = DecodeJobResult(*text);
  if (!result.ok()) return std::nullopt;
  return *result;
}

Result<LaunchSpec> ReadSpec(const std::string& dir) {
  BERTH_ASSIGN_OR_RETURN(std::string text, ReadFile(dir + "/spec.json"));
  return DecodeLaunchSpec(text);
}

namespace {

Status SendRequest(const std::string& dir, ControlRequest request) {
  std::string abs = AbsoluteDir(dir);
  if (access((abs + "/result.json").c_str(), F_OK) == 0) return Status::Ok();
  Result<pid_t> pid = ReadPid(abs + "/supervisor.pid");
  if (!pid.ok() || !IsSupervisorOf(*pid, abs)) return Status::Ok();  // ended: nothing to do
  BERTH_RETURN_IF_ERROR(AppendControlRequest(abs, request));
  if (kill(*pid, SIGUSR1) != 0 && errno != ESRCH) return ErrnoStatus("kill supervisor", errno);
  return Status::Ok();
}

}  // namespace

Status CancelJob(const std::string& dir) {
  return SendRequest(dir, ControlRequest{0, ControlRequest::Action::kCancel, 0, false});
}

Status SignalJob(const std::string& dir, int signal, SignalScope scope) {
  if (signal <= 0 || signal >= NSIG) {
    return Status::InvalidArgument("bad signal number " + std::to_string(signal));
  }
  ControlRequest r;
  r.action = ControlRequest::Action::kSignal;
  r.signal = signal;
  r.batch_only = scope.batch_only;
  r.full = scope.full;
  r.step = scope.step;
  return SendRequest(dir, r);
}

Status SetJobTimeLimit(const std::string& dir, int64_t seconds) {
  if (seconds <= 0) return Status::InvalidArgument("bad time limit " + std::to_string(seconds));
  ControlRequest r;
  r.action = ControlRequest::Action::kTimeLimit;
  r.time_limit = seconds;
  return SendRequest(dir, r);
}

Status RemoveJobDir(const std::string& dir) {
  if (SupervisorRunning(dir)) {
    return Status::FailedPrecondition(dir + ": the supervisor is still running");
  }
  std::error_code ec;
  // A container whose supervisor was killed before it could clean up: its runc state and the
  // overlay root go first (removing files through the mount would only whiteout them).
  if (std::filesystem::exists(dir + "/ctr/config.json", ec)) {
    std::filesystem::path state = std::filesystem::path(dir).parent_path().parent_path();
    Result<ContainerSettings> settings = ReadContainerSettings(state.string());
    std::optional<std::pair<uint32_t, int32_t>> key = JobDirKey(dir);
    if (settings.ok() && !settings->runc.empty() && key) {
      std::string id = "berth-" + JobCgroupName(key->first, key->second, dir);
      pid_t pid = fork();
      if (pid == 0) {
        int null = open("/dev/null", O_RDWR);
        for (int fd = 0; fd < 3; ++fd) dup2(null, fd);
        execl(settings->runc.c_str(), settings->runc.c_str(), "--root", settings->runc_root.c_str(),
              "delete", "--force", id.c_str(), static_cast<char*>(nullptr));
        _exit(127);
      }
      if (pid > 0) {
        int status = 0;
        while (waitpid(pid, &status, 0) < 0 && errno == EINTR) {
        }
      }
    }
    umount2((dir + "/ctr/rootfs").c_str(), MNT_DETACH);
  }
  std::filesystem::remove_all(dir, ec);
  if (ec) return Status::Internal("remove " + dir + ": " + ec.message());
  return Status::Ok();
}

}  // namespace berth::agent
