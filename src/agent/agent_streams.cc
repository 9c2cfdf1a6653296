// Pod streams on the agent (docs/adr/0006-pod-streams.md): for a stream command, a thread of its
// own connects back to the controller (GET /v1/agents/NODE/streams/ID, upgraded to a
// WebSocket, with the agent's usual address and credential) and serves the request there in
// the pod's process context (pod_stream.h), or for a pod in a container image with `runc exec`
// in its container (container_exec.h); port-forward in pod_portforward.h, attach in
// pod_attach.h.
#include <signal.h>
#include <sys/inotify.h>
#include <unistd.h>

#include <filesystem>
#include <nlohmann/json.hpp>

#include "agent/agent_internal.h"
#include "agent/container_exec.h"
#include "agent/file_util.h"
#include "agent/job_cgroup.h"
#include "agent/pod_attach.h"
#include "agent/pod_portforward.h"
#include "agent/proc_tree.h"

namespace berth::agent {
namespace {

namespace ws = net::ws;

// Ends the stream with a Status on the error channel (3) that kubectl prints.
void Refuse(ws::WsConnection& conn, const std::string& message) {
  ExecOutcome outcome;
  outcome.error = message;
  std::string m(1, '\x03');
  m += OutcomeStatus(outcome, {}).dump();
  (void)conn.Send(ws::Opcode::kBinary, m);
  conn.SendClose(ws::kCloseNormal, "");
}

// kubectl port-forward (pod_portforward.h): the pod must run; its processes are its main
// process and every descendant (the job's supervisor is a subreaper: none escapes).
void ServePortForwardStream(ws::WsConnection& conn, const nlohmann::json& body,
                            const std::string& dir, const std::string& node, uint32_t job_id,
                            const std::atomic<bool>& stopping) {
  Result<PortForwardRequest> request = DecodePortForwardRequest(body);
  if (!request.ok()) return Refuse(conn, request.status().message());
  Result<std::string> pid_text = ReadFile(dir + "/job.pid");
  const pid_t pid = pid_text.ok() ? static_cast<pid_t>(std::atoll(pid_text->c_str())) : -1;
  auto running = [&dir, pid] { return pid > 0 && !ReadResult(dir) && ::kill(pid, 0) == 0; };
  if (!running()) {
    return Refuse(conn,
                  "the pod's job " + std::to_string(job_id) + " is not running on node " + node);
  }
  PortForwardPod pod{.running = running, .processes = [pid] {
                       std::vector<pid_t> all = DescendantsOf(pid);
                       all.push_back(pid);
                       return all;
                     }};
  ServePortForward(conn, *request, pod, stopping);
}

// kubectl attach (pod_attach.h): no process context, only the job's output file and its
// supervisor (stdin, terminal). A pod that kubectl run attaches to as soon as it runs may not
// have its folder yet (the launch command is served beside the stream's): a few seconds' grace.
void ServeAttachStream(ws::WsConnection& conn, const PodStreamRequest& request,
                       const std::string& dir, const std::string& node,
                       const std::atomic<bool>& stopping) {
  Result<LaunchSpec> spec = ReadSpec(dir);
  for (int i = 0; i < 100 && !spec.ok() && !stopping; ++i) {
    ::usleep(100000);
    spec = ReadSpec(dir);
  }
  if (!spec.ok() || ReadResult(dir)) {
    return Refuse(conn, "the pod's job is not running on node " + node);
  }
  AttachTarget target{dir, JobStdoutPath(*spec, node), spec->open_stdin, spec->tty};
  // The result is read as soon as the supervisor writes it (renamed into place): the agent
  // removes the folder once the controller has it.
  target.wake_fd = ::inotify_init1(IN_NONBLOCK | IN_CLOEXEC);
  if (target.wake_fd >= 0) {
    (void)::inotify_add_watch(target.wake_fd, dir.c_str(),
                              IN_MOVED_TO | IN_CLOSE_WRITE | IN_DELETE_SELF | IN_MOVE_SELF);
  }
  auto result = [&dir]() -> std::optional<JobResult> {
    std::optional<JobResult> r = ReadResult(dir);
    if (!r && !std::filesystem::exists(dir + "/spec.json")) {
      r = JobResult{};  // gone before its result was seen: ended, its exit unknown here
      r->state = "UNKNOWN";
      r->message = "the pod's process ended";
    }
    return r;
  };
  AttachLimits limits;
  // A pod in an image may be Running while its node still pulls the image or runc creates the
  // container: its stdin socket comes once the container is made.
  if (!spec->container.empty()) limits.stdin_wait_ms = 120000;
  ServeAttach(conn, request, target, result, stopping, limits);
  if (target.wake_fd >= 0) ::close(target.wake_fd);
}

}  // namespace

void Agent::Impl::Do(const StreamCommand& c) {
  Status st =
      streams.Start([this, c](const std::atomic<bool>& stopping) { ServeStream(c, stopping); });
  if (!st.ok()) Log("pod stream: %s", st.message());
}

void Agent::Impl::ServeStream(const StreamCommand& c, const std::atomic<bool>& stopping) {
  Result<std::unique_ptr<net::HttpClient>> client = Connect(10000);
  if (!client.ok()) {
    Log("pod stream: %s", client.status().message());
    return;
  }
  int fd = -1;
  std::string already;
  Result<net::ClientResponse> up =
      (*client)->Upgrade("/v1/agents/" + node + "/streams/" + c.stream_id,
                         {{"Upgrade", "websocket"},
                          {"Sec-WebSocket-Key", ws::NewClientKey()},
                          {"Sec-WebSocket-Version", "13"}},
                         &fd, &already);
  if (!up.ok() || up->status != 101) {
    Log("pod stream: the controller refused it: %s",
        up.ok() ? std::to_string(up->status) + " " + up->body : up.status().message());
    return;
  }
  // What came with the 101 is the start of the first frames (the client's stdin may be there).
  ws::WsConnection conn(fd, false, ws::Role::kClient, ws::WsLimits{.max_message = 1 << 20},
                        std::move(already));
  const nlohmann::json body = nlohmann::json::parse(c.request, nullptr, false);
  const std::string dir = FolderOf(c.target.job_id, c.target.attempt);
  if (body.is_object() && body.value("kind", "") == "portforward") {
    return ServePortForwardStream(conn, body, dir, node, c.target.job_id, stopping);
  }
  Result<PodStreamRequest> request = DecodePodStreamRequest(body);
  if (!request.ok()) return Refuse(conn, request.status().message());
  if (request->kind == "attach") return ServeAttachStream(conn, *request, dir, node, stopping);
  Result<LaunchSpec> spec = ReadSpec(dir);
  Result<std::string> pid_text = ReadFile(dir + "/job.pid");
  if (!spec.ok() || !pid_text.ok() || ReadResult(dir)) {
    return Refuse(conn, "the pod's job " + std::to_string(c.target.job_id) +
                            " is not running on node " + node);
  }
  if (!spec->container.empty()) {
    // In the pod's container, with runc exec (container_exec.h).
    Result<RuncTarget> target = ReadRuncTarget(dir);
    if (!target.ok()) return Refuse(conn, target.status().message());
    ContainerExec exec(*target);
    ServeCommand(
        conn, *request, [&](const winsize& size) { return exec.Start(*request, size); }, stopping);
    return;
  }
  Result<PodContext> context =
      ReadPodContext(static_cast<pid_t>(std::atoll(pid_text->c_str())),
                     JobCgroupName(c.target.job_id, c.target.attempt, dir), c.target.job_id);
  if (!context.ok()) return Refuse(conn, context.status().message());
  ServeExec(conn, *request, *context, stopping);
}

}  // namespace berth::agent
