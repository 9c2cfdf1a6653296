#include "controller/power_provider.h"

#include <fcntl.h>
#include <signal.h>
#include <spawn.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <fstream>

#include "common/hostlist.h"

extern char** environ;

namespace berth::controller {
namespace {

// Starts argv[0] with `argv`, stdin from /dev/null and stdout/stderr to `log` (appended; the
// controller's own stderr when empty), in a session of its own.
Result<pid_t> Spawn(const std::vector<std::string>& argv, const std::string& log) {
  posix_spawn_file_actions_t fa;
  posix_spawnattr_t attr;
  posix_spawn_file_actions_init(&fa);
  posix_spawnattr_init(&attr);
  posix_spawn_file_actions_addopen(&fa, 0, "/dev/null", O_RDONLY, 0);
  if (!log.empty()) {
    posix_spawn_file_actions_addopen(&fa, 1, log.c_str(), O_WRONLY | O_CREAT | O_APPEND, 0644);
    posix_spawn_file_actions_adddup2(&fa, 1, 2);
  }
  posix_spawnattr_setflags(&attr, POSIX_SPAWN_SETSID | POSIX_SPAWN_SETSIGMASK);
  sigset_t none;
  sigemptyset(&none);
  posix_spawnattr_setsigmask(&attr, &none);
  std::vector<char*> args;
  for (const std::string& a : argv) args.push_back(const_cast<char*>(a.c_str()));
  args.push_back(nullptr);
  pid_t pid = 0;
  int rc = posix_spawn(&pid, argv[0].c_str(), &fa, &attr, args.data(), environ);
  posix_spawn_file_actions_destroy(&fa);
  posix_spawnattr_destroy(&attr);
  if (rc != 0) return Status::Internal("cannot run " + argv[0] + ": " + std::strerror(rc));
  return pid;
}

// Collects the children of `running` that ended; a line for each that failed.
template <typename Describe>
std::vector<std::string> ReapChildren(std::map<pid_t, std::string>& running, Describe describe) {
  std::vector<std::string> failures;
  for (auto it = running.begin(); it != running.end();) {
    int status = 0;
    pid_t r = waitpid(it->first, &status, WNOHANG);
    if (r == 0) {
      ++it;
      continue;
    }
    if (r == it->first && !(WIFEXITED(status) && WEXITSTATUS(status) == 0)) {
      std::string how = WIFEXITED(status)
                            ? "exited with " + std::to_string(WEXITSTATUS(status))
                            : "was killed by signal " + std::to_string(WTERMSIG(status));
      if (std::string line = describe(it->second, status); !line.empty()) {
        failures.push_back(line + " " + how);
      }
    }
    it = running.erase(it);
  }
  return failures;
}

}  // namespace

ProgramProvider::ProgramProvider(std::string resume_program, std::string suspend_program)
    : resume_(std::move(resume_program)), suspend_(std::move(suspend_program)) {}

Status ProgramProvider::Run(const std::string& what, const std::string& program,
                            const std::vector<std::string>& nodes) {
  if (program.empty() || nodes.empty()) return Status::Ok();
  const std::string list = hostlist::Compress(nodes);
  BERTH_ASSIGN_OR_RETURN(pid_t pid, Spawn({program, list}, ""));
  running_[pid] = what + " " + program + " " + list;
  return Status::Ok();
}

Status ProgramProvider::Resume(const std::vector<std::string>& nodes) {
  return Run("ResumeProgram", resume_, nodes);
}

Status ProgramProvider::Suspend(const std::vector<std::string>& nodes) {
  return Run("SuspendProgram", suspend_, nodes);
}

std::vector<std::string> ProgramProvider::Reap() {
  return ReapChildren(running_, [](const std::string& what, int) { return what; });
}

LocalProvider::LocalProvider(std::string self_exe, std::string socket_path, std::string home,
                             std::map<std::string, core::NodeSpec> nodes)
    : self_exe_(std::move(self_exe)),
      socket_path_(std::move(socket_path)),
      home_(std::move(home)),
      nodes_(std::move(nodes)) {}

pid_t LocalProvider::PidOf(const std::string& node) const {
  std::ifstream in(home_ + "/" + node + "/agent.pid");
  long pid = 0;
  if (!(in >> pid) || pid <= 1) return 0;
  // Still the agent it started (not a recycled pid)?
  std::ifstream cmd("/proc/" + std::to_string(pid) + "/cmdline");
  std::string text((std::istreambuf_iterator<char>(cmd)), std::istreambuf_iterator<char>());
  return text.find(std::string("--node-name") + '\0' + node + '\0') != std::string::npos
             ? static_cast<pid_t>(pid)
             : 0;
}

Status LocalProvider::Resume(const std::vector<std::string>& nodes) {
  ::mkdir(home_.c_str(), 0755);
  for (const std::string& node : nodes) {
    auto spec = nodes_.find(node);
    if (spec == nodes_.end()) {
      return Status::NotFound("the local provider knows no node " + node);
    }
    if (PidOf(node) > 0) continue;  // already running (a resume repeated after a restart)
    const std::string dir = home_ + "/" + node;
    ::mkdir(dir.c_str(), 0755);
    const core::NodeSpec& n = spec->second;
    std::vector<std::string> argv = {self_exe_,      "agent",
                                     "--controller", "unix:" + socket_path_,
                                     "--home",       dir,
                                     "--node-name",  node,
                                     "--cpus",       std::to_string(n.cpus),
                                     "--mem",        std::to_string(n.mem_mib) + "M"};
    if (!n.gpus.empty()) {
      argv.insert(argv.end(), {"--gpus", std::to_string(n.gpus.size())});
      if (!n.gpus.front().empty()) argv.insert(argv.end(), {"--gpu-type", n.gpus.front()});
    }
    BERTH_ASSIGN_OR_RETURN(pid_t pid, Spawn(argv, dir + "/agent.log"));
    running_[pid] = node;
    std::ofstream(dir + "/agent.pid") << pid << "\n";
  }
  return Status::Ok();
}

Status LocalProvider::Suspend(const std::vector<std::string>& nodes) {
  for (const std::string& node : nodes) {
    if (pid_t pid = PidOf(node); pid > 0) ::kill(pid, SIGTERM);
    ::unlink((home_ + "/" + node + "/agent.pid").c_str());
  }
  return Status::Ok();
}

std::vector<std::string> LocalProvider::Reap() {
  return ReapChildren(running_, [](const std::string& node, int status) {
    // An agent stopped by Suspend ends on SIGTERM (or exits 0): not a failure.
    if (WIFSIGNALED(status) && WTERMSIG(status) == SIGTERM) return std::string();
    return "the local agent of " + node;
  });
}

void LocalProvider::Shutdown() {
  std::vector<std::string> all;
  for (const auto& [node, spec] : nodes_) all.push_back(node);
  (void)Suspend(all);
  for (int i = 0; i < 50 && !running_.empty(); ++i) {
    (void)Reap();
    if (!running_.empty()) ::usleep(100 * 1000);
  }
}

}  // namespace berth::controller
