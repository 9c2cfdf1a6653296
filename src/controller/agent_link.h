// The controller's link to its node agents: one session per node (when its agent was last heard
// from, whether it is registered) and the commands sent to it, typed (agent/agent_commands.h) and
// queued on the AgentHub that the agent polls.
//
// Fencing: an agent that cannot reach the controller for FenceSeconds stops its jobs itself; the
// controller calls a node silent past node_timeout_s down (CheckNodes) only later, so a job is
// never requeued while it may still run (docs/security.md).
//
// Thread safety: not thread-safe; the controller's state thread owns it (the AgentHub under it
// is thread-safe: API threads poll it). Used by Controller::Impl (registration and status in
// controller_agents.cc, node timeouts in controller_state.cc, power, node actions).
#ifndef BERTH_CONTROLLER_AGENT_LINK_H_
#define BERTH_CONTROLLER_AGENT_LINK_H_

#include <algorithm>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "agent/agent_commands.h"
#include "common/status.h"
#include "common/time.h"
#include "controller/hubs.h"

namespace berth::controller {

struct AgentSession {
  Time last_seen = kNoTime;
  bool registered = false;
};

class AgentLink {
 public:
  // REQUIRES: `hub` outlives the link.
  explicit AgentLink(AgentHub* hub) : hub_(hub) {}

  // How long an agent may go without reaching the controller before it stops its jobs: half the
  // node timeout (at least a second), so that they are dead well before the controller calls
  // the node down and requeues them elsewhere.
  static int FenceSeconds(int node_timeout_s) { return std::max(node_timeout_s / 2, 1); }

  // At start-up: the node counts as heard from `now` (its jobs get a node timeout of grace).
  void Expect(const std::string& node, Time now) { sessions_[node].last_seen = now; }
  // The node's agent registered: heard now, connected, and what was queued for it is dropped
  // (the registration reconciles afresh). Returns the dropped commands no agent acknowledged,
  // decoded, in the order they were sent (the reconciliation sends some of them again).
  std::vector<agent::AgentCommand> Register(const std::string& node, Time now);
  // A status report: FailedPrecondition unless the agent is registered (then it was heard now).
  Status Heard(const std::string& node, Time now);
  // The agent must register again before it counts as connected (timed out, powered down).
  void Disconnect(const std::string& node) { sessions_[node].registered = false; }
  bool Registered(const std::string& node) const;
  // Not heard from for more than `timeout` seconds at `now` (a node never heard from is).
  bool Silent(const std::string& node, Time now, Duration timeout) const;
  // The node's session; nullopt for a node the link never saw.
  std::optional<AgentSession> Find(const std::string& node) const;

  // Queues a command for the node's agent (delivered when it next polls).
  void Send(const std::string& node, const agent::AgentCommand& command);
  // Queues a command encoded before (EncodeAgentCommand), e.g. a step part's start sent again.
  void SendEncoded(const std::string& node, const std::string& command);

 private:
  AgentHub* hub_;
  std::map<std::string, AgentSession> sessions_;  // by node name
};

}  // namespace berth::controller

#endif  // BERTH_CONTROLLER_AGENT_LINK_H_
