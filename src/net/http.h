// A small HTTP/1.1 server and client for berth's APIs (docs/adr/0002-own-http.md says why not
// cpp-httplib): Unix-domain and TCP sockets, keep-alive, request bodies by Content-Length or
// chunked, streamed (chunked) responses for watch streams, and the peer's credentials
// (SO_PEERCRED) on Unix sockets, which is how the controller knows local users.
//
// Thread safety: HttpServer runs one thread per connection and calls the handler concurrently;
// the handler must be thread-safe. HttpClient is not thread-safe (one per thread).
#ifndef BERTH_NET_HTTP_H_
#define BERTH_NET_HTTP_H_

#include <atomic>
#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <thread>
#include <vector>

#include "common/status.h"

namespace berth::net {

// Who is on the other end of a Unix socket (from SO_PEERCRED); absent for TCP.
struct PeerCredentials {
  int64_t pid = -1;
  uint32_t uid = 0;
  uint32_t gid = 0;
};

struct HttpRequest {
  std::string method;                          // "GET", "POST", ...
  std::string target;                          // as sent: "/v1/jobs?user=alice"
  std::string path;                            // "/v1/jobs" (percent-decoded)
  std::map<std::string, std::string> query;    // decoded; repeated keys: the last wins
  std::map<std::string, std::string> headers;  // names lower-cased
  std::string body;
  std::optional<PeerCredentials> peer;  // Unix sockets only
  std::string remote;                   // "unix" or "ip:port"

  // Header value or "" (name is case-insensitive).
  std::string Header(std::string_view name) const;
};

// Lets a handler write a response as a stream of chunks (watch endpoints). Write returns false
// once the client has gone away; the handler should then return.
// Thread safety: use it only on the thread that runs the stream function, and only until that
// function returns. Each Write is one chunk, sent before Write returns; an empty Write sends
// nothing. Closed() also notices a client that disconnected while the stream was quiet.
class ResponseStream {
 public:
  virtual ~ResponseStream() = default;
  virtual bool Write(std::string_view data) = 0;
  // True when the server is shutting down or the peer closed: stop streaming.
  virtual bool Closed() const = 0;
};

// A connection handed over by a "101 Switching Protocols" response (HttpResponse::upgrade): it is
// no longer HTTP. `fd` is the connection's socket (on a TLS listener the plaintext end of the
// relay), borrowed: the server closes it once the upgrade function returns. `already_read` holds
// what the client sent after the request. The function must return when `stopping` becomes
// true (the server is stopping) or the peer goes away.
struct UpgradedConnection {
  int fd = -1;
  std::string already_read;
  const std::atomic<bool>* stopping = nullptr;
};

struct HttpResponse {
  int status = 200;
  std::string content_type = "application/json";
  std::string body;
  std::vector<std::pair<std::string, std::string>> headers;
  // When set, the server sends the status and headers with chunked encoding, then calls this
  // (on the connection's thread) to produce the body; `body` is ignored.
  std::function<void(ResponseStream&)> stream;
  // When set and status is 101, the server sends the status line and headers with
  // "Connection: Upgrade" (no body), then calls this on the connection's thread and closes the
  // connection when it returns. Ignored (500) for another status.
  std::function<void(UpgradedConnection&)> upgrade;
};

using HttpHandler = std::function<HttpResponse(const HttpRequest&)>;

struct ServerOptions {
  size_t max_body_bytes = 64 << 20;    // larger requests get 413
  size_t max_header_bytes = 64 << 10;  // larger headers get 431
  int idle_timeout_s = 120;            // keep-alive connections idle longer are closed
  int max_connections = 4096;          // beyond: accepted and closed with 503
};

class HttpServer {
 public:
  HttpServer(HttpHandler handler, ServerOptions options = {});
  ~HttpServer();  // Stops and joins.
  HttpServer(const HttpServer&) = delete;
  HttpServer& operator=(const HttpServer&) = delete;

  // Listens on a Unix socket at `path` (an existing socket file there is replaced; the file is
  // made mode `mode`, so that every local user can connect with 0666). A path that exists and
  // is not a socket is an error. Stop() removes the file if it is still this server's.
  // Listen* may be called more than once (e.g. Unix and TCP) before Start().
  Status ListenUnix(const std::string& path, uint32_t mode = 0666);
  // Listens on TCP; port 0 picks a free one (see port(): the port of the last ListenTcp).
  Status ListenTcp(const std::string& host, uint16_t port);
  // Listens on TCP and speaks HTTP/1.1 over TLS (1.2 or newer) there, with the PEM certificate
  // (chain) and key at these paths, read now. Keep-alive and streamed responses work as on plain
  // TCP; requests on it never carry `peer`. Port 0 picks a free one (see port()). Errors name
  // the file OpenSSL refused.
  Status ListenTls(const std::string& host, uint16_t port, const std::string& cert_pem_path,
                   const std::string& key_pem_path);
  uint16_t port() const { return port_; }

  // Starts accepting in the background. REQUIRES: a Listen* call succeeded.
  Status Start();
  // Stops accepting, closes connections (streams see Closed()), joins every thread.
  // Returns once every handler has returned: a stream function must end when Closed() or a
  // failed Write says so, or Stop() waits for it. Idempotent; the destructor calls it.
  // REQUIRES: not called from a handler (it would wait for itself).
  void Stop();

 private:
  struct Impl;
  std::unique_ptr<Impl> impl_;
  uint16_t port_ = 0;
};

struct ClientResponse {
  int status = 0;
  std::map<std::string, std::string> headers;  // names lower-cased
  std::string body;
};

struct ClientOptions {
  int timeout_ms = 30000;
  // For "tls:" addresses: the CA to trust ("" = the system's trust store).
  std::string tls_ca_file;
  // For "tls:" addresses: a client certificate (PEM) and its key, for servers that ask for one
  // (etcd with --client-cert-auth); both or neither.
  std::string tls_cert_file, tls_key_file;
  // Sent as "Authorization: Bearer TOKEN" with every request when not empty.
  std::string bearer_token;
};

// A blocking HTTP/1.1 client over one keep-alive connection (reconnects when needed).
class HttpClient {
 public:
  // "unix:/path/to/sock", "tcp:host:port", or "tls:host:port" (HTTPS: the server's certificate
  // must chain to options.tls_ca_file and name host; a refused certificate is PERMISSION_DENIED).
  static Result<std::unique_ptr<HttpClient>> Connect(const std::string& address,
                                                     const ClientOptions& options);
  static Result<std::unique_ptr<HttpClient>> Connect(const std::string& address,
                                                     int timeout_ms = 30000);
  // Adds a header to every later request (e.g. a fresh credential); replaces one of that name.
  void SetHeader(const std::string& name, const std::string& value);
  ~HttpClient();

  // Sends one request and reads the whole response; timeout_ms (from Connect) bounds the
  // whole exchange. Errors: UNAVAILABLE (connect, send, timeout, connection lost),
  // INTERNAL (malformed response), RESOURCE_EXHAUSTED (a body over 1 GiB), INVALID_ARGUMENT (a
  // method or target with spaces or control characters). A request that fails on a reused
  // connection before any byte of the response is retried once on a fresh connection if it was not
  // sent at all or its method is idempotent.
  Result<ClientResponse> Request(const std::string& method, const std::string& target,
                                 const std::string& body = "",
                                 const std::string& content_type = "application/json");
  // The same, but a 2xx answer's body goes to `sink` a piece at a time as it arrives instead of
  // into the response (whose body is then empty): a large answer printed as it comes is never
  // held whole. Other answers are read whole, as Request reads them. The same errors, and the
  // same bound on the whole exchange; a body cut short is UNAVAILABLE after `sink` had its
  // first part.
  Result<ClientResponse> RequestTo(const std::string& method, const std::string& target,
                                   const std::string& body, const std::string& content_type,
                                   const std::function<void(std::string_view)>& sink);
  // Sends a request and calls on_data with each piece of a (chunked) response body as it
  // arrives, until the server ends it, on_data returns false, or the timeout passes with no
  // data. Returns the status code.
  // For a chunked body each on_data call is one whole chunk (one server-side Write); other
  // bodies come in pieces as read. idle_timeout_ms == 0 means no idle timeout (the response
  // head is still bounded by Connect's timeout_ms). A body cut short by the server is an
  // error (UNAVAILABLE), so a watcher knows to re-watch.
  Result<int> Stream(const std::string& method, const std::string& target,
                     const std::function<bool(std::string_view)>& on_data, int idle_timeout_ms = 0);
  // Stream in two steps, for a proxy that answers with the status and headers before the body:
  // OpenStream sends the request and reads the response head (the body not yet read); ReadStream
  // then reads the body as Stream does. Errors as Request's.
  Result<ClientResponse> OpenStream(const std::string& method, const std::string& target,
                                    const std::string& body = "",
                                    const std::string& content_type = "application/json");
  Status ReadStream(const std::function<bool(std::string_view)>& on_data, int idle_timeout_ms = 0);
  // Shuts the connection down; may be called from any thread: a call blocked on it returns
  // UNAVAILABLE (a proxy's server stopping). The client reconnects on its next request.
  void Abort();

  // Sends `method target` (GET unless said) with `headers` and "Connection: Upgrade" (the caller
  // names the protocol in an "Upgrade" header). On "101 Switching Protocols" the connection stops
  // being HTTP: *fd is its socket (the plaintext end for tls: addresses), still owned by this
  // client and valid until it is destroyed, *already_read what the server sent after the head, and
  // the client must not send another request. Any other status: the whole response is read and
  // returned, and the client stays usable. Errors as Request's.
  Result<ClientResponse> Upgrade(const std::string& target,
                                 const std::vector<std::pair<std::string, std::string>>& headers,
                                 int* fd, std::string* already_read,
                                 const std::string& method = "GET");

 private:
  HttpClient() = default;
  struct Impl;
  std::unique_ptr<Impl> impl_;
};

// Percent-decodes a URL component ("a%20b" -> "a b"; "+" stays "+").
std::string UrlDecode(std::string_view s);
// Percent-encodes everything but unreserved characters.
std::string UrlEncode(std::string_view s);

}  // namespace berth::net

#endif  // BERTH_NET_HTTP_H_
