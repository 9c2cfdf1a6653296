// Scheduler configuration: queue order, backfill, placement, priority weights, fair-share,
// preemption. Presets match `berth sim --policy fcfs|easy|conservative|multifactor`.
#ifndef BERTH_CORE_CONFIG_H_
#define BERTH_CORE_CONFIG_H_

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "common/status.h"
#include "common/time.h"
#include "core/model/partition.h"
#include "core/model/resources.h"
#include "core/sched/gpu_policy.h"

namespace berth::core {

enum class QueueOrder : uint8_t {
  kPriority,  // multifactor priority, then submit time, then id
  kFifo,      // submit time, then id
  kLas,       // least attained service queue, then the time it entered it, then id (las.h)
};

enum class PlacementPolicy : uint8_t {
  kPack,    // fill partly used nodes first, keeping whole nodes free for large (GPU) jobs
  kSpread,  // prefer the least used nodes
};

enum class PreemptType : uint8_t {
  kNone,
  kQos,                // a job may preempt jobs whose QoS is in its QoS's preempt list
  kPartitionPriority,  // a job may preempt jobs in partitions of a lower PriorityTier
};

enum class FairshareAlgorithm : uint8_t { kClassic, kFairTree };

// Slurm's PriorityWeight* settings. Each factor is normalised to 0..1 and multiplied by its
// weight; the job's priority is the sum, minus its nice value.
struct PriorityWeights {
  int64_t age = 1000;
  int64_t fairshare = 10000;
  int64_t job_size = 1000;
  int64_t partition = 1000;
  int64_t qos = 1000;
  std::vector<NamedCount> tres;  // PriorityWeightTRES: "cpu", "mem", "node", "gres/gpu"
  Duration max_age = 7 * 86400;  // PriorityMaxAge
  bool favor_small = false;      // PriorityFavorSmall
};

struct FairshareConfig {
  FairshareAlgorithm algorithm = FairshareAlgorithm::kFairTree;
  Duration half_life = 7 * 86400;  // PriorityDecayHalfLife
  // Billing weights (TRESBillingWeights): usage accrues billing x seconds, where
  // billing = cpu_weight * CPUs + gpu_weight * GPUs + mem_weight_per_gib * GiB.
  double cpu_weight = 1.0;
  double gpu_weight = 0.0;
  double mem_weight_per_gib = 0.0;
};

// The restart cost the `las` preset models in berth sim (seconds): a trainer restoring its
// checkpoint on its GPUs.
inline constexpr Duration kDefaultLasRestartDelay = 30;

// Least attained service (QueueOrder::kLas; core/sched/las.h, docs/scheduling.md).
struct LasConfig {
  // Service thresholds, ascending (GPU-seconds; CPU-seconds for jobs without GPUs): K limits
  // make K + 1 queues. LasQueueLimits.
  std::vector<double> queue_limits = {3600, 36000};
  // A requeued job that has waited this many times its last run goes back to queue 0
  // (Tiresias' PROMOTE_KNOB); 0 = never. LasPromoteKnob.
  double promote_knob = 0;
  // A running job is not preempted by LAS before it has run this long in its attempt.
  // LasMinRunTime.
  Duration min_run_time = 600;
  // berth sim only (LasRestartDelay, --restart-delay): kNoTime = a requeued job runs again from
  // its start (Slurm's REQUEUE of a job that keeps no checkpoint); >= 0 = it resumes where it
  // stopped, after this many seconds of restart cost.
  Duration restart_delay = kNoTime;
};

struct SchedulerConfig {
  std::string name = "multifactor";
  QueueOrder order = QueueOrder::kPriority;
  // Stop at the first job that cannot start (plain FCFS); no job behind it starts.
  bool strict_order = false;
  // Start lower jobs when that delays no reservation.
  bool backfill = true;
  // How many blocked jobs get a reservation: 1 = EASY, kAllJobs = conservative.
  int32_t reservation_depth = 32;
  // Reservations and expected start times reach at most this far ahead (Slurm's bf_window).
  Duration backfill_horizon = 7 * 86400;
  // How many blocked jobs the backfill pass examines at most per pass (bf_max_job_test).
  int32_t backfill_max_job_test = 1000;
  PlacementPolicy placement = PlacementPolicy::kPack;
  // GpuPlacement: how GPU requests (whole GPUs and shares of one) choose a node and devices
  // (core/sched/gpu_policy.h; docs/scheduling.md "GPU placement"). `berth sim --fill` runs
  // them; the controller's placement will take it when per-device shares reach the core.
  GpuPlacement gpu_placement = GpuPlacement::kFgd;
  bool topology_aware = true;
  PriorityWeights weights;
  FairshareConfig fairshare;
  PreemptType preempt_type = PreemptType::kNone;
  PreemptMode preempt_mode = PreemptMode::kRequeue;  // when the QoS/partition says nothing
  LasConfig las;                                     // used when order == kLas

  static constexpr int32_t kAllJobs = -1;

  static SchedulerConfig Fcfs();
  static SchedulerConfig Easy();
  static SchedulerConfig Conservative();
  static SchedulerConfig Multifactor();
  static SchedulerConfig Las();
  // "fcfs", "easy", "conservative", "multifactor", "las"
  static Result<SchedulerConfig> Preset(std::string_view name);
};

}  // namespace berth::core

#endif  // BERTH_CORE_CONFIG_H_
