#include "agent/pod_stream.h"

#include <fcntl.h>
#include <grp.h>
#include <poll.h>
#include <signal.h>
#include <sys/ioctl.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <termios.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <chrono>
#include <cstring>
#include <fstream>
#include <sstream>
#include <utility>

#include "net/socket_io.h"

namespace berth::agent {
namespace {

using net::SteadyNowMs;
using nlohmann::json;
namespace ws = net::ws;

constexpr uint8_t kStdin = 0;
constexpr uint8_t kStdout = 1;
constexpr uint8_t kStderr = 2;
constexpr uint8_t kError = 3;
constexpr uint8_t kResize = 4;
constexpr uint8_t kClose = 255;

std::string ReadWhole(const std::string& path) {
  std::ifstream f(path, std::ios::binary);
  std::stringstream ss;
  ss << f.rdbuf();
  return ss.str();
}

void CloseFd(int* fd) {
  if (*fd >= 0) ::close(*fd);
  *fd = -1;
}

// The value of NAME in an environment ("NAME=value" entries); "" when absent.
std::string EnvValue(const std::vector<std::string>& env, std::string_view name) {
  for (const std::string& e : env) {
    if (e.size() > name.size() && e.compare(0, name.size(), name) == 0 && e[name.size()] == '=') {
      return e.substr(name.size() + 1);
    }
  }
  return "";
}

bool Executable(const std::string& path) {
  struct stat st {};
  return ::stat(path.c_str(), &st) == 0 && S_ISREG(st.st_mode) && (st.st_mode & 0111) != 0;
}

// A process started in the pod: its pid is the leader of its own session and process group.
using Started = StreamProcess;

// What the child reports through its close-on-exec pipe when it cannot exec.
struct ChildFailure {
  int stage = 0;  // 1 cgroup, 2 groups/uid, 3 cwd, 4 exec, 5 terminal
  int err = 0;
};

[[noreturn]] void ChildFail(int fd, int stage) {
  ChildFailure f{stage, errno};
  (void)!::write(fd, &f, sizeof(f));
  ::_exit(127);
}

std::string DescribeFailure(const ChildFailure& f, const std::string& path,
                            const PodContext& context) {
  const std::string why = std::strerror(f.err);
  switch (f.stage) {
    case 1:
      return "could not join the pod's cgroups: " + why;
    case 2:
      return "could not become the pod's user " + std::to_string(context.uid) + ": " + why;
    case 3:
      return "chdir to " + context.cwd + ": " + why;
    case 5:
      return "could not set up the terminal: " + why;
    default:
      return "exec " + path + ": " + why;
  }
}

// Starts argv (argv[0] resolved to `path`) in the pod's context. `winsize` applies with a tty.
Result<Started> StartInPod(const std::string& path, const std::vector<std::string>& argv,
                           const PodContext& context, const PodStreamRequest& request,
                           const winsize& size) {
  // Everything the child needs is made before fork: after it only async-signal-safe calls.
  std::vector<char*> args;
  for (const std::string& a : argv) args.push_back(const_cast<char*>(a.c_str()));
  args.push_back(nullptr);
  std::vector<char*> env;
  for (const std::string& e : context.environment) env.push_back(const_cast<char*>(e.c_str()));
  env.push_back(nullptr);
  const bool as_root = ::geteuid() == 0;
  StreamPipes pipes;
  int master = -1;
  int slave = -1;
  auto cleanup = [&] {
    pipes.Close();
    CloseFd(&master);
    CloseFd(&slave);
  };
  if (request.tty) {
    master = ::posix_openpt(O_RDWR | O_NOCTTY | O_CLOEXEC);
    if (master < 0 || ::grantpt(master) != 0 || ::unlockpt(master) != 0) {
      cleanup();
      return Status::Internal(net::ErrnoMessage("a pseudo-terminal", errno));
    }
    char name[64];
    if (::ptsname_r(master, name, sizeof(name)) != 0) {
      cleanup();
      return Status::Internal(net::ErrnoMessage("ptsname", errno));
    }
    slave = ::open(name, O_RDWR | O_NOCTTY | O_CLOEXEC);
    if (slave < 0) {
      cleanup();
      return Status::Internal(net::ErrnoMessage(std::string("open ") + name, errno));
    }
    if (size.ws_col > 0 && size.ws_row > 0) ::ioctl(master, TIOCSWINSZ, &size);
    // The pod's user owns its terminal, as a login's does.
    if (as_root) (void)!::fchown(slave, context.uid, context.gid);
  } else if (Status st = pipes.Open(request); !st.ok()) {
    cleanup();
    return st;
  }
  int report[2];
  if (::pipe2(report, O_CLOEXEC) != 0) {
    cleanup();
    return Status::Internal(net::ErrnoMessage("pipe", errno));
  }
  const int devnull = ::open("/dev/null", O_RDWR | O_CLOEXEC);
  pid_t pid = ::fork();
  if (pid < 0) {
    int err = errno;
    cleanup();
    ::close(report[0]);
    ::close(report[1]);
    if (devnull >= 0) ::close(devnull);
    return Status::Internal(net::ErrnoMessage("fork", err));
  }
  if (pid == 0) {
    const int fail = report[1];
    sigset_t none;
    sigemptyset(&none);
    ::sigprocmask(SIG_SETMASK, &none, nullptr);
    for (int sig : {SIGPIPE, SIGINT, SIGQUIT, SIGTERM, SIGHUP, SIGCHLD, SIGUSR1, SIGUSR2}) {
      ::signal(sig, SIG_DFL);
    }
    ::setsid();
    int fds[3];
    if (request.tty) {
      if (::ioctl(slave, TIOCSCTTY, 0) != 0) ChildFail(fail, 5);
      fds[0] = fds[1] = fds[2] = slave;
    } else {
      for (int i = 0; i < 3; ++i) fds[i] = pipes.ChildEnd(i, devnull);
    }
    for (int i = 0; i < 3; ++i) {
      if (::dup2(fds[i], i) < 0) ChildFail(fail, 5);
    }
    for (const std::string& procs : context.cgroup_procs) {
      int fd = ::open(procs.c_str(), O_WRONLY | O_CLOEXEC);
      if (fd < 0 || ::write(fd, "0", 1) != 1) ChildFail(fail, 1);
      ::close(fd);
    }
    if (as_root) {
      if (::setgroups(context.groups.size(), context.groups.data()) != 0 ||
          ::setgid(context.gid) != 0 || ::setuid(context.uid) != 0) {
        ChildFail(fail, 2);
      }
    }
    if (!context.cwd.empty() && ::chdir(context.cwd.c_str()) != 0) ChildFail(fail, 3);
    ::execve(path.c_str(), args.data(), env.data());
    ChildFail(fail, 4);
  }
  ::close(report[1]);
  if (devnull >= 0) ::close(devnull);
  ChildFailure failure;
  ssize_t n;
  while ((n = ::read(report[0], &failure, sizeof(failure))) < 0 && errno == EINTR) {
  }
  ::close(report[0]);
  if (n == static_cast<ssize_t>(sizeof(failure))) {
    int status;
    while (::waitpid(pid, &status, 0) < 0 && errno == EINTR) {
    }
    cleanup();
    return Status::FailedPrecondition(DescribeFailure(failure, path, context));
  }
  Started s;
  s.pid = pid;
  if (request.tty) {
    CloseFd(&slave);
    s.in = master;
    s.out = master;
    master = -1;
  } else {
    pipes.HandOut(&s);
  }
  cleanup();
  SetNonBlocking(s);
  return s;
}

}  // namespace

bool ParseResize(std::string_view payload, winsize* size) {
  json j = json::parse(payload, nullptr, false);
  if (!j.is_object()) return false;
  auto w = j.find("Width");
  auto h = j.find("Height");
  if (w == j.end() || h == j.end() || !w->is_number_unsigned() || !h->is_number_unsigned()) {
    return false;
  }
  size->ws_col = static_cast<unsigned short>(std::min<uint64_t>(w->get<uint64_t>(), 65535));
  size->ws_row = static_cast<unsigned short>(std::min<uint64_t>(h->get<uint64_t>(), 65535));
  return true;
}

Status SendChannel(ws::WsConnection& conn, uint8_t channel, std::string_view data) {
  std::string m(1, static_cast<char>(channel));
  m.append(data);
  return conn.Send(ws::Opcode::kBinary, m);
}

namespace {

int ExitCodeOf(int status) {
  if (WIFEXITED(status)) return WEXITSTATUS(status);
  if (WIFSIGNALED(status)) return 128 + WTERMSIG(status);
  return 1;
}

// Ends a process the client left: SIGHUP to its group (what a hang-up does), SIGKILL after the
// grace. Returns its wait status.
int HangUp(const StreamProcess& p, int grace_ms) {
  const pid_t pid = p.pid;
  auto signal = [&](int sig) {
    if (p.signal) {
      p.signal(sig);
    } else {
      ::kill(-pid, sig);
    }
  };
  signal(SIGHUP);
  signal(SIGCONT);
  const int64_t until = SteadyNowMs() + grace_ms;
  int status = 0;
  while (SteadyNowMs() < until) {
    pid_t r = ::waitpid(pid, &status, WNOHANG);
    if (r == pid || (r < 0 && errno != EINTR)) return status;
    std::this_thread::sleep_for(std::chrono::milliseconds(50));
  }
  signal(SIGKILL);
  while (::waitpid(pid, &status, 0) < 0 && errno == EINTR) {
  }
  return status;
}

}  // namespace

Result<PodStreamRequest> DecodePodStreamRequest(const json& j) {
  if (!j.is_object()) return Status::InvalidArgument("a pod stream request must be an object");
  PodStreamRequest r;
  r.kind = j.value("kind", "");
  if (r.kind != "exec" && r.kind != "attach")
    return Status::InvalidArgument("unknown pod stream kind \"" + r.kind + "\"");
  auto c = j.find("command");
  if (r.kind == "attach" && c != j.end()) {
    return Status::InvalidArgument("an attach has no \"command\": it is the pod's process");
  }
  if (r.kind == "exec" && (c == j.end() || !c->is_array() || c->empty())) {
    return Status::InvalidArgument("\"command\" must be a non-empty array of strings");
  }
  for (const json& a : r.kind == "exec" ? *c : json::array()) {
    if (!a.is_string()) return Status::InvalidArgument("\"command\" must hold strings");
    r.command.push_back(a.get<std::string>());
  }
  for (auto [name, field] : {std::pair{"tty", &r.tty}, std::pair{"stdin", &r.stdin},
                             std::pair{"stdout", &r.stdout}, std::pair{"stderr", &r.stderr}}) {
    auto it = j.find(name);
    if (it == j.end()) continue;
    if (!it->is_boolean())
      return Status::InvalidArgument(std::string("\"") + name + "\" must be a boolean");
    *field = it->get<bool>();
  }
  if (r.tty) r.stderr = false;  // a terminal has one output
  r.protocol = j.value("protocol", "v5.channel.k8s.io");
  if (r.protocol != "v5.channel.k8s.io" && r.protocol != "v4.channel.k8s.io") {
    return Status::InvalidArgument("unknown channel protocol \"" + r.protocol + "\"");
  }
  return r;
}

Status ParseStatusIds(std::string_view status, PodContext* out) {
  bool uid = false;
  bool gid = false;
  size_t pos = 0;
  while (pos < status.size()) {
    size_t end = status.find('\n', pos);
    if (end == std::string_view::npos) end = status.size();
    std::string line(status.substr(pos, end - pos));
    pos = end + 1;
    std::istringstream in(line);
    std::string key;
    in >> key;
    if (key == "Uid:") {
      uid = static_cast<bool>(in >> out->uid);
    } else if (key == "Gid:") {
      gid = static_cast<bool>(in >> out->gid);
    } else if (key == "Groups:") {
      out->groups.clear();
      gid_t g;
      while (in >> g) out->groups.push_back(g);
    }
  }
  if (!uid || !gid) return Status::InvalidArgument("no Uid or Gid line in the process status");
  return Status::Ok();
}

std::vector<std::string> ParseEnviron(std::string_view environ) {
  std::vector<std::string> out;
  size_t pos = 0;
  while (pos < environ.size()) {
    size_t end = environ.find('\0', pos);
    if (end == std::string_view::npos) end = environ.size();
    if (end > pos) out.emplace_back(environ.substr(pos, end - pos));
    pos = end + 1;
  }
  return out;
}

std::vector<std::string> CgroupProcsFiles(std::string_view mountinfo,
                                          std::string_view proc_cgroup) {
  std::vector<MountInfo> mounts = ParseMountInfo(mountinfo);
  std::vector<std::string> out;
  for (const ProcCgroup& g : ParseProcCgroup(proc_cgroup)) {
    for (const MountInfo& m : mounts) {
      bool match = false;
      if (g.id == 0 && g.controllers.empty()) {
        match = m.fs_type == "cgroup2";
      } else if (m.fs_type == "cgroup" && !g.controllers.empty()) {
        match = std::all_of(g.controllers.begin(), g.controllers.end(), [&](const std::string& c) {
          return std::find(m.super_options.begin(), m.super_options.end(), c) !=
                 m.super_options.end();
        });
      }
      if (!match) continue;
      // The group's path is relative to the hierarchy's root; the mount shows m.root of it.
      std::string rel = g.path;
      if (m.root != "/" && rel.starts_with(m.root))
        rel = rel.substr(m.root.size());
      else if (m.root != "/")
        continue;
      std::string dir = m.mount_point + (rel == "/" ? "" : rel);
      out.push_back(dir + "/cgroup.procs");
      break;
    }
  }
  return out;
}

Result<PodContext> ReadPodContext(pid_t pid, std::string_view job_group, uint32_t job_id) {
  const std::string proc = "/proc/" + std::to_string(pid);
  PodContext c;
  c.pid = pid;
  std::string status = ReadWhole(proc + "/status");
  if (status.empty()) {
    return Status::NotFound("the pod's process " + std::to_string(pid) + " has ended");
  }
  BERTH_RETURN_IF_ERROR(ParseStatusIds(status, &c));
  c.environment = ParseEnviron(ReadWhole(proc + "/environ"));
  char cwd[4096];
  ssize_t n = ::readlink((proc + "/cwd").c_str(), cwd, sizeof(cwd) - 1);
  if (n > 0) c.cwd.assign(cwd, static_cast<size_t>(n));
  std::vector<std::string> all =
      CgroupProcsFiles(ReadWhole("/proc/self/mountinfo"), ReadWhole(proc + "/cgroup"));
  // Only the job's own groups: the command must not join the agent's or the system's.
  const std::string component = "/" + std::string(job_group) + "/";
  for (const std::string& f : all) {
    if (!job_group.empty() && f.find(component) != std::string::npos) c.cgroup_procs.push_back(f);
  }
  const bool in_job_groups = !c.cgroup_procs.empty();
  const bool job_env = EnvValue(c.environment, "SLURM_JOB_ID") == std::to_string(job_id);
  if (!in_job_groups && !job_env) {
    return Status::FailedPrecondition("process " + std::to_string(pid) + " is not job " +
                                      std::to_string(job_id) + "'s");
  }
  return c;
}

Result<std::string> ResolveCommand(const std::string& name, const PodContext& context) {
  if (name.empty()) return Status::InvalidArgument("an empty command");
  if (name.find('/') != std::string::npos) {
    std::string path = name.front() == '/' || context.cwd.empty() ? name : context.cwd + "/" + name;
    if (Executable(path)) return path;
    return Status::NotFound("exec: \"" + name + "\": stat " + name + ": no such file or directory");
  }
  std::string search = EnvValue(context.environment, "PATH");
  if (search.empty()) search = "/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin";
  size_t pos = 0;
  while (pos <= search.size()) {
    size_t end = search.find(':', pos);
    if (end == std::string::npos) end = search.size();
    std::string dir = search.substr(pos, end - pos);
    if (dir.empty()) dir = context.cwd.empty() ? "." : context.cwd;
    std::string path = dir + "/" + name;
    if (Executable(path)) return path;
    pos = end + 1;
  }
  return Status::NotFound("exec: \"" + name + "\": executable file not found in $PATH");
}

json OutcomeStatus(const ExecOutcome& outcome, const std::vector<std::string>& command) {
  if (!outcome.started) {
    return {{"metadata", json::object()},
            {"status", "Failure"},
            {"message",
             "Internal error occurred: error executing command in container: " + outcome.error},
            {"reason", "InternalError"},
            {"code", 500}};
  }
  if (outcome.exit_code == 0) return {{"metadata", json::object()}, {"status", "Success"}};
  std::string words;
  for (const std::string& a : command) words += (words.empty() ? "" : " ") + a;
  const std::string code = std::to_string(outcome.exit_code);
  return {{"metadata", json::object()},
          {"status", "Failure"},
          {"message", "command terminated with non-zero exit code: error executing command [" +
                          words + "], exit code " + code},
          {"reason", "NonZeroExitCode"},
          {"details", {{"causes", json::array({{{"reason", "ExitCode"}, {"message", code}}})}}}};
}

ExecOutcome ServeExec(ws::WsConnection& conn, const PodStreamRequest& request,
                      const PodContext& context, const std::atomic<bool>& stopping,
                      const StreamLimits& limits) {
  auto start = [&](const winsize& size) -> Result<StreamProcess> {
    BERTH_ASSIGN_OR_RETURN(std::string path, ResolveCommand(request.command.front(), context));
    return StartInPod(path, request.command, context, request, size);
  };
  return ServeCommand(conn, request, start, stopping, limits);
}

ExecOutcome ServeCommand(ws::WsConnection& conn, const PodStreamRequest& request,
                         const StreamStarter& start, const std::atomic<bool>& stopping,
                         const StreamLimits& limits) {
  ExecOutcome outcome;
  std::string stdin_buffer;
  bool stdin_closed = false;  // the client closed its stdin (v5)
  bool stdin_ended = false;   // and the process was told
  winsize size{};
  bool client_gone = false;
  std::string error;
  ws::Frame m;
  // What the client sent on a control or input channel (false: it went away).
  auto take = [&](const ws::Frame& message, int in_fd) {
    if (message.payload.empty()) return;
    const auto channel = static_cast<uint8_t>(message.payload[0]);
    std::string_view data = std::string_view(message.payload).substr(1);
    if (channel == kStdin && request.stdin && !stdin_closed) {
      stdin_buffer.append(data);
    } else if (channel == kResize) {
      if (ParseResize(data, &size) && in_fd >= 0 && request.tty) ::ioctl(in_fd, TIOCSWINSZ, &size);
    } else if (channel == kClose && !data.empty() && static_cast<uint8_t>(data[0]) == kStdin) {
      stdin_closed = true;
    }
  };
  // A terminal starts with the client's size: kubectl sends it first thing.
  if (request.tty) {
    const int64_t until = SteadyNowMs() + 1000;
    while (size.ws_col == 0 && SteadyNowMs() < until) {
      ws::WsConnection::Got got = conn.Receive(&m, until, &stopping, &error);
      if (got == ws::WsConnection::Got::kClosed) return outcome;
      if (got == ws::WsConnection::Got::kMessage) take(m, -1);
    }
  }
  Result<StreamProcess> started = start(size);
  if (!started.ok()) {
    outcome.error = started.status().message();
    (void)SendChannel(conn, kError, OutcomeStatus(outcome, request.command).dump());
    conn.SendClose(ws::kCloseNormal, "");
    return outcome;
  }
  outcome.started = true;
  Started p = *started;
  int status = 0;
  bool exited = false;
  int64_t exit_ms = 0;
  const bool tty = request.tty;
  while (true) {
    if (!exited) {
      pid_t r = ::waitpid(p.pid, &status, WNOHANG);
      if (r == p.pid) {
        exited = true;
        exit_ms = SteadyNowMs();
      }
    }
    const bool outputs_open = p.out >= 0 || p.err >= 0;
    if (exited && (!outputs_open || SteadyNowMs() - exit_ms > limits.drain_after_exit_ms)) break;
    if (stopping) {
      client_gone = true;
      break;
    }
    // Stdin: write what is buffered; close the pipe (or send EOF to a terminal) once the
    // client closed it and all went out.
    if (p.in >= 0 && !stdin_buffer.empty()) {
      ssize_t n = ::write(p.in, stdin_buffer.data(), stdin_buffer.size());
      if (n > 0) stdin_buffer.erase(0, static_cast<size_t>(n));
      if (n < 0 && errno != EAGAIN && errno != EINTR) {
        stdin_buffer.clear();
        if (!tty) CloseFd(&p.in);
      }
    }
    if (stdin_closed && !stdin_ended && stdin_buffer.empty() && p.in >= 0) {
      stdin_ended = true;
      if (tty) {
        stdin_buffer = "\x04";  // the terminal's end-of-file character
      } else {
        CloseFd(&p.in);
      }
    }
    pollfd fds[4];
    int nfds = 0;
    const bool want_client = stdin_buffer.size() < limits.max_stdin_buffer;
    fds[nfds++] = {want_client ? conn.fd() : -1, POLLIN, 0};
    fds[nfds++] = {p.out, POLLIN, 0};
    fds[nfds++] = {p.err, POLLIN, 0};
    fds[nfds++] = {!stdin_buffer.empty() && p.in >= 0 && !tty ? p.in : -1, POLLOUT, 0};
    int ready = ::poll(fds, nfds, conn.HasBuffered() ? 0 : 100);
    if (ready < 0 && errno != EINTR) break;
    if (want_client && (conn.HasBuffered() || (fds[0].revents & (POLLIN | POLLHUP | POLLERR)))) {
      ws::WsConnection::Got got;
      while ((got = conn.Receive(&m, 0, &stopping, &error)) == ws::WsConnection::Got::kMessage) {
        take(m, tty ? p.in : -1);
      }
      if (got == ws::WsConnection::Got::kClosed) {
        client_gone = true;
        break;
      }
    }
    for (int i : {1, 2}) {
      if ((fds[i].revents & (POLLIN | POLLHUP | POLLERR)) == 0) continue;
      int* fd = i == 1 ? &p.out : &p.err;
      char buf[32768];
      ssize_t n = ::read(*fd, buf, sizeof(buf));
      if (n > 0) {
        if (!SendChannel(conn, i == 1 ? kStdout : kStderr, std::string_view(buf, n)).ok()) {
          client_gone = true;
          break;
        }
      } else if (n == 0 || (errno != EAGAIN && errno != EINTR)) {
        // EOF, or EIO: a terminal whose last process closed it.
        if (tty) {
          p.out = -1;  // the master is also p.in: closed below
        } else {
          CloseFd(fd);
        }
      }
    }
    if (client_gone) break;
  }
  if (tty) {
    if (p.in >= 0) ::close(p.in);
    p.in = -1;
  }
  CloseFd(&p.in);
  CloseFd(&p.out);
  CloseFd(&p.err);
  if (!exited) {
    if (client_gone) {
      status = HangUp(p, limits.hangup_grace_ms);
    } else {
      while (::waitpid(p.pid, &status, 0) < 0 && errno == EINTR) {
      }
    }
  }
  outcome.exit_code = ExitCodeOf(status);
  if (!client_gone) {
    (void)SendChannel(conn, kError, OutcomeStatus(outcome, request.command).dump());
    conn.SendClose(ws::kCloseNormal, "");
  }
  return outcome;
}

Status PodStreams::Start(std::function<void(const std::atomic<bool>&)> fn) {
  MutexLock l(mu_);
  // Join the threads that ended.
  std::erase_if(slots_, [](Slot& s) {
    if (!s.done->load()) return false;
    s.thread.join();
    return true;
  });
  if (stopping_) return Status::Unavailable("the agent is stopping");
  if (slots_.size() >= kMax) {
    return Status::ResourceExhausted("too many pod streams on this node (" + std::to_string(kMax) +
                                     ")");
  }
  auto done = std::make_shared<std::atomic<bool>>(false);
  slots_.push_back(Slot{std::thread([this, fn = std::move(fn), done] {
                          fn(stopping_);
                          *done = true;
                        }),
                        done});
  return Status::Ok();
}

void PodStreams::StopAll() {
  std::vector<Slot> slots;
  {
    MutexLock l(mu_);
    stopping_ = true;
    slots.swap(slots_);
  }
  for (Slot& s : slots) s.thread.join();
}

Status StreamPipes::Open(const PodStreamRequest& request) {
  const bool wanted[3] = {request.stdin, request.stdout, request.stderr};
  for (int i = 0; i < 3; ++i) {
    if (wanted[i] && ::pipe2(pipes_[i], O_CLOEXEC) != 0) {
      const int err = errno;
      Close();
      return Status::Internal(net::ErrnoMessage("pipe", err));
    }
  }
  return Status::Ok();
}

void StreamPipes::HandOut(StreamProcess* p) {
  // The parent writes the child's stdin and reads its stdout and stderr.
  p->in = std::exchange(pipes_[0][1], -1);
  p->out = std::exchange(pipes_[1][0], -1);
  p->err = std::exchange(pipes_[2][0], -1);
  Close();
}

void StreamPipes::Close() {
  for (auto& p : pipes_) {
    CloseFd(&p[0]);
    CloseFd(&p[1]);
  }
}

void SetNonBlocking(const StreamProcess& p) {
  for (int fd : {p.in, p.out, p.err}) {
    if (fd >= 0) ::fcntl(fd, F_SETFL, ::fcntl(fd, F_GETFL) | O_NONBLOCK);
  }
}

}  // namespace berth::agent
