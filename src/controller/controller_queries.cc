// Read-only answers that need the scheduler's view: sprio's priorities (computed on the state
// thread, which owns the cluster state) and `scontrol show config` (from the options, which do
// not change after start).
#include "common/slurm_time.h"
#include "controller/controller_internal.h"
#include "core/model/partition.h"
#include "core/sched/scheduler.h"

namespace berth::controller {

namespace {

using nlohmann::json;

// A factor's 0..1 value from its weighted contribution.
double Normalized(double weighted, int64_t weight) {
  return weight > 0 ? weighted / static_cast<double>(weight) : 0.0;
}

std::string Seconds(Duration d) {
  return FormatTimeLimit(d);
}

}  // namespace

json Controller::Impl::PriorityView() const {
  const core::SchedulerConfig& cfg = scheduler->config();
  const core::PriorityWeights& w = cfg.weights;
  json tres_weights = json::object();
  for (const core::NamedCount& t : w.tres) tres_weights[t.name] = t.count;
  json out = {{"weights",
               {{"age", w.age},
                {"fairshare", w.fairshare},
                {"jobsize", w.job_size},
                {"partition", w.partition},
                {"qos", w.qos},
                {"assoc", 0},
                {"site", 0},
                {"tres", tres_weights}}},
              {"jobs", json::array()}};
  if (cfg.order != core::QueueOrder::kPriority) out["priority_type"] = "priority/basic";
  for (const core::PriorityBreakdown& b : scheduler->Priorities(*cs, Now())) {
    const core::JobEntry* e = cs->FindEntry(b.job);
    if (e == nullptr) continue;
    const core::Job& j = e->job;
    // As sprio: held jobs (priority 0 in Slurm) are not listed.
    if (j.spec.hold != core::HoldKind::kNone) continue;
    json job = {{"id", j.id},
                {"user", j.spec.user},
                {"account", j.spec.account},
                {"partition", cs->partitions()[e->partitions.front()].spec.name},
                {"qos", j.spec.qos},
                {"priority", b.total},
                {"nice", b.nice},
                {"admin_set", b.admin_set},
                {"factors",
                 {{"age", b.age},
                  {"fairshare", b.fairshare},
                  {"jobsize", b.job_size},
                  {"partition", b.partition},
                  {"qos", b.qos},
                  {"assoc", 0},
                  {"site", 0},
                  {"tres", b.tres}}},
                {"normalized",
                 {{"age", Normalized(b.age, w.age)},
                  {"fairshare", Normalized(b.fairshare, w.fairshare)},
                  {"jobsize", Normalized(b.job_size, w.job_size)},
                  {"partition", Normalized(b.partition, w.partition)},
                  {"qos", Normalized(b.qos, w.qos)},
                  {"assoc", 0},
                  {"site", 0}}}};
    if (j.array_job_id != core::kNoJob) {
      job["array_job_id"] = j.array_job_id;
      if (j.array_task_id >= 0) job["array_task_id"] = j.array_task_id;
    }
    out["jobs"].push_back(std::move(job));
  }
  return out;
}

net::HttpResponse Controller::Impl::ConfigView() const {
  const core::SchedulerConfig& s = scheduler->config();
  const core::ClusterSpec& c = opt.config.cluster;
  auto number = [](auto v) { return std::to_string(v); };
  std::string sched_params = "bf_window=" + number(s.backfill_horizon / 60) +
                             ",bf_max_job_test=" + number(s.backfill_max_job_test);
  if (s.reservation_depth == core::SchedulerConfig::kAllJobs) {
    sched_params += ",berth_reservations=all";
  } else {
    sched_params += ",berth_reservations=" + number(s.reservation_depth);
  }
  if (s.placement == core::PlacementPolicy::kSpread) sched_params += ",berth_spread";
  std::string preempt_type = "preempt/none";
  if (s.preempt_type == core::PreemptType::kQos) preempt_type = "preempt/qos";
  if (s.preempt_type == core::PreemptType::kPartitionPriority) {
    preempt_type = "preempt/partition_prio";
  }
  json rows = json::array();
  auto add = [&](const char* key, const std::string& value) { rows.push_back({key, value}); };
  add("ClusterName", c.name);
  add("BerthSchedulerPreset", s.name);
  add("DefMemPerCPU", c.def_mem_per_cpu_mib > 0 ? number(c.def_mem_per_cpu_mib) : "UNLIMITED");
  add("KillWait", number(opt.kill_wait_s) + " sec");
  add("MaxArraySize", number(c.max_array_size));
  add("MinJobAge", number(opt.min_job_age_s) + " sec");
  add("PreemptMode", std::string(core::PreemptModeName(s.preempt_mode)));
  add("PreemptType", preempt_type);
  add("PriorityDecayHalfLife", Seconds(s.fairshare.half_life));
  add("PriorityFavorSmall", s.weights.favor_small ? "Yes" : "No");
  add("PriorityMaxAge", Seconds(s.weights.max_age));
  add("PriorityType",
      s.order == core::QueueOrder::kPriority ? "priority/multifactor" : "priority/basic");
  add("PriorityWeightAge", number(s.weights.age));
  add("PriorityWeightFairShare", number(s.weights.fairshare));
  add("PriorityWeightJobSize", number(s.weights.job_size));
  add("PriorityWeightPartition", number(s.weights.partition));
  add("PriorityWeightQOS", number(s.weights.qos));
  std::string tres;
  for (const core::NamedCount& t : s.weights.tres) {
    tres += (tres.empty() ? "" : ",") + t.name + "=" + number(t.count);
  }
  add("PriorityWeightTRES", tres.empty() ? "(null)" : tres);
  add("SchedulerParameters", sched_params);
  add("SchedulerType", s.backfill ? "sched/backfill" : "sched/builtin");
  add("SelectType", "select/cons_tres");
  add("SlurmctldTimeout", "N/A (berth)");
  add("SlurmdTimeout", number(opt.node_timeout_s) + " sec");
  add("SLURM_VERSION", std::string("berth ") + BERTH_CONTROLLER_VERSION);
  add("TopologyPlugin", s.topology_aware ? "topology/tree" : "topology/none");
  json body = {{"config", std::move(rows)}};
  net::HttpResponse r;
  r.status = 200;
  r.body = body.dump() + "\n";
  return r;
}

}  // namespace berth::controller
