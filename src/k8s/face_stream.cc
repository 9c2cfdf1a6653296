// pods/exec (docs/kubernetes.md, docs/adr/0006-pod-streams.md): the request is checked (the pod,
// who may, the container, the command, the protocol), upgraded to a WebSocket with
// v5.channel.k8s.io or v4.channel.k8s.io, and relayed message by message to the stream the
// pod's agent opens back to the controller (ControllerPort::OpenAgentStream). pods/attach takes
// the same path with an attach request (attach_request.h); pods/portforward with the
// subprotocol SPDY/3.1+portforward.k8s.io (the agent terminates the SPDY session) or
// v4.channel.k8s.io with ?ports=.
#include <poll.h>
#include <strings.h>

#include <atomic>
#include <sstream>
#include <thread>

#include "k8s/attach_request.h"
#include "k8s/face.h"
#include "net/socket_io.h"
#include "net/websocket.h"

namespace berth::k8s {
namespace {

using nlohmann::json;
using namespace http;
namespace ws = net::ws;

constexpr std::string_view kV5 = "v5.channel.k8s.io";
constexpr std::string_view kV4 = "v4.channel.k8s.io";
constexpr int kClientIdleMs = 10 * 60 * 1000;  // kubectl pings every few seconds while it waits
constexpr size_t kMaxMessage = 1 << 20;

// Every value of a repeated query parameter, in order (HttpRequest::query keeps the last only).
// Go's clients write a space as "+".
std::vector<std::string> QueryAll(const net::HttpRequest& req, std::string_view key) {
  std::vector<std::string> out;
  const size_t q = req.target.find('?');
  if (q == std::string::npos) return out;
  std::string_view rest = std::string_view(req.target).substr(q + 1);
  while (!rest.empty()) {
    size_t amp = rest.find('&');
    std::string_view pair = rest.substr(0, amp);
    rest = amp == std::string_view::npos ? std::string_view() : rest.substr(amp + 1);
    size_t eq = pair.find('=');
    std::string name = net::UrlDecode(pair.substr(0, eq));
    if (name != key) continue;
    std::string value(eq == std::string_view::npos ? std::string_view() : pair.substr(eq + 1));
    for (char& ch : value) {
      if (ch == '+') ch = ' ';
    }
    out.push_back(net::UrlDecode(value));
  }
  return out;
}

bool QueryTrue(const net::HttpRequest& req, const char* key) {
  std::string v = Query(req, key);
  return v == "true" || v == "1" || v == "True" || v == "TRUE";
}

// The channel protocol to speak: v5, else v4, of those the client offers; "" for neither.
std::string ChooseProtocol(const std::string& offered) {
  bool v4 = false;
  std::stringstream in(offered);
  std::string p;
  while (std::getline(in, p, ',')) {
    p.erase(0, p.find_first_not_of(" \t"));
    p.erase(p.find_last_not_of(" \t") + 1);
    if (p == kV5) return std::string(kV5);
    if (p == kV4) v4 = true;
  }
  return v4 ? std::string(kV4) : "";
}

// Sends a v1 Status on the error channel and closes: how a stream that cannot start ends.
void FailStream(ws::WsConnection& client, const std::string& message) {
  std::string m(1, '\x03');
  m += StatusBody(500, "InternalError", message, nullptr).dump();
  (void)client.Send(ws::Opcode::kBinary, m);
  client.SendClose(ws::kCloseNormal, "");
}

// Relays whole messages between kubectl and the agent until either side ends; each side's
// pings, pongs and close are its own connection's business.
void Relay(ws::WsConnection& client, ws::WsConnection& agent, const std::atomic<bool>& stopping) {
  ws::Frame m;
  std::string error;
  while (!stopping) {
    pollfd fds[2] = {{client.fd(), POLLIN, 0}, {agent.fd(), POLLIN, 0}};
    const bool buffered = client.HasBuffered() || agent.HasBuffered();
    if (::poll(fds, 2, buffered ? 0 : 250) < 0 && errno != EINTR) break;
    // The client first: its idle timeout is checked on every turn.
    ws::WsConnection::Got got;
    while ((got = client.Receive(&m, 0, &stopping, &error)) == ws::WsConnection::Got::kMessage) {
      if (!agent.Send(m.opcode, m.payload).ok()) {
        client.SendClose(ws::kCloseGoingAway, "the node's agent went away");
        return;
      }
    }
    if (got == ws::WsConnection::Got::kClosed) {
      agent.SendClose(ws::kCloseNormal, "");
      return;
    }
    if (agent.HasBuffered() || (fds[1].revents & (POLLIN | POLLHUP | POLLERR))) {
      while ((got = agent.Receive(&m, 0, &stopping, &error)) == ws::WsConnection::Got::kMessage) {
        if (!client.Send(m.opcode, m.payload).ok()) {
          agent.SendClose(ws::kCloseGoingAway, "the client went away");
          return;
        }
      }
      if (got == ws::WsConnection::Got::kClosed) {
        client.SendClose(error.empty() ? ws::kCloseNormal : ws::kCloseGoingAway, "");
        return;
      }
    }
  }
  client.SendClose(ws::kCloseGoingAway, "the server is stopping");
  agent.SendClose(ws::kCloseGoingAway, "");
}

// ---- pods/portforward

constexpr std::string_view kSpdyTunnel = "SPDY/3.1+portforward.k8s.io";

// Relays as Relay does, with a thread per direction: the two directions of a port-forward's
// SPDY session must not wait on each other (the agent stops reading kubectl while a pod's socket
// is behind, and its answers must still get out).
void RelayEachWay(ws::WsConnection& client, ws::WsConnection& agent,
                  const std::atomic<bool>& stopping) {
  std::atomic<bool> done{false};
  auto pump = [&](ws::WsConnection& from, ws::WsConnection& to) {
    ws::Frame m;
    std::string error;
    while (!done && !stopping) {
      // No `stopping` for Receive: it would close with "server stopping"; the loop checks.
      ws::WsConnection::Got got = from.Receive(&m, net::SteadyNowMs() + 250, nullptr, &error);
      if (got == ws::WsConnection::Got::kTimeout) continue;
      if (got == ws::WsConnection::Got::kClosed || !to.Send(m.opcode, m.payload).ok()) break;
    }
    done = true;
  };
  std::thread from_agent([&] { pump(agent, client); });
  pump(client, agent);
  from_agent.join();
  const uint16_t code = stopping ? ws::kCloseGoingAway : ws::kCloseNormal;
  client.SendClose(code, "");
  agent.SendClose(code, "");
}

// The ports of a v4.channel.k8s.io port-forward: every `ports` parameter, each a comma-separated
// list.
Result<std::vector<int>> PortsOf(const net::HttpRequest& req) {
  std::vector<int> out;
  for (const std::string& list : QueryAll(req, "ports")) {
    std::stringstream in(list);
    for (std::string p; std::getline(in, p, ',');) {
      char* end = nullptr;
      const long v = std::strtol(p.c_str(), &end, 10);
      if (p.empty() || *end != '\0' || v < 1 || v > 65535) {
        return Status::InvalidArgument("unable to parse \"" + p + "\" as a port (1 to 65535)");
      }
      out.push_back(static_cast<int>(v));
    }
  }
  if (out.empty()) return Status::InvalidArgument("query parameter \"ports\" is required");
  if (out.size() > 127) return Status::InvalidArgument("at most 127 ports at once");
  return out;
}

// The upgrade of a pods/portforward request for a pod that runs, or why not.
net::HttpResponse PortForwardUpgrade(const net::HttpRequest& req, const PodJob& job,
                                     const std::string& pod, ControllerPort& port) {
  const std::string upgrade = req.Header("upgrade");
  const std::string offered = req.Header("sec-websocket-protocol");
  const std::string how =
      "berth serves pods/portforward as SPDY/3.1 tunnelled in a WebSocket only (subprotocol " +
      std::string(kSpdyTunnel) + "): use kubectl 1.31 or newer";
  if (::strcasecmp(upgrade.c_str(), "websocket") != 0 || req.Header("sec-websocket-key").empty()) {
    return BadRequest(how + " (without KUBECTL_PORT_FORWARD_WEBSOCKETS=false), not " +
                      (upgrade.empty() ? std::string("plain HTTP") : upgrade));
  }
  bool spdy = false;
  bool v4 = false;
  std::stringstream in(offered);
  for (std::string p; std::getline(in, p, ',');) {
    p.erase(0, p.find_first_not_of(" \t"));
    p.erase(p.find_last_not_of(" \t") + 1);
    spdy = spdy || p == kSpdyTunnel;
    v4 = v4 || p == kV4;
  }
  if (!spdy && !v4) {
    return BadRequest("none of the offered subprotocols (" + offered + ") is spoken here: " +
                      std::string(kSpdyTunnel) + " (kubectl 1.31 and newer), " + std::string(kV4));
  }
  json request = {{"kind", "portforward"}, {"protocol", spdy ? kSpdyTunnel : kV4}, {"pod", pod}};
  if (!spdy) {  // v4: the ports are the request's, as the kubelet reads them
    Result<std::vector<int>> ports = PortsOf(req);
    if (!ports.ok()) return BadRequest(ports.status().message());
    request["ports"] = *ports;
  }
  net::HttpResponse r;
  r.status = 101;
  r.headers = {{"Upgrade", "websocket"},
               {"Sec-WebSocket-Accept", ws::AcceptKey(req.Header("sec-websocket-key"))},
               {"Sec-WebSocket-Protocol", std::string(spdy ? kSpdyTunnel : kV4)}};
  r.upgrade = [&port, job, request](net::UpgradedConnection& conn) {
    ws::WsConnection client(
        conn.fd, false, ws::Role::kServer,
        ws::WsLimits{.max_message = kMaxMessage, .idle_timeout_ms = kClientIdleMs},
        std::move(conn.already_read));
    Result<std::unique_ptr<AgentStream>> link = port.OpenAgentStream(job, request, *conn.stopping);
    if (!link.ok()) {
      // No channel to carry a Status: the close frame's reason is what kubectl can show.
      client.SendClose(ws::kCloseGoingAway, link.status().message().substr(0, 120));
      return;
    }
    ws::WsConnection agent((*link)->fd(), false, ws::Role::kServer,
                           ws::WsLimits{.max_message = kMaxMessage}, (*link)->already_read());
    RelayEachWay(client, agent, *conn.stopping);
  };
  return r;
}

}  // namespace

net::HttpResponse Face::PodStream(const Call& c, std::string_view subresource) {
  const net::HttpRequest& req = c.req;
  const User& who = c.who;
  const std::string& name = c.Name();
  const std::string resource = "pods/" + std::string(subresource);
  Objects objects = PodObjects(c.Namespace(), name);
  if (objects.empty()) return StatusResponse(NotFoundStatus("pods", name));
  const json pod = objects.begin()->second;
  std::optional<PodJob> job = port_.FindPodJob(PodJobId(pod));
  if (!job) return StatusResponse(NotFoundStatus("pods", name));
  if (!Owns(who, job->uid)) {
    return StatusResponse(
        ForbiddenStatus("pods", name,
                        "User \"" + who.name + "\" cannot create resource \"" + resource +
                            "\" in API group \"\" in the namespace \"" + c.Namespace() +
                            "\": only the pod's owner or an operator may"));
  }
  const bool attach = subresource == "attach";
  if (subresource != "exec" && subresource != "portforward" && !attach) {
    return BadRequest("berth does not serve " + resource +
                      " yet (kubectl exec, attach and port-forward do work; docs/kubernetes.md)");
  }
  const std::string container = ContainerName(pod);
  if (std::string q = Query(req, "container"); !q.empty() && q != container) {
    return BadRequest("container " + q + " is not valid for pod " + name);
  }
  if (job->ended) {
    const bool ok = job->facts.state == "COMPLETED";
    return BadRequest(
        std::string(attach ? "cannot attach a container" : "cannot exec into a container") +
        " in a completed pod; current phase is " + std::string(ok ? "Succeeded" : "Failed"));
  }
  if (!job->started || job->facts.node.empty()) {
    return BadRequest("container \"" + container + "\" in pod \"" + name +
                      "\" is waiting to start: ContainerCreating");
  }
  if (subresource == "portforward") return PortForwardUpgrade(req, *job, name, port_);
  json request;
  if (attach) {
    Result<json> r = AttachRequest(pod, {QueryTrue(req, "stdin"), QueryTrue(req, "stdout"),
                                         QueryTrue(req, "stderr"), QueryTrue(req, "tty")});
    if (!r.ok()) return BadRequest(r.status().message());
    request = std::move(*r);
  } else {
    const std::vector<std::string> command = QueryAll(req, "command");
    if (command.empty())
      return BadRequest("you must specify at least one command for the container");
    const bool tty = QueryTrue(req, "tty");
    const bool in = QueryTrue(req, "stdin");
    const bool out = QueryTrue(req, "stdout");
    const bool err = QueryTrue(req, "stderr") && !tty;
    if (!in && !out && !err)
      return BadRequest("you must specify at least 1 of stdin, stdout, stderr");
    request = {{"kind", "exec"}, {"command", command}, {"tty", tty},
               {"stdin", in},    {"stdout", out},      {"stderr", err}};
  }
  // The protocol: a WebSocket with a channel subprotocol berth speaks; SPDY is not spoken.
  const std::string upgrade = req.Header("upgrade");
  if (::strcasecmp(upgrade.c_str(), "websocket") != 0 || req.Header("sec-websocket-key").empty()) {
    return BadRequest(
        "berth serves " + resource +
        " over WebSocket only (v5.channel.k8s.io or v4.channel.k8s.io), not " +
        (upgrade.empty() ? std::string("plain HTTP") : upgrade) +
        ": use kubectl 1.30 or newer (without KUBECTL_REMOTE_COMMAND_WEBSOCKETS=false)");
  }
  const std::string protocol = ChooseProtocol(req.Header("sec-websocket-protocol"));
  if (protocol.empty()) {
    return BadRequest("none of the offered subprotocols (" + req.Header("sec-websocket-protocol") +
                      ") is spoken here: v5.channel.k8s.io, v4.channel.k8s.io");
  }
  request["protocol"] = protocol;
  net::HttpResponse r;
  r.status = 101;
  r.headers = {{"Upgrade", "websocket"},
               {"Sec-WebSocket-Accept", ws::AcceptKey(req.Header("sec-websocket-key"))},
               {"Sec-WebSocket-Protocol", protocol}};
  PodJob pod_job = *job;
  r.upgrade = [this, pod_job, request](net::UpgradedConnection& conn) {
    ws::WsConnection client(
        conn.fd, false, ws::Role::kServer,
        ws::WsLimits{.max_message = kMaxMessage, .idle_timeout_ms = kClientIdleMs},
        std::move(conn.already_read));
    Result<std::unique_ptr<AgentStream>> link =
        port_.OpenAgentStream(pod_job, request, *conn.stopping);
    if (!link.ok()) return FailStream(client, link.status().message());
    ws::WsConnection agent((*link)->fd(), false, ws::Role::kServer,
                           ws::WsLimits{.max_message = kMaxMessage}, (*link)->already_read());
    Relay(client, agent, *conn.stopping);
  };
  return r;
}

}  // namespace berth::k8s
