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
#include <memory>
#include <string>

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

}  // namespace berth::net

#endif  // BERTH_NET_TLS_H_
