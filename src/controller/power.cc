// The power-saving component (power.h; docs/autoscaling.md).
#include "controller/power.h"

#include <algorithm>
#include <cstdio>

#include "common/hostlist.h"
#include "config/power_saving.h"

namespace berth::controller {

using json = nlohmann::json;

PowerSaver::PowerSaver(config::PowerSaving settings, MetricsCounters* metrics)
    : settings_(std::move(settings)), metrics_(metrics) {}

Status PowerSaver::Start(core::ClusterState& cs, StartContext ctx, Time now) {
  cs.SetPowerSaving(settings_.enabled());
  if (!settings_.enabled()) return Status::Ok();
  const bool local = settings_.resume_program == "local";
  if (local != (settings_.suspend_program == "local") && !settings_.suspend_program.empty()) {
    return Status::InvalidArgument(
        "ResumeProgram and SuspendProgram must both be 'local' or both be programs");
  }
  if (ctx.provider) {
    provider_ = std::move(ctx.provider);
  } else if (local) {
    std::map<std::string, core::NodeSpec> nodes;
    for (const core::NodeSpec& n : ctx.nodes) nodes[n.name] = n;
    provider_ =
        std::make_unique<LocalProvider>(ctx.self_exe, ctx.socket_path, ctx.home, std::move(nodes));
  } else {
    provider_ =
        std::make_unique<ProgramProvider>(settings_.resume_program, settings_.suspend_program);
  }
  fail_program_ = std::make_unique<ProgramProvider>("", "");
  // Restored jobs waiting for their nodes, and restored jobs on nodes that were powered up for
  // them: those nodes are resumed again (their agents, if still there, register and adopt).
  configuring_.insert(ctx.configuring.begin(), ctx.configuring.end());
  for (uint32_t i = 0; i < cs.num_nodes(); ++i) {
    const core::NodeInfo& n = cs.node(i);
    if (n.health == core::NodeHealth::kPoweredDown && !n.jobs.empty()) {
      (void)cs.SetNodeHealth(i, core::NodeHealth::kPoweringUp, "", now);
    }
  }
  return Status::Ok();
}

void PowerSaver::Stop() {
  if (provider_) provider_->Shutdown();
}

void PowerSaver::JobConfiguring(core::JobId id) {
  configuring_.insert(id);
  scan_needed_ = true;
}

void PowerSaver::Event(const std::string& action, const std::vector<std::string>& nodes,
                       const std::string& reason, Time now, Effects* out) {
  const std::string list = hostlist::Compress(nodes);
  json e = {{"time", now}, {"action", action}, {"nodes", list}, {"reason", reason}};
  std::fprintf(stderr, "berth controller: power: %s %s: %s\n", action.c_str(), list.c_str(),
               reason.c_str());
  out->events.push_back(json{{"type", "power"}, {"power", e}}.dump());
  MutexLock l(mu_);
  events_.push_back(std::move(e));
  if (events_.size() > kMaxEvents) events_.pop_front();
}

std::string JobsNeeding(const core::ClusterState& cs, const std::vector<uint32_t>& nodes) {
  std::set<core::JobId> ids;
  for (uint32_t i : nodes) ids.insert(cs.node(i).jobs.begin(), cs.node(i).jobs.end());
  std::string out;
  for (core::JobId id : ids) {
    const core::Job* j = cs.FindJob(id);
    if (j == nullptr) continue;
    int64_t cpus = 0, gpus = 0, mem = 0;
    std::string gpu_type;
    for (const core::NodeAllocation& a : j->alloc.nodes) {
      cpus += a.cpus;
      gpus += a.gpu_count();
      mem += a.mem_mib;
      const core::NodeInfo& n = cs.node(a.node);
      for (size_t d = 0; d < n.spec.gpus.size() && gpu_type.empty(); ++d) {
        if ((a.gpu_mask >> d) & 1) gpu_type = n.spec.gpus[d];
      }
    }
    const size_t count = j->alloc.nodes.size();
    std::string need = std::to_string(count) + (count == 1 ? " node, " : " nodes, ") +
                       std::to_string(cpus) + (cpus == 1 ? " CPU" : " CPUs");
    if (gpus > 0) {
      need += ", " + std::to_string(gpus) + " " + (gpu_type.empty() ? "" : gpu_type + " ") +
              (gpus == 1 ? "GPU" : "GPUs");
    }
    need += ", " + std::to_string(mem) + "M";
    out += (out.empty() ? "" : "; ") + std::string("job ") + std::to_string(id) + " needs " + need;
  }
  return out.empty() ? "no job waits for them any more" : "for " + out;
}

void PowerSaver::Tick(core::ClusterState& cs, Time now, bool nodes_changed, Effects* out) {
  if (!provider_) return;
  // Timeouts and idle times are in whole seconds: between those, only a pass that woke nodes
  // or a node that changed (an agent registered) gives this tick anything to do. It runs after
  // every batch of commands, so it must not scan every node each time.
  if (!scan_needed_ && !nodes_changed && now == scanned_at_) return;
  scan_needed_ = false;
  scanned_at_ = now;
  for (const std::string& failure : provider_->Reap()) {
    std::fprintf(stderr, "berth controller: power: %s\n", failure.c_str());
  }
  (void)fail_program_->Reap();
  const std::vector<uint32_t> timed_out = ResumeWokenNodes(cs, now, out);
  if (!timed_out.empty()) FailResumes(cs, timed_out, now, out);
  StartConfiguredJobs(cs, now, out);
  FinishSuspends(cs, now, out);
  SuspendIdleNodes(cs, now, out);
}

std::vector<uint32_t> PowerSaver::ResumeWokenNodes(core::ClusterState& cs, Time now, Effects* out) {
  std::vector<uint32_t> to_resume;
  std::vector<uint32_t> timed_out;
  for (uint32_t i = 0; i < cs.num_nodes(); ++i) {
    const core::NodeInfo& n = cs.node(i);
    auto asked = resume_asked_.find(n.spec.name);
    if (n.health != core::NodeHealth::kPoweringUp) {
      if (asked != resume_asked_.end()) {
        if (n.health == core::NodeHealth::kUp) {
          Event("up", {n.spec.name},
                "registered " + std::to_string(now - asked->second) + " s after its resume", now,
                out);
        }
        resume_asked_.erase(asked);
      }
      continue;
    }
    if (asked == resume_asked_.end()) {
      to_resume.push_back(i);
    } else if (now - asked->second > settings_.resume_timeout) {
      timed_out.push_back(i);
    }
  }
  const size_t allowed = config::RateAllowance(resume_times_, settings_.resume_rate, now);
  if (to_resume.size() > allowed) to_resume.resize(allowed);
  if (to_resume.empty()) return timed_out;
  std::vector<std::string> names;
  for (uint32_t i : to_resume) names.push_back(cs.node(i).spec.name);
  Status st = provider_->Resume(names);
  const std::string why = JobsNeeding(cs, to_resume);
  Event("resume", names, st.ok() ? why : why + " (failed: " + st.message() + ")", now, out);
  for (const std::string& name : names) {
    resume_asked_[name] = now;
    resume_times_.push_back(now);
  }
  if (metrics_ != nullptr) metrics_->power_resumes += names.size();
  out->nodes_changed = true;
  return timed_out;
}

void PowerSaver::FailResumes(core::ClusterState& cs, const std::vector<uint32_t>& timed_out,
                             Time now, Effects* out) {
  const int64_t timeout = settings_.resume_timeout;
  std::vector<std::string> names;
  for (uint32_t i : timed_out) names.push_back(cs.node(i).spec.name);
  std::string requeued;
  for (uint32_t i : timed_out) {
    const std::vector<core::JobId> jobs = cs.node(i).jobs;
    (void)cs.SetNodeHealth(i, core::NodeHealth::kDown, "ResumeTimeout reached", now);
    resume_asked_.erase(cs.node(i).spec.name);
    for (core::JobId id : jobs) {
      const core::Job* job = cs.FindJob(id);
      if (job == nullptr || job->state != core::JobState::kConfiguring) continue;
      core::JobOutcome o;
      o.state = core::JobState::kNodeFail;
      o.end_time = now;
      if (!cs.EndJob(id, o, /*requeue=*/true).ok()) continue;
      configuring_.erase(id);
      out->messages.emplace_back(id, "node " + cs.node(i).spec.name +
                                         " did not resume within ResumeTimeout (" +
                                         std::to_string(timeout) + " s); requeued");
      out->touched.push_back(id);
      requeued += (requeued.empty() ? "" : ",") + std::to_string(id);
    }
  }
  Event("resume_timeout", names,
        "not registered within ResumeTimeout (" + std::to_string(timeout) + " s): DOWN" +
            (requeued.empty() ? "" : "; requeued job " + requeued),
        now, out);
  if (metrics_ != nullptr) metrics_->resume_timeouts += names.size();
  (void)fail_program_->Run("ResumeFailProgram", settings_.resume_fail_program, names);
  out->nodes_changed = true;
  out->reschedule = true;
}

void PowerSaver::StartConfiguredJobs(core::ClusterState& cs, Time now, Effects* out) {
  for (auto it = configuring_.begin(); it != configuring_.end();) {
    const core::Job* job = cs.FindJob(*it);
    if (job == nullptr || job->state != core::JobState::kConfiguring) {
      it = configuring_.erase(it);
      continue;
    }
    if (!cs.FinishConfiguring(*it, now).ok()) {
      ++it;
      continue;
    }
    out->touched.push_back(*it);
    out->launches.push_back(*it);
    it = configuring_.erase(it);
  }
}

void PowerSaver::FinishSuspends(core::ClusterState& cs, Time now, Effects* out) {
  for (auto it = suspend_asked_.begin(); it != suspend_asked_.end();) {
    std::optional<uint32_t> i = cs.FindNode(it->first);
    if (!i || cs.node(*i).health != core::NodeHealth::kPoweringDown) {
      it = suspend_asked_.erase(it);
      continue;
    }
    if (now - it->second < settings_.suspend_timeout) {
      ++it;
      continue;
    }
    (void)cs.SetNodeHealth(*i, core::NodeHealth::kPoweredDown, "", now);
    it = suspend_asked_.erase(it);
    out->nodes_changed = true;
    out->reschedule = true;
  }
}

void PowerSaver::SuspendIdleNodes(core::ClusterState& cs, Time now, Effects* out) {
  if (settings_.suspend_program.empty() || settings_.suspend_time < 0) return;
  std::vector<uint32_t> idle = config::SuspendCandidates(cs, settings_, now);
  const size_t may = config::RateAllowance(suspend_times_, settings_.suspend_rate, now);
  if (idle.size() > may) idle.resize(may);
  if (idle.empty()) return;
  std::vector<std::string> names;
  for (uint32_t i : idle) names.push_back(cs.node(i).spec.name);
  Status st = provider_->Suspend(names);
  for (uint32_t i : idle) {
    (void)cs.SetNodeHealth(i, core::NodeHealth::kPoweringDown, "", now);
    suspend_asked_[cs.node(i).spec.name] = now;
    suspend_times_.push_back(now);
    out->disconnected.push_back(cs.node(i).spec.name);
  }
  Event("suspend", names,
        "idle for SuspendTime (" + std::to_string(settings_.suspend_time) + " s)" +
            (st.ok() ? "" : " (failed: " + st.message() + ")"),
        now, out);
  if (metrics_ != nullptr) metrics_->power_suspends += names.size();
  out->nodes_changed = true;
  out->reschedule = true;
}

json PowerSaver::View() const {
  const config::PowerSaving& p = settings_;
  json settings = {{"resume_program", p.resume_program},
                   {"suspend_program", p.suspend_program},
                   {"suspend_time", p.suspend_time},
                   {"suspend_timeout", p.suspend_timeout},
                   {"resume_timeout", p.resume_timeout},
                   {"resume_rate", p.resume_rate},
                   {"suspend_rate", p.suspend_rate},
                   {"suspend_exc_nodes", hostlist::Compress(p.suspend_exc_nodes)},
                   {"suspend_exc_parts", p.suspend_exc_parts}};
  json events = json::array();
  {
    MutexLock l(mu_);
    for (const json& e : events_) events.push_back(e);
  }
  return {{"enabled", p.enabled()}, {"settings", settings}, {"events", events}};
}

}  // namespace berth::controller
