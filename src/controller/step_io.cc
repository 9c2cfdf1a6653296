#include "controller/step_io.h"

#include <fcntl.h>
#include <poll.h>
#include <sys/socket.h>

#include <cerrno>
#include <chrono>

namespace berth::controller {
namespace {

constexpr auto kSlice = std::chrono::milliseconds(250);
constexpr size_t kMaxBuffered = 256 * 1024;
// After one side ended, how long the other may take to read what is left for it.
constexpr int64_t kFlushMs = 30000;

struct Way {
  int from = -1;
  int to = -1;
  std::string buffer;  // read from `from`, not yet written to `to`
  bool from_open = true;
};

int64_t NowMs() {
  return std::chrono::duration_cast<std::chrono::milliseconds>(
             std::chrono::steady_clock::now().time_since_epoch())
      .count();
}

// Reads what `w.from` has, until its buffer is full; marks the end (or a failure) of `from`.
void ReadSome(Way& w) {
  char buf[65536];
  for (;;) {
    ssize_t n = ::recv(w.from, buf, sizeof(buf), 0);
    if (n > 0) {
      w.buffer.append(buf, static_cast<size_t>(n));
      if (w.buffer.size() >= kMaxBuffered) return;
      continue;
    }
    if (n < 0 && errno == EINTR) continue;
    if (n < 0 && (errno == EAGAIN || errno == EWOULDBLOCK)) return;
    w.from_open = false;  // the end, or an error: nothing more comes this way
    return;
  }
}

// Writes what it can of w.buffer; false when `w.to` is gone.
bool WriteSome(Way& w) {
  while (!w.buffer.empty()) {
    ssize_t n = ::send(w.to, w.buffer.data(), w.buffer.size(), MSG_NOSIGNAL);
    if (n > 0) {
      w.buffer.erase(0, static_cast<size_t>(n));
      continue;
    }
    if (n < 0 && errno == EINTR) continue;
    if (n < 0 && (errno == EAGAIN || errno == EWOULDBLOCK)) return true;
    return false;
  }
  return true;
}

}  // namespace

void RelayBytes(int a, std::string a_sent, int b, std::string b_sent,
                const std::atomic<bool>& stopping) {
  for (int fd : {a, b}) ::fcntl(fd, F_SETFL, ::fcntl(fd, F_GETFL) | O_NONBLOCK);
  Way ways[2] = {{a, b, std::move(a_sent), true}, {b, a, std::move(b_sent), true}};
  int64_t flush_deadline = 0;
  while (!stopping) {
    // One side ended: the relay ends once what it sent has reached the other.
    bool over = false;
    for (Way& w : ways) {
      if (!w.from_open && w.buffer.empty()) over = true;
    }
    if (over) return;
    if (!ways[0].from_open || !ways[1].from_open) {
      if (flush_deadline == 0) flush_deadline = NowMs() + kFlushMs;
      if (NowMs() > flush_deadline) return;
    }
    pollfd fds[2] = {{a, 0, 0}, {b, 0, 0}};
    for (int i = 0; i < 2; ++i) {
      Way& w = ways[i];
      if (w.from_open && w.buffer.size() < kMaxBuffered) fds[i].events |= POLLIN;
      if (!w.buffer.empty()) fds[1 - i].events |= POLLOUT;
    }
    if (::poll(fds, 2, static_cast<int>(kSlice.count())) < 0 && errno != EINTR) return;
    for (int i = 0; i < 2; ++i) {
      Way& w = ways[i];
      if (fds[i].revents & (POLLIN | POLLHUP | POLLERR)) ReadSome(w);
    }
    for (Way& w : ways) {
      if (!WriteSome(w)) return;  // the reader went away
    }
  }
}

Status StepIoRendezvous::MayJoin(const std::string& key, Side side) const {
  MutexLock l(mu_);
  auto it = slots_.find(key);
  if (it == slots_.end()) {
    if (slots_.size() >= kMaxWaiting) {
      return Status::ResourceExhausted("too many srun streams are waiting; try again");
    }
    return Status::Ok();
  }
  if (it->second->fd[static_cast<int>(side)] >= 0) {
    return Status::AlreadyExists("the " +
                                 std::string(side == Side::kLauncher ? "launcher" : "part") +
                                 " of stream " + key + " is connected already");
  }
  return Status::Ok();
}

Status StepIoRendezvous::Serve(const std::string& key, Side side, int fd, std::string already_read,
                               int wait_ms, const std::atomic<bool>& stopping) {
  const int me = static_cast<int>(side);
  std::shared_ptr<Slot> slot;
  int other_fd = -1;
  std::string other_sent;
  {
    UniqueLock l(mu_);
    auto it = slots_.find(key);
    if (it == slots_.end()) {
      if (slots_.size() >= kMaxWaiting) {
        return Status::ResourceExhausted("too many srun streams are waiting; try again");
      }
      slot = std::make_shared<Slot>();
      slot->fd[me] = fd;
      slot->already[me] = std::move(already_read);
      slots_[key] = slot;
      // First here: wait for the other side, then for the relay its thread runs.
      const auto deadline = std::chrono::steady_clock::now() +
                            std::chrono::milliseconds(std::min(wait_ms, kMaxWaitMs));
      while (!slot->done) {
        const auto now = std::chrono::steady_clock::now();
        if (!slot->paired && (now >= deadline || stopping)) {
          auto at = slots_.find(key);
          if (at != slots_.end() && at->second == slot) slots_.erase(at);
          return Status::Unavailable(stopping ? "the controller is stopping"
                                              : "the other srun of stream " + key +
                                                    " did not come in time");
        }
        cv_.wait_until(l.get(), slot->paired ? now + kSlice : std::min(deadline, now + kSlice));
      }
      return Status::Ok();
    }
    slot = it->second;
    if (slot->fd[me] >= 0) {
      return Status::AlreadyExists("the " +
                                   std::string(side == Side::kLauncher ? "launcher" : "part") +
                                   " of stream " + key + " is connected already");
    }
    slot->paired = true;
    other_fd = slot->fd[1 - me];
    other_sent = std::move(slot->already[1 - me]);
    slots_.erase(it);  // the key is free again; the slot lives on with both sides
  }
  RelayBytes(fd, std::move(already_read), other_fd, std::move(other_sent), stopping);
  MutexLock l(mu_);
  slot->done = true;
  cv_.notify_all();
  return Status::Ok();
}

size_t StepIoRendezvous::waiting() const {
  MutexLock l(mu_);
  return slots_.size();
}

}  // namespace berth::controller
