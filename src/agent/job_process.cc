#include "agent/job_process.h"

#include <fcntl.h>
#include <linux/sched.h>
#include <sched.h>
#include <signal.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>

#include "agent/file_util.h"

#if defined(__has_feature)
#define BERTH_HAS_FEATURE(x) __has_feature(x)
#else
#define BERTH_HAS_FEATURE(x) 0
#endif

// The job's child shares the supervisor's memory (below) on x86-64, outside the sanitizers' builds
// (the child's instrumented frames on a stack they do not know).
#if defined(__x86_64__) && !defined(__SANITIZE_ADDRESS__) && !BERTH_HAS_FEATURE(address_sanitizer)
#define BERTH_SHARED_SPAWN 1
#endif

#ifdef BERTH_SHARED_SPAWN
// clone3(args, size) that runs fn(arg) in the child, on the stack the args name, and never
// returns there. A child that shares its parent's memory (CLONE_VM) cannot return from the
// system call into the caller's frames as a forked one can: they are the parent's too.
extern "C" long berth_clone3_run(clone_args* args, size_t size, void (*fn)(void*), void* arg);
asm(R"(
    .text
    .globl berth_clone3_run
    .hidden berth_clone3_run
    .type berth_clone3_run, @function
berth_clone3_run:
    movq %rdx, %r8
    movq %rcx, %r9
    movl $435, %eax
    syscall
    testq %rax, %rax
    jnz 1f
    xorl %ebp, %ebp
    movq %r9, %rdi
    callq *%r8
    movl $60, %eax
    movl $127, %edi
    syscall
    hlt
1:
    ret
    .size berth_clone3_run, .-berth_clone3_run
)");
#endif  // BERTH_SHARED_SPAWN

namespace berth::agent {

namespace {

// Everything the child needs, as plain arrays, built before fork.
struct ChildPlan {
  const JobExec* exec;
  std::vector<char*> argv;
  std::vector<char*> env;
  cpu_set_t* cpus = nullptr;
  size_t cpus_size = 0;
  int report_fd = -1;
  bool cloned_into_cgroup = false;  // the v2 group was joined by clone3 already
};

void Report(int fd, JobStartStage stage, int err) {
  JobStartProblem p{stage, err};
  ssize_t n;
  do {
    n = write(fd, &p, sizeof(p));
  } while (n < 0 && errno == EINTR);
}

// write(2) of a NUL-terminated string; for messages on the job's stderr.
void Put(int fd, const char* s) {
  ssize_t n = write(fd, s, strlen(s));
  (void)n;
}

[[noreturn]] void Fail(const ChildPlan& plan, JobStartStage stage, int err) {
  Report(plan.report_fd, stage, err);
  _exit(stage == JobStartStage::kExec ? (err == EACCES ? 126 : 127) : 1);
}

int OpenOutput(const std::string& path, bool append) {
  int flags = O_WRONLY | O_CREAT | O_CLOEXEC | (append ? O_APPEND : O_TRUNC);
  return open(path.c_str(), flags, 0644);
}

// Moves fd to `target` (0, 1 or 2), without close-on-exec.
void Install(int fd, int target) {
  if (fd != target) {
    dup2(fd, target);
  } else {
    fcntl(fd, F_SETFD, 0);
  }
}

void SetUpIdentity(const ChildPlan& plan) {
  const JobExec& e = *plan.exec;
  for (size_t i = 0; i < e.join_fds.size(); ++i) {
    if (plan.cloned_into_cgroup && static_cast<int>(i) == e.cgroup_dir_join_index) continue;
    if (write(e.join_fds[i], "0", 1) != 1) Fail(plan, JobStartStage::kCgroup, errno);
  }
  if (e.reset_oom_score) {
    int fd = open("/proc/self/oom_score_adj", O_WRONLY | O_CLOEXEC);
    if (fd < 0 || write(fd, "0", 1) != 1) Report(plan.report_fd, JobStartStage::kOomScore, errno);
    if (fd >= 0) close(fd);
  }
  if (plan.cpus != nullptr && sched_setaffinity(0, plan.cpus_size, plan.cpus) != 0) {
    Report(plan.report_fd, JobStartStage::kAffinity, errno);
  }
  if (e.rlimit_data_bytes > 0) {
    rlimit limit{static_cast<rlim_t>(e.rlimit_data_bytes),
                 static_cast<rlim_t>(e.rlimit_data_bytes)};
    rlimit old{};
    if (getrlimit(RLIMIT_DATA, &old) == 0 && old.rlim_max < limit.rlim_max) {
      limit.rlim_cur = limit.rlim_max = old.rlim_max;
    }
    if (setrlimit(RLIMIT_DATA, &limit) != 0) Report(plan.report_fd, JobStartStage::kRlimit, errno);
  }
  if (!e.switch_user && e.files_as_user) {
    if (syscall(SYS_setgroups, e.groups.size(), e.groups.data()) != 0) {
      Fail(plan, JobStartStage::kUser, errno);
    }
    syscall(SYS_setfsgid, e.gid);
    syscall(SYS_setfsuid, e.uid);
    if (static_cast<uid_t>(syscall(SYS_setfsuid, static_cast<uid_t>(-1))) != e.uid) {
      Fail(plan, JobStartStage::kUser, EPERM);
    }
  }
  if (e.switch_user) {
    if (syscall(SYS_setgroups, e.groups.size(), e.groups.data()) != 0) {
      Fail(plan, JobStartStage::kUser, errno);
    }
    if (syscall(SYS_setgid, e.gid) != 0) Fail(plan, JobStartStage::kUser, errno);
    if (syscall(SYS_setuid, e.uid) != 0) Fail(plan, JobStartStage::kUser, errno);
    // A uid change that could be undone would leave the job with root's powers.
    if (e.uid != 0 && syscall(SYS_setuid, 0) == 0) Fail(plan, JobStartStage::kUser, EPERM);
  }
}

void SetUpFiles(const ChildPlan& plan) {
  const JobExec& e = *plan.exec;
  umask(022);
  if (e.terminal_fd >= 0) {
    for (int target : {0, 1, 2}) dup2(e.terminal_fd, target);
    if (e.terminal_fd > 2) close(e.terminal_fd);
    // The session (setsid before) gets it as its controlling terminal: ^C is its SIGINT.
    if (ioctl(0, TIOCSCTTY, 0) != 0) Fail(plan, JobStartStage::kStdin, errno);
  }
  int in = e.terminal_fd >= 0 ? 0
           : e.stdin_fd >= 0  ? e.stdin_fd
                              : open(e.stdin_path.c_str(), O_RDONLY | O_CLOEXEC);
  if (in < 0) Fail(plan, JobStartStage::kStdin, errno);
  int out = e.terminal_fd >= 0 ? 1 : OpenOutput(e.stdout_path, e.append);
  if (out < 0) Fail(plan, JobStartStage::kStdout, errno);
  int err = out;
  if (e.terminal_fd >= 0) {
    err = 2;
  } else if (!e.stderr_path.empty() && e.stderr_path != e.stdout_path) {
    err = OpenOutput(e.stderr_path, e.append);
    if (err < 0) Fail(plan, JobStartStage::kStderr, errno);
  }
  Install(in, 0);
  Install(out, 1);
  Install(err, 2);
  for (int fd : {in, out, err}) {
    if (fd > 2) close(fd);
  }
  if (chdir(e.work_dir.c_str()) != 0) {
    int chdir_err = errno;
    // Slurm's rule: warn on the job's stderr and run in /tmp.
    Put(2, "berth: error: couldn't chdir to `");
    Put(2, e.work_dir.c_str());
    Put(2, "': ");
    Put(2, strerrordesc_np(chdir_err));
    Put(2, ": going to /tmp instead\n");
    Report(plan.report_fd, JobStartStage::kChdir, chdir_err);
    if (chdir("/tmp") != 0) Fail(plan, JobStartStage::kChdir, errno);
  }
}

[[noreturn]] void RunChild(const ChildPlan& plan) {
  ResetSignals();
  setsid();
  SetUpIdentity(plan);
  SetUpFiles(plan);
  if (!plan.exec->switch_user && plan.exec->files_as_user) {
    syscall(SYS_setfsuid, 0);
    syscall(SYS_setfsgid, 0);
    if (syscall(SYS_setgroups, 0, nullptr) != 0) Fail(plan, JobStartStage::kUser, errno);
  }
  int exec_err = ENOENT;
  for (const std::string& path : plan.exec->exec_paths) {
    execve(path.c_str(), plan.argv.data(), plan.env.data());
    // Like execvp: a path that exists but cannot be run is the better error to report.
    if (errno != ENOENT && errno != ENOTDIR) exec_err = errno;
  }
  Put(2, "berth: error: execve(): ");
  Put(2, plan.exec->argv.empty() ? "" : plan.exec->argv[0].c_str());
  Put(2, ": ");
  Put(2, strerrordesc_np(exec_err));
  Put(2, "\n");
  Fail(plan, JobStartStage::kExec, exec_err);
}

#ifdef BERTH_SHARED_SPAWN
void RunSharedChild(void* plan) {
  RunChild(*static_cast<const ChildPlan*>(plan));
}

// The stack of a child that shares this process's memory: 64 KiB above a guard page (an overflow
// faults instead of writing below it), unmapped once the child has exec'd or exited.
class ChildStack {
 public:
  static constexpr size_t kGuard = 4096;
  static constexpr size_t kSize = 64 * 1024;
  ChildStack()
      : map_(mmap(nullptr, kGuard + kSize, PROT_READ | PROT_WRITE,
                  MAP_PRIVATE | MAP_ANONYMOUS | MAP_STACK | MAP_NORESERVE, -1, 0)) {
    if (map_ != MAP_FAILED) mprotect(map_, kGuard, PROT_NONE);
  }
  ~ChildStack() {
    if (map_ != MAP_FAILED) munmap(map_, kGuard + kSize);
  }
  ChildStack(const ChildStack&) = delete;
  ChildStack& operator=(const ChildStack&) = delete;
  // The lowest address of the usable stack, or 0 without one.
  uint64_t base() const {
    return map_ == MAP_FAILED ? 0 : reinterpret_cast<uint64_t>(map_) + kGuard;
  }

 private:
  void* map_;
};
#endif

// One clone3 of the job's child, into the v2 group (CLONE_INTO_CGROUP: it starts inside it,
// without the cgroup.procs write whose global lock waits an RCU grace period) or not. With a
// stack (x86-64), the child is made as posix_spawn makes one: it shares this process's memory on
// that stack (CLONE_VM) and this process waits until it has exec'd or exited (CLONE_VFORK), so
// no page table is copied and neither side takes copy-on-write faults afterwards (on a virtual
// machine each fault is a trap of ~15 us, and a fork of the supervisor cost ~36 of them).
// Without, it is a copy that runs RunChild from the system call's return: safe because the
// caller is single-threaded and the child makes only system calls before exec. The pid, or
// -errno (kernels before 5.3, or 5.7 for the group).
long CloneJob(ChildPlan& plan, bool into_cgroup, uint64_t stack_base) {
  clone_args args{};
  args.exit_signal = SIGCHLD;
  if (into_cgroup) {
    args.flags |= CLONE_INTO_CGROUP;
    args.cgroup = static_cast<uint64_t>(plan.exec->cgroup_dir_fd);
  }
  plan.cloned_into_cgroup = into_cgroup;  // for the child, which skips that group's write
#ifdef BERTH_SHARED_SPAWN
  if (stack_base != 0) {
    args.flags |= CLONE_VM | CLONE_VFORK;
    args.stack = stack_base;
    args.stack_size = ChildStack::kSize;
    return berth_clone3_run(&args, sizeof(args), RunSharedChild, &plan);
  }
#endif
  (void)stack_base;
  const long pid = syscall(SYS_clone3, &args, sizeof(args));
  if (pid == 0) RunChild(plan);
  return pid < 0 ? -errno : pid;
}

// The job's child: cloned into its v2 group where there is one, else without (the child's write
// to cgroup.procs then joins it), else forked.
pid_t ForkJob(ChildPlan& plan) {
#ifdef BERTH_SHARED_SPAWN
  const ChildStack stack;
  const uint64_t stack_base = stack.base();
#else
  const uint64_t stack_base = 0;
#endif
  long pid = -1;
  if (plan.exec->cgroup_dir_fd >= 0) pid = CloneJob(plan, true, stack_base);
  if (pid < 0) pid = CloneJob(plan, false, stack_base);
  if (pid >= 0) return static_cast<pid_t>(pid);
  plan.cloned_into_cgroup = false;
  const pid_t forked = fork();
  if (forked == 0) RunChild(plan);
  return forked;
}

std::vector<char*> CArray(const std::vector<std::string>& strings) {
  std::vector<char*> out;
  for (const std::string& s : strings) out.push_back(const_cast<char*>(s.c_str()));
  out.push_back(nullptr);
  return out;
}

}  // namespace

void ResetSignals() {
  // The dispositions first: a signal unblocked before its handler is gone would run it here.
  for (int sig = 1; sig < NSIG; ++sig) signal(sig, SIG_DFL);
  sigset_t none;
  sigemptyset(&none);
  sigprocmask(SIG_SETMASK, &none, nullptr);
}

int RedirectStdio(const char* log_path) {
  const int null = open("/dev/null", O_RDONLY | O_CLOEXEC);
  if (null < 0) return errno;
  const int log =
      log_path != nullptr ? open(log_path, O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC, 0600) : -1;
  if (log_path != nullptr && log < 0) {
    const int err = errno;
    close(null);
    return err;
  }
  dup2(null, 0);
  if (log >= 0) {
    dup2(log, 1);
    dup2(log, 2);
  }
  for (int fd : {null, log}) {
    if (fd > 2) close(fd);
  }
  for (int fd = 0; fd < 3; ++fd) fcntl(fd, F_SETFD, 0);  // were they opened there
  return 0;
}

Result<JobStart> StartJobProcess(const JobExec& exec) {
  ChildPlan plan;
  plan.exec = &exec;
  plan.argv = CArray(exec.argv);
  plan.env = CArray(exec.env);
  int max_cpu = 0;
  for (int32_t c : exec.cpu_affinity) max_cpu = std::max(max_cpu, c + 1);
  if (!exec.cpu_affinity.empty()) {
    plan.cpus = CPU_ALLOC(max_cpu);
    plan.cpus_size = CPU_ALLOC_SIZE(max_cpu);
    CPU_ZERO_S(plan.cpus_size, plan.cpus);
    for (int32_t c : exec.cpu_affinity) CPU_SET_S(c, plan.cpus_size, plan.cpus);
  }
  int pipe_fds[2];
  if (pipe2(pipe_fds, O_CLOEXEC) != 0) return ErrnoStatus("pipe2", errno);
  plan.report_fd = pipe_fds[1];
  // Every signal blocked until the child has reset its handlers: one that came before would run
  // the supervisor's handler in the child, on the supervisor's memory.
  sigset_t all;
  sigset_t old_mask;
  sigfillset(&all);
  sigprocmask(SIG_SETMASK, &all, &old_mask);
  pid_t pid = ForkJob(plan);
  int fork_err = errno;
  sigprocmask(SIG_SETMASK, &old_mask, nullptr);
  close(pipe_fds[1]);
  if (plan.cpus != nullptr) CPU_FREE(plan.cpus);
  if (pid < 0) {
    close(pipe_fds[0]);
    return ErrnoStatus("fork", fork_err);
  }
  JobStart start;
  start.pid = pid;
  JobStartProblem p;
  while (true) {
    ssize_t n = read(pipe_fds[0], &p, sizeof(p));
    if (n < 0 && errno == EINTR) continue;
    if (n != static_cast<ssize_t>(sizeof(p))) break;  // EOF: exec'd, or exited after a report
    bool fatal = p.stage == JobStartStage::kCgroup || p.stage == JobStartStage::kUser ||
                 p.stage == JobStartStage::kStdin || p.stage == JobStartStage::kStdout ||
                 p.stage == JobStartStage::kStderr || p.stage == JobStartStage::kExec;
    // A second chdir report: /tmp failed too.
    for (const JobStartProblem& w : start.warnings) {
      fatal = fatal || (p.stage == JobStartStage::kChdir && w.stage == JobStartStage::kChdir);
    }
    if (fatal) {
      start.failure = p;
    } else {
      start.warnings.push_back(p);
    }
  }
  close(pipe_fds[0]);
  if (start.failure) {
    while (waitpid(pid, &start.exit_status, 0) < 0 && errno == EINTR) {
    }
  }
  return start;
}

std::string DescribeProblem(const JobStartProblem& problem, const JobExec& exec) {
  std::string why = ErrnoText(problem.err);
  switch (problem.stage) {
    case JobStartStage::kCgroup:
      return "could not join the job's cgroup: " + why;
    case JobStartStage::kOomScore:
      return "could not reset oom_score_adj: " + why;
    case JobStartStage::kAffinity:
      return "could not set the CPU affinity: " + why;
    case JobStartStage::kRlimit:
      return "could not set RLIMIT_DATA: " + why;
    case JobStartStage::kUser:
      return "could not become uid " + std::to_string(exec.uid) + " gid " +
             std::to_string(exec.gid) + ": " + why;
    case JobStartStage::kStdin:
      return "could not open stdin file " + exec.stdin_path + ": " + why;
    case JobStartStage::kStdout:
      return "could not open stdout file " + exec.stdout_path + ": " + why;
    case JobStartStage::kStderr:
      return "could not open stderr file " + exec.stderr_path + ": " + why;
    case JobStartStage::kChdir:
      return "couldn't chdir to `" + exec.work_dir + "': " + why + ": went to /tmp instead";
    case JobStartStage::kExec:
      return "execve(" + (exec.argv.empty() ? std::string() : exec.argv[0]) + "): " + why;
  }
  return why;
}

}  // namespace berth::agent
