// The server side of one HTTP/1.1 connection: reads requests (pipelined ones in order), calls the
// handler, writes responses, until the peer closes, an error, the idle timeout or shutdown.
//
// Thread safety: an HttpConnection is used by its connection's thread only.
#ifndef BERTH_NET_HTTP_CONNECTION_H_
#define BERTH_NET_HTTP_CONNECTION_H_

#include <atomic>
#include <string>

#include "net/http.h"
#include "net/http_parse.h"
#include "net/socket_io.h"

namespace berth::net {

class HttpConnection {
 public:
  // `fd` is a connected stream socket, still owned by the caller (closed after Serve()).
  // `handler`, `options` and `stopping` must outlive the connection.
  HttpConnection(int fd, bool is_unix, const HttpHandler& handler, const ServerOptions& options,
                 const std::atomic<bool>& stopping);
  HttpConnection(const HttpConnection&) = delete;
  HttpConnection& operator=(const HttpConnection&) = delete;

  // Serves requests until the connection should close. Never throws.
  void Serve();

 private:
  // Serve()'s loop, one request after another.
  void ServeRequests();
  // Receives more bytes into in_, with room for at least min_free. False on EOF, error, or the
  // idle timeout.
  bool ReadMore(size_t min_free);
  // Reads the request body. Returns 0, an HTTP error status, or -1 when the connection failed.
  int ReadBody(const RequestHead& head);
  int ReadChunkedBody(bool expect_continue);
  bool SendContinue();
  // Calls the handler and sends its response. False when the connection must close at once
  // (send failed, stream cut); head.keep_alive then decides whether it stays open.
  bool Respond(const RequestHead& head);
  // "101 Switching Protocols", then the connection is response.upgrade's; false (close) after.
  bool SendUpgrade(const HttpResponse& response);
  bool SendWhole(const HttpResponse& response, int status, bool head_only, bool keep_alive);
  // `chunked` is false for HTTP/1.0 peers, who get the raw bytes and then the close.
  bool SendStreamed(const HttpResponse& response, int status, bool head_only, bool keep_alive,
                    bool chunked);
  // Fills out_ with the status line and headers. `length` < 0: no Content-Length.
  void BuildHead(const HttpResponse& response, int status, bool keep_alive, bool chunked,
                 int64_t length);
  void SendError(int status);
  // Half-closes, then reads and drops what the client still sends for a moment, so that the
  // kernel does not answer unread data with a reset that destroys the response in flight.
  void LingeringClose();
  void FillPeer();
  // After a large request: whether the next one's bytes arrive within kLargeRequestKeepMs (or
  // the peer closed), keeping that request's memory meanwhile.
  bool NextRequestComes();
  // Gives the memory of a large request back once the connection idles: the body's block and
  // what the handler freed of it in this thread's arena.
  void ReleaseLargeRequest();

  const int fd_;
  const bool is_unix_;
  const HttpHandler& handler_;
  const ServerOptions& options_;
  const std::atomic<bool>& stopping_;
  ReadBuffer in_;
  HttpRequest request_;  // reused across requests to keep string capacity
  std::string out_;      // response head, reused
};

}  // namespace berth::net

#endif  // BERTH_NET_HTTP_CONNECTION_H_
