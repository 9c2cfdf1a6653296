// Advance reservations (Slurm's `scontrol create reservation`): a set of nodes held from a start
// to an end time for some users or accounts, or for maintenance. Plain data; ClusterState keeps
// them and the scheduler plans around them (docs/scheduling.md, "Reservations").
#ifndef BERTH_CORE_MODEL_RESERVATION_H_
#define BERTH_CORE_MODEL_RESERVATION_H_

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "common/status.h"
#include "common/time.h"

namespace berth::core {

// Slurm's reservation flags that berth implements (a bit set).
enum ResvFlag : uint32_t {
  kResvMaint = 1u << 0,       // maintenance: nodes show `maint`, pending reason says so
  kResvIgnoreJobs = 1u << 1,  // created even where jobs still run at the start
  kResvDaily = 1u << 2,       // repeats every day
  kResvWeekly = 1u << 3,      // repeats every week
  kResvSpecNodes = 1u << 4,   // its nodes were named (Nodes=), not picked (NodeCnt=): shown only
};

struct ResvSpec {
  std::string name;
  Time start = 0;
  Time end = 0;                       // kInfinite for Duration=UNLIMITED
  std::vector<std::string> nodes;     // node names, in node order
  std::vector<std::string> users;     // allowed users (empty: only by account)
  std::vector<std::string> accounts;  // allowed accounts (empty: only by user)
  std::string partition;              // recorded (and where NodeCnt picks from)
  uint32_t flags = 0;

  bool Has(ResvFlag f) const { return (flags & f) != 0; }
  // The repeat period (a day, a week) or 0.
  Duration Period() const;
  // Active at time t: start <= t < end.
  bool ActiveAt(Time t) const { return start <= t && t < end; }
  // Whether the job of `user` charged to `account` may use it.
  bool Allows(std::string_view user, std::string_view account) const;
};

// "MAINT,IGNORE_JOBS,DAILY" (Slurm's order), or "" for none.
std::string ResvFlagsText(uint32_t flags);
// Parses Slurm's Flags= value (comma-separated, case-insensitive). Unknown or unsupported flags
// are an error naming them.
Result<uint32_t> ParseResvFlags(std::string_view text);

// A repeating reservation whose occurrence ended by `now` moved to its next occurrence that has
// not ended; a non-repeating one unchanged. REQUIRES: spec.Period() > 0 or spec.end > now.
ResvSpec NextOccurrence(ResvSpec spec, Time now);

}  // namespace berth::core

#endif  // BERTH_CORE_MODEL_RESERVATION_H_
