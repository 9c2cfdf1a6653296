// How nodes are powered up and down (docs/autoscaling.md): slurm.conf's ResumeProgram and
// SuspendProgram, run with a hostlist argument as Slurm runs them, or berth's built-in `local`
// provider, which starts and stops `berth agent` processes on this machine, one per node, each
// declaring its node's configured size.
//
// Thread safety: a provider is used from the controller's state thread only. Resume and Suspend
// return at once; the programs and agents run in the background and Reap collects them.
#ifndef BERTH_CONTROLLER_POWER_PROVIDER_H_
#define BERTH_CONTROLLER_POWER_PROVIDER_H_

#include <sys/types.h>

#include <map>
#include <memory>
#include <string>
#include <vector>

#include "common/status.h"
#include "core/model/node.h"

namespace berth::controller {

class PowerProvider {
 public:
  virtual ~PowerProvider() = default;
  virtual Status Resume(const std::vector<std::string>& nodes) = 0;
  virtual Status Suspend(const std::vector<std::string>& nodes) = 0;
  // Collects what ended; returns a line for each failure ("ResumeProgram ... exited with 3").
  virtual std::vector<std::string> Reap() = 0;
  // The controller stops: what the provider started for itself (local agents) stops too.
  virtual void Shutdown() {}
};

// Runs `program HOSTLIST` (stdin /dev/null, stdout and stderr to the controller's stderr).
class ProgramProvider : public PowerProvider {
 public:
  // Either program may be empty: that action then does nothing.
  ProgramProvider(std::string resume_program, std::string suspend_program);
  Status Resume(const std::vector<std::string>& nodes) override;
  Status Suspend(const std::vector<std::string>& nodes) override;
  std::vector<std::string> Reap() override;
  // Runs `program` with the nodes' hostlist, for ResumeFailProgram.
  Status Run(const std::string& what, const std::string& program,
             const std::vector<std::string>& nodes);

 private:
  std::string resume_, suspend_;
  std::map<pid_t, std::string> running_;  // pid -> "ResumeProgram /path nodes"
};

// Starts `berth agent` for each node: `self_exe agent --controller unix:SOCKET --home
// HOME/NODE --node-name NODE --cpus C --mem M [--gpus N --gpu-type T]`, its output in
// HOME/NODE/agent.log and its pid in HOME/NODE/agent.pid (so that a restarted controller can
// still stop it). Suspend sends SIGTERM.
class LocalProvider : public PowerProvider {
 public:
  LocalProvider(std::string self_exe, std::string socket_path, std::string home,
                std::map<std::string, core::NodeSpec> nodes);
  Status Resume(const std::vector<std::string>& nodes) override;
  Status Suspend(const std::vector<std::string>& nodes) override;
  std::vector<std::string> Reap() override;
  void Shutdown() override;

 private:
  pid_t PidOf(const std::string& node) const;
  std::string self_exe_, socket_path_, home_;
  std::map<std::string, core::NodeSpec> nodes_;
  std::map<pid_t, std::string> running_;  // pid -> node
};

}  // namespace berth::controller

#endif  // BERTH_CONTROLLER_POWER_PROVIDER_H_
