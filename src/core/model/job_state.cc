#include "core/model/job_state.h"

#include <array>
#include <cctype>
#include <string>

namespace berth::core {
namespace {

struct StateNames {
  std::string_view name;
  std::string_view short_name;
};

constexpr std::array<StateNames, kNumJobStates> kNames = {{
    {"PENDING", "PD"},
    {"CONFIGURING", "CF"},
    {"RUNNING", "R"},
    {"SUSPENDED", "S"},
    {"COMPLETING", "CG"},
    {"COMPLETED", "CD"},
    {"CANCELLED", "CA"},
    {"FAILED", "F"},
    {"TIMEOUT", "TO"},
    {"NODE_FAIL", "NF"},
    {"PREEMPTED", "PR"},
    {"BOOT_FAIL", "BF"},
    {"DEADLINE", "DL"},
    {"OUT_OF_MEMORY", "OOM"},
}};

}  // namespace

std::string_view JobStateName(JobState s) {
  return kNames[static_cast<int>(s)].name;
}
std::string_view JobStateShortName(JobState s) {
  return kNames[static_cast<int>(s)].short_name;
}

std::optional<JobState> ParseJobState(std::string_view name) {
  std::string upper(name);
  for (char& c : upper) c = static_cast<char>(std::toupper(static_cast<unsigned char>(c)));
  for (int i = 0; i < kNumJobStates; ++i) {
    if (upper == kNames[i].name || upper == kNames[i].short_name) return static_cast<JobState>(i);
  }
  if (upper == "CANCELED") return JobState::kCancelled;
  return std::nullopt;
}

bool IsTerminal(JobState s) {
  switch (s) {
    case JobState::kCompleted:
    case JobState::kCancelled:
    case JobState::kFailed:
    case JobState::kTimeout:
    case JobState::kNodeFail:
    case JobState::kPreempted:
    case JobState::kBootFail:
    case JobState::kDeadline:
    case JobState::kOutOfMemory:
      return true;
    default:
      return false;
  }
}

bool HoldsResources(JobState s) {
  return s == JobState::kConfiguring || s == JobState::kRunning || s == JobState::kSuspended ||
         s == JobState::kCompleting;
}

bool IsValidTransition(JobState from, JobState to) {
  using S = JobState;
  if (from == to) return false;
  switch (from) {
    case S::kPending:
      return to == S::kConfiguring || to == S::kRunning || to == S::kCancelled ||
             to == S::kFailed || to == S::kDeadline;
    case S::kConfiguring:
      return to == S::kRunning || to == S::kCancelled || to == S::kBootFail || to == S::kNodeFail ||
             to == S::kPending || to == S::kDeadline;
    case S::kRunning:
      return to != S::kConfiguring;
    case S::kSuspended:
      return to == S::kRunning || to == S::kCancelled || to == S::kNodeFail ||
             to == S::kPreempted || to == S::kPending || to == S::kCompleting ||
             to == S::kTimeout || to == S::kDeadline;
    case S::kCompleting:
      // The final state is known when completion began; COMPLETING only resolves to it, or
      // back to the queue when the job is requeued.
      return IsTerminal(to) || to == S::kPending;
    default:  // terminal
      return to == S::kPending;
  }
}

}  // namespace berth::core
