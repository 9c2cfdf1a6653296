// WebSocket (RFC 6455) for the streaming subresources of the Kubernetes face (docs/adr/0006):
// the frame codec (masking, fragmentation, control frames, close codes), the opening
// handshake's accept key, and WsConnection, one open WebSocket over a connected stream socket
// (a plain socket, or the plaintext end of a TLS relay) with its limits.
//
// What is spoken: opcodes text, binary, continuation, close, ping, pong; no extensions (the
// RSV bits must be zero: permessage-deflate is never negotiated). A server reads masked frames
// and writes unmasked ones; a client the opposite (RFC 6455 5.1). Every read is bounded: a
// frame or a reassembled message over the limit is a protocol error (close code 1009), and
// WsConnection's reads wait at most until a deadline.
//
// Thread safety: DecodeFrame, EncodeFrame and AcceptKey are pure. A WsConnection may be read by
// one thread at a time while any number of threads send (sends are serialised by its mutex).
// Used by: the Kubernetes face (src/k8s/face_stream.cc), the controller's agent stream
// rendezvous, the agent's stream side (src/agent/pod_stream.cc), and the ws_frame fuzz target.
#ifndef BERTH_NET_WEBSOCKET_H_
#define BERTH_NET_WEBSOCKET_H_

#include <atomic>
#include <cstdint>
#include <string>
#include <string_view>

#include "common/status.h"
#include "common/thread_annotations.h"
#include "net/socket_io.h"

namespace berth::net::ws {

enum class Opcode : uint8_t {
  kContinuation = 0x0,
  kText = 0x1,
  kBinary = 0x2,
  kClose = 0x8,
  kPing = 0x9,
  kPong = 0xA,
};

// Close codes used here (RFC 6455 7.4.1).
inline constexpr uint16_t kCloseNormal = 1000;
inline constexpr uint16_t kCloseGoingAway = 1001;
inline constexpr uint16_t kCloseProtocolError = 1002;
inline constexpr uint16_t kCloseInvalidData = 1007;
inline constexpr uint16_t kCloseTooBig = 1009;

struct Frame {
  bool fin = true;
  Opcode opcode = Opcode::kBinary;
  std::string payload;  // unmasked
};

enum class DecodeResult { kIncomplete, kFrame, kError };

// Who reads: a server requires masked frames, a client refuses them.
enum class Role { kServer, kClient };

// Decodes the frame at the start of `in`. kFrame: *frame holds it and *consumed its length in
// bytes. kIncomplete: more bytes are needed (nothing is consumed). kError: the bytes are not a
// frame this side may accept (*close_code says which close code to answer, *error why):
// reserved bits or opcodes, a masked frame to a client or an unmasked one to a server, a
// control frame that is fragmented or over 125 bytes, a length that is not minimal or has the
// top bit set, a payload over max_payload.
DecodeResult DecodeFrame(std::string_view in, Role reader, size_t max_payload, Frame* frame,
                         size_t* consumed, uint16_t* close_code, std::string* error);

// The bytes of one frame; masked with `mask_key` when `masked` (a client's frames).
std::string EncodeFrame(Opcode opcode, std::string_view payload, bool fin, bool masked,
                        uint32_t mask_key);

// A close frame's payload: the code, then a reason cut to fit 125 bytes.
std::string ClosePayload(uint16_t code, std::string_view reason);

// Sec-WebSocket-Accept for a Sec-WebSocket-Key: base64(SHA-1(key + the RFC's GUID)).
std::string AcceptKey(std::string_view client_key);

// A random Sec-WebSocket-Key (16 random bytes, base64).
std::string NewClientKey();

// Reassembles messages from frames: fragments of one data message, with control frames between
// them. Pure; used by WsConnection and the fuzz target.
class MessageAssembler {
 public:
  MessageAssembler(Role reader, size_t max_message) : reader_(reader), max_message_(max_message) {}

  // Consumes whole frames from *in (erasing what it used) until one message or control frame is
  // complete: kFrame with *out set (opcode text/binary for a data message, or the control
  // frame's), kIncomplete when *in holds no more whole frame, kError on a protocol error
  // (*close_code, *error) after which the connection must be closed.
  DecodeResult Next(std::string* in, Frame* out, uint16_t* close_code, std::string* error);

 private:
  const Role reader_;
  const size_t max_message_;
  bool in_message_ = false;
  Frame partial_;
};

struct WsLimits {
  size_t max_message = 1 << 20;  // a larger message closes the connection with 1009
  int idle_timeout_ms = 0;       // no frame for this long closes the connection (1001); 0: no limit
};

// One open WebSocket on a connected socket it owns (or borrows: `owned` false).
class WsConnection {
 public:
  // `already_read`: bytes read past the handshake, the start of the first frames.
  WsConnection(int fd, bool owned, Role role, WsLimits limits, std::string already_read = "");
  ~WsConnection();
  WsConnection(const WsConnection&) = delete;
  WsConnection& operator=(const WsConnection&) = delete;

  int fd() const { return fd_; }

  // Sends one whole message (or control frame). Thread-safe. Errors: UNAVAILABLE when the
  // peer is gone or the send did not finish within 30 s.
  Status Send(Opcode opcode, std::string_view payload) EXCLUDES(send_mu_);

  // Sends a close frame (once; later calls do nothing).
  void SendClose(uint16_t code, std::string_view reason) EXCLUDES(send_mu_);

  enum class Got { kMessage, kTimeout, kClosed };
  // Waits until a data message arrives (answering pings, ignoring pongs) or deadline_ms (a
  // SteadyNowMs() time; -1: none; 0: no wait, only what one read without blocking brings)
  // passes. kClosed: the peer sent close (answered), closed the
  // socket, or broke the protocol (answered with the close code, *error says why);
  // `stopping` true also ends the wait with kClosed. One reader at a time.
  Got Receive(Frame* message, int64_t deadline_ms, const std::atomic<bool>* stopping,
              std::string* error);

  // True when bytes are buffered that Receive can use without reading the socket.
  bool HasBuffered() const { return !in_.empty(); }

 private:
  // Waits until the socket is readable: true. False when the deadline or the idle deadline
  // passed (*error empty for the deadline; the idle timeout and `stopping` send close and say
  // why in *error) or poll failed.
  bool WaitForBytes(int64_t deadline_ms, int64_t idle_deadline, const std::atomic<bool>* stopping,
                    std::string* error);

  const int fd_;
  const bool owned_;
  const Role role_;
  const WsLimits limits_;
  std::string in_;
  MessageAssembler assembler_;
  int64_t last_frame_ms_;  // when the last frame arrived (the idle timeout counts from it)
  Mutex send_mu_;
  bool close_sent_ GUARDED_BY(send_mu_) = false;
};

}  // namespace berth::net::ws

#endif  // BERTH_NET_WEBSOCKET_H_
