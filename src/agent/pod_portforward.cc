#include "agent/pod_portforward.h"

#include <arpa/inet.h>
#include <dirent.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <poll.h>
#include <sys/socket.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <fstream>
#include <map>
#include <sstream>

#include "net/socket_io.h"
#include "net/spdy.h"

namespace berth::agent {
namespace {

namespace ws = net::ws;
namespace spdy = net::spdy;

// What kubectl prints for a forwarded connection that failed (the kubelet's words).
std::string ForwardError(uint16_t port, const std::string& pod, const std::string& why) {
  return "error forwarding port " + std::to_string(port) + " to pod " + pod + ": " + why;
}

std::string ReadWhole(const std::string& path) {
  std::ifstream in(path);
  std::stringstream s;
  s << in.rdbuf();
  return s.str();
}

// The inodes of the sockets process `pid` has open.
void SocketInodesOf(pid_t pid, std::set<uint64_t>* out) {
  const std::string dir = "/proc/" + std::to_string(pid) + "/fd";
  DIR* d = ::opendir(dir.c_str());
  if (d == nullptr) return;
  while (dirent* e = ::readdir(d)) {
    if (e->d_name[0] == '.') continue;
    char link[64];
    const ssize_t n = ::readlink((dir + "/" + e->d_name).c_str(), link, sizeof(link) - 1);
    if (n <= 0) continue;
    link[n] = '\0';
    if (std::strncmp(link, "socket:[", 8) == 0) out->insert(std::strtoull(link + 8, nullptr, 10));
  }
  ::closedir(d);
}

// Connects to `port` on the loopback, IPv4 then IPv6 (as the kubelet tries localhost): the
// socket, non-blocking; or the reason neither connected.
Result<int> ConnectLoopback(uint16_t port) {
  std::string why;
  for (int family : {AF_INET, AF_INET6}) {
    const int fd = ::socket(family, SOCK_STREAM | SOCK_CLOEXEC, 0);
    if (fd < 0) continue;
    int rc;
    if (family == AF_INET) {
      sockaddr_in a{};
      a.sin_family = AF_INET;
      a.sin_port = htons(port);
      a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
      rc = ::connect(fd, reinterpret_cast<sockaddr*>(&a), sizeof(a));
    } else {
      sockaddr_in6 a{};
      a.sin6_family = AF_INET6;
      a.sin6_port = htons(port);
      a.sin6_addr = in6addr_loopback;
      rc = ::connect(fd, reinterpret_cast<sockaddr*>(&a), sizeof(a));
    }
    if (rc == 0) {
      ::fcntl(fd, F_SETFL, ::fcntl(fd, F_GETFL) | O_NONBLOCK);
      return fd;
    }
    const int err = errno;
    ::close(fd);
    why += std::string(why.empty() ? "" : ", ") + "dial tcp " +
           (family == AF_INET ? "127.0.0.1:" : "[::1]:") + std::to_string(port) +
           ": connect: " + std::strerror(err);
  }
  return Status::Unavailable(why);
}

// The socket for `port` on the loopback, if one of the pod's processes listens there.
Result<int> ConnectToPod(const PortForwardPod& pod, uint16_t port) {
  std::set<uint64_t> listening = ListeningInodes(ReadWhole("/proc/net/tcp"), port);
  for (uint64_t inode : ListeningInodes(ReadWhole("/proc/net/tcp6"), port)) listening.insert(inode);
  if (listening.empty()) {
    return Status::Unavailable("nothing listens on port " + std::to_string(port) +
                               " in the pod (dial tcp 127.0.0.1:" + std::to_string(port) +
                               ": connect: connection refused)");
  }
  std::set<uint64_t> pods;
  for (pid_t pid : pod.processes()) SocketInodesOf(pid, &pods);
  bool owned = false;
  for (uint64_t inode : listening) owned = owned || pods.count(inode) != 0;
  if (!owned) {
    return Status::PermissionDenied("port " + std::to_string(port) +
                                    " is not the pod's: another process on the node listens "
                                    "there, and only the pod's own ports are forwarded");
  }
  return ConnectLoopback(port);
}

// One forwarded connection: kubectl's error and data streams and the socket to the pod's port.
struct Forward {
  uint16_t port = 0;
  uint32_t error_stream = 0;
  uint32_t data_stream = 0;
  int fd = -1;
  std::string to_pod;        // from kubectl, not yet written to the socket
  bool client_done = false;  // kubectl ended its data stream (FIN): shut the socket's writing
  bool shut = false;
  int64_t opened_ms = 0;
  int64_t took_ms = 0;  // when the socket last took bytes (or the connection opened)
};

// Writes what the socket takes of f.to_pod; shuts its writing once the client's end came and
// everything is written.
void WriteTo(Forward& f);

class Session {
 public:
  Session(ws::WsConnection& ws, const PortForwardRequest& request, const PortForwardPod& pod,
          const std::atomic<bool>& stopping, const PortForwardLimits& limits)
      : ws_(ws), request_(request), pod_(pod), stopping_(stopping), limits_(limits) {}
  ~Session() {
    for (auto& [id, f] : forwards_) {
      if (f.fd >= 0) ::close(f.fd);
    }
  }

  void Run();

 private:
  bool Send(const std::string& bytes) {
    if (broken_) return false;
    if (!ws_.Send(ws::Opcode::kBinary, bytes).ok()) broken_ = true;
    return !broken_;
  }
  // Decodes and handles every whole frame in in_; false when the session is over.
  bool HandleInput();
  bool HandleFrame(spdy::Frame& f);
  void HandleSynStream(const spdy::Frame& f, const spdy::Headers& headers);
  void Start(const std::string& request_id, Forward& f);
  // Ends a connection: `error` (if any) on its error stream, both streams ended, socket closed.
  void Finish(const std::string& request_id, const std::string& error);
  // Reads what the pod's socket has; false when it ended.
  bool ReadPod(const std::string& request_id, Forward& f);
  void WritePod(Forward& f) { WriteTo(f); }
  // Protocol failure: GOAWAY and the end of the session.
  bool Fail(const std::string& why) {
    error_ = why;
    (void)Send(spdy::GoAwayFrame(last_stream_, spdy::kRstProtocolError));
    return false;
  }
  std::string PortError(uint16_t port, const std::string& why) const {
    return ForwardError(port, request_.pod, why);
  }
  bool Blocked() const {
    for (const auto& [id, f] : forwards_) {
      if (f.to_pod.size() >= limits_.max_buffer) return true;
    }
    return false;
  }

  ws::WsConnection& ws_;
  const PortForwardRequest& request_;
  const PortForwardPod& pod_;
  const std::atomic<bool>& stopping_;
  const PortForwardLimits limits_;
  spdy::HeaderDecompressor from_client_;
  spdy::HeaderCompressor to_client_;
  std::string in_;                           // session bytes not yet decoded
  std::map<std::string, Forward> forwards_;  // by requestid
  std::map<uint32_t, std::string> streams_;  // stream id -> requestid
  uint32_t last_stream_ = 0;
  bool broken_ = false;
  std::string error_;
};

void Session::Run() {
  int64_t next_check = 0;
  ws::Frame m;
  std::string error;
  while (!stopping_ && !broken_) {
    const int64_t now = net::SteadyNowMs();
    if (now >= next_check) {
      next_check = now + limits_.pod_check_ms;
      if (!pod_.running()) {
        (void)Send(spdy::GoAwayFrame(last_stream_, 0));
        break;
      }
      for (auto it = forwards_.begin(); it != forwards_.end();) {
        const std::string id = (it++)->first;
        Forward& f = forwards_[id];
        if (f.fd < 0 && now - f.opened_ms > limits_.pair_timeout_ms) {
          Finish(id, PortError(f.port, "timed out waiting for the connection's other stream"));
        } else if (f.fd >= 0 && f.to_pod.size() >= limits_.max_buffer &&
                   now - f.took_ms > limits_.stalled_ms) {
          // The tunnel waits for this socket: everything else would wait with it.
          Finish(id, PortError(f.port, "the pod took no bytes for " +
                                           std::to_string(limits_.stalled_ms / 1000) + " s"));
        }
      }
    }
    std::vector<pollfd> fds;
    std::vector<std::string> ids;
    const bool read_ws = !Blocked();
    fds.push_back({ws_.fd(), static_cast<short>(read_ws ? POLLIN : 0), 0});
    for (auto& [id, f] : forwards_) {
      if (f.fd < 0) continue;
      short events = POLLIN;
      if (!f.to_pod.empty()) events |= POLLOUT;
      fds.push_back({f.fd, events, 0});
      ids.push_back(id);
    }
    const bool ready = read_ws && ws_.HasBuffered();
    if (::poll(fds.data(), fds.size(), ready ? 0 : 250) < 0 && errno != EINTR) break;
    // The controller's end is gone while the tunnel is not read: nobody will read it again.
    if (!read_ws && (fds[0].revents & (POLLHUP | POLLERR))) break;
    if (read_ws && (ready || (fds[0].revents & (POLLIN | POLLHUP | POLLERR)))) {
      ws::WsConnection::Got got = ws::WsConnection::Got::kTimeout;
      bool over = false;
      while (!Blocked() &&
             (got = ws_.Receive(&m, 0, &stopping_, &error)) == ws::WsConnection::Got::kMessage) {
        if (m.opcode != ws::Opcode::kBinary) continue;
        in_ += m.payload;
        if (!HandleInput()) {
          over = true;
          break;
        }
      }
      if (over || (!Blocked() && got == ws::WsConnection::Got::kClosed)) break;
    }
    for (size_t i = 1; i < fds.size(); ++i) {
      auto it = forwards_.find(ids[i - 1]);
      if (it == forwards_.end() || it->second.fd < 0) continue;
      if (fds[i].revents & POLLOUT) WritePod(it->second);
      if (fds[i].revents & (POLLIN | POLLHUP | POLLERR)) {
        if (!ReadPod(ids[i - 1], it->second)) Finish(ids[i - 1], "");
      }
    }
  }
  ws_.SendClose(error_.empty() ? ws::kCloseNormal : ws::kCloseProtocolError, error_);
}

bool Session::HandleInput() {
  for (;;) {
    spdy::Frame f;
    size_t used = 0;
    std::string error;
    switch (spdy::DecodeFrame(in_, limits_.max_frame, &f, &used, &error)) {
      case spdy::DecodeResult::kIncomplete:
        return true;
      case spdy::DecodeResult::kError:
        return Fail(error);
      case spdy::DecodeResult::kFrame:
        in_.erase(0, used);
        if (!HandleFrame(f)) return false;
        break;
    }
  }
}

bool Session::HandleFrame(spdy::Frame& f) {
  switch (f.kind()) {
    case spdy::Type::kSynStream:
    case spdy::Type::kHeaders: {
      // Every block goes through the decompressor, in order: the zlib stream is the session's.
      Result<spdy::Headers> headers = from_client_.Decompress(f.data);
      if (!headers.ok()) return Fail(headers.status().message());
      if (f.kind() == spdy::Type::kSynStream) HandleSynStream(f, *headers);
      return !broken_;
    }
    case spdy::Type::kData: {
      auto s = streams_.find(f.stream_id);
      if (s == streams_.end()) return true;  // a stream that ended already
      Forward& fw = forwards_[s->second];
      if (f.stream_id != fw.data_stream) return true;  // the error stream is only read by us
      fw.to_pod += f.data;  // before the socket connects too (bounded: Blocked)
      if (f.fin()) fw.client_done = true;
      if (fw.fd >= 0) WritePod(fw);
      return !broken_;
    }
    case spdy::Type::kRstStream: {
      auto s = streams_.find(f.stream_id);
      if (s != streams_.end()) Finish(s->second, "");
      return !broken_;
    }
    case spdy::Type::kPing:
      return Send(spdy::PingFrame(f.value));
    case spdy::Type::kGoAway:
      return false;
    default:  // SETTINGS, WINDOW_UPDATE (kubectl's SPDY sends none it needs), unknown types
      return true;
  }
}

void Session::HandleSynStream(const spdy::Frame& f, const spdy::Headers& headers) {
  last_stream_ = std::max(last_stream_, f.stream_id);
  const std::string type(spdy::FindHeader(headers, "streamtype"));
  const std::string port_text(spdy::FindHeader(headers, "port"));
  const std::string id(spdy::FindHeader(headers, "requestid"));
  char* end = nullptr;
  const unsigned long port = std::strtoul(port_text.c_str(), &end, 10);
  const bool valid_port = !port_text.empty() && *end == '\0' && port >= 1 && port <= 65535;
  // Connections waiting for their second stream count too: at most twice the open limit.
  const bool full = forwards_.count(id) == 0 && forwards_.size() >= 2 * limits_.max_connections;
  if ((type != "error" && type != "data") || !valid_port || id.empty() ||
      streams_.count(f.stream_id) != 0 || full) {
    (void)Send(spdy::RstStreamFrame(f.stream_id, spdy::kRstRefusedStream));
    return;
  }
  auto [it, fresh] = forwards_.try_emplace(id);
  Forward& fw = it->second;
  uint32_t& slot = type == "error" ? fw.error_stream : fw.data_stream;
  if (slot != 0 || (!fresh && fw.port != port)) {
    (void)Send(spdy::RstStreamFrame(f.stream_id, spdy::kRstProtocolError));
    if (fresh) forwards_.erase(it);
    return;
  }
  if (fresh) fw.opened_ms = net::SteadyNowMs();
  fw.port = static_cast<uint16_t>(port);
  slot = f.stream_id;
  streams_[f.stream_id] = id;
  if (!Send(spdy::SynReplyFrame(f.stream_id, to_client_.Compress({}), false))) return;
  if (fw.error_stream != 0 && fw.data_stream != 0) Start(id, fw);
}

void Session::Start(const std::string& request_id, Forward& f) {
  size_t open = 0;
  for (const auto& [id, other] : forwards_) open += other.fd >= 0;
  if (open >= limits_.max_connections) {
    return Finish(request_id,
                  PortError(f.port, "more than " + std::to_string(limits_.max_connections) +
                                        " connections are forwarded at once"));
  }
  Result<int> fd = ConnectToPod(pod_, f.port);
  if (!fd.ok()) return Finish(request_id, PortError(f.port, fd.status().message()));
  f.fd = *fd;
  f.took_ms = net::SteadyNowMs();
  if (!f.to_pod.empty() || f.client_done) WritePod(f);
}

void Session::Finish(const std::string& request_id, const std::string& error) {
  auto it = forwards_.find(request_id);
  if (it == forwards_.end()) return;
  Forward f = std::move(it->second);
  forwards_.erase(it);
  if (f.fd >= 0) ::close(f.fd);
  if (f.data_stream != 0) {
    streams_.erase(f.data_stream);
    (void)Send(spdy::DataFrame(f.data_stream, "", true));
  }
  if (f.error_stream != 0) {
    streams_.erase(f.error_stream);
    if (!error.empty()) (void)Send(spdy::DataFrame(f.error_stream, error, false));
    (void)Send(spdy::DataFrame(f.error_stream, "", true));
  }
}

bool Session::ReadPod(const std::string& request_id, Forward& f) {
  (void)request_id;
  std::string buf(limits_.read_chunk, '\0');
  const ssize_t n = ::read(f.fd, buf.data(), buf.size());
  if (n < 0) return errno == EAGAIN || errno == EWOULDBLOCK || errno == EINTR;
  if (n == 0) return false;
  buf.resize(static_cast<size_t>(n));
  return Send(spdy::DataFrame(f.data_stream, buf, false));
}

void WriteTo(Forward& f) {
  while (!f.to_pod.empty()) {
    const ssize_t n = ::send(f.fd, f.to_pod.data(), f.to_pod.size(), MSG_NOSIGNAL);
    if (n < 0) {
      if (errno == EINTR) continue;
      if (errno != EAGAIN && errno != EWOULDBLOCK) f.to_pod.clear();  // the pod's end is gone
      break;
    }
    f.to_pod.erase(0, static_cast<size_t>(n));
    f.took_ms = net::SteadyNowMs();
  }
  if (f.to_pod.empty() && f.client_done && !f.shut) {
    ::shutdown(f.fd, SHUT_WR);
    f.shut = true;
  }
}

// A v4.channel.k8s.io session (kPortForwardV4): one connection per port, opened at the start.
class ChannelSession {
 public:
  ChannelSession(ws::WsConnection& ws, const PortForwardRequest& request, const PortForwardPod& pod,
                 const std::atomic<bool>& stopping, const PortForwardLimits& limits)
      : ws_(ws), request_(request), pod_(pod), stopping_(stopping), limits_(limits) {}
  ~ChannelSession() {
    for (Forward& f : ports_) {
      if (f.fd >= 0) ::close(f.fd);
    }
  }

  void Run();

 private:
  static std::string On(size_t channel, std::string_view data) {
    std::string m(1, static_cast<char>(channel));
    m += data;
    return m;
  }
  bool Send(const std::string& message) {
    if (!broken_ && !ws_.Send(ws::Opcode::kBinary, message).ok()) broken_ = true;
    return !broken_;
  }
  void End(size_t i, const std::string& error) {
    Forward& f = ports_[i];
    if (f.fd >= 0) ::close(f.fd);
    f.fd = -1;
    f.to_pod.clear();
    f.shut = true;  // done
    if (!error.empty()) {
      (void)Send(On(2 * i + 1, ForwardError(f.port, request_.pod, error)));
    }
  }
  bool Blocked() const {
    for (const Forward& f : ports_) {
      if (f.to_pod.size() >= limits_.max_buffer) return true;
    }
    return false;
  }

  ws::WsConnection& ws_;
  const PortForwardRequest& request_;
  const PortForwardPod& pod_;
  const std::atomic<bool>& stopping_;
  const PortForwardLimits limits_;
  std::vector<Forward> ports_;  // `shut`: the port's connection has ended
  bool broken_ = false;
};

void ChannelSession::Run() {
  ports_.resize(request_.ports.size());
  for (size_t i = 0; i < ports_.size(); ++i) {
    ports_[i].port = request_.ports[i];
    const char port_le[2] = {static_cast<char>(ports_[i].port & 0xff),
                             static_cast<char>(ports_[i].port >> 8)};
    (void)Send(On(2 * i, std::string_view(port_le, 2)));
    (void)Send(On(2 * i + 1, std::string_view(port_le, 2)));
  }
  for (size_t i = 0; i < ports_.size(); ++i) {
    Result<int> fd = ConnectToPod(pod_, ports_[i].port);
    if (!fd.ok()) {
      End(i, fd.status().message());
      continue;
    }
    ports_[i].fd = *fd;
    ports_[i].took_ms = net::SteadyNowMs();
  }
  int64_t next_check = 0;
  ws::Frame m;
  std::string error;
  while (!stopping_ && !broken_) {
    size_t open = 0;
    for (const Forward& f : ports_) open += f.fd >= 0;
    if (open == 0) break;
    const int64_t now = net::SteadyNowMs();
    if (now >= next_check) {
      next_check = now + limits_.pod_check_ms;
      if (!pod_.running()) break;
      for (size_t i = 0; i < ports_.size(); ++i) {
        if (ports_[i].fd >= 0 && ports_[i].to_pod.size() >= limits_.max_buffer &&
            now - ports_[i].took_ms > limits_.stalled_ms) {
          End(i, "the pod took no bytes for " + std::to_string(limits_.stalled_ms / 1000) + " s");
        }
      }
    }
    const bool read_ws = !Blocked();
    std::vector<pollfd> fds = {{ws_.fd(), static_cast<short>(read_ws ? POLLIN : 0), 0}};
    std::vector<size_t> which;
    for (size_t i = 0; i < ports_.size(); ++i) {
      if (ports_[i].fd < 0) continue;
      fds.push_back(
          {ports_[i].fd, static_cast<short>(POLLIN | (ports_[i].to_pod.empty() ? 0 : POLLOUT)), 0});
      which.push_back(i);
    }
    const bool ready = read_ws && ws_.HasBuffered();
    if (::poll(fds.data(), fds.size(), ready ? 0 : 250) < 0 && errno != EINTR) break;
    if (!read_ws && (fds[0].revents & (POLLHUP | POLLERR))) break;
    if (read_ws && (ready || (fds[0].revents & (POLLIN | POLLHUP | POLLERR)))) {
      ws::WsConnection::Got got = ws::WsConnection::Got::kTimeout;
      while (!Blocked() &&
             (got = ws_.Receive(&m, 0, &stopping_, &error)) == ws::WsConnection::Got::kMessage) {
        if (m.opcode != ws::Opcode::kBinary || m.payload.empty()) continue;
        const size_t channel = static_cast<uint8_t>(m.payload[0]);
        // Data channels only: the error channels are the server's to write.
        if (channel % 2 != 0 || channel / 2 >= ports_.size()) continue;
        Forward& f = ports_[channel / 2];
        if (f.fd < 0) continue;
        f.to_pod.append(m.payload, 1);
        WriteTo(f);
      }
      if (!Blocked() && got == ws::WsConnection::Got::kClosed) break;
    }
    for (size_t k = 1; k < fds.size(); ++k) {
      const size_t i = which[k - 1];
      Forward& f = ports_[i];
      if (f.fd < 0) continue;
      if (fds[k].revents & POLLOUT) WriteTo(f);
      if (fds[k].revents & (POLLIN | POLLHUP | POLLERR)) {
        std::string buf(limits_.read_chunk, '\0');
        const ssize_t n = ::read(f.fd, buf.data(), buf.size());
        if (n > 0) {
          buf.resize(static_cast<size_t>(n));
          (void)Send(On(2 * i, buf));
        } else if (n == 0 || (errno != EAGAIN && errno != EWOULDBLOCK && errno != EINTR)) {
          End(i, "");
        }
      }
    }
  }
  ws_.SendClose(ws::kCloseNormal, "");
}

}  // namespace

Result<PortForwardRequest> DecodePortForwardRequest(const nlohmann::json& j) {
  if (!j.is_object()) return Status::InvalidArgument("a pod stream request must be an object");
  if (j.value("kind", "") != "portforward") {
    return Status::InvalidArgument("not a port-forward request");
  }
  PortForwardRequest r;
  auto p = j.find("protocol");
  if (p != j.end()) {
    if (!p->is_string()) return Status::InvalidArgument("\"protocol\" must be a string");
    r.protocol = p->get<std::string>();
  }
  if (r.protocol != kPortForwardSpdy && r.protocol != kPortForwardV4) {
    return Status::InvalidArgument("unknown port-forward protocol \"" + r.protocol + "\"");
  }
  if (auto ports = j.find("ports"); ports != j.end()) {
    if (!ports->is_array()) return Status::InvalidArgument("\"ports\" must be an array");
    for (const nlohmann::json& port : *ports) {
      if (!port.is_number_integer() || port.get<int64_t>() < 1 || port.get<int64_t>() > 65535) {
        return Status::InvalidArgument("\"ports\" must hold ports (1 to 65535)");
      }
      r.ports.push_back(static_cast<uint16_t>(port.get<int64_t>()));
    }
  }
  if (r.protocol == kPortForwardV4 && (r.ports.empty() || r.ports.size() > kMaxV4Ports)) {
    return Status::InvalidArgument("a v4.channel.k8s.io port-forward needs 1 to " +
                                   std::to_string(kMaxV4Ports) + " ports");
  }
  auto pod = j.find("pod");
  if (pod != j.end() && pod->is_string()) r.pod = pod->get<std::string>();
  return r;
}

std::set<uint64_t> ListeningInodes(std::string_view proc_net_tcp, uint16_t port) {
  std::set<uint64_t> out;
  std::istringstream in{std::string(proc_net_tcp)};
  std::string line;
  std::getline(in, line);  // the column titles
  while (std::getline(in, line)) {
    std::istringstream f(line);
    std::string slot, local, remote, state, queues, timer, retransmits, uid, timeout, inode;
    if (!(f >> slot >> local >> remote >> state >> queues >> timer >> retransmits >> uid >>
          timeout >> inode)) {
      continue;
    }
    const size_t colon = local.rfind(':');
    if (colon == std::string::npos || state != "0A") continue;  // 0A: TCP_LISTEN
    char* end = nullptr;
    const unsigned long p = std::strtoul(local.c_str() + colon + 1, &end, 16);
    if (*end != '\0' || p != port) continue;
    out.insert(std::strtoull(inode.c_str(), nullptr, 10));
  }
  return out;
}

void ServePortForward(ws::WsConnection& ws, const PortForwardRequest& request,
                      const PortForwardPod& pod, const std::atomic<bool>& stopping,
                      const PortForwardLimits& limits) {
  if (request.protocol == kPortForwardV4) {
    ChannelSession(ws, request, pod, stopping, limits).Run();
  } else {
    Session(ws, request, pod, stopping, limits).Run();
  }
}

}  // namespace berth::agent
