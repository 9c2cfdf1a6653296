#include "net/http_parse.h"

#include <algorithm>
#include <utility>

#include "common/strings.h"

namespace berth::net {
namespace {

constexpr std::string_view kCrlf = "\r\n";
// A chunk-size line longer than this (hex digits plus extensions) is malformed.
constexpr size_t kMaxChunkLine = 1024;

// RFC 9110 5.6.2 tchar.
bool IsTokenChar(char c) {
  if ((c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9')) return true;
  return c != '\0' && std::string_view("!#$%&'*+-.^_`|~").find(c) != std::string_view::npos;
}

bool IsToken(std::string_view s) {
  return !s.empty() && std::all_of(s.begin(), s.end(), IsTokenChar);
}

// Control characters other than HTAB (DEL included) may not appear in a header value.
bool IsControl(char c) {
  auto u = static_cast<unsigned char>(c);
  return (u < 0x20 && c != '\t') || u == 0x7f;
}

int HexValue(char c) {
  if (c >= '0' && c <= '9') return c - '0';
  if (c >= 'a' && c <= 'f') return c - 'a' + 10;
  if (c >= 'A' && c <= 'F') return c - 'A' + 10;
  return -1;
}

// Parses 1-19 decimal digits (a Content-Length); false otherwise.
bool ParseDecimal(std::string_view s, uint64_t* out) {
  if (s.empty() || s.size() > 19) return false;
  uint64_t v = 0;
  for (char c : s) {
    if (c < '0' || c > '9') return false;
    v = v * 10 + static_cast<uint64_t>(c - '0');
  }
  *out = v;
  return true;
}

// Parses header lines (each ending in CRLF; the final empty line excluded) into *headers with
// lower-cased names. Repeated headers are joined with ", " except Content-Length, whose copies
// must agree.
bool ParseHeaderBlock(std::string_view block, std::map<std::string, std::string>* headers) {
  while (!block.empty()) {
    size_t eol = block.find(kCrlf);
    if (eol == std::string_view::npos) return false;
    std::string_view line = block.substr(0, eol);
    block.remove_prefix(eol + kCrlf.size());
    size_t colon = line.find(':');
    // No colon, or obs-fold / whitespace before the colon (RFC 9112 5.1: reject).
    if (colon == std::string_view::npos || !IsToken(line.substr(0, colon))) return false;
    std::string_view value = Trim(line.substr(colon + 1));
    if (std::any_of(value.begin(), value.end(), IsControl)) return false;
    std::string name(line.substr(0, colon));
    for (char& c : name) c = ToLowerAscii(c);
    auto [it, inserted] = headers->try_emplace(std::move(name), value);
    if (inserted) continue;
    if (it->first == "content-length") {
      if (it->second != value) return false;
      continue;
    }
    it->second += ", ";
    it->second += value;
  }
  return true;
}

// Looks up a lower-case header name.
const std::string* FindHeader(const std::map<std::string, std::string>& headers,
                              const std::string& name) {
  auto it = headers.find(name);
  return it == headers.end() ? nullptr : &it->second;
}

// Parses "HTTP/1.x". Returns the minor version (0 or 1), or -1 for another well-formed version
// (answered 505), or -2 when malformed.
int ParseHttpVersion(std::string_view v) {
  if (v.size() != 8 || v.substr(0, 5) != "HTTP/" || v[6] != '.') return -2;
  if (v[5] < '0' || v[5] > '9' || v[7] < '0' || v[7] > '9') return -2;
  if (v[5] == '1' && (v[7] == '0' || v[7] == '1')) return v[7] - '0';
  return -1;
}

struct RequestLine {
  std::string_view method;
  std::string_view target;
  int minor = 1;
};

// Splits "METHOD SP target SP HTTP/1.x". Returns 0, or the error status (400, 505).
int ParseRequestLine(std::string_view line, RequestLine* out) {
  size_t sp1 = line.find(' ');
  size_t sp2 = sp1 == std::string_view::npos ? sp1 : line.find(' ', sp1 + 1);
  if (sp2 == std::string_view::npos || line.find(' ', sp2 + 1) != std::string_view::npos) {
    return 400;
  }
  out->method = line.substr(0, sp1);
  out->target = line.substr(sp1 + 1, sp2 - sp1 - 1);
  if (!IsToken(out->method)) return 400;
  out->minor = ParseHttpVersion(line.substr(sp2 + 1));
  if (out->minor == -1) return 505;
  return out->minor < 0 ? 400 : 0;
}

// Checks what has arrived of an incomplete head, so that garbage is answered at once rather than
// after max_header_bytes. Returns 0 when it can still become a request, else an error status.
int CheckPartialHead(std::string_view data) {
  size_t eol = data.find(kCrlf);
  if (eol != std::string_view::npos) {
    RequestLine line;
    return ParseRequestLine(data.substr(0, eol), &line);
  }
  if (!data.empty() && data.back() == '\r') data.remove_suffix(1);
  if (std::any_of(data.begin(), data.end(), IsControl)) return 400;
  std::string_view method = data.substr(0, data.find(' '));
  return std::all_of(method.begin(), method.end(), IsTokenChar) ? 0 : 400;
}

// Fills req->target, path and query from a request target; false when malformed.
bool ParseTarget(std::string_view target, HttpRequest* req) {
  if (target.empty() || std::any_of(target.begin(), target.end(), [](char c) {
        auto u = static_cast<unsigned char>(c);
        return u <= 0x20 || u == 0x7f;
      })) {
    return false;
  }
  if (target != "*" && target.front() != '/') return false;  // origin-form only
  req->target.assign(target);
  std::string_view rest = target.substr(0, target.find('#'));
  size_t q = rest.find('?');
  std::string_view path = rest.substr(0, q);
  req->path.clear();
  if (!PercentDecode(path, false, &req->path)) return false;
  if (req->path.find('\0') != std::string::npos) return false;
  req->query.clear();
  return q == std::string_view::npos || ParseQuery(rest.substr(q + 1), &req->query);
}

// Decides the body framing of a request from its headers. Returns 0 or an error status.
int RequestFraming(const std::map<std::string, std::string>& headers, RequestHead* head) {
  const std::string* te = FindHeader(headers, "transfer-encoding");
  const std::string* cl = FindHeader(headers, "content-length");
  head->body = BodyKind::kNone;
  head->content_length = 0;
  if (te != nullptr) {
    if (cl != nullptr) return 400;  // both: a request-smuggling vector (RFC 9112 6.3)
    if (!EqualsIgnoreCase(*te, "chunked")) return 501;
    head->body = BodyKind::kChunked;
    return 0;
  }
  if (cl != nullptr) {
    if (!ParseDecimal(*cl, &head->content_length)) return 400;
    if (head->content_length > 0) head->body = BodyKind::kLength;
  }
  return 0;
}

// Finds the end of the head ("\r\n\r\n") in data[start..]; npos when absent. A head with no
// header lines ends right after the start line's CRLF.
size_t FindHeadEnd(std::string_view data, size_t start) {
  size_t pos = data.find("\r\n\r\n", start);
  return pos == std::string_view::npos ? pos : pos + 4;
}

}  // namespace

ParseResult ParseRequestHead(std::string_view data, size_t max_header_bytes, HttpRequest* req,
                             RequestHead* head, int* error_status) {
  size_t start = 0;
  while (data.substr(start, 2) == kCrlf) start += 2;
  size_t end = FindHeadEnd(data, start);
  if (end == std::string_view::npos || end - start > max_header_bytes) {
    *error_status = 431;
    if (data.size() - start > max_header_bytes) return ParseResult::kError;
    *error_status = CheckPartialHead(data.substr(start));
    return *error_status == 0 ? ParseResult::kIncomplete : ParseResult::kError;
  }
  std::string_view head_text = data.substr(start, end - start - 2);  // keeps each line's CRLF
  size_t eol = head_text.find(kCrlf);
  RequestLine line;
  *error_status = ParseRequestLine(head_text.substr(0, eol), &line);
  if (*error_status != 0) return ParseResult::kError;
  *error_status = 400;
  if (!ParseTarget(line.target, req)) return ParseResult::kError;
  req->method.assign(line.method);
  req->headers.clear();
  if (!ParseHeaderBlock(head_text.substr(eol + kCrlf.size()), &req->headers)) {
    return ParseResult::kError;
  }
  int framing_error = RequestFraming(req->headers, head);
  if (framing_error != 0) {
    *error_status = framing_error;
    return ParseResult::kError;
  }
  head->head_bytes = end;
  head->http11 = line.minor == 1;
  const std::string* connection = FindHeader(req->headers, "connection");
  head->keep_alive =
      head->http11 && (connection == nullptr || !HeaderHasToken(*connection, "close"));
  const std::string* expect = FindHeader(req->headers, "expect");
  head->expect_continue = expect != nullptr && EqualsIgnoreCase(*expect, "100-continue");
  *error_status = 0;
  return ParseResult::kOk;
}

ParseResult ParseResponseHead(std::string_view data, size_t max_header_bytes, bool head_request,
                              ClientResponse* resp, ResponseHead* head) {
  size_t end = FindHeadEnd(data, 0);
  if (end == std::string_view::npos) {
    return data.size() > max_header_bytes ? ParseResult::kError : ParseResult::kIncomplete;
  }
  if (end > max_header_bytes) return ParseResult::kError;
  std::string_view head_text = data.substr(0, end - 2);
  size_t eol = head_text.find(kCrlf);
  std::string_view line = head_text.substr(0, eol);
  // "HTTP/1.1 200 OK"; the reason phrase may be empty, and some servers omit the space before it.
  if (line.size() < 12 || line[8] != ' ' || (line.size() > 12 && line[12] != ' ')) {
    return ParseResult::kError;
  }
  int minor = ParseHttpVersion(line.substr(0, 8));
  if (minor < 0) return ParseResult::kError;
  int status = 0;
  for (char c : line.substr(9, 3)) {
    if (c < '0' || c > '9') return ParseResult::kError;
    status = status * 10 + (c - '0');
  }
  resp->status = status;
  resp->headers.clear();
  if (!ParseHeaderBlock(head_text.substr(eol + kCrlf.size()), &resp->headers)) {
    return ParseResult::kError;
  }
  head->head_bytes = end;
  const std::string* connection = FindHeader(resp->headers, "connection");
  head->keep_alive = minor == 1
                         ? connection == nullptr || !HeaderHasToken(*connection, "close")
                         : connection != nullptr && HeaderHasToken(*connection, "keep-alive");
  head->body = BodyKind::kNone;
  head->content_length = 0;
  if (head_request || status < 200 || status == 204 || status == 304) return ParseResult::kOk;
  const std::string* te = FindHeader(resp->headers, "transfer-encoding");
  const std::string* cl = FindHeader(resp->headers, "content-length");
  if (te != nullptr) {
    if (!EqualsIgnoreCase(*te, "chunked")) return ParseResult::kError;
    head->body = BodyKind::kChunked;
  } else if (cl != nullptr) {
    if (!ParseDecimal(*cl, &head->content_length)) return ParseResult::kError;
    head->body = head->content_length > 0 ? BodyKind::kLength : BodyKind::kNone;
  } else {
    head->body = BodyKind::kUntilClose;
    head->keep_alive = false;
  }
  return ParseResult::kOk;
}

ParseResult ParseChunk(std::string_view data, uint64_t max_chunk_bytes, size_t max_trailer_bytes,
                       Chunk* chunk) {
  size_t eol = data.substr(0, kMaxChunkLine).find(kCrlf);
  if (eol == std::string_view::npos) {
    return data.size() >= kMaxChunkLine ? ParseResult::kError : ParseResult::kIncomplete;
  }
  std::string_view line = data.substr(0, eol);
  chunk->too_large = false;
  uint64_t size = 0;
  size_t digits = 0;
  for (; digits < line.size() && HexValue(line[digits]) >= 0; ++digits) {
    if (digits == 15) return ParseResult::kError;  // over 2^60 bytes: nonsense
    size = size * 16 + static_cast<uint64_t>(HexValue(line[digits]));
  }
  std::string_view ext = Trim(line.substr(digits));
  if (digits == 0 || (!ext.empty() && ext.front() != ';')) return ParseResult::kError;
  if (std::any_of(ext.begin(), ext.end(), IsControl)) return ParseResult::kError;
  chunk->too_large = size > max_chunk_bytes;
  if (chunk->too_large) return ParseResult::kError;
  size_t pos = eol + kCrlf.size();
  if (size == 0) {
    // Trailer fields, ignored, up to an empty line.
    for (;;) {
      size_t next = data.find(kCrlf, pos);
      if (next == std::string_view::npos) {
        return data.size() - eol > max_trailer_bytes ? ParseResult::kError
                                                     : ParseResult::kIncomplete;
      }
      if (next - eol > max_trailer_bytes) return ParseResult::kError;
      if (next == pos) break;
      pos = next + kCrlf.size();
    }
    chunk->payload = {};
    chunk->consumed = pos + kCrlf.size();
    chunk->last = true;
    return ParseResult::kOk;
  }
  if (data.size() - pos < size + kCrlf.size()) return ParseResult::kIncomplete;
  if (data.substr(pos + size, 2) != kCrlf) return ParseResult::kError;
  chunk->payload = data.substr(pos, size);
  chunk->consumed = pos + size + kCrlf.size();
  chunk->last = false;
  return ParseResult::kOk;
}

bool PercentDecode(std::string_view in, bool plus_as_space, std::string* out) {
  out->reserve(out->size() + in.size());
  for (size_t i = 0; i < in.size(); ++i) {
    char c = in[i];
    if (c == '%') {
      if (i + 2 >= in.size()) return false;
      int hi = HexValue(in[i + 1]);
      int lo = HexValue(in[i + 2]);
      if (hi < 0 || lo < 0) return false;
      out->push_back(static_cast<char>(hi * 16 + lo));
      i += 2;
    } else if (c == '+' && plus_as_space) {
      out->push_back(' ');
    } else {
      out->push_back(c);
    }
  }
  return true;
}

bool ParseQuery(std::string_view query, std::map<std::string, std::string>* out) {
  std::string key;
  std::string value;
  while (!query.empty()) {
    size_t amp = query.find('&');
    std::string_view pair = query.substr(0, amp);
    query.remove_prefix(amp == std::string_view::npos ? query.size() : amp + 1);
    if (pair.empty()) continue;
    size_t eq = pair.find('=');
    key.clear();
    value.clear();
    if (!PercentDecode(pair.substr(0, eq), true, &key)) return false;
    if (eq != std::string_view::npos && !PercentDecode(pair.substr(eq + 1), true, &value)) {
      return false;
    }
    (*out)[key] = value;
  }
  return true;
}

bool HeaderHasToken(std::string_view value, std::string_view token) {
  while (!value.empty()) {
    size_t comma = value.find(',');
    if (EqualsIgnoreCase(Trim(value.substr(0, comma)), token)) return true;
    if (comma == std::string_view::npos) break;
    value.remove_prefix(comma + 1);
  }
  return false;
}

std::string_view ReasonPhrase(int status) {
  struct Reason {
    int status;
    std::string_view phrase;
  };
  static constexpr Reason kReasons[] = {
      {100, "Continue"},
      {101, "Switching Protocols"},
      {200, "OK"},
      {201, "Created"},
      {202, "Accepted"},
      {204, "No Content"},
      {206, "Partial Content"},
      {301, "Moved Permanently"},
      {302, "Found"},
      {303, "See Other"},
      {304, "Not Modified"},
      {307, "Temporary Redirect"},
      {308, "Permanent Redirect"},
      {400, "Bad Request"},
      {401, "Unauthorized"},
      {403, "Forbidden"},
      {404, "Not Found"},
      {405, "Method Not Allowed"},
      {406, "Not Acceptable"},
      {408, "Request Timeout"},
      {409, "Conflict"},
      {410, "Gone"},
      {411, "Length Required"},
      {412, "Precondition Failed"},
      {413, "Content Too Large"},
      {414, "URI Too Long"},
      {415, "Unsupported Media Type"},
      {417, "Expectation Failed"},
      {422, "Unprocessable Content"},
      {429, "Too Many Requests"},
      {431, "Request Header Fields Too Large"},
      {500, "Internal Server Error"},
      {501, "Not Implemented"},
      {502, "Bad Gateway"},
      {503, "Service Unavailable"},
      {504, "Gateway Timeout"},
      {505, "HTTP Version Not Supported"},
  };
  for (const Reason& r : kReasons) {
    if (r.status == status) return r.phrase;
  }
  return "Unknown";
}

std::string UrlDecode(std::string_view s) {
  std::string out;
  out.reserve(s.size());
  for (size_t i = 0; i < s.size(); ++i) {
    if (s[i] == '%' && i + 2 < s.size()) {
      int hi = HexValue(s[i + 1]);
      int lo = HexValue(s[i + 2]);
      if (hi >= 0 && lo >= 0) {
        out.push_back(static_cast<char>(hi * 16 + lo));
        i += 2;
        continue;
      }
    }
    out.push_back(s[i]);  // a malformed escape stays as it is
  }
  return out;
}

std::string UrlEncode(std::string_view s) {
  static constexpr char kHex[] = "0123456789ABCDEF";
  std::string out;
  out.reserve(s.size());
  for (char c : s) {
    bool unreserved = (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') ||
                      c == '-' || c == '.' || c == '_' || c == '~';
    if (unreserved) {
      out.push_back(c);
    } else {
      auto u = static_cast<unsigned char>(c);
      out.push_back('%');
      out.push_back(kHex[u >> 4]);
      out.push_back(kHex[u & 15]);
    }
  }
  return out;
}

std::string HttpRequest::Header(std::string_view name) const {
  std::string key(name);
  for (char& c : key) c = ToLowerAscii(c);
  auto it = headers.find(key);
  return it == headers.end() ? std::string() : it->second;
}

}  // namespace berth::net
