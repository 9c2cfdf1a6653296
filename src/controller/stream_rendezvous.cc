#include "controller/stream_rendezvous.h"

#include <sys/random.h>
#include <sys/socket.h>

#include <chrono>

namespace berth::controller {
namespace {

constexpr auto kSlice = std::chrono::milliseconds(250);

std::string RandomId() {
  unsigned char raw[16];
  if (::getrandom(raw, sizeof(raw), 0) != static_cast<ssize_t>(sizeof(raw))) return "";
  static constexpr char kHex[] = "0123456789abcdef";
  std::string id;
  for (unsigned char c : raw) {
    id += kHex[c >> 4];
    id += kHex[c & 15];
  }
  return id;
}

}  // namespace

void AgentStreamLink::Done() {
  UniqueLock l(mu_);
  done_ = true;
  cv_.notify_all();
}

Result<std::string> StreamRendezvous::Open(const std::string& node) {
  std::string id = RandomId();
  if (id.empty()) return Status::Internal("no random bytes for a stream id");
  MutexLock l(mu_);
  if (pending_.size() >= kMaxPending) {
    return Status::ResourceExhausted("too many pod streams are opening at once; try again");
  }
  pending_[id] = Pending{node, nullptr};
  return id;
}

Result<std::shared_ptr<AgentStreamLink>> StreamRendezvous::Await(
    const std::string& id, int timeout_ms, const std::atomic<bool>& stopping) {
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::milliseconds(timeout_ms);
  UniqueLock l(mu_);
  for (;;) {
    auto it = pending_.find(id);
    if (it == pending_.end()) return Status::Internal("pod stream " + id + " is not waiting");
    if (it->second.link) {
      std::shared_ptr<AgentStreamLink> link = std::move(it->second.link);
      pending_.erase(it);
      return link;
    }
    const auto now = std::chrono::steady_clock::now();
    if (now >= deadline || stopping) {
      pending_.erase(it);
      return Status::Unavailable(stopping ? "the controller is stopping"
                                          : "the node's agent did not open the stream in time");
    }
    cv_.wait_until(l.get(), std::min(deadline, now + kSlice));
  }
}

Status StreamRendezvous::Arrive(const std::string& id, const std::string& node, int fd,
                                std::string already_read, const std::atomic<bool>& stopping) {
  auto link = std::make_shared<AgentStreamLink>();
  link->fd_ = fd;
  link->already_read_ = std::move(already_read);
  {
    MutexLock l(mu_);
    auto it = pending_.find(id);
    if (it == pending_.end() || it->second.link) {
      return Status::NotFound("no pod stream " + id + " is waiting");
    }
    if (it->second.node != node) {
      return Status::PermissionDenied("pod stream " + id + " is not node " + node + "'s");
    }
    it->second.link = link;
    cv_.notify_all();
  }
  // Until the face is done: it may take the link a moment after Arrive, or never (its wait
  // timed out just now): then nobody holds the link but us.
  UniqueLock l(link->mu_);
  bool shut = false;
  while (!link->done_) {
    if (link.use_count() == 1) {
      MutexLock p(mu_);
      if (pending_.find(id) == pending_.end() && link.use_count() == 1) break;
    }
    if (stopping && !shut) {
      ::shutdown(fd, SHUT_RDWR);  // the face's relay sees the end and calls Done
      shut = true;
    }
    link->cv_.wait_for(l.get(), kSlice);
  }
  return Status::Ok();
}

Status StreamRendezvous::Waiting(const std::string& id, const std::string& node) const {
  MutexLock l(mu_);
  auto it = pending_.find(id);
  if (it == pending_.end() || it->second.link) {
    return Status::NotFound("no pod stream " + id + " is waiting");
  }
  if (it->second.node != node) {
    return Status::PermissionDenied("pod stream " + id + " is not node " + node + "'s");
  }
  return Status::Ok();
}

size_t StreamRendezvous::pending() const {
  MutexLock l(mu_);
  return pending_.size();
}

}  // namespace berth::controller
