#include "controller/hubs.h"

#include <algorithm>
#include <chrono>

namespace berth::controller {

uint64_t AgentHub::Push(const std::string& node, std::string command) {
  uint64_t seq;
  {
    MutexLock<Mutex> l(mu_);
    Queue& q = queues_[node];
    seq = q.next++;
    q.items.emplace_back(seq, std::move(command));
  }
  cv_.notify_all();
  return seq;
}

std::vector<std::pair<uint64_t, std::string>> AgentHub::Poll(const std::string& node,
                                                             uint64_t after, int wait_ms) {
  UniqueLock l(mu_);
  auto deadline = std::chrono::steady_clock::now() + std::chrono::milliseconds(wait_ms);
  while (true) {
    Queue& q = queues_[node];
    while (!q.items.empty() && q.items.front().first <= after) q.items.pop_front();
    if (!q.items.empty() || shutdown_) {
      return std::vector<std::pair<uint64_t, std::string>>(q.items.begin(), q.items.end());
    }
    if (cv_.wait_until(l.get(), deadline) == std::cv_status::timeout) return {};
  }
}

std::vector<std::string> AgentHub::Clear(const std::string& node) {
  MutexLock<Mutex> l(mu_);
  std::deque<std::pair<uint64_t, std::string>>& items = queues_[node].items;
  std::vector<std::string> dropped;
  dropped.reserve(items.size());
  for (auto& [seq, command] : items) dropped.push_back(std::move(command));
  items.clear();
  return dropped;
}

uint64_t AgentHub::LastSeq(const std::string& node) {
  MutexLock<Mutex> l(mu_);
  return queues_[node].next - 1;
}

void AgentHub::Shutdown() {
  {
    MutexLock<Mutex> l(mu_);
    shutdown_ = true;
  }
  cv_.notify_all();
}

void WatchHub::Publish(std::vector<WatchEvent> events) {
  if (events.empty()) return;
  {
    MutexLock<Mutex> l(mu_);
    for (WatchEvent& e : events) events_.push_back(std::move(e));
    while (events_.size() > capacity_) {
      events_.pop_front();
      ++first_;
    }
  }
  cv_.notify_all();
}

WatchBatch WatchHub::Read(uint64_t from, int wait_ms, uint64_t* next, bool* lost) {
  UniqueLock l(mu_);
  auto end = [&]() REQUIRES(mu_) { return first_ + events_.size(); };
  if (from >= end() && !shutdown_) {
    cv_.wait_for(l.get(), std::chrono::milliseconds(wait_ms),
                 [&]() REQUIRES(mu_) { return shutdown_ || from < end(); });
  }
  *lost = from < first_;
  std::vector<WatchEvent> out;
  size_t bytes = 0;
  uint64_t seq = std::clamp(from, first_, end());
  for (; seq < end(); ++seq) {
    const WatchEvent& e = events_[seq - first_];
    if (!out.empty() && bytes + e->size() > max_read_bytes_) break;
    bytes += e->size();
    out.push_back(e);
  }
  *next = seq;
  return WatchBatch(std::move(out));
}

uint64_t WatchHub::Next() {
  MutexLock<Mutex> l(mu_);
  return first_ + events_.size();
}

void WatchHub::StartAt(uint64_t sequence) {
  MutexLock<Mutex> l(mu_);
  events_.clear();
  first_ = sequence;
}

void WatchHub::Shutdown() {
  {
    MutexLock<Mutex> l(mu_);
    shutdown_ = true;
  }
  cv_.notify_all();
}

}  // namespace berth::controller
