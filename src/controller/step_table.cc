#include "controller/step_table.h"

namespace berth::controller {

bool StepTable::empty() const {
  MutexLock<Mutex> l(mu_);
  return steps_.empty();
}

bool StepTable::Contains(core::JobId job, uint32_t step) const {
  MutexLock<Mutex> l(mu_);
  auto it = steps_.find(job);
  return it != steps_.end() && it->second.count(step) != 0;
}

std::optional<StepState> StepTable::Find(core::JobId job, uint32_t step) const {
  MutexLock<Mutex> l(mu_);
  auto it = steps_.find(job);
  if (it == steps_.end()) return std::nullopt;
  auto s = it->second.find(step);
  if (s == it->second.end()) return std::nullopt;
  return s->second;
}

Status StepTable::Add(core::JobId job, uint32_t step, StepState state) {
  MutexLock<Mutex> l(mu_);
  if (!steps_[job].emplace(step, std::move(state)).second) {
    return Status::AlreadyExists("step " + std::to_string(job) + "." + std::to_string(step) +
                                 " exists");
  }
  return Status::Ok();
}

void StepTable::Note(const std::string& node, core::JobId job, int32_t attempt, uint32_t step,
                     const std::optional<agent::JobResult>& result) {
  MutexLock<Mutex> l(mu_);
  StepState& s = steps_[job][step];
  s.attempt = attempt;
  StepNode& n = s.nodes[node];
  if (result && !n.result) n.result = result;
}

std::vector<std::string> StepTable::CommandsToResend(
    const std::string& node, const std::set<std::pair<core::JobId, uint32_t>>& running) const {
  std::vector<std::string> out;
  MutexLock<Mutex> l(mu_);
  for (const auto& [job, job_steps] : steps_) {
    for (const auto& [step, s] : job_steps) {
      auto here = s.nodes.find(node);
      if (here != s.nodes.end() && !here->second.result && !running.count({job, step})) {
        out.push_back(here->second.command);
      }
    }
  }
  return out;
}

std::vector<StaleSteps> StepTable::TakeStale(
    const std::function<bool(core::JobId, int32_t)>& may_run) {
  std::vector<StaleSteps> out;
  MutexLock<Mutex> l(mu_);
  for (auto it = steps_.begin(); it != steps_.end();) {
    const int32_t attempt = it->second.empty() ? -1 : it->second.begin()->second.attempt;
    if (may_run(it->first, attempt)) {
      ++it;
      continue;
    }
    std::set<std::string> nodes;
    for (const auto& [step, s] : it->second) {
      for (const auto& [name, n] : s.nodes) nodes.insert(name);
    }
    for (const std::string& name : nodes) out.push_back({name, it->first, attempt});
    it = steps_.erase(it);
  }
  return out;
}

}  // namespace berth::controller
