// The agent's side of `kubectl port-forward` (docs/adr/0006-pod-streams.md): kubectl's SPDY/3.1
// session, tunnelled in the WebSocket the controller relays unread (each binary message a run of
// the session's bytes, split anywhere), is terminated here. Per forwarded connection kubectl
// opens two streams with the headers streamtype (error | data), port and requestid; once both
// are there the agent connects to the port on the node's loopback (pods run on the host's
// network, in containers too: docs/containers.md), 127.0.0.1 first, then ::1, as the kubelet
// does, and copies bytes both ways. A failure is text on the error stream, which kubectl prints.
//
// Only a port the pod itself listens on is reached: the listening socket must belong to one of
// the pod's processes (its inode among their open files). Otherwise a pod's owner could reach
// whatever else listens on the node's loopback (another user's server, a node service).
//
// The request (a JSON object, written by src/k8s/face_stream.cc):
//   {"kind": "portforward", "protocol": "SPDY/3.1+portforward.k8s.io", "pod": "NAME"}
//   {"kind": "portforward", "protocol": "v4.channel.k8s.io", "pod": "NAME", "ports": [8080]}
//
// Thread safety: ServePortForward runs on its caller's thread (the agent's stream thread) and
// owns every socket it opens; the other functions are pure or read /proc only.
// Used by: the agent daemon (agent_streams.cc); tests (pod_portforward_test.cc).
#ifndef BERTH_AGENT_POD_PORTFORWARD_H_
#define BERTH_AGENT_POD_PORTFORWARD_H_

#include <sys/types.h>

#include <atomic>
#include <cstdint>
#include <functional>
#include <nlohmann/json.hpp>
#include <set>
#include <string>
#include <string_view>
#include <vector>

#include "common/status.h"
#include "net/websocket.h"

namespace berth::agent {

constexpr std::string_view kPortForwardSpdy = "SPDY/3.1+portforward.k8s.io";
// Without SPDY, for other clients (the Python client's portforward): one connection per port
// for the whole session; channel 2i carries port i's bytes both ways and 2i+1 its error text,
// and the first message the server sends on each starts with the port (2 bytes, little-endian).
constexpr std::string_view kPortForwardV4 = "v4.channel.k8s.io";
constexpr size_t kMaxV4Ports = 127;  // channels are one byte

struct PortForwardRequest {
  std::string protocol = std::string(kPortForwardSpdy);
  std::string pod;              // the pod's name, for messages
  std::vector<uint16_t> ports;  // v4: the ports, from the request's ?ports=
};
// INVALID_ARGUMENT naming the field for a request that is not one.
Result<PortForwardRequest> DecodePortForwardRequest(const nlohmann::json& j);

// The inodes of the TCP sockets in LISTEN state on local port `port`, any address, in the text
// of /proc/net/tcp or /proc/net/tcp6.
std::set<uint64_t> ListeningInodes(std::string_view proc_net_tcp, uint16_t port);

// What the forwarding needs to know of the pod, asked as it goes.
struct PortForwardPod {
  std::function<bool()> running;                  // false once the pod has ended
  std::function<std::vector<pid_t>()> processes;  // the pod's processes now
};

struct PortForwardLimits {
  size_t max_connections = 128;  // forwarded connections open at once on one session
  // Bytes from the client that a connection's socket has not taken yet; while one is over, the
  // tunnel is not read (kubectl's writes wait), so nothing buffers without bound.
  size_t max_buffer = 1 << 20;
  size_t max_frame = 1 << 20;   // a SPDY frame's payload
  int pair_timeout_ms = 30000;  // a connection's second stream comes within this
  int pod_check_ms = 1000;      // how often the pod is checked for its end
  // A connection whose socket took nothing this long while over max_buffer is ended (the
  // tunnel, and so every other connection, waits for it meanwhile).
  int stalled_ms = 30000;
  size_t read_chunk = 32 << 10;  // bytes read from a pod's socket at once (one DATA frame)
};

// Serves the session on `ws` (SPDY or v4, as the request says) until kubectl goes away (every
// forwarded socket is closed), the pod ends (GOAWAY, then the WebSocket closes: kubectl ends), the
// session breaks the protocol (GOAWAY with PROTOCOL_ERROR), or `stopping`. A v4 session also ends
// when every port's connection has ended, as the kubelet's does.
void ServePortForward(net::ws::WsConnection& ws, const PortForwardRequest& request,
                      const PortForwardPod& pod, const std::atomic<bool>& stopping,
                      const PortForwardLimits& limits = {});

}  // namespace berth::agent

#endif  // BERTH_AGENT_POD_PORTFORWARD_H_
