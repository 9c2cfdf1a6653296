// Client behaviour and streamed responses.
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <sys/socket.h>

#include <atomic>
#include <functional>
#include <mutex>
#include <set>
#include <thread>
#include <vector>

#include "net/http.h"
#include "net/http_test_util.h"

namespace berth::net {
namespace {

using std::chrono::milliseconds;
using testing::EchoHandler;
using testing::RawConnectTcp;
using testing::RawReadUntil;
using testing::RawSend;
using testing::SecondsSince;
using testing::TestServer;

// Streams `count` chunks "event i\n", `gap` apart.
HttpResponse Ticker(int count, milliseconds gap) {
  HttpResponse resp;
  resp.stream = [count, gap](ResponseStream& out) {
    for (int i = 0; i < count; ++i) {
      if (i > 0) std::this_thread::sleep_for(gap);
      if (!out.Write("event " + std::to_string(i) + "\n")) return;
    }
  };
  return resp;
}

TEST(HttpClientTest, StreamDeliversChunksAsTheyArrive) {
  TestServer ts([](const HttpRequest&) { return Ticker(5, milliseconds(100)); });
  auto client = HttpClient::Connect(ts.unix_address());
  ASSERT_TRUE(client.ok());
  std::vector<std::string> got;
  std::vector<double> when;
  auto start = std::chrono::steady_clock::now();
  auto status = (*client)->Stream("GET", "/watch", [&](std::string_view data) {
    got.emplace_back(data);
    when.push_back(SecondsSince(start));
    return true;
  });
  ASSERT_TRUE(status.ok()) << status.status().ToString();
  EXPECT_EQ(*status, 200);
  ASSERT_EQ(got.size(), 5u);  // one call per chunk, as written
  for (int i = 0; i < 5; ++i) EXPECT_EQ(got[i], "event " + std::to_string(i) + "\n");
  // Incremental: the first event came long before the last one was written.
  EXPECT_LT(when[0], 0.2);
  EXPECT_GT(when[4] - when[0], 0.3);
  // The stream ended cleanly, so the connection is reusable.
  auto again = (*client)->Request("GET", "/");
  ASSERT_TRUE(again.ok());
  EXPECT_EQ(again->body, "event 0\nevent 1\nevent 2\nevent 3\nevent 4\n");  // Request de-chunks
}

TEST(HttpClientTest, RequestToGivesASuccessfulBodyToItsSinkAndKeepsAnError) {
  TestServer ts([](const HttpRequest& req) {
    if (req.path == "/chunked") return Ticker(3, milliseconds(0));
    HttpResponse resp;
    resp.status = req.path == "/missing" ? 404 : 200;
    resp.body = std::string(300000, req.path == "/missing" ? 'n' : 'y');
    return resp;
  });
  auto client = HttpClient::Connect(ts.unix_address());
  ASSERT_TRUE(client.ok());
  for (const char* path : {"/chunked", "/whole"}) {
    std::string sunk;
    int pieces = 0;
    Result<ClientResponse> r =
        (*client)->RequestTo("GET", path, "", "", [&](std::string_view data) {
          sunk.append(data);
          ++pieces;
        });
    ASSERT_TRUE(r.ok()) << r.status().ToString();
    EXPECT_EQ(r->status, 200);
    EXPECT_TRUE(r->body.empty()) << path;
    EXPECT_EQ(sunk, std::string(path) == "/chunked" ? "event 0\nevent 1\nevent 2\n"
                                                    : std::string(300000, 'y'));
    EXPECT_GE(pieces, std::string(path) == "/chunked" ? 3 : 2) << path;  // as it came
  }
  // An answer that is not a success is read whole into the response; the sink gets nothing.
  bool called = false;
  Result<ClientResponse> r =
      (*client)->RequestTo("GET", "/missing", "", "", [&](std::string_view) { called = true; });
  ASSERT_TRUE(r.ok());
  EXPECT_EQ(r->status, 404);
  EXPECT_EQ(r->body, std::string(300000, 'n'));
  EXPECT_FALSE(called);
}

TEST(HttpClientTest, StreamWireFormat) {
  TestServer ts([](const HttpRequest&) { return Ticker(2, milliseconds(0)); });
  UniqueFd fd = RawConnectTcp(ts.server->port());
  std::string raw = testing::RawExchange(fd.get(), "GET / HTTP/1.1\r\nConnection: close\r\n\r\n");
  EXPECT_EQ(raw,
            "HTTP/1.1 200 OK\r\nContent-Type: application/json\r\nTransfer-Encoding: chunked\r\n"
            "Connection: close\r\n\r\n8\r\nevent 0\n\r\n8\r\nevent 1\n\r\n0\r\n\r\n");
  fd = RawConnectTcp(ts.server->port());
  raw = testing::RawExchange(fd.get(), "GET / HTTP/1.0\r\n\r\n");  // no chunks for HTTP/1.0
  EXPECT_TRUE(raw.ends_with("Connection: close\r\n\r\nevent 0\nevent 1\n")) << raw;
}

struct StreamProbe {
  std::atomic<int> writes{0};
  std::atomic<bool> write_failed{false};
  std::atomic<bool> saw_closed{false};
  std::atomic<bool> done{false};
};

bool WaitFor(const std::atomic<bool>& flag, double seconds) {
  auto start = std::chrono::steady_clock::now();
  while (!flag && SecondsSince(start) < seconds) std::this_thread::sleep_for(milliseconds(5));
  return flag;
}

TEST(HttpClientTest, ClientDisconnectMidStream) {
  StreamProbe probe;
  TestServer ts([&probe](const HttpRequest&) {
    HttpResponse resp;
    resp.stream = [&probe](ResponseStream& out) {
      // Keeps writing until the peer is gone: Write must say so (and SIGPIPE must not kill us).
      while (out.Write(std::string(1000, 'x'))) {
        ++probe.writes;
        std::this_thread::sleep_for(milliseconds(5));
      }
      probe.write_failed = true;
      probe.saw_closed = out.Closed();
      probe.done = true;
    };
    return resp;
  });
  auto client = HttpClient::Connect(ts.tcp_address());
  ASSERT_TRUE(client.ok());
  int seen = 0;
  auto status = (*client)->Stream("GET", "/", [&seen](std::string_view) { return ++seen < 3; });
  ASSERT_TRUE(status.ok());
  EXPECT_EQ(seen, 3);
  client->reset();  // closes the connection
  ASSERT_TRUE(WaitFor(probe.done, 5.0));
  EXPECT_TRUE(probe.write_failed);
  EXPECT_TRUE(probe.saw_closed);
  EXPECT_GE(probe.writes.load(), 3);
}

TEST(HttpClientTest, IdleStreamNoticesDisconnect) {
  StreamProbe probe;
  TestServer ts([&probe](const HttpRequest&) {
    HttpResponse resp;
    resp.stream = [&probe](ResponseStream& out) {
      while (!out.Closed()) std::this_thread::sleep_for(milliseconds(5));  // a quiet watch
      probe.saw_closed = true;
      probe.done = true;
    };
    return resp;
  });
  UniqueFd fd = RawConnectTcp(ts.server->port());
  RawSend(fd.get(), "GET /watch HTTP/1.1\r\n\r\n");
  EXPECT_EQ(testing::StatusOf(RawReadUntil(fd.get(), "\r\n\r\n")), 200);
  fd.Reset();
  EXPECT_TRUE(WaitFor(probe.done, 5.0));
}

TEST(HttpClientTest, StreamIdleTimeoutAndStatus) {
  TestServer ts([](const HttpRequest& req) {
    if (req.path == "/missing") {
      HttpResponse resp;
      resp.status = 404;
      resp.body = "{\"error\":\"no\"}";
      return resp;
    }
    HttpResponse resp;
    resp.stream = [](ResponseStream& out) {
      (void)out.Write("first");
      while (!out.Closed()) std::this_thread::sleep_for(milliseconds(5));
    };
    return resp;
  });
  auto client = HttpClient::Connect(ts.unix_address());
  ASSERT_TRUE(client.ok());
  std::string body;
  auto status = (*client)->Stream("GET", "/missing", [&body](std::string_view d) {
    body.append(d);
    return true;
  });
  ASSERT_TRUE(status.ok());
  EXPECT_EQ(*status, 404);
  EXPECT_EQ(body, "{\"error\":\"no\"}");
  auto start = std::chrono::steady_clock::now();
  std::vector<std::string> got;
  status = (*client)->Stream(
      "GET", "/quiet",
      [&got](std::string_view d) {
        got.emplace_back(d);
        return true;
      },
      300);
  ASSERT_TRUE(status.ok());
  EXPECT_EQ(*status, 200);
  EXPECT_EQ(got, std::vector<std::string>{"first"});
  EXPECT_GE(SecondsSince(start), 0.25);
  auto after = (*client)->Request("GET", "/missing");  // a fresh connection is made
  ASSERT_TRUE(after.ok());
  EXPECT_EQ(after->status, 404);
}

TEST(HttpClientTest, ReconnectsAfterServerClosedIdleConnection) {
  ServerOptions options;
  options.idle_timeout_s = 1;
  std::mutex mu;
  std::set<std::string> remotes;
  TestServer ts(
      [&](const HttpRequest& req) {
        std::lock_guard<std::mutex> lock(mu);
        remotes.insert(req.remote);
        return EchoHandler(req);
      },
      options);
  auto client = HttpClient::Connect(ts.tcp_address());
  ASSERT_TRUE(client.ok());
  ASSERT_TRUE((*client)->Request("POST", "/1", "a").ok());
  std::this_thread::sleep_for(milliseconds(1500));
  auto resp = (*client)->Request("POST", "/2", "b");  // not idempotent, still safe
  ASSERT_TRUE(resp.ok()) << resp.status().ToString();
  EXPECT_EQ(resp->body, "POST /2 b");
  EXPECT_EQ(remotes.size(), 2u);
}

// A hand-written server on 127.0.0.1: `serve` runs for each accepted connection, in turn.
class FakeServer {
 public:
  explicit FakeServer(std::function<void(int fd)> serve) : serve_(std::move(serve)) {
    listen_.Reset(::socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0));
    sockaddr_in addr{};
    addr.sin_family = AF_INET;
    addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    EXPECT_EQ(::bind(listen_.get(), reinterpret_cast<sockaddr*>(&addr), sizeof(addr)), 0);
    socklen_t len = sizeof(addr);
    ::getsockname(listen_.get(), reinterpret_cast<sockaddr*>(&addr), &len);
    port_ = ntohs(addr.sin_port);
    EXPECT_EQ(::listen(listen_.get(), 16), 0);
    thread_ = std::thread([this] { Run(); });
  }
  ~FakeServer() {
    ::shutdown(listen_.get(), SHUT_RDWR);
    thread_.join();
  }
  std::string address() const { return "tcp:127.0.0.1:" + std::to_string(port_); }
  int connections() const { return connections_; }

 private:
  void Run() {
    for (;;) {
      UniqueFd fd(::accept(listen_.get(), nullptr, nullptr));
      if (!fd.valid()) return;
      ++connections_;
      serve_(fd.get());
    }
  }

  std::function<void(int fd)> serve_;
  UniqueFd listen_;
  uint16_t port_ = 0;
  std::atomic<int> connections_{0};
  std::thread thread_;
};

TEST(HttpClientTest, RetriesIdempotentRequestOnceOnFreshConnection) {
  // Answers the first request on each connection and drops the connection on reading the
  // second: the race where a server closes a kept-alive connection just as the client reuses it.
  FakeServer fake([](int fd) {
    if (RawReadUntil(fd, "\r\n\r\n").empty()) return;
    RawSend(fd, "HTTP/1.1 200 OK\r\nContent-Length: 2\r\n\r\nok");
    RawReadUntil(fd, "\r\n\r\n");
  });
  auto client = HttpClient::Connect(fake.address());
  ASSERT_TRUE(client.ok());
  ASSERT_TRUE((*client)->Request("GET", "/a").ok());
  auto second = (*client)->Request("GET", "/b");  // dropped on the reused connection, retried
  ASSERT_TRUE(second.ok()) << second.status().ToString();
  EXPECT_EQ(second->body, "ok");
  EXPECT_EQ(fake.connections(), 2);
  // A POST that reached the server is not repeated: the caller gets the error.
  auto post = (*client)->Request("POST", "/c", "x");
  EXPECT_FALSE(post.ok());
  EXPECT_EQ(post.status().code(), StatusCode::kUnavailable);
}

TEST(HttpClientTest, ResponsesSplitAtEveryByte) {
  // Interim 100, a chunked body with an extension and a trailer, then a Content-Length body:
  // each sent one byte at a time.
  const std::string responses[] = {
      "HTTP/1.1 100 Continue\r\n\r\nHTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n"
      "3;x=y\r\nabc\r\n2\r\nde\r\n0\r\nT: 1\r\n\r\n",
      "HTTP/1.1 404 Not Found\r\nContent-Length: 4\r\nX-A: b\r\n\r\nnope",
  };
  FakeServer fake([&responses](int fd) {
    int one = 1;
    ::setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof(one));
    for (const std::string& response : responses) {
      if (RawReadUntil(fd, "\r\n\r\n").empty()) return;
      for (char c : response) {
        RawSend(fd, std::string_view(&c, 1));
        std::this_thread::sleep_for(std::chrono::microseconds(200));
      }
    }
    RawReadUntil(fd, "never");  // until the client closes
  });
  auto client = HttpClient::Connect(fake.address());
  ASSERT_TRUE(client.ok());
  auto first = (*client)->Request("GET", "/1");
  ASSERT_TRUE(first.ok()) << first.status().ToString();
  EXPECT_EQ(first->status, 200);
  EXPECT_EQ(first->body, "abcde");
  auto second = (*client)->Request("GET", "/2");
  ASSERT_TRUE(second.ok()) << second.status().ToString();
  EXPECT_EQ(second->status, 404);
  EXPECT_EQ(second->body, "nope");
  EXPECT_EQ(second->headers["x-a"], "b");
  EXPECT_EQ(fake.connections(), 1);
}

TEST(HttpClientTest, TimeoutsAndErrors) {
  TestServer ts([](const HttpRequest& req) {
    if (req.path == "/slow") std::this_thread::sleep_for(milliseconds(800));
    return EchoHandler(req);
  });
  auto client = HttpClient::Connect(ts.tcp_address(), 200);
  ASSERT_TRUE(client.ok());
  auto start = std::chrono::steady_clock::now();
  auto slow = (*client)->Request("GET", "/slow");
  EXPECT_FALSE(slow.ok());
  EXPECT_EQ(slow.status().code(), StatusCode::kUnavailable);
  EXPECT_LT(SecondsSince(start), 0.7);
  auto fast = (*client)->Request("GET", "/fast");  // reconnects
  ASSERT_TRUE(fast.ok()) << fast.status().ToString();
  EXPECT_EQ(fast->body, "GET /fast ");
  EXPECT_FALSE((*client)->Request("GET", "/with space").ok());
  EXPECT_FALSE((*client)->Request("GET\r\n", "/").ok());
}

TEST(HttpClientTest, AddressErrors) {
  for (const char* bad : {"", "unix:", "tcp:", "tcp:host", "tcp:host:", "tcp::80", "tcp:host:0",
                          "tcp:host:70000", "tcp:host:8x", "http://x:1"}) {
    auto client = HttpClient::Connect(bad);
    ASSERT_FALSE(client.ok()) << bad;
    EXPECT_EQ(client.status().code(), StatusCode::kInvalidArgument) << bad;
  }
  testing::TempDir dir;
  auto nobody = HttpClient::Connect("unix:" + dir.File("none.sock"));
  ASSERT_FALSE(nobody.ok());
  EXPECT_EQ(nobody.status().code(), StatusCode::kUnavailable);
  HttpServer server(EchoHandler);  // a port that nobody listens on once `server` is gone
  ASSERT_TRUE(server.ListenTcp("127.0.0.1", 0).ok());
  uint16_t port = server.port();
  server.Stop();
  auto refused = HttpClient::Connect("tcp:127.0.0.1:" + std::to_string(port));
  EXPECT_FALSE(refused.ok());
  auto v6 = HttpServer(EchoHandler).ListenTcp("::1", 0);  // IPv6 may be off in containers
  if (v6.ok()) {
    HttpServer s6(EchoHandler);
    ASSERT_TRUE(s6.ListenTcp("::1", 0).ok());
    ASSERT_TRUE(s6.Start().ok());
    auto c6 = HttpClient::Connect("tcp:[::1]:" + std::to_string(s6.port()));
    ASSERT_TRUE(c6.ok()) << c6.status().ToString();
    auto resp = (*c6)->Request("GET", "/six");
    ASSERT_TRUE(resp.ok());
    EXPECT_TRUE(resp->headers["x-remote"].starts_with("[::1]:"));
  }
}

}  // namespace
}  // namespace berth::net
