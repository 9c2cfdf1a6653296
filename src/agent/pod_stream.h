// The agent's side of pod streams (kubectl exec; docs/adr/0006-pod-streams.md): the request the
// Kubernetes face sends in a stream command, the pod's process context read from its main
// process, the command started in that context, and the loop that serves one stream over the
// WebSocket the agent opened back to the controller.
//
// The request (a JSON object, written by src/k8s/face_stream.cc):
//   {"kind": "exec", "command": ["sh", "-c", "..."], "tty": false, "stdin": true,
//    "stdout": true, "stderr": true, "protocol": "v5.channel.k8s.io"}
//
// On the WebSocket every binary message is one of the client's channel messages (its first byte
// the channel: 0 stdin, 1 stdout, 2 stderr, 3 error, 4 resize, 255 close in v5), relayed by the
// controller unread.
//
// Thread safety: the parse functions are pure; ServeExec runs on its caller's thread (the
// agent's stream thread) and owns the process it starts. PodStreams is thread-safe.
// Used by: the agent daemon (agent_actions.cc, StreamCommand); tests (pod_stream_test.cc).
#ifndef BERTH_AGENT_POD_STREAM_H_
#define BERTH_AGENT_POD_STREAM_H_

#include <sys/ioctl.h>
#include <sys/types.h>

#include <atomic>
#include <condition_variable>
#include <functional>
#include <nlohmann/json.hpp>
#include <string>
#include <string_view>
#include <thread>
#include <vector>

#include "agent/cgroup_layout.h"
#include "common/status.h"
#include "common/thread_annotations.h"
#include "net/websocket.h"

namespace berth::agent {

struct PodStreamRequest {
  std::string kind = "exec";
  std::vector<std::string> command;
  bool tty = false;
  bool stdin = false;
  bool stdout = true;
  bool stderr = true;
  std::string protocol = "v5.channel.k8s.io";
};
// INVALID_ARGUMENT naming the field for a request that is not one.
Result<PodStreamRequest> DecodePodStreamRequest(const nlohmann::json& j);

// Who and where the pod's main process is: what an exec'd command inherits.
struct PodContext {
  pid_t pid = -1;
  uid_t uid = 0;
  gid_t gid = 0;
  std::vector<gid_t> groups;
  std::vector<std::string> environment;  // "NAME=value", as the process was started with
  std::string cwd;
  std::vector<std::string> cgroup_procs;  // the cgroup.procs file of each of its groups
};

// The real uid, gid and supplementary groups of a /proc/PID/status text.
Status ParseStatusIds(std::string_view status, PodContext* out);
// The NUL-separated entries of a /proc/PID/environ text.
std::vector<std::string> ParseEnviron(std::string_view environ);
// The cgroup.procs files of the groups a /proc/PID/cgroup text names, under the mounts of a
// /proc/self/mountinfo text (v1 hierarchies by their controllers or name=, cgroup2 for "0::").
std::vector<std::string> CgroupProcsFiles(std::string_view mountinfo, std::string_view proc_cgroup);
// Reads the context of process `pid` from /proc, keeping the cgroups whose path has the
// component `job_group` (the job's own: JobCgroupName; "" keeps none). NOT_FOUND when it has
// ended; FAILED_PRECONDITION when it is not the job's (its groups are others', or, without
// groups, its environment has no SLURM_JOB_ID=`job_id`): a pid the system gave to another
// process since.
Result<PodContext> ReadPodContext(pid_t pid, std::string_view job_group, uint32_t job_id);

// `name` found as the pod's PATH finds it (a name with a slash is taken as it is, relative to
// cwd); NOT_FOUND with exec's words when nothing executable is there.
Result<std::string> ResolveCommand(const std::string& name, const PodContext& context);

// A resize message's size (channel 4: {"Width":W,"Height":H}); false when it is not one.
bool ParseResize(std::string_view payload, winsize* size);
// Sends one message on a channel (its first byte).
Status SendChannel(net::ws::WsConnection& conn, uint8_t channel, std::string_view data);

// The end of one stream, as the error channel reports it.
struct ExecOutcome {
  bool started = false;
  int exit_code = 0;  // 128 + the signal when one ended it
  std::string error;  // why it did not start
};

// The v1 Status the error channel carries for an outcome (Success; NonZeroExitCode with the
// code in details.causes; InternalError for a command that did not start).
nlohmann::json OutcomeStatus(const ExecOutcome& outcome, const std::vector<std::string>& command);

// Limits of one stream.
struct StreamLimits {
  size_t max_stdin_buffer = 1 << 20;  // stdin not yet taken by the process; more waits
  int drain_after_exit_ms = 1000;     // output still read after the process ended
  int hangup_grace_ms = 10000;        // after the client left: SIGHUP, then SIGKILL after this
};

// Runs request.command in `context` and serves it on `ws` until it ends and its outcome went
// out on the error channel, the client goes away (the process then gets SIGHUP, and SIGKILL
// after the grace), or `stopping`. Returns the outcome.
ExecOutcome ServeExec(net::ws::WsConnection& ws, const PodStreamRequest& request,
                      const PodContext& context, const std::atomic<bool>& stopping,
                      const StreamLimits& limits = {});

// A command started for a stream: the process the stream waits for and the parent's ends of its
// stdio (non-blocking; the caller of ServeCommand owns and closes them).
struct StreamProcess {
  pid_t pid = -1;  // a child of the caller, reaped by ServeCommand; its exit status is the outcome
  int in = -1;     // its stdin (the pty master with a terminal); -1 without stdin
  int out = -1;    // its stdout (the pty master with a terminal)
  int err = -1;    // its stderr; -1 with a terminal
  // Sends a signal to what the client's hang-up ends; empty: kill(-pid, sig), the process group
  // of `pid`.
  std::function<void(int sig)> signal;
};
// The pipes of a command started without a terminal: one for each of stdin, stdout and stderr
// that the request asks for. Every start of a stream's command (the pod's process context,
// `runc exec`) makes them the same way; the destructor closes what was not handed out.
class StreamPipes {
 public:
  StreamPipes() = default;
  ~StreamPipes() { Close(); }
  StreamPipes(const StreamPipes&) = delete;
  StreamPipes& operator=(const StreamPipes&) = delete;

  // Makes the pipes the request asks for (close-on-exec).
  Status Open(const PodStreamRequest& request);
  // The child's end of stdio `i` (0, 1, 2), or `fallback` where the request asked for none.
  // Async-signal-safe: for the child between fork and exec.
  int ChildEnd(int i, int fallback) const {
    const int fd = pipes_[i][i == 0 ? 0 : 1];
    return fd >= 0 ? fd : fallback;
  }
  // Moves the parent's ends to `p` (in, out, err) and closes the child's.
  void HandOut(StreamProcess* p);
  void Close();

 private:
  int pipes_[3][2] = {{-1, -1}, {-1, -1}, {-1, -1}};
};

// Makes the parent's ends of a started command's stdio non-blocking, as ServeCommand reads them.
void SetNonBlocking(const StreamProcess& p);

// Starts the request's command once the terminal's size is known (zero without a terminal, or
// when the client sent none); an error's message goes to the client as why it did not start.
using StreamStarter = std::function<Result<StreamProcess>(const winsize& size)>;

// ServeExec with the start of the command left to `start`: the same stdio, resize, hang-up and
// exit status handling for whatever runs the command (the pod's process context, `runc exec`).
ExecOutcome ServeCommand(net::ws::WsConnection& ws, const PodStreamRequest& request,
                         const StreamStarter& start, const std::atomic<bool>& stopping,
                         const StreamLimits& limits = {});

// The agent's stream threads: at most kMax at once, each joined by StopAll (or when another
// starts after it ended).
class PodStreams {
 public:
  static constexpr size_t kMax = 64;
  ~PodStreams() { StopAll(); }
  // Runs fn(stopping) on a thread of its own; RESOURCE_EXHAUSTED at kMax.
  Status Start(std::function<void(const std::atomic<bool>&)> fn) EXCLUDES(mu_);
  // Sets `stopping` and joins every thread.
  void StopAll() EXCLUDES(mu_);

 private:
  struct Slot {
    std::thread thread;
    std::shared_ptr<std::atomic<bool>> done;
  };
  Mutex mu_;
  std::vector<Slot> slots_ GUARDED_BY(mu_);
  std::atomic<bool> stopping_{false};
};

}  // namespace berth::agent

#endif  // BERTH_AGENT_POD_STREAM_H_
