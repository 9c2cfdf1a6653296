// The relay between an srun outside an allocation and the srun inside its job (srun_relay.h).
#include "cli/srun_relay.h"

#include <fcntl.h>
#include <signal.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <thread>

#include "common/thread_annotations.h"
#include "slurm/srun_stdio.h"

namespace berth::cli {
namespace {

using slurm::RelayFrame;

// Frames not yet written, at most, before srun stops reading its input (a task that does not
// read holds srun's input back, not its memory).
constexpr size_t kMaxPending = 256 * 1024;

bool WriteAll(int fd, const char* data, size_t size) {
  while (size > 0) {
    ssize_t n = write(fd, data, size);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) return false;
    data += n;
    size -= static_cast<size_t>(n);
  }
  return true;
}

std::optional<sockaddr_un> SocketAddress(const std::string& path) {
  sockaddr_un addr{};
  addr.sun_family = AF_UNIX;
  if (path.size() >= sizeof(addr.sun_path)) return std::nullopt;
  std::memcpy(addr.sun_path, path.c_str(), path.size() + 1);
  return addr;
}

}  // namespace

Result<std::unique_ptr<OuterRelay>> OuterRelay::Listen(const std::string& path, bool pty) {
  std::optional<sockaddr_un> addr = SocketAddress(path);
  if (!addr) return Status::InvalidArgument("socket path too long: " + path);
  int fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC | SOCK_NONBLOCK, 0);
  if (fd < 0) return Status::Internal(std::string("socket: ") + std::strerror(errno));
  if (bind(fd, reinterpret_cast<const sockaddr*>(&*addr), sizeof(*addr)) != 0 ||
      listen(fd, 1) != 0) {
    const int err = errno;
    close(fd);
    return Status::Internal("listen on " + path + ": " + std::strerror(err));
  }
  return std::unique_ptr<OuterRelay>(new OuterRelay(fd, path, pty));
}

OuterRelay::OuterRelay(int listen_fd, std::string path, bool pty)
    : listen_fd_(listen_fd), path_(std::move(path)), pty_(pty) {}

OuterRelay::~OuterRelay() {
  if (raw_) raw_->Restore();
  if (listen_fd_ >= 0) close(listen_fd_);
  if (conn_fd_ >= 0) close(conn_fd_);
  unlink(path_.c_str());
}

void OuterRelay::Poll(int millis) {
  std::vector<pollfd> fds;
  if (listen_fd_ >= 0) fds.push_back({listen_fd_, POLLIN, 0});
  if (conn_fd_ >= 0 && !pending_.empty()) fds.push_back({conn_fd_, POLLOUT, 0});
  if (conn_fd_ >= 0 && input_open_ && pending_.size() < kMaxPending) {
    fds.push_back({STDIN_FILENO, POLLIN, 0});
  }
  if (poll(fds.data(), fds.size(), millis) <= 0) return;
  for (const pollfd& p : fds) {
    if (p.revents == 0) continue;
    if (p.fd == listen_fd_) {
      Accept();
    } else if (p.fd == STDIN_FILENO) {
      ReadInput();
    } else if (p.fd == conn_fd_) {
      Flush();
    }
  }
}

void OuterRelay::WindowChanged() {
  if (!pty_ || conn_fd_ < 0) return;
  std::optional<winsize> size = slurm::TerminalSize(STDIN_FILENO);
  if (!size) size = slurm::TerminalSize(STDOUT_FILENO);
  if (!size) return;
  pending_ += slurm::EncodeWindowFrame(*size);
  Flush();
}

void OuterRelay::Accept() {
  int fd = accept4(listen_fd_, nullptr, nullptr, SOCK_CLOEXEC | SOCK_NONBLOCK);
  if (fd < 0) return;
  ucred cred{};
  socklen_t len = sizeof(cred);
  if (getsockopt(fd, SOL_SOCKET, SO_PEERCRED, &cred, &len) != 0 || cred.uid != getuid()) {
    close(fd);  // only the job's own srun, which runs as this user
    return;
  }
  close(listen_fd_);
  listen_fd_ = -1;
  conn_fd_ = fd;
  if (pty_) {
    raw_.emplace(STDIN_FILENO);
    std::optional<winsize> size = slurm::TerminalSize(STDIN_FILENO);
    if (!size) size = slurm::TerminalSize(STDOUT_FILENO);
    winsize none{};
    pending_ += slurm::EncodeWindowFrame(size ? *size : none);
  }
  Flush();
}

void OuterRelay::ReadInput() {
  char buf[16384];
  ssize_t n = read(STDIN_FILENO, buf, sizeof(buf));
  if (n < 0 && (errno == EINTR || errno == EAGAIN)) return;
  if (n <= 0) {
    input_open_ = false;
    pending_ += slurm::EncodeRelayFrame(RelayFrame::kEnd);
  } else {
    pending_ +=
        slurm::EncodeRelayFrame(RelayFrame::kData, std::string_view(buf, static_cast<size_t>(n)));
  }
  Flush();
}

void OuterRelay::Flush() {
  while (conn_fd_ >= 0 && !pending_.empty()) {
    ssize_t n = send(conn_fd_, pending_.data(), pending_.size(), MSG_NOSIGNAL);
    if (n < 0 && errno == EINTR) continue;
    if (n < 0 && errno == EAGAIN) return;
    if (n <= 0) {
      Drop();
      return;
    }
    pending_.erase(0, static_cast<size_t>(n));
  }
}

void OuterRelay::Drop() {
  // The inner srun went away (its step ended): nothing more to send.
  close(conn_fd_);
  conn_fd_ = -1;
  pending_.clear();
  input_open_ = false;
}

namespace {

// The window size the outer srun last sent, for the step's SIGWINCH.
struct SharedWindow {
  Mutex mu;
  std::optional<winsize> size GUARDED_BY(mu);
};

// The inner srun's relay thread: frames in, the step's input and window size out. `decoder` may
// hold bytes that came with the first frame.
void RunInner(int sock, int input_w, std::shared_ptr<SharedWindow> window,
              slurm::RelayDecoder decoder) {
  sigset_t all;
  sigfillset(&all);
  pthread_sigmask(SIG_BLOCK, &all, nullptr);  // srun's signals are the main thread's
  char buf[65536];
  while (true) {
    Result<std::optional<std::pair<RelayFrame, std::string>>> f = decoder.Next();
    if (!f.ok()) break;
    if (!*f) {
      ssize_t n = read(sock, buf, sizeof(buf));
      if (n < 0 && errno == EINTR) continue;
      if (n <= 0) break;
      decoder.Feed(std::string_view(buf, static_cast<size_t>(n)));
      continue;
    }
    const auto& [type, payload] = **f;
    if (type == RelayFrame::kData && input_w >= 0) {
      if (!WriteAll(input_w, payload.data(), payload.size())) {
        close(input_w);
        input_w = -1;
      }
    } else if (type == RelayFrame::kEnd && input_w >= 0) {
      close(input_w);
      input_w = -1;
    } else if (type == RelayFrame::kWindow) {
      if (std::optional<winsize> w = slurm::DecodeWindow(payload)) {
        {
          MutexLock<Mutex> lock(window->mu);
          window->size = *w;
        }
        kill(getpid(), SIGWINCH);
      }
    }
  }
  if (input_w >= 0) close(input_w);
  close(sock);
}

}  // namespace

Result<InnerRelay> ConnectRelay(const std::string& path, bool pty) {
  std::optional<sockaddr_un> addr = SocketAddress(path);
  if (!addr) return Status::InvalidArgument("socket path too long: " + path);
  int sock = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
  if (sock < 0) return Status::Internal(std::string("socket: ") + std::strerror(errno));
  if (connect(sock, reinterpret_cast<const sockaddr*>(&*addr), sizeof(*addr)) != 0) {
    const int err = errno;
    close(sock);
    return Status::Unavailable(path + ": " + std::strerror(err));
  }
  auto window = std::make_shared<SharedWindow>();
  slurm::RelayDecoder decoder;
  InnerRelay r;
  // --pty: the terminal starts with the caller's size, which the outer srun sends first.
  if (pty) {
    pollfd p = {sock, POLLIN, 0};
    std::optional<std::pair<RelayFrame, std::string>> first;
    char buf[4096];
    while (!first && poll(&p, 1, 10000) > 0) {
      ssize_t n = read(sock, buf, sizeof(buf));
      if (n <= 0) break;
      decoder.Feed(std::string_view(buf, static_cast<size_t>(n)));
      Result<std::optional<std::pair<RelayFrame, std::string>>> f = decoder.Next();
      if (!f.ok()) break;
      first = *f;
    }
    if (!first || first->first != RelayFrame::kWindow) {
      close(sock);
      return Status::Unavailable(path + ": the submitting srun sent no window size");
    }
    r.window = slurm::DecodeWindow(first->second);
    if (r.window && r.window->ws_row == 0 && r.window->ws_col == 0) r.window.reset();
  }
  int fds[2];
  if (pipe2(fds, O_CLOEXEC) != 0) {
    close(sock);
    return Status::Internal(std::string("pipe: ") + std::strerror(errno));
  }
  std::thread(RunInner, sock, fds[1], window, std::move(decoder)).detach();
  r.input_fd = fds[0];
  r.window_now = [window]() {
    MutexLock<Mutex> lock(window->mu);
    return window->size;
  };
  return r;
}

}  // namespace berth::cli
