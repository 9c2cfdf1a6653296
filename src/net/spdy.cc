#include "net/spdy.h"

#include <strings.h>
#include <zlib.h>

#include <cstring>

namespace berth::net::spdy {
namespace {

uint32_t Get32(std::string_view s, size_t at) {
  return (uint32_t{static_cast<uint8_t>(s[at])} << 24) |
         (uint32_t{static_cast<uint8_t>(s[at + 1])} << 16) |
         (uint32_t{static_cast<uint8_t>(s[at + 2])} << 8) |
         uint32_t{static_cast<uint8_t>(s[at + 3])};
}

void Put32(std::string* out, uint32_t v) {
  out->push_back(static_cast<char>(v >> 24));
  out->push_back(static_cast<char>(v >> 16));
  out->push_back(static_cast<char>(v >> 8));
  out->push_back(static_cast<char>(v));
}

// The payload's fixed part each known control type needs; the exact length where it has one.
struct Shape {
  size_t min;
  bool exact;
  bool needs_stream;
};
bool ShapeOf(uint16_t type, Shape* s) {
  switch (static_cast<Type>(type)) {
    case Type::kSynStream:
      *s = {10, false, true};
      return true;
    case Type::kSynReply:
      *s = {4, false, true};
      return true;
    case Type::kRstStream:
      *s = {8, true, true};
      return true;
    case Type::kSettings:
      *s = {4, false, false};
      return true;
    case Type::kPing:
      *s = {4, true, false};
      return true;
    case Type::kGoAway:
      *s = {8, true, false};
      return true;
    case Type::kHeaders:
      *s = {4, false, true};
      return true;
    // The session window's update is stream 0: allowed.
    case Type::kWindowUpdate:
      *s = {8, true, false};
      return true;
    default:
      return false;
  }
}

std::string TypeName(uint16_t type) {
  switch (static_cast<Type>(type)) {
    case Type::kSynStream:
      return "SYN_STREAM";
    case Type::kSynReply:
      return "SYN_REPLY";
    case Type::kRstStream:
      return "RST_STREAM";
    case Type::kSettings:
      return "SETTINGS";
    case Type::kPing:
      return "PING";
    case Type::kGoAway:
      return "GOAWAY";
    case Type::kHeaders:
      return "HEADERS";
    case Type::kWindowUpdate:
      return "WINDOW_UPDATE";
    default:
      return "control frame type " + std::to_string(type);
  }
}

// The SPDY/3 dictionary: length-prefixed header names and values, then common value text.
std::string BuildDictionary() {
  static const char* const kWords[] = {"options",
                                       "head",
                                       "post",
                                       "put",
                                       "delete",
                                       "trace",
                                       "accept",
                                       "accept-charset",
                                       "accept-encoding",
                                       "accept-language",
                                       "accept-ranges",
                                       "age",
                                       "allow",
                                       "authorization",
                                       "cache-control",
                                       "connection",
                                       "content-base",
                                       "content-encoding",
                                       "content-language",
                                       "content-length",
                                       "content-location",
                                       "content-md5",
                                       "content-range",
                                       "content-type",
                                       "date",
                                       "etag",
                                       "expect",
                                       "expires",
                                       "from",
                                       "host",
                                       "if-match",
                                       "if-modified-since",
                                       "if-none-match",
                                       "if-range",
                                       "if-unmodified-since",
                                       "last-modified",
                                       "location",
                                       "max-forwards",
                                       "pragma",
                                       "proxy-authenticate",
                                       "proxy-authorization",
                                       "range",
                                       "referer",
                                       "retry-after",
                                       "server",
                                       "te",
                                       "trailer",
                                       "transfer-encoding",
                                       "upgrade",
                                       "user-agent",
                                       "vary",
                                       "via",
                                       "warning",
                                       "www-authenticate",
                                       "method",
                                       "get",
                                       "status",
                                       "200 OK",
                                       "version",
                                       "HTTP/1.1",
                                       "url",
                                       "public",
                                       "set-cookie",
                                       "keep-alive",
                                       "origin"};
  std::string d;
  for (const char* w : kWords) {
    Put32(&d, static_cast<uint32_t>(std::strlen(w)));
    d += w;
  }
  d += "100101201202205206300302303304305306307402405406407408409410411412413414415416417502504505"
       "203 Non-Authoritative Information204 No Content301 Moved Permanently400 Bad Request401 "
       "Unauthorized403 Forbidden404 Not Found500 Internal Server Error501 Not Implemented503 "
       "Service UnavailableJan Feb Mar Apr May Jun Jul Aug Sept Oct Nov Dec 00:00:00 Mon, Tue, "
       "Wed, Thu, Fri, Sat, Sun, GMTchunked,text/html,image/png,image/jpg,image/gif,"
       "application/xml,application/xhtml+xml,text/plain,text/javascript,publicprivatemax-age="
       "gzip,deflate,sdchcharset=utf-8charset=iso-8859-1,utf-,*,enq=0.";
  return d;
}

}  // namespace

std::string_view Dictionary() {
  static const std::string* const kDictionary = new std::string(BuildDictionary());
  return *kDictionary;
}

DecodeResult DecodeFrame(std::string_view in, size_t max_payload, Frame* out, size_t* used,
                         std::string* error) {
  if (in.size() < kFrameHeader) return DecodeResult::kIncomplete;
  const uint32_t first = Get32(in, 0);
  const uint32_t second = Get32(in, 4);
  const uint8_t flags = static_cast<uint8_t>(second >> 24);
  const size_t length = second & 0xffffff;
  if (length > max_payload) {
    *error = "a SPDY frame of " + std::to_string(length) + " bytes is over the limit of " +
             std::to_string(max_payload);
    return DecodeResult::kError;
  }
  if (in.size() < kFrameHeader + length) return DecodeResult::kIncomplete;
  std::string_view p = in.substr(kFrameHeader, length);
  Frame f;
  f.flags = flags;
  if ((first & 0x80000000u) == 0) {
    f.stream_id = first;
    if (f.stream_id == 0) {
      *error = "a SPDY data frame on stream 0";
      return DecodeResult::kError;
    }
    f.data = std::string(p);
  } else {
    f.control = true;
    const uint16_t version = static_cast<uint16_t>((first >> 16) & 0x7fff);
    f.type = static_cast<uint16_t>(first & 0xffff);
    if (version != kVersion) {
      *error = "SPDY version " + std::to_string(version) + " is not spoken (only 3.1)";
      return DecodeResult::kError;
    }
    Shape shape;
    if (!ShapeOf(f.type, &shape)) {
      f.data = std::string(p);  // unknown: the caller ignores it
    } else {
      if (length < shape.min || (shape.exact && length != shape.min)) {
        *error = "a SPDY " + TypeName(f.type) + " frame of " + std::to_string(length) + " bytes (" +
                 (shape.exact ? "" : "at least ") + std::to_string(shape.min) + " expected)";
        return DecodeResult::kError;
      }
      switch (static_cast<Type>(f.type)) {
        case Type::kSynStream:
          f.stream_id = Get32(p, 0) & 0x7fffffff;
          f.associated_id = Get32(p, 4) & 0x7fffffff;
          f.priority = static_cast<uint8_t>(static_cast<uint8_t>(p[8]) >> 5);
          f.data = std::string(p.substr(10));
          break;
        case Type::kSynReply:
        case Type::kHeaders:
          f.stream_id = Get32(p, 0) & 0x7fffffff;
          f.data = std::string(p.substr(4));
          break;
        case Type::kRstStream:
          f.stream_id = Get32(p, 0) & 0x7fffffff;
          f.value = Get32(p, 4);
          break;
        case Type::kSettings:
          f.value = Get32(p, 0);
          if (length != 4 + size_t{f.value} * 8) {
            *error = "a SPDY SETTINGS frame of " + std::to_string(length) + " bytes for " +
                     std::to_string(f.value) + " entries";
            return DecodeResult::kError;
          }
          f.data = std::string(p.substr(4));
          break;
        case Type::kPing:
          f.value = Get32(p, 0);
          break;
        case Type::kGoAway:
          f.stream_id = Get32(p, 0) & 0x7fffffff;
          f.value = Get32(p, 4);
          break;
        case Type::kWindowUpdate:
          f.stream_id = Get32(p, 0) & 0x7fffffff;
          f.value = Get32(p, 4) & 0x7fffffff;
          break;
        default:
          break;
      }
      if (shape.needs_stream && f.stream_id == 0) {
        *error = "a SPDY " + TypeName(f.type) + " frame on stream 0";
        return DecodeResult::kError;
      }
    }
  }
  *out = std::move(f);
  *used = kFrameHeader + length;
  return DecodeResult::kFrame;
}

std::string EncodeFrame(const Frame& f) {
  std::string payload;
  if (f.control) {
    switch (static_cast<Type>(f.type)) {
      case Type::kSynStream:
        Put32(&payload, f.stream_id & 0x7fffffff);
        Put32(&payload, f.associated_id & 0x7fffffff);
        payload.push_back(static_cast<char>((f.priority & 7) << 5));
        payload.push_back('\0');
        payload += f.data;
        break;
      case Type::kSynReply:
      case Type::kHeaders:
        Put32(&payload, f.stream_id & 0x7fffffff);
        payload += f.data;
        break;
      case Type::kRstStream:
      case Type::kGoAway:
        Put32(&payload, f.stream_id & 0x7fffffff);
        Put32(&payload, f.value);
        break;
      case Type::kWindowUpdate:
        Put32(&payload, f.stream_id & 0x7fffffff);
        Put32(&payload, f.value & 0x7fffffff);
        break;
      case Type::kSettings:
        Put32(&payload, f.value);
        payload += f.data;
        break;
      case Type::kPing:
        Put32(&payload, f.value);
        break;
      default:
        payload = f.data;
        break;
    }
  } else {
    payload = f.data;
  }
  std::string out;
  out.reserve(kFrameHeader + payload.size());
  Put32(&out,
        f.control ? 0x80000000u | (uint32_t{kVersion} << 16) | f.type : (f.stream_id & 0x7fffffff));
  Put32(&out, (uint32_t{f.flags} << 24) | (static_cast<uint32_t>(payload.size()) & 0xffffff));
  out += payload;
  return out;
}

std::string DataFrame(uint32_t stream_id, std::string_view data, bool fin) {
  std::string out;
  out.reserve(kFrameHeader + data.size());
  Put32(&out, stream_id & 0x7fffffff);
  Put32(&out, (uint32_t{fin ? kFlagFin : uint8_t{0}} << 24) |
                  (static_cast<uint32_t>(data.size()) & 0xffffff));
  out += data;
  return out;
}

std::string SynReplyFrame(uint32_t stream_id, std::string block, bool fin) {
  Frame f;
  f.control = true;
  f.type = static_cast<uint16_t>(Type::kSynReply);
  f.flags = fin ? kFlagFin : 0;
  f.stream_id = stream_id;
  f.data = std::move(block);
  return EncodeFrame(f);
}

std::string RstStreamFrame(uint32_t stream_id, uint32_t status) {
  Frame f;
  f.control = true;
  f.type = static_cast<uint16_t>(Type::kRstStream);
  f.stream_id = stream_id;
  f.value = status;
  return EncodeFrame(f);
}

std::string PingFrame(uint32_t id) {
  Frame f;
  f.control = true;
  f.type = static_cast<uint16_t>(Type::kPing);
  f.value = id;
  return EncodeFrame(f);
}

std::string GoAwayFrame(uint32_t last_good_stream_id, uint32_t status) {
  Frame f;
  f.control = true;
  f.type = static_cast<uint16_t>(Type::kGoAway);
  f.stream_id = last_good_stream_id;
  f.value = status;
  return EncodeFrame(f);
}

std::string_view FindHeader(const Headers& headers, std::string_view name) {
  for (const auto& [n, v] : headers) {
    if (n.size() == name.size() && ::strncasecmp(n.data(), name.data(), n.size()) == 0) return v;
  }
  return {};
}

Result<Headers> ParseHeaderBlock(std::string_view block) {
  auto truncated = [] { return Status::InvalidArgument("a truncated SPDY header block"); };
  if (block.size() < 4) return truncated();
  const uint32_t count = Get32(block, 0);
  size_t at = 4;
  // Each pair takes at least 8 bytes: a count beyond that is a lie, not an allocation.
  if (count > (block.size() - at) / 8) return truncated();
  Headers out;
  out.reserve(count);
  for (uint32_t i = 0; i < count; ++i) {
    std::string parts[2];
    for (std::string& part : parts) {
      if (block.size() - at < 4) return truncated();
      const uint32_t len = Get32(block, at);
      at += 4;
      if (len > block.size() - at) return truncated();
      part = std::string(block.substr(at, len));
      at += len;
    }
    if (parts[0].empty()) return Status::InvalidArgument("a SPDY header with an empty name");
    for (char& ch : parts[0]) {
      if (ch >= 'A' && ch <= 'Z') ch = static_cast<char>(ch - 'A' + 'a');
    }
    for (const auto& [n, v] : out) {
      if (n == parts[0]) return Status::InvalidArgument("SPDY header \"" + n + "\" given twice");
    }
    out.emplace_back(std::move(parts[0]), std::move(parts[1]));
  }
  if (at != block.size()) return Status::InvalidArgument("bytes after a SPDY header block's end");
  return out;
}

std::string SerializeHeaderBlock(const Headers& headers) {
  std::string out;
  Put32(&out, static_cast<uint32_t>(headers.size()));
  for (const auto& [n, v] : headers) {
    Put32(&out, static_cast<uint32_t>(n.size()));
    out += n;
    Put32(&out, static_cast<uint32_t>(v.size()));
    out += v;
  }
  return out;
}

struct HeaderDecompressor::State {
  z_stream z{};
  bool ok = false;
  bool broken = false;
};

HeaderDecompressor::HeaderDecompressor(size_t max_block)
    : state_(std::make_unique<State>()), max_block_(max_block) {
  state_->ok = inflateInit(&state_->z) == Z_OK;
}

HeaderDecompressor::~HeaderDecompressor() {
  if (state_->ok) inflateEnd(&state_->z);
}

Result<Headers> HeaderDecompressor::Decompress(std::string_view compressed) {
  if (!state_->ok) return Status::Internal("zlib could not start");
  if (state_->broken) {
    return Status::InvalidArgument("the SPDY header stream broke earlier; the session is over");
  }
  z_stream& z = state_->z;
  z.next_in = reinterpret_cast<Bytef*>(const_cast<char*>(compressed.data()));
  z.avail_in = static_cast<uInt>(compressed.size());
  std::string out;
  char buf[4096];
  auto fail = [&](std::string why) {
    state_->broken = true;
    return Status::InvalidArgument(std::move(why));
  };
  while (z.avail_in > 0) {
    z.next_out = reinterpret_cast<Bytef*>(buf);
    z.avail_out = sizeof(buf);
    int rc = inflate(&z, Z_SYNC_FLUSH);
    if (rc == Z_NEED_DICT) {
      const std::string_view dict = Dictionary();
      if (inflateSetDictionary(&z, reinterpret_cast<const Bytef*>(dict.data()),
                               static_cast<uInt>(dict.size())) != Z_OK) {
        return fail("a SPDY header block compressed with another dictionary");
      }
      rc = Z_OK;
    }
    out.append(buf, sizeof(buf) - z.avail_out);
    if (out.size() > max_block_) {
      return fail("a SPDY header block decompresses to more than " + std::to_string(max_block_) +
                  " bytes");
    }
    if (rc == Z_STREAM_END) {
      if (z.avail_in > 0) return fail("bytes after the end of the SPDY header stream");
      state_->broken = true;  // nothing can follow a finished zlib stream
      break;
    }
    if (rc == Z_BUF_ERROR && z.avail_out == sizeof(buf)) break;  // no progress: input used up
    if (rc != Z_OK && rc != Z_BUF_ERROR) {
      return fail(std::string("a corrupt SPDY header block: ") + (z.msg ? z.msg : "zlib error"));
    }
  }
  // Output may still wait inside zlib with the input used up.
  for (;;) {
    z.next_out = reinterpret_cast<Bytef*>(buf);
    z.avail_out = sizeof(buf);
    const int rc = inflate(&z, Z_SYNC_FLUSH);
    const size_t got = sizeof(buf) - z.avail_out;
    out.append(buf, got);
    if (out.size() > max_block_) {
      return fail("a SPDY header block decompresses to more than " + std::to_string(max_block_) +
                  " bytes");
    }
    if (got == 0 || (rc != Z_OK && rc != Z_BUF_ERROR)) break;
  }
  Result<Headers> headers = ParseHeaderBlock(out);
  if (!headers.ok()) state_->broken = true;
  return headers;
}

struct HeaderCompressor::State {
  z_stream z{};
  bool ok = false;
};

HeaderCompressor::HeaderCompressor() : state_(std::make_unique<State>()) {
  State& s = *state_;
  s.ok = deflateInit(&s.z, Z_DEFAULT_COMPRESSION) == Z_OK;
  const std::string_view dict = Dictionary();
  if (s.ok) {
    s.ok = deflateSetDictionary(&s.z, reinterpret_cast<const Bytef*>(dict.data()),
                                static_cast<uInt>(dict.size())) == Z_OK;
  }
}

HeaderCompressor::~HeaderCompressor() {
  deflateEnd(&state_->z);
}

std::string HeaderCompressor::Compress(const Headers& headers) {
  std::string in = SerializeHeaderBlock(headers);
  std::string out;
  if (!state_->ok) return out;
  z_stream& z = state_->z;
  z.next_in = reinterpret_cast<Bytef*>(in.data());
  z.avail_in = static_cast<uInt>(in.size());
  char buf[4096];
  do {
    z.next_out = reinterpret_cast<Bytef*>(buf);
    z.avail_out = sizeof(buf);
    (void)deflate(&z, Z_SYNC_FLUSH);
    out.append(buf, sizeof(buf) - z.avail_out);
  } while (z.avail_out == 0);
  return out;
}

}  // namespace berth::net::spdy
