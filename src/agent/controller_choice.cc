#include "agent/controller_choice.h"

#include <utility>

namespace berth::agent {

ControllerChoice::ControllerChoice(std::vector<std::string> addresses)
    : addresses_(std::move(addresses)), silent_at_(addresses_.size(), 0) {}

std::string ControllerChoice::Current() const {
  MutexLock<Mutex> l(mu_);
  return addresses_.empty() ? std::string() : addresses_[current_];
}

bool ControllerChoice::PassedOver(size_t i, int64_t now_ms) const {
  return silent_at_[i] != 0 && now_ms - silent_at_[i] < kSilentPassMs;
}

void ControllerChoice::NextLocked(int64_t now_ms) {
  const size_t n = addresses_.size();
  if (n < 2) return;
  // The next one not passed over; failing that, the one that went silent longest ago (it may
  // be back), which is never the one in use unless it is the only choice.
  size_t oldest = (current_ + 1) % n;
  for (size_t step = 1; step < n; ++step) {
    const size_t i = (current_ + step) % n;
    if (!PassedOver(i, now_ms)) {
      current_ = i;
      return;
    }
    if (silent_at_[i] < silent_at_[oldest]) oldest = i;
  }
  current_ = oldest;
}

void ControllerChoice::Failed(bool silent, int64_t now_ms) {
  MutexLock<Mutex> l(mu_);
  if (addresses_.empty()) return;
  if (silent) silent_at_[current_] = now_ms != 0 ? now_ms : 1;
  NextLocked(now_ms);
}

void ControllerChoice::Next(int64_t now_ms) {
  MutexLock<Mutex> l(mu_);
  NextLocked(now_ms);
}

void ControllerChoice::FollowLeader(std::string_view leader, int64_t now_ms) {
  MutexLock<Mutex> l(mu_);
  const std::string named = Normalize(leader);
  if (!named.empty()) {
    for (size_t i = 0; i < addresses_.size(); ++i) {
      if (i != current_ && addresses_[i] == named && !PassedOver(i, now_ms)) {
        current_ = i;
        return;
      }
    }
  }
  NextLocked(now_ms);
}

std::string ControllerChoice::Normalize(std::string_view a) {
  while (!a.empty() && a.back() == '/') a.remove_suffix(1);
  if (a.starts_with("https://")) return "tls:" + std::string(a.substr(8));
  if (a.starts_with("http://")) return "tcp:" + std::string(a.substr(7));
  return std::string(a);
}

}  // namespace berth::agent
