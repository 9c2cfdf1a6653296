// What a node needs to run one job attempt (LaunchSpec, sent by the controller with a launch
// command), and what comes back when it ends (JobResult). Both travel as JSON; the agent also
// keeps them in the job's folder, which is how a restarted agent adopts its running jobs.
#ifndef BERTH_AGENT_LAUNCH_H_
#define BERTH_AGENT_LAUNCH_H_

#include <cstdint>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "common/status.h"
#include "common/time.h"

namespace berth::agent {

struct LaunchSpec {
  uint32_t job_id = 0;
  int32_t attempt = 0;        // restart count: each attempt gets a fresh cgroup and folder
  uint32_t array_job_id = 0;  // 0 when not an array task
  int32_t array_task_id = -1;
  int32_t array_task_count = 0;  // SLURM_ARRAY_TASK_COUNT/MIN/MAX/STEP
  int32_t array_task_min = 0;
  int32_t array_task_max = 0;
  int32_t array_task_step = 1;
  std::string name;
  std::string user;
  uint32_t uid = 0;
  uint32_t gid = 0;
  std::string account;
  std::string partition;
  std::string qos;
  std::string cluster_name;

  std::string script;             // batch script text; run with /bin/sh unless it has a #! line
  std::vector<std::string> argv;  // or a command to exec directly (when script is empty)
  std::vector<std::string> script_args;  // $1... of the script (`sbatch script.sh ARGS...`)
  std::string work_dir;
  std::string stdout_pattern;  // Slurm patterns: %j %A %a %x %u %N %n %t %%; "" = default
  std::string stderr_pattern;  // "" = same file as stdout
  std::string stdin_path;      // "" = /dev/null
  bool open_append = false;
  std::vector<std::pair<std::string, std::string>> environment;  // the job's exported variables
  // The container to run in: an image::ContainerSpec's JSON text; "" = none (docs/containers.md).
  std::string container;
  std::string hostname;  // the host name the job sees (a Pod's); "" = the node's
  // A Pod's stdin: true/stdinOnce/tty (pod_attach.h): the main process's stdin is a pipe the
  // supervisor holds open, or (tty) a pseudo-terminal whose master the supervisor holds.
  bool open_stdin = false;
  bool stdin_once = false;
  bool tty = false;

  // The allocation. node_names/cpus_per_node cover every node of the job; this node is
  // node_names[node_index].
  std::vector<std::string> node_names;
  std::vector<int32_t> cpus_per_node;
  int32_t node_index = 0;
  int32_t cpus = 1;                  // on this node
  int64_t mem_mib = 0;               // on this node (0: no limit)
  std::vector<int32_t> gpu_indices;  // device indices on this node (whole, or the shared one)
  // Parallel to gpu_indices where a device has a UUID the job must see instead of its index (a
  // MIG instance: "MIG-..."); "" = the index. Filled by the agent from what it detected.
  std::vector<std::string> gpu_uuids;
  // Parallel to gpu_indices: each device's NVML index where the agent found it through NVML (a
  // whole GPU), -1 otherwise (a declared GPU, a MIG instance); berth's device index and NVML's
  // differ on a node whose MIG instances come before a whole GPU. Empty: none known. The
  // supervisor samples the job's GPU utilisation on these (NvmlIndicesOf).
  std::vector<int32_t> gpu_nvml_indices;
  // A share of the device in gpu_indices (thousandths of it; 0 = the devices are held whole),
  // and whether it is an MPS share (CUDA_MPS_ACTIVE_THREAD_PERCENTAGE = gpu_share_milli / 10).
  int32_t gpu_share_milli = 0;
  bool gpu_mps = false;
  // The node's MPS control daemon's directories (the agent's --mps-pipe-dir / --mps-log-dir);
  // "" = none named: CUDA's defaults apply.
  std::string mps_pipe_dir;
  std::string mps_log_dir;
  int32_t tasks = 1;   // on this node
  int32_t ntasks = 1;  // in the job
  int32_t cpus_per_task = 1;
  int64_t mem_per_cpu_mib = 0;   // SLURM_MEM_PER_CPU when the job asked per CPU
  int64_t mem_per_node_mib = 0;  // SLURM_MEM_PER_NODE otherwise
  // Every node's task count, for SLURM_TASKS_PER_NODE; empty: Slurm's block distribution of
  // ntasks over cpus_per_node (at least one task per node, then filling nodes in order).
  std::vector<int32_t> tasks_per_node;
  int32_t pids_max = 0;  // processes and threads of the job; 0 = the node's default
  // CPU time the job may use, in thousandths of a CPU (a Kubernetes pod's cpu limit: 1500 = 1.5
  // CPUs of time per period); 0 = as many CPUs as it holds.
  int64_t cpu_quota_millis = 0;

  Duration time_limit = 0;    // seconds; 0 = none
  Duration kill_wait = 30;    // SIGTERM -> SIGKILL grace at the limit and on cancel
  int32_t signal_number = 0;  // --signal=[B:]SIG@SECS
  Duration signal_before = 0;
  bool signal_batch_only = false;

  std::string submit_dir;
  std::string submit_host;
  Time submit_time = 0;
  Time start_time = 0;
};

// How an attempt ended. state is Slurm's name: COMPLETED, FAILED, TIMEOUT, CANCELLED,
// OUT_OF_MEMORY, NODE_FAIL (could not be started at all: bad user, work dir, ...).
struct JobResult {
  uint32_t job_id = 0;
  int32_t attempt = 0;
  std::string state;
  int32_t exit_code = 0;    // the batch script's exit code (0 when killed by a signal)
  int32_t term_signal = 0;  // the signal that killed it, if any
  Time start_time = 0;
  Time end_time = 0;
  double cpu_seconds = 0;   // user + system CPU time of all its processes
  int64_t max_rss_mib = 0;  // memory high-water mark
  // The kernel's count of its waited processes (getrusage RUSAGE_CHILDREN): user and system CPU
  // time, and the peak RSS of the largest one. A step's part on another node reports its tasks'
  // usage with these (sacct's UserCPU, SystemCPU and MaxRSS of JOB.N).
  double user_cpu_seconds = 0;
  double system_cpu_seconds = 0;
  int64_t max_task_rss_kib = 0;
  double gpu_utilization = -1;  // mean over its GPUs in percent; -1 when not measured
  std::string message;          // for humans: why it failed to start, what it could not enforce
  // The agent killed it after losing the controller for its fence time (docs/security.md): the
  // controller ends it NODE_FAIL (requeued if it may be), as for a node it finds down.
  bool fenced = false;
  // Containers: the image as "repository@sha256:..." (a Pod's imageID), and why the container could
  // not start, as kubelet names it (ErrImagePull, ErrImageNeverPull, InvalidImageName,
  // CreateContainerError);
  // "" when it started. The controller sends a Pod whose image could not be pulled back to the
  // queue with a back-off (ImagePullBackOff) and fails a Slurm job.
  std::string image_digest;
  std::string image_error;
};

std::string EncodeLaunchSpec(const LaunchSpec& spec);
Result<LaunchSpec> DecodeLaunchSpec(std::string_view json);

// The NVML indices of the job's devices that NVML can measure (gpu_nvml_indices' entries >= 0),
// in order: what the supervisor samples for the job's GPU utilisation.
std::vector<int32_t> NvmlIndicesOf(const LaunchSpec& spec);
std::string EncodeJobResult(const JobResult& result);
Result<JobResult> DecodeJobResult(std::string_view json);

}  // namespace berth::agent

#endif  // BERTH_AGENT_LAUNCH_H_
