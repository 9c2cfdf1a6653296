// The commands the controller sends a node agent (GET /v1/agents/NODE/commands), one struct per
// kind, with their one encoding: a JSON object with "kind", "job_id" and "attempt", plus the
// kind's own fields. The controller writes commands only with EncodeAgentCommand and the agent
// reads them only with DecodeAgentCommand (as control.h does for agent -> supervisor).
//
//   {"kind": "launch", "job_id": 12, "attempt": 0, "spec": {...}, "job_token": "..."}
//   {"kind": "cancel", "job_id": 12, "attempt": 0}
//   {"kind": "signal", "job_id": 12, "attempt": 0, "signal": 10, "batch_only": true}
//   {"kind": "time_limit", "job_id": 12, "attempt": 0, "time_limit": 7200}
//   {"kind": "step", "job_id": 12, "attempt": 0, "step_id": 3, "spec": {...}}
//   {"kind": "end_steps", "job_id": 12, "attempt": 0}
//   {"kind": "step_signal", "job_id": 12, "attempt": 0, "step_id": 3, "signal": 15}
//   {"kind": "stream", "job_id": 12, "attempt": 0, "stream_id": "9f..", "request": {...}}
//   {"kind": "noop"}     (a launch the controller no longer means to deliver)
//
// The delivery adds "seq" (the command's number in the node's queue); Decode ignores it.
// Thread safety: pure functions. Used by src/controller (controller_agents.cc, controller_steps.cc,
// controller_jobs.cc, controller_state.cc) and src/agent/agent_daemon.cc.
#ifndef BERTH_AGENT_AGENT_COMMANDS_H_
#define BERTH_AGENT_AGENT_COMMANDS_H_

#include <atomic>
#include <cstdint>
#include <string>
#include <string_view>
#include <variant>

#include "agent/control.h"
#include "agent/launch.h"
#include "common/status.h"

namespace berth::agent {

// Which attempt of which job a command is about.
struct CommandTarget {
  uint32_t job_id = 0;
  int32_t attempt = 0;
  bool operator==(const CommandTarget&) const = default;
};

// Starts the job's batch step (on its first node).
struct LaunchCommand {
  CommandTarget target;
  LaunchSpec spec;
  std::string job_token;  // srun's step token on multi-node jobs over TLS; "" for none
};
// Ends the attempt (a launch under way is cancelled once its supervisor exists).
struct CancelCommand {
  CommandTarget target;
};
// Signals the attempt's job steps (the processes its srun launched), or only its batch shell,
// or every process: as Slurm's scancel --signal without a flag, with -b, with -f.
struct SignalCommand {
  CommandTarget target;
  int32_t signal = 15;
  bool batch_only = false;
  bool full = false;
  int32_t step = -1;  // scancel JOB.STEP: that step's tasks on the batch node (-1: every step)
};
// A running attempt's new time limit, in seconds from its start.
struct TimeLimitCommand {
  CommandTarget target;
  int64_t time_limit = 0;
};
// Starts this node's part of a job step (srun across hosts).
struct StepCommand {
  CommandTarget target;
  uint32_t step_id = 0;
  LaunchSpec spec;
  std::string job_token;  // the part's srun reaches the controller with it over TLS; "" for none
};
// Ends every step part of the attempt on this node.
struct EndStepsCommand {
  CommandTarget target;
};
// Signals one step part.
struct StepSignalCommand {
  CommandTarget target;
  uint32_t step_id = 0;
  int32_t signal = 15;
};
// Opens a pod stream (kubectl exec; docs/adr/0006-pod-streams.md): the agent connects back to
// GET /v1/agents/NODE/streams/STREAM_ID and serves `request` (pod_stream.h) there.
struct StreamCommand {
  CommandTarget target;
  std::string stream_id;
  std::string request;  // a JSON object, kept as text: the controller does not read it
};
// Nothing to do (it only advances the node's sequence).
struct NoopCommand {};

using AgentCommand =
    std::variant<LaunchCommand, CancelCommand, SignalCommand, TimeLimitCommand, StepCommand,
                 EndStepsCommand, StepSignalCommand, StreamCommand, NoopCommand>;

std::string EncodeAgentCommand(const AgentCommand& command);
// InvalidArgument, naming what is wrong, for text that is not a command this build knows.
Result<AgentCommand> DecodeAgentCommand(std::string_view text);

// The fence against a deposed leader of an HA group (docs/ha.md): the controller's answers to
// an agent (registration, commands) carry the leader's epoch, and the agent remembers the
// highest it has heard. An answer with a lower epoch comes from a controller that another has
// replaced since, and its commands must not run. Epoch 0 is a controller alone: always admitted.
// Thread safety: Admit may be called from any thread.
class EpochFence {
 public:
  // True when `epoch` is 0 or at least the highest seen (which it then becomes).
  bool Admit(int64_t epoch) {
    if (epoch <= 0) return true;
    int64_t seen = seen_.load();
    while (epoch > seen && !seen_.compare_exchange_weak(seen, epoch)) {
    }
    return epoch >= seen;
  }
  int64_t seen() const { return seen_.load(); }

 private:
  std::atomic<int64_t> seen_{0};
};

}  // namespace berth::agent

#endif  // BERTH_AGENT_AGENT_COMMANDS_H_
