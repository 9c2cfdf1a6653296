// SPDY/3.1 frames (draft-mbelshe-httpbis-spdy-00 with 3.1's flow control), as much as
// `kubectl port-forward` needs (docs/adr/0006-pod-streams.md): kubectl 1.31 and newer tunnel a
// SPDY/3.1 session inside a WebSocket (subprotocol SPDY/3.1+portforward.k8s.io), its bytes split
// across binary messages at arbitrary points.
//
// Frames: a data frame is [stream id (31 bits)] [flags (8)] [length (24)] [payload]; a control
// frame is [1 | version 3 (15 bits)] [type (16)] [flags (8)] [length (24)] [payload]. SYN_STREAM,
// SYN_REPLY and HEADERS carry a header block, zlib-compressed with the fixed SPDY/3 dictionary,
// one zlib stream per direction for the whole session (so every block must be decompressed, in
// order, even one the reader ignores).
//
// Bounds: a frame's payload is at most `max_payload` (DecodeFrame); a header block decompresses
// to at most HeaderDecompressor's `max_block` bytes (a decompression bomb stops there).
//
// Thread safety: the functions are pure; a HeaderCompressor / HeaderDecompressor is one zlib
// stream, used by one thread at a time.
// Used by: the agent's port-forward (src/agent/pod_portforward.cc); tests (spdy_test.cc);
// fuzz/spdy_frame_fuzz.cc.
#ifndef BERTH_NET_SPDY_H_
#define BERTH_NET_SPDY_H_

#include <cstddef>
#include <cstdint>
#include <memory>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "common/status.h"

namespace berth::net::spdy {

constexpr uint16_t kVersion = 3;
constexpr size_t kFrameHeader = 8;

// Control frame types; a frame of another type is decoded (and is to be ignored, as the
// specification says).
enum class Type : uint16_t {
  kData = 0,  // not a control type: a data frame
  kSynStream = 1,
  kSynReply = 2,
  kRstStream = 3,
  kSettings = 4,
  kPing = 6,
  kGoAway = 7,
  kHeaders = 8,
  kWindowUpdate = 9,
};

constexpr uint8_t kFlagFin = 0x01;
constexpr uint8_t kFlagUnidirectional = 0x02;  // SYN_STREAM

// RST_STREAM status codes used here.
constexpr uint32_t kRstProtocolError = 1;
constexpr uint32_t kRstRefusedStream = 3;
constexpr uint32_t kRstCancel = 5;
constexpr uint32_t kRstInternalError = 6;

struct Frame {
  bool control = false;
  uint16_t type = 0;  // Type's values for control frames; 0 for data
  uint8_t flags = 0;
  // DATA, SYN_STREAM, SYN_REPLY, RST_STREAM, HEADERS, WINDOW_UPDATE: the stream; GOAWAY: the last
  // good stream id.
  uint32_t stream_id = 0;
  uint32_t associated_id = 0;  // SYN_STREAM
  uint8_t priority = 0;        // SYN_STREAM (3 bits)
  // RST_STREAM and GOAWAY: the status code; PING: its id; WINDOW_UPDATE: the delta (31 bits);
  // SETTINGS: the number of entries.
  uint32_t value = 0;
  // DATA: the payload; SYN_STREAM, SYN_REPLY, HEADERS: the compressed header block; SETTINGS:
  // the entries (8 bytes each); unknown control types: the payload.
  std::string data;

  Type kind() const { return control ? static_cast<Type>(type) : Type::kData; }
  bool fin() const { return (flags & kFlagFin) != 0; }
};

enum class DecodeResult { kFrame, kIncomplete, kError };

// Decodes the frame at the start of `in`: kFrame with *used the bytes it took; kIncomplete
// when more bytes are needed (nothing is set); kError with *error naming the problem (a length
// over `max_payload`, a control frame of another version, a payload too short for its type,
// a zero stream id where one is required).
DecodeResult DecodeFrame(std::string_view in, size_t max_payload, Frame* out, size_t* used,
                         std::string* error);

// The bytes of a frame (the inverse of DecodeFrame). REQUIRES: data fits in 24 bits.
std::string EncodeFrame(const Frame& f);
std::string DataFrame(uint32_t stream_id, std::string_view data, bool fin);
std::string SynReplyFrame(uint32_t stream_id, std::string block, bool fin);
std::string RstStreamFrame(uint32_t stream_id, uint32_t status);
std::string PingFrame(uint32_t id);
std::string GoAwayFrame(uint32_t last_good_stream_id, uint32_t status);

// A header block's name/value pairs in order; a value with several entries keeps them joined
// by NUL, as on the wire. Names are lower case on the wire.
using Headers = std::vector<std::pair<std::string, std::string>>;
// The value of `name` (ASCII case-insensitive); "" when absent.
std::string_view FindHeader(const Headers& headers, std::string_view name);

// The SPDY/3 header compression dictionary (1,423 bytes).
std::string_view Dictionary();

// The uncompressed header block format: [count (32)] then per pair [len (32)] name [len (32)]
// value. INVALID_ARGUMENT naming what is wrong: truncated, trailing bytes, an empty name, a
// duplicate name.
Result<Headers> ParseHeaderBlock(std::string_view block);
std::string SerializeHeaderBlock(const Headers& headers);

// One direction's header decompression: every block the peer sends, in order.
class HeaderDecompressor {
 public:
  explicit HeaderDecompressor(size_t max_block = 64 << 10);
  ~HeaderDecompressor();
  HeaderDecompressor(const HeaderDecompressor&) = delete;
  HeaderDecompressor& operator=(const HeaderDecompressor&) = delete;
  // INVALID_ARGUMENT for corrupt zlib data, a block over max_block once decompressed, or a bad
  // block (ParseHeaderBlock). After an error the session cannot continue (the zlib stream is
  // out of step).
  Result<Headers> Decompress(std::string_view compressed);

 private:
  struct State;
  std::unique_ptr<State> state_;
  const size_t max_block_;
};

// One direction's header compression.
class HeaderCompressor {
 public:
  HeaderCompressor();
  ~HeaderCompressor();
  HeaderCompressor(const HeaderCompressor&) = delete;
  HeaderCompressor& operator=(const HeaderCompressor&) = delete;
  // The compressed block (ending in a sync flush, so the peer can decompress it whole).
  std::string Compress(const Headers& headers);

 private:
  struct State;
  std::unique_ptr<State> state_;
};

}  // namespace berth::net::spdy

#endif  // BERTH_NET_SPDY_H_
