// net::spdy::DecodeFrame and HeaderDecompressor, the SPDY/3.1 decoder of `kubectl port-forward`
// (src/net/spdy.h), fed a byte stream as the agent reads it from the tunnel. Every frame decoded
// re-encodes to the same bytes, a header block is decompressed in order (one zlib stream) and
// never beyond its limit, and an error always says why.
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <string>

#include "net/spdy.h"

namespace spdy = berth::net::spdy;

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  constexpr size_t kMaxPayload = 1 << 16;
  constexpr size_t kMaxBlock = 4096;
  std::string_view in(reinterpret_cast<const char*>(data), size);
  spdy::HeaderDecompressor headers(kMaxBlock);
  for (;;) {
    spdy::Frame frame;
    size_t used = 0;
    std::string error;
    spdy::DecodeResult r = spdy::DecodeFrame(in, kMaxPayload, &frame, &used, &error);
    if (r == spdy::DecodeResult::kError) {
      if (error.empty()) std::abort();
      return 0;
    }
    if (r == spdy::DecodeResult::kIncomplete) return 0;
    if (used < spdy::kFrameHeader || used > in.size()) std::abort();
    if (spdy::EncodeFrame(frame) != in.substr(0, used)) {
      // Reserved bits (the stream ids' top bit, SYN_STREAM's unused bits and slot) are dropped.
      const spdy::Type k = frame.kind();
      if (k != spdy::Type::kSynStream && k != spdy::Type::kSynReply && k != spdy::Type::kHeaders &&
          k != spdy::Type::kRstStream && k != spdy::Type::kGoAway &&
          k != spdy::Type::kWindowUpdate) {
        std::abort();
      }
    }
    const spdy::Type k = frame.kind();
    if (k == spdy::Type::kSynStream || k == spdy::Type::kSynReply || k == spdy::Type::kHeaders) {
      berth::Result<spdy::Headers> h = headers.Decompress(frame.data);
      if (h.ok()) {
        size_t total = 4;
        for (const auto& [n, v] : *h) total += 8 + n.size() + v.size();
        if (total > kMaxBlock) std::abort();
      } else if (h.status().message().empty()) {
        std::abort();
      }
    }
    in.remove_prefix(used);
  }
}
