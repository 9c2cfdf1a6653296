// Power saving and autoscaling (docs/autoscaling.md) as one component: resume the nodes the
// scheduler placed jobs on while they were powered down, start those jobs once their nodes are
// all up, give up on a node that does not register within ResumeTimeout (it goes DOWN and its
// waiting jobs back to the queue), and power down nodes idle for SuspendTime, each as fast as its
// rate allows. Every action is an event with its reason: on stderr, on the watch stream (through
// the controller) and in View() (GET /v1/power).
//
// The component changes the cluster state it is handed (node health, jobs ending NODE_FAIL) and
// says what else the controller must do in Effects: the controller owns the job records, the
// agents' sessions and the transaction.
//
// Thread safety: Start, Stop, JobConfiguring, JobEnded and Tick belong to the controller's state
// thread (Start and Stop before it starts and after it stopped); View may be called from any
// thread (the event log is guarded by its own mutex).
#ifndef BERTH_CONTROLLER_POWER_H_
#define BERTH_CONTROLLER_POWER_H_

#include <deque>
#include <map>
#include <memory>
#include <nlohmann/json.hpp>
#include <set>
#include <string>
#include <utility>
#include <vector>

#include "common/status.h"
#include "common/thread_annotations.h"
#include "common/time.h"
#include "config/cluster_config.h"
#include "controller/controller_metrics.h"
#include "controller/power_provider.h"
#include "core/state/cluster_state.h"

namespace berth::controller {

class PowerSaver {
 public:
  // What a tick asks of the controller beyond the cluster state it changed.
  struct Effects {
    std::vector<std::string> events;    // watch events ({"type":"power",...}) as JSON text
    std::vector<core::JobId> touched;   // jobs whose records to rebuild
    std::vector<core::JobId> launches;  // jobs whose nodes are all up: launch them
    // A job's new record message (a job requeued because its node did not resume).
    std::vector<std::pair<core::JobId, std::string>> messages;
    std::vector<std::string> disconnected;  // nodes powered down: their agents' sessions end
    bool nodes_changed = false;
    bool reschedule = false;  // node capacity changed: the scheduler should run again
  };

  // How to make the providers at Start.
  struct StartContext {
    std::string self_exe;     // `berth`, for the local provider's agents
    std::string socket_path;  // the controller's Unix socket, for the local provider's agents
    std::string home;         // where the local provider keeps its agents' folders
    std::vector<core::NodeSpec> nodes;  // the configured nodes (the local provider's sizes)
    // Jobs restored from the store that were waiting for their nodes (CONFIGURING).
    std::vector<core::JobId> configuring;
    // Tests: the provider to use instead of the one the settings name.
    std::unique_ptr<PowerProvider> provider;
  };

  // `metrics` (may be null) gets the resume, suspend and resume-timeout counts.
  PowerSaver(config::PowerSaving settings, MetricsCounters* metrics);

  bool enabled() const { return settings_.enabled(); }

  // Tells the cluster state whether power saving is on; when on, makes the providers (an error
  // when ResumeProgram and SuspendProgram disagree on "local"), adopts the restored jobs waiting
  // for their nodes, and sets nodes powered down that hold jobs powering up again (so that they
  // are resumed). REQUIRES: the state thread has not started.
  Status Start(core::ClusterState& cs, StartContext ctx, Time now);
  // The controller stops: what the provider started for itself (local agents) stops too.
  void Stop();

  // A pass started job `id` on nodes being powered up: it is launched by a later Tick once its
  // nodes are all up (and its nodes are resumed by the next Tick).
  void JobConfiguring(core::JobId id);
  // Job `id` ended while waiting for its nodes (cancelled).
  void JobEnded(core::JobId id) { configuring_.erase(id); }

  // One round, after each batch of commands: resumes woken nodes (ResumeRate), fails resumes
  // past ResumeTimeout, starts the jobs whose nodes are all up, finishes suspends past
  // SuspendTimeout and suspends nodes idle for SuspendTime (SuspendRate). Timeouts and idle
  // times are whole seconds, so a round scans the nodes only when a job started configuring,
  // `nodes_changed` (an agent registered), or the second changed since the last scan.
  void Tick(core::ClusterState& cs, Time now, bool nodes_changed, Effects* out);

  // GET /v1/power: {"enabled", "settings", "events"} (the last kMaxEvents actions). Any thread.
  nlohmann::json View() const;

  static constexpr size_t kMaxEvents = 500;

 private:
  std::vector<uint32_t> ResumeWokenNodes(core::ClusterState& cs, Time now, Effects* out);
  void FailResumes(core::ClusterState& cs, const std::vector<uint32_t>& timed_out, Time now,
                   Effects* out);
  void StartConfiguredJobs(core::ClusterState& cs, Time now, Effects* out);
  void FinishSuspends(core::ClusterState& cs, Time now, Effects* out);
  void SuspendIdleNodes(core::ClusterState& cs, Time now, Effects* out);
  void Event(const std::string& action, const std::vector<std::string>& nodes,
             const std::string& reason, Time now, Effects* out) EXCLUDES(mu_);

  const config::PowerSaving settings_;
  MetricsCounters* const metrics_;

  // State thread only.
  std::unique_ptr<PowerProvider> provider_;        // null when power saving is off
  std::unique_ptr<ProgramProvider> fail_program_;  // runs ResumeFailProgram
  std::map<std::string, Time> resume_asked_;       // node -> when its resume was asked
  std::map<std::string, Time> suspend_asked_;      // node -> when its suspend was asked
  std::deque<Time> resume_times_, suspend_times_;  // the last minute's, for the rates
  std::set<core::JobId> configuring_;              // jobs waiting for their nodes to come up
  bool scan_needed_ = true;
  Time scanned_at_ = kNoTime;

  mutable Mutex mu_;
  std::deque<nlohmann::json> events_ GUARDED_BY(mu_);  // the last kMaxEvents actions
};

// What the jobs on `nodes` need, for a resume event's reason: "for job 12 needs 2 nodes, 16
// CPUs, 4 h100 GPUs, 64000M"; "no job waits for them any more" when none does.
std::string JobsNeeding(const core::ClusterState& cs, const std::vector<uint32_t>& nodes);

}  // namespace berth::controller

#endif  // BERTH_CONTROLLER_POWER_H_
