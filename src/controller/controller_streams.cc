// Pod streams on the controller (docs/adr/0006-pod-streams.md): the face asks for an agent's
// stream through its port (K8sPort::OpenAgentStream: a stream command to the pod's node, then a
// wait in Impl::streams), and the agent brings it on GET /v1/agents/{node}/streams/{id}, which
// the route table allows only to that node's credential (or an operator's, as every agent
// endpoint).
#include <strings.h>

#include "api/errors.h"
#include "controller/controller_internal.h"
#include "net/websocket.h"

namespace berth::controller {
namespace {

constexpr int kAgentWaitMs = 30000;

// The agent's connection, handed back to the rendezvous when the face is done.
class LinkedStream final : public k8s::AgentStream {
 public:
  explicit LinkedStream(std::shared_ptr<AgentStreamLink> link) : link_(std::move(link)) {}
  ~LinkedStream() override { link_->Done(); }
  int fd() const override { return link_->fd(); }
  const std::string& already_read() const override { return link_->already_read(); }

 private:
  std::shared_ptr<AgentStreamLink> link_;
};

}  // namespace

net::HttpResponse Controller::Impl::AgentStreamRoute(const ApiCall& c) {
  const std::string node = c.match.Param("node");
  const std::string id = c.match.Param("id");
  if (::strcasecmp(c.req.Header("upgrade").c_str(), "websocket") != 0 ||
      c.req.Header("sec-websocket-key").empty()) {
    return Error(Status::InvalidArgument("a pod stream is a WebSocket (Upgrade: websocket)"));
  }
  // A command delivered twice must not run twice: only a waiting stream is upgraded.
  if (Status waiting = streams.Waiting(id, node); !waiting.ok()) return Error(waiting);
  net::HttpResponse r;
  r.status = 101;
  r.headers = {{"Upgrade", "websocket"},
               {"Sec-WebSocket-Accept", net::ws::AcceptKey(c.req.Header("sec-websocket-key"))}};
  r.upgrade = [this, node, id](net::UpgradedConnection& conn) {
    Status st = streams.Arrive(id, node, conn.fd, std::move(conn.already_read), *conn.stopping);
    if (!st.ok()) {
      // Unknown or expired (the face gave up): say so to the agent and close.
      net::ws::WsConnection ws(conn.fd, false, net::ws::Role::kServer, {});
      ws.SendClose(net::ws::kCloseGoingAway, st.message());
    }
  };
  return r;
}

Result<std::unique_ptr<k8s::AgentStream>> K8sPort::OpenAgentStream(
    const k8s::PodJob& job, const nlohmann::json& request, const std::atomic<bool>& stopping) {
  const std::string node = job.facts.node;
  if (node.empty() || job.ended) {
    return Status::FailedPrecondition("the pod's job runs on no node");
  }
  BERTH_ASSIGN_OR_RETURN(std::string id, im_.streams.Open(node));
  const agent::StreamCommand command{{job.id, job.facts.restart_count}, id, request.dump()};
  Reply sent = im_.Call([this, node, command](Txn&, Reply*) {
    im_.state_thread.AssertHeld();  // a command: on the state thread
    im_.SendCommand(node, command);
  });
  if (!sent.status.ok()) {
    (void)im_.streams.Await(id, 0, stopping);  // forgets it
    return sent.status;
  }
  BERTH_ASSIGN_OR_RETURN(std::shared_ptr<AgentStreamLink> link,
                         im_.streams.Await(id, kAgentWaitMs, stopping));
  return std::unique_ptr<k8s::AgentStream>(std::make_unique<LinkedStream>(std::move(link)));
}

}  // namespace berth::controller
