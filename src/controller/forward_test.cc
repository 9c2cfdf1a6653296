// A standby's forwarding to its leader, against a real HTTP server on loopback standing in for
// the leader: plain requests with their credentials, streams chunk by chunk, upgraded
// connections as a byte relay, an unreachable leader, and what the standby keeps to itself.
#include "controller/forward.h"

#include <gtest/gtest.h>
#include <sys/socket.h>
#include <unistd.h>

#include <atomic>
#include <chrono>
#include <cstdlib>
#include <filesystem>
#include <string>
#include <thread>
#include <vector>

#include "controller/standby.h"

namespace berth::controller {
namespace {

// The leader: echoes what it was sent; /stream writes three chunks; /upgrade switches protocols
// and echoes bytes back in upper case.
net::HttpResponse Leader(const net::HttpRequest& r) {
  net::HttpResponse out;
  if (r.path == "/stream") {
    out.content_type = "application/json;stream=watch";
    out.stream = [](net::ResponseStream& s) {
      for (const char* c : {"{\"a\":1}\n", "{\"b\":2}\n", "{\"c\":3}\n"}) s.Write(c);
    };
    return out;
  }
  if (r.path == "/quiet") {
    // One chunk, then nothing until the connection goes (a quiet watch).
    out.stream = [](net::ResponseStream& s) {
      s.Write("{\"first\":1}\n");
      for (int i = 0; i < 1000 && !s.Closed(); ++i) {
        std::this_thread::sleep_for(std::chrono::milliseconds(10));
      }
    };
    return out;
  }
  if (r.path == "/upgrade") {
    out.status = 101;
    out.headers.push_back({"Upgrade", "echo/1"});
    out.headers.push_back({"X-Stream-Protocol-Version", "v1"});
    out.upgrade = [](net::UpgradedConnection& c) {
      std::string in = c.already_read;
      char buf[256];
      while (in.find('\n') == std::string::npos) {
        ssize_t n = ::recv(c.fd, buf, sizeof(buf), 0);
        if (n <= 0) return;
        in.append(buf, static_cast<size_t>(n));
      }
      for (char& ch : in) ch = static_cast<char>(std::toupper(static_cast<unsigned char>(ch)));
      (void)!::send(c.fd, in.data(), in.size(), MSG_NOSIGNAL);
    };
    return out;
  }
  if (r.path == "/denied") {
    out.status = 403;
    out.body = R"({"error":"no"})";
    return out;
  }
  out.headers.push_back({"X-Echo-Auth", r.Header("authorization")});
  out.headers.push_back({"X-Echo-Forwarded", r.Header("x-forwarded-for")});
  out.content_type = "text/plain";
  out.body = r.method + " " + r.target + " " + r.body;
  return out;
}

std::string Header(const net::HttpResponse& r, const std::string& name) {
  for (const auto& [n, v] : r.headers) {
    if (n == name) return v;
  }
  return "<none>";
}

net::HttpRequest Req(std::string method, std::string target, std::string body = "") {
  net::HttpRequest r;
  r.method = std::move(method);
  r.target = std::move(target);
  r.path = r.target.substr(0, r.target.find('?'));
  r.body = std::move(body);
  r.headers["authorization"] = "Bearer tok";
  r.headers["host"] = "standby:6443";
  r.remote = "10.0.0.9:5555";
  return r;
}

class ForwardTest : public ::testing::Test {
 protected:
  void SetUp() override {
    leader_ = std::make_unique<net::HttpServer>(Leader);
    ASSERT_TRUE(leader_->ListenTcp("127.0.0.1", 0).ok());
    ASSERT_TRUE(leader_->Start().ok());
    upstream_ = "tcp:127.0.0.1:" + std::to_string(leader_->port());
  }
  std::unique_ptr<net::HttpServer> leader_;
  std::string upstream_;
  Forwarder fwd_{{"b", "", 5000}};
};

TEST(ForwarderTest, OnlyNetworkAddressesAreForwardedTo) {
  EXPECT_EQ(Forwarder::UpstreamOf("https://ctl1.example:6443"), "tls:ctl1.example:6443");
  EXPECT_EQ(Forwarder::UpstreamOf("https://ctl1.example:6443/"), "tls:ctl1.example:6443");
  EXPECT_EQ(Forwarder::UpstreamOf("tls:h:1"), "tls:h:1");
  EXPECT_EQ(Forwarder::UpstreamOf("tcp:10.0.0.1:6817"), "tcp:10.0.0.1:6817");
  EXPECT_EQ(Forwarder::UpstreamOf("http://h:80"), "tcp:h:80");
  // A Unix socket would make the leader take this process's credentials for the caller's.
  EXPECT_EQ(Forwarder::UpstreamOf("unix:/run/berth/controller.sock"), "");
  EXPECT_EQ(Forwarder::UpstreamOf(""), "");
}

TEST_F(ForwardTest, APlainRequestGoesWithItsCredentialAndComesBackWhole) {
  net::HttpResponse r = fwd_.Forward(Req("POST", "/v1/jobs?x=1", "{\"n\":2}"), "a", upstream_);
  EXPECT_EQ(r.status, 200);
  EXPECT_EQ(r.body, "POST /v1/jobs?x=1 {\"n\":2}");
  EXPECT_EQ(r.content_type, "text/plain");
  EXPECT_EQ(Header(r, "x-echo-auth"), "Bearer tok");
  EXPECT_EQ(Header(r, "x-echo-forwarded"), "10.0.0.9:5555");
  // HEAD: the leader's head, no body to wait for.
  net::HttpResponse head = fwd_.Forward(Req("HEAD", "/v1/jobs"), "a", upstream_);
  EXPECT_EQ(head.status, 200);
  EXPECT_EQ(head.body, "");
  net::HttpResponse denied = fwd_.Forward(Req("GET", "/denied"), "a", upstream_);
  EXPECT_EQ(denied.status, 403);
  EXPECT_EQ(denied.body, R"({"error":"no"})");
}

struct Collect : net::ResponseStream {
  std::vector<std::string> chunks;
  bool Write(std::string_view d) override {
    chunks.emplace_back(d);
    return true;
  }
  bool Closed() const override { return false; }
};

TEST_F(ForwardTest, AStreamIsPassedOnChunkByChunk) {
  net::HttpResponse r = fwd_.Forward(Req("GET", "/stream?watch=1"), "a", upstream_);
  EXPECT_EQ(r.status, 200);
  EXPECT_EQ(r.content_type, "application/json;stream=watch");
  ASSERT_TRUE(r.stream);
  Collect out;
  r.stream(out);
  EXPECT_EQ(out.chunks, (std::vector<std::string>{"{\"a\":1}\n", "{\"b\":2}\n", "{\"c\":3}\n"}));
}

// A caller who leaves while the leader sends nothing ends the relay (and the leader's stream)
// within a second, rather than when the leader next writes.
TEST_F(ForwardTest, ACallerLeavingAQuietStreamEndsIt) {
  struct LeavesAfterOne : net::ResponseStream {
    int chunks = 0;
    bool Write(std::string_view) override {
      ++chunks;
      return true;
    }
    bool Closed() const override { return chunks > 0; }
  };
  net::HttpResponse r = fwd_.Forward(Req("GET", "/quiet?watch=1"), "a", upstream_);
  ASSERT_TRUE(r.stream);
  LeavesAfterOne out;
  const auto start = std::chrono::steady_clock::now();
  r.stream(out);
  EXPECT_EQ(out.chunks, 1);
  EXPECT_LT(std::chrono::steady_clock::now() - start, std::chrono::seconds(3));
}

TEST_F(ForwardTest, AnUpgradedConnectionIsRelayed) {
  net::HttpRequest q = Req("POST", "/upgrade");
  q.headers["upgrade"] = "echo/1";
  q.headers["connection"] = "Upgrade";
  net::HttpResponse r = fwd_.Forward(q, "a", upstream_);
  ASSERT_EQ(r.status, 101);
  EXPECT_EQ(Header(r, "Upgrade"), "echo/1");
  EXPECT_EQ(Header(r, "x-stream-protocol-version"), "v1");
  ASSERT_TRUE(r.upgrade);
  int sp[2];
  ASSERT_EQ(::socketpair(AF_UNIX, SOCK_STREAM, 0, sp), 0);
  std::atomic<bool> stopping{false};
  std::thread relay([&] {
    net::UpgradedConnection c{sp[0], "hel", &stopping};
    r.upgrade(c);
  });
  ASSERT_EQ(::send(sp[1], "lo\n", 3, 0), 3);
  std::string got;
  char buf[64];
  while (got.size() < 6) {
    ssize_t n = ::recv(sp[1], buf, sizeof(buf), 0);
    if (n <= 0) break;
    got.append(buf, static_cast<size_t>(n));
  }
  EXPECT_EQ(got, "HELLO\n");
  ::close(sp[1]);
  relay.join();
  ::close(sp[0]);
}

TEST_F(ForwardTest, AnUnreachableLeaderIsA503NamingIt) {
  leader_->Stop();
  net::HttpResponse r = fwd_.Forward(Req("GET", "/v1/jobs"), "a", upstream_);
  EXPECT_EQ(r.status, 503);
  EXPECT_EQ(Header(r, "X-Berth-Leader"), upstream_);
  EXPECT_NE(r.body.find("could not reach the leader a at " + upstream_), std::string::npos)
      << r.body;
}

// The standby forwards what came over the network, but keeps readiness, agents and Unix socket
// callers to itself (503 naming the leader).
TEST_F(ForwardTest, AStandbyForwardsNetworkCallersOnly) {
  const std::string dir =
      std::filesystem::temp_directory_path() / ("berth-fwd-" + std::to_string(::getpid()));
  std::filesystem::create_directories(dir);
  StandbyOptions so;
  so.name = "b";
  so.socket_path = dir + "/c.sock";
  StandbyServer s(so);
  ASSERT_TRUE(s.Start().ok());
  s.SetLeader("a", upstream_);
  EXPECT_EQ(s.Handle(Req("GET", "/v1/jobs")).status, 200);
  EXPECT_EQ(s.Handle(Req("GET", "/readyz")).status, 503);
  EXPECT_EQ(s.Handle(Req("GET", "/v1/agents/n1/commands")).status, 503);
  net::HttpRequest local = Req("GET", "/v1/jobs");
  local.peer = net::PeerCredentials{};
  EXPECT_EQ(s.Handle(local).status, 503);
  s.SetLeader("a", "unix:/elsewhere.sock");
  EXPECT_EQ(s.Handle(Req("GET", "/v1/jobs")).status, 503);
  s.Stop();
  std::filesystem::remove_all(dir);
}

}  // namespace
}  // namespace berth::controller
