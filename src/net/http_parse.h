// HTTP/1.1 message parsing shared by the server and the client: request and response heads,
// chunked body framing, URL decoding. Pure functions over bytes: no I/O, no allocation beyond
// the output objects.
//
// The parsers work on whatever prefix of the stream has been read so far and say
// kIncomplete until the element is whole, so callers read more and call again.
//
// Thread safety: every function is thread-safe.
#ifndef BERTH_NET_HTTP_PARSE_H_
#define BERTH_NET_HTTP_PARSE_H_

#include <cstddef>
#include <cstdint>
#include <map>
#include <string>
#include <string_view>

#include "net/http.h"

namespace berth::net {

enum class ParseResult {
  kIncomplete,  // more bytes are needed
  kOk,
  kError,  // see the error status that the function returns alongside
};

// How the body after a head is delimited.
enum class BodyKind {
  kNone,        // no body
  kLength,      // exactly content_length bytes
  kChunked,     // Transfer-Encoding: chunked
  kUntilClose,  // responses only: the body runs until the server closes
};

struct RequestHead {
  size_t head_bytes = 0;  // the request line and headers, including the final empty line
  bool http11 = true;     // HTTP/1.1 (else HTTP/1.0)
  bool keep_alive = true;
  BodyKind body = BodyKind::kNone;
  uint64_t content_length = 0;
  bool expect_continue = false;  // "Expect: 100-continue"
};

// Parses a request head from the start of `data` into req->method/target/path/query/headers
// (other fields are left alone). Leading empty lines are skipped (RFC 9112 2.2).
// On kError, *error_status is the HTTP status to answer with: 400 (malformed), 431 (head longer
// than max_header_bytes), 501 (unknown Transfer-Encoding), 505 (not HTTP/1.0 or 1.1).
ParseResult ParseRequestHead(std::string_view data, size_t max_header_bytes, HttpRequest* req,
                             RequestHead* head, int* error_status);

struct ResponseHead {
  size_t head_bytes = 0;
  bool keep_alive = true;
  BodyKind body = BodyKind::kNone;
  uint64_t content_length = 0;
};

// Parses a response head into resp->status and resp->headers. `head_request` says the response
// answers a HEAD request (so it has no body whatever its headers say). On kError the response is
// malformed or longer than max_header_bytes.
ParseResult ParseResponseHead(std::string_view data, size_t max_header_bytes, bool head_request,
                              ClientResponse* resp, ResponseHead* head);

// One element of a chunked body.
struct Chunk {
  std::string_view payload;  // points into the parsed data; empty for the last chunk
  size_t consumed = 0;       // bytes of `data` that make up the element
  bool last = false;         // the zero-size chunk and its trailers: the body is complete
  bool too_large = false;    // on kError: the chunk is larger than max_chunk_bytes
};

// Parses one chunk (size line, payload, CRLF) or the last chunk with its trailers from the start
// of `data`. kError when malformed, when a chunk is larger than max_chunk_bytes, or when the
// trailers are longer than max_trailer_bytes. The size check happens as soon as the size line
// is in, so the caller never buffers an over-large chunk.
ParseResult ParseChunk(std::string_view data, uint64_t max_chunk_bytes, size_t max_trailer_bytes,
                       Chunk* chunk);

// Percent-decodes `in` into *out (appending). With plus_as_space, '+' becomes ' ' (query strings,
// application/x-www-form-urlencoded). Returns false on a malformed escape ("%4", "%zz").
bool PercentDecode(std::string_view in, bool plus_as_space, std::string* out);

// Splits "a=1&b=x+y&c" into {a:1, b:"x y", c:""}; the last of repeated keys wins.
// Returns false on a malformed escape.
bool ParseQuery(std::string_view query, std::map<std::string, std::string>* out);

// True when the comma-separated header value contains `token` (case-insensitive), as in
// "Connection: keep-alive, Close".
bool HeaderHasToken(std::string_view value, std::string_view token);

// "OK", "Not Found", ...; "Unknown" for codes without a registered phrase.
std::string_view ReasonPhrase(int status);

}  // namespace berth::net

#endif  // BERTH_NET_HTTP_PARSE_H_
