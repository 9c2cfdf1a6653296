// net::ws::MessageAssembler (and under it DecodeFrame), the WebSocket frame decoder of the
// streaming subresources (kubectl exec/attach/port-forward; src/net/websocket.h). The first
// byte picks the reading side (even: a server, which requires masked frames; odd: a client) and
// the message limit; the rest is the byte stream. Every frame decoded re-encodes to bytes that
// decode to the same frame, and an error always carries a close code and a reason.
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <string>

#include "net/websocket.h"

namespace ws = berth::net::ws;

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  if (size == 0) return 0;
  const ws::Role role = (data[0] & 1) == 0 ? ws::Role::kServer : ws::Role::kClient;
  const size_t limit = size_t{128} << (data[0] >> 5);  // 128 B .. 16 KiB
  std::string in(reinterpret_cast<const char*>(data) + 1, size - 1);
  ws::MessageAssembler assembler(role, limit);
  for (;;) {
    ws::Frame frame;
    uint16_t code = 0;
    std::string error;
    const size_t before = in.size();
    ws::DecodeResult r = assembler.Next(&in, &frame, &code, &error);
    if (r == ws::DecodeResult::kError) {
      if (code < 1000 || error.empty()) std::abort();
      return 0;
    }
    if (r == ws::DecodeResult::kIncomplete) return 0;
    if (in.size() >= before) std::abort();  // a frame always consumes bytes
    if (frame.payload.size() > limit && frame.payload.size() > 125) std::abort();
    const bool masked = role == ws::Role::kServer;
    std::string again = ws::EncodeFrame(frame.opcode, frame.payload, true, masked, 0x5a5a5a5a);
    ws::Frame back;
    size_t used = 0;
    if (ws::DecodeFrame(again, role, limit + 125, &back, &used, &code, &error) !=
            ws::DecodeResult::kFrame ||
        used != again.size() || back.payload != frame.payload || back.opcode != frame.opcode) {
      std::abort();
    }
  }
}
