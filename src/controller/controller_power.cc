// Power saving and autoscaling (docs/autoscaling.md): resume the nodes the scheduler placed jobs
// on while they were powered down, start those jobs when their nodes have registered, give up on
// a node that does not register within ResumeTimeout, and power down nodes idle for SuspendTime.
// Every action is an event with its reason: on stderr, on the watch stream, in GET /v1/power.
#include <unistd.h>

#include <algorithm>
#include <cstdio>
#include <nlohmann/json.hpp>

#include "common/hostlist.h"
#include "config/power_saving.h"
#include "controller/controller_internal.h"
#include "controller/power_provider.h"

namespace berth::controller {

using json = nlohmann::json;

namespace {

constexpr size_t kMaxPowerEvents = 500;

std::string SelfExe() {
  char buf[4096];
  ssize_t n = ::readlink("/proc/self/exe", buf, sizeof(buf) - 1);
  return n > 0 ? std::string(buf, static_cast<size_t>(n)) : std::string("berth");
}

}  // namespace

Status Controller::Impl::StartPower() {
  const config::PowerSaving& p = opt.config.power;
  cs->SetPowerSaving(p.enabled());
  if (!p.enabled()) return Status::Ok();
  const bool local = p.resume_program == "local";
  if (local != (p.suspend_program == "local") && !p.suspend_program.empty()) {
    return Status::InvalidArgument(
        "ResumeProgram and SuspendProgram must both be 'local' or both be programs");
  }
  if (local) {
    std::map<std::string, core::NodeSpec> nodes;
    for (const core::NodeSpec& n : opt.config.cluster.nodes) nodes[n.name] = n;
    power = std::make_unique<LocalProvider>(SelfExe(), opt.socket_path, opt.state_dir + "/power",
                                            std::move(nodes));
  } else {
    power = std::make_unique<ProgramProvider>(p.resume_program, p.suspend_program);
  }
  power_fail = std::make_unique<ProgramProvider>("", "");
  // Restored jobs waiting for their nodes, and restored jobs on nodes that were powered up for
  // them: those nodes are resumed again (their agents, if still there, register and adopt).
  for (const auto& [id, r] : records) {
    if (r->job.state == core::JobState::kConfiguring) configuring.insert(id);
  }
  for (uint32_t i = 0; i < cs->num_nodes(); ++i) {
    const core::NodeInfo& n = cs->node(i);
    if (n.health == core::NodeHealth::kPoweredDown && !n.jobs.empty()) {
      (void)cs->SetNodeHealth(i, core::NodeHealth::kPoweringUp, "", Now());
    }
  }
  return Status::Ok();
}

void Controller::Impl::StopPower() {
  if (power) power->Shutdown();
}

void Controller::Impl::PowerEvent(const std::string& action, const std::vector<std::string>& nodes,
                                  const std::string& reason, Txn& t) {
  const std::string list = hostlist::Compress(nodes);
  json e = {{"time", Now()}, {"action", action}, {"nodes", list}, {"reason", reason}};
  std::fprintf(stderr, "berth controller: power: %s %s: %s\n", action.c_str(), list.c_str(),
               reason.c_str());
  t.events.push_back(json{{"type", "power"}, {"power", e}}.dump());
  std::unique_lock<std::shared_mutex> l(view_mu);
  power_events.push_back(std::move(e));
  if (power_events.size() > kMaxPowerEvents) power_events.pop_front();
}

// What the jobs on these nodes need, for the resume event: "job 12 (2 nodes, 16 CPUs, 4 h100
// GPUs)".
std::string Controller::Impl::JobsNeeding(const std::vector<uint32_t>& nodes) const {
  std::set<core::JobId> ids;
  for (uint32_t i : nodes) ids.insert(cs->node(i).jobs.begin(), cs->node(i).jobs.end());
  std::string out;
  for (core::JobId id : ids) {
    const core::Job* j = cs->FindJob(id);
    if (j == nullptr) continue;
    int64_t cpus = 0, gpus = 0, mem = 0;
    std::string gpu_type;
    for (const core::NodeAllocation& a : j->alloc.nodes) {
      cpus += a.cpus;
      gpus += a.gpu_count();
      mem += a.mem_mib;
      const core::NodeInfo& n = cs->node(a.node);
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

void Controller::Impl::PowerTick(Txn& t) {
  if (!power) return;
  const Time now = Now();
  // Timeouts and idle times are in whole seconds: between those, only a pass that woke nodes
  // or a node that changed (an agent registered) gives this tick anything to do. It runs after
  // every batch of commands, so it must not scan every node each time.
  if (!power_dirty && !t.nodes_changed && now == power_checked) return;
  power_dirty = false;
  power_checked = now;
  for (const std::string& failure : power->Reap()) {
    std::fprintf(stderr, "berth controller: power: %s\n", failure.c_str());
  }
  (void)power_fail->Reap();
  const std::vector<uint32_t> timed_out = ResumeWokenNodes(now, t);
  if (!timed_out.empty()) FailResumes(timed_out, now, t);
  StartConfiguredJobs(now, t);
  FinishSuspends(now, t);
  SuspendIdleNodes(now, t);
}

std::vector<uint32_t> Controller::Impl::ResumeWokenNodes(Time now, Txn& t) {
  const config::PowerSaving& p = opt.config.power;
  std::vector<uint32_t> to_resume;
  std::vector<uint32_t> timed_out;
  for (uint32_t i = 0; i < cs->num_nodes(); ++i) {
    const core::NodeInfo& n = cs->node(i);
    auto asked = resume_asked.find(n.spec.name);
    if (n.health != core::NodeHealth::kPoweringUp) {
      if (asked != resume_asked.end()) {
        if (n.health == core::NodeHealth::kUp) {
          PowerEvent("up", {n.spec.name},
                     "registered " + std::to_string(now - asked->second) + " s after its resume",
                     t);
        }
        resume_asked.erase(asked);
      }
      continue;
    }
    if (asked == resume_asked.end()) {
      to_resume.push_back(i);
    } else if (now - asked->second > p.resume_timeout) {
      timed_out.push_back(i);
    }
  }
  const size_t allowed = config::RateAllowance(resume_times, p.resume_rate, now);
  if (to_resume.size() > allowed) to_resume.resize(allowed);
  if (!to_resume.empty()) {
    std::vector<std::string> names;
    for (uint32_t i : to_resume) names.push_back(cs->node(i).spec.name);
    Status st = power->Resume(names);
    const std::string why = JobsNeeding(to_resume);
    PowerEvent("resume", names, st.ok() ? why : why + " (failed: " + st.message() + ")", t);
    for (const std::string& name : names) {
      resume_asked[name] = now;
      resume_times.push_back(now);
    }
    metrics.power_resumes += names.size();
    t.nodes_changed = true;
  }

  return timed_out;
}

void Controller::Impl::FailResumes(const std::vector<uint32_t>& timed_out, Time now, Txn& t) {
  const config::PowerSaving& p = opt.config.power;
  std::vector<std::string> names;
  for (uint32_t i : timed_out) names.push_back(cs->node(i).spec.name);
  std::string requeued;
  for (uint32_t i : timed_out) {
    const std::vector<core::JobId> jobs = cs->node(i).jobs;
    (void)cs->SetNodeHealth(i, core::NodeHealth::kDown, "ResumeTimeout reached", now);
    resume_asked.erase(cs->node(i).spec.name);
    for (core::JobId id : jobs) {
      const core::Job* job = cs->FindJob(id);
      if (job == nullptr || job->state != core::JobState::kConfiguring) continue;
      core::JobOutcome o;
      o.state = core::JobState::kNodeFail;
      o.end_time = now;
      if (!cs->EndJob(id, o, /*requeue=*/true).ok()) continue;
      configuring.erase(id);
      if (auto rec = records.find(id); rec != records.end()) {
        auto r = std::make_shared<JobRecord>(*rec->second);
        r->message = "node " + cs->node(i).spec.name + " did not resume within ResumeTimeout (" +
                     std::to_string(p.resume_timeout) + " s); requeued";
        std::unique_lock<std::shared_mutex> l(view_mu);
        records[id] = std::move(r);
      }
      t.touched.insert(id);
      requeued += (requeued.empty() ? "" : ",") + std::to_string(id);
    }
  }
  PowerEvent("resume_timeout", names,
             "not registered within ResumeTimeout (" + std::to_string(p.resume_timeout) +
                 " s): DOWN" + (requeued.empty() ? "" : "; requeued job " + requeued),
             t);
  metrics.resume_timeouts += names.size();
  (void)power_fail->Run("ResumeFailProgram", p.resume_fail_program, names);
  t.nodes_changed = true;
  dirty = true;
}

void Controller::Impl::StartConfiguredJobs(Time now, Txn& t) {
  for (auto it = configuring.begin(); it != configuring.end();) {
    const core::Job* job = cs->FindJob(*it);
    if (job == nullptr || job->state != core::JobState::kConfiguring) {
      it = configuring.erase(it);
      continue;
    }
    if (!cs->FinishConfiguring(*it, now).ok()) {
      ++it;
      continue;
    }
    t.touched.insert(*it);
    t.launches.push_back(*it);
    it = configuring.erase(it);
  }
}

void Controller::Impl::FinishSuspends(Time now, Txn& t) {
  const config::PowerSaving& p = opt.config.power;
  for (auto it = suspend_asked.begin(); it != suspend_asked.end();) {
    std::optional<uint32_t> i = cs->FindNode(it->first);
    if (!i || cs->node(*i).health != core::NodeHealth::kPoweringDown) {
      it = suspend_asked.erase(it);
      continue;
    }
    if (now - it->second < p.suspend_timeout) {
      ++it;
      continue;
    }
    (void)cs->SetNodeHealth(*i, core::NodeHealth::kPoweredDown, "", now);
    it = suspend_asked.erase(it);
    t.nodes_changed = true;
    dirty = true;
  }
}

void Controller::Impl::SuspendIdleNodes(Time now, Txn& t) {
  const config::PowerSaving& p = opt.config.power;
  if (p.suspend_program.empty() || p.suspend_time < 0) return;
  std::vector<uint32_t> idle = config::SuspendCandidates(*cs, p, now);
  const size_t may = config::RateAllowance(suspend_times, p.suspend_rate, now);
  if (idle.size() > may) idle.resize(may);
  if (idle.empty()) return;
  std::vector<std::string> names;
  for (uint32_t i : idle) names.push_back(cs->node(i).spec.name);
  Status st = power->Suspend(names);
  for (uint32_t i : idle) {
    (void)cs->SetNodeHealth(i, core::NodeHealth::kPoweringDown, "", now);
    suspend_asked[cs->node(i).spec.name] = now;
    suspend_times.push_back(now);
    agents.Disconnect(cs->node(i).spec.name);
  }
  PowerEvent("suspend", names,
             "idle for SuspendTime (" + std::to_string(p.suspend_time) + " s)" +
                 (st.ok() ? "" : " (failed: " + st.message() + ")"),
             t);
  metrics.power_suspends += names.size();
  t.nodes_changed = true;
  dirty = true;
}

json Controller::Impl::PowerView() const {
  const config::PowerSaving& p = opt.config.power;
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
    std::shared_lock<std::shared_mutex> l(view_mu);
    for (const json& e : power_events) events.push_back(e);
  }
  return {{"enabled", p.enabled()}, {"settings", settings}, {"events", events}};
}

}  // namespace berth::controller
