// Pod streams' meeting point (docs/adr/0006-pod-streams.md): the Kubernetes face's connection
// thread, holding kubectl's WebSocket, waits here for the connection the pod's agent opens back
// to the controller (GET /v1/agents/NODE/streams/ID, upgraded); the agent's connection thread
// hands its socket over and waits until the face is done with it.
//
// Each stream has a fresh 128-bit random id, is bound to one node, is claimed at most once, and
// expires unclaimed after the face's wait. At most kMaxPending streams wait at once.
//
// Thread safety: every method is thread-safe (one mutex). Used by the controller's K8sPort
// (OpenAgentStream) and its /v1 endpoint kAgentStream.
#ifndef BERTH_CONTROLLER_STREAM_RENDEZVOUS_H_
#define BERTH_CONTROLLER_STREAM_RENDEZVOUS_H_

#include <atomic>
#include <condition_variable>
#include <map>
#include <memory>
#include <string>

#include "common/status.h"
#include "common/thread_annotations.h"

namespace berth::controller {

// The agent's side of one stream, lent to the face until it calls Done().
class AgentStreamLink {
 public:
  int fd() const { return fd_; }
  // What the agent sent after its request (the start of its first frames).
  const std::string& already_read() const { return already_read_; }
  // The face is done: the agent's connection thread returns and its connection closes.
  void Done() EXCLUDES(mu_);

 private:
  friend class StreamRendezvous;
  int fd_ = -1;
  std::string already_read_;
  Mutex mu_;
  std::condition_variable cv_;
  bool done_ GUARDED_BY(mu_) = false;
};

class StreamRendezvous {
 public:
  static constexpr size_t kMaxPending = 1024;

  // Registers a stream for `node`; its id. RESOURCE_EXHAUSTED when kMaxPending wait already.
  Result<std::string> Open(const std::string& node) EXCLUDES(mu_);

  // Waits up to timeout_ms (or until `stopping`) for the agent to Arrive; the stream is
  // forgotten either way. UNAVAILABLE when it did not come.
  Result<std::shared_ptr<AgentStreamLink>> Await(const std::string& id, int timeout_ms,
                                                 const std::atomic<bool>& stopping) EXCLUDES(mu_);

  // The agent of `node` brings stream `id`'s connection: hands it to the waiting face and
  // blocks until the face calls Done() (or `stopping`: then the socket is shut down so that the
  // face's relay ends, and it still waits for Done). NOT_FOUND: no such stream waiting (unknown,
  // claimed, expired); PERMISSION_DENIED: the stream is another node's.
  Status Arrive(const std::string& id, const std::string& node, int fd, std::string already_read,
                const std::atomic<bool>& stopping) EXCLUDES(mu_);

  // Whether stream `id` waits for `node`'s agent now (as Arrive would find it): OK, NOT_FOUND
  // or PERMISSION_DENIED. Lets the endpoint refuse before it upgrades the connection.
  Status Waiting(const std::string& id, const std::string& node) const EXCLUDES(mu_);

  size_t pending() const EXCLUDES(mu_);

 private:
  struct Pending {
    std::string node;
    std::shared_ptr<AgentStreamLink> link;  // set by Arrive
  };
  mutable Mutex mu_;
  std::condition_variable cv_;
  std::map<std::string, Pending> pending_ GUARDED_BY(mu_);
};

}  // namespace berth::controller

#endif  // BERTH_CONTROLLER_STREAM_RENDEZVOUS_H_
