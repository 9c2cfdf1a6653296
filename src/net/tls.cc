// TlsServerContext and RelayTls (see tls.h). The relay is one non-blocking loop: decrypted bytes
// go to the plain socket, bytes from the plain socket go through SSL_write, and poll() waits for
// whichever side can make progress. Each direction has a bounded backlog, so a reader that stops
// reading stops the other side instead of growing memory.
#include "net/tls.h"

#include <arpa/inet.h>
#include <fcntl.h>
#include <openssl/err.h>
#include <openssl/ssl.h>
#include <openssl/x509v3.h>
#include <poll.h>
#include <sys/socket.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <optional>
#include <string>

#include "net/no_sigpipe.h"
#include "net/openssl_errors.h"
#include "net/socket_io.h"

namespace berth::net {
namespace {

constexpr size_t kIoBytes = 16 << 10;
constexpr size_t kMaxBacklog = 1 << 20;  // decrypted bytes waiting for the plain side
constexpr int kPollSliceMs = 250;        // how often a quiet relay looks at `stopping`
constexpr std::string_view kPlainHttpAnswer =
    "HTTP/1.0 400 Bad Request\r\nContent-Type: text/plain\r\nConnection: close\r\n\r\n"
    "Client sent an HTTP request to an HTTPS server.\n";

int SelectAlpn(SSL*, const unsigned char** out, unsigned char* outlen, const unsigned char* in,
               unsigned int inlen, void*) {
  static constexpr unsigned char kHttp11[] = {'h', 't', 't', 'p', '/', '1', '.', '1'};
  for (unsigned int i = 0; i < inlen;) {
    unsigned int len = in[i];
    if (i + 1 + len > inlen) break;
    if (len == sizeof(kHttp11) && std::equal(kHttp11, kHttp11 + len, in + i + 1)) {
      *out = in + i + 1;
      *outlen = static_cast<unsigned char>(len);
      return SSL_TLSEXT_ERR_OK;
    }
    i += 1 + len;
  }
  return SSL_TLSEXT_ERR_NOACK;  // no ALPN (the client then speaks HTTP/1.1 or gives up)
}

void SetNonBlocking(int fd) {
  int flags = ::fcntl(fd, F_GETFL);
  if (flags >= 0) ::fcntl(fd, F_SETFL, flags | O_NONBLOCK);
}

// Waits for `events` on fd until deadline_ms (SteadyNowMs() time) in slices, so that `stopping`
// is noticed. False on timeout, stop or error.
bool WaitSliced(int fd, short events, int64_t deadline_ms, const std::atomic<bool>& stopping) {
  while (!stopping) {
    int64_t left = deadline_ms - SteadyNowMs();
    if (left <= 0) return false;
    pollfd p{fd, events, 0};
    int n = ::poll(&p, 1, static_cast<int>(std::min<int64_t>(left, kPollSliceMs)));
    if (n > 0) return true;
    if (n < 0 && errno != EINTR) return false;
  }
  return false;
}

// A client that sent plain text where a TLS ClientHello (record type 0x16) belongs gets a short
// plain answer. Returns true when the connection is done with (plain HTTP or nothing arrived).
bool RefusePlainHttp(int tcp_fd, int64_t deadline_ms, const std::atomic<bool>& stopping) {
  if (!WaitSliced(tcp_fd, POLLIN, deadline_ms, stopping)) return true;
  unsigned char first = 0;
  ssize_t n = ::recv(tcp_fd, &first, 1, MSG_PEEK);
  if (n <= 0) return true;
  if (first == 0x16) return false;
  if (first >= 'A' && first <= 'Z') {
    iovec iov{const_cast<char*>(kPlainHttpAnswer.data()), kPlainHttpAnswer.size()};
    if (SendAll(tcp_fd, &iov, 1, SteadyNowMs() + 1000)) {
      // Read what the client still sends for a moment before closing, so that the close does
      // not become a reset that destroys the answer in flight.
      ::shutdown(tcp_fd, SHUT_WR);
      char drop[4096];
      int64_t until = SteadyNowMs() + 1000;
      while (WaitSliced(tcp_fd, POLLIN, until, stopping) &&
             ::recv(tcp_fd, drop, sizeof(drop), 0) > 0) {
      }
    }
  }
  return true;
}

bool Handshake(SSL* ssl, int tcp_fd, int64_t deadline_ms, const std::atomic<bool>& stopping) {
  for (;;) {
    ERR_clear_error();
    int rc = SSL_accept(ssl);
    if (rc == 1) return true;
    int err = SSL_get_error(ssl, rc);
    short events = err == SSL_ERROR_WANT_READ ? POLLIN : err == SSL_ERROR_WANT_WRITE ? POLLOUT : 0;
    if (events == 0 || !WaitSliced(tcp_fd, events, deadline_ms, stopping)) {
      ERR_clear_error();
      return false;
    }
  }
}

bool ClientHandshake(SSL* ssl, int tcp_fd, int64_t deadline_ms) {
  const std::atomic<bool> never{false};
  for (;;) {
    ERR_clear_error();
    int rc = SSL_connect(ssl);
    if (rc == 1) return true;
    int err = SSL_get_error(ssl, rc);
    short events = err == SSL_ERROR_WANT_READ ? POLLIN : err == SSL_ERROR_WANT_WRITE ? POLLOUT : 0;
    if (events == 0 || !WaitSliced(tcp_fd, events, deadline_ms, never)) return false;
  }
}

bool IsIpAddress(const std::string& name) {
  unsigned char buf[16];
  return ::inet_pton(AF_INET, name.c_str(), buf) == 1 ||
         ::inet_pton(AF_INET6, name.c_str(), buf) == 1;
}

// The relay proper, after the handshake: rounds of TLS -> plain, plain -> TLS, and a wait when
// neither moved. Each step returns nothing to go on, or how the relay ends: true when it ended
// cleanly (close_notify may be sent), false on a TLS or socket error.
class RelayLoop {
 public:
  RelayLoop(SSL* ssl, int tcp_fd, int plain_fd) : ssl_(ssl), tcp_fd_(tcp_fd), plain_fd_(plain_fd) {}

  bool Run(const std::atomic<bool>& stopping) {
    while (!stopping) {
      progress_ = tls_wants_read_ = tls_wants_write_ = false;
      if (std::optional<bool> end = TlsToPlain()) return *end;
      if (std::optional<bool> end = PlainToTls()) return *end;
      if (progress_) continue;
      if (std::optional<bool> end = Wait()) return *end;
    }
    return false;
  }

 private:
  // What SSL_read or SSL_write wants after returning `n`; false for an error that ends the relay
  // (for SSL_read, the peer's close_notify is its end of data, not an error).
  bool NoteTlsWant(int n, bool reading) {
    int err = SSL_get_error(ssl_, n);
    if (err == SSL_ERROR_WANT_READ) {
      tls_wants_read_ = true;
    } else if (err == SSL_ERROR_WANT_WRITE) {
      tls_wants_write_ = true;
    } else if (reading && err == SSL_ERROR_ZERO_RETURN) {
      tls_eof_ = true;
    } else {
      return false;
    }
    return true;
  }

  std::optional<bool> TlsToPlain() {
    while (!tls_eof_ && to_plain_.size() - to_plain_off_ < kMaxBacklog) {
      ERR_clear_error();
      int n = SSL_read(ssl_, buf_, sizeof(buf_));
      if (n > 0) {
        to_plain_.append(buf_, static_cast<size_t>(n));
        progress_ = true;
        continue;
      }
      if (!NoteTlsWant(n, true)) return false;
      break;
    }
    if (to_plain_off_ < to_plain_.size()) {
      ssize_t n = ::send(plain_fd_, to_plain_.data() + to_plain_off_,
                         to_plain_.size() - to_plain_off_, MSG_NOSIGNAL | MSG_DONTWAIT);
      if (n > 0) {
        to_plain_off_ += static_cast<size_t>(n);
        progress_ = true;
        if (to_plain_off_ == to_plain_.size()) {
          to_plain_.clear();
          to_plain_off_ = 0;
        }
      } else if (n < 0 && errno != EAGAIN && errno != EWOULDBLOCK && errno != EINTR) {
        return true;  // the HTTP side is gone
      }
    }
    if (tls_eof_ && to_plain_off_ == to_plain_.size() && !plain_shut_) {
      ::shutdown(plain_fd_, SHUT_WR);  // the HTTP side sees the client's end
      plain_shut_ = true;
    }
    return std::nullopt;
  }

  std::optional<bool> PlainToTls() {
    if (to_tls_off_ == to_tls_.size() && !plain_eof_) {
      ssize_t n = ::recv(plain_fd_, buf_, sizeof(buf_), MSG_DONTWAIT);
      if (n > 0) {
        to_tls_.assign(buf_, static_cast<size_t>(n));
        to_tls_off_ = 0;
        progress_ = true;
      } else if (n == 0 || (errno != EAGAIN && errno != EWOULDBLOCK && errno != EINTR)) {
        plain_eof_ = true;
      }
    }
    while (to_tls_off_ < to_tls_.size()) {
      ERR_clear_error();
      int n = SSL_write(ssl_, to_tls_.data() + to_tls_off_,
                        static_cast<int>(std::min(to_tls_.size() - to_tls_off_, kIoBytes)));
      if (n > 0) {
        to_tls_off_ += static_cast<size_t>(n);
        progress_ = true;
        continue;
      }
      if (!NoteTlsWant(n, false)) return false;
      break;
    }
    if (plain_eof_ && to_tls_off_ == to_tls_.size()) return true;
    return std::nullopt;
  }

  std::optional<bool> Wait() {
    pollfd fds[2] = {{tcp_fd_, 0, 0}, {plain_fd_, 0, 0}};
    if (tls_wants_read_) fds[0].events |= POLLIN;
    if (tls_wants_write_) fds[0].events |= POLLOUT;
    if (to_plain_off_ < to_plain_.size()) fds[1].events |= POLLOUT;
    if (!plain_eof_ && to_tls_off_ == to_tls_.size()) fds[1].events |= POLLIN;
    int n = ::poll(fds, 2, kPollSliceMs);
    if (n < 0 && errno != EINTR) return false;
    // A hang-up with nothing to read on the TCP side: the next SSL_read reports it. On the
    // plain side the next recv does.
    if (n > 0 && (fds[0].revents & (POLLERR | POLLNVAL)) != 0) return false;
    return std::nullopt;
  }

  SSL* ssl_;
  int tcp_fd_, plain_fd_;
  std::string to_plain_;  // decrypted, not yet written to plain_fd
  size_t to_plain_off_ = 0;
  std::string to_tls_;  // read from plain_fd, not yet taken by SSL_write
  size_t to_tls_off_ = 0;
  bool tls_eof_ = false, plain_eof_ = false, plain_shut_ = false;
  bool progress_ = false, tls_wants_read_ = false, tls_wants_write_ = false;  // this round
  char buf_[kIoBytes];
};

bool Relay(SSL* ssl, int tcp_fd, int plain_fd, const std::atomic<bool>& stopping) {
  return RelayLoop(ssl, tcp_fd, plain_fd).Run(stopping);
}

}  // namespace

Result<std::shared_ptr<TlsServerContext>> TlsServerContext::Create(
    const std::string& cert_pem_path, const std::string& key_pem_path) {
  std::shared_ptr<TlsServerContext> c(new TlsServerContext());
  ERR_clear_error();
  SSL_CTX* ctx = SSL_CTX_new(TLS_server_method());
  if (ctx == nullptr) return Status::Internal("SSL_CTX_new: " + OpenSslErrors());
  c->ctx_ = ctx;
  SSL_CTX_set_min_proto_version(ctx, TLS1_2_VERSION);
  SSL_CTX_set_options(ctx, SSL_OP_NO_RENEGOTIATION | SSL_OP_CIPHER_SERVER_PREFERENCE);
  SSL_CTX_set_mode(ctx, SSL_MODE_ENABLE_PARTIAL_WRITE | SSL_MODE_ACCEPT_MOVING_WRITE_BUFFER);
  if (SSL_CTX_use_certificate_chain_file(ctx, cert_pem_path.c_str()) != 1) {
    return Status::InvalidArgument("TLS certificate " + cert_pem_path + ": " + OpenSslErrors());
  }
  if (SSL_CTX_use_PrivateKey_file(ctx, key_pem_path.c_str(), SSL_FILETYPE_PEM) != 1) {
    return Status::InvalidArgument("TLS key " + key_pem_path + ": " + OpenSslErrors());
  }
  if (SSL_CTX_check_private_key(ctx) != 1) {
    return Status::InvalidArgument("TLS key " + key_pem_path + " does not match " + cert_pem_path +
                                   ": " + OpenSslErrors());
  }
  SSL_CTX_set_alpn_select_cb(ctx, SelectAlpn, nullptr);
  return c;
}

TlsServerContext::~TlsServerContext() {
  SSL_CTX_free(static_cast<SSL_CTX*>(ctx_));
}

void RelayTls(const TlsServerContext& context, int tcp_fd, int plain_fd,
              const std::atomic<bool>& stopping, int handshake_timeout_ms) {
  NoSigpipeHere no_sigpipe;  // a client gone first is an EPIPE, whatever the process ignores
  SetNonBlocking(tcp_fd);
  SetNonBlocking(plain_fd);
  const int64_t deadline = SteadyNowMs() + handshake_timeout_ms;
  SSL* ssl = nullptr;
  if (!RefusePlainHttp(tcp_fd, deadline, stopping)) {
    ssl = SSL_new(static_cast<SSL_CTX*>(context.native()));
  }
  if (ssl != nullptr && SSL_set_fd(ssl, tcp_fd) == 1 &&
      Handshake(ssl, tcp_fd, deadline, stopping) && Relay(ssl, tcp_fd, plain_fd, stopping)) {
    ERR_clear_error();
    SSL_shutdown(ssl);  // close_notify, best effort (non-blocking: not waiting for the reply)
  }
  ERR_clear_error();
  SSL_free(ssl);
  ::shutdown(plain_fd, SHUT_RDWR);
}

Result<std::shared_ptr<TlsClientContext>> TlsClientContext::Create(
    const std::string& ca_pem_path, const std::string& cert_pem_path,
    const std::string& key_pem_path) {
  std::shared_ptr<TlsClientContext> c(new TlsClientContext());
  ERR_clear_error();
  SSL_CTX* ctx = SSL_CTX_new(TLS_client_method());
  if (ctx == nullptr) return Status::Internal("SSL_CTX_new: " + OpenSslErrors());
  c->ctx_ = ctx;
  SSL_CTX_set_min_proto_version(ctx, TLS1_2_VERSION);
  SSL_CTX_set_mode(ctx, SSL_MODE_ENABLE_PARTIAL_WRITE | SSL_MODE_ACCEPT_MOVING_WRITE_BUFFER);
  SSL_CTX_set_verify(ctx, SSL_VERIFY_PEER, nullptr);
  static constexpr unsigned char kAlpn[] = "\x08http/1.1";
  SSL_CTX_set_alpn_protos(ctx, kAlpn, sizeof(kAlpn) - 1);
  int loaded = ca_pem_path.empty()
                   ? SSL_CTX_set_default_verify_paths(ctx)
                   : SSL_CTX_load_verify_locations(ctx, ca_pem_path.c_str(), nullptr);
  if (loaded != 1) {
    return Status::InvalidArgument(
        "TLS CA " + (ca_pem_path.empty() ? std::string("(system store)") : ca_pem_path) + ": " +
        OpenSslErrors());
  }
  if (cert_pem_path.empty() != key_pem_path.empty()) {
    return Status::InvalidArgument(
        "TLS: a client certificate needs its key, and a key its "
        "certificate");
  }
  if (!cert_pem_path.empty()) {
    if (SSL_CTX_use_certificate_chain_file(ctx, cert_pem_path.c_str()) != 1) {
      return Status::InvalidArgument("TLS client certificate " + cert_pem_path + ": " +
                                     OpenSslErrors());
    }
    if (SSL_CTX_use_PrivateKey_file(ctx, key_pem_path.c_str(), SSL_FILETYPE_PEM) != 1 ||
        SSL_CTX_check_private_key(ctx) != 1) {
      return Status::InvalidArgument("TLS client key " + key_pem_path + ": " + OpenSslErrors());
    }
  }
  return c;
}

TlsClientContext::~TlsClientContext() {
  SSL_CTX_free(static_cast<SSL_CTX*>(ctx_));
}

Result<std::unique_ptr<TlsClientChannel>> TlsClientChannel::Open(
    std::shared_ptr<const TlsClientContext> context, int tcp_fd, const std::string& server_name,
    int64_t deadline_ms) {
  NoSigpipeHere no_sigpipe;  // the handshake writes: a server gone first is an EPIPE
  std::unique_ptr<TlsClientChannel> ch(new TlsClientChannel());
  ch->context_ = std::move(context);
  ch->tcp_fd_ = tcp_fd;
  SetNonBlocking(tcp_fd);
  ERR_clear_error();
  SSL* ssl = SSL_new(static_cast<SSL_CTX*>(ch->context_->native()));
  if (ssl == nullptr) return Status::Internal("SSL_new: " + OpenSslErrors());
  ch->ssl_ = ssl;
  X509_VERIFY_PARAM* param = SSL_get0_param(ssl);
  if (IsIpAddress(server_name)) {
    X509_VERIFY_PARAM_set1_ip_asc(param, server_name.c_str());
  } else {
    SSL_set_tlsext_host_name(ssl, server_name.c_str());
    X509_VERIFY_PARAM_set1_host(param, server_name.c_str(), 0);
  }
  SSL_set_fd(ssl, tcp_fd);
  if (!ClientHandshake(ssl, tcp_fd, deadline_ms)) {
    long verify = SSL_get_verify_result(ssl);
    std::string why = OpenSslErrors();
    ERR_clear_error();
    if (verify != X509_V_OK) {
      return Status::PermissionDenied("TLS: the server's certificate is not trusted for " +
                                      server_name + ": " + X509_verify_cert_error_string(verify));
    }
    return Status::Unavailable("TLS handshake with " + server_name + " failed" +
                               (why.empty() ? std::string(" (timed out or closed)") : ": " + why));
  }
  int pair[2];
  if (::socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, pair) != 0) {
    return Status::Unavailable(ErrnoMessage("socketpair", errno));
  }
  ch->plain_fd_ = pair[0];
  ch->relay_fd_ = pair[1];
  SetNonBlocking(ch->relay_fd_);
  SetNonBlocking(ch->plain_fd_);
  TlsClientChannel* self = ch.get();
  ch->relay_ = std::thread([self] {
    NoSigpipeHere relay_no_sigpipe;
    SSL* s = static_cast<SSL*>(self->ssl_);
    if (Relay(s, self->tcp_fd_, self->relay_fd_, self->stopping_)) {
      ERR_clear_error();
      SSL_shutdown(s);
    }
    ERR_clear_error();
    ::shutdown(self->relay_fd_, SHUT_RDWR);
  });
  return ch;
}

TlsClientChannel::~TlsClientChannel() {
  stopping_ = true;
  if (plain_fd_ >= 0) ::shutdown(plain_fd_, SHUT_RDWR);
  if (relay_.joinable()) relay_.join();
  SSL_free(static_cast<SSL*>(ssl_));
  for (int fd : {plain_fd_, relay_fd_, tcp_fd_}) {
    if (fd >= 0) ::close(fd);
  }
}

}  // namespace berth::net
