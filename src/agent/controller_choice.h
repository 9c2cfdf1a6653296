// Which member of an HA group's controller list (docs/ha.md) an agent talks to. A failover must
// reach the new leader well within the agent's fence (half the node timeout), or the node stops
// its jobs and the new leader runs them again: so the agent goes where a standby says the leader
// is, and it does not wait on a member that went silent (a cut link: each try is a connect
// timeout of seconds) while another member answers. A member that refused at once (its process
// gone, or a standby turning leader) costs nothing to try again and is not set aside.
//
// Thread safety: every method may be called from any thread (the agent's command and report
// loops share one choice).
#ifndef BERTH_AGENT_CONTROLLER_CHOICE_H_
#define BERTH_AGENT_CONTROLLER_CHOICE_H_

#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "common/thread_annotations.h"

namespace berth::agent {

class ControllerChoice {
 public:
  // How long a silent member is passed over while another is there to try.
  static constexpr int64_t kSilentPassMs = 10000;

  // `addresses`: the list's members (tls:H:P, tcp:H:P or unix:PATH); the first is tried first.
  explicit ControllerChoice(std::vector<std::string> addresses);

  size_t size() const { return addresses_.size(); }
  const std::vector<std::string>& addresses() const { return addresses_; }
  // The member in use.
  std::string Current() const EXCLUDES(mu_);
  // The member in use did not answer at `now_ms`: when `silent` (a timeout, an unreachable
  // host) it is passed over for kSilentPassMs; either way the next member is in use.
  void Failed(bool silent, int64_t now_ms) EXCLUDES(mu_);
  // Moves on to the next member of the list that is not passed over (the member in use is a
  // standby, or deposed); when every other one is, the one silent longest ago.
  void Next(int64_t now_ms) EXCLUDES(mu_);
  // A standby answered, naming the leader's address (its X-Berth-Leader: https://H:P, tls:H:P,
  // ...; empty while none is elected): the named member is in use when it is in the list and
  // not passed over, otherwise the next one (Next).
  void FollowLeader(std::string_view leader, int64_t now_ms) EXCLUDES(mu_);

  // An advertised address in the list's form: https://H:P/ -> tls:H:P, http://H:P -> tcp:H:P.
  static std::string Normalize(std::string_view address);

 private:
  bool PassedOver(size_t i, int64_t now_ms) const REQUIRES(mu_);
  void NextLocked(int64_t now_ms) REQUIRES(mu_);

  const std::vector<std::string> addresses_;
  mutable Mutex mu_;
  std::vector<int64_t> silent_at_ GUARDED_BY(mu_);  // when each last went silent; 0: never
  size_t current_ GUARDED_BY(mu_) = 0;
};

}  // namespace berth::agent

#endif  // BERTH_AGENT_CONTROLLER_CHOICE_H_
