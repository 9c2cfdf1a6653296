#include "image/skopeo.h"

#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <spawn.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <chrono>
#include <cstring>

#include "common/strings.h"

extern char** environ;

namespace berth::image {
namespace {

bool Contains(const std::string& haystack_lower, std::string_view needle) {
  return haystack_lower.find(needle) != std::string::npos;
}

}  // namespace

Result<CommandResult> RunBounded(const std::vector<std::string>& argv, int64_t timeout_s,
                                 const std::vector<std::string>& env_add) {
  int pipefd[2];
  if (pipe2(pipefd, O_CLOEXEC) != 0) {
    return Status::Internal(std::string("pipe: ") + std::strerror(errno));
  }
  posix_spawn_file_actions_t fa;
  posix_spawn_file_actions_init(&fa);
  posix_spawn_file_actions_addopen(&fa, 0, "/dev/null", O_RDONLY, 0);
  posix_spawn_file_actions_addopen(&fa, 1, "/dev/null", O_WRONLY, 0);
  posix_spawn_file_actions_adddup2(&fa, pipefd[1], 2);
  posix_spawnattr_t attr;
  posix_spawnattr_init(&attr);
  posix_spawnattr_setflags(&attr,
                           POSIX_SPAWN_SETPGROUP | POSIX_SPAWN_SETSIGMASK | POSIX_SPAWN_SETSIGDEF);
  posix_spawnattr_setpgroup(&attr, 0);
  sigset_t none, all;
  sigemptyset(&none);
  sigfillset(&all);
  posix_spawnattr_setsigmask(&attr, &none);
  posix_spawnattr_setsigdefault(&attr, &all);
  std::vector<std::string> env_strings;
  for (char** e = environ; e && *e; ++e) {
    std::string_view kv = *e;
    bool replaced = false;
    for (const std::string& add : env_add) {
      if (kv.substr(0, kv.find('=') + 1) == add.substr(0, add.find('=') + 1)) replaced = true;
    }
    if (!replaced) env_strings.emplace_back(kv);
  }
  for (const std::string& add : env_add) env_strings.push_back(add);
  std::vector<char*> envp, args;
  for (std::string& s : env_strings) envp.push_back(s.data());
  envp.push_back(nullptr);
  std::vector<std::string> argv_copy = argv;
  for (std::string& s : argv_copy) args.push_back(s.data());
  args.push_back(nullptr);
  pid_t pid = 0;
  int rc = posix_spawnp(&pid, args[0], &fa, &attr, args.data(), envp.data());
  posix_spawn_file_actions_destroy(&fa);
  posix_spawnattr_destroy(&attr);
  close(pipefd[1]);
  if (rc != 0) {
    close(pipefd[0]);
    return Status::FailedPrecondition("cannot run " + argv[0] + ": " + std::strerror(rc));
  }
  CommandResult r;
  auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(timeout_s);
  char buf[4096];
  while (true) {
    auto left = std::chrono::duration_cast<std::chrono::milliseconds>(
                    deadline - std::chrono::steady_clock::now())
                    .count();
    if (left <= 0) {
      kill(-pid, SIGKILL);
      r.timed_out = true;
      break;
    }
    pollfd p{pipefd[0], POLLIN, 0};
    int n = poll(&p, 1, static_cast<int>(std::min<int64_t>(left, 1000)));
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) continue;
    ssize_t k = read(pipefd[0], buf, sizeof(buf));
    if (k < 0 && errno == EINTR) continue;
    if (k <= 0) break;
    if (r.err.size() < 65536) r.err.append(buf, static_cast<size_t>(k));
  }
  close(pipefd[0]);
  int status = 0;
  while (waitpid(pid, &status, 0) < 0 && errno == EINTR) {
  }
  if (r.timed_out) {
    r.exit_code = -1;
  } else {
    r.exit_code = WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
  }
  // A child of skopeo's that kept the pipe open could outlive it: its group goes too.
  kill(-pid, SIGKILL);
  return r;
}

std::string SkopeoMessage(std::string_view err) {
  std::string msg;
  // The last "msg=" wins: skopeo's fatal line comes last.
  size_t pos = err.rfind("msg=\"");
  if (pos != std::string_view::npos) {
    for (size_t i = pos + 5; i < err.size() && err[i] != '\n'; ++i) {
      if (err[i] == '\\' && i + 1 < err.size()) {
        ++i;
        msg += err[i] == 'n' ? ' ' : err[i];
      } else if (err[i] == '"') {
        break;
      } else {
        msg += err[i];
      }
    }
  } else {
    // No logrus line: the last non-empty line.
    std::string_view rest = Trim(err);
    while (!rest.empty() && (rest.back() == '\n' || rest.back() == '\r')) rest.remove_suffix(1);
    size_t nl = rest.rfind('\n');
    msg = std::string(nl == std::string_view::npos ? rest : rest.substr(nl + 1));
  }
  // "initializing source docker://REF: " repeats what the caller's prefix says.
  if (msg.starts_with("initializing source ")) {
    if (size_t colon = msg.find(": "); colon != std::string::npos) msg = msg.substr(colon + 2);
  }
  if (msg.size() > 300) msg = msg.substr(0, 297) + "...";
  return msg;
}

Status SkopeoStatus(const CommandResult& r, std::string_view what) {
  std::string prefix(what);
  if (r.timed_out) return Status::Unavailable(prefix + ": timed out");
  std::string msg = SkopeoMessage(r.err);
  if (msg.empty()) msg = "skopeo exited with status " + std::to_string(r.exit_code);
  std::string low = ToLower(msg);
  std::string full = prefix + ": " + msg;
  if (Contains(low, "no space left")) return Status::ResourceExhausted(full);
  if (Contains(low, "digest did not match") || Contains(low, "digest mismatch") ||
      Contains(low, "does not match")) {
    return Status::InvalidArgument(full);
  }
  if (Contains(low, "unauthorized") || Contains(low, "authentication required") ||
      Contains(low, "denied") || Contains(low, "forbidden") || Contains(low, "401")) {
    return Status::PermissionDenied(full);
  }
  if (Contains(low, "manifest unknown") || Contains(low, "name unknown") ||
      Contains(low, "not found") || Contains(low, "404")) {
    return Status::NotFound(full);
  }
  return Status::Unavailable(full);
}

}  // namespace berth::image
