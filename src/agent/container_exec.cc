#include "agent/container_exec.h"

#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <sys/prctl.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <chrono>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <thread>

#include "agent/file_util.h"
#include "net/socket_io.h"

namespace berth::agent {
namespace {

using nlohmann::json;

constexpr int64_t kConsoleWaitMs = 30000;  // for runc to send the terminal

void CloseFd(int* fd) {
  if (*fd >= 0) ::close(*fd);
  *fd = -1;
}

pid_t ReadPid(const std::string& path) {
  Result<std::string> text = ReadFile(path);
  if (!text.ok()) return -1;
  long pid = std::strtol(text->c_str(), nullptr, 10);
  return pid > 1 ? static_cast<pid_t>(pid) : -1;
}

// What runc said on its stderr, its last line without logrus's decoration.
std::string RuncSaid(const std::string& path) {
  Result<std::string> text = ReadFile(path);
  if (!text.ok()) return "";
  std::string t = *text;
  while (!t.empty() && (t.back() == '\n' || t.back() == ' ')) t.pop_back();
  size_t nl = t.rfind('\n');
  std::string line = t.substr(nl == std::string::npos ? 0 : nl + 1);
  size_t msg = line.find("msg=");
  if (msg != std::string::npos) line = line.substr(msg + 4);
  if (line.size() >= 2 && line.front() == '"' && line.back() == '"') {
    line = line.substr(1, line.size() - 2);
  }
  return line.substr(0, 500);
}

// Signals the exec'd command's process group (runc's init makes the command a session leader;
// the group outlives its leader), else the command alone; runc itself (its own group) when the
// command's pid is not known, and for SIGKILL, which runc cannot pass on.
void SignalExec(const std::string& pid_file, pid_t runc, int sig) {
  // runc writes the pid file after the command started: the command may have written output
  // and the client gone away before. runc itself would pass a signal on to the command alone.
  pid_t inner = ReadPid(pid_file);
  for (int i = 0; inner <= 0 && i < 40 && ::kill(runc, 0) == 0; ++i) {
    std::this_thread::sleep_for(std::chrono::milliseconds(50));
    inner = ReadPid(pid_file);
  }
  if (inner > 0 && ::kill(-inner, sig) != 0) ::kill(inner, sig);
  if (inner <= 0 || sig == SIGKILL) ::kill(-runc, sig);
}

// The process between the stream and a detached `runc exec` (a terminal's: runc sends the
// master only when it detaches), in the child of a fork: it becomes a child subreaper, runs runc,
// then waits for the command runc started (reparented to it when runc exits) and exits with its
// status, 128 + N for signal N, so that the stream reaps it as it reaps a runc that did not
// detach. 255 when runc failed. Only async-signal-safe calls: the caller is multithreaded.
[[noreturn]] void WatchDetachedExec(char* const* argv, char* const* env, const char* pid_file) {
  if (::prctl(PR_SET_CHILD_SUBREAPER, 1) != 0) ::_exit(255);
  pid_t runc = ::fork();
  if (runc < 0) ::_exit(255);
  if (runc == 0) {
    ::execve(argv[0], argv, env);
    ::_exit(127);
  }
  int status = 0;
  while (::waitpid(runc, &status, 0) < 0 && errno == EINTR) {
  }
  if (!WIFEXITED(status) || WEXITSTATUS(status) != 0) ::_exit(255);
  char text[32] = {};
  int fd = ::open(pid_file, O_RDONLY | O_CLOEXEC);
  ssize_t n = fd >= 0 ? ::read(fd, text, sizeof(text) - 1) : -1;
  if (fd >= 0) ::close(fd);
  pid_t command = 0;
  for (ssize_t i = 0; i < n && text[i] >= '0' && text[i] <= '9'; ++i) {
    command = command * 10 + (text[i] - '0');
  }
  if (command <= 1) ::_exit(255);
  // Orphans of the command's own children come here too: reaped on the way.
  while (true) {
    pid_t w = ::waitpid(-1, &status, 0);
    if (w == command) break;
    if (w < 0 && errno != EINTR) ::_exit(255);
  }
  if (WIFSIGNALED(status)) ::_exit(128 + WTERMSIG(status));
  ::_exit(WIFEXITED(status) ? WEXITSTATUS(status) : 255);
}

}  // namespace

Result<RuncTarget> ReadRuncTarget(const std::string& job_dir) {
  Result<std::string> text = ReadFile(job_dir + "/ctr/runc.json");
  json j = text.ok() ? json::parse(*text, nullptr, false) : json();
  if (!j.is_object() || !j.value("runc", json()).is_string() ||
      !j.value("root", json()).is_string() || !j.value("id", json()).is_string()) {
    // The supervisor writes runc.json before job.pid: a container with the one and not the
    // other was started by a berth without exec into containers.
    if (!text.ok() && ReadPid(job_dir + "/job.pid") > 0) {
      return Status::FailedPrecondition(
          "the pod's container was started by an older berth agent (no ctr/runc.json): exec "
          "into it is not possible");
    }
    return Status::FailedPrecondition("the pod's container has not started");
  }
  RuncTarget t;
  t.runc = j["runc"].get<std::string>();
  t.root = j["root"].get<std::string>();
  t.id = j["id"].get<std::string>();
  t.bundle = job_dir + "/ctr";
  t.init_pid = ReadPid(job_dir + "/job.pid");
  if (t.runc.empty() || t.id.empty() || t.init_pid <= 0) {
    return Status::FailedPrecondition("the pod's container has not started");
  }
  return t;
}

Result<json> ExecProcess(std::string_view config_json, const std::vector<std::string>& args,
                         bool terminal) {
  json config = json::parse(config_json, nullptr, false);
  if (!config.is_object() || !config.contains("process") || !config["process"].is_object()) {
    return Status::InvalidArgument("the container's config.json has no process");
  }
  json process = config["process"];
  process["args"] = args;
  process["terminal"] = terminal;
  process.erase("consoleSize");  // the stream sets the size on the master
  return process;
}

std::vector<std::string> RuncExecArgv(const RuncTarget& target, const std::string& process_file,
                                      const std::string& pid_file,
                                      const std::string& console_socket) {
  std::vector<std::string> argv = {target.runc, "--root",     target.root,  "exec",
                                   "--process", process_file, "--pid-file", pid_file};
  if (!console_socket.empty()) {
    // runc takes a console socket only when it detaches (the watcher reaps the command).
    argv.insert(argv.end(), {"--detach", "--console-socket", console_socket});
  }
  argv.push_back(target.id);
  return argv;
}

Result<CommandLookup> LookupCommand(const std::string& name, const std::vector<std::string>& env,
                                    const std::string& cwd) {
  if (name.empty()) return Status::InvalidArgument("an empty command");
  const std::string dir_of_cwd = cwd.empty() ? "/" : cwd;
  auto join = [](const std::string& dir, const std::string& file) {
    return dir.ends_with('/') ? dir + file : dir + "/" + file;
  };
  CommandLookup out;
  if (name.find('/') != std::string::npos) {
    out.candidates.push_back(name.front() == '/' ? name : join(dir_of_cwd, name));
    out.not_found = "exec: \"" + name + "\": stat " + name + ": no such file or directory";
    return out;
  }
  std::string search = "/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin";
  for (const std::string& e : env) {
    if (e.starts_with("PATH=")) search = e.substr(5);
  }
  size_t pos = 0;
  while (pos <= search.size()) {
    size_t end = search.find(':', pos);
    if (end == std::string::npos) end = search.size();
    std::string dir = search.substr(pos, end - pos);
    if (dir.empty() || dir.front() != '/') dir = dir.empty() ? dir_of_cwd : join(dir_of_cwd, dir);
    out.candidates.push_back(join(dir, name));
    pos = end + 1;
  }
  out.not_found = "exec: \"" + name + "\": executable file not found in $PATH";
  return out;
}

Result<std::string> FindInContainer(pid_t pid, const CommandLookup& lookup) {
  // Everything the child needs is made before fork: after it only async-signal-safe calls.
  const std::string root = "/proc/" + std::to_string(pid) + "/root";
  int report[2];
  if (::pipe2(report, O_CLOEXEC) != 0) return Status::Internal(net::ErrnoMessage("pipe", errno));
  pid_t child = ::fork();
  if (child < 0) {
    int err = errno;
    ::close(report[0]);
    ::close(report[1]);
    return Status::Internal(net::ErrnoMessage("fork", err));
  }
  if (child == 0) {
    int found = -2;  // the root could not be entered
    if (::chroot(root.c_str()) == 0 && ::chdir("/") == 0) {
      found = -1;
      for (size_t i = 0; i < lookup.candidates.size(); ++i) {
        struct stat st;
        if (::stat(lookup.candidates[i].c_str(), &st) == 0 && S_ISREG(st.st_mode) &&
            (st.st_mode & 0111) != 0) {
          found = static_cast<int>(i);
          break;
        }
      }
    }
    (void)!::write(report[1], &found, sizeof(found));
    ::_exit(0);
  }
  ::close(report[1]);
  int found = -2;
  ssize_t n;
  while ((n = ::read(report[0], &found, sizeof(found))) < 0 && errno == EINTR) {
  }
  ::close(report[0]);
  int status;
  while (::waitpid(child, &status, 0) < 0 && errno == EINTR) {
  }
  if (n != static_cast<ssize_t>(sizeof(found)) || found == -2) {
    return Status::Unavailable("cannot enter the root of process " + std::to_string(pid));
  }
  if (found < 0 || static_cast<size_t>(found) >= lookup.candidates.size()) {
    return Status::NotFound(lookup.not_found);
  }
  return lookup.candidates[static_cast<size_t>(found)];
}

Result<int> ReceiveFd(int sock, int64_t deadline_ms) {
  while (true) {
    const int64_t left = deadline_ms - net::SteadyNowMs();
    if (left <= 0) return Status::Unavailable("no terminal came from runc in time");
    pollfd p{sock, POLLIN, 0};
    int r = ::poll(&p, 1, static_cast<int>(std::min<int64_t>(left, 1000)));
    if (r < 0 && errno != EINTR) return Status::Internal(net::ErrnoMessage("poll", errno));
    if (r > 0) break;
  }
  char name[256];
  iovec iov{name, sizeof(name)};
  alignas(cmsghdr) char control[CMSG_SPACE(sizeof(int) * 4)];
  msghdr msg{};
  msg.msg_iov = &iov;
  msg.msg_iovlen = 1;
  msg.msg_control = control;
  msg.msg_controllen = sizeof(control);
  ssize_t n;
  while ((n = ::recvmsg(sock, &msg, MSG_CMSG_CLOEXEC)) < 0 && errno == EINTR) {
  }
  if (n < 0) return Status::Unavailable(net::ErrnoMessage("receiving the terminal", errno));
  int fd = -1;
  for (cmsghdr* c = CMSG_FIRSTHDR(&msg); c != nullptr; c = CMSG_NXTHDR(&msg, c)) {
    if (c->cmsg_level != SOL_SOCKET || c->cmsg_type != SCM_RIGHTS) continue;
    const size_t count = (c->cmsg_len - CMSG_LEN(0)) / sizeof(int);
    for (size_t i = 0; i < count; ++i) {
      int got;
      std::memcpy(&got, CMSG_DATA(c) + i * sizeof(int), sizeof(int));
      if (fd < 0) {
        fd = got;
      } else {
        ::close(got);  // one terminal only
      }
    }
  }
  if (fd >= 0) return fd;
  if (n == 0) return Status::Unavailable("runc closed the console socket without a terminal");
  return Status::InvalidArgument("the console socket's message carried no file descriptor");
}

ContainerExec::~ContainerExec() {
  if (dir_.empty()) return;
  std::error_code ec;
  std::filesystem::remove_all(dir_, ec);
}

Result<StreamProcess> ContainerExec::Start(const PodStreamRequest& request, const winsize& size) {
  Result<std::string> config = ReadFile(target_.bundle + "/config.json");
  if (!config.ok()) return Status::FailedPrecondition("the pod's container has no config.json");
  BERTH_ASSIGN_OR_RETURN(json process, ExecProcess(*config, request.command, request.tty));
  std::vector<std::string> env;
  if (process.contains("env") && process["env"].is_array()) {
    for (const json& e : process["env"]) {
      if (e.is_string()) env.push_back(e.get<std::string>());
    }
  }
  BERTH_ASSIGN_OR_RETURN(
      CommandLookup lookup,
      LookupCommand(request.command.front(), env, process.value("cwd", std::string("/"))));
  // Named as kubectl names it for any pod: runc would say the same after starting its init.
  Result<std::string> found = FindInContainer(target_.init_pid, lookup);
  if (!found.ok() && found.status().code() == StatusCode::kNotFound) return found.status();
  char tmpl[] = "/tmp/berth-exec-XXXXXX";
  if (::mkdtemp(tmpl) == nullptr) {
    return Status::Internal(net::ErrnoMessage("a folder for the exec", errno));
  }
  dir_ = tmpl;
  BERTH_RETURN_IF_ERROR(WriteFileAtomic(dir_ + "/process.json", process.dump(), 0600));
  return StartRunc(request, size);
}

Result<StreamProcess> ContainerExec::StartRunc(const PodStreamRequest& request,
                                               const winsize& size) {
  const std::string pid_file = dir_ + "/pid";
  const std::string err_file = dir_ + "/runc.err";
  std::string socket_path;
  int listener = -1;
  StreamPipes pipes;
  auto cleanup = [&] {
    pipes.Close();
    CloseFd(&listener);
  };
  if (request.tty) {
    socket_path = dir_ + "/console.sock";
    sockaddr_un addr{};
    addr.sun_family = AF_UNIX;
    if (socket_path.size() >= sizeof(addr.sun_path)) {
      return Status::Internal("the console socket's path is too long: " + socket_path);
    }
    std::memcpy(addr.sun_path, socket_path.c_str(), socket_path.size() + 1);
    listener = ::socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
    if (listener < 0 || ::bind(listener, reinterpret_cast<sockaddr*>(&addr), sizeof(addr)) != 0 ||
        ::listen(listener, 1) != 0) {
      int err = errno;
      cleanup();
      return Status::Internal(net::ErrnoMessage("the console socket " + socket_path, err));
    }
  } else {
    BERTH_RETURN_IF_ERROR(pipes.Open(request));
  }
  // Everything the child needs is made before fork: after it only async-signal-safe calls.
  std::vector<std::string> argv =
      RuncExecArgv(target_, dir_ + "/process.json", pid_file, socket_path);
  std::vector<char*> args;
  for (const std::string& a : argv) args.push_back(const_cast<char*>(a.c_str()));
  args.push_back(nullptr);
  char path_env[] = "PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin";
  char* env[] = {path_env, nullptr};
  const int devnull = ::open("/dev/null", O_RDWR | O_CLOEXEC);
  // With a terminal runc's own words go to a file: its stdio is not the command's.
  const int err_fd =
      request.tty ? ::open(err_file.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0600) : -1;
  pid_t pid = ::fork();
  if (pid < 0) {
    int err = errno;
    cleanup();
    if (devnull >= 0) ::close(devnull);
    if (err_fd >= 0) ::close(err_fd);
    return Status::Internal(net::ErrnoMessage("fork", err));
  }
  if (pid == 0) {
    sigset_t none;
    sigemptyset(&none);
    ::sigprocmask(SIG_SETMASK, &none, nullptr);
    for (int sig : {SIGPIPE, SIGINT, SIGQUIT, SIGTERM, SIGHUP, SIGCHLD, SIGUSR1, SIGUSR2}) {
      ::signal(sig, SIG_DFL);
    }
    ::setsid();
    int fds[3] = {pipes.ChildEnd(0, devnull), pipes.ChildEnd(1, devnull),
                  pipes.ChildEnd(2, err_fd >= 0 ? err_fd : devnull)};
    for (int i = 0; i < 3; ++i) {
      if (::dup2(fds[i], i) < 0) ::_exit(127);
    }
    if (request.tty) WatchDetachedExec(args.data(), env, pid_file.c_str());
    ::execve(args[0], args.data(), env);
    ::_exit(127);
  }
  if (devnull >= 0) ::close(devnull);
  if (err_fd >= 0) ::close(err_fd);
  StreamProcess p;
  p.pid = pid;
  p.signal = [pid_file, pid](int sig) { SignalExec(pid_file, pid, sig); };
  if (request.tty) {
    // runc connects once its init has the terminal; it may fail first (its exit says why).
    const int64_t deadline = net::SteadyNowMs() + kConsoleWaitMs;
    int conn = -1;
    int status = 0;
    bool exited = false;
    while (conn < 0 && net::SteadyNowMs() < deadline) {
      pollfd pf{listener, POLLIN, 0};
      if (::poll(&pf, 1, 50) > 0) conn = ::accept4(listener, nullptr, nullptr, SOCK_CLOEXEC);
      if (conn < 0 && ::waitpid(pid, &status, WNOHANG) == pid) {
        exited = true;
        break;
      }
    }
    Result<int> master = conn >= 0 ? ReceiveFd(conn, deadline)
                                   : Result<int>(Status::Unavailable("no terminal came from runc"));
    if (conn >= 0) ::close(conn);
    cleanup();
    if (!master.ok()) {
      if (!exited) {
        SignalExec(pid_file, pid, SIGKILL);
        while (::waitpid(pid, &status, 0) < 0 && errno == EINTR) {
        }
      }
      std::string why = RuncSaid(err_file);
      return Status::FailedPrecondition("runc exec: " +
                                        (why.empty() ? master.status().message() : why));
    }
    if (size.ws_col > 0 && size.ws_row > 0) ::ioctl(*master, TIOCSWINSZ, &size);
    p.in = *master;
    p.out = *master;
  } else {
    pipes.HandOut(&p);
    cleanup();
  }
  SetNonBlocking(p);
  return p;
}

}  // namespace berth::agent
