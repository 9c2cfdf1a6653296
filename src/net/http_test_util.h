// Helpers for the net tests: temporary socket paths, raw sockets for speaking (bad) HTTP by hand,
// and a server fixture. Test-only; header-only so that it stays out of berth_net.
#ifndef BERTH_NET_HTTP_TEST_UTIL_H_
#define BERTH_NET_HTTP_TEST_UTIL_H_

#include <gtest/gtest.h>
#include <netinet/in.h>
#include <poll.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <unistd.h>

#include <chrono>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <memory>
#include <string>
#include <string_view>

#include "net/http.h"
#include "net/socket_io.h"

namespace berth::net::testing {

// A fresh directory under /tmp (short, for sun_path), removed with its contents on destruction.
class TempDir {
 public:
  TempDir() {
    char tmpl[] = "/tmp/berth-net-XXXXXX";
    char* dir = ::mkdtemp(tmpl);
    EXPECT_NE(dir, nullptr);
    path_ = dir != nullptr ? dir : "/tmp";
  }
  ~TempDir() {
    std::error_code ec;
    std::filesystem::remove_all(path_, ec);
  }
  const std::string& path() const { return path_; }
  std::string File(std::string_view name) const { return path_ + "/" + std::string(name); }

 private:
  std::string path_;
};

// Connects a blocking socket to 127.0.0.1:port or to a Unix socket path; invalid on failure.
inline UniqueFd RawConnectTcp(uint16_t port) {
  UniqueFd fd(::socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0));
  sockaddr_in addr{};
  addr.sin_family = AF_INET;
  addr.sin_port = htons(port);
  addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  if (::connect(fd.get(), reinterpret_cast<sockaddr*>(&addr), sizeof(addr)) != 0) fd.Reset();
  return fd;
}

inline UniqueFd RawConnectUnix(const std::string& path) {
  UniqueFd fd(::socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0));
  sockaddr_un addr{};
  addr.sun_family = AF_UNIX;
  std::memcpy(addr.sun_path, path.data(), std::min(path.size(), sizeof(addr.sun_path) - 1));
  if (::connect(fd.get(), reinterpret_cast<sockaddr*>(&addr), sizeof(addr)) != 0) fd.Reset();
  return fd;
}

inline bool RawSend(int fd, std::string_view data) {
  iovec iov{const_cast<char*>(data.data()), data.size()};
  return SendAll(fd, &iov, 1, 0);
}

// Reads until the peer closes or `timeout_ms` passes with nothing new.
inline std::string RawReadAll(int fd, int timeout_ms = 2000) {
  std::string out;
  char buf[16384];
  for (;;) {
    pollfd p{fd, POLLIN, 0};
    if (::poll(&p, 1, timeout_ms) <= 0) break;
    ssize_t n = ::recv(fd, buf, sizeof(buf), 0);
    if (n <= 0) break;
    out.append(buf, static_cast<size_t>(n));
  }
  return out;
}

// Reads until `out` contains `marker` (or close/timeout); returns everything read.
inline std::string RawReadUntil(int fd, std::string_view marker, int timeout_ms = 2000) {
  std::string out;
  char buf[4096];
  while (out.find(marker) == std::string::npos) {
    pollfd p{fd, POLLIN, 0};
    if (::poll(&p, 1, timeout_ms) <= 0) break;
    ssize_t n = ::recv(fd, buf, sizeof(buf), 0);
    if (n <= 0) break;
    out.append(buf, static_cast<size_t>(n));
  }
  return out;
}

// Sends `request`, half-closes, and returns everything the server answers until it closes.
inline std::string RawExchange(int fd, std::string_view request, int timeout_ms = 2000) {
  RawSend(fd, request);
  ::shutdown(fd, SHUT_WR);
  return RawReadAll(fd, timeout_ms);
}

// The status code of the first response in `raw`, or 0.
inline int StatusOf(std::string_view raw) {
  if (raw.size() < 12 || raw.substr(0, 9) != "HTTP/1.1 ") return 0;
  return std::atoi(std::string(raw.substr(9, 3)).c_str());
}

inline size_t CountOccurrences(std::string_view haystack, std::string_view needle) {
  size_t count = 0;
  for (size_t pos = haystack.find(needle); pos != std::string_view::npos;
       pos = haystack.find(needle, pos + needle.size())) {
    ++count;
  }
  return count;
}

// A handler that answers "<METHOD> <path> <body>" with a few request details in headers.
inline HttpResponse EchoHandler(const HttpRequest& req) {
  HttpResponse resp;
  resp.content_type = "text/plain";
  resp.body = req.method + " " + req.path + " " + req.body;
  resp.headers.emplace_back("X-Remote", req.remote);
  return resp;
}

// A server on 127.0.0.1 with an ephemeral port and a Unix socket in a temp dir.
struct TestServer {
  explicit TestServer(HttpHandler handler, ServerOptions options = {})
      : server(std::make_unique<HttpServer>(std::move(handler), options)),
        socket_path(dir.File("http.sock")) {
    EXPECT_TRUE(server->ListenTcp("127.0.0.1", 0).ok());
    EXPECT_TRUE(server->ListenUnix(socket_path).ok());
    EXPECT_TRUE(server->Start().ok());
  }
  std::string tcp_address() const { return "tcp:127.0.0.1:" + std::to_string(server->port()); }
  std::string unix_address() const { return "unix:" + socket_path; }

  TempDir dir;
  std::unique_ptr<HttpServer> server;
  std::string socket_path;
};

inline double SecondsSince(std::chrono::steady_clock::time_point start) {
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
}

}  // namespace berth::net::testing

#endif  // BERTH_NET_HTTP_TEST_UTIL_H_
