// Power saving in virtual time (docs/sim.md, "Power saving"): the controller's PowerSaver
// (src/controller/power.h) with a simulated boot. Nodes the scheduler placed jobs on
// while they were powered down are resumed (ResumeRate), come up `boot_time` seconds later, and
// their CONFIGURING jobs then start; nodes idle for SuspendTime power down (SuspendRate,
// SuspendExcNodes[:N], SuspendExcParts) through POWERING_DOWN for SuspendTimeout. Boots always
// succeed (ResumeTimeout is not modelled). Counts the node-hours powered and the boots.
#ifndef BERTH_SIM_POWER_H_
#define BERTH_SIM_POWER_H_

#include <cstdint>
#include <deque>
#include <functional>
#include <set>
#include <string>
#include <utility>
#include <vector>

#include "common/time.h"
#include "core/state/cluster_state.h"

namespace berth::sim {

struct PowerOptions {
  bool enabled = false;        // off: the simulator does exactly what it did without power saving
  bool all_down = false;       // every node starts powered down (else only cloud nodes do)
  Duration boot_time = 120;    // resume to up
  Duration suspend_time = -1;  // idle seconds before a node powers down; -1 never
  Duration suspend_timeout = 30;  // POWERING_DOWN lasts this long (still powered)
  int32_t resume_rate = 300;      // nodes resumed per minute at most; 0 no limit
  int32_t suspend_rate = 60;      // nodes suspended per minute at most; 0 no limit
  std::vector<std::string> suspend_exc_nodes;
  int32_t suspend_exc_nodes_keep = 0;
  std::vector<std::string> suspend_exc_parts;
};

struct PowerStats {
  bool enabled = false;
  Duration suspend_time = -1;
  Duration boot_time = 0;
  double node_hours = 0;  // powered (up, powering up or down) within [window_start, window_end]
  int64_t boots = 0;      // resumes
  int64_t suspends = 0;
  Time window_start = 0;  // the first submission
  Time window_end = 0;    // the last job's end
};

class PowerModel {
 public:
  PowerModel(const PowerOptions& options, core::ClusterState& cs);

  // At the first event time: powers down every node with all_down, starts the accounting.
  void Start(Time t);
  // The next time something happens by itself: a boot or a power-down completing, a node
  // reaching SuspendTime, a rate limit letting more through. kInfinite when none.
  Time NextEvent() const;
  // Boots and power-downs that complete at `t`; CONFIGURING jobs whose nodes are all up start
  // (`started` is called with each, in id order).
  void CompleteAt(Time t, const std::function<void(core::JobId)>& started);
  // After the scheduling pass at `t`: resumes the nodes it woke, suspends idle ones.
  void Tick(Time t);
  PowerStats Finish(Time window_end) const;

 private:
  void Suspend(Time t);

  PowerOptions o_;
  core::ClusterState& cs_;
  Time start_ = 0;
  std::vector<Time> powered_since_;               // kNoTime: powered down
  std::vector<Time> resume_asked_;                // kNoTime: not resuming
  std::vector<std::pair<Time, Time>> intervals_;  // closed powered intervals
  std::set<std::pair<Time, uint32_t>> boots_;     // (up at, node)
  std::set<std::pair<Time, uint32_t>> downs_;     // (powered down at, node)
  std::deque<Time> resume_times_, suspend_times_;
  Time next_check_ = kInfinite;
  int64_t boot_count_ = 0;
  int64_t suspend_count_ = 0;
};

}  // namespace berth::sim

#endif  // BERTH_SIM_POWER_H_
