// Server behaviour, mostly through raw sockets so that the bytes on the wire are what is tested.
#include <sys/resource.h>
#include <sys/stat.h>
#include <unistd.h>

#include <atomic>
#include <chrono>
#include <cstdint>
#include <cstdlib>
#include <fstream>
#include <mutex>
#include <set>
#include <string>
#include <thread>

#include "net/http.h"
#include "net/http_test_util.h"

namespace berth::net {
namespace {

using testing::CountOccurrences;
using testing::EchoHandler;
using testing::RawConnectTcp;
using testing::RawConnectUnix;
using testing::RawExchange;
using testing::RawReadUntil;
using testing::RawSend;
using testing::StatusOf;
using testing::TempDir;
using testing::TestServer;

TEST(HttpServerTest, RoundTripUnixAndTcp) {
  TestServer ts(EchoHandler);
  for (const std::string& address : {ts.unix_address(), ts.tcp_address()}) {
    auto client = HttpClient::Connect(address);
    ASSERT_TRUE(client.ok()) << address << ": " << client.status().ToString();
    auto resp = (*client)->Request("POST", "/v1/echo%20me?x=1", "hello");
    ASSERT_TRUE(resp.ok()) << resp.status().ToString();
    EXPECT_EQ(resp->status, 200);
    EXPECT_EQ(resp->body, "POST /v1/echo me hello");
    EXPECT_EQ(resp->headers["content-type"], "text/plain");
    EXPECT_EQ(resp->headers["connection"], "keep-alive");
    if (address.starts_with("unix:")) {
      EXPECT_EQ(resp->headers["x-remote"], "unix");
    } else {
      EXPECT_TRUE(resp->headers["x-remote"].starts_with("127.0.0.1:"));
    }
  }
}

TEST(HttpServerTest, RequestFieldsReachHandler) {
  HttpRequest seen;
  TestServer ts([&seen](const HttpRequest& req) {
    seen = req;
    return HttpResponse{};
  });
  UniqueFd fd = RawConnectTcp(ts.server->port());
  std::string raw = RawExchange(fd.get(),
                                "GET /a%2Fb/c+d?name=x+y%21&k=1&k=2 HTTP/1.1\r\n"
                                "Host: h\r\nX-Token: Secret\r\nConnection: close\r\n\r\n");
  EXPECT_EQ(StatusOf(raw), 200);
  EXPECT_EQ(seen.method, "GET");
  EXPECT_EQ(seen.target, "/a%2Fb/c+d?name=x+y%21&k=1&k=2");
  EXPECT_EQ(seen.path, "/a/b/c+d");
  EXPECT_EQ(seen.query.at("name"), "x y!");
  EXPECT_EQ(seen.query.at("k"), "2");
  EXPECT_EQ(seen.Header("x-token"), "Secret");
  EXPECT_FALSE(seen.peer.has_value());
}

TEST(HttpServerTest, ResponseWireFormat) {
  TestServer ts([](const HttpRequest& req) {
    HttpResponse resp;
    if (req.path == "/created") {
      resp.status = 201;
      resp.body = "{}";
      resp.headers.emplace_back("Location", "/v1/jobs/7");
      resp.headers.emplace_back("Content-Length", "999");  // framing is the server's business
      resp.headers.emplace_back("X-Evil", "a\r\nInjected: yes");
    } else if (req.path == "/empty") {
      resp.status = 204;
      resp.body = "ignored";
    }
    return resp;
  });
  UniqueFd fd = RawConnectTcp(ts.server->port());
  std::string raw = RawExchange(fd.get(), "POST /created HTTP/1.1\r\nConnection: close\r\n\r\n");
  EXPECT_EQ(raw,
            "HTTP/1.1 201 Created\r\nContent-Type: application/json\r\nContent-Length: 2\r\n"
            "Connection: close\r\nLocation: /v1/jobs/7\r\n\r\n{}");
  fd = RawConnectTcp(ts.server->port());
  raw = RawExchange(fd.get(), "GET /empty HTTP/1.1\r\nConnection: close\r\n\r\n");
  EXPECT_EQ(raw, "HTTP/1.1 204 No Content\r\nConnection: close\r\n\r\n");
}

TEST(HttpServerTest, HeadHasNoBody) {
  TestServer ts(EchoHandler);
  UniqueFd fd = RawConnectTcp(ts.server->port());
  std::string raw = RawExchange(fd.get(), "HEAD /x HTTP/1.1\r\nConnection: close\r\n\r\n");
  EXPECT_NE(raw.find("Content-Length: 8\r\n"), std::string::npos) << raw;  // "HEAD /x "
  EXPECT_TRUE(raw.ends_with("\r\n\r\n")) << raw;
  auto client = HttpClient::Connect(ts.unix_address());
  ASSERT_TRUE(client.ok());
  auto head = (*client)->Request("HEAD", "/x");
  ASSERT_TRUE(head.ok()) << head.status().ToString();
  EXPECT_EQ(head->body, "");
  auto get = (*client)->Request("GET", "/y");  // the connection is still in step
  ASSERT_TRUE(get.ok());
  EXPECT_EQ(get->body, "GET /y ");
}

TEST(HttpServerTest, KeepAliveReusesOneConnection) {
  std::mutex mu;
  std::set<std::string> remotes;
  TestServer ts([&](const HttpRequest& req) {
    std::lock_guard<std::mutex> lock(mu);
    remotes.insert(req.remote);
    return EchoHandler(req);
  });
  auto client = HttpClient::Connect(ts.tcp_address());
  ASSERT_TRUE(client.ok());
  for (int i = 0; i < 500; ++i) {
    auto resp = (*client)->Request("GET", "/n/" + std::to_string(i));
    ASSERT_TRUE(resp.ok()) << i << ": " << resp.status().ToString();
    ASSERT_EQ(resp->body, "GET /n/" + std::to_string(i) + " ");
  }
  EXPECT_EQ(remotes.size(), 1u);  // one client port: one connection
}

// The process's resident memory, in KiB.
int64_t ResidentKiB() {
  std::ifstream status("/proc/self/status");
  std::string line;
  while (std::getline(status, line)) {
    if (line.starts_with("VmRSS:")) return std::atoll(line.c_str() + 6);
  }
  return -1;
}

// Page faults of this process so far (the test server's threads included).
int64_t MinorFaults() {
  rusage u{};
  getrusage(RUSAGE_SELF, &u);
  return u.ru_minflt;
}

// What becomes of a large request body's memory: a server that answers each request with its
// body's size, and one connection to it.
class LargeBodyTest : public ::testing::Test {
 protected:
  void SetUp() override {
#if defined(__has_feature)
#if __has_feature(address_sanitizer)
    GTEST_SKIP() << "AddressSanitizer keeps freed blocks in quarantine and their shadow resident";
#endif
#endif
    ASSERT_GE(fd_.get(), 0);
  }

  // POSTs the first `bytes` of `body`; whether the answer gave their count.
  bool Post(size_t bytes, const std::string& body) {
    const std::string size = std::to_string(bytes);
    RawSend(fd_.get(), "POST /jobs HTTP/1.1\r\nHost: h\r\nContent-Length: " + size + "\r\n\r\n");
    RawSend(fd_.get(), std::string_view(body).substr(0, bytes));
    return RawReadUntil(fd_.get(), "\r\n\r\n" + size).find("\r\n\r\n" + size) != std::string::npos;
  }

  TestServer ts_{[](const HttpRequest& req) {
    HttpResponse resp;
    resp.body = std::to_string(req.body.size());
    return resp;
  }};
  UniqueFd fd_ = RawConnectUnix(ts_.socket_path);
};

TEST_F(LargeBodyTest, ItIsNotKeptResidentOnceTheConnectionIdles) {
  const std::string body(6 << 20, 'x');  // the client's side, made before the first reading
  ASSERT_TRUE(Post(10, body));           // the connection's thread
  const int64_t before = ResidentKiB();
  // Bodies of several sizes: glibc maps the first large blocks and raises its threshold to each
  // one freed, so that the last comes from the connection thread's arena, where it would stay.
  for (size_t mib : {4, 6, 5}) ASSERT_TRUE(Post(mib << 20, body));
  // The connection lets the block go once no request follows: give it a moment.
  int64_t grown = ResidentKiB() - before;
  for (int i = 0; i < 100 && grown >= 2048; ++i) {
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
    grown = ResidentKiB() - before;
  }
  EXPECT_LT(grown, 2048) << "KiB kept after answering bodies of 4, 6 and 5 MiB";
}

TEST_F(LargeBodyTest, ItsMemoryServesTheRequestThatFollowsAtOnce) {
  const std::string body(4 << 20, 'x');
  ASSERT_TRUE(Post(body.size(), body));
  // The next body is read into the first one's pages: a fresh block would fault in each of its
  // 1,024 pages again.
  const int64_t before = MinorFaults();
  ASSERT_TRUE(Post(body.size(), body));
  EXPECT_LT(MinorFaults() - before, 256);
}

TEST(HttpServerTest, PipelinedRequestsAnsweredInOrder) {
  TestServer ts(EchoHandler);
  UniqueFd fd = RawConnectUnix(ts.socket_path);
  std::string requests;
  for (int i = 0; i < 20; ++i) {
    requests += "POST /p" + std::to_string(i) + " HTTP/1.1\r\nContent-Length: 1\r\n\r\n" +
                std::to_string(i % 10);
  }
  requests += "GET /last HTTP/1.1\r\nConnection: close\r\n\r\n";
  std::string raw = RawExchange(fd.get(), requests);
  EXPECT_EQ(CountOccurrences(raw, "HTTP/1.1 200 OK"), 21u);
  size_t pos = 0;
  for (int i = 0; i < 20; ++i) {
    std::string want = "POST /p" + std::to_string(i) + " " + std::to_string(i % 10);
    size_t at = raw.find(want, pos);
    ASSERT_NE(at, std::string::npos) << want;
    pos = at;
  }
  EXPECT_TRUE(raw.ends_with("GET /last ")) << raw;
}

TEST(HttpServerTest, ChunkedRequestBody) {
  TestServer ts(EchoHandler);
  UniqueFd fd = RawConnectTcp(ts.server->port());
  RawSend(fd.get(),
          "PUT /c HTTP/1.1\r\nTransfer-Encoding: chunked\r\n\r\n"
          "5\r\nhello\r\n1;ext=x\r\n \r\n");
  std::this_thread::sleep_for(std::chrono::milliseconds(20));  // the body arrives in pieces
  std::string raw = RawExchange(fd.get(),
                                "5\r\nworld\r\n0\r\nTrailer: t\r\n\r\n"
                                "GET /after HTTP/1.1\r\nConnection: close\r\n\r\n");
  EXPECT_NE(raw.find("PUT /c hello world"), std::string::npos) << raw;
  EXPECT_TRUE(raw.ends_with("GET /after ")) << raw;
}

TEST(HttpServerTest, RequestsSplitAtEveryByte) {
  TestServer ts(EchoHandler);
  UniqueFd fd = RawConnectTcp(ts.server->port());
  std::string requests =
      "POST /one HTTP/1.1\r\nContent-Length: 5\r\n\r\nhello"
      "PUT /two HTTP/1.1\r\nTransfer-Encoding: chunked\r\n\r\n2\r\nhi\r\n0\r\n\r\n"
      "GET /three HTTP/1.1\r\nConnection: close\r\n\r\n";
  for (char c : requests) {
    ASSERT_TRUE(RawSend(fd.get(), std::string_view(&c, 1)));
    std::this_thread::sleep_for(std::chrono::microseconds(100));
  }
  std::string raw = testing::RawReadAll(fd.get());
  EXPECT_NE(raw.find("POST /one hello"), std::string::npos) << raw;
  EXPECT_NE(raw.find("PUT /two hi"), std::string::npos) << raw;
  EXPECT_TRUE(raw.ends_with("GET /three ")) << raw;
}

TEST(HttpServerTest, ExpectContinue) {
  TestServer ts(EchoHandler);
  UniqueFd fd = RawConnectTcp(ts.server->port());
  RawSend(fd.get(), "POST /e HTTP/1.1\r\nContent-Length: 4\r\nExpect: 100-continue\r\n\r\n");
  std::string interim = RawReadUntil(fd.get(), "\r\n\r\n");
  EXPECT_EQ(interim, "HTTP/1.1 100 Continue\r\n\r\n");
  std::string raw = RawExchange(fd.get(), "body");
  EXPECT_TRUE(raw.ends_with("POST /e body")) << raw;
}

TEST(HttpServerTest, ConnectionCloseAndHttp10) {
  TestServer ts(EchoHandler);
  for (const char* request : {"GET /a HTTP/1.1\r\nConnection: close\r\n\r\nGET /b HTTP/1.1\r\n\r\n",
                              "GET /a HTTP/1.0\r\n\r\nGET /b HTTP/1.0\r\n\r\n"}) {
    UniqueFd fd = RawConnectTcp(ts.server->port());
    RawSend(fd.get(), request);  // no half-close: the server must close by itself
    std::string raw = testing::RawReadAll(fd.get(), 3000);
    EXPECT_EQ(CountOccurrences(raw, "HTTP/1.1 200"), 1u) << raw;
    EXPECT_NE(raw.find("Connection: close"), std::string::npos) << raw;
  }
}

TEST(HttpServerTest, ErrorStatuses) {
  ServerOptions options;
  options.max_body_bytes = 1024;
  options.max_header_bytes = 1024;
  TestServer ts(EchoHandler, options);
  struct Case {
    std::string request;
    int status;
  };
  const Case cases[] = {
      {"GARBAGE\r\n\r\n", 400},
      {"GET / HTTP/1.1\r\nBad Header\r\n\r\n", 400},
      {"GET /%zz HTTP/1.1\r\n\r\n", 400},
      {"POST / HTTP/1.1\r\nContent-Length: x\r\n\r\n", 400},
      {"POST / HTTP/1.1\r\nContent-Length: 1\r\nTransfer-Encoding: chunked\r\n\r\n", 400},
      {"POST / HTTP/1.1\r\nTransfer-Encoding: chunked\r\n\r\nzz\r\n", 400},
      {"POST / HTTP/1.1\r\nContent-Length: 1025\r\n\r\n", 413},
      {"POST / HTTP/1.1\r\nTransfer-Encoding: chunked\r\n\r\n400\r\n" + std::string(1024, 'a') +
           "\r\n1\r\nb\r\n0\r\n\r\n",
       413},
      {"GET / HTTP/1.1\r\nX-Big: " + std::string(2000, 'h') + "\r\n\r\n", 431},
      {"GET / HTTP/1.1\r\nX-Big: " + std::string(2000, 'h'), 431},  // never ends
      {"POST / HTTP/1.1\r\nTransfer-Encoding: gzip\r\n\r\n", 501},
      {"GET / HTTP/3.0\r\n\r\n", 505},
  };
  for (const Case& c : cases) {
    UniqueFd fd = RawConnectTcp(ts.server->port());
    std::string raw = RawExchange(fd.get(), c.request);
    EXPECT_EQ(StatusOf(raw), c.status) << c.request.substr(0, 80) << " -> " << raw;
    EXPECT_NE(raw.find("Connection: close"), std::string::npos);
  }
  // The largest allowed body still works.
  auto client = HttpClient::Connect(ts.tcp_address());
  ASSERT_TRUE(client.ok());
  auto resp = (*client)->Request("POST", "/", std::string(1024, 'z'));
  ASSERT_TRUE(resp.ok());
  EXPECT_EQ(resp->status, 200);
}

TEST(HttpServerTest, HandlerThrowingGives500AndServerSurvives) {
  TestServer ts([](const HttpRequest& req) -> HttpResponse {
    if (req.path == "/throw") throw std::runtime_error("bug");
    if (req.path == "/throw-int") throw 7;
    return EchoHandler(req);
  });
  auto client = HttpClient::Connect(ts.unix_address());
  ASSERT_TRUE(client.ok());
  for (const char* path : {"/throw", "/throw-int"}) {
    auto resp = (*client)->Request("GET", path);
    ASSERT_TRUE(resp.ok());
    EXPECT_EQ(resp->status, 500);
  }
  auto ok = (*client)->Request("GET", "/fine");
  ASSERT_TRUE(ok.ok());
  EXPECT_EQ(ok->status, 200);
}

TEST(HttpServerTest, PeerCredentialsOnUnixSocket) {
  std::optional<PeerCredentials> seen;
  TestServer ts([&seen](const HttpRequest& req) {
    seen = req.peer;
    return HttpResponse{};
  });
  auto client = HttpClient::Connect(ts.unix_address());
  ASSERT_TRUE(client.ok());
  ASSERT_TRUE((*client)->Request("GET", "/whoami").ok());
  ASSERT_TRUE(seen.has_value());
  EXPECT_EQ(seen->uid, ::getuid());
  EXPECT_EQ(seen->gid, ::getgid());
  EXPECT_EQ(seen->pid, ::getpid());
  auto tcp = HttpClient::Connect(ts.tcp_address());
  ASSERT_TRUE(tcp.ok());
  ASSERT_TRUE((*tcp)->Request("GET", "/whoami").ok());
  EXPECT_FALSE(seen.has_value());
}

TEST(HttpServerTest, UnixSocketFileModeStaleFileAndCleanup) {
  TempDir dir;
  std::string path = dir.File("s.sock");
  {
    HttpServer first(EchoHandler);
    ASSERT_TRUE(first.ListenUnix(path).ok());
    // `first` is never stopped cleanly: its file is left behind as if it had crashed...
    ASSERT_TRUE(first.Start().ok());
    HttpServer second(EchoHandler);
    ASSERT_TRUE(second.ListenUnix(path, 0600).ok());  // ...and the next server replaces it
    ASSERT_TRUE(second.Start().ok());
    struct stat st {};
    ASSERT_EQ(::lstat(path.c_str(), &st), 0);
    EXPECT_EQ(st.st_mode & 0777, 0600u);
    auto client = HttpClient::Connect("unix:" + path);
    ASSERT_TRUE(client.ok());
    EXPECT_TRUE((*client)->Request("GET", "/").ok());
    first.Stop();  // must not remove the file that `second` owns now
    EXPECT_EQ(::lstat(path.c_str(), &st), 0);
    second.Stop();
    EXPECT_NE(::lstat(path.c_str(), &st), 0);
  }
  std::ofstream(dir.File("regular")) << "data";
  HttpServer third(EchoHandler);
  EXPECT_FALSE(third.ListenUnix(dir.File("regular")).ok());  // not a socket: left alone
  EXPECT_FALSE(third.ListenUnix(dir.File(std::string(200, 'x'))).ok());
  EXPECT_FALSE(third.Start().ok());  // nothing to listen on
}

TEST(HttpServerTest, MaxConnectionsAnswers503) {
  ServerOptions options;
  options.max_connections = 2;
  TestServer ts(EchoHandler, options);
  UniqueFd a = RawConnectTcp(ts.server->port());
  UniqueFd b = RawConnectTcp(ts.server->port());
  RawSend(a.get(), "GET / HTTP/1.1\r\n\r\n");  // make sure both are being served
  RawSend(b.get(), "GET / HTTP/1.1\r\n\r\n");
  EXPECT_EQ(StatusOf(RawReadUntil(a.get(), "GET / ")), 200);
  EXPECT_EQ(StatusOf(RawReadUntil(b.get(), "GET / ")), 200);
  UniqueFd c = RawConnectTcp(ts.server->port());
  EXPECT_EQ(StatusOf(testing::RawReadAll(c.get())), 503);
}

TEST(HttpServerTest, IdleConnectionsAreClosed) {
  ServerOptions options;
  options.idle_timeout_s = 1;
  TestServer ts(EchoHandler, options);
  UniqueFd fd = RawConnectTcp(ts.server->port());
  auto start = std::chrono::steady_clock::now();
  std::string raw = testing::RawReadAll(fd.get(), 5000);  // returns at the server's close
  EXPECT_EQ(raw, "");
  double waited = testing::SecondsSince(start);
  EXPECT_GE(waited, 0.8);
  EXPECT_LT(waited, 4.0);
}

TEST(HttpServerTest, ListenErrorsAndRestart) {
  HttpServer server(EchoHandler);
  EXPECT_FALSE(server.ListenTcp("not-an-ip.invalid", 0).ok());
  ASSERT_TRUE(server.ListenTcp("127.0.0.1", 0).ok());
  uint16_t port = server.port();
  EXPECT_NE(port, 0);
  HttpServer other(EchoHandler);
  EXPECT_FALSE(other.ListenTcp("127.0.0.1", port).ok());  // in use (SO_REUSEADDR is no help)
  ASSERT_TRUE(server.Start().ok());
  EXPECT_FALSE(server.Start().ok());
  server.Stop();
  server.Stop();  // idempotent
}

}  // namespace
}  // namespace berth::net
