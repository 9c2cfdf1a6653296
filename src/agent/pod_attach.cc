// kubectl attach on the agent: see pod_attach.h.
#include "agent/pod_attach.h"

#include <fcntl.h>
#include <poll.h>
#include <sys/ioctl.h>
#include <unistd.h>

#include <cerrno>
#include <string_view>

#include "agent/attach_socket.h"
#include "agent/output_path.h"
#include "net/socket_io.h"

namespace berth::agent {
namespace {

namespace ws = net::ws;
using net::SteadyNowMs;

constexpr uint8_t kStdin = 0;
constexpr uint8_t kStdout = 1;
constexpr uint8_t kError = 3;
constexpr uint8_t kResize = 4;
constexpr uint8_t kClose = 255;
constexpr size_t kChunk = 32768;

void CloseFd(int* fd) {
  if (*fd >= 0) ::close(*fd);
  *fd = -1;
}

// The job's stdout file, opened once it exists; `offset` is where this attach starts reading.
struct LogTail {
  std::string path;
  int fd = -1;
  bool at_end_first = true;  // a file there already: from its end (the past is kubectl logs')

  ~LogTail() { CloseFd(&fd); }
  // Sends what was added since the last call; false when the client went away.
  bool Send(ws::WsConnection& conn) {
    if (fd < 0) {
      fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
      if (fd < 0) {
        at_end_first = false;  // made later: all of it is new
        return true;
      }
      if (at_end_first) ::lseek(fd, 0, SEEK_END);
    }
    char buf[kChunk];
    while (true) {
      ssize_t n = ::read(fd, buf, sizeof(buf));
      if (n < 0 && errno == EINTR) continue;
      if (n <= 0) return true;
      if (!SendChannel(conn, kStdout, std::string_view(buf, static_cast<size_t>(n))).ok()) {
        return false;
      }
    }
  }
};

}  // namespace

std::string JobStdoutPath(const LaunchSpec& spec, const std::string& node_name) {
  OutputPatternFields f;
  f.job_id = spec.job_id;
  f.array_job_id = spec.array_job_id;
  f.array_task_id = spec.array_task_id;
  f.job_name = spec.name;
  f.user = spec.user;
  f.node_name = node_name;
  f.node_index = spec.node_index;
  return OutputPath(spec.stdout_pattern, DefaultStdoutPattern(spec.array_task_id >= 0), f,
                    spec.work_dir.empty() ? "/" : spec.work_dir);
}

ExecOutcome AttachOutcome(const JobResult& result) {
  ExecOutcome outcome;
  outcome.started = true;
  outcome.exit_code = result.term_signal > 0 ? 128 + result.term_signal : result.exit_code;
  if (outcome.exit_code == 0 && result.state != "COMPLETED" && !result.state.empty()) {
    outcome.exit_code = 1;  // ended without an exit code of its own (NODE_FAIL, CANCELLED...)
  }
  return outcome;
}

ExecOutcome ServeAttach(ws::WsConnection& conn, const PodStreamRequest& request,
                        const AttachTarget& target,
                        const std::function<std::optional<JobResult>()>& result,
                        const std::atomic<bool>& stopping, const AttachLimits& limits) {
  ExecOutcome outcome;
  LogTail tail{target.log_path};
  (void)tail.Send(conn);  // opened at its end now: what comes after the attach
  // The process's stdin (a pipe's write end or the terminal's master), when asked and given.
  int in = -1;
  const bool wants_stdin = request.stdin && target.open_stdin;
  if (wants_stdin) {
    Result<Tagged> end = AskSupervisor(target.dir, kAttachGetStdin);
    // A job that is still starting (kubectl run attaches as soon as it runs) has no socket yet.
    for (const int64_t until = SteadyNowMs() + limits.stdin_wait_ms;
         !end.ok() && end.status().code() == StatusCode::kNotFound && SteadyNowMs() < until &&
         !stopping && !result();) {
      ::usleep(50000);
      end = AskSupervisor(target.dir, kAttachGetStdin);
    }
    if (end.ok() && end->fd >= 0) {
      in = end->fd;
      ::fcntl(in, F_SETFL, ::fcntl(in, F_GETFL) | O_NONBLOCK);
    }
  }
  // The terminal's size comes with the master even without stdin (-t without -i).
  int terminal = -1;
  if (target.tty && in < 0) {
    Result<Tagged> end = AskSupervisor(target.dir, kAttachGetStdin);
    if (end.ok()) terminal = end->fd;
  }
  const int resize_fd = target.tty ? (in >= 0 ? in : terminal) : -1;
  std::string stdin_buffer;
  bool stdin_closed = false;
  std::string error;
  ws::Frame m;
  bool client_gone = false;
  int64_t next_result = 0;
  while (!stopping) {
    if (in >= 0 && !stdin_buffer.empty()) {
      ssize_t n = ::write(in, stdin_buffer.data(), stdin_buffer.size());
      if (n > 0) stdin_buffer.erase(0, static_cast<size_t>(n));
      if (n < 0 && errno != EAGAIN && errno != EINTR) {
        stdin_buffer.clear();
        CloseFd(&in);
      }
    }
    if (stdin_closed && stdin_buffer.empty() && in >= 0) {
      CloseFd(&in);
      (void)AskSupervisor(target.dir, kAttachEndStdin);  // stdinOnce closes it for the process
    }
    const bool want_client = stdin_buffer.size() < limits.max_stdin_buffer;
    pollfd fds[3] = {{want_client ? conn.fd() : -1, POLLIN, 0},
                     {!stdin_buffer.empty() && in >= 0 ? in : -1, POLLOUT, 0},
                     {target.wake_fd, POLLIN, 0}};
    if (::poll(fds, 3, conn.HasBuffered() ? 0 : limits.poll_ms) < 0 && errno != EINTR) break;
    if (fds[2].revents & POLLIN) {
      char events[4096];
      while (::read(target.wake_fd, events, sizeof(events)) > 0) {
      }
      next_result = 0;
    }
    if (want_client && (conn.HasBuffered() || (fds[0].revents & (POLLIN | POLLHUP | POLLERR)))) {
      ws::WsConnection::Got got;
      while ((got = conn.Receive(&m, 0, &stopping, &error)) == ws::WsConnection::Got::kMessage) {
        if (m.payload.empty()) continue;
        const auto channel = static_cast<uint8_t>(m.payload[0]);
        std::string_view data = std::string_view(m.payload).substr(1);
        if (channel == kStdin && in >= 0 && !stdin_closed) {
          stdin_buffer.append(data);
        } else if (channel == kResize && resize_fd >= 0) {
          winsize size{};
          if (ParseResize(data, &size)) ::ioctl(resize_fd, TIOCSWINSZ, &size);
        } else if (channel == kClose && !data.empty() && static_cast<uint8_t>(data[0]) == kStdin) {
          stdin_closed = true;
        }
      }
      if (got == ws::WsConnection::Got::kClosed) {
        client_gone = true;
        break;
      }
    }
    if (!tail.Send(conn)) {
      client_gone = true;
      break;
    }
    if (SteadyNowMs() >= next_result) {
      next_result = SteadyNowMs() + limits.poll_ms;
      if (std::optional<JobResult> r = result()) {
        (void)tail.Send(conn);  // the supervisor wrote all output before the result
        outcome = AttachOutcome(*r);
        (void)SendChannel(conn, kError, OutcomeStatus(outcome, request.command).dump());
        conn.SendClose(ws::kCloseNormal, "");
        break;
      }
    }
  }
  // A client that leaves ends its stdin as closing it would (stdinOnce: the process's).
  if (in >= 0) {
    CloseFd(&in);
    if (client_gone || stopping) (void)AskSupervisor(target.dir, kAttachEndStdin);
  }
  CloseFd(&terminal);
  if (stopping && !client_gone) conn.SendClose(ws::kCloseGoingAway, "the node's agent is stopping");
  return outcome;
}

}  // namespace berth::agent
