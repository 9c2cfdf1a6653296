// Many clients, shutdown under load, garbage input, and a throughput figure (printed only).
#include <sys/socket.h>

#include <atomic>
#include <cstdio>
#include <map>
#include <random>
#include <thread>
#include <vector>

#include "net/http.h"
#include "net/http_test_util.h"

namespace berth::net {
namespace {

using std::chrono::milliseconds;
using testing::EchoHandler;
using testing::SecondsSince;
using testing::TestServer;

TEST(HttpLoadTest, ManyConcurrentClients) {
  constexpr int kClients = 200;
  constexpr int kRequests = 50;
  std::atomic<int> served{0};
  TestServer ts([&served](const HttpRequest& req) {
    ++served;
    return EchoHandler(req);
  });
  std::atomic<int> ok{0};
  std::atomic<int> failed{0};
  std::vector<std::thread> threads;
  for (int c = 0; c < kClients; ++c) {
    threads.emplace_back([&, c] {
      auto client = HttpClient::Connect(c % 2 == 0 ? ts.unix_address() : ts.tcp_address());
      if (!client.ok()) {
        failed += kRequests;
        return;
      }
      for (int i = 0; i < kRequests; ++i) {
        std::string body = std::to_string(c) + "/" + std::to_string(i);
        auto resp = (*client)->Request("POST", "/load", body);
        if (resp.ok() && resp->status == 200 && resp->body == "POST /load " + body) {
          ++ok;
        } else {
          ++failed;
        }
      }
    });
  }
  for (std::thread& t : threads) t.join();
  EXPECT_EQ(failed.load(), 0);
  EXPECT_EQ(ok.load(), kClients * kRequests);
  EXPECT_EQ(served.load(), kClients * kRequests);
}

TEST(HttpLoadTest, StopIsPromptWithIdleConnectionsAndOpenStreams) {
  std::atomic<int> streaming{0};
  TestServer ts([&streaming](const HttpRequest& req) {
    if (req.path != "/watch") return EchoHandler(req);
    HttpResponse resp;
    resp.stream = [&streaming](ResponseStream& out) {
      ++streaming;
      while (!out.Closed()) {
        if (!out.Write("tick\n")) break;
        std::this_thread::sleep_for(milliseconds(20));
      }
      --streaming;
    };
    return resp;
  });
  std::vector<std::unique_ptr<HttpClient>> idle;
  for (int i = 0; i < 20; ++i) {
    auto client = HttpClient::Connect(i % 2 == 0 ? ts.unix_address() : ts.tcp_address());
    ASSERT_TRUE(client.ok());
    ASSERT_TRUE((*client)->Request("GET", "/").ok());
    idle.push_back(std::move(*client));
  }
  UniqueFd half = testing::RawConnectTcp(ts.server->port());  // a request that never finishes
  testing::RawSend(half.get(), "POST / HTTP/1.1\r\nContent-Length: 100\r\n\r\nabc");
  UniqueFd silent = testing::RawConnectUnix(ts.socket_path);  // connected, says nothing
  std::vector<std::thread> watchers;
  for (int i = 0; i < 5; ++i) {
    watchers.emplace_back([&ts] {
      auto client = HttpClient::Connect(ts.unix_address());
      if (!client.ok()) return;
      (void)(*client)->Stream("GET", "/watch", [](std::string_view) { return true; });
    });
  }
  auto wait_start = std::chrono::steady_clock::now();
  while (streaming < 5 && SecondsSince(wait_start) < 5)
    std::this_thread::sleep_for(milliseconds(5));
  ASSERT_EQ(streaming.load(), 5);
  auto start = std::chrono::steady_clock::now();
  ts.server->Stop();
  double took = SecondsSince(start);
  EXPECT_LT(took, 1.0);
  EXPECT_EQ(streaming.load(), 0);
  std::printf("[ info ] Stop() with 22 idle connections and 5 streams took %.1f ms\n", took * 1000);
  for (std::thread& t : watchers) t.join();  // their streams ended with the server
  auto after = idle[0]->Request("GET", "/");
  EXPECT_FALSE(after.ok());
}

// Byte strings that look more or less like HTTP, from a seed.
std::string GarbageRequest(uint32_t seed) {
  std::mt19937 rng(seed);
  auto pick = [&rng](size_t n) { return static_cast<size_t>(rng() % n); };
  static const char* kTemplates[] = {
      "GET /v1/jobs?user=alice&x=%41 HTTP/1.1\r\nHost: h\r\nAccept: */*\r\n\r\n",
      "POST /v1/jobs HTTP/1.1\r\nContent-Length: 10\r\nContent-Type: x\r\n\r\n0123456789",
      "PUT /c HTTP/1.1\r\nTransfer-Encoding: chunked\r\n\r\n5\r\nhello\r\n0\r\n\r\n",
      "GET / HTTP/1.0\r\n\r\nGET / HTTP/1.1\r\nConnection: close\r\n\r\n",
  };
  static const char* kPieces[] = {"GET",
                                  " ",
                                  "/",
                                  "\r\n",
                                  ":",
                                  "Content-Length",
                                  "0",
                                  "ffffffffffff",
                                  "Transfer-Encoding",
                                  "chunked",
                                  "%",
                                  "%zz",
                                  "?",
                                  "&",
                                  "=",
                                  "HTTP/1.1",
                                  "\r\n\r\n",
                                  "\n",
                                  "\0",
                                  "99999999999999999999",
                                  "Expect: 100-continue",
                                  ";",
                                  "-1"};
  std::string out;
  switch (seed % 3) {
    case 0: {  // noise
      size_t n = pick(3000);
      for (size_t i = 0; i < n; ++i) out.push_back(static_cast<char>(rng()));
      break;
    }
    case 1: {  // a real request, mutated
      out = kTemplates[pick(std::size(kTemplates))];
      for (size_t m = 1 + pick(6); m > 0 && !out.empty(); --m) {
        size_t at = pick(out.size());
        switch (pick(4)) {
          case 0:
            out[at] = static_cast<char>(rng());
            break;
          case 1:
            out.insert(at, 1, static_cast<char>(rng()));
            break;
          case 2:
            out.erase(at, 1 + pick(8));
            break;
          default:
            out.insert(at, out.substr(at, pick(40)));
            break;
        }
      }
      break;
    }
    default: {  // HTTP-ish tokens in random order
      for (size_t n = pick(60); n > 0; --n) {
        const char* piece = kPieces[pick(std::size(kPieces))];
        out.append(piece, *piece == '\0' ? 1 : std::strlen(piece));
      }
      break;
    }
  }
  return out;
}

TEST(HttpLoadTest, GarbageNeverCrashesTheServer) {
  ServerOptions options;
  options.max_body_bytes = 4096;
  options.max_header_bytes = 2048;
  options.idle_timeout_s = 2;
  TestServer ts(EchoHandler, options);
  std::map<int, int> statuses;  // of the first response to each garbage request; 0: none
  for (uint32_t seed = 0; seed < 900; ++seed) {
    SCOPED_TRACE("seed " + std::to_string(seed));
    std::string request = GarbageRequest(seed);
    UniqueFd fd = seed % 2 == 0 ? testing::RawConnectUnix(ts.socket_path)
                                : testing::RawConnectTcp(ts.server->port());
    ASSERT_TRUE(fd.valid());
    std::string raw = testing::RawExchange(fd.get(), request, 3000);
    // Whatever came back is HTTP: a response per request answered, then the close.
    ++statuses[testing::StatusOf(raw)];
    if (!raw.empty()) {
      ASSERT_TRUE(raw.starts_with("HTTP/1.1 ")) << ::testing::PrintToString(raw.substr(0, 100));
    }
  }
  std::string tally;
  for (auto [status, count] : statuses) {
    tally += " " + std::to_string(status) + ":" + std::to_string(count);
  }
  std::printf("[ info ] garbage answered with (status:count):%s\n", tally.c_str());
  auto client = HttpClient::Connect(ts.tcp_address());
  ASSERT_TRUE(client.ok());
  auto resp = (*client)->Request("GET", "/alive");
  ASSERT_TRUE(resp.ok());
  EXPECT_EQ(resp->status, 200);
}

double MeasureRequestsPerSecond(const std::string& address, int threads, double seconds) {
  std::atomic<int64_t> done{0};
  std::atomic<bool> stop{false};
  std::vector<std::thread> workers;
  for (int t = 0; t < threads; ++t) {
    workers.emplace_back([&] {
      auto client = HttpClient::Connect(address);
      if (!client.ok()) return;
      while (!stop) {
        auto resp = (*client)->Request("GET", "/v1/ping");
        if (!resp.ok()) return;
        ++done;
      }
    });
  }
  auto start = std::chrono::steady_clock::now();
  std::this_thread::sleep_for(std::chrono::duration<double>(seconds));
  stop = true;
  for (std::thread& w : workers) w.join();
  return static_cast<double>(done.load()) / SecondsSince(start);
}

TEST(HttpLoadTest, ThroughputInfo) {
  TestServer ts([](const HttpRequest&) {
    HttpResponse resp;
    resp.body = "{\"ok\":true}";
    return resp;
  });
  for (int threads : {1, 4}) {
    double unix_rps = MeasureRequestsPerSecond(ts.unix_address(), threads, 1.0);
    double tcp_rps = MeasureRequestsPerSecond(ts.tcp_address(), threads, 1.0);
    std::printf("[ info ] %d client thread(s): %.0f req/s over unix, %.0f req/s over tcp\n",
                threads, unix_rps, tcp_rps);
  }
}

}  // namespace
}  // namespace berth::net
