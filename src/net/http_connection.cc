#include "net/http_connection.h"

#include <arpa/inet.h>
#include <malloc.h>
#include <netinet/in.h>
#include <poll.h>
#include <sys/socket.h>

#include <algorithm>
#include <cerrno>
#include <charconv>

#include "common/release_pages.h"

namespace berth::net {
namespace {

constexpr size_t kBufferBytes = 64 << 10;
constexpr size_t kMinRead = 16 << 10;
// How long a connection that served a large request (a body over kBufferBytes: a batch of jobs
// is megabytes) keeps that request's memory for the next one to come before it gives it back.
// Requests that follow one another are read into memory already there, where a fresh block
// costs a fault per page (on a virtual machine a ~15 us trap each: 600 of them for the 2.4 MB of
// 1,000 jobs with sbatch's environment); an idle connection holds no more than a small one.
constexpr int kLargeRequestKeepMs = 100;
// LingeringClose() drops at most this much, for at most this long.
constexpr size_t kLingerBytes = 1 << 20;
constexpr int64_t kLingerMs = 1000;

void AppendNumber(std::string* out, uint64_t v, int base = 10) {
  char buf[24];
  auto [end, ec] = std::to_chars(buf, buf + sizeof(buf), v, base);
  out->append(buf, end);
}

bool IsFramingHeader(std::string_view name) {
  static constexpr std::string_view kNames[] = {"content-length", "transfer-encoding",
                                                "connection"};
  for (std::string_view n : kNames) {
    if (n.size() == name.size() && std::equal(n.begin(), n.end(), name.begin(), [](char a, char b) {
          return a == (b >= 'A' && b <= 'Z' ? static_cast<char>(b - 'A' + 'a') : b);
        })) {
      return true;
    }
  }
  return false;
}

// A handler's header that would break the framing or split the response is dropped.
bool HeaderAllowed(const std::pair<std::string, std::string>& h) {
  auto bad = [](char c) { return c == '\r' || c == '\n' || c == '\0'; };
  return !h.first.empty() && h.first.find_first_of(" \t:") == std::string::npos &&
         std::none_of(h.first.begin(), h.first.end(), bad) &&
         std::none_of(h.second.begin(), h.second.end(), bad) && !IsFramingHeader(h.first);
}

bool PeerClosed(int fd) {
  pollfd p{fd, POLLRDHUP, 0};
  return ::poll(&p, 1, 0) > 0 && (p.revents & (POLLRDHUP | POLLHUP | POLLERR)) != 0;
}

bool SendBytes(int fd, std::string_view data) {
  iovec iov{const_cast<char*>(data.data()), data.size()};
  return SendAll(fd, &iov, 1, 0);
}

// Writes each Write() as one chunk, at once (HTTP/1.0 peers get the raw bytes instead).
class ChunkWriter final : public ResponseStream {
 public:
  ChunkWriter(int fd, bool chunked, const std::atomic<bool>& stopping)
      : fd_(fd), chunked_(chunked), stopping_(stopping) {}

  bool Write(std::string_view data) override {
    if (failed_) return false;
    if (data.empty()) return true;  // an empty chunk would end the body
    char size_line[24];
    auto [end, ec] = std::to_chars(size_line, size_line + 16, data.size(), 16);
    *end++ = '\r';
    *end++ = '\n';
    static constexpr char kCrlf[] = "\r\n";
    iovec iov[3] = {{size_line, static_cast<size_t>(end - size_line)},
                    {const_cast<char*>(data.data()), data.size()},
                    {const_cast<char*>(kCrlf), 2}};
    bool ok = chunked_ ? SendAll(fd_, iov, 3, 0) : SendAll(fd_, &iov[1], 1, 0);
    if (!ok) failed_ = true;
    return ok;
  }

  bool Closed() const override { return failed_ || stopping_ || PeerClosed(fd_); }

  bool failed() const { return failed_; }

 private:
  const int fd_;
  const bool chunked_;
  const std::atomic<bool>& stopping_;
  bool failed_ = false;
};

}  // namespace

HttpConnection::HttpConnection(int fd, bool is_unix, const HttpHandler& handler,
                               const ServerOptions& options, const std::atomic<bool>& stopping)
    : fd_(fd),
      is_unix_(is_unix),
      handler_(handler),
      options_(options),
      stopping_(stopping),
      in_(kBufferBytes) {}

void HttpConnection::Serve() {
  FillPeer();
  ServeRequests();
  // The thread ends, its arena goes to the next thread: a large request's memory goes back first.
  if (request_.body.capacity() > kBufferBytes) ReleaseLargeRequest();
}

void HttpConnection::ServeRequests() {
  while (!stopping_) {
    RequestHead head;
    int error = 0;
    ParseResult r;
    while ((r = ParseRequestHead(in_.view(), options_.max_header_bytes, &request_, &head,
                                 &error)) == ParseResult::kIncomplete) {
      if (!ReadMore(kMinRead)) return;
    }
    if (r == ParseResult::kError) return SendError(error);
    in_.Consume(head.head_bytes);
    int body = ReadBody(head);
    if (body < 0) return;
    if (body > 0) return SendError(body);
    bool keep_alive = head.keep_alive && !stopping_;
    head.keep_alive = keep_alive;
    if (!Respond(head)) return;
    if (!keep_alive) return LingeringClose();
    in_.ShrinkIfEmpty(kBufferBytes);
    if (request_.body.capacity() > kBufferBytes && in_.empty() && !NextRequestComes()) {
      ReleaseLargeRequest();
    }
  }
}

bool HttpConnection::NextRequestComes() {
  pollfd p{fd_, POLLIN, 0};
  for (;;) {
    const int n = ::poll(&p, 1, kLargeRequestKeepMs);
    if (n >= 0) return n > 0;  // readable, closed or failed: the next read says which
    if (errno != EINTR) return false;
  }
}

void HttpConnection::ReleaseLargeRequest() {
  // The body's block: its pages dropped before it is freed, since a thread arena's top, where
  // such a block ends, is what malloc_trim leaves (common/release_pages.h).
  ReleasePagesOf(request_.body);
  std::string().swap(request_.body);
  // And what the handler freed of that request in this thread's arena (a decoded batch of jobs):
  // no other thread reuses it.
  malloc_trim(0);
}

bool HttpConnection::ReadMore(size_t min_free) {
  char* p = in_.PrepareWrite(min_free);
  for (;;) {
    ssize_t n = ::recv(fd_, p, in_.writable_size(), 0);
    if (n > 0) {
      in_.CommitWrite(static_cast<size_t>(n));
      return true;
    }
    if (n < 0 && errno == EINTR) continue;
    return false;  // EOF, SO_RCVTIMEO expiry (EAGAIN), reset, or shutdown by Stop()
  }
}

int HttpConnection::ReadBody(const RequestHead& head) {
  request_.body.clear();
  if (head.body == BodyKind::kChunked) return ReadChunkedBody(head.expect_continue);
  if (head.body != BodyKind::kLength) return 0;
  if (head.content_length > options_.max_body_bytes) return 413;
  size_t length = head.content_length;
  size_t have = std::min(length, in_.size());
  if (have < length && head.expect_continue && !SendContinue()) return -1;
  request_.body.assign(in_.view().substr(0, have));
  in_.Consume(have);
  // The rest goes straight into the body, so the read buffer never grows to the body's size
  // and no byte of a following pipelined request is read here.
  request_.body.resize(length);
  while (have < length) {
    ssize_t n = ::recv(fd_, request_.body.data() + have, length - have, 0);
    if (n > 0) {
      have += static_cast<size_t>(n);
    } else if (n == 0 || errno != EINTR) {
      return -1;
    }
  }
  return 0;
}

int HttpConnection::ReadChunkedBody(bool expect_continue) {
  if (expect_continue && in_.empty() && !SendContinue()) return -1;
  for (;;) {
    Chunk chunk;
    uint64_t room = options_.max_body_bytes - request_.body.size();
    ParseResult r = ParseChunk(in_.view(), room, options_.max_header_bytes, &chunk);
    if (r == ParseResult::kIncomplete) {
      if (!ReadMore(kMinRead)) return -1;
      continue;
    }
    if (r == ParseResult::kError) return chunk.too_large ? 413 : 400;
    request_.body.append(chunk.payload);
    in_.Consume(chunk.consumed);
    if (chunk.last) return 0;
  }
}

bool HttpConnection::SendContinue() {
  return SendBytes(fd_, "HTTP/1.1 100 Continue\r\n\r\n");
}

bool HttpConnection::Respond(const RequestHead& head) {
  HttpResponse response;
  try {
    response = handler_(request_);
  } catch (...) {  // a handler bug must not take the server down
    response = HttpResponse{};
    response.status = 500;
    response.content_type = "text/plain";
    response.body = "internal server error\n";
  }
  if (response.upgrade && response.status == 101) return SendUpgrade(response);
  // 1xx would confuse the client's framing, and the status line has three digits.
  int status = response.status < 200 || response.status > 999 ? 500 : response.status;
  bool head_only = request_.method == "HEAD";
  if (response.stream) {
    return SendStreamed(response, status, head_only, head.keep_alive, head.http11);
  }
  return SendWhole(response, status, head_only, head.keep_alive);
}

bool HttpConnection::SendWhole(const HttpResponse& response, int status, bool head_only,
                               bool keep_alive) {
  bool body_allowed = status != 204 && status != 304;
  BuildHead(response, status, keep_alive, false,
            body_allowed ? static_cast<int64_t>(response.body.size()) : -1);
  size_t body_bytes = head_only || !body_allowed ? 0 : response.body.size();
  iovec iov[2] = {{out_.data(), out_.size()},
                  {const_cast<char*>(response.body.data()), body_bytes}};
  return SendAll(fd_, iov, 2, 0);
}

bool HttpConnection::SendStreamed(const HttpResponse& response, int status, bool head_only,
                                  bool keep_alive, bool chunked) {
  keep_alive = keep_alive && chunked;  // without chunks the end of the body is the close
  BuildHead(response, status, keep_alive, chunked, -1);
  if (!SendBytes(fd_, out_)) return false;
  if (head_only) return true;
  ChunkWriter writer(fd_, chunked, stopping_);
  try {
    response.stream(writer);
  } catch (...) {  // the head is out: all we can do is cut the connection
    return false;
  }
  if (writer.failed()) return false;
  return chunked && SendBytes(fd_, "0\r\n\r\n");
}

bool HttpConnection::SendUpgrade(const HttpResponse& response) {
  out_ = "HTTP/1.1 101 Switching Protocols\r\nConnection: Upgrade\r\n";
  for (const auto& header : response.headers) {
    if (!HeaderAllowed(header)) continue;
    out_ += header.first;
    out_ += ": ";
    out_ += header.second;
    out_ += "\r\n";
  }
  out_ += "\r\n";
  if (!SendBytes(fd_, out_)) return false;
  UpgradedConnection connection;
  connection.fd = fd_;
  connection.already_read.assign(in_.view());
  connection.stopping = &stopping_;
  in_.Clear();
  try {
    response.upgrade(connection);
  } catch (...) {  // the connection is the upgrade's: all we can do is cut it
  }
  return false;  // never HTTP again: close
}

void HttpConnection::BuildHead(const HttpResponse& response, int status, bool keep_alive,
                               bool chunked, int64_t length) {
  out_.clear();
  out_ += "HTTP/1.1 ";
  AppendNumber(&out_, static_cast<uint64_t>(status));
  out_ += ' ';
  out_ += ReasonPhrase(status);
  out_ += "\r\n";
  if (!response.content_type.empty() && status != 204 && status != 304 &&
      response.content_type.find_first_of("\r\n") == std::string::npos) {
    out_ += "Content-Type: ";
    out_ += response.content_type;
    out_ += "\r\n";
  }
  if (chunked) out_ += "Transfer-Encoding: chunked\r\n";
  if (length >= 0) {
    out_ += "Content-Length: ";
    AppendNumber(&out_, static_cast<uint64_t>(length));
    out_ += "\r\n";
  }
  out_ += keep_alive ? "Connection: keep-alive\r\n" : "Connection: close\r\n";
  for (const auto& header : response.headers) {
    if (!HeaderAllowed(header)) continue;
    out_ += header.first;
    out_ += ": ";
    out_ += header.second;
    out_ += "\r\n";
  }
  out_ += "\r\n";
}

void HttpConnection::SendError(int status) {
  HttpResponse response;
  response.content_type = "text/plain";
  response.body = std::string(ReasonPhrase(status)) + "\n";
  BuildHead(response, status, false, false, static_cast<int64_t>(response.body.size()));
  out_ += response.body;
  if (SendBytes(fd_, out_)) LingeringClose();
}

void HttpConnection::LingeringClose() {
  if (stopping_ || ::shutdown(fd_, SHUT_WR) != 0) return;
  int64_t deadline = SteadyNowMs() + kLingerMs;
  size_t dropped = 0;
  while (dropped < kLingerBytes && WaitReadable(fd_, deadline)) {
    char* p = in_.PrepareWrite(kMinRead);
    ssize_t n = ::recv(fd_, p, in_.writable_size(), MSG_DONTWAIT);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) return;
    dropped += static_cast<size_t>(n);
  }
}

void HttpConnection::FillPeer() {
  request_.peer.reset();
  if (is_unix_) {
    request_.remote = "unix";
    ucred cred{};
    socklen_t len = sizeof(cred);
    if (::getsockopt(fd_, SOL_SOCKET, SO_PEERCRED, &cred, &len) == 0) {
      request_.peer = PeerCredentials{cred.pid, cred.uid, cred.gid};
    }
    return;
  }
  sockaddr_storage addr{};
  socklen_t len = sizeof(addr);
  if (::getpeername(fd_, reinterpret_cast<sockaddr*>(&addr), &len) != 0) return;
  char ip[INET6_ADDRSTRLEN] = {};
  uint16_t port = 0;
  if (addr.ss_family == AF_INET6) {
    auto* a6 = reinterpret_cast<sockaddr_in6*>(&addr);
    ::inet_ntop(AF_INET6, &a6->sin6_addr, ip, sizeof(ip));
    port = ntohs(a6->sin6_port);
    request_.remote = std::string("[") + ip + "]:" + std::to_string(port);
  } else {
    auto* a4 = reinterpret_cast<sockaddr_in*>(&addr);
    ::inet_ntop(AF_INET, &a4->sin_addr, ip, sizeof(ip));
    port = ntohs(a4->sin_port);
    request_.remote = std::string(ip) + ":" + std::to_string(port);
  }
}

}  // namespace berth::net
