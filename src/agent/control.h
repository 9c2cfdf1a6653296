// The control channel from the agent to a running supervisor: requests (cancel, signal) kept in
// DIR/control as a JSON list, each with a sequence number, followed by SIGUSR1 to the supervisor.
// The agent appends under an flock on DIR/control.lock and replaces the file atomically (write
// to a temporary file, rename), so that requests sent in quick succession are all kept and the
// supervisor never reads half a file; the supervisor acts on every request whose number is above
// the last one it handled, whenever SIGUSR1 arrives and once a second (a signal sent before the
// supervisor installed its handler is not lost).
//
//   {"requests": [{"seq": 1, "action": "signal", "signal": 10, "batch_only": true},
//                 {"seq": 2, "action": "time_limit", "time_limit": 7200},
//                 {"seq": 3, "action": "cancel"}]}
//
// Thread safety: functions may be called from any thread; the flock serialises writers of one
// folder, across processes too.
#ifndef BERTH_AGENT_CONTROL_H_
#define BERTH_AGENT_CONTROL_H_

#include <cstdint>
#include <string>
#include <vector>

#include "common/status.h"

namespace berth::agent {

// Which of a job's processes a signal reaches, as Slurm's scancel --signal chooses: by default the
// job's steps (what its srun launched: the tasks, here and on the step's other nodes), with -b
// the batch shell alone, with -f every process.
struct SignalScope {
  bool batch_only = false;
  bool full = false;
  int32_t step = -1;  // one step only (scancel JOB.STEP): its tasks; -1: every step
};

struct ControlRequest {
  enum class Action { kCancel, kSignal, kTimeLimit };
  int64_t seq = 0;
  Action action = Action::kCancel;
  int32_t signal = 0;       // kSignal only
  bool batch_only = false;  // kSignal only: the batch shell alone
  bool full = false;        // kSignal only: every process (else the job's steps)
  int32_t step = -1;        // kSignal only: that step alone (-1: all of them)
  int64_t time_limit = 0;   // kTimeLimit only: the new limit in seconds from the job's start
};

// Appends `request` (its seq is assigned: one above the last) to dir/control.
Status AppendControlRequest(const std::string& dir, ControlRequest request);

// Every request in dir/control, in order; none when the file does not exist.
Result<std::vector<ControlRequest>> ReadControlRequests(const std::string& dir);

}  // namespace berth::agent

#endif  // BERTH_AGENT_CONTROL_H_
