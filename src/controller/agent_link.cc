#include "controller/agent_link.h"

namespace berth::controller {

std::vector<agent::AgentCommand> AgentLink::Register(const std::string& node, Time now) {
  sessions_[node] = {now, true};
  std::vector<agent::AgentCommand> dropped;
  for (const std::string& text : hub_->Clear(node)) {
    Result<agent::AgentCommand> c = agent::DecodeAgentCommand(text);
    if (c.ok()) dropped.push_back(std::move(*c));  // the link encoded every one of them
  }
  return dropped;
}

Status AgentLink::Heard(const std::string& node, Time now) {
  AgentSession& s = sessions_[node];
  if (!s.registered) return Status::FailedPrecondition("node " + node + " must register again");
  s.last_seen = now;
  return Status::Ok();
}

bool AgentLink::Registered(const std::string& node) const {
  auto it = sessions_.find(node);
  return it != sessions_.end() && it->second.registered;
}

bool AgentLink::Silent(const std::string& node, Time now, Duration timeout) const {
  auto it = sessions_.find(node);
  const Time last = it == sessions_.end() ? AgentSession{}.last_seen : it->second.last_seen;
  return now - last > timeout;
}

std::optional<AgentSession> AgentLink::Find(const std::string& node) const {
  auto it = sessions_.find(node);
  if (it == sessions_.end()) return std::nullopt;
  return it->second;
}

void AgentLink::Send(const std::string& node, const agent::AgentCommand& command) {
  hub_->Push(node, agent::EncodeAgentCommand(command));
}

void AgentLink::SendEncoded(const std::string& node, const std::string& command) {
  hub_->Push(node, command);
}

}  // namespace berth::controller
