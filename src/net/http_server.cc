// HttpServer: one accept thread polling the listening sockets and a self-pipe, and one thread
// per connection (two for a TLS connection: the HTTP side and RelayTls, see tls.h).
//
// Concurrency: `mu` guards `conns` and `finished`. A connection thread is registered in `conns`
// (under `mu`) before it can run, closes its socket and moves itself to `finished` under `mu`,
// so Stop() can shutdown() every socket still in `conns` without racing a close (and a reuse of
// the descriptor number). The accept loop joins `finished` threads as it goes; Stop() joins the
// accept thread, shuts every connection down (which wakes any recv/send), waits for `conns` to
// drain and joins the rest. Handlers run outside `mu`. The members `mu` guards say so
// (GUARDED_BY, checked by scripts/check-thread-safety).
#include <arpa/inet.h>
#include <fcntl.h>
#include <netdb.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <poll.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <unistd.h>

#include <cerrno>
#include <condition_variable>
#include <cstring>
#include <unordered_map>
#include <utility>

#include "common/thread_annotations.h"
#include "net/http.h"
#include "net/http_connection.h"
#include "net/socket_io.h"
#include "net/tls.h"

namespace berth::net {
namespace {

// Larger than any default somaxconn, which caps it.
constexpr int kListenBacklog = 4096;
// How often the accept loop wakes without events to join finished connection threads.
constexpr int kReapIntervalMs = 500;
constexpr std::string_view kBusyResponse =
    "HTTP/1.1 503 Service Unavailable\r\nContent-Length: 0\r\nConnection: close\r\n\r\n";

struct Listener {
  UniqueFd fd;
  bool is_unix = false;
  std::string unix_path;  // removed at Stop() if it is still the socket we made
  dev_t dev = 0;
  ino_t ino = 0;
  std::shared_ptr<const TlsServerContext> tls;  // set for ListenTls listeners
};

void SetTimeout(int fd, int option, int seconds) {
  timeval tv{};
  tv.tv_sec = seconds;
  ::setsockopt(fd, SOL_SOCKET, option, &tv, sizeof(tv));
}

}  // namespace

struct HttpServer::Impl {
  struct Conn {
    int fd = -1;
    std::thread thread;
  };

  HttpHandler handler;
  ServerOptions options;
  std::vector<Listener> listeners;
  UniqueFd wake_read;  // the self-pipe: Stop() writes a byte to wake the accept loop
  UniqueFd wake_write;
  std::thread accept_thread;
  std::atomic<bool> stopping{false};
  bool started = false;
  bool stopped = false;

  Mutex mu;
  std::condition_variable conns_drained;  // waits on mu.native() (UniqueLock::get())
  std::unordered_map<uint64_t, Conn> conns GUARDED_BY(mu);
  std::vector<std::thread> finished GUARDED_BY(mu);
  uint64_t next_id = 0;  // accept thread only

  void AcceptLoop();
  // Accepts what is pending on one listener. Returns false on EMFILE-like exhaustion.
  bool AcceptPending(const Listener& listener);
  void StartConnection(int fd, bool is_unix, std::shared_ptr<const TlsServerContext> tls)
      EXCLUDES(mu);
  void ConnectionMain(uint64_t id, int fd, bool is_unix,
                      const std::shared_ptr<const TlsServerContext>& tls) EXCLUDES(mu);
  // A TLS connection: HTTP is served on one end of a socketpair, RelayTls runs the other.
  void ServeTls(int fd, const TlsServerContext& tls);
  void JoinFinished() EXCLUDES(mu);
  void Shutdown() EXCLUDES(mu);
};

HttpServer::HttpServer(HttpHandler handler, ServerOptions options)
    : impl_(std::make_unique<Impl>()) {
  impl_->handler = std::move(handler);
  impl_->options = options;
}

HttpServer::~HttpServer() {
  Stop();
}

Status HttpServer::ListenUnix(const std::string& path, uint32_t mode) {
  if (impl_->started) return Status::FailedPrecondition("ListenUnix after Start");
  sockaddr_un addr{};
  addr.sun_family = AF_UNIX;
  if (path.empty() || path.size() >= sizeof(addr.sun_path)) {
    return Status::InvalidArgument("unix socket path empty or too long: " + path);
  }
  std::memcpy(addr.sun_path, path.data(), path.size());
  struct stat st {};
  if (::lstat(path.c_str(), &st) == 0) {
    if (!S_ISSOCK(st.st_mode)) {
      return Status::FailedPrecondition(path + " exists and is not a socket");
    }
    if (::unlink(path.c_str()) != 0 && errno != ENOENT) {
      return Status::Unavailable(ErrnoMessage("unlink " + path, errno));
    }
  }
  Listener l;
  l.fd.Reset(::socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC | SOCK_NONBLOCK, 0));
  if (!l.fd.valid()) return Status::Unavailable(ErrnoMessage("socket", errno));
  if (::bind(l.fd.get(), reinterpret_cast<sockaddr*>(&addr), sizeof(addr)) != 0) {
    return Status::Unavailable(ErrnoMessage("bind " + path, errno));
  }
  if (::chmod(path.c_str(), static_cast<mode_t>(mode)) != 0 || ::lstat(path.c_str(), &st) != 0) {
    Status s = Status::Unavailable(ErrnoMessage("chmod " + path, errno));
    ::unlink(path.c_str());
    return s;
  }
  if (::listen(l.fd.get(), kListenBacklog) != 0) {
    Status s = Status::Unavailable(ErrnoMessage("listen " + path, errno));
    ::unlink(path.c_str());
    return s;
  }
  l.is_unix = true;
  l.unix_path = path;
  l.dev = st.st_dev;
  l.ino = st.st_ino;
  impl_->listeners.push_back(std::move(l));
  return Status::Ok();
}

Status HttpServer::ListenTcp(const std::string& host, uint16_t port) {
  if (impl_->started) return Status::FailedPrecondition("ListenTcp after Start");
  addrinfo hints{};
  hints.ai_family = AF_UNSPEC;
  hints.ai_socktype = SOCK_STREAM;
  hints.ai_flags = AI_PASSIVE | AI_NUMERICSERV;
  addrinfo* res = nullptr;
  std::string port_text = std::to_string(port);
  int rc = ::getaddrinfo(host.empty() ? nullptr : host.c_str(), port_text.c_str(), &hints, &res);
  if (rc != 0) {
    return Status::InvalidArgument("resolve " + host + ": " + ::gai_strerror(rc));
  }
  Status last = Status::Unavailable("no address for " + host);
  for (addrinfo* ai = res; ai != nullptr; ai = ai->ai_next) {
    UniqueFd fd(::socket(ai->ai_family, ai->ai_socktype | SOCK_CLOEXEC | SOCK_NONBLOCK, 0));
    if (!fd.valid()) {
      last = Status::Unavailable(ErrnoMessage("socket", errno));
      continue;
    }
    int one = 1;
    ::setsockopt(fd.get(), SOL_SOCKET, SO_REUSEADDR, &one, sizeof(one));
    ::setsockopt(fd.get(), IPPROTO_TCP, TCP_NODELAY, &one, sizeof(one));
    if (::bind(fd.get(), ai->ai_addr, ai->ai_addrlen) != 0 ||
        ::listen(fd.get(), kListenBacklog) != 0) {
      last = Status::Unavailable(ErrnoMessage("bind/listen " + host + ":" + port_text, errno));
      continue;
    }
    sockaddr_storage bound{};
    socklen_t len = sizeof(bound);
    ::getsockname(fd.get(), reinterpret_cast<sockaddr*>(&bound), &len);
    port_ = ntohs(bound.ss_family == AF_INET6 ? reinterpret_cast<sockaddr_in6*>(&bound)->sin6_port
                                              : reinterpret_cast<sockaddr_in*>(&bound)->sin_port);
    Listener l;
    l.fd = std::move(fd);
    impl_->listeners.push_back(std::move(l));
    ::freeaddrinfo(res);
    return Status::Ok();
  }
  ::freeaddrinfo(res);
  return last;
}

Status HttpServer::ListenTls(const std::string& host, uint16_t port,
                             const std::string& cert_pem_path, const std::string& key_pem_path) {
  if (impl_->started) return Status::FailedPrecondition("ListenTls after Start");
  BERTH_ASSIGN_OR_RETURN(std::shared_ptr<TlsServerContext> tls,
                         TlsServerContext::Create(cert_pem_path, key_pem_path));
  BERTH_RETURN_IF_ERROR(ListenTcp(host, port));
  impl_->listeners.back().tls = std::move(tls);
  return Status::Ok();
}

Status HttpServer::Start() {
  if (impl_->listeners.empty()) return Status::FailedPrecondition("Start before Listen");
  if (impl_->started) return Status::FailedPrecondition("Start called twice");
  int pipe_fds[2];
  if (::pipe2(pipe_fds, O_CLOEXEC | O_NONBLOCK) != 0) {
    return Status::Unavailable(ErrnoMessage("pipe2", errno));
  }
  impl_->wake_read.Reset(pipe_fds[0]);
  impl_->wake_write.Reset(pipe_fds[1]);
  impl_->started = true;
  impl_->accept_thread = std::thread([impl = impl_.get()] { impl->AcceptLoop(); });
  return Status::Ok();
}

void HttpServer::Stop() {
  if (impl_ != nullptr) impl_->Shutdown();
}

void HttpServer::Impl::Shutdown() {
  if (stopped) return;
  stopped = true;
  stopping = true;
  if (started) {
    char byte = 1;
    [[maybe_unused]] ssize_t n = ::write(wake_write.get(), &byte, 1);
    accept_thread.join();
    std::vector<std::thread> done;
    {
      UniqueLock lock(mu);
      for (auto& [id, conn] : conns) ::shutdown(conn.fd, SHUT_RDWR);
      conns_drained.wait(lock.get(), [this]() REQUIRES(mu) { return conns.empty(); });
      done = std::move(finished);
      finished.clear();
    }
    for (std::thread& t : done) t.join();
  }
  for (Listener& l : listeners) {
    struct stat st {};
    if (l.is_unix && ::lstat(l.unix_path.c_str(), &st) == 0 && st.st_dev == l.dev &&
        st.st_ino == l.ino) {
      ::unlink(l.unix_path.c_str());
    }
    l.fd.Reset();
  }
}

void HttpServer::Impl::AcceptLoop() {
  std::vector<pollfd> fds;
  for (const Listener& l : listeners) fds.push_back({l.fd.get(), POLLIN, 0});
  fds.push_back({wake_read.get(), POLLIN, 0});
  int timeout = kReapIntervalMs;
  while (!stopping) {
    int n = ::poll(fds.data(), fds.size(), timeout);
    JoinFinished();
    if (stopping) break;
    timeout = kReapIntervalMs;
    if (n <= 0) continue;
    for (size_t i = 0; i < listeners.size(); ++i) {
      if (fds[i].revents == 0) continue;
      // Out of descriptors: the pending connection stays queued and poll() would spin on it;
      // back off and let connections finish.
      if (!AcceptPending(listeners[i])) timeout = 50;
    }
  }
}

bool HttpServer::Impl::AcceptPending(const Listener& listener) {
  for (int i = 0; i < 64; ++i) {  // bounded, so that one busy listener cannot starve another
    int fd = ::accept4(listener.fd.get(), nullptr, nullptr, SOCK_CLOEXEC);
    if (fd < 0) {
      if (errno == EMFILE || errno == ENFILE || errno == ENOBUFS || errno == ENOMEM) return false;
      if (errno == EINTR || errno == ECONNABORTED) continue;
      return true;  // EAGAIN: nothing left
    }
    StartConnection(fd, listener.is_unix, listener.tls);
  }
  return true;
}

void HttpServer::Impl::StartConnection(int fd, bool is_unix,
                                       std::shared_ptr<const TlsServerContext> tls) {
  MutexLock<Mutex> lock(mu);
  if (conns.size() >= static_cast<size_t>(options.max_connections)) {
    ::send(fd, kBusyResponse.data(), kBusyResponse.size(), MSG_NOSIGNAL | MSG_DONTWAIT);
    ::close(fd);
    return;
  }
  if (!is_unix) {
    int one = 1;
    ::setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof(one));
  }
  if (options.idle_timeout_s > 0) {
    // A recv that sees nothing for this long is an idle connection; a send that cannot make
    // progress for this long is a client that stopped reading.
    SetTimeout(fd, SO_RCVTIMEO, options.idle_timeout_s);
    SetTimeout(fd, SO_SNDTIMEO, options.idle_timeout_s);
  }
  uint64_t id = next_id++;
  Conn& conn = conns[id];
  conn.fd = fd;
  try {
    conn.thread = std::thread(
        [this, id, fd, is_unix, tls = std::move(tls)] { ConnectionMain(id, fd, is_unix, tls); });
  } catch (const std::system_error&) {  // out of threads: refuse this one
    ::send(fd, kBusyResponse.data(), kBusyResponse.size(), MSG_NOSIGNAL | MSG_DONTWAIT);
    ::close(fd);
    conns.erase(id);
  }
}

void HttpServer::Impl::ConnectionMain(uint64_t id, int fd, bool is_unix,
                                      const std::shared_ptr<const TlsServerContext>& tls) {
  if (tls) {
    ServeTls(fd, *tls);
  } else {
    HttpConnection connection(fd, is_unix, handler, options, stopping);
    connection.Serve();
  }
  MutexLock<Mutex> lock(mu);
  ::close(fd);
  auto it = conns.find(id);
  finished.push_back(std::move(it->second.thread));
  conns.erase(it);
  if (conns.empty()) conns_drained.notify_all();
}

void HttpServer::Impl::ServeTls(int fd, const TlsServerContext& tls) {
  int pair[2];
  if (::socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, pair) != 0) return;
  UniqueFd relay_end(pair[0]);
  UniqueFd http_end(pair[1]);
  if (options.idle_timeout_s > 0) {
    SetTimeout(http_end.get(), SO_RCVTIMEO, options.idle_timeout_s);
    SetTimeout(http_end.get(), SO_SNDTIMEO, options.idle_timeout_s);
  }
  std::thread relay;
  try {
    relay = std::thread([&] { RelayTls(tls, fd, relay_end.get(), stopping); });
  } catch (const std::system_error&) {
    return;  // out of threads: the connection is closed
  }
  {
    // Not a Unix-socket peer: a TLS client never gets peer credentials.
    HttpConnection connection(http_end.get(), false, handler, options, stopping);
    connection.Serve();
  }
  ::shutdown(http_end.get(), SHUT_RDWR);  // the relay sees the end and closes the TLS session
  relay.join();
}

void HttpServer::Impl::JoinFinished() {
  std::vector<std::thread> done;
  {
    MutexLock<Mutex> lock(mu);
    done.swap(finished);
  }
  for (std::thread& t : done) t.join();
}

}  // namespace berth::net
