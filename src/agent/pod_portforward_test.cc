#include "agent/pod_portforward.h"

#include <arpa/inet.h>
#include <gtest/gtest.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <unistd.h>

#include <atomic>
#include <string>
#include <thread>

#include "net/socket_io.h"
#include "net/spdy.h"

namespace berth::agent {
namespace {

namespace ws = net::ws;
namespace spdy = net::spdy;

TEST(PortForwardRequestTest, Decodes) {
  Result<PortForwardRequest> r = DecodePortForwardRequest(
      {{"kind", "portforward"}, {"protocol", kPortForwardSpdy}, {"pod", "web"}});
  ASSERT_TRUE(r.ok()) << r.status().message();
  EXPECT_EQ(r->pod, "web");
  r = DecodePortForwardRequest(
      {{"kind", "portforward"}, {"protocol", kPortForwardV4}, {"ports", {80, 8080}}});
  ASSERT_TRUE(r.ok()) << r.status().message();
  EXPECT_EQ(r->ports, (std::vector<uint16_t>{80, 8080}));
  struct Case {
    nlohmann::json j;
    const char* error;
  };
  const Case cases[] = {
      {nlohmann::json::array(), "must be an object"},
      {{{"kind", "exec"}}, "not a port-forward request"},
      {{{"kind", "portforward"}, {"protocol", 4}}, "\"protocol\" must be a string"},
      {{{"kind", "portforward"}, {"protocol", "v5.channel.k8s.io"}},
       "unknown port-forward protocol \"v5.channel.k8s.io\""},
      {{{"kind", "portforward"}, {"protocol", "v4.channel.k8s.io"}}, "needs 1 to 127 ports"},
      {{{"kind", "portforward"}, {"protocol", "v4.channel.k8s.io"}, {"ports", {0}}},
       "must hold ports (1 to 65535)"},
      {{{"kind", "portforward"}, {"ports", "80"}}, "\"ports\" must be an array"},
  };
  for (const Case& c : cases) {
    Result<PortForwardRequest> bad = DecodePortForwardRequest(c.j);
    ASSERT_FALSE(bad.ok()) << c.j.dump();
    EXPECT_NE(bad.status().message().find(c.error), std::string::npos) << bad.status().message();
  }
}

TEST(ListeningInodesTest, FindsListenersOnThePortOnly) {
  const std::string tcp =
      "  sl  local_address rem_address   st tx_queue rx_queue tr tm->when retrnsmt   uid  "
      "timeout inode\n"
      "   0: 0100007F:1F90 00000000:0000 0A 00000000:00000000 00:00000000 00000000     0        "
      "0 111 1 0000000000000000 100 0 0 10 0\n"
      "   1: 00000000:1F90 00000000:0000 0A 00000000:00000000 00:00000000 00000000  1000        "
      "0 222 1 0000000000000000 100 0 0 10 0\n"
      "   2: 0100007F:1F90 0100007F:C350 01 00000000:00000000 00:00000000 00000000     0        "
      "0 333 1 0000000000000000 20 4 30 10 -1\n"
      "   3: 0100007F:1F91 00000000:0000 0A 00000000:00000000 00:00000000 00000000     0        "
      "0 444 1 0000000000000000 100 0 0 10 0\n"
      "   4: garbage\n";
  EXPECT_EQ(ListeningInodes(tcp, 8080), (std::set<uint64_t>{111, 222}));  // not the connection
  EXPECT_EQ(ListeningInodes(tcp, 8081), (std::set<uint64_t>{444}));
  EXPECT_TRUE(ListeningInodes(tcp, 80).empty());
  const std::string tcp6 =
      "  sl  local_address                         remote_address                        st "
      "tx_queue rx_queue tr tm->when retrnsmt   uid  timeout inode\n"
      "   0: 00000000000000000000000001000000:1F90 00000000000000000000000000000000:0000 0A "
      "00000000:00000000 00:00000000 00000000     0        0 555 1 0000000000000000 100 0 0 10 "
      "0\n";
  EXPECT_EQ(ListeningInodes(tcp6, 8080), (std::set<uint64_t>{555}));
}

// kubectl's side of a session, on the other end of a socketpair from ServePortForward.
class Kubectl {
 public:
  explicit Kubectl(int fd) : conn_(fd, true, ws::Role::kServer, {}) {}

  void Send(const std::string& bytes) {
    // Split anywhere, as the tunnel may: here in two messages.
    const size_t half = bytes.size() / 2;
    ASSERT_TRUE(conn_.Send(ws::Opcode::kBinary, bytes.substr(0, half)).ok());
    ASSERT_TRUE(conn_.Send(ws::Opcode::kBinary, bytes.substr(half)).ok());
  }
  void OpenStream(uint32_t id, const char* type, uint16_t port, const char* request_id) {
    spdy::Frame f;
    f.control = true;
    f.type = static_cast<uint16_t>(spdy::Type::kSynStream);
    f.stream_id = id;
    f.data = out_.Compress(
        {{"streamtype", type}, {"port", std::to_string(port)}, {"requestid", request_id}});
    Send(spdy::EncodeFrame(f));
  }
  // The next frame; a default Frame (control false, stream 0) when the session closed.
  spdy::Frame Next(int timeout_ms = 10000) {
    const int64_t until = net::SteadyNowMs() + timeout_ms;
    for (;;) {
      spdy::Frame f;
      size_t used = 0;
      std::string error;
      if (spdy::DecodeFrame(in_, 1 << 20, &f, &used, &error) == spdy::DecodeResult::kFrame) {
        in_.erase(0, used);
        if (f.kind() == spdy::Type::kSynReply) {
          EXPECT_TRUE(in_headers_.Decompress(f.data).ok());
        }
        return f;
      }
      ws::Frame m;
      if (conn_.Receive(&m, until, nullptr, &error) != ws::WsConnection::Got::kMessage) return {};
      in_ += m.payload;
    }
  }
  // Frames until one of `type` comes (or the session ends).
  spdy::Frame NextOf(spdy::Type type) {
    for (;;) {
      spdy::Frame f = Next();
      if (f.kind() == type || (!f.control && f.stream_id == 0)) return f;
    }
  }

  ws::WsConnection& conn() { return conn_; }

 private:
  ws::WsConnection conn_;
  spdy::HeaderCompressor out_;
  spdy::HeaderDecompressor in_headers_;
  std::string in_;
};

class PortForwardSessionTest : public ::testing::Test {
 protected:
  void SetUp() override {
    int sv[2];
    ASSERT_EQ(::socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, sv), 0);
    kubectl_ = std::make_unique<Kubectl>(sv[1]);
    agent_fd_ = sv[0];
  }
  void Start(PortForwardLimits limits = {}) {
    pod_.running = [this] { return running_.load(); };
    pod_.processes = [] { return std::vector<pid_t>{::getpid()}; };  // this test's sockets
    server_ = std::thread([this, limits] {
      ws::WsConnection conn(agent_fd_, true, ws::Role::kClient, {});
      ServePortForward(conn, request_, pod_, stopping_, limits);
    });
  }
  void TearDown() override {
    stopping_ = true;
    if (server_.joinable()) server_.join();
    if (listener_ >= 0) ::close(listener_);
  }
  // A listener of "the pod's" (this process's) on the loopback: its port.
  uint16_t Listen() {
    listener_ = ::socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
    sockaddr_in a{};
    a.sin_family = AF_INET;
    a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    EXPECT_EQ(::bind(listener_, reinterpret_cast<sockaddr*>(&a), sizeof(a)), 0);
    EXPECT_EQ(::listen(listener_, 8), 0);
    socklen_t len = sizeof(a);
    ::getsockname(listener_, reinterpret_cast<sockaddr*>(&a), &len);
    return ntohs(a.sin_port);
  }

  PortForwardRequest request_{.protocol = std::string(kPortForwardSpdy), .pod = "web", .ports = {}};
  PortForwardPod pod_;
  std::atomic<bool> running_{true};
  std::atomic<bool> stopping_{false};
  std::unique_ptr<Kubectl> kubectl_;
  int agent_fd_ = -1;
  int listener_ = -1;
  std::thread server_;
};

TEST_F(PortForwardSessionTest, CopiesBytesBothWaysAndEndsTheStreams) {
  const uint16_t port = Listen();
  Start();
  kubectl_->OpenStream(1, "error", port, "0");
  EXPECT_EQ(kubectl_->Next().kind(), spdy::Type::kSynReply);
  kubectl_->OpenStream(3, "data", port, "0");
  EXPECT_EQ(kubectl_->Next().kind(), spdy::Type::kSynReply);
  const int pod = ::accept(listener_, nullptr, nullptr);
  ASSERT_GE(pod, 0);
  kubectl_->Send(spdy::DataFrame(3, "ping?", true));
  char buf[16];
  ASSERT_EQ(::read(pod, buf, sizeof(buf)), 5);
  EXPECT_EQ(std::string(buf, 5), "ping?");
  EXPECT_EQ(::read(pod, buf, sizeof(buf)), 0);  // kubectl's FIN shuts the socket's writing
  ASSERT_EQ(::write(pod, "pong", 4), 4);
  ::close(pod);
  spdy::Frame f = kubectl_->NextOf(spdy::Type::kData);
  EXPECT_EQ(f.stream_id, 3u);
  EXPECT_EQ(f.data, "pong");
  f = kubectl_->Next();
  EXPECT_EQ(f.stream_id, 3u);
  EXPECT_TRUE(f.fin());
  f = kubectl_->Next();  // the error stream ends empty: no error
  EXPECT_EQ(f.stream_id, 1u);
  EXPECT_TRUE(f.fin());
  EXPECT_EQ(f.data, "");
  // A PING is answered with its id.
  kubectl_->Send(spdy::PingFrame(7));
  f = kubectl_->NextOf(spdy::Type::kPing);
  EXPECT_EQ(f.value, 7u);
}

TEST_F(PortForwardSessionTest, WhenKubectlGoesAwayEverySocketCloses) {
  const uint16_t port = Listen();
  Start();
  for (uint32_t i = 0; i < 2; ++i) {
    kubectl_->OpenStream(1 + 4 * i, "error", port, std::to_string(i).c_str());
    kubectl_->OpenStream(3 + 4 * i, "data", port, std::to_string(i).c_str());
  }
  int pods[2];
  for (int& pod : pods) {
    pod = ::accept(listener_, nullptr, nullptr);
    ASSERT_GE(pod, 0);
    const timeval wait{.tv_sec = 10, .tv_usec = 0};  // a failure, not a hang
    ::setsockopt(pod, SOL_SOCKET, SO_RCVTIMEO, &wait, sizeof(wait));
  }
  kubectl_.reset();  // its end of the socketpair closes
  for (int pod : pods) {
    char c;
    EXPECT_EQ(::read(pod, &c, 1), 0);  // the agent closed its socket
    ::close(pod);
  }
}

TEST_F(PortForwardSessionTest, AConnectionFailureIsTextOnItsErrorStream) {
  Start();
  kubectl_->OpenStream(1, "error", 1, "0");
  kubectl_->OpenStream(3, "data", 1, "0");
  spdy::Frame f;
  do {
    f = kubectl_->Next();
  } while (f.kind() != spdy::Type::kData || f.stream_id != 1);
  EXPECT_NE(f.data.find("error forwarding port 1 to pod web: nothing listens on port 1"),
            std::string::npos)
      << f.data;
}

TEST_F(PortForwardSessionTest, ConnectionsBeyondTheLimitAreRefused) {
  const uint16_t port = Listen();
  Start({.max_connections = 1});
  kubectl_->OpenStream(1, "error", port, "0");
  kubectl_->OpenStream(3, "data", port, "0");
  kubectl_->OpenStream(5, "error", port, "1");
  kubectl_->OpenStream(7, "data", port, "1");
  spdy::Frame f;
  do {
    f = kubectl_->Next();
  } while (f.kind() != spdy::Type::kData || f.stream_id != 5);
  EXPECT_NE(f.data.find("more than 1 connections are forwarded at once"), std::string::npos)
      << f.data;
}

TEST_F(PortForwardSessionTest, ASocketThatTakesNothingIsEndedNotBufferedWithoutBound) {
  const uint16_t port = Listen();
  const int small = 4096;
  ::setsockopt(listener_, SOL_SOCKET, SO_RCVBUF, &small, sizeof(small));
  Start({.max_buffer = 64 << 10, .stalled_ms = 500});
  kubectl_->OpenStream(1, "error", port, "0");
  kubectl_->OpenStream(3, "data", port, "0");
  const int pod = ::accept(listener_, nullptr, nullptr);  // and never reads
  ASSERT_GE(pod, 0);
  std::thread writer([this] {
    const std::string chunk(64 << 10, 'x');
    for (int i = 0; i < 128; ++i) kubectl_->Send(spdy::DataFrame(3, chunk, false));
  });
  spdy::Frame f;
  do {
    f = kubectl_->Next(60000);
  } while (f.stream_id != 0 && (f.kind() != spdy::Type::kData || f.stream_id != 1));
  EXPECT_NE(f.data.find("error forwarding port " + std::to_string(port) +
                        " to pod web: the pod took no bytes for 0 s"),
            std::string::npos)
      << f.data;
  writer.join();  // the tunnel is read again: the rest of kubectl's bytes are dropped
  ::close(pod);
}

TEST_F(PortForwardSessionTest, BadHeadersAreRefusedStreams) {
  Start();
  kubectl_->OpenStream(1, "sideways", 80, "0");
  spdy::Frame f = kubectl_->NextOf(spdy::Type::kRstStream);
  EXPECT_EQ(f.stream_id, 1u);
  EXPECT_EQ(f.value, spdy::kRstRefusedStream);
  kubectl_->OpenStream(3, "data", 0, "0");
  f = kubectl_->NextOf(spdy::Type::kRstStream);
  EXPECT_EQ(f.stream_id, 3u);
}

TEST_F(PortForwardSessionTest, AProtocolErrorEndsTheSessionWithGoAway) {
  Start();
  kubectl_->Send(std::string("\x80\x02\x00\x06\x00\x00\x00\x04\x00\x00\x00\x01", 12));  // SPDY/2
  spdy::Frame f = kubectl_->NextOf(spdy::Type::kGoAway);
  EXPECT_EQ(f.value, spdy::kRstProtocolError);
  f = kubectl_->Next();
  EXPECT_FALSE(f.control);
  EXPECT_EQ(f.stream_id, 0u);  // closed
}

TEST_F(PortForwardSessionTest, ThePodsEndEndsTheSession) {
  Start();
  running_ = false;
  spdy::Frame f = kubectl_->NextOf(spdy::Type::kGoAway);
  EXPECT_EQ(f.value, 0u);
  EXPECT_EQ(kubectl_->Next().stream_id, 0u);  // closed
}

// v4.channel.k8s.io: each port's channels start with the port; a port nothing listens on is an
// error on its error channel; the session ends when every port's connection has.
TEST_F(PortForwardSessionTest, ChannelProtocolV4) {
  const uint16_t port = Listen();
  request_.protocol = std::string(kPortForwardV4);
  request_.ports = {port, 1};
  Start();
  ws::WsConnection& c = kubectl_->conn();
  auto next = [&c] {
    ws::Frame m;
    std::string error;
    if (c.Receive(&m, net::SteadyNowMs() + 10000, nullptr, &error) !=
        ws::WsConnection::Got::kMessage) {
      return std::string("closed");
    }
    return m.payload;
  };
  const std::string le(1, static_cast<char>(port & 0xff));
  const std::string p = le + static_cast<char>(port >> 8);
  EXPECT_EQ(next(), std::string(1, '\0') + p);
  EXPECT_EQ(next(), std::string(1, '\1') + p);
  EXPECT_EQ(next(), std::string("\2\1\0", 3));
  EXPECT_EQ(next(), std::string("\3\1\0", 3));
  const std::string error = next();
  EXPECT_EQ(error[0], '\3');
  EXPECT_NE(error.find("error forwarding port 1 to pod web: nothing listens on port 1"),
            std::string::npos)
      << error;
  const int pod = ::accept(listener_, nullptr, nullptr);
  ASSERT_GE(pod, 0);
  ASSERT_TRUE(c.Send(ws::Opcode::kBinary, std::string(1, '\0') + "hello").ok());
  char buf[16];
  ASSERT_EQ(::read(pod, buf, sizeof(buf)), 5);
  EXPECT_EQ(std::string(buf, 5), "hello");
  ASSERT_EQ(::write(pod, "back", 4), 4);
  EXPECT_EQ(next(), std::string(1, '\0') + "back");
  ::close(pod);
  EXPECT_EQ(next(), "closed");
}

}  // namespace
}  // namespace berth::agent
