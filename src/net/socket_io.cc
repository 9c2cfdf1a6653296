#include "net/socket_io.h"

#include <netinet/in.h>
#include <poll.h>
#include <sys/socket.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <chrono>
#include <cstring>

namespace berth::net {

UniqueFd& UniqueFd::operator=(UniqueFd&& other) noexcept {
  if (this != &other) Reset(other.Release());
  return *this;
}

int UniqueFd::Release() {
  int fd = fd_;
  fd_ = -1;
  return fd;
}

void UniqueFd::Reset(int fd) {
  // close() is not retried on EINTR: on Linux the descriptor is gone either way.
  if (fd_ >= 0) ::close(fd_);
  fd_ = fd;
}

ReadBuffer::ReadBuffer(size_t initial_capacity)
    : data_(std::make_unique_for_overwrite<char[]>(initial_capacity)),
      initial_capacity_(initial_capacity),
      capacity_(initial_capacity) {}

void ReadBuffer::ShrinkIfEmpty(size_t max_capacity) {
  if (begin_ != end_ || capacity_ <= max_capacity) return;
  data_ = std::make_unique_for_overwrite<char[]>(initial_capacity_);
  capacity_ = initial_capacity_;
  begin_ = end_ = 0;
}

void ReadBuffer::Consume(size_t n) {
  begin_ += n;
  if (begin_ == end_) begin_ = end_ = 0;
}

char* ReadBuffer::PrepareWrite(size_t min_free) {
  if (capacity_ - end_ >= min_free) return data_.get() + end_;
  size_t used = end_ - begin_;
  if (capacity_ - used >= min_free && begin_ > 0) {
    std::memmove(data_.get(), data_.get() + begin_, used);
  } else {
    size_t capacity = std::max(capacity_ * 2, used + min_free);
    auto grown = std::make_unique_for_overwrite<char[]>(capacity);
    if (used > 0) std::memcpy(grown.get(), data_.get() + begin_, used);
    data_ = std::move(grown);
    capacity_ = capacity;
  }
  begin_ = 0;
  end_ = used;
  return data_.get() + end_;
}

int64_t SteadyNowMs() {
  return std::chrono::duration_cast<std::chrono::milliseconds>(
             std::chrono::steady_clock::now().time_since_epoch())
      .count();
}

namespace {

// Waits for `events` on fd until the deadline (-1: forever). Returns false on timeout/error.
bool WaitFor(int fd, short events, int64_t deadline_ms) {
  for (;;) {
    int timeout = -1;
    if (deadline_ms >= 0) {
      int64_t left = deadline_ms - SteadyNowMs();
      if (left <= 0) return false;
      timeout = static_cast<int>(std::min<int64_t>(left, 1 << 30));
    }
    pollfd p{fd, events, 0};
    int n = ::poll(&p, 1, timeout);
    if (n > 0) return true;
    if (n == 0) return false;
    if (errno != EINTR) return false;
  }
}

}  // namespace

bool SendAll(int fd, struct iovec* iov, int iovcnt, int64_t deadline_ms, size_t* sent) {
  size_t total = 0;
  while (iovcnt > 0) {
    if (iov->iov_len == 0) {
      ++iov;
      --iovcnt;
      continue;
    }
    msghdr msg{};
    msg.msg_iov = iov;
    msg.msg_iovlen = static_cast<size_t>(iovcnt);
    ssize_t n = ::sendmsg(fd, &msg, MSG_NOSIGNAL);
    if (n < 0) {
      if (errno == EINTR) continue;
      if ((errno == EAGAIN || errno == EWOULDBLOCK) && deadline_ms != 0 &&
          WaitFor(fd, POLLOUT, deadline_ms)) {
        continue;
      }
      if (sent != nullptr) *sent = total;
      return false;
    }
    size_t left = static_cast<size_t>(n);
    total += left;
    while (iovcnt > 0 && left >= iov->iov_len) {
      left -= iov->iov_len;
      ++iov;
      --iovcnt;
    }
    if (iovcnt > 0) {
      iov->iov_base = static_cast<char*>(iov->iov_base) + left;
      iov->iov_len -= left;
    }
  }
  if (sent != nullptr) *sent = total;
  return true;
}

bool WaitReadable(int fd, int64_t deadline_ms) {
  return WaitFor(fd, POLLIN, deadline_ms);
}

std::string ErrnoMessage(std::string_view what, int err) {
  std::string out(what);
  out += ": ";
  out += std::strerror(err);
  return out;
}

Result<int> FreeLoopbackPort() {
  UniqueFd fd(socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0));
  if (!fd.valid()) return Status::Internal("socket() failed");
  sockaddr_in a{};
  a.sin_family = AF_INET;
  a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  socklen_t len = sizeof(a);
  int rc = bind(fd.get(), reinterpret_cast<sockaddr*>(&a), sizeof(a));
  if (rc == 0) rc = getsockname(fd.get(), reinterpret_cast<sockaddr*>(&a), &len);
  if (rc != 0) return Status::Internal("cannot find a free loopback port");
  return static_cast<int>(ntohs(a.sin_port));
}

}  // namespace berth::net
