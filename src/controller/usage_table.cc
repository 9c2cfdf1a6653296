// The agents' measured usage (usage_table.h).
#include "controller/usage_table.h"

#include <algorithm>
#include <chrono>
#include <set>

namespace berth::controller {

int64_t UsageTable::ClockMs() {
  return std::chrono::duration_cast<std::chrono::milliseconds>(
             std::chrono::system_clock::now().time_since_epoch())
      .count();
}

void UsageTable::Add(Series& s, int64_t now_ms, const k8s::UsageSample& r) {
  s.received_ms = now_ms;
  if (!s.readings.empty() &&
      (r.time_ms <= s.readings.back().time_ms || r.cpu_seconds < s.readings.back().cpu_seconds)) {
    s.readings.clear();  // a clock step back or a restarted counter: start again
  }
  s.readings.push_back(r);
  s.max_memory_bytes = std::max(s.max_memory_bytes, r.memory_bytes);
  while (s.readings.size() > 2 && r.time_ms - s.readings[1].time_ms >= kKeepMs) {
    s.readings.pop_front();
  }
}

std::optional<k8s::MeasuredUsage> UsageTable::UsageOf(const Series& s, int64_t now_ms) {
  if (s.readings.size() < 2) return std::nullopt;
  const k8s::UsageSample& last = s.readings.back();
  if (s.received_ms < now_ms - kStaleMs) return std::nullopt;
  for (auto it = s.readings.rbegin() + 1; it != s.readings.rend(); ++it) {
    if (last.time_ms - it->time_ms >= kMinWindowMs) return k8s::UsageBetween(*it, last);
  }
  return std::nullopt;
}

void UsageTable::Record(const std::string& node, int64_t now_ms,
                        const k8s::UsageSample& node_reading, const std::vector<JobReading>& jobs,
                        std::vector<GpuReading> gpus) {
  MutexLock l(mu_);
  Add(nodes_[node], now_ms, node_reading);
  if (gpus.empty()) {
    gpus_.erase(node);
  } else {
    gpus_[node] = NodeGpus{now_ms, std::move(gpus)};
  }
  std::set<uint32_t> reported;
  for (const JobReading& j : jobs) {
    reported.insert(j.job);
    auto& [where, series] = jobs_[j.job];
    if (where != node || series.attempt != j.attempt) series = Series{j.attempt, {}, 0, 0};
    where = node;
    Add(series, now_ms, j.sample);
  }
  for (auto it = jobs_.begin(); it != jobs_.end();) {
    it = it->second.first == node && !reported.count(it->first) ? jobs_.erase(it) : std::next(it);
  }
}

void UsageTable::ForgetNode(const std::string& node) {
  MutexLock l(mu_);
  nodes_.erase(node);
  gpus_.erase(node);
  for (auto it = jobs_.begin(); it != jobs_.end();) {
    it = it->second.first == node ? jobs_.erase(it) : std::next(it);
  }
}

k8s::UsageView UsageTable::View(int64_t now_ms) const {
  k8s::UsageView v;
  MutexLock l(mu_);
  for (const auto& [name, s] : nodes_) {
    if (auto u = UsageOf(s, now_ms)) v.nodes[name] = *u;
  }
  for (const auto& [id, entry] : jobs_) {
    if (auto u = UsageOf(entry.second, now_ms)) v.jobs[id] = *u;
  }
  return v;
}

std::vector<UsageTable::JobLatest> UsageTable::Latest(int64_t now_ms) const {
  std::vector<JobLatest> out;
  MutexLock l(mu_);
  for (const auto& [id, entry] : jobs_) {
    const Series& s = entry.second;
    if (s.readings.empty() || s.received_ms < now_ms - kStaleMs) continue;
    out.push_back({id, entry.first, s.attempt, s.readings.back(), s.max_memory_bytes});
  }
  return out;
}

std::map<std::string, std::vector<UsageTable::GpuReading>> UsageTable::GpuLatest(
    int64_t now_ms) const {
  std::map<std::string, std::vector<GpuReading>> out;
  MutexLock l(mu_);
  for (const auto& [node, g] : gpus_) {
    if (g.received_ms >= now_ms - kStaleMs) out.emplace(node, g.gpus);
  }
  return out;
}

}  // namespace berth::controller
