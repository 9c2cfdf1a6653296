// `kubectl exec` into a pod that runs in a container image (docs/adr/0006-pod-streams.md, "Where
// the command runs"): the command runs with `runc exec` in the pod's container, so it gets the
// container's root filesystem, namespaces, cgroup, user, environment and working directory (the
// process of the container's config.json with the command's arguments in place of its own).
//
// Without a terminal runc gets the stream's pipes as its stdio and hands them to the command; the
// stream waits for runc, which exits with the command's status. With one, runc sends the
// pseudo-terminal's master (SCM_RIGHTS) to a Unix socket in a folder of the exec's own (0700) and
// the stream serves that master; runc accepts a console socket only when it detaches, so a
// watcher process (a child subreaper, as containerd's shim is) runs `runc exec --detach`, reaps
// the command once runc left it, and exits with its status. The command's pid (runc's
// --pid-file) is what a client's hang-up signals: runc cannot pass on a SIGKILL.
//
// Thread safety: the free functions are pure, except ReceiveFd (one socket) and FindInContainer
// (a child process). A ContainerExec belongs to one stream thread.
// Used by: agent_streams.cc; supervise_attach.cc (ReceiveFd: a tty pod's terminal from runc
// create); tests (container_exec_test.cc).
#ifndef BERTH_AGENT_CONTAINER_EXEC_H_
#define BERTH_AGENT_CONTAINER_EXEC_H_

#include <sys/ioctl.h>
#include <sys/types.h>

#include <cstdint>
#include <nlohmann/json.hpp>
#include <string>
#include <string_view>
#include <vector>

#include "agent/pod_stream.h"
#include "common/status.h"

namespace berth::agent {

// How runc reaches a job's running container.
struct RuncTarget {
  std::string runc;     // the runc binary
  std::string root;     // runc's state folder (--root)
  std::string id;       // the container's id
  std::string bundle;   // the folder of its config.json
  pid_t init_pid = -1;  // the container's first process (the pod's main process), host pid
};

// The target of the container of the job attempt in `job_dir` (its ctr/runc.json, written by
// the supervisor once the container started, and job.pid). FAILED_PRECONDITION when the
// container has not started.
Result<RuncTarget> ReadRuncTarget(const std::string& job_dir);

// The process of an exec: config.json's "process" (the container's user, groups, environment,
// working directory, capabilities, rlimits, no-new-privileges) with `args` and `terminal` in
// place of its own. INVALID_ARGUMENT when the text has no process object.
Result<nlohmann::json> ExecProcess(std::string_view config_json,
                                   const std::vector<std::string>& args, bool terminal);

// runc's argv for an exec of the process in `process_file`, its pid written to `pid_file`, and
// with a terminal (console_socket not empty) the master sent to that socket.
std::vector<std::string> RuncExecArgv(const RuncTarget& target, const std::string& process_file,
                                      const std::string& pid_file,
                                      const std::string& console_socket);

// Where the container's PATH may find a command: the paths to try in order, and the message
// when none of them is an executable file (the words of ResolveCommand for a process pod).
struct CommandLookup {
  std::vector<std::string> candidates;  // absolute paths inside the container
  std::string not_found;
};
// `env` is the process's ("NAME=value"), `cwd` its working directory (absolute).
// INVALID_ARGUMENT for an empty name.
Result<CommandLookup> LookupCommand(const std::string& name, const std::vector<std::string>& env,
                                    const std::string& cwd);

// The first candidate that is an executable regular file in the root filesystem of process
// `pid` (its mounts included), checked from a child chrooted there. NOT_FOUND with
// lookup.not_found when there is none; UNAVAILABLE when the root cannot be entered (the process
// ended).
Result<std::string> FindInContainer(pid_t pid, const CommandLookup& lookup);

// One file descriptor sent with SCM_RIGHTS on the connected Unix socket `sock` (close-on-exec
// in this process), waiting until deadline_ms (net::SteadyNowMs). UNAVAILABLE at the deadline or
// when the peer closed; INVALID_ARGUMENT when the message carried no descriptor.
Result<int> ReceiveFd(int sock, int64_t deadline_ms);

// One exec into a container: its temporary folder (process.json, the pid file, the console
// socket), removed when it is destroyed (after the stream reaped runc).
class ContainerExec {
 public:
  explicit ContainerExec(RuncTarget target) : target_(std::move(target)) {}
  ~ContainerExec();
  ContainerExec(const ContainerExec&) = delete;
  ContainerExec& operator=(const ContainerExec&) = delete;

  // Starts `runc exec` for request.command (a StreamStarter); `size` is the terminal's. With a
  // terminal it returns once runc sent the master.
  Result<StreamProcess> Start(const PodStreamRequest& request, const winsize& size);

 private:
  Result<StreamProcess> StartRunc(const PodStreamRequest& request, const winsize& size);

  RuncTarget target_;
  std::string dir_;  // the exec's folder; "" before Start
};

}  // namespace berth::agent

#endif  // BERTH_AGENT_CONTAINER_EXEC_H_
