// squeue --json: the jobs as Slurm 22.05's squeue prints them (openapi/v0.0.38's job fields).
#include <nlohmann/json.hpp>

#include "slurm/squeue_view.h"

namespace berth::slurm {

using nlohmann::json;

namespace {

json TimeOrZero(Time t) {
  return t == kNoTime || t <= 0 ? json(0) : json(t);
}

json Minutes(Duration d) {
  if (d >= kInfinite || d == kNoTime) return nullptr;
  return (d + 59) / 60;
}

json JobJson(const SqueueRow& r, const SqueueContext& ctx) {
  const JobView& j = r.job;
  json o = {
      {"account", j.account},
      {"accrue_time", TimeOrZero(j.eligible_time)},
      {"array_job_id", j.array_job_id},
      {"array_task_id", j.array_task_id >= 0 ? json(j.array_task_id) : json(nullptr)},
      {"array_max_tasks", j.array_max_running},
      {"array_task_string", r.task_set},
      {"batch_flag", j.batch},
      {"batch_host", j.batch_host},
      {"cluster", ctx.cluster},
      {"command", j.command},
      {"comment", j.comment},
      {"contiguous", false},
      {"cpus_per_task", j.cpus_per_task},
      {"deadline", TimeOrZero(j.deadline)},
      {"dependency", j.dependency == "(null)" ? "" : j.dependency},
      {"eligible_time", TimeOrZero(j.eligible_time)},
      {"end_time", TimeOrZero(j.end_time)},
      {"excluded_nodes", j.exc_nodes},
      {"exit_code", (int64_t{j.exit_code} << 8) | j.exit_signal},
      {"features", j.features},
      {"group_id", j.gid},
      {"group_name", j.group},
      {"job_id", j.job_id},
      {"job_state", j.state_text},
      {"licenses", j.licenses},
      {"max_cpus", 0},
      {"max_nodes", j.max_nodes},
      {"minimum_cpus_per_node", j.min_cpus_node},
      {"name", j.name},
      {"nodes", j.nodes},
      {"nice", j.nice},
      {"cpus", j.num_cpus},
      {"node_count", j.min_nodes},
      {"tasks", j.num_tasks},
      {"partition", j.partition},
      {"memory_per_node", j.min_memory_node_mib >= 0 ? json(j.min_memory_node_mib) : json(nullptr)},
      {"memory_per_cpu", j.min_memory_cpu_mib >= 0 ? json(j.min_memory_cpu_mib) : json(nullptr)},
      {"priority", j.priority},
      {"qos", j.qos},
      {"required_nodes", j.req_nodes},
      {"requeue", j.requeue},
      {"resv_name", j.reservation},
      {"restart_cnt", j.restarts},
      {"standard_error", j.std_err},
      {"standard_input", j.std_in},
      {"standard_output", j.std_out},
      {"start_time", TimeOrZero(j.start_time)},
      {"state_description", r.state_desc},
      {"state_reason", j.reason},
      {"submit_time", TimeOrZero(j.submit_time)},
      {"time_limit", Minutes(j.time_limit)},
      {"time_minimum", j.time_min == kNoTime ? 0 : j.time_min / 60},
      {"tres_per_job", j.tres_per_job},
      {"tres_per_node", j.tres_per_node},
      {"tres_per_task", j.tres_per_task},
      {"tres_req_str", j.req_tres},
      {"tres_alloc_str", j.alloc_tres},
      {"user_id", j.uid},
      {"user_name", j.user},
      {"current_working_directory", j.work_dir},
  };
  if (!j.node_names.empty()) {
    o["job_resources"] = {{"nodes", j.nodes},
                          {"allocated_cpus", j.num_cpus},
                          {"allocated_hosts", j.node_names.size()}};
  }
  return o;
}

}  // namespace

json SqueueJson(const std::vector<SqueueRow>& rows, const SqueueContext& ctx) {
  json jobs = json::array();
  for (const SqueueRow& r : rows) jobs.push_back(JobJson(r, ctx));
  return {{"meta",
           {{"plugin", {{"type", "openapi/v0.0.38"}, {"name", "Slurm OpenAPI v0.0.38"}}},
            {"Slurm",
             {{"version", {{"major", 22}, {"micro", 8}, {"minor", 5}}}, {"release", "22.05.8"}}}}},
          {"errors", json::array()},
          {"jobs", jobs}};
}

}  // namespace berth::slurm
