// TLS for berth's HTTP server (OpenSSL 3, kept out of this header): a server context made from a
// PEM certificate chain and key, and the relay that runs one TLS connection.
//
// How the server uses it (http_server.cc): for a connection accepted on a TLS listener it makes a
// socketpair, serves HTTP on one end exactly as on a plain socket (keep-alive, chunked streams,
// peer-close detection all unchanged), and runs RelayTls between the TCP socket and the other end
// on a second thread. The plaintext never leaves the process.
//
// Thread safety: a TlsServerContext is immutable after Create and may be shared by any number of
// relays at once.
#ifndef BERTH_NET_TLS_H_
#define BERTH_NET_TLS_H_

#include <atomic>
#include <cstdint>
#include <memory>
#include <string>
#include <thread>

#include "common/status.h"

namespace berth::net {

class TlsServerContext {
 public:
  // Loads a PEM certificate (chain) and its private key; TLS 1.2 or newer, ALPN "http/1.1" only
  // (HTTP/2 is not spoken). Errors name the file and what OpenSSL said.
  static Result<std::shared_ptr<TlsServerContext>> Create(const std::string& cert_pem_path,
                                                          const std::string& key_pem_path);
  ~TlsServerContext();
  TlsServerContext(const TlsServerContext&) = delete;
  TlsServerContext& operator=(const TlsServerContext&) = delete;

  // The OpenSSL SSL_CTX*, for tls.cc only.
  void* native() const { return ctx_; }

 private:
  TlsServerContext() = default;
  void* ctx_ = nullptr;
};

// Runs the server side of TLS on `tcp_fd` and relays the decrypted bytes to and from
// `plain_fd` (a connected stream socket) until either side closes or errs, `stopping` becomes
// true, or the handshake has not finished after handshake_timeout_ms. A client that speaks plain
// HTTP to the TLS port is answered "400 Bad Request" in plain text and closed. Takes ownership of
// neither descriptor; on return `plain_fd` has been shut down for writing so that its reader sees
// the end. Never throws.
void RelayTls(const TlsServerContext& context, int tcp_fd, int plain_fd,
              const std::atomic<bool>& stopping, int handshake_timeout_ms = 10000);

// The client side: trust anchors, and one connection relayed to a plain socket the same way, so
// that HttpClient speaks HTTP on the plain end exactly as on a TCP socket.
class TlsClientContext {
 public:
  // Trusts the PEM CA certificate(s) at ca_pem_path, or the system's trust store when it is
  // empty. TLS 1.2 or newer, ALPN "http/1.1". With cert_pem_path and key_pem_path, presents
  // that client certificate when the server asks for one. Errors name the file.
  static Result<std::shared_ptr<TlsClientContext>> Create(const std::string& ca_pem_path,
                                                          const std::string& cert_pem_path = "",
                                                          const std::string& key_pem_path = "");
  ~TlsClientContext();
  TlsClientContext(const TlsClientContext&) = delete;
  TlsClientContext& operator=(const TlsClientContext&) = delete;

  void* native() const { return ctx_; }

 private:
  TlsClientContext() = default;
  void* ctx_ = nullptr;
};

// One client connection: the handshake is done in Open (the server's certificate must chain to
// the context's CA and name `server_name`, a DNS name or an IP address), then a thread relays
// between the TCP socket and plain_fd() until either side closes or the channel is destroyed.
// Thread safety: one owner; plain_fd() may be used by one thread at a time.
class TlsClientChannel {
 public:
  // Takes ownership of tcp_fd (a connected socket) in every case. Errors: UNAVAILABLE (the
  // connection failed, or the handshake did not finish by deadline_ms, a SteadyNowMs() time),
  // PERMISSION_DENIED (the server's certificate was refused: the message says why).
  static Result<std::unique_ptr<TlsClientChannel>> Open(
      std::shared_ptr<const TlsClientContext> context, int tcp_fd, const std::string& server_name,
      int64_t deadline_ms);
  ~TlsClientChannel();  // Stops the relay and closes both sockets.
  TlsClientChannel(const TlsClientChannel&) = delete;
  TlsClientChannel& operator=(const TlsClientChannel&) = delete;

  // The plaintext end, owned by the channel.
  int plain_fd() const { return plain_fd_; }

 private:
  TlsClientChannel() = default;
  std::shared_ptr<const TlsClientContext> context_;
  void* ssl_ = nullptr;
  int tcp_fd_ = -1;
  int plain_fd_ = -1;  // ours: HttpClient reads and writes it
  int relay_fd_ = -1;  // the relay's end of the pair
  std::atomic<bool> stopping_{false};
  std::thread relay_;
};

}  // namespace berth::net

#endif  // BERTH_NET_TLS_H_
