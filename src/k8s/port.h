// The narrow port between the Kubernetes face (k8s::Face, face.h) and the controller that runs
// it: everything the face needs from berth, in the face's own terms (users, Pod facts, Node
// facts, store meta keys) and never in the controller's (no JobRecord, Txn, ClusterState or
// Controller::Impl). The controller implements it once (controller/k8s_port.h); the face's unit
// tests implement it with a fake (face_test_port.h).
//
// Two sides:
//   ControllerPort: what any thread may ask (reads of the published views, the watch sequence,
//     who a bearer token names, berth's own /v1 API on the face's port), the store at start-up,
//     and Run, which runs a command on the state thread.
//   StateOps: what a command may do while it runs on the state thread (submit, cancel, relabel
//     and delete Pods' jobs, node actions, store meta writes, the gang release). It exists only
//     for the duration of one command (Run's `fn`, or the controller's per-pass hook
//     Face::OnPass); every change it makes belongs to that command's transaction and is rolled
//     back with it when the command fails.
//
// Thread safety: ControllerPort's methods may be called from any thread, except Run (never from
// the state thread: it waits for it) and the start-up store methods (before the state thread
// starts). A StateOps is used only on the state thread, within the call that handed it out.
#ifndef BERTH_K8S_PORT_H_
#define BERTH_K8S_PORT_H_

#include <atomic>
#include <cstdint>
#include <functional>
#include <memory>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <vector>

#include "common/status.h"
#include "k8s/metrics.h"
#include "k8s/objects.h"
#include "k8s/pods.h"
#include "net/http.h"

namespace berth::k8s {

// Who asks: a user named by a bearer token (the face serves no other kind of caller).
struct User {
  uint32_t uid = 0;
  uint32_t gid = 0;
  std::string name;
  bool admin = false;  // root, the controller's own user, or an operator
  bool known = false;  // a user (always, for callers the face serves)
};

// A berth job as the face shows it as a Pod.
struct PodJob {
  uint32_t id = 0;
  uint32_t uid = 0;      // its owner's
  bool ended = false;    // in a terminal state
  bool started = false;  // has started (its output exists)
  bool deleted = false;  // a Kubernetes delete was asked
  // The Kubernetes metadata kept with a job made through this face (namespace, name, labels,
  // annotations, the manifest's spec, "log"); null for a Slurm job.
  std::shared_ptr<const nlohmann::json> meta;
  PodFacts facts;  // facts.meta points into `meta`

  // A Pod that still exists for Kubernetes: not ended after a delete.
  bool Visible() const { return !(deleted && ended); }
};

// A job's state ("RUNNING", "COMPLETED", ...) and exit code (128 + the signal when one ended it).
struct PodOutcome {
  std::string state;
  int exit_code = 0;
};

// The agent's end of a pod stream (kubectl exec; docs/adr/0006-pod-streams.md): a WebSocket on
// which the pod's agent is the client, lent to the face until the object is destroyed.
class AgentStream {
 public:
  virtual ~AgentStream() = default;
  virtual int fd() const = 0;
  // What the agent sent after its request (the start of its first frames).
  virtual const std::string& already_read() const = 0;
};

// The commands a state-thread command may run (see the file comment).
class StateOps {
 public:
  virtual ~StateOps() = default;

  // The job of a Pod (any berth job), as the state thread sees it now; nullopt when unknown.
  virtual std::optional<PodJob> Job(uint32_t id) = 0;
  // Only its state and exit code: what the Job controller reads of each of its pods on every
  // pass, so an implementation may answer it without building the whole PodJob.
  virtual std::optional<PodOutcome> Outcome(uint32_t id) {
    std::optional<PodJob> j = Job(id);
    if (!j) return std::nullopt;
    const PodFacts& f = j->facts;
    return PodOutcome{f.state, f.term_signal > 0 ? 128 + f.term_signal : f.exit_code};
  }
  // Submits the job of a Pod mapping for `who` and keeps the mapping's metadata with it.
  virtual Result<uint32_t> SubmitPod(const User& who, const PodMapping& mapping) = 0;
  // Checks a mapping's job as a dry run (where and when it would start); nothing is kept.
  virtual Status TestSubmitPod(const User& who, const PodMapping& mapping) = 0;
  // Asks a Pod's job to stop (when it runs) and marks it deleted, so that the Pod disappears
  // once the job has ended. Does nothing for an unknown or already deleted job.
  virtual void DeletePod(uint32_t id) = 0;
  // Replaces a Pod's labels and annotations (NOT_FOUND: no such job made through this face).
  virtual Status SetPodMeta(uint32_t id, const nlohmann::json& labels,
                            const nlohmann::json& annotations) = 0;
  // A node action as `berth drain` / `resume` asks it ("drain", "resume"); the node's long state
  // name after it.
  virtual Result<std::string> NodeAction(const User& who, const std::string& node,
                                         const std::string& action, const std::string& reason) = 0;
  // Writes (or deletes) one of the store's meta keys with the command's transaction.
  virtual void PutMeta(const std::string& key, const std::string& value) = 0;
  virtual void DeleteMeta(const std::string& key) = 0;
  // berth.io/gang Jobs, all or nothing: releases the held jobs among `ids` together only when a
  // trial pass on a copy of the cluster starts every one of them (and asks for a pass); returns
  // how many it released (0: none).
  virtual size_t ReleaseGang(const std::vector<uint32_t>& ids) = 0;
};

class ControllerPort {
 public:
  virtual ~ControllerPort() = default;

  // The controller's clock (Unix seconds).
  virtual int64_t Now() const = 0;

  // The watch sequence: the number of the next change event. Everything the published views
  // (jobs, nodes) hold counts every event below it.
  virtual uint64_t WatchNext() const = 0;
  // Waits up to `wait_ms` for a change event at or after `after` (or for the controller to
  // stop); returns the sequence to wait from next.
  virtual uint64_t WatchWait(uint64_t after, int wait_ms) = 0;

  // The jobs shown as Pods in namespace `ns` ("" = all; k8s::kSlurmNamespace: the Slurm jobs,
  // any other: the jobs made through this face in it), deleted ones included.
  virtual std::vector<PodJob> PodJobs(const std::string& ns) const = 0;
  // The jobs made through this face, in every namespace (a start-up's pods by name: the Slurm
  // jobs, however many, are not looked at).
  virtual std::vector<PodJob> FacePodJobs() const = 0;
  // One job; nullopt when the published view does not hold it.
  virtual std::optional<PodJob> FindPodJob(uint32_t id) const = 0;
  // The file a job's output goes to (its stdout pattern expanded as the agent does).
  virtual std::string OutputFile(uint32_t id) const = 0;
  // berth's nodes as Nodes show them (all but `created` and `berth_version`, which the face
  // fills in).
  virtual std::vector<NodeFacts> Nodes() const = 0;

  // The usage the agents measured of each node and each running job (metrics.k8s.io); none by
  // default.
  virtual UsageView Usage() const { return {}; }

  // The user a request's bearer token names; nullopt for none (or not a user's).
  virtual std::optional<User> IdentifyUser(const net::HttpRequest& req) const = 0;
  // berth's own API (/v1..., /metrics, and the web console's /ui/login and /ui/logout) on the
  // face's port, as on the Unix socket, for the caller its bearer token (or web session) names.
  virtual net::HttpResponse ServeApi(const net::HttpRequest& req) = 0;

  // Start-up only (before the state thread runs): a store meta key, those under a prefix, and a
  // direct write of one.
  virtual Result<std::optional<std::string>> GetMeta(const std::string& key) = 0;
  virtual Status ScanMeta(
      const std::string& prefix,
      const std::function<void(const std::string& key, const std::string& value)>& fn) = 0;
  virtual Status PutMetaNow(const std::string& key, const std::string& value) = 0;

  // Asks the agent of the node that runs `job` to open a pod stream serving `request` (a JSON
  // object, src/agent/pod_stream.h) and waits up to 30 s (or until `stopping`) for it to connect
  // back. FAILED_PRECONDITION: the job runs on no node; UNAVAILABLE: the agent did not come;
  // RESOURCE_EXHAUSTED: too many streams are opening at once.
  virtual Result<std::unique_ptr<AgentStream>> OpenAgentStream(const PodJob& job,
                                                               const nlohmann::json& request,
                                                               const std::atomic<bool>& stopping) {
    (void)job;
    (void)request;
    (void)stopping;
    return Status::FailedPrecondition("pod streams are not served here");
  }
  // Runs `fn` on the state thread all-or-nothing and waits until its change is durable: when it
  // returns an error (or throws), everything it did through the StateOps is undone. UNAVAILABLE
  // when the controller is stopping (fn did not run).
  virtual Status Run(const std::function<Status(StateOps&)>& fn) = 0;
};

}  // namespace berth::k8s

#endif  // BERTH_K8S_PORT_H_
