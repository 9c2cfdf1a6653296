#include "core/sched/las.h"

#include <algorithm>
#include <cmath>

namespace berth::core {

double AttainedService(const Job& job, Time now) {
  double s = job.attained_service;
  if (job.state == JobState::kRunning && job.start_time != kNoTime && now > job.start_time) {
    s += job.alloc.service_rate() * static_cast<double>(now - job.start_time);
  }
  return s;
}

int LasQueueOf(double service, const std::vector<double>& limits) {
  int q = 0;
  while (q < static_cast<int>(limits.size()) && service >= limits[q]) ++q;
  return q;
}

Time LasPromotionTime(const Job& job, const LasConfig& cfg) {
  if (cfg.promote_knob <= 0 || job.last_run <= 0 || job.eligible_time == kNoTime) return kNoTime;
  if (LasQueueOf(job.attained_service, cfg.queue_limits) == 0) return kNoTime;
  double wait = std::ceil(cfg.promote_knob * static_cast<double>(job.last_run));
  return job.eligible_time + static_cast<Duration>(std::min(wait, 1e15));
}

LasRank LasRankOf(const Job& job, Time now, const LasConfig& cfg) {
  LasRank r;
  r.queue = LasQueueOf(job.attained_service, cfg.queue_limits);
  const bool ran = job.restart_count > 0 || job.attained_service > 0;
  r.entered = ran && job.eligible_time != kNoTime ? job.eligible_time : job.spec->submit_time;
  Time promote = LasPromotionTime(job, cfg);
  if (promote != kNoTime && now >= promote) {
    r.queue = 0;
    r.entered = promote;
    r.promoted = true;
  }
  return r;
}

bool LasMayPreempt(const Job& victim, int queue, Time now, const LasConfig& cfg) {
  if (victim.state != JobState::kRunning || !victim.spec->requeue) return false;
  if (victim.start_time == kNoTime || now - victim.start_time < cfg.min_run_time) return false;
  return LasQueueOf(AttainedService(victim, now), cfg.queue_limits) > queue;
}

Time LasPreemptibleFrom(const Job& running, int queue, const LasConfig& cfg) {
  if (running.state != JobState::kRunning || running.start_time == kNoTime ||
      !running.spec->requeue || queue < 0 || queue >= static_cast<int>(cfg.queue_limits.size())) {
    return kNoTime;
  }
  Time t = running.start_time + cfg.min_run_time;
  const double need = cfg.queue_limits[queue] - running.attained_service;
  if (need > 0) {
    const double rate = running.alloc.service_rate();
    if (rate <= 0) return kNoTime;
    // The first whole second at which the service reaches the threshold.
    double secs = std::ceil(need / rate);
    t = std::max(t, running.start_time + static_cast<Duration>(std::min(secs, 1e15)));
  }
  return t;
}

}  // namespace berth::core
