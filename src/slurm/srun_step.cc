// The local part of a job step: fork/exec of the tasks, their output, signals, and the wait.
// One loop on a signalfd (SIGCHLD and the forwarded signals) and, with -l, the tasks' pipes.
#include "slurm/srun_step.h"

#include <dirent.h>
#include <fcntl.h>
#include <poll.h>
#include <sys/file.h>
#include <sys/resource.h>
#include <sys/signalfd.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <csignal>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <ctime>
#include <string>
#include <vector>

#include "slurm/srun_stdio.h"

extern char** environ;

namespace berth::slurm {
namespace {

// The signals srun passes on to its tasks (Slurm's srun forwards these too).
constexpr int kForwarded[] = {SIGHUP, SIGINT, SIGQUIT, SIGTERM, SIGUSR1, SIGUSR2, SIGCONT};
// How long srun waits, once every task has ended, for output still held open by their children
// before it stops them: a step ends with its tasks, as in Slurm.
constexpr int kDrainMillis = 1000;

// A task's output stream as srun sees it with -l: a pipe, the part line not yet printed, and
// where lines go.
struct LabelledStream {
  int read_fd = -1;
  int dest_fd = -1;
  std::string partial;
  bool raw = false;  // a terminal's output: passed on as it comes, not by lines
};

struct Task {
  int32_t global_id = 0;
  int32_t local_id = 0;
  pid_t pid = -1;
  bool ended = false;
  int wait_status = 0;
  rusage usage{};                            // the kernel's count once it was waited for
  std::vector<std::string> env;              // NAME=value
  int out_fd = -1, err_fd = -1, in_fd = -1;  // what the child gets as 0/1/2 (-1: srun's own)
  bool input_from_srun = false;  // in_fd is a pipe's read end that srun's input is copied to
  int input_sink = -1;           // that pipe's write end, for the fanout
  int pty_slave = -1;            // --pty's task 0: its terminal (0, 1 and 2 at once)
  LabelledStream out, err;
};

void WriteAll(int fd, const std::string& text) {
  size_t done = 0;
  while (done < text.size()) {
    ssize_t n = write(fd, text.data() + done, text.size() - done);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) return;
    done += static_cast<size_t>(n);
  }
}

// Emits complete lines of `s` with the label; at EOF (`flush`) the rest too.
void EmitLines(LabelledStream& s, const std::string& label, bool flush) {
  if (s.raw) {
    WriteAll(s.dest_fd, s.partial);
    s.partial.clear();
    return;
  }
  size_t start = 0;
  std::string chunk;
  for (size_t nl; (nl = s.partial.find('\n', start)) != std::string::npos; start = nl + 1) {
    chunk += label + s.partial.substr(start, nl - start + 1);
  }
  s.partial.erase(0, start);
  if (flush && !s.partial.empty()) {
    chunk += label + s.partial;
    s.partial.clear();
  }
  if (!chunk.empty()) WriteAll(s.dest_fd, chunk);
}

// Reads what is there; false at EOF or error.
bool ReadSome(LabelledStream& s) {
  char buf[65536];
  ssize_t n = read(s.read_fd, buf, sizeof(buf));
  if (n < 0 && (errno == EINTR || errno == EAGAIN)) return true;
  if (n <= 0) return false;
  s.partial.append(buf, static_cast<size_t>(n));
  return true;
}

// Opens an output or input file for -o/-e/-i. Files shared by all tasks are truncated once and
// then appended to by each.
int OpenFile(const std::string& path, bool input, bool truncate) {
  if (input) return open(path.c_str(), O_RDONLY | O_CLOEXEC);
  int flags = O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC | (truncate ? O_TRUNC : 0);
  return open(path.c_str(), flags, 0644);
}

PatternContext ContextOf(const LocalStep& s, int32_t task_id) {
  PatternContext c;
  c.job_id = s.alloc.job_id;
  c.step_id = s.step_id;
  c.task_id = task_id;
  c.node_id = static_cast<int32_t>(s.local_node);
  c.node_name = s.layout.nodes[s.local_node];
  c.user = s.alloc.user;
  c.job_name = s.alloc.job_name;
  c.array_job_id = s.alloc.array_job_id;
  c.array_task_id = s.alloc.array_task_id;
  return c;
}

// Where each task's standard input comes from (-i, --pty). Returns an error line, or "".
std::string OpenTaskInputs(const LocalStep& s, std::vector<Task>& tasks) {
  const InputMode in = ParseInputMode(s.options.input, s.layout.ntasks);
  int null_fd = -1;
  auto dev_null = [&]() {
    if (null_fd < 0) null_fd = open("/dev/null", O_RDONLY | O_CLOEXEC);
    return null_fd;
  };
  for (Task& t : tasks) {
    if (s.options.pty) {
      // Task 0's terminal is its input; the others read nothing (Slurm: --input=0).
      if (t.global_id != 0) t.in_fd = dev_null();
      continue;
    }
    switch (in.kind) {
      case InputMode::Kind::kAll:
        t.input_from_srun = true;
        break;
      case InputMode::Kind::kNone:
        t.in_fd = dev_null();
        break;
      case InputMode::Kind::kTask:
        if (t.global_id == in.task) {
          t.input_from_srun = true;
        } else {
          t.in_fd = dev_null();
        }
        break;
      case InputMode::Kind::kFile:
        // Each task its own descriptor: every task reads the whole file, as Slurm broadcasts it.
        t.in_fd = OpenFile(ExpandSrunPattern(in.pattern, ContextOf(s, t.global_id)), true, false);
        if (t.in_fd < 0) {
          return std::string("srun: error: Could not open stdin file: ") + std::strerror(errno);
        }
        break;
    }
    if (t.in_fd < 0 && !t.input_from_srun) {
      return std::string("srun: error: Could not open stdin file: ") + std::strerror(errno);
    }
  }
  return "";
}

// Pipes for the tasks that read srun's input, and --pty's terminal for task 0.
std::string MakeInputPipes(const LocalStep& s, const std::optional<winsize>& window,
                           std::vector<Task>& tasks, Pty* pty) {
  for (Task& t : tasks) {
    if (s.options.pty && t.global_id == 0) {
      Result<Pty> p = OpenPty(window);
      if (!p.ok()) return "srun: error: " + p.status().message();
      *pty = *p;
      t.pty_slave = p->slave;
      t.out.read_fd = p->master;
      t.out.dest_fd = STDOUT_FILENO;
      t.out.raw = true;
      continue;
    }
    if (!t.input_from_srun) continue;
    int fds[2];
    if (pipe2(fds, O_CLOEXEC) != 0) {
      return std::string("srun: error: pipe: ") + std::strerror(errno);
    }
    t.in_fd = fds[0];
    t.input_sink = fds[1];
  }
  return "";
}

// Resolves -o/-e into the tasks' file descriptors. Returns an error line, or "".
std::string OpenTaskFiles(const LocalStep& s, std::vector<Task>& tasks) {
  const SrunOptions& o = s.options;
  std::vector<std::pair<std::string, int>> opened;  // shared files: path -> fd
  auto fd_for = [&](const std::string& pattern, int32_t task_id, bool input) -> int {
    std::string path = ExpandSrunPattern(pattern, ContextOf(s, task_id));
    if (!PatternPerTask(pattern)) {
      for (const auto& [p, fd] : opened) {
        if (p == path) return fd;
      }
    }
    int fd = OpenFile(path, input, !s.part_of_remote_step);
    if (fd >= 0 && !PatternPerTask(pattern)) opened.emplace_back(path, fd);
    return fd;
  };
  for (Task& t : tasks) {
    if (o.pty && t.global_id != 0) {
      // --pty: the other tasks' output goes nowhere, as Slurm's --pty sets -o/-e to task 0.
      t.out_fd = t.err_fd = fd_for("/dev/null", t.global_id, false);
      continue;
    }
    if (!o.output.empty()) t.out_fd = fd_for(o.output, t.global_id, false);
    if (!o.error.empty()) {
      t.err_fd = fd_for(o.error, t.global_id, false);
    } else if (!o.output.empty()) {
      t.err_fd = t.out_fd;  // -o without -e: both streams to the same file, as srun does
    }
    if ((!o.output.empty() && t.out_fd < 0) || (!o.error.empty() && t.err_fd < 0)) {
      return std::string("srun: error: cannot open the task's files: ") + std::strerror(errno);
    }
  }
  return OpenTaskInputs(s, tasks);
}

// With -l each stream goes through a pipe; its lines go to the task's file or srun's own.
bool MakeLabelPipes(Task& t) {
  int out[2], err[2];
  if (pipe2(out, O_CLOEXEC) != 0) return false;
  if (pipe2(err, O_CLOEXEC) != 0) {
    close(out[0]);
    close(out[1]);
    return false;
  }
  t.out.read_fd = out[0];
  t.out.dest_fd = t.out_fd >= 0 ? t.out_fd : STDOUT_FILENO;
  t.err.read_fd = err[0];
  t.err.dest_fd = t.err_fd >= 0 ? t.err_fd : STDERR_FILENO;
  t.out_fd = out[1];
  t.err_fd = err[1];
  return true;
}

[[noreturn]] void ExecTask(const LocalStep& s, Task& t, const sigset_t& old_mask) {
  sigprocmask(SIG_SETMASK, &old_mask, nullptr);
  for (int sig : kForwarded) signal(sig, SIG_DFL);
  signal(SIGPIPE, SIG_DFL);  // srun ignores it while it copies input; the task must not
  if (t.pty_slave >= 0) {
    // --pty: a session of its own on the pseudo-terminal, so that ^C and ^Z typed there reach
    // its foreground process group as signals, as on a terminal.
    if (!BecomeTerminalSession(t.pty_slave)) {
      std::fprintf(stderr, "slurmstepd: error: pseudo-terminal: %s\n", std::strerror(errno));
      _exit(1);
    }
  } else {
    setpgid(0, 0);  // its own group: srun alone passes signals on, as from a remote node
  }
  if (t.in_fd >= 0) dup2(t.in_fd, STDIN_FILENO);
  if (t.out_fd >= 0) dup2(t.out_fd, STDOUT_FILENO);
  if (t.err_fd >= 0) dup2(t.err_fd, STDERR_FILENO);
  const std::string& dir = s.options.chdir;
  if (!dir.empty() && chdir(dir.c_str()) != 0) {
    std::fprintf(stderr, "slurmstepd: error: couldn't chdir to `%s': %s: going to /tmp instead\n",
                 dir.c_str(), std::strerror(errno));
    if (chdir("/tmp") != 0) _exit(1);
  }
  t.env.push_back("SLURM_TASK_PID=" + std::to_string(getpid()));
  std::vector<char*> envp;
  for (std::string& e : t.env) envp.push_back(e.data());
  envp.push_back(nullptr);
  std::vector<std::string> args = s.options.command;
  std::vector<char*> argv;
  for (std::string& a : args) argv.push_back(a.data());
  argv.push_back(nullptr);
  environ = envp.data();  // execvp searches the task's own PATH
  execvp(argv[0], argv.data());
  const int err = errno;
  std::fprintf(stderr, "slurmstepd: error: execve(): %s: %s\n", argv[0], std::strerror(err));
  _exit(err);  // as slurmstepd: the task's exit code is the errno (2 for a missing program)
}

// Set once srun passed on a signal that ends a step (step_usage.h): the step's state then.
// One step per srun process.
bool ending_signal_passed = false;

// To each task's own process, not its children: as slurmstepd signals a step (Slurm's
// proctrack sends signals other than KILL to the tasks alone), so that a task's handler runs
// and what it started goes on.
void ForwardSignal(const LocalStep& s, std::vector<Task>& tasks, int sig) {
  if (EndsStep(sig)) ending_signal_passed = true;
  for (const Task& t : tasks) {
    if (!t.ended && t.pid > 0) kill(t.pid, sig);
  }
  if (s.remote != nullptr) s.remote->Signal(sig);
}

// After this node's tasks: the other nodes' parts, with signals still passed on to them.
std::vector<TaskEnd> WaitForRemote(const LocalStep& s, int sigfd) {
  constexpr int kPollMillis = 200;
  while (true) {
    if (std::optional<std::vector<TaskEnd>> ends = s.remote->Ended()) return *ends;
    pollfd p = {sigfd, POLLIN, 0};
    if (poll(&p, 1, kPollMillis) > 0 && (p.revents & POLLIN)) {
      signalfd_siginfo info;
      while (read(sigfd, &info, sizeof(info)) == sizeof(info)) {
        if (info.ssi_signo == SIGCHLD || info.ssi_signo == SIGWINCH) continue;
        if (EndsStep(static_cast<int>(info.ssi_signo))) ending_signal_passed = true;
        s.remote->Signal(static_cast<int>(info.ssi_signo));
      }
    }
  }
}

void Reap(std::vector<Task>& tasks) {
  int status = 0;
  rusage usage{};
  pid_t pid;
  while ((pid = wait4(-1, &status, WNOHANG, &usage)) > 0) {
    for (Task& t : tasks) {
      if (t.pid == pid) {
        t.ended = true;
        t.wait_status = status;
        t.usage = usage;
      }
    }
  }
}

bool AllEnded(const std::vector<Task>& tasks) {
  for (const Task& t : tasks) {
    if (!t.ended) return false;
  }
  return true;
}

// The caller's window size, passed on to --pty's terminal (SIGWINCH).
void RelayWindowSize(const LocalStep& s, int pty_master) {
  if (pty_master < 0) return;
  std::optional<winsize> size;
  if (s.window_now) {
    size = s.window_now();
  } else {
    size = TerminalSize(s.input_fd);
    if (!size) size = TerminalSize(STDOUT_FILENO);
  }
  if (size) (void)SetTerminalSize(pty_master, *size);
}

// Waits for the tasks (and, with -l or --pty, their output), copying srun's input to them and
// passing signals on.
void WaitForTasks(const LocalStep& s, std::vector<Task>& tasks, int sigfd, InputFanout* fanout,
                  int pty_master) {
  int64_t drain_left = kDrainMillis;
  while (true) {
    std::vector<pollfd> fds = {{sigfd, POLLIN, 0}};
    std::vector<LabelledStream*> streams;
    for (Task& t : tasks) {
      for (LabelledStream* st : {&t.out, &t.err}) {
        if (st->read_fd < 0) continue;
        fds.push_back({st->read_fd, POLLIN, 0});
        streams.push_back(st);
      }
    }
    const size_t first_input = fds.size();
    if (fanout != nullptr && !AllEnded(tasks)) fanout->Prepare(fds);
    const bool ended = AllEnded(tasks);
    if (ended && streams.empty()) return;
    if (ended && drain_left <= 0) {
      for (Task& t : tasks) kill(-t.pid, SIGKILL);  // what is left of the step
      for (LabelledStream* st : streams) {
        close(st->read_fd);
        st->read_fd = -1;
      }
      return;
    }
    const int timeout = ended ? 100 : -1;
    if (poll(fds.data(), fds.size(), timeout) < 0 && errno != EINTR) return;
    if (ended) drain_left -= 100;
    if (fanout != nullptr && fds.size() > first_input) fanout->Handle(fds);
    if (fds[0].revents & POLLIN) {
      signalfd_siginfo info;
      while (read(sigfd, &info, sizeof(info)) == sizeof(info)) {
        if (info.ssi_signo == SIGCHLD) {
          Reap(tasks);
        } else if (info.ssi_signo == SIGWINCH) {
          RelayWindowSize(s, pty_master);
        } else {
          ForwardSignal(s, tasks, static_cast<int>(info.ssi_signo));
        }
      }
    }
    for (size_t i = 1; i < first_input; ++i) {
      if (!(fds[i].revents & (POLLIN | POLLHUP | POLLERR))) continue;
      LabelledStream& st = *streams[i - 1];
      const Task* owner = nullptr;
      for (const Task& t : tasks) {
        if (&t.out == &st || &t.err == &st) owner = &t;
      }
      std::string label = TaskLabel(owner->global_id, s.layout.ntasks);
      bool open_still = ReadSome(st);
      EmitLines(st, label, !open_still);
      if (!open_still) {
        close(st.read_fd);
        st.read_fd = -1;
      }
    }
  }
}

}  // namespace

int RunLocalStep(const LocalStep& s) {
  if (!s.part_of_remote_step) {
    for (const std::string& w : s.layout.warnings) std::fprintf(stderr, "%s\n", w.c_str());
  }
  const bool here = s.local_node < s.layout.nodes.size();
  std::vector<int32_t> ids = here ? s.layout.TaskIds(s.local_node) : std::vector<int32_t>{};
  std::vector<Task> tasks(ids.size());
  std::optional<winsize> window = s.window;
  if (s.options.pty && !window) window = TerminalSize(s.input_fd);
  for (size_t i = 0; i < ids.size(); ++i) {
    Task& t = tasks[i];
    t.global_id = ids[i];
    t.local_id = static_cast<int32_t>(i);
    Result<std::vector<std::string>> gpus =
        TaskGpus(s.alloc, s.options, static_cast<int32_t>(ids.size()), t.local_id);
    if (!gpus.ok()) {
      std::fprintf(stderr, "%s\n", gpus.status().message().c_str());
      return 1;
    }
    TaskIdentity who{t.global_id, t.local_id, static_cast<int32_t>(s.local_node)};
    for (const auto& [n, v] : TaskEnvironment(s.base_env, s.layout, who, s.step_id, *gpus)) {
      t.env.push_back(n + "=" + v);
    }
    if (s.options.pty && window) {  // as Slurm's srun --pty sets them for the step
      t.env.push_back("SLURM_PTY_WIN_COL=" + std::to_string(window->ws_col));
      t.env.push_back("SLURM_PTY_WIN_ROW=" + std::to_string(window->ws_row));
    }
  }
  if (std::string e = OpenTaskFiles(s, tasks); !e.empty()) {
    std::fprintf(stderr, "%s\n", e.c_str());
    return 1;
  }
  if (s.options.label) {
    for (Task& t : tasks) {
      if (s.options.pty && t.global_id == 0) continue;  // a terminal has no lines to label
      if (!MakeLabelPipes(t)) {
        std::fprintf(stderr, "srun: error: pipe: %s\n", std::strerror(errno));
        return 1;
      }
    }
  }
  Pty pty;
  if (std::string e = MakeInputPipes(s, window, tasks, &pty); !e.empty()) {
    std::fprintf(stderr, "%s\n", e.c_str());
    return 1;
  }
  sigset_t mask, old_mask;
  sigemptyset(&mask);
  sigaddset(&mask, SIGCHLD);
  for (int sig : kForwarded) sigaddset(&mask, sig);
  if (s.options.pty) sigaddset(&mask, SIGWINCH);
  sigprocmask(SIG_BLOCK, &mask, &old_mask);
  int sigfd = signalfd(-1, &mask, SFD_CLOEXEC | SFD_NONBLOCK);
  if (s.remote != nullptr && !s.remote->Start()) {
    close(sigfd);
    sigprocmask(SIG_SETMASK, &old_mask, nullptr);
    return 1;
  }
  // A task that stops reading its input must not kill srun with SIGPIPE.
  struct sigaction ignore_pipe = {}, old_pipe = {};
  ignore_pipe.sa_handler = SIG_IGN;
  sigaction(SIGPIPE, &ignore_pipe, &old_pipe);
  // --pty: the caller's keys go to the task's terminal as they are typed (^C included), until
  // srun returns, whatever ends the step (the task, a signal srun passes on).
  std::optional<RawTerminal> raw;
  if (s.options.pty) raw.emplace(s.input_fd);
  std::fflush(nullptr);
  for (Task& t : tasks) {
    t.pid = fork();
    if (t.pid == 0) ExecTask(s, t, old_mask);
    // Also here: a signal may come before the child runs. Not for --pty's task: it makes a
    // session of its own, which a process group leader may not.
    if (t.pid > 0 && t.pty_slave < 0) setpgid(t.pid, t.pid);
    if (t.pid < 0) {
      std::fprintf(stderr, "srun: error: fork: %s\n", std::strerror(errno));
      t.ended = true;
      t.wait_status = 1 << 8;
    }
  }
  if (s.options.label) {
    for (Task& t : tasks) {
      if (t.out.read_fd < 0 || t.out.raw) continue;
      close(t.out_fd);  // the write ends now belong to the tasks
      close(t.err_fd);
    }
  }
  // The read ends of the input pipes and the terminal's slave now belong to the tasks: a task
  // that ends or closes its input makes srun's writes fail, and the master sees the end.
  std::optional<InputFanout> fanout;
  for (Task& t : tasks) {
    if (t.input_sink >= 0) {
      close(t.in_fd);
      if (!fanout) fanout.emplace(s.input_fd);
      fanout->AddSink(t.input_sink, InputFanout::AtEnd::kClose);
    }
    if (t.pty_slave >= 0) {
      close(t.pty_slave);
      if (!fanout) fanout.emplace(s.input_fd);
      fanout->AddSink(dup(pty.master), InputFanout::AtEnd::kEofChar);
    }
  }
  if (s.observer != nullptr) s.observer->Started();
  Reap(tasks);
  WaitForTasks(s, tasks, sigfd, fanout ? &*fanout : nullptr, pty.master);
  fanout.reset();
  if (pty.master >= 0) close(pty.master);
  if (raw) raw->Restore();
  sigaction(SIGPIPE, &old_pipe, nullptr);
  std::vector<TaskEnd> ends;
  for (const Task& t : tasks) ends.push_back({t.global_id, t.wait_status});
  if (here) {
    for (const std::string& line : TaskEndLines(s.layout.nodes[s.local_node], ends)) {
      std::fprintf(stderr, "%s\n", line.c_str());
    }
  }
  if (s.remote != nullptr) {
    std::fflush(stderr);
    for (const TaskEnd& e : WaitForRemote(s, sigfd)) ends.push_back(e);
  }
  close(sigfd);
  sigprocmask(SIG_SETMASK, &old_mask, nullptr);
  if (s.observer != nullptr) {
    auto seconds = [](const timeval& tv) {
      return static_cast<double>(tv.tv_sec) + static_cast<double>(tv.tv_usec) / 1e6;
    };
    std::vector<TaskUsage> local;
    for (const Task& t : tasks) {
      local.push_back({t.global_id, static_cast<int64_t>(t.usage.ru_maxrss),
                       seconds(t.usage.ru_utime), seconds(t.usage.ru_stime)});
    }
    s.observer->Ended(local, ends, ending_signal_passed);
  }
  return SrunExitCode(ends);
}

namespace {

// Counter files of this user not touched for this long belong to jobs that ended.
constexpr time_t kStaleCounterSeconds = 7 * 24 * 3600;

void RemoveStaleCounters(const std::string& dir, const std::string& prefix) {
  DIR* d = opendir(dir.c_str());
  if (d == nullptr) return;
  const time_t now = time(nullptr);
  while (dirent* e = readdir(d)) {
    if (std::strncmp(e->d_name, prefix.c_str(), prefix.size()) != 0) continue;
    std::string path = dir + "/" + e->d_name;
    struct stat st;
    if (lstat(path.c_str(), &st) == 0 && S_ISREG(st.st_mode) && st.st_uid == getuid() &&
        now - st.st_mtime > kStaleCounterSeconds) {
      unlink(path.c_str());
    }
  }
  closedir(d);
}

}  // namespace

uint32_t NextStepId(const Allocation& alloc) {
  const char* tmpdir = std::getenv("TMPDIR");
  const std::string dir = tmpdir != nullptr && tmpdir[0] == '/' ? tmpdir : "/tmp";
  const std::string prefix = ".berth-steps-" + std::to_string(getuid()) + "-";
  RemoveStaleCounters(dir, prefix);
  std::string start;
  for (char c : alloc.start_time) {
    if (c >= '0' && c <= '9') start += c;  // the name gets digits only
  }
  std::string path = dir + "/" + prefix + std::to_string(alloc.job_id) + "-" + start;
  int fd = open(path.c_str(), O_RDWR | O_CREAT | O_CLOEXEC | O_NOFOLLOW, 0600);
  if (fd < 0) return 0;
  uint32_t next = 0;
  if (flock(fd, LOCK_EX) == 0) {
    char buf[32] = {};
    ssize_t n = pread(fd, buf, sizeof(buf) - 1, 0);
    if (n > 0) next = static_cast<uint32_t>(std::strtoul(buf, nullptr, 10));
    std::string text = std::to_string(next + 1) + "\n";
    if (ftruncate(fd, 0) != 0 || pwrite(fd, text.data(), text.size(), 0) < 0) next = 0;
  }
  close(fd);
  return next;
}

}  // namespace berth::slurm
