// `berth supervise-server`: forks a supervisor for each job folder the agent sends (see
// supervisor.h). It is exec'd once, so what every exec'd supervisor paid for again (the loader,
// the NSS modules for the job's user and groups, finding the cgroup layout) is paid once here.
//
// Thread safety: one thread; it forks, so it starts none.
#include <fcntl.h>
#include <grp.h>
#include <poll.h>
#include <pwd.h>
#include <signal.h>
#include <sys/signalfd.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <charconv>
#include <climits>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <initializer_list>
#include <memory>
#include <string>
#include <string_view>

#include "agent/cgroup_layout.h"
#include "agent/file_util.h"
#include "agent/supervise_internal.h"
#include "agent/supervisor.h"

namespace berth::agent {

namespace {

// The process's argument strings in memory, [arg_start, arg_end) of /proc/self/stat (its 48th
// and 49th fields): what /proc/PID/cmdline reads.
struct ArgArea {
  char* start = nullptr;
  size_t size = 0;
};

Result<ArgArea> OwnArgArea() {
  BERTH_ASSIGN_OR_RETURN(std::string stat, ReadFile("/proc/self/stat"));
  // The fields after the command's name, "(...)", which may hold blanks, start with the third.
  const size_t close = stat.rfind(')');
  if (close == std::string::npos) return Status::Internal("/proc/self/stat: no command name");
  std::string_view rest = std::string_view(stat).substr(close + 1);
  uint64_t field[2] = {0, 0};
  int number = 2;
  while (!rest.empty() && number < 49) {
    while (!rest.empty() && rest.front() == ' ') rest.remove_prefix(1);
    const size_t end = std::min(rest.find(' '), rest.size());
    ++number;
    if (number >= 48) std::from_chars(rest.data(), rest.data() + end, field[number - 48]);
    rest.remove_prefix(end);
  }
  if (number < 49 || field[0] == 0 || field[1] <= field[0]) {
    return Status::Internal("/proc/self/stat: no argument area");
  }
  return ArgArea{reinterpret_cast<char*>(field[0]), static_cast<size_t>(field[1] - field[0])};
}

size_t NeededRoom(std::initializer_list<std::string_view> args) {
  size_t n = 0;
  for (std::string_view a : args) n += a.size() + 1;
  return n;
}

// Shows `args` as this process's command line: written over the argument area, the rest of it
// zeroed (the kernel then shows the whole area, the trailing NUL bytes included).
void ShowCommandLine(const ArgArea& area, std::initializer_list<std::string_view> args) {
  std::memset(area.start, 0, area.size);
  char* at = area.start;
  for (std::string_view a : args) {
    std::memcpy(at, a.data(), a.size());
    at += a.size() + 1;
  }
}

// Has what every supervisor looks up loaded here once: the NSS modules for users and groups.
void LoadUserLookups() {
  passwd pw{};
  passwd* found = nullptr;
  char buf[4096];
  (void)getpwuid_r(0, &pw, buf, sizeof(buf), &found);
  gid_t groups[16];
  int n = 16;
  (void)getgrouplist(found != nullptr ? pw.pw_name : "root", 0, groups, &n);
}

void Report(int fd, int32_t value) {
  (void)!write(fd, &value, sizeof(value));
}

// In the forked supervisor: as `berth supervise DIR` exec'd by the agent would start (nothing
// open but stdin from /dev/null and stdout and stderr to DIR/supervisor.log, default signals,
// that command line), then its pid (or a negative errno) on `report` once its pid file is
// written, then the attempt.
[[noreturn]] void BecomeSupervisor(const std::string& dir, const std::string& binary,
                                   const ArgArea& area, SuperviseOptions options, int report) {
  if (report > 3) close_range(3, static_cast<unsigned>(report) - 1, 0);
  close_range(static_cast<unsigned>(report) + 1, ~0U, 0);
  if (int err = RedirectStdio((dir + "/supervisor.log").c_str()); err != 0) {
    Report(report, -err);
    _exit(127);
  }
  ResetSignals();
  ShowCommandLine(area, {binary, "supervise", dir});
  Supervisor supervisor(dir, std::move(options));
  if (Status s = supervisor.Begin(); !s.ok()) {
    Log(dir, s.ToString());
    Report(report, -EIO);
    _exit(1);
  }
  Report(report, static_cast<int32_t>(getpid()));
  close(report);
  const int rc = supervisor.Finish();
  std::fflush(nullptr);
  _exit(rc);
}

// A supervisor for `dir`, forked into a session of its own: its pid once ready, or a negative
// errno. It is this server's child (reaped by ReapSupervisors) until the server exits, and then
// init's, as an exec'd supervisor is from the start.
int32_t ForkSupervisor(const std::string& dir, const std::string& binary, const ArgArea& area,
                       const SuperviseOptions& options) {
  int fds[2];
  if (pipe2(fds, O_CLOEXEC) != 0) return -errno;
  const pid_t pid = fork();
  if (pid < 0) {
    const int err = errno;
    close(fds[0]);
    close(fds[1]);
    return -err;
  }
  if (pid == 0) {
    close(fds[0]);
    setsid();
    BecomeSupervisor(dir, binary, area, options, fds[1]);
  }
  close(fds[1]);
  int32_t answer = 0;
  ssize_t n;
  while ((n = read(fds[0], &answer, sizeof(answer))) < 0 && errno == EINTR) {
  }
  close(fds[0]);
  // No answer: it ended before it was ready (its log says why).
  return n == sizeof(answer) ? answer : -EIO;
}

// Reaps the supervisors that have ended.
void ReapSupervisors(int signal_fd) {
  signalfd_siginfo info;
  while (read(signal_fd, &info, sizeof(info)) == static_cast<ssize_t>(sizeof(info))) {
  }
  int status = 0;
  while (waitpid(-1, &status, WNOHANG) > 0) {
  }
}

}  // namespace

int SuperviseServerMain(int argc, char** argv) {
  if (AskedForHelp(argc, argv)) {
    std::printf(
        "usage: berth supervise-server FD ROOM\n\n"
        "Internal: the agent's supervisor server. Forks `berth supervise DIR` for each job\n"
        "folder the agent sends on the socket FD; ROOM is blank space for that command line.\n"
        "Exits when the agent closes the socket (docs/execution.md).\n");
    return 0;
  }
  int fd = -1;
  if (argc == 3) std::from_chars(argv[1], argv[1] + std::strlen(argv[1]), fd);
  if (fd < 0) {
    std::fprintf(stderr, "usage: berth supervise-server FD ROOM  (started by the agent)\n");
    return 1;
  }
  Result<ArgArea> area = OwnArgArea();
  if (!area.ok()) {
    std::fprintf(stderr, "berth supervise-server: %s\n", area.status().ToString().c_str());
    return 1;
  }
  const std::string binary = area->start;  // the first argument, as the agent gave it
  unsetenv("LD_BIND_NOW");                 // for the loader of this process only
  if (chdir("/") != 0) return 1;
  signal(SIGPIPE, SIG_IGN);
  SuperviseOptions options = SuperviseOptions::FromEnvironment();
  if (options.use_cgroups && geteuid() == 0) {
    if (Result<CgroupLayout> layout = DetectCgroupLayout(); layout.ok()) {
      options.layout = std::make_shared<const CgroupLayout>(std::move(*layout));
    }
  }
  LoadUserLookups();
  // The supervisors are this server's children: their ends come on a signalfd.
  sigset_t child;
  sigemptyset(&child);
  sigaddset(&child, SIGCHLD);
  sigprocmask(SIG_BLOCK, &child, nullptr);
  const int signal_fd = signalfd(-1, &child, SFD_CLOEXEC | SFD_NONBLOCK);
  if (signal_fd < 0) {
    std::fprintf(stderr, "berth supervise-server: signalfd: %s\n", ErrnoText(errno).c_str());
    return 1;
  }
  char buf[PATH_MAX + 1];
  for (;;) {
    pollfd polled[2] = {{fd, POLLIN, 0}, {signal_fd, POLLIN, 0}};
    if (poll(polled, 2, -1) < 0 && errno != EINTR) return 1;
    if (polled[1].revents != 0) ReapSupervisors(signal_fd);
    if (polled[0].revents == 0) continue;
    const ssize_t n = recv(fd, buf, sizeof(buf), MSG_DONTWAIT);
    if (n < 0 && (errno == EINTR || errno == EAGAIN)) continue;
    if (n <= 0) return 0;  // the agent has gone
    const std::string dir(buf, static_cast<size_t>(n));
    const bool fits = static_cast<size_t>(n) < sizeof(buf) &&
                      NeededRoom({binary, "supervise", dir}) <= area->size;
    const int32_t answer = fits ? ForkSupervisor(dir, binary, *area, options) : -ERANGE;
    if (send(fd, &answer, sizeof(answer), MSG_NOSIGNAL) < 0) return 0;
  }
}

}  // namespace berth::agent
