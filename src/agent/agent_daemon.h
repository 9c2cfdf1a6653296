// The node agent (`berth agent`, or inside `berth up`): registers its node with the controller,
// long-polls for commands (launch, cancel, signal), starts one supervisor per job attempt, and
// reports ends with their results. It never runs user code itself, and it keeps nothing in
// memory that matters: the job folders hold it all, so a restarted agent adopts the jobs that
// kept running and reports those that ended while it was away.
#ifndef BERTH_AGENT_AGENT_DAEMON_H_
#define BERTH_AGENT_AGENT_DAEMON_H_

#include <atomic>
#include <memory>
#include <string>
#include <vector>

#include "common/status.h"

namespace berth::agent {

struct AgentOptions {
  // "unix:/path/controller.sock", or "tls:host:port" for a controller on another host (its TLS
  // API; docs/security.md): the agent then needs ca_file, and join_token or a credential.
  // A comma list names an HA group's controllers (docs/ha.md): the agent moves on to the next
  // when one cannot be reached or is a standby.
  std::string controller;
  std::string ca_file;          // the controller's CA (PEM), for tls: addresses
  std::string join_token;       // the cluster's join token: exchanged once for the credential
  std::string credential_file;  // "" = state_dir/credential (0600)
  // Seconds without reaching the controller after which the agent kills its jobs (fencing);
  // -1 = what the controller says at registration (half its node timeout), 0 = never.
  int fence_s = -1;
  std::string node_name;     // "" = the short host name
  std::string state_dir;     // job folders go in state_dir/jobs
  std::string berth_binary;  // for `berth supervise`
  // GPUs to declare when NVML finds none (a test machine, or GPUs the driver does not show).
  int declared_gpus = 0;
  std::string declared_gpu_type = "gpu";
  // The node's CUDA MPS control daemon's directories, given to MPS shares; "" = CUDA's default.
  std::string mps_pipe_dir;
  std::string mps_log_dir;
  int cpus = 0;         // 0 = detected
  int64_t mem_mib = 0;  // 0 = detected
  std::vector<std::string> features;
  int poll_wait_ms = 20000;  // long-poll length
  // "HOST:PORT" to serve GET /metrics on (Prometheus's text format, docs/metrics.md); port 0
  // picks a free one, which the agent prints. "" = no metrics server.
  std::string metrics_listen;
  // Containers (docs/containers.md): off, or on where runc is found.
  bool containers = true;
  std::string image_store;  // "" = state_dir/images
  std::string registry_ca_dir;
  std::vector<std::string> insecure_registries;
  int64_t image_cache_bytes = 0;  // 0 = no limit
};

class Agent {
 public:
  explicit Agent(AgentOptions options);
  ~Agent();
  // Runs until `stop` becomes true: registers (retrying while the controller is away), serves
  // commands and reports ends. Returns when stopped; jobs keep running. Errors: the node cannot
  // be detected, the metrics address cannot be listened on, the controller refuses the agent.
  Status Run(const std::atomic<bool>& stop);

 private:
  struct Impl;
  std::unique_ptr<Impl> impl_;
};

}  // namespace berth::agent

#endif  // BERTH_AGENT_AGENT_DAEMON_H_
