// Scheduler, priority, fair-share and preemption keys -> core::SchedulerConfig. Slurm's own keys
// keep Slurm's meaning (read_config.c, priority/multifactor); SchedulerPolicy, BackfillDepth,
// Placement, GpuPlacement, TopologyAware and FairShareAlgorithm are berth's.
#include <cstdlib>
#include <optional>
#include <string>
#include <vector>

#include "common/strings.h"
#include "config/cluster_config_internal.h"
#include "config/tres_text.h"

namespace berth::config::internal {
namespace {

enum class SchedKey {
  kPolicy,
  kType,
  kParameters,
  kBackfillDepth,
  kPlacement,
  kGpuPlacement,
  kTopologyAware,
  kPriorityType,
  kWeightAge,
  kWeightFairshare,
  kWeightJobSize,
  kWeightPartition,
  kWeightQos,
  kWeightTres,
  kMaxAge,
  kFavorSmall,
  kDecayHalfLife,
  kPriorityFlags,
  kFairshareAlgorithm,
  kBillingWeights,
  kPreemptType,
  kPreemptMode,
  kLasQueueLimits,
  kLasPromoteKnob,
  kLasMinRunTime,
  kLasRestartDelay,
};

constexpr KeyName<SchedKey> kSchedKeys[] = {
    {"SchedulerPolicy", SchedKey::kPolicy},
    {"SchedulerType", SchedKey::kType},
    {"SchedulerParameters", SchedKey::kParameters},
    {"BackfillDepth", SchedKey::kBackfillDepth},
    {"Placement", SchedKey::kPlacement},
    {"GpuPlacement", SchedKey::kGpuPlacement},
    {"TopologyAware", SchedKey::kTopologyAware},
    {"PriorityType", SchedKey::kPriorityType},
    {"PriorityWeightAge", SchedKey::kWeightAge},
    {"PriorityWeightFairshare", SchedKey::kWeightFairshare},
    {"PriorityWeightJobSize", SchedKey::kWeightJobSize},
    {"PriorityWeightPartition", SchedKey::kWeightPartition},
    {"PriorityWeightQOS", SchedKey::kWeightQos},
    {"PriorityWeightTRES", SchedKey::kWeightTres},
    {"PriorityMaxAge", SchedKey::kMaxAge},
    {"PriorityFavorSmall", SchedKey::kFavorSmall},
    {"PriorityDecayHalfLife", SchedKey::kDecayHalfLife},
    {"PriorityFlags", SchedKey::kPriorityFlags},
    {"FairShareAlgorithm", SchedKey::kFairshareAlgorithm},
    {"TRESBillingWeights", SchedKey::kBillingWeights},
    {"PreemptType", SchedKey::kPreemptType},
    {"PreemptMode", SchedKey::kPreemptMode},
    {"LasQueueLimits", SchedKey::kLasQueueLimits},
    {"LasPromoteKnob", SchedKey::kLasPromoteKnob},
    {"LasMinRunTime", SchedKey::kLasMinRunTime},
    {"LasRestartDelay", SchedKey::kLasRestartDelay},
};

// PriorityFlags that berth accepts without acting on them.
constexpr const char* kIgnoredPriorityFlags[] = {
    "ACCRUE_ALWAYS",   "CALCULATE_RUNNING",      "INCR_ONLY",
    "MAX_TRES",        "MAX_TRES_GRES",          "NO_NORMAL_ALL",
    "NO_NORMAL_ASSOC", "NO_NORMAL_PART",         "NO_NORMAL_QOS",
    "NO_NORMAL_TRES",  "SMALL_RELATIVE_TO_TIME",
};

Status Choice(std::string_view key, std::string_view value, std::string_view expected) {
  return InvalidValue(key, value, "expected " + std::string(expected));
}

// SchedulerType: sched/backfill keeps (or turns on) backfill; sched/builtin starts jobs strictly
// in priority order, as Slurm's main scheduler stops at the first job that cannot start.
Status ApplyType(std::string_view value, core::SchedulerConfig& s) {
  if (EqualsIgnoreCase(value, "sched/backfill")) {
    s.backfill = true;
    s.strict_order = false;
    if (s.reservation_depth == 0) s.reservation_depth = core::SchedulerConfig().reservation_depth;
  } else if (EqualsIgnoreCase(value, "sched/builtin")) {
    s.backfill = false;
    s.strict_order = true;
    s.reservation_depth = 0;
  } else {
    return Choice("SchedulerType", value, "sched/backfill or sched/builtin");
  }
  return Status::Ok();
}

// SchedulerParameters: bf_window (minutes) and bf_max_job_test act; other options are recorded.
Status ApplyParameters(std::string_view value, core::SchedulerConfig& s,
                       std::vector<std::string>& ignored) {
  for (std::string_view item : Split(value, ',')) {
    if (item.empty()) continue;
    size_t eq = item.find('=');
    std::string_view name = item.substr(0, eq);
    std::string_view arg = eq == std::string_view::npos ? "" : item.substr(eq + 1);
    if (EqualsIgnoreCase(name, "bf_window")) {
      Result<int64_t> minutes = ParseInteger(arg, 1, 43200);  // Slurm's limit: 30 days
      if (!minutes.ok())
        return InvalidValue("SchedulerParameters bf_window", arg, minutes.status().message());
      s.backfill_horizon = *minutes * 60;
    } else if (EqualsIgnoreCase(name, "bf_max_job_test")) {
      Result<int64_t> n = ParseInteger(arg, 1, 1000000);
      if (!n.ok())
        return InvalidValue("SchedulerParameters bf_max_job_test", arg, n.status().message());
      s.backfill_max_job_test = static_cast<int32_t>(*n);
    } else {
      ignored.push_back("SchedulerParameters:" + ToLower(name));
    }
  }
  return Status::Ok();
}

Status ApplyPriorityFlags(std::string_view value, core::SchedulerConfig& s,
                          std::vector<std::string>& ignored) {
  for (std::string_view flag : Split(value, ',')) {
    if (flag.empty()) continue;
    if (EqualsIgnoreCase(flag, "FAIR_TREE")) {
      s.fairshare.algorithm = core::FairshareAlgorithm::kFairTree;
    } else if (EqualsIgnoreCase(flag, "NO_FAIR_TREE") ||
               EqualsIgnoreCase(flag, "DEPTH_OBLIVIOUS")) {
      s.fairshare.algorithm = core::FairshareAlgorithm::kClassic;
    } else {
      bool known = false;
      for (const char* f : kIgnoredPriorityFlags) known = known || EqualsIgnoreCase(flag, f);
      if (!known)
        return InvalidValue("PriorityFlags", value, "unknown flag '" + std::string(flag) + "'");
      ignored.push_back("PriorityFlags:" + std::string(flag));
    }
  }
  return Status::Ok();
}

Status ApplyQueueKey(SchedKey key, std::string_view name, std::string_view value,
                     core::SchedulerConfig& s, std::vector<std::string>& ignored) {
  switch (key) {
    case SchedKey::kType:
      return ApplyType(value, s);
    case SchedKey::kParameters:
      return ApplyParameters(value, s, ignored);
    case SchedKey::kBackfillDepth: {
      if (EqualsIgnoreCase(value, "all")) {
        s.reservation_depth = core::SchedulerConfig::kAllJobs;
        return Status::Ok();
      }
      Result<int64_t> n = ParseInteger(value, 0, INT32_MAX);
      if (!n.ok()) return Choice(name, value, "a number of jobs or ALL");
      s.reservation_depth = static_cast<int32_t>(*n);
      return Status::Ok();
    }
    case SchedKey::kPlacement:
      if (EqualsIgnoreCase(value, "pack")) {
        s.placement = core::PlacementPolicy::kPack;
      } else if (EqualsIgnoreCase(value, "spread")) {
        s.placement = core::PlacementPolicy::kSpread;
      } else {
        return Choice(name, value, "pack or spread");
      }
      return Status::Ok();
    case SchedKey::kGpuPlacement: {
      Result<core::GpuPlacement> p = core::ParseGpuPlacement(ToLower(value));
      if (!p.ok())
        return Choice(name, value, "first-fit, best-fit, dot-product, gpu-packing or fgd");
      s.gpu_placement = *p;
      return Status::Ok();
    }
    case SchedKey::kTopologyAware: {
      Result<bool> b = ParseBool(value);
      if (!b.ok()) return InvalidValue(name, value, b.status().message());
      s.topology_aware = *b;
      return Status::Ok();
    }
    case SchedKey::kPriorityType:
      if (EqualsIgnoreCase(value, "priority/multifactor")) {
        s.order = core::QueueOrder::kPriority;
      } else if (EqualsIgnoreCase(value, "priority/basic")) {
        s.order = core::QueueOrder::kFifo;
      } else {
        return Choice(name, value, "priority/multifactor or priority/basic");
      }
      return Status::Ok();
    default:
      return Status::Internal("not a queue key");
  }
}

Status ApplyWeightKey(SchedKey key, std::string_view name, std::string_view value,
                      core::PriorityWeights& w) {
  if (key == SchedKey::kWeightTres) {
    Result<std::vector<core::NamedCount>> tres = ParseTresWeights(value);
    if (!tres.ok()) return InvalidValue(name, value, tres.status().message());
    w.tres = std::move(*tres);
    return Status::Ok();
  }
  Result<int64_t> n = ParseInteger(value, 0, UINT32_MAX);
  if (!n.ok()) return InvalidValue(name, value, n.status().message());
  switch (key) {
    case SchedKey::kWeightAge:
      w.age = *n;
      break;
    case SchedKey::kWeightFairshare:
      w.fairshare = *n;
      break;
    case SchedKey::kWeightJobSize:
      w.job_size = *n;
      break;
    case SchedKey::kWeightPartition:
      w.partition = *n;
      break;
    case SchedKey::kWeightQos:
      w.qos = *n;
      break;
    default:
      return Status::Internal("not a weight key");
  }
  return Status::Ok();
}

Status ApplyPriorityKey(SchedKey key, std::string_view name, std::string_view value,
                        core::SchedulerConfig& s, std::vector<std::string>& ignored) {
  switch (key) {
    case SchedKey::kMaxAge:
    case SchedKey::kDecayHalfLife: {
      Result<Duration> d = ParseConfigMinutes(value);
      if (!d.ok()) return InvalidValue(name, value, d.status().message());
      (key == SchedKey::kMaxAge ? s.weights.max_age : s.fairshare.half_life) = *d;
      return Status::Ok();
    }
    case SchedKey::kFavorSmall: {
      Result<bool> b = ParseBool(value);
      if (!b.ok()) return InvalidValue(name, value, b.status().message());
      s.weights.favor_small = *b;
      return Status::Ok();
    }
    case SchedKey::kPriorityFlags:
      return ApplyPriorityFlags(value, s, ignored);
    case SchedKey::kFairshareAlgorithm:
      if (EqualsIgnoreCase(value, "fairtree") || EqualsIgnoreCase(value, "fair_tree")) {
        s.fairshare.algorithm = core::FairshareAlgorithm::kFairTree;
      } else if (EqualsIgnoreCase(value, "classic")) {
        s.fairshare.algorithm = core::FairshareAlgorithm::kClassic;
      } else {
        return Choice(name, value, "fairtree or classic");
      }
      return Status::Ok();
    case SchedKey::kBillingWeights: {
      std::vector<std::string> unbilled;
      Status st = ParseBillingWeights(value, s.fairshare, unbilled);
      if (!st.ok()) return InvalidValue(name, value, st.message());
      for (const std::string& t : unbilled) ignored.push_back("TRESBillingWeights:" + t);
      return Status::Ok();
    }
    default:
      return ApplyWeightKey(key, name, value, s.weights);
  }
}

Status ApplyPreemptKey(SchedKey key, std::string_view name, std::string_view value,
                       core::SchedulerConfig& s, std::vector<std::string>& ignored) {
  if (key == SchedKey::kPreemptMode) {
    return AssignTo(s.preempt_mode, ParsePreemptMode(value, "PreemptMode", ignored));
  }
  if (EqualsIgnoreCase(value, "preempt/none")) {
    s.preempt_type = core::PreemptType::kNone;
  } else if (EqualsIgnoreCase(value, "preempt/qos")) {
    s.preempt_type = core::PreemptType::kQos;
  } else if (EqualsIgnoreCase(value, "preempt/partition_prio")) {
    s.preempt_type = core::PreemptType::kPartitionPriority;
  } else {
    return Choice(name, value, "preempt/none, preempt/qos or preempt/partition_prio");
  }
  return Status::Ok();
}

// LasQueueLimits=3600,36000 (ascending service thresholds; empty = one queue), LasPromoteKnob=N
// (a number >= 0; 0 = off), LasMinRunTime=S and LasRestartDelay=S (seconds >= 0).
Status ApplyLasKey(SchedKey key, std::string_view name, std::string_view value,
                   core::LasConfig& las) {
  if (key == SchedKey::kLasQueueLimits) {
    std::vector<double> limits;
    for (std::string_view item : Split(value, ',')) {
      if (Split(value, ',').size() == 1 && item.empty()) break;  // "": one queue
      Result<int64_t> n = ParseInteger(item, 1, int64_t{1} << 50);
      if (!n.ok())
        return InvalidValue(name, value, "expected ascending service-seconds, e.g. 3600,36000");
      if (!limits.empty() && static_cast<double>(*n) <= limits.back()) {
        return InvalidValue(name, value, "the limits must be ascending");
      }
      limits.push_back(static_cast<double>(*n));
    }
    if (limits.size() > 15) return InvalidValue(name, value, "at most 15 limits (16 queues)");
    las.queue_limits = std::move(limits);
    return Status::Ok();
  }
  if (key == SchedKey::kLasPromoteKnob) {
    std::string text(value);
    char* end = nullptr;
    double knob = std::strtod(text.c_str(), &end);
    if (text.empty() || end != text.c_str() + text.size() || !(knob >= 0) || knob > 1e6) {
      return InvalidValue(name, value, "expected a number >= 0 (0 = no promotion)");
    }
    las.promote_knob = knob;
    return Status::Ok();
  }
  Result<int64_t> secs = ParseInteger(value, 0, 365 * 86400);
  if (!secs.ok()) return InvalidValue(name, value, "expected seconds");
  (key == SchedKey::kLasMinRunTime ? las.min_run_time : las.restart_delay) = *secs;
  return Status::Ok();
}

}  // namespace

bool IsSchedulerKey(std::string_view key) {
  return FindKey(kSchedKeys, key) != nullptr;
}

Status ApplySchedulerKey(std::string_view key, std::string_view value, ClusterConfig& config) {
  const KeyName<SchedKey>* k = FindKey(kSchedKeys, key);
  if (k == nullptr) return Status::Internal("not a scheduler key: " + std::string(key));
  core::SchedulerConfig s = config.scheduler;
  std::vector<std::string> ignored;
  Status st;
  switch (k->id) {
    case SchedKey::kPolicy: {
      if (config.parse_state.scheduler_key_seen) {
        return Status::InvalidArgument(
            "SchedulerPolicy must come first among the scheduler keys, and once: it replaces "
            "the whole scheduler configuration with a preset");
      }
      Result<core::SchedulerConfig> preset = core::SchedulerConfig::Preset(ToLower(value));
      if (!preset.ok())
        return InvalidValue("SchedulerPolicy", value,
                            "expected fcfs, easy, conservative, multifactor or las");
      s = std::move(*preset);
      break;
    }
    case SchedKey::kType:
    case SchedKey::kParameters:
    case SchedKey::kBackfillDepth:
    case SchedKey::kPlacement:
    case SchedKey::kGpuPlacement:
    case SchedKey::kTopologyAware:
    case SchedKey::kPriorityType:
      st = ApplyQueueKey(k->id, k->name, value, s, ignored);
      break;
    case SchedKey::kPreemptType:
    case SchedKey::kPreemptMode:
      st = ApplyPreemptKey(k->id, k->name, value, s, ignored);
      break;
    case SchedKey::kLasQueueLimits:
    case SchedKey::kLasPromoteKnob:
    case SchedKey::kLasMinRunTime:
    case SchedKey::kLasRestartDelay:
      st = ApplyLasKey(k->id, k->name, value, s.las);
      break;
    default:
      st = ApplyPriorityKey(k->id, k->name, value, s, ignored);
      break;
  }
  BERTH_RETURN_IF_ERROR(st);
  config.scheduler = std::move(s);
  config.parse_state.scheduler_key_seen = true;
  NoteIgnored(config, ignored);
  return Status::Ok();
}

Result<core::PreemptMode> ParsePreemptMode(std::string_view value, std::string_view context,
                                           std::vector<std::string>& ignored) {
  std::optional<core::PreemptMode> mode;
  std::vector<std::string> flags;
  for (std::string_view tok : Split(value, ',')) {
    std::optional<core::PreemptMode> m;
    if (EqualsIgnoreCase(tok, "OFF")) m = core::PreemptMode::kOff;
    if (EqualsIgnoreCase(tok, "CANCEL")) m = core::PreemptMode::kCancel;
    if (EqualsIgnoreCase(tok, "REQUEUE")) m = core::PreemptMode::kRequeue;
    if (m) {
      if (mode) return InvalidValue("PreemptMode", value, "more than one mode");
      mode = m;
    } else if (EqualsIgnoreCase(tok, "GANG") || EqualsIgnoreCase(tok, "WITHIN") ||
               EqualsIgnoreCase(tok, "PRIORITY")) {
      flags.push_back(std::string(context) + "=" + std::string(tok));
    } else if (EqualsIgnoreCase(tok, "SUSPEND")) {
      return InvalidValue("PreemptMode", value,
                          "SUSPEND is not supported (berth preempts by CANCEL or REQUEUE)");
    } else {
      return InvalidValue("PreemptMode", value,
                          "expected OFF, CANCEL or REQUEUE, optionally with GANG");
    }
  }
  ignored.insert(ignored.end(), flags.begin(), flags.end());
  return mode.value_or(core::PreemptMode::kOff);  // GANG alone is Slurm's OFF plus gang
}

}  // namespace berth::config::internal
