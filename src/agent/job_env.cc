#include "agent/job_env.h"

#include <algorithm>
#include <utility>

#include "common/hostlist.h"

namespace berth::agent {

namespace {

// Slurm gives a job without a time limit an end time one year after its start.
constexpr Duration kYear = 365 * 24 * 3600;

// An environment under construction: later values replace earlier ones, first position kept.
class EnvBuilder {
 public:
  void Set(const std::string& name, const std::string& value) {
    for (auto& [n, v] : vars_) {
      if (n == name) {
        v = value;
        return;
      }
    }
    vars_.emplace_back(name, value);
  }
  void Set(const std::string& name, int64_t value) { Set(name, std::to_string(value)); }
  bool Has(const std::string& name) const {
    for (const auto& kv : vars_) {
      if (kv.first == name) return true;
    }
    return false;
  }
  // For the variables sbatch gives the job from its request (SLURM_SUBMIT_DIR, ...): the job's
  // own value when it has one, berth's otherwise.
  void SetIfAbsent(const std::string& name, const std::string& value) {
    if (!Has(name)) Set(name, value);
  }
  std::vector<std::string> Strings() const {
    std::vector<std::string> out;
    out.reserve(vars_.size());
    for (const auto& [n, v] : vars_) out.push_back(n + "=" + v);
    return out;
  }

 private:
  std::vector<std::pair<std::string, std::string>> vars_;
};

// CUDA_VISIBLE_DEVICES: the device indices, or a MIG instance's UUID in place of its index.
std::string VisibleDevices(const LaunchSpec& spec) {
  std::string out;
  for (size_t i = 0; i < spec.gpu_indices.size(); ++i) {
    if (!out.empty()) out += ',';
    bool uuid = i < spec.gpu_uuids.size() && !spec.gpu_uuids[i].empty();
    out += uuid ? spec.gpu_uuids[i] : std::to_string(spec.gpu_indices[i]);
  }
  return out;
}

// The variables that describe the allocation (the batch step runs on its first node).
void SetAllocationVars(const LaunchSpec& spec, const std::string& node_name, EnvBuilder* env) {
  std::vector<std::string> nodes = spec.node_names;
  if (nodes.empty()) nodes.push_back(node_name);
  std::string nodelist = hostlist::Compress(nodes);
  std::vector<int32_t> cpus_per_node = spec.cpus_per_node;
  if (cpus_per_node.empty()) cpus_per_node.push_back(spec.cpus);
  int64_t num_nodes = static_cast<int64_t>(nodes.size());
  env->Set("SLURM_JOB_NODELIST", nodelist);
  env->Set("SLURM_NODELIST", nodelist);
  env->Set("SLURM_JOB_NUM_NODES", num_nodes);
  env->Set("SLURM_NNODES", num_nodes);
  env->Set("SLURM_CPUS_ON_NODE", spec.cpus);
  env->Set("SLURM_JOB_CPUS_PER_NODE", CompressCounts(cpus_per_node));
  env->Set("SLURM_TASKS_PER_NODE", CompressCounts(TasksPerNode(spec)));
  if (!spec.gpu_indices.empty()) {
    // No device cgroup hides the other GPUs, so the indices are the node's own (as Slurm
    // without ConstrainDevices).
    std::string gpus = JoinIndices(spec.gpu_indices);
    env->Set("SLURM_GPUS_ON_NODE", static_cast<int64_t>(spec.gpu_indices.size()));
    env->Set("SLURM_JOB_GPUS", gpus);
    env->Set("CUDA_VISIBLE_DEVICES", VisibleDevices(spec));
    env->Set("GPU_DEVICE_ORDINAL", gpus);
  }
  if (spec.gpu_share_milli > 0 && spec.gpu_mps) {
    // Slurm's MPS plugin: the share's percentage of the device's threads.
    env->Set("CUDA_MPS_ACTIVE_THREAD_PERCENTAGE", std::max<int64_t>(1, spec.gpu_share_milli / 10));
    if (!spec.mps_pipe_dir.empty()) env->Set("CUDA_MPS_PIPE_DIRECTORY", spec.mps_pipe_dir);
    if (!spec.mps_log_dir.empty()) env->Set("CUDA_MPS_LOG_DIRECTORY", spec.mps_log_dir);
  }
  env->Set("SLURM_NODEID", spec.node_index);
  env->Set("SLURM_PROCID", 0);
  env->Set("SLURM_LOCALID", 0);
  env->Set("SLURM_GTIDS", "0");
  env->Set("SLURMD_NODENAME", node_name);
  // Slurm 22.05 sets these without a topology plugin too: the node is its own address.
  env->Set("SLURM_TOPOLOGY_ADDR", node_name);
  env->Set("SLURM_TOPOLOGY_ADDR_PATTERN", "node");
  env->Set("SLURM_NODE_ALIASES", "(null)");
}

// The variables Slurm sets only when the job asked: sbatch exports them from the request
// (SLURM_NTASKS for -n or --ntasks-per-node, SLURM_MEM_PER_NODE for --mem, ...). A job that
// did not come through sbatch gets the ones its request shows.
void SetRequestVars(const LaunchSpec& spec, EnvBuilder* env) {
  if (env->Has("SLURM_NTASKS")) {  // asked for: the count the allocation really has
    env->Set("SLURM_NTASKS", spec.ntasks);
    env->Set("SLURM_NPROCS", spec.ntasks);
  }
  if (spec.cpus_per_task > 1) env->Set("SLURM_CPUS_PER_TASK", spec.cpus_per_task);
  if (spec.mem_per_cpu_mib > 0) env->Set("SLURM_MEM_PER_CPU", spec.mem_per_cpu_mib);
  if (!spec.submit_dir.empty()) env->SetIfAbsent("SLURM_SUBMIT_DIR", spec.submit_dir);
  if (!spec.submit_host.empty()) env->SetIfAbsent("SLURM_SUBMIT_HOST", spec.submit_host);
}

void SetJobVars(const LaunchSpec& spec, const JobUser& user, EnvBuilder* env) {
  env->Set("SLURM_JOB_ID", spec.job_id);
  env->Set("SLURM_JOBID", spec.job_id);
  env->Set("SLURM_JOB_NAME", spec.name);
  env->Set("SLURM_JOB_USER", user.name);
  env->Set("SLURM_JOB_UID", user.uid);
  env->Set("SLURM_JOB_GID", user.gid);
  if (!spec.account.empty()) env->Set("SLURM_JOB_ACCOUNT", spec.account);
  env->Set("SLURM_JOB_PARTITION", spec.partition);
  if (!spec.qos.empty()) env->Set("SLURM_JOB_QOS", spec.qos);
  if (!spec.cluster_name.empty()) env->Set("SLURM_CLUSTER_NAME", spec.cluster_name);
  // Slurm sets the restart count only once the job has been restarted.
  if (spec.attempt > 0) env->Set("SLURM_RESTART_COUNT", spec.attempt);
  if (spec.array_task_id >= 0) {
    env->Set("SLURM_ARRAY_JOB_ID", spec.array_job_id);
    env->Set("SLURM_ARRAY_TASK_ID", spec.array_task_id);
    env->Set("SLURM_ARRAY_TASK_COUNT", spec.array_task_count);
    env->Set("SLURM_ARRAY_TASK_MIN", spec.array_task_min);
    env->Set("SLURM_ARRAY_TASK_MAX", spec.array_task_max);
    env->Set("SLURM_ARRAY_TASK_STEP", spec.array_task_step);
  }
}

}  // namespace

std::string JoinIndices(const std::vector<int32_t>& indices) {
  std::string out;
  for (int32_t i : indices) {
    if (!out.empty()) out += ',';
    out += std::to_string(i);
  }
  return out;
}

std::string CompressCounts(const std::vector<int32_t>& counts) {
  std::string out;
  for (size_t i = 0; i < counts.size();) {
    size_t j = i;
    while (j < counts.size() && counts[j] == counts[i]) ++j;
    if (!out.empty()) out += ',';
    out += std::to_string(counts[i]);
    if (j - i > 1) out += "(x" + std::to_string(j - i) + ")";
    i = j;
  }
  return out;
}

std::vector<int32_t> TasksPerNode(const LaunchSpec& spec) {
  if (!spec.tasks_per_node.empty()) return spec.tasks_per_node;
  size_t nodes = std::max<size_t>(1, spec.node_names.size());
  if (nodes == 1) return {std::max(1, spec.ntasks)};
  std::vector<int32_t> capacity(nodes, 1);
  int32_t per_task = std::max(1, spec.cpus_per_task);
  for (size_t i = 0; i < nodes && i < spec.cpus_per_node.size(); ++i) {
    capacity[i] = std::max(1, spec.cpus_per_node[i] / per_task);
  }
  std::vector<int32_t> tasks(nodes, 0);
  int32_t left = std::max(1, spec.ntasks);
  // Slurm's block layout: one task on each node first, then nodes filled in order up to their
  // CPUs, then (overcommit) the rest round-robin.
  for (size_t i = 0; i < nodes && left > 0; ++i, --left) tasks[i] = 1;
  for (size_t i = 0; i < nodes && left > 0; ++i) {
    int32_t add = std::min(left, capacity[i] - tasks[i]);
    if (add > 0) {
      tasks[i] += add;
      left -= add;
    }
  }
  for (size_t i = 0; left > 0; i = (i + 1) % nodes, --left) ++tasks[i];
  return tasks;
}

std::vector<std::string> BuildJobEnvironment(const LaunchSpec& spec, const JobUser& user,
                                             const std::string& node_name, Time start_time) {
  EnvBuilder env;
  env.Set("HOME", user.home);
  env.Set("USER", user.name);
  env.Set("LOGNAME", user.name);
  env.Set("SHELL", user.shell.empty() ? "/bin/sh" : user.shell);
  env.Set("PATH", kDefaultJobPath);
  for (const auto& [name, value] : spec.environment) {
    if (!name.empty() && name.find('=') == std::string::npos) env.Set(name, value);
  }
  SetJobVars(spec, user, &env);
  SetAllocationVars(spec, node_name, &env);
  SetRequestVars(spec, &env);
  Time start = spec.start_time > 0 ? spec.start_time : start_time;
  env.Set("SLURM_JOB_START_TIME", start);
  env.Set("SLURM_JOB_END_TIME", start + (spec.time_limit > 0 ? spec.time_limit : kYear));
  env.Set("ENVIRONMENT", "BATCH");
  env.Set("HOSTNAME", spec.hostname.empty() ? node_name : spec.hostname);
  env.SetIfAbsent("TMPDIR", "/tmp");  // slurmd's TmpFS default
  env.Set("BERTH_JOB_ID", spec.job_id);
  env.Set("BERTH_ATTEMPT", spec.attempt);
  env.Set("BERTH_GPUS", JoinIndices(spec.gpu_indices));
  return env.Strings();
}

}  // namespace berth::agent
