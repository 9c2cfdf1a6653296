#include "sim/power.h"

#include <algorithm>
#include <cstdint>

#include "config/power_saving.h"

namespace berth::sim {

using core::JobId;
using core::NodeHealth;

PowerModel::PowerModel(const PowerOptions& options, core::ClusterState& cs)
    : o_(options), cs_(cs) {}

void PowerModel::Start(Time t) {
  start_ = t;
  powered_since_.assign(cs_.num_nodes(), kNoTime);
  resume_asked_.assign(cs_.num_nodes(), kNoTime);
  for (uint32_t i = 0; i < cs_.num_nodes(); ++i) {
    if (o_.all_down && cs_.node(i).health == NodeHealth::kUp && cs_.node(i).jobs.empty()) {
      (void)cs_.SetNodeHealth(i, NodeHealth::kPoweredDown, "", t);
    }
    if (cs_.node(i).health != NodeHealth::kPoweredDown) powered_since_[i] = t;
  }
}

Time PowerModel::NextEvent() const {
  Time t = next_check_;
  if (!boots_.empty()) t = std::min(t, boots_.begin()->first);
  if (!downs_.empty()) t = std::min(t, downs_.begin()->first);
  return t;
}

void PowerModel::CompleteAt(Time t, const std::function<void(JobId)>& started) {
  std::set<JobId> waiting;
  while (!boots_.empty() && boots_.begin()->first <= t) {
    uint32_t i = boots_.begin()->second;
    boots_.erase(boots_.begin());
    resume_asked_[i] = kNoTime;
    if (cs_.node(i).health != NodeHealth::kPoweringUp) continue;
    (void)cs_.SetNodeHealth(i, NodeHealth::kUp, "", t);
    waiting.insert(cs_.node(i).jobs.begin(), cs_.node(i).jobs.end());
  }
  for (JobId id : waiting) {
    const core::Job* job = cs_.FindJob(id);
    if (job == nullptr || job->state != core::JobState::kConfiguring) continue;
    if (cs_.FinishConfiguring(id, t).ok() && started) started(id);
  }
  while (!downs_.empty() && downs_.begin()->first <= t) {
    uint32_t i = downs_.begin()->second;
    downs_.erase(downs_.begin());
    if (cs_.node(i).health != NodeHealth::kPoweringDown) continue;
    (void)cs_.SetNodeHealth(i, NodeHealth::kPoweredDown, "", t);
    if (powered_since_[i] != kNoTime) intervals_.emplace_back(powered_since_[i], t);
    powered_since_[i] = kNoTime;
  }
}

void PowerModel::Tick(Time t) {
  next_check_ = kInfinite;
  // 1. Nodes the scheduler woke: resume them, as fast as ResumeRate allows (lowest index first).
  std::vector<uint32_t> to_resume;
  for (uint32_t i = 0; i < cs_.num_nodes(); ++i) {
    if (cs_.node(i).health == NodeHealth::kPoweringUp && resume_asked_[i] == kNoTime) {
      to_resume.push_back(i);
    }
  }
  const size_t allowed = config::RateAllowance(resume_times_, o_.resume_rate, t);
  const bool held_back = to_resume.size() > allowed;
  if (held_back) to_resume.resize(allowed);
  for (uint32_t i : to_resume) {
    resume_asked_[i] = t;
    resume_times_.push_back(t);
    if (powered_since_[i] == kNoTime) powered_since_[i] = t;
    boots_.insert({t + o_.boot_time, i});
    ++boot_count_;
  }
  // The rest go when the oldest resume of the last minute is a minute old.
  if (held_back) next_check_ = std::min(next_check_, resume_times_.front() + 60);
  // 2. Nodes idle for SuspendTime power down.
  if (o_.suspend_time >= 0) Suspend(t);
}

void PowerModel::Suspend(Time t) {
  std::vector<uint32_t> idle = config::SuspendCandidates(cs_, o_, t, start_, &next_check_);
  const size_t may = config::RateAllowance(suspend_times_, o_.suspend_rate, t);
  const bool held_back = idle.size() > may;
  if (held_back) idle.resize(may);
  for (uint32_t i : idle) {
    (void)cs_.SetNodeHealth(i, NodeHealth::kPoweringDown, "", t);
    suspend_times_.push_back(t);
    downs_.insert({t + o_.suspend_timeout, i});
    ++suspend_count_;
  }
  if (held_back) next_check_ = std::min(next_check_, suspend_times_.front() + 60);
}

PowerStats PowerModel::Finish(Time window_end) const {
  PowerStats s;
  s.enabled = true;
  s.suspend_time = o_.suspend_time;
  s.boot_time = o_.boot_time;
  s.boots = boot_count_;
  s.suspends = suspend_count_;
  s.window_start = start_;
  s.window_end = std::max(window_end, start_);
  int64_t seconds = 0;
  auto add = [&](Time from, Time to) {
    from = std::max(from, s.window_start);
    to = std::min(to, s.window_end);
    if (to > from) seconds += to - from;
  };
  for (const auto& [from, to] : intervals_) add(from, to);
  for (Time since : powered_since_) {
    if (since != kNoTime) add(since, s.window_end);
  }
  s.node_hours = static_cast<double>(seconds) / 3600.0;
  return s;
}

}  // namespace berth::sim
