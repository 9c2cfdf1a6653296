// A pod's stdin and terminal in its supervisor (docs/adr/0006-pod-streams.md, attach): with
// stdin: true the job's stdin is a pipe whose write end the supervisor holds (so the process
// sees no EOF while nobody is attached); with tty: true the job runs on a pseudo-terminal whose
// master the supervisor holds, copying its output to the job's stdout file (what kubectl logs
// reads). Either end is handed to the agent on DIR/attach.sock (attach_socket.h). A pod in a
// container image gets the same: the pipe is `runc create`'s stdin, which runc passes on to the
// container's process; the terminal is one runc makes in the container (config.json's terminal),
// whose master runc sends to DIR/console.sock during `runc create`.
#include <fcntl.h>
#include <stdlib.h>
#include <sys/ioctl.h>
#include <sys/socket.h>
#include <termios.h>
#include <unistd.h>

#include <cerrno>
#include <cstdint>
#include <string>
#include <string_view>

#include "agent/attach_socket.h"
#include "agent/container_exec.h"
#include "agent/file_util.h"
#include "agent/supervise_internal.h"
#include "net/socket_io.h"

namespace berth::agent {

namespace {

constexpr int64_t kConsoleWaitMs = 10000;  // for runc's terminal once `runc create` returned

// Writes all of `data` to a blocking file (EINTR retried); a failed write loses the rest.
void WriteAll(int fd, std::string_view data) {
  while (!data.empty()) {
    ssize_t n = write(fd, data.data(), data.size());
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) return;
    data.remove_prefix(static_cast<size_t>(n));
  }
}

void CloseFd(int* fd) {
  if (*fd >= 0) close(*fd);
  *fd = -1;
}

}  // namespace

Status Supervisor::SetUpStdio(JobExec* exec) {
  if (!spec_.open_stdin && !spec_.tty) return Status::Ok();
  if (spec_.tty && container_) {
    // runc makes the terminal in the container (config.json's terminal) and sends its master to
    // this socket during `runc create` (--console-socket, RuncCreateArgv); the attach socket
    // comes once it is here (ReceiveConsole): an attach waits for it meanwhile.
    BERTH_RETURN_IF_ERROR(OpenTerminalLog(*exec));
    Result<int> console = ListenUnixSocket(ConsoleSocketPath());
    if (!console.ok()) return console.status();
    console_listen_ = *console;
    return Status::Ok();
  }
  if (spec_.tty) {
    pty_master_ = posix_openpt(O_RDWR | O_NOCTTY | O_CLOEXEC);
    if (pty_master_ < 0) return ErrnoStatus("posix_openpt", errno);
    char name[128];
    if (grantpt(pty_master_) != 0 || unlockpt(pty_master_) != 0 ||
        ptsname_r(pty_master_, name, sizeof(name)) != 0) {
      return ErrnoStatus("preparing the pod's terminal", errno);
    }
    pty_slave_ = open(name, O_RDWR | O_NOCTTY | O_CLOEXEC);
    if (pty_slave_ < 0) return ErrnoStatus(std::string("open ") + name, errno);
    // The job's user owns its terminal, as a login's.
    if (switch_user_) (void)fchown(pty_slave_, user_.uid, user_.gid);
    winsize size{};
    size.ws_row = 24;
    size.ws_col = 80;
    (void)ioctl(pty_master_, TIOCSWINSZ, &size);
    (void)fcntl(pty_master_, F_SETFL, fcntl(pty_master_, F_GETFL) | O_NONBLOCK);
    BERTH_RETURN_IF_ERROR(OpenTerminalLog(*exec));
    exec->terminal_fd = pty_slave_;
    pty_open_ = true;
  } else {
    // In a container too: runc create's stdin, which runc passes on to the container's process.
    int fds[2];
    if (pipe2(fds, O_CLOEXEC) != 0) return ErrnoStatus("pipe2", errno);
    stdin_read_ = fds[0];
    stdin_write_ = fds[1];
    exec->stdin_fd = stdin_read_;
  }
  Result<int> listen = ListenAttachSocket(dir_);
  if (!listen.ok()) return listen.status();
  attach_listen_ = *listen;
  return Status::Ok();
}

// The terminal's output goes where the process's would have: the stdout file.
Status Supervisor::OpenTerminalLog(const JobExec& exec) {
  const int flags = O_WRONLY | O_CREAT | O_CLOEXEC | (exec.append ? O_APPEND : O_TRUNC);
  terminal_log_fd_ = open(exec.stdout_path.c_str(), flags, 0644);
  if (terminal_log_fd_ < 0) return ErrnoStatus("open " + exec.stdout_path, errno);
  if (switch_user_ || exec.files_as_user) (void)fchown(terminal_log_fd_, user_.uid, user_.gid);
  if (!exec.append) (void)lseek(terminal_log_fd_, 0, SEEK_END);
  return Status::Ok();
}

Status Supervisor::ReceiveConsole() {
  // runc has sent the master by the time `runc create` returned (its init sends it before it
  // waits for `runc start`): it waits in the connection runc made.
  const int64_t deadline = net::SteadyNowMs() + kConsoleWaitMs;
  int conn = -1;
  while (conn < 0 && net::SteadyNowMs() < deadline) {
    pollfd p{console_listen_, POLLIN, 0};
    if (poll(&p, 1, 100) > 0) conn = accept4(console_listen_, nullptr, nullptr, SOCK_CLOEXEC);
  }
  CloseFd(&console_listen_);
  (void)unlink(ConsoleSocketPath().c_str());
  if (conn < 0) return Status::Unavailable("runc sent no terminal for the pod's tty");
  Result<int> master = ReceiveFd(conn, deadline);
  close(conn);
  if (!master.ok()) return master.status();
  pty_master_ = *master;
  (void)fcntl(pty_master_, F_SETFL, fcntl(pty_master_, F_GETFL) | O_NONBLOCK);
  pty_open_ = true;
  Result<int> listen = ListenAttachSocket(dir_);
  if (!listen.ok()) return listen.status();
  attach_listen_ = *listen;
  return Status::Ok();
}

void Supervisor::CloseChildStdio() {
  CloseFd(&stdin_read_);
  CloseFd(&pty_slave_);
}

void Supervisor::AddStdioPolls(std::vector<pollfd>* fds) const {
  if (attach_listen_ >= 0) fds->push_back({attach_listen_, POLLIN, 0});
  if (pty_open_) fds->push_back({pty_master_, POLLIN, 0});
}

void Supervisor::HandleStdio() {
  if (pty_open_) PumpTerminal();
  if (attach_listen_ < 0) return;
  for (int i = 0; i < 16; ++i) {
    int conn = accept4(attach_listen_, nullptr, nullptr, SOCK_CLOEXEC);
    if (conn < 0) return;
    AnswerAttach(conn);
    close(conn);
  }
}

void Supervisor::AnswerAttach(int conn) {
  // Only the agent's user (the socket is 0600 too) or root.
  ucred peer{};
  socklen_t len = sizeof(peer);
  if (getsockopt(conn, SOL_SOCKET, SO_PEERCRED, &peer, &len) != 0 ||
      (peer.uid != 0 && peer.uid != geteuid())) {
    return;
  }
  Result<Tagged> request = ReceiveTagged(conn, 1000, /*with_text=*/false);
  if (!request.ok()) return;
  if (request->fd >= 0) close(request->fd);
  const int end = pty_master_ >= 0 ? pty_master_ : stdin_write_;
  if (request->tag == kAttachGetStdin) {
    if (end < 0 || stdin_ended_) {
      (void)SendTagged(conn, 'n', -1,
                       "the pod's stdin was closed when its first attached client's stdin ended "
                       "(stdinOnce)");
    } else {
      (void)SendTagged(conn, 'k', end);
    }
  } else if (request->tag == kAttachEndStdin) {
    if (spec_.stdin_once && !stdin_ended_) {
      stdin_ended_ = true;
      Log(dir_, "stdinOnce: the first attached client's stdin ended; closing the job's stdin");
      if (pty_master_ >= 0) {
        termios t{};
        char eof = tcgetattr(pty_master_, &t) == 0 ? static_cast<char>(t.c_cc[VEOF]) : '\x04';
        (void)write(pty_master_, &eof, 1);
      } else {
        CloseFd(&stdin_write_);
      }
    }
    (void)SendTagged(conn, 'k', -1);
  } else {
    (void)SendTagged(conn, 'n', -1, "unknown request");
  }
}

void Supervisor::PumpTerminal() {
  char buf[16384];
  while (true) {
    ssize_t n = read(pty_master_, buf, sizeof(buf));
    if (n > 0) {
      // A full disk loses output, as it would for the process's own writes.
      WriteAll(terminal_log_fd_, std::string_view(buf, static_cast<size_t>(n)));
      continue;
    }
    if (n < 0 && (errno == EAGAIN || errno == EINTR)) return;
    pty_open_ = false;  // EIO: nothing holds the terminal any more
    return;
  }
}

void Supervisor::EndStdio() {
  if (pty_open_) PumpTerminal();
  if (console_listen_ >= 0) {
    CloseFd(&console_listen_);
    (void)unlink(ConsoleSocketPath().c_str());
  }
  if (attach_listen_ >= 0) {
    close(attach_listen_);
    attach_listen_ = -1;
    (void)unlink((dir_ + "/" + kAttachSocketName).c_str());
  }
  CloseChildStdio();
  CloseFd(&stdin_write_);
  CloseFd(&pty_master_);
  CloseFd(&terminal_log_fd_);
  pty_open_ = false;
}

}  // namespace berth::agent
