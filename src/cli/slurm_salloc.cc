// salloc: an interactive allocation, as Slurm 22.05's salloc grants one. It submits a job with
// sbatch's options (src/slurm/sbatch_job.h) whose program is a holder on the allocation's first
// node (`berth salloc --berth-hold`, in the job's cgroup, holding its resources), waits for it,
// and runs the command (by default the user's shell) here, with the allocation's SLURM_*
// variables: srun in it runs its steps on the allocation's nodes through the controller
// (srun_relay.h), as srun in Slurm's salloc shell does. When the command ends, salloc tells the
// holder its exit status over their stream (the job then ends COMPLETED, or FAILED with that
// code, as Slurm's salloc completes its job) and exits with it. Ctrl-C while the job waits, or a
// SIGTERM/SIGHUP, gives the allocation up.
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <termios.h>
#include <unistd.h>

#include <cerrno>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <ctime>
#include <optional>
#include <string>
#include <thread>
#include <vector>

#include "api/job_json.h"
#include "cli/client.h"
#include "cli/commands.h"
#include "cli/signal_watch.h"
#include "cli/srun_relay.h"
#include "core/model/job_state.h"
#include "slurm/job_view.h"
#include "slurm/sbatch_job.h"
#include "slurm/srun.h"
#include "slurm/srun_stdio.h"

extern char** environ;

namespace berth::cli {
namespace {

using nlohmann::json;
using slurm::RelayFrame;

constexpr char kProg[] = "salloc";
constexpr char kHoldArg[] = "--berth-hold";
constexpr int kPollMillis = 200;
constexpr int kStatePollTicks = 10;       // the job's state every 2 s while the command runs
constexpr int kHolderWaitMillis = 60000;  // for the holder to say the nodes are ready
constexpr int kStreamWaitMillis = 15 * 60 * 1000;
constexpr int kRelinquishSeconds = 30;  // for the job to end once told

const char kUsage[] =
    "Usage: salloc [-N numnodes|[min nodes]-[max nodes]] [-n num-processors]\n"
    "              [[-c cpus-per-node] [-r n] [-p partition] [--hold] [-t minutes]\n"
    "              [--immediate[=secs]] [--no-kill] [--overcommit] [-D path]\n"
    "              [--oversubscribe] [-J jobname]\n"
    "              [--verbose] [--gid=group] [--uid=user] [--licenses=names]\n"
    "              [--account=name] [--dependency=type:jobid[+time]] [--comment=name]\n"
    "              [--mail-type=type] [--mail-user=user] [--nice[=value]]\n"
    "              [--bell] [--no-bell] [--kill-command[=signal]] [--spread-job]\n"
    "              [--nodefile=file] [--nodelist=hosts] [--exclude=hosts]\n"
    "              [--network=type] [--mem-per-cpu=MB] [--qos=qos]\n"
    "              [--mem-bind=...] [--reservation=name] [--mcs-label=mcs]\n"
    "              [--time-min=minutes] [--gres=list] [--gres-flags=opts]\n"
    "              [--cpu-freq=min[-max[:gov]]] [--power=flags] [--profile=...]\n"
    "              [--switches=max-switches[@max-time-to-wait]]\n"
    "              [--core-spec=cores] [--thread-spec=threads] [--reboot]\n"
    "              [--bb=burst_buffer_spec] [--bbf=burst_buffer_file]\n"
    "              [--delay-boot=mins] [--use-min-nodes]\n"
    "              [--cpus-per-gpu=n] [--gpus=n] [--gpu-bind=...] [--gpu-freq=...]\n"
    "              [--gpus-per-node=n] [--gpus-per-socket=n]  [--gpus-per-task=n]\n"
    "              [--mem-per-gpu=MB] [--tres-per-task=list]\n"
    "              [command [args...]]\n";

const char kHelp[] =
    "Usage: salloc [OPTIONS(0)...] [ : [OPTIONS(N)...]] [command(0) [args(0)...]]\n"
    "\n"
    "Grants an allocation (a job holding its nodes), runs the command (by default $SHELL) on\n"
    "this host with the allocation's SLURM_* variables, and gives the allocation up when the\n"
    "command ends: srun in it runs steps on the allocation's nodes.\n"
    "\n"
    "salloc takes sbatch's options for the allocation (-N, -n, -c, -p, -t, -A, -q, -J,\n"
    "--gres, --gpus, --mem, -w, -x, --reservation, ...; see `berth sbatch --help`), and:\n"
    "      --no-shell              grant the allocation and exit without running a\n"
    "                              command; it lasts until its time limit or scancel\n"
    "  -K, --kill-command[=signal] accepted (the command is sent SIGHUP when the\n"
    "                              allocation is revoked)\n"
    "      --bell, --no-bell       accepted, no bell is rung\n"
    "\n"
    "Help options:\n"
    "  -h, --help                  show this help message\n"
    "      --usage                 display brief usage message\n"
    "\n"
    "Other options:\n"
    "  -V, --version               output version information and exit\n";

// Variables of the allocation that belong to one node (or one process) of it: the holder does not
// pass them on, and salloc's command has none of them (so srun in it knows it runs on none of the
// allocation's nodes).
bool NodeOwnVariable(const std::string& name) {
  static constexpr const char* kOwn[] = {"SLURM_NODEID",
                                         "SLURM_PROCID",
                                         "SLURM_LOCALID",
                                         "SLURM_GTIDS",
                                         "SLURMD_NODENAME",
                                         "SLURM_TOPOLOGY_ADDR",
                                         "SLURM_TOPOLOGY_ADDR_PATTERN",
                                         "SLURM_TASK_PID",
                                         "SLURM_CPUS_ON_NODE",
                                         "SLURM_GPUS_ON_NODE",
                                         "SLURM_JOB_GPUS",
                                         "SLURM_STEP_ID",
                                         "SLURM_STEPID",
                                         "SLURM_STEP_NODELIST",
                                         "SLURM_STEP_NUM_NODES",
                                         "SLURM_STEP_NUM_TASKS",
                                         "SLURM_STEP_TASKS_PER_NODE",
                                         "SLURM_STEP_GPUS"};
  for (const char* n : kOwn) {
    if (name == n) return true;
  }
  return slurm::NodeSpecificVariable(name);
}

// Sends all of `data` on a socket; false when it is gone.
bool SendAll(int fd, const std::string& data) {
  size_t off = 0;
  while (off < data.size()) {
    ssize_t n = ::send(fd, data.data() + off, data.size() - off, MSG_NOSIGNAL);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) return false;
    off += static_cast<size_t>(n);
  }
  return true;
}

// The next frame of `fd` within `millis` (-1: no limit): nullopt on the end, an error or time out.
std::optional<std::pair<RelayFrame, std::string>> NextFrame(int fd, slurm::RelayDecoder& d,
                                                            int millis) {
  const auto until = std::chrono::steady_clock::now() + std::chrono::milliseconds(millis);
  for (;;) {
    Result<std::optional<std::pair<RelayFrame, std::string>>> f = d.Next();
    if (!f.ok()) return std::nullopt;
    if (*f) return **f;
    int wait = -1;
    if (millis >= 0) {
      wait = static_cast<int>(std::chrono::duration_cast<std::chrono::milliseconds>(
                                  until - std::chrono::steady_clock::now())
                                  .count());
      if (wait <= 0) return std::nullopt;
    }
    pollfd p{fd, POLLIN, 0};
    int r = ::poll(&p, 1, wait);
    if (r < 0 && errno == EINTR) continue;
    if (r <= 0) return std::nullopt;
    char buf[65536];
    ssize_t n = ::recv(fd, buf, sizeof(buf), 0);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) return std::nullopt;
    d.Feed(std::string_view(buf, static_cast<size_t>(n)));
  }
}

// ---- The holder, on the allocation's first node.

// Holds the allocation until salloc says how its command ended (then exits with that status, so
// that the job ends as the command did) or the job is ended (time limit, scancel). It tells salloc
// the allocation's variables once it runs; a stream that breaks (the controller restarted) is
// opened again. With --no-shell it only holds.
int HoldAllocation(bool no_shell) {
  if (no_shell) {
    for (;;) pause();  // until the job ends: its time limit, or scancel
  }
  const char* id_text = std::getenv("SLURM_JOB_ID");
  const uint32_t job_id =
      id_text != nullptr ? static_cast<uint32_t>(std::strtoul(id_text, nullptr, 10)) : 0;
  if (job_id == 0) {
    std::fprintf(stderr, "salloc: error: the holder runs outside a job (no SLURM_JOB_ID)\n");
    return 1;
  }
  std::string vars;
  for (char** e = environ; *e != nullptr; ++e) {
    const std::string kv = *e;
    const size_t eq = kv.find('=');
    if (eq == std::string::npos || kv.rfind("SLURM_", 0) != 0) continue;
    if (NodeOwnVariable(kv.substr(0, eq))) continue;
    vars += kv;
    vars += '\0';
  }
  for (;;) {
    Result<std::unique_ptr<StepStream>> s =
        StepStream::Open(job_id, "batch", "", /*launcher=*/false, kStreamWaitMillis);
    if (!s.ok()) {
      std::this_thread::sleep_for(std::chrono::seconds(2));
      continue;
    }
    slurm::RelayDecoder d;
    d.Feed((*s)->TakeAlreadyRead());
    if (!SendAll((*s)->fd(), slurm::EncodeRelayFrame(RelayFrame::kAllocation, vars))) continue;
    while (std::optional<std::pair<RelayFrame, std::string>> f = NextFrame((*s)->fd(), d, -1)) {
      if (f->first == RelayFrame::kExit) return std::atoi(f->second.c_str()) & 0xff;
    }
    std::this_thread::sleep_for(std::chrono::seconds(1));  // salloc may come back
  }
}

// ---- salloc

// Splits salloc's words: its own options (which sbatch lacks) out, then sbatch's options and the
// command. Errors are glibc's getopt messages.
struct SallocWords {
  std::vector<std::string> options;  // for sbatch's parser
  std::vector<std::string> command;
  bool no_shell = false;
  bool job_name_given = false;
  std::string error;
};

bool IsSallocOnly(const std::string& w, bool* no_shell) {
  if (w == "--no-shell") {
    *no_shell = true;
    return true;
  }
  return w == "--bell" || w == "--no-bell" || w == "-K" || w.rfind("--kill-command", 0) == 0 ||
         (w.size() > 2 && w.rfind("-K", 0) == 0 && w[2] != '-');
}

SallocWords SplitWords(std::vector<std::string> words) {
  SallocWords out;
  for (;;) {
    slurm::GetoptResult g = slurm::GetoptSbatch(words, kProg);
    if (!g.error.empty()) {
      const size_t bad = g.next > 0 ? g.next - 1 : 0;
      if (bad < words.size() && IsSallocOnly(words[bad], &out.no_shell)) {
        words.erase(words.begin() + static_cast<std::ptrdiff_t>(bad));
        continue;
      }
      out.error = g.error;
      return out;
    }
    for (const slurm::OptionArg& o : g.options) {
      if (o.name == "job-name") out.job_name_given = true;
    }
    size_t end = g.next;
    // getopt stops at "--" (and skips it) or at the first operand.
    size_t options_end = end;
    if (end > 0 && end <= words.size() && words[end - 1] == "--") options_end = end - 1;
    out.options.assign(words.begin(), words.begin() + static_cast<std::ptrdiff_t>(options_end));
    out.command.assign(words.begin() + static_cast<std::ptrdiff_t>(end), words.end());
    return out;
  }
}

std::optional<slurm::JobView> Look(Client& c, uint32_t id) {
  Result<json> r = c.Call("GET", "/v1/jobs/" + std::to_string(id));
  if (!r.ok()) return std::nullopt;
  Result<slurm::JobView> v = slurm::JobViewFromJson(*r, std::time(nullptr));
  if (!v.ok()) return std::nullopt;
  return *v;
}

void Cancel(Client& c, uint32_t id) {
  (void)c.Call("POST", "/v1/jobs/cancel", json{{"ids", {std::to_string(id)}}});
}

// Slurm's words for an allocation that ended under salloc's feet.
void SayRevoked(const slurm::JobView& v) {
  if (v.state == core::JobState::kTimeout) {
    std::fprintf(stderr,
                 "salloc: Job %u has exceeded its time limit and its allocation has been "
                 "revoked.\n",
                 v.job_id);
  } else {
    std::fprintf(stderr, "salloc: Job allocation %u has been revoked.\n", v.job_id);
  }
}

// The terminal's foreground goes to `pgrp` (salloc's command, or salloc again); nothing where
// standard input is not salloc's terminal.
void GiveTerminal(pid_t pgrp) {
  if (!isatty(STDIN_FILENO)) return;
  struct sigaction ignore = {}, old = {};
  ignore.sa_handler = SIG_IGN;
  sigaction(SIGTTOU, &ignore, &old);  // a background process may take the terminal back
  (void)tcsetpgrp(STDIN_FILENO, pgrp);
  sigaction(SIGTTOU, &old, nullptr);
}

// Runs the command with the allocation's variables; returns its wait status, or nullopt when the
// allocation ended first (the command was sent SIGHUP).
std::optional<int> RunCommand(Client& c, uint32_t id, const std::vector<std::string>& command,
                              const std::vector<std::pair<std::string, std::string>>& vars,
                              SignalWatch& signals) {
  std::vector<std::string> env_text;
  for (char** e = environ; *e != nullptr; ++e) {
    const std::string kv = *e;
    const std::string name = kv.substr(0, kv.find('='));
    if (name.rfind("SLURM_", 0) == 0 && NodeOwnVariable(name)) continue;
    bool replaced = false;
    for (const auto& [n, v] : vars) replaced = replaced || n == name;
    if (!replaced) env_text.push_back(kv);
  }
  for (const auto& [n, v] : vars) env_text.push_back(n + "=" + v);
  std::vector<char*> envp, argv;
  for (std::string& s : env_text) envp.push_back(s.data());
  envp.push_back(nullptr);
  std::vector<std::string> words = command;
  for (std::string& s : words) argv.push_back(s.data());
  argv.push_back(nullptr);
  std::fflush(nullptr);
  const pid_t child = fork();
  if (child < 0) {
    std::fprintf(stderr, "salloc: error: fork: %s\n", std::strerror(errno));
    return 1 << 8;
  }
  if (child == 0) {
    setpgid(0, 0);
    GiveTerminal(getpid());
    sigprocmask(SIG_SETMASK, &signals.old_mask(), nullptr);
    execvpe(argv[0], argv.data(), envp.data());
    std::fprintf(stderr, "salloc: error: %s: %s\n", argv[0], std::strerror(errno));
    _exit(errno == ENOENT ? 127 : 126);
  }
  setpgid(child, child);
  GiveTerminal(child);
  std::optional<int> status;
  bool revoked = false;
  for (int tick = 1;; ++tick) {
    const int sig = signals.Wait(kPollMillis);
    int st = 0;
    const pid_t done = waitpid(child, &st, WNOHANG);
    if (done == child) {
      status = st;
      break;
    }
    if (sig == SIGTERM || sig == SIGHUP) {
      // salloc itself is told to end: the allocation with it (as Slurm's salloc).
      kill(-child, SIGHUP);
      revoked = true;
    }
    if (!revoked && tick % kStatePollTicks == 0) {
      std::optional<slurm::JobView> v = Look(c, id);
      if (v && core::IsTerminal(v->state)) {
        SayRevoked(*v);
        kill(-child, SIGHUP);
        revoked = true;
      }
    }
  }
  GiveTerminal(getpgrp());
  if (revoked) return std::nullopt;
  return status;
}

int Salloc(int argc, char** argv) {
  std::vector<std::string> args(argv + 1, argv + argc);
  if (args.size() >= 1 && args[0] == kHoldArg) {
    return HoldAllocation(args.size() >= 2 && args[1] == "--no-shell");
  }
  // --help, --usage and --version before the first operand.
  for (const std::string& a : args) {
    if (a == "--") break;
    if (a == "-h" || a == "--help") {
      std::fputs(kHelp, stdout);
      return 0;
    }
    if (a == "--usage") {
      std::fputs(kUsage, stdout);
      return 0;
    }
    if (a == "-V" || a == "--version") {
      std::printf("slurm 22.05 (berth %s)\n", BERTH_VERSION);
      return 0;
    }
  }
  SallocWords words = SplitWords(args);
  if (!words.error.empty()) {
    std::fprintf(stderr, "%s\n%s", words.error.c_str(), kUsage);
    return 1;
  }
  // sbatch's parser reads the options as salloc's (SALLOC_* for SBATCH_*); its script is none.
  slurm::SbatchInputs in;
  in.prog = kProg;
  in.args = words.options;
  for (char** e = environ; *e != nullptr; ++e) {
    std::string kv = *e;
    const size_t eq = kv.find('=');
    if (eq == std::string::npos || kv.rfind("SBATCH_", 0) == 0) continue;
    std::string name = kv.substr(0, eq);
    if (name.rfind("SALLOC_", 0) == 0) {
      if (name == "SALLOC_JOB_NAME") words.job_name_given = true;
      name = "SBATCH_" + name.substr(7);
    }
    in.env.emplace_back(name, kv.substr(eq + 1));
  }
  in.cwd = CurrentDir();
  in.host = ShortHostName();
  errno = 0;
  const int nice = getpriority(PRIO_PROCESS, 0);
  in.nice = errno == 0 ? nice : 0;
  in.now = std::time(nullptr);
  in.zone = config::HostTimeZone();
  in.read_file = [](const std::string& path) -> Result<std::string> {
    return Status::NotFound("cannot open " + path);
  };
  in.read_stdin = []() -> Result<std::string> { return std::string("#!/bin/sh\n"); };
  slurm::SbatchOutcome out = slurm::ParseSbatch(in);
  if (auto* f = std::get_if<slurm::SbatchFailure>(&out)) {
    std::fputs(f->text.c_str(), stderr);
    return 1;
  }
  if (std::holds_alternative<slurm::SbatchInfo>(out)) return 0;
  slurm::SbatchRequest req = std::get<slurm::SbatchRequest>(out);
  if (!req.spec.array.empty()) {
    std::fprintf(stderr, "salloc: unrecognized option '--array'\n%s", kUsage);
    return 1;
  }
  std::fputs(req.warnings.c_str(), stderr);
  std::vector<std::string> command = words.command;
  if (command.empty()) {
    const char* shell = std::getenv("SHELL");
    command = {shell != nullptr && shell[0] != '\0' ? shell : "/bin/sh"};
  }
  if (!words.job_name_given) {
    // Slurm names the job after the command (its file name).
    req.spec.name = words.no_shell && words.command.empty()
                        ? std::string("interactive")
                        : command.front().substr(command.front().rfind('/') + 1);
  }
  // The holder, not a script: it holds the resources and says when they are ready.
  req.exec.script.clear();
  req.exec.script_args.clear();
  req.exec.command.clear();
  req.exec.container.clear();  // pyxis's options belong to srun's steps in the allocation
  req.exec.argv = {SelfPath(), "salloc", kHoldArg};
  if (words.no_shell) req.exec.argv.push_back("--no-shell");
  req.exec.stdout_pattern = "/dev/null";
  req.exec.stderr_pattern = "/dev/null";
  req.exec.stdin_path.clear();
  req.exec.signal_number = 0;

  Result<std::unique_ptr<Client>> client = Client::Connect();
  if (!client.ok()) return Fail(kProg, client.status());
  Client& c = **client;
  SignalWatch signals({SIGINT, SIGTERM, SIGHUP, SIGQUIT, SIGCHLD});
  Result<json> r = c.Call("POST", "/v1/jobs", api::EncodeJob(req.spec, &req.exec));
  if (!r.ok()) {
    std::fprintf(stderr, "salloc: error: Job submit/allocate failed: %s\n",
                 r.status().message().c_str());
    return 1;
  }
  const uint32_t id = r->value("job_id", 0u);
  // The stream to the holder, from the submission on (it may start and wait at once).
  std::unique_ptr<StepStream> stream;
  if (!words.no_shell) {
    Result<std::unique_ptr<StepStream>> s =
        StepStream::Open(id, "batch", "", /*launcher=*/true, kStreamWaitMillis);
    if (!s.ok()) {
      std::fprintf(stderr, "salloc: error: cannot reach job %u's nodes: %s\n", id,
                   s.status().message().c_str());
      Cancel(c, id);
      return 1;
    }
    stream = std::move(*s);
  }
  // Granted, or waiting for resources (Ctrl-C gives it up).
  bool pending_said = false;
  for (int tick = 0;; ++tick) {
    const int sig = tick == 0 ? 0 : signals.Wait(kPollMillis);
    if (sig == SIGINT || sig == SIGTERM || sig == SIGHUP || sig == SIGQUIT) {
      Cancel(c, id);
      std::fprintf(stderr, "salloc: Job allocation %u has been revoked.\n", id);
      return 1;
    }
    if (tick % 5 != 0) continue;
    std::optional<slurm::JobView> v = Look(c, id);
    if (!v) continue;
    if (v->state == core::JobState::kPending) {
      if (!pending_said && tick >= 5) {  // not granted within a second: said as Slurm says it
        std::fprintf(stderr, "salloc: Pending job allocation %u\n", id);
        std::fprintf(stderr, "salloc: job %u queued and waiting for resources\n", id);
        pending_said = true;
      }
      continue;
    }
    if (core::IsTerminal(v->state)) {
      if (pending_said) SayRevoked(*v);
      std::fprintf(stderr, "salloc: error: Job allocation %u has been revoked.\n", id);
      return 1;
    }
    if (pending_said) std::fprintf(stderr, "salloc: job %u has been allocated resources\n", id);
    std::fprintf(stderr, "salloc: Granted job allocation %u\n", id);
    break;
  }
  if (words.no_shell) return 0;
  // The holder runs once it says so, with the allocation's variables.
  slurm::RelayDecoder decoder;
  decoder.Feed(stream->TakeAlreadyRead());
  std::vector<std::pair<std::string, std::string>> vars;
  bool ready = false;
  for (int waited = 0; waited < kHolderWaitMillis && !ready; waited += 1000) {
    std::optional<std::pair<RelayFrame, std::string>> f = NextFrame(stream->fd(), decoder, 1000);
    if (f && f->first == RelayFrame::kAllocation) {
      for (size_t start = 0; start < f->second.size();) {
        size_t end = f->second.find('\0', start);
        if (end == std::string::npos) end = f->second.size();
        const std::string kv = f->second.substr(start, end - start);
        start = end + 1;
        const size_t eq = kv.find('=');
        if (eq != std::string::npos) vars.emplace_back(kv.substr(0, eq), kv.substr(eq + 1));
      }
      ready = true;
      break;
    }
    const int sig = signals.Wait(0);
    std::optional<slurm::JobView> v = Look(c, id);
    if (sig == SIGINT || sig == SIGTERM || sig == SIGHUP || sig == SIGQUIT ||
        (v && core::IsTerminal(v->state))) {
      if (v && core::IsTerminal(v->state)) SayRevoked(*v);
      Cancel(c, id);
      return 1;
    }
  }
  if (!ready) {
    std::fprintf(stderr, "salloc: error: job %u's nodes did not become ready; giving it up\n", id);
    Cancel(c, id);
    return 1;
  }
  std::optional<int> status = RunCommand(c, id, command, vars, signals);
  std::fprintf(stderr, "salloc: Relinquishing job allocation %u\n", id);
  int code = 1;
  if (status) {
    code = WIFEXITED(*status) ? WEXITSTATUS(*status)
                              : 128 + (WIFSIGNALED(*status) ? WTERMSIG(*status) : 0);
  }
  // The holder ends with the command's status, and the job as the command did; where the stream
  // broke (the controller restarted), the job is cancelled instead.
  bool told =
      status.has_value() &&
      SendAll(stream->fd(), slurm::EncodeRelayFrame(RelayFrame::kExit, std::to_string(code)));
  if (!told) Cancel(c, id);
  for (int i = 0; i < kRelinquishSeconds * 5; ++i) {
    std::optional<slurm::JobView> v = Look(c, id);
    if (v && core::IsTerminal(v->state)) break;
    if (i == 10 * 5 && told) Cancel(c, id);  // the holder did not hear it
    std::this_thread::sleep_for(std::chrono::milliseconds(kPollMillis));
  }
  return code;
}

}  // namespace

int SallocMain(int argc, char** argv) {
  return Salloc(argc, argv);
}

}  // namespace berth::cli
