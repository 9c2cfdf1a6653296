// kubectl attach on the agent (docs/adr/0006-pod-streams.md): the pod's main process's output
// from the moment of attaching, its stdin (a pod with stdin: true) and its terminal (tty: true).
//
// The output is read from the job's stdout file as it grows (what the process, or the supervisor
// copying its terminal, writes there: one file, so stdout and stderr both come on the stdout
// channel), so any number of clients can attach at once and an agent restart loses nothing. The
// stdin pipe's write end or the terminal's master comes from the job's supervisor
// (attach_socket.h). When the job ends (its result is written), the rest of the file goes out
// and the error channel carries the process's exit as for exec.
//
// Thread safety: ServeAttach runs on its caller's thread (a stream thread).
// Used by: agent_streams.cc; tests (pod_attach_test.cc).
#ifndef BERTH_AGENT_POD_ATTACH_H_
#define BERTH_AGENT_POD_ATTACH_H_

#include <atomic>
#include <optional>
#include <string>

#include "agent/launch.h"
#include "agent/pod_stream.h"
#include "net/websocket.h"

namespace berth::agent {

// The job attached to.
struct AttachTarget {
  std::string dir;       // the attempt's folder (its attach.sock, its result)
  std::string log_path;  // its stdout file
  bool open_stdin = false;
  bool tty = false;
  int wake_fd = -1;  // readable when the result may have come (inotify on dir); -1: none
};

// The job's stdout file, as its supervisor resolved it (supervise_setup.cc: the spec's
// pattern, the job's fields, this node's name).
std::string JobStdoutPath(const LaunchSpec& spec, const std::string& node_name);

// The exit the error channel reports for a job's result: its exit code, 128 + the signal that
// killed it.
ExecOutcome AttachOutcome(const JobResult& result);

struct AttachLimits {
  int poll_ms = 50;          // how often the file and the result are looked at
  int stdin_wait_ms = 5000;  // for the supervisor's socket of a job that is still starting
  size_t max_stdin_buffer = 1 << 20;
};

// Serves one attach on `ws` until the job ends (its outcome sent), the client goes away, or
// `stopping`. `result` reads the job's result (nullopt while it runs).
ExecOutcome ServeAttach(net::ws::WsConnection& ws, const PodStreamRequest& request,
                        const AttachTarget& target,
                        const std::function<std::optional<JobResult>()>& result,
                        const std::atomic<bool>& stopping, const AttachLimits& limits = {});

}  // namespace berth::agent

#endif  // BERTH_AGENT_POD_ATTACH_H_
