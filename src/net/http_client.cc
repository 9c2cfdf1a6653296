// HttpClient: one non-blocking socket, kept alive across requests; every wait is a poll() with
// a deadline.
//
// Reuse: before a kept-alive connection is used it is checked for a close (or stray bytes) from
// the server, which is the common way for it to have gone stale (the server's idle timeout). If
// a request still fails on a reused connection before any byte of the response arrived, it is
// retried once on a fresh connection when that is safe: the request was not sent at all, or the
// method is idempotent.
#include <netdb.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <poll.h>
#include <sys/socket.h>
#include <sys/un.h>

#include <algorithm>
#include <atomic>
#include <cerrno>
#include <charconv>
#include <chrono>
#include <cstring>
#include <optional>
#include <thread>

#include "net/http.h"
#include "net/http_parse.h"
#include "net/socket_io.h"
#include "net/tls.h"

namespace berth::net {
namespace {

constexpr size_t kBufferBytes = 64 << 10;
constexpr size_t kMinRead = 16 << 10;
constexpr size_t kMaxResponseHead = 64 << 10;
constexpr uint64_t kMaxResponseBody = uint64_t{1} << 30;

enum class ReadResult { kOk, kClosed, kTimeout, kError };

// A deadline that, with idle_ms > 0, moves forward whenever data arrives.
struct Deadline {
  int64_t at = -1;  // SteadyNowMs() time; -1: none
  int64_t idle_ms = 0;
  void Touch() {
    if (idle_ms > 0) at = SteadyNowMs() + idle_ms;
  }
};

bool IsIdempotent(std::string_view method) {
  return method == "GET" || method == "HEAD" || method == "PUT" || method == "DELETE" ||
         method == "OPTIONS" || method == "TRACE";
}

bool ValidRequestLinePart(std::string_view s) {
  return !s.empty() && std::none_of(s.begin(), s.end(), [](char c) {
    auto u = static_cast<unsigned char>(c);
    return u <= 0x20 || u == 0x7f;
  });
}

Status ConnectFd(int fd, const sockaddr* addr, socklen_t len, int64_t deadline_ms) {
  for (;;) {
    if (::connect(fd, addr, len) == 0) return Status::Ok();
    if (errno == EINPROGRESS || errno == EINTR) break;  // completes in the background
    // A Unix socket whose backlog is full says EAGAIN and connects nothing: try again.
    if (errno != EAGAIN || SteadyNowMs() >= deadline_ms) {
      return Status::Unavailable(ErrnoMessage("connect", errno));
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(2));
  }
  pollfd p{fd, POLLOUT, 0};
  int64_t left = std::max<int64_t>(deadline_ms - SteadyNowMs(), 0);
  int n;
  while ((n = ::poll(&p, 1, static_cast<int>(left))) < 0 && errno == EINTR) {
  }
  if (n == 0) return Status::Unavailable("connect: timed out");
  int err = 0;
  socklen_t err_len = sizeof(err);
  if (n < 0 || ::getsockopt(fd, SOL_SOCKET, SO_ERROR, &err, &err_len) != 0) err = errno;
  if (err != 0) return Status::Unavailable(ErrnoMessage("connect", err));
  return Status::Ok();
}

}  // namespace

struct HttpClient::Impl {
  bool is_unix = false;
  std::string unix_path;
  std::string host;  // tcp
  std::string port;  // tcp
  std::string host_header;
  int timeout_ms = 30000;
  std::shared_ptr<const TlsClientContext> tls;  // "tls:" addresses
  std::vector<std::pair<std::string, std::string>> extra_headers;
  bool accept_upgrade = false;  // Begin returns a 101 head instead of waiting past it

  UniqueFd fd;                            // the socket, or the plaintext end of `channel`
  std::atomic<int> abort_fd{-1};          // fd, for Abort() from another thread
  std::optional<ResponseHead> open_head;  // OpenStream's, until ReadStream
  std::unique_ptr<TlsClientChannel> channel;
  int exchanges = 0;  // completed on fd: > 0 means fd is a reused connection
  ReadBuffer in{kBufferBytes};
  std::string out;

  Status Open(int64_t deadline_ms);
  void Close() {
    abort_fd = -1;
    if (channel) {
      fd.Release();  // the channel's plaintext end is the channel's to close
      channel.reset();
    } else {
      fd.Reset();
    }
    exchanges = 0;
    in.Clear();
  }
  // True when the server closed the idle connection (or sent something unasked).
  bool Stale() const;
  ReadResult ReadMore(const Deadline& deadline);
  // Sends a request and reads the response head into *resp. On failure, *retry says whether
  // the caller may retry on a fresh connection.
  Result<ResponseHead> Begin(std::string_view method, std::string_view target,
                             std::string_view body, std::string_view content_type,
                             int64_t deadline_ms, ClientResponse* resp, bool* retry);
  Result<ResponseHead> BeginWithRetry(std::string_view method, std::string_view target,
                                      std::string_view body, std::string_view content_type,
                                      int64_t deadline_ms, ClientResponse* resp);
  // Reads the body, passing it to on_data (a chunk at a time for chunked bodies). Returns false
  // in *complete when the body did not end (timeout or on_data returning false), after which
  // the connection is closed.
  Status ReadBody(const ResponseHead& head, Deadline deadline,
                  const std::function<bool(std::string_view)>& on_data, bool* complete);
  void Finish(const ResponseHead& head, bool complete);
};

Result<std::unique_ptr<HttpClient>> HttpClient::Connect(const std::string& address,
                                                        int timeout_ms) {
  ClientOptions options;
  options.timeout_ms = timeout_ms;
  return Connect(address, options);
}

void HttpClient::SetHeader(const std::string& name, const std::string& value) {
  for (auto& [n, v] : impl_->extra_headers) {
    if (n == name) {
      v = value;
      return;
    }
  }
  impl_->extra_headers.emplace_back(name, value);
}

Result<std::unique_ptr<HttpClient>> HttpClient::Connect(const std::string& address,
                                                        const ClientOptions& options) {
  std::unique_ptr<HttpClient> client(new HttpClient());
  client->impl_ = std::make_unique<Impl>();
  Impl& impl = *client->impl_;
  const int timeout_ms = options.timeout_ms;
  impl.timeout_ms = timeout_ms;
  if (!options.bearer_token.empty()) {
    if (!ValidRequestLinePart(options.bearer_token)) {
      return Status::InvalidArgument("a bearer token may not hold spaces or control characters");
    }
    impl.extra_headers.emplace_back("Authorization", "Bearer " + options.bearer_token);
  }
  std::string_view a = address;
  const bool tls = a.starts_with("tls:");
  if (a.starts_with("unix:") && a.size() > 5) {
    impl.is_unix = true;
    impl.unix_path = a.substr(5);
    impl.host_header = "localhost";
  } else if (a.starts_with("tcp:") || tls) {
    a.remove_prefix(4);
    size_t colon = a.rfind(':');
    std::string_view host = a.substr(0, colon);
    std::string_view port = colon == std::string_view::npos ? "" : a.substr(colon + 1);
    unsigned port_number = 0;
    auto [end, ec] = std::from_chars(port.data(), port.data() + port.size(), port_number);
    if (host.empty() || ec != std::errc() || end != port.data() + port.size() || port_number == 0 ||
        port_number > 65535) {
      return Status::InvalidArgument("bad address (want tcp:host:port or tls:host:port): " +
                                     address);
    }
    impl.host_header = std::string(a);
    if (host.size() > 2 && host.front() == '[' && host.back() == ']') {
      host = host.substr(1, host.size() - 2);
    }
    impl.host = host;
    impl.port = port;
    if (tls) {
      BERTH_ASSIGN_OR_RETURN(impl.tls,
                             TlsClientContext::Create(options.tls_ca_file, options.tls_cert_file,
                                                      options.tls_key_file));
    }
  } else {
    return Status::InvalidArgument(
        "bad address (want unix:/path, tcp:host:port or tls:host:port): " + address);
  }
  BERTH_RETURN_IF_ERROR(impl.Open(SteadyNowMs() + timeout_ms));
  return client;
}

HttpClient::~HttpClient() = default;

Status HttpClient::Impl::Open(int64_t deadline_ms) {
  Close();
  if (is_unix) {
    sockaddr_un addr{};
    addr.sun_family = AF_UNIX;
    if (unix_path.size() >= sizeof(addr.sun_path)) {
      return Status::InvalidArgument("unix socket path too long: " + unix_path);
    }
    std::memcpy(addr.sun_path, unix_path.data(), unix_path.size());
    fd.Reset(::socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC | SOCK_NONBLOCK, 0));
    if (!fd.valid()) return Status::Unavailable(ErrnoMessage("socket", errno));
    Status s = ConnectFd(fd.get(), reinterpret_cast<sockaddr*>(&addr), sizeof(addr), deadline_ms);
    if (!s.ok()) fd.Reset();
    if (s.ok()) abort_fd = fd.get();
    return s.WithContext(unix_path);
  }
  addrinfo hints{};
  hints.ai_family = AF_UNSPEC;
  hints.ai_socktype = SOCK_STREAM;
  hints.ai_flags = AI_NUMERICSERV;
  addrinfo* res = nullptr;
  int rc = ::getaddrinfo(host.c_str(), port.c_str(), &hints, &res);
  if (rc != 0) return Status::Unavailable("resolve " + host + ": " + ::gai_strerror(rc));
  Status s = Status::Unavailable("no address");
  for (addrinfo* ai = res; ai != nullptr; ai = ai->ai_next) {
    fd.Reset(::socket(ai->ai_family, ai->ai_socktype | SOCK_CLOEXEC | SOCK_NONBLOCK, 0));
    if (!fd.valid()) {
      s = Status::Unavailable(ErrnoMessage("socket", errno));
      continue;
    }
    s = ConnectFd(fd.get(), ai->ai_addr, ai->ai_addrlen, deadline_ms);
    if (s.ok()) break;
    fd.Reset();
  }
  ::freeaddrinfo(res);
  if (!s.ok()) return s.WithContext(host_header);
  int one = 1;
  ::setsockopt(fd.get(), IPPROTO_TCP, TCP_NODELAY, &one, sizeof(one));
  if (tls) {
    Result<std::unique_ptr<TlsClientChannel>> ch =
        TlsClientChannel::Open(tls, fd.Release(), host, deadline_ms);
    if (!ch.ok()) return ch.status().WithContext(host_header);
    channel = std::move(*ch);
    fd.Reset(channel->plain_fd());
  }
  abort_fd = fd.get();
  return Status::Ok();
}

bool HttpClient::Impl::Stale() const {
  pollfd p{fd.get(), POLLIN | POLLRDHUP, 0};
  return ::poll(&p, 1, 0) != 0;
}

ReadResult HttpClient::Impl::ReadMore(const Deadline& deadline) {
  char* p = in.PrepareWrite(kMinRead);
  for (;;) {
    // Wait first: right after a request the answer is rarely there yet, and a recv() that
    // says EAGAIN would be a wasted system call.
    if (!WaitReadable(fd.get(), deadline.at)) return ReadResult::kTimeout;
    ssize_t n = ::recv(fd.get(), p, in.writable_size(), 0);
    if (n > 0) {
      in.CommitWrite(static_cast<size_t>(n));
      return ReadResult::kOk;
    }
    if (n == 0) return ReadResult::kClosed;
    if (errno != EINTR && errno != EAGAIN && errno != EWOULDBLOCK) return ReadResult::kError;
  }
}

Result<ResponseHead> HttpClient::Impl::Begin(std::string_view method, std::string_view target,
                                             std::string_view body, std::string_view content_type,
                                             int64_t deadline_ms, ClientResponse* resp,
                                             bool* retry) {
  *retry = false;
  if (fd.valid() && Stale()) Close();
  if (!fd.valid()) BERTH_RETURN_IF_ERROR(Open(deadline_ms));
  bool reused = exchanges > 0;
  out.clear();
  out.append(method).append(" ").append(target).append(" HTTP/1.1\r\nHost: ");
  out.append(host_header).append("\r\n");
  for (const auto& [name, value] : extra_headers) {
    out.append(name).append(": ").append(value).append("\r\n");
  }
  if (!body.empty() || method == "POST" || method == "PUT" || method == "PATCH") {
    if (!body.empty() && !content_type.empty()) {
      out.append("Content-Type: ").append(content_type).append("\r\n");
    }
    out.append("Content-Length: ").append(std::to_string(body.size())).append("\r\n");
  }
  out.append("\r\n");
  iovec iov[2] = {{out.data(), out.size()}, {const_cast<char*>(body.data()), body.size()}};
  size_t sent = 0;
  if (!SendAll(fd.get(), iov, 2, deadline_ms, &sent)) {
    Status s = Status::Unavailable(ErrnoMessage("send", errno));
    Close();
    *retry = reused && (sent == 0 || IsIdempotent(method));
    return s;
  }
  Deadline deadline{deadline_ms, 0};
  for (;;) {
    ResponseHead head;
    ParseResult r = ParseResponseHead(in.view(), kMaxResponseHead, method == "HEAD", resp, &head);
    if (r == ParseResult::kOk && resp->status == 101 && accept_upgrade) {
      in.Consume(head.head_bytes);
      return head;
    }
    if (r == ParseResult::kOk && resp->status >= 100 && resp->status < 200) {
      in.Consume(head.head_bytes);  // "100 Continue" and friends: the real answer follows
      continue;
    }
    if (r == ParseResult::kOk) {
      in.Consume(head.head_bytes);
      return head;
    }
    if (r == ParseResult::kError) {
      Close();
      return Status::Internal("malformed HTTP response from " + host_header);
    }
    bool nothing_yet = in.empty();
    ReadResult rr = ReadMore(deadline);
    if (rr == ReadResult::kOk) continue;
    int err = errno;
    Close();
    *retry = reused && nothing_yet && rr != ReadResult::kTimeout && IsIdempotent(method);
    if (rr == ReadResult::kTimeout) return Status::Unavailable("timed out waiting for response");
    if (rr == ReadResult::kClosed) return Status::Unavailable("connection closed by server");
    return Status::Unavailable(ErrnoMessage("recv", err));
  }
}

Result<ResponseHead> HttpClient::Impl::BeginWithRetry(std::string_view method,
                                                      std::string_view target,
                                                      std::string_view body,
                                                      std::string_view content_type,
                                                      int64_t deadline_ms, ClientResponse* resp) {
  if (!ValidRequestLinePart(method) || !ValidRequestLinePart(target) ||
      content_type.find_first_of("\r\n") != std::string_view::npos) {
    return Status::InvalidArgument("bad method, target or content type");
  }
  bool retry = false;
  Result<ResponseHead> head = Begin(method, target, body, content_type, deadline_ms, resp, &retry);
  if (head.ok() || !retry) return head;
  return Begin(method, target, body, content_type, deadline_ms, resp, &retry);
}

Status HttpClient::Impl::ReadBody(const ResponseHead& head, Deadline deadline,
                                  const std::function<bool(std::string_view)>& on_data,
                                  bool* complete) {
  *complete = false;
  if (head.body == BodyKind::kLength && head.content_length > kMaxResponseBody) {
    return Status::ResourceExhausted("response body too large");
  }
  uint64_t left = head.content_length;
  for (;;) {
    if (head.body == BodyKind::kNone || (head.body == BodyKind::kLength && left == 0)) break;
    if (head.body == BodyKind::kChunked) {
      Chunk chunk;
      ParseResult r = ParseChunk(in.view(), kMaxResponseBody, kMaxResponseHead, &chunk);
      if (r == ParseResult::kError) return Status::Internal("malformed chunked response");
      if (r == ParseResult::kOk) {
        bool go_on = chunk.last || on_data(chunk.payload);
        in.Consume(chunk.consumed);
        if (chunk.last) break;
        if (!go_on) return Status::Ok();
        continue;
      }
    } else if (!in.empty()) {
      size_t n = head.body == BodyKind::kLength ? std::min<uint64_t>(left, in.size()) : in.size();
      bool go_on = on_data(in.view().substr(0, n));
      in.Consume(n);
      left -= std::min<uint64_t>(left, n);
      if (!go_on) return Status::Ok();
      continue;
    }
    ReadResult rr = ReadMore(deadline);
    if (rr == ReadResult::kTimeout) return Status::Ok();
    if (rr == ReadResult::kClosed && head.body == BodyKind::kUntilClose) break;
    if (rr != ReadResult::kOk) return Status::Unavailable("connection lost in response body");
    deadline.Touch();
  }
  *complete = true;
  return Status::Ok();
}

void HttpClient::Impl::Finish(const ResponseHead& head, bool complete) {
  // Bytes beyond the response would be read as the next one: not a connection to keep.
  if (complete && head.keep_alive && in.empty()) {
    ++exchanges;
    in.ShrinkIfEmpty(kBufferBytes);
  } else {
    Close();
  }
}

Result<ClientResponse> HttpClient::Request(const std::string& method, const std::string& target,
                                           const std::string& body,
                                           const std::string& content_type) {
  return RequestTo(method, target, body, content_type, nullptr);
}

Result<ClientResponse> HttpClient::RequestTo(const std::string& method, const std::string& target,
                                             const std::string& body,
                                             const std::string& content_type,
                                             const std::function<void(std::string_view)>& sink) {
  ClientResponse resp;
  Deadline deadline{SteadyNowMs() + impl_->timeout_ms, 0};
  BERTH_ASSIGN_OR_RETURN(
      ResponseHead head,
      impl_->BeginWithRetry(method, target, body, content_type, deadline.at, &resp));
  const bool to_sink = sink && resp.status >= 200 && resp.status < 300;
  if (head.body == BodyKind::kLength && !to_sink) {
    resp.body.reserve(std::min<uint64_t>(head.content_length, kMaxResponseBody));
  }
  bool complete = false;
  bool too_large = false;
  uint64_t read = 0;
  Status s = impl_->ReadBody(
      head, deadline,
      [&](std::string_view data) {
        read += data.size();
        too_large = read > kMaxResponseBody;
        if (too_large) return false;
        if (to_sink) {
          sink(data);
        } else {
          resp.body.append(data);
        }
        return true;
      },
      &complete);
  impl_->Finish(head, complete);
  if (!s.ok()) return s;
  if (too_large) return Status::ResourceExhausted("response body over 1 GiB");
  if (!complete) return Status::Unavailable("timed out reading the response body");
  return resp;
}

Result<int> HttpClient::Stream(const std::string& method, const std::string& target,
                               const std::function<bool(std::string_view)>& on_data,
                               int idle_timeout_ms) {
  BERTH_ASSIGN_OR_RETURN(ClientResponse head, OpenStream(method, target, "", ""));
  BERTH_RETURN_IF_ERROR(ReadStream(on_data, idle_timeout_ms));
  return head.status;
}

Result<ClientResponse> HttpClient::OpenStream(const std::string& method, const std::string& target,
                                              const std::string& body,
                                              const std::string& content_type) {
  impl_->open_head.reset();
  ClientResponse resp;
  BERTH_ASSIGN_OR_RETURN(ResponseHead head,
                         impl_->BeginWithRetry(method, target, body, content_type,
                                               SteadyNowMs() + impl_->timeout_ms, &resp));
  impl_->open_head = head;
  return resp;
}

Status HttpClient::ReadStream(const std::function<bool(std::string_view)>& on_data,
                              int idle_timeout_ms) {
  if (!impl_->open_head) return Status::FailedPrecondition("ReadStream without OpenStream");
  const ResponseHead head = *impl_->open_head;
  impl_->open_head.reset();
  Deadline deadline;
  deadline.idle_ms = idle_timeout_ms;
  deadline.Touch();
  bool complete = false;
  Status s = impl_->ReadBody(head, deadline, on_data, &complete);
  impl_->Finish(head, complete);
  return s;
}

void HttpClient::Abort() {
  const int fd = impl_->abort_fd.load();
  if (fd >= 0) ::shutdown(fd, SHUT_RDWR);
}

Result<ClientResponse> HttpClient::Upgrade(
    const std::string& target, const std::vector<std::pair<std::string, std::string>>& headers,
    int* fd, std::string* already_read, const std::string& method) {
  for (const auto& [name, value] : headers) {
    if (!ValidRequestLinePart(name) || value.find_first_of("\r\n") != std::string::npos) {
      return Status::InvalidArgument("bad header: " + name);
    }
  }
  auto saved = impl_->extra_headers;
  impl_->extra_headers.insert(impl_->extra_headers.end(), headers.begin(), headers.end());
  impl_->extra_headers.emplace_back("Connection", "Upgrade");
  impl_->accept_upgrade = true;
  ClientResponse resp;
  Deadline deadline{SteadyNowMs() + impl_->timeout_ms, 0};
  Result<ResponseHead> head = impl_->BeginWithRetry(method, target, "", "", deadline.at, &resp);
  impl_->extra_headers = std::move(saved);
  impl_->accept_upgrade = false;
  if (!head.ok()) return head.status();
  if (resp.status == 101) {
    *fd = impl_->fd.get();
    already_read->assign(impl_->in.view());
    impl_->in.Clear();
    return resp;
  }
  bool complete = false;
  Status s = impl_->ReadBody(
      *head, deadline,
      [&resp](std::string_view data) {
        if (resp.body.size() + data.size() > (1u << 20)) return false;
        resp.body.append(data);
        return true;
      },
      &complete);
  impl_->Finish(*head, complete);
  if (!s.ok()) return s;
  return resp;
}

}  // namespace berth::net
