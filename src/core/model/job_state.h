// Slurm's job states and the transitions berth allows between them.
#ifndef BERTH_CORE_MODEL_JOB_STATE_H_
#define BERTH_CORE_MODEL_JOB_STATE_H_

#include <cstdint>
#include <optional>
#include <string_view>

namespace berth::core {

enum class JobState : uint8_t {
  kPending,
  kConfiguring,  // allocated, waiting for its nodes to power up
  kRunning,
  kSuspended,
  kCompleting,  // ended; epilog / cleanup still running on its nodes
  kCompleted,
  kCancelled,
  kFailed,
  kTimeout,
  kNodeFail,
  kPreempted,
  kBootFail,
  kDeadline,
  kOutOfMemory,
};
inline constexpr int kNumJobStates = 14;

std::string_view JobStateName(JobState s);       // "PENDING", "OUT_OF_MEMORY", ...
std::string_view JobStateShortName(JobState s);  // squeue's "PD", "R", "CG", "OOM", ...
std::optional<JobState> ParseJobState(std::string_view name);  // either form, any case

// A final state: the job will not run again unless requeued.
bool IsTerminal(JobState s);
// Holds resources on nodes (CONFIGURING, RUNNING, SUSPENDED, COMPLETING).
bool HoldsResources(JobState s);

// Whether `from -> to` is a valid transition. Requeue is a transition back to kPending, allowed
// from every state that has started and from the terminal states (as `scontrol requeue` does).
bool IsValidTransition(JobState from, JobState to);

}  // namespace berth::core

#endif  // BERTH_CORE_MODEL_JOB_STATE_H_
