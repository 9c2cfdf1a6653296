// Power saving's node rules, shared by the controller (src/controller/power.h) and
// the simulator (src/sim/power.cc), so that both suspend the same nodes at the same times
// (docs/autoscaling.md).
//
// Thread safety: pure functions (RateAllowance changes only its argument).
#ifndef BERTH_CONFIG_POWER_SAVING_H_
#define BERTH_CONFIG_POWER_SAVING_H_

#include <algorithm>
#include <cstdint>
#include <deque>
#include <string>
#include <vector>

#include "common/time.h"
#include "core/state/cluster_state.h"

namespace berth::config {

// How many more actions may go at `now` under `rate` per minute (0: no limit), given the times
// of the recent ones; those older than a minute are dropped.
inline size_t RateAllowance(std::deque<Time>& times, int32_t rate, Time now) {
  while (!times.empty() && times.front() <= now - 60) times.pop_front();
  if (rate <= 0) return SIZE_MAX;
  return times.size() >= static_cast<size_t>(rate) ? 0 : rate - times.size();
}

// The nodes that may be suspended at `now`, in node order: up, holding no job, idle (since
// the later of idle_since, state_since and `not_before`) for `rules.suspend_time` seconds, and
// not excluded by SuspendExcNodes (with LIST:N, listed nodes beyond N that are up or coming up
// may go) or SuspendExcParts. `*next_check`, when given, is lowered to the time the first node
// still idling would qualify. `Rules` is config::PowerSaving or anything with its suspend_*
// fields.
template <typename Rules>
std::vector<uint32_t> SuspendCandidates(const core::ClusterState& cs, const Rules& rules, Time now,
                                        Time not_before = 0, Time* next_check = nullptr) {
  using core::NodeHealth;
  size_t keep_listed = 0;  // listed nodes up or coming up
  if (rules.suspend_exc_nodes_keep > 0) {
    for (const std::string& name : rules.suspend_exc_nodes) {
      std::optional<uint32_t> i = cs.FindNode(name);
      if (i && (cs.node(*i).health == NodeHealth::kUp ||
                cs.node(*i).health == NodeHealth::kPoweringUp)) {
        ++keep_listed;
      }
    }
  }
  const auto listed = [](const std::vector<std::string>& v, const std::string& s) {
    return std::find(v.begin(), v.end(), s) != v.end();
  };
  std::vector<uint32_t> out;
  for (uint32_t i = 0; i < cs.num_nodes(); ++i) {
    const core::NodeInfo& n = cs.node(i);
    if (n.health != NodeHealth::kUp || !n.jobs.empty()) continue;
    const Time idle_from = std::max({n.idle_since, n.state_since, not_before});
    if (now - idle_from < rules.suspend_time) {
      if (next_check != nullptr)
        *next_check = std::min(*next_check, idle_from + rules.suspend_time);
      continue;
    }
    if (listed(rules.suspend_exc_nodes, n.spec.name)) {
      if (rules.suspend_exc_nodes_keep == 0 ||
          keep_listed <= static_cast<size_t>(rules.suspend_exc_nodes_keep)) {
        continue;
      }
      --keep_listed;
    }
    bool excluded = false;
    for (int16_t part : n.partitions) {
      excluded = excluded || listed(rules.suspend_exc_parts, cs.partitions()[part].spec.name);
    }
    if (!excluded) out.push_back(i);
  }
  return out;
}

}  // namespace berth::config

#endif  // BERTH_CONFIG_POWER_SAVING_H_
