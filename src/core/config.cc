#include "core/config.h"

#include <string>

namespace berth::core {

SchedulerConfig SchedulerConfig::Fcfs() {
  SchedulerConfig c;
  c.name = "fcfs";
  c.order = QueueOrder::kFifo;
  c.strict_order = true;
  c.backfill = false;
  c.reservation_depth = 0;
  return c;
}

SchedulerConfig SchedulerConfig::Easy() {
  SchedulerConfig c;
  c.name = "easy";
  c.order = QueueOrder::kFifo;
  c.backfill = true;
  c.reservation_depth = 1;
  c.backfill_horizon = kInfinite;
  return c;
}

SchedulerConfig SchedulerConfig::Conservative() {
  SchedulerConfig c;
  c.name = "conservative";
  c.order = QueueOrder::kFifo;
  c.backfill = true;
  c.reservation_depth = kAllJobs;
  c.backfill_horizon = kInfinite;
  c.backfill_max_job_test = kAllJobs;
  return c;
}

SchedulerConfig SchedulerConfig::Multifactor() {
  return SchedulerConfig();
}

SchedulerConfig SchedulerConfig::Las() {
  SchedulerConfig c;
  c.name = "las";
  c.order = QueueOrder::kLas;
  // Work-conserving, as Tiresias: a job that does not fit now is passed over, without a
  // reservation (a reservation would hold GPUs for a job that preemption may start anyway).
  c.backfill = true;
  c.reservation_depth = 0;
  c.las.restart_delay = kDefaultLasRestartDelay;
  return c;
}

Result<SchedulerConfig> SchedulerConfig::Preset(std::string_view name) {
  if (name == "fcfs") return Fcfs();
  if (name == "easy") return Easy();
  if (name == "conservative") return Conservative();
  if (name == "multifactor") return Multifactor();
  if (name == "las") return Las();
  return Status::InvalidArgument("unknown policy '" + std::string(name) +
                                 "' (expected fcfs, easy, conservative, multifactor or las)");
}

}  // namespace berth::core
