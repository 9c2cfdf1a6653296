// A job in a container (docs/containers.md): the pure decisions the supervisor makes before it
// runs `runc create` — the process's arguments (Kubernetes' rule or pyxis'), its environment,
// its working directory, the mounts and GPU devices, and the OCI runtime configuration
// (config.json) that says all of it to runc.
//
// Thread safety: pure functions, except NvidiaDevices/NvidiaLibraries, which read /dev and run
// `ldconfig -p`.
#ifndef BERTH_AGENT_CONTAINER_H_
#define BERTH_AGENT_CONTAINER_H_

#include <sys/types.h>

#include <cstdint>
#include <string>
#include <utility>
#include <vector>

#include "common/status.h"
#include "image/container_spec.h"
#include "image/store.h"

namespace berth::agent {

// The container's process arguments.
//   EntryMode::kKubernetes: the image's ENTRYPOINT and CMD with the Pod's command/args over them
//     (command replaces ENTRYPOINT and drops CMD; args replaces CMD).
//   EntryMode::kJob: `job_argv` (the batch script's interpreter line, or the step's command).
// An empty result is an error that says so ("the image gives no ENTRYPOINT or CMD ...").
Result<std::vector<std::string>> ContainerArgs(const image::ContainerSpec& spec,
                                               const image::ImageConfig& config,
                                               const std::vector<std::string>& job_argv);

// The container's environment, later entries winning: the image's Env, then the job's own
// variables (SLURM_*, CUDA_VISIBLE_DEVICES, the exported ones) except PATH and LD_LIBRARY_PATH,
// which are the image's (host paths mean nothing inside), then the spec's env (a Pod's env,
// pyxis's --container-env). Sorted by name; "NAME=value" strings.
std::vector<std::string> ContainerEnv(const std::vector<std::string>& image_env,
                                      const std::vector<std::string>& job_env,
                                      const image::ContainerSpec& spec);

struct OciMount {
  std::string destination;
  std::string type;    // "bind", "tmpfs", "proc", ...
  std::string source;  // a host path for binds
  std::vector<std::string> options;
  friend bool operator==(const OciMount&, const OciMount&) = default;
};

struct OciDevice {
  std::string path;  // "/dev/nvidia0"
  int64_t major = 0;
  int64_t minor = 0;
  friend bool operator==(const OciDevice&, const OciDevice&) = default;
};

// Everything config.json says.
struct ContainerPlan {
  std::string rootfs;  // the overlay's mount point (absolute)
  bool readonly_root = false;
  std::vector<std::string> args;
  std::vector<std::string> env;
  std::string cwd = "/";
  uid_t uid = 0;
  gid_t gid = 0;
  std::vector<gid_t> groups;
  bool root_capabilities = false;  // an operator's run_as_root: runc's default capabilities
  std::vector<OciMount> mounts;    // after the standard ones (/proc, /dev, /sys ...)
  std::vector<OciDevice> devices;
  std::string hostname;  // "" = the host's (no UTS namespace)
  // The container's cgroup, relative: runc makes it under its own cgroup in each hierarchy, which
  // is the job's group where berth made one and the supervisor's elsewhere (devices, blkio ...):
  // unique per container, so that two containers never share device rules.
  std::string cgroup_name = "berth-container";
  int64_t shm_bytes = 0;  // 0: /dev/shm without a size limit (charged to the job's memory)
  // A Pod's tty: true: the process runs on a pseudo-terminal runc makes in the container, 80x24
  // at first as a bare pod's; runc sends its master to `runc create --console-socket`.
  bool terminal = false;
};

// The OCI runtime configuration (spec 1.0.2) as runc takes it: the host's network, PID and user
// namespaces (signals, ps and NCCL work as for a bare job), a mount and an IPC namespace of its
// own, no new privileges, no capabilities unless root_capabilities, the container's cgroup a
// child of the job's group (a relative cgroupsPath: runc places it under its own cgroup, which
// is the job's), the allowed devices plus `devices`.
std::string OciConfig(const ContainerPlan& plan);

// `runc create` of the container `id` from the bundle in `bundle_dir` (its config.json), with
// runc's log and the first process's pid file in that folder; with a terminal (console_socket
// not empty) runc sends the terminal's master to that Unix socket.
std::vector<std::string> RuncCreateArgv(const std::string& runc, const std::string& runc_root,
                                        const std::string& bundle_dir, const std::string& id,
                                        const std::string& console_socket);

// The GPU device files of the allocation present on this node (/dev/nvidiaN for each index, then
// nvidiactl, nvidia-uvm, nvidia-uvm-tools, nvidia-modeset where present); empty on nodes whose
// GPUs are declared only. `dev_dir` is "/dev" except in tests.
std::vector<OciDevice> NvidiaDevices(const std::vector<int32_t>& gpu_indices,
                                     const std::string& dev_dir = "/dev");
// The host driver's user-space files to bind read-only (what NVIDIA's container toolkit mounts):
// libcuda, libnvidia-*, from `ldconfig -p` output, plus nvidia-smi and nvidia-debugdump where
// found. Empty without a driver.
std::vector<std::string> NvidiaHostFiles(const std::string& ldconfig_output);

// Kubernetes' default pull policy: Always for ":latest" or no tag (and no digest), else
// IfNotPresent.
image::PullPolicy EffectivePullPolicy(const image::ContainerSpec& spec,
                                      const image::Reference& ref);

// The overlayfs mount options for the layers (top first, as relative names: the caller mounts
// from within the layers' folder, which keeps the option under the kernel's page limit).
std::string OverlayOptions(const std::vector<std::string>& layer_names_bottom_first,
                           const std::string& upper, const std::string& work);

}  // namespace berth::agent

#endif  // BERTH_AGENT_CONTAINER_H_
