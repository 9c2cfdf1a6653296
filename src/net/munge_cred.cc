#include "net/munge_cred.h"

#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <spawn.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <charconv>
#include <vector>

#include "net/socket_io.h"

extern char** environ;

namespace berth::net {
namespace {

constexpr int kTimeoutMs = 5000;
constexpr size_t kMaxOutput = 64 << 10;

struct Ran {
  int exit_code = -1;
  std::string out;  // stdout and stderr together
};

// Runs argv (searched on PATH) with `input` on stdin; everything it prints comes back. The child
// is killed after kTimeoutMs.
Result<Ran> Run(const std::vector<std::string>& argv, std::string_view input) {
  int in[2], out[2];
  if (::pipe2(in, O_CLOEXEC) != 0) return Status::Unavailable(ErrnoMessage("pipe", errno));
  if (::pipe2(out, O_CLOEXEC) != 0) {
    ::close(in[0]);
    ::close(in[1]);
    return Status::Unavailable(ErrnoMessage("pipe", errno));
  }
  posix_spawn_file_actions_t fa;
  posix_spawn_file_actions_init(&fa);
  posix_spawn_file_actions_adddup2(&fa, in[0], 0);
  posix_spawn_file_actions_adddup2(&fa, out[1], 1);
  posix_spawn_file_actions_adddup2(&fa, out[1], 2);
  std::vector<char*> args;
  for (const std::string& a : argv) args.push_back(const_cast<char*>(a.c_str()));
  args.push_back(nullptr);
  pid_t pid = -1;
  int rc = posix_spawnp(&pid, argv[0].c_str(), &fa, nullptr, args.data(), environ);
  posix_spawn_file_actions_destroy(&fa);
  ::close(in[0]);
  ::close(out[1]);
  if (rc != 0) {
    ::close(in[1]);
    ::close(out[0]);
    return Status::Unavailable(ErrnoMessage(argv[0], rc));
  }
  // The input is a credential (hundreds of bytes): it fits the pipe, no need to interleave.
  (void)!::write(in[1], input.data(), input.size());
  ::close(in[1]);
  Ran ran;
  const int64_t deadline = SteadyNowMs() + kTimeoutMs;
  char buf[4096];
  bool timed_out = false;
  for (;;) {
    pollfd p{out[0], POLLIN, 0};
    int64_t left = deadline - SteadyNowMs();
    if (left <= 0) {
      timed_out = true;
      break;
    }
    int n = ::poll(&p, 1, static_cast<int>(left));
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) {
      timed_out = n == 0;
      break;
    }
    ssize_t got = ::read(out[0], buf, sizeof(buf));
    if (got < 0 && errno == EINTR) continue;
    if (got <= 0) break;
    if (ran.out.size() < kMaxOutput) ran.out.append(buf, static_cast<size_t>(got));
  }
  ::close(out[0]);
  if (timed_out) ::kill(pid, SIGKILL);
  int status = 0;
  while (::waitpid(pid, &status, 0) < 0 && errno == EINTR) {
  }
  if (timed_out) return Status::Unavailable(argv[0] + ": no answer within 5 s");
  ran.exit_code = WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
  return ran;
}

std::string FirstLine(std::string_view s) {
  size_t nl = s.find('\n');
  std::string line(s.substr(0, nl));
  return line.empty() ? "no message" : line;
}

}  // namespace

Result<std::string> MungeEncode(const std::string& socket) {
  std::vector<std::string> argv = {"munge", "-n"};
  if (!socket.empty()) argv.insert(argv.end(), {"-S", socket});
  BERTH_ASSIGN_OR_RETURN(Ran r, Run(argv, ""));
  if (r.exit_code != 0) return Status::Unavailable("munge: " + FirstLine(r.out));
  while (!r.out.empty() && (r.out.back() == '\n' || r.out.back() == ' ')) r.out.pop_back();
  if (!r.out.starts_with("MUNGE:")) return Status::Unavailable("munge printed no credential");
  return r.out;
}

Result<MungeIdentity> MungeDecode(const std::string& credential, const std::string& socket) {
  if (!credential.starts_with("MUNGE:") || credential.size() > 8192) {
    return Status::PermissionDenied("not a MUNGE credential");
  }
  std::vector<std::string> argv = {"unmunge", "-N", "-k", "UID,GID"};
  if (!socket.empty()) argv.insert(argv.end(), {"-S", socket});
  BERTH_ASSIGN_OR_RETURN(Ran r, Run(argv, credential));
  // unmunge's exit codes: 0 success; 1..3 its own trouble, 6 (EMUNGE_SOCKET) munged unreachable;
  // the others are what is wrong with the credential.
  if (r.exit_code == 6 || r.exit_code == 127 || (r.exit_code >= 1 && r.exit_code <= 3)) {
    return Status::Unavailable("unmunge: " + FirstLine(r.out));
  }
  if (r.exit_code != 0) return Status::PermissionDenied("MUNGE: " + FirstLine(r.out));
  return ParseUnmungeOutput(r.out);
}

Result<MungeIdentity> ParseUnmungeOutput(std::string_view text) {
  MungeIdentity id;
  bool uid = false, gid = false;
  while (!text.empty()) {
    size_t nl = text.find('\n');
    std::string_view line = text.substr(0, nl);
    text = nl == std::string_view::npos ? std::string_view() : text.substr(nl + 1);
    size_t colon = line.find(':');
    if (colon == std::string_view::npos) continue;
    std::string_view key = line.substr(0, colon);
    std::string_view value = line.substr(colon + 1);
    while (!value.empty() && value.front() == ' ') value.remove_prefix(1);
    while (!value.empty() && (value.back() == ' ' || value.back() == '\r')) value.remove_suffix(1);
    uint32_t* into = key == "UID" ? &id.uid : key == "GID" ? &id.gid : nullptr;
    if (into == nullptr) continue;
    auto [end, ec] = std::from_chars(value.data(), value.data() + value.size(), *into);
    if (ec != std::errc() || end != value.data() + value.size() || value.empty()) {
      return Status::Internal("unmunge: bad " + std::string(key) + " '" + std::string(value) + "'");
    }
    (key == "UID" ? uid : gid) = true;
  }
  if (!uid || !gid) return Status::Internal("unmunge printed no UID or GID");
  return id;
}

}  // namespace berth::net
