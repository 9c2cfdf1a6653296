#include "net/websocket.h"

#include <openssl/evp.h>
#include <openssl/rand.h>
#include <openssl/sha.h>
#include <poll.h>
#include <sys/socket.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>

namespace berth::net::ws {
namespace {

constexpr std::string_view kGuid = "258EAFA5-E914-47DA-95CA-C5AB0DC85B11";
constexpr int64_t kSendTimeoutMs = 30000;

bool IsControl(Opcode op) {
  return (static_cast<uint8_t>(op) & 0x8) != 0;
}

bool KnownOpcode(uint8_t op) {
  return op == 0x0 || op == 0x1 || op == 0x2 || op == 0x8 || op == 0x9 || op == 0xA;
}

DecodeResult Fail(uint16_t code, std::string why, uint16_t* close_code, std::string* error) {
  *close_code = code;
  *error = std::move(why);
  return DecodeResult::kError;
}

std::string Base64(const unsigned char* data, size_t n) {
  std::string out(4 * ((n + 2) / 3), '\0');
  int len =
      EVP_EncodeBlock(reinterpret_cast<unsigned char*>(out.data()), data, static_cast<int>(n));
  out.resize(static_cast<size_t>(std::max(len, 0)));
  return out;
}

// Valid UTF-8 (RFC 3629), as a text message and a close reason must be.
bool ValidUtf8(std::string_view s) {
  size_t i = 0;
  while (i < s.size()) {
    const auto c = static_cast<unsigned char>(s[i]);
    size_t more;
    uint32_t cp;
    if (c < 0x80) {
      ++i;
      continue;
    } else if ((c & 0xE0) == 0xC0) {
      more = 1;
      cp = c & 0x1F;
    } else if ((c & 0xF0) == 0xE0) {
      more = 2;
      cp = c & 0x0F;
    } else if ((c & 0xF8) == 0xF0) {
      more = 3;
      cp = c & 0x07;
    } else {
      return false;
    }
    if (s.size() - i <= more) return false;
    for (size_t k = 1; k <= more; ++k) {
      const auto d = static_cast<unsigned char>(s[i + k]);
      if ((d & 0xC0) != 0x80) return false;
      cp = (cp << 6) | (d & 0x3F);
    }
    static constexpr uint32_t kMin[] = {0, 0x80, 0x800, 0x10000};
    if (cp < kMin[more] || cp > 0x10FFFF || (cp >= 0xD800 && cp <= 0xDFFF)) return false;
    i += more + 1;
  }
  return true;
}

}  // namespace

DecodeResult DecodeFrame(std::string_view in, Role reader, size_t max_payload, Frame* frame,
                         size_t* consumed, uint16_t* close_code, std::string* error) {
  if (in.size() < 2) return DecodeResult::kIncomplete;
  const auto b0 = static_cast<uint8_t>(in[0]);
  const auto b1 = static_cast<uint8_t>(in[1]);
  if ((b0 & 0x70) != 0) {
    return Fail(kCloseProtocolError, "reserved bits set (no extension was negotiated)", close_code,
                error);
  }
  const uint8_t op = b0 & 0x0F;
  if (!KnownOpcode(op)) {
    return Fail(kCloseProtocolError, "reserved opcode " + std::to_string(op), close_code, error);
  }
  const bool fin = (b0 & 0x80) != 0;
  const bool masked = (b1 & 0x80) != 0;
  if (reader == Role::kServer && !masked) {
    return Fail(kCloseProtocolError, "a client's frame must be masked", close_code, error);
  }
  if (reader == Role::kClient && masked) {
    return Fail(kCloseProtocolError, "a server's frame must not be masked", close_code, error);
  }
  uint64_t length = b1 & 0x7F;
  size_t pos = 2;
  if (length == 126) {
    if (in.size() < 4) return DecodeResult::kIncomplete;
    length = (uint64_t{static_cast<uint8_t>(in[2])} << 8) | static_cast<uint8_t>(in[3]);
    pos = 4;
    if (length < 126) return Fail(kCloseProtocolError, "length not minimal", close_code, error);
  } else if (length == 127) {
    if (in.size() < 10) return DecodeResult::kIncomplete;
    length = 0;
    for (size_t i = 2; i < 10; ++i) length = (length << 8) | static_cast<uint8_t>(in[i]);
    pos = 10;
    if ((length >> 63) != 0) {
      return Fail(kCloseProtocolError, "length with the top bit set", close_code, error);
    }
    if (length <= 0xFFFF) return Fail(kCloseProtocolError, "length not minimal", close_code, error);
  }
  const Opcode opcode = static_cast<Opcode>(op);
  if (IsControl(opcode) && (!fin || length > 125)) {
    return Fail(kCloseProtocolError, "control frame fragmented or over 125 bytes", close_code,
                error);
  }
  if (length > max_payload) {
    return Fail(kCloseTooBig, "frame of " + std::to_string(length) + " bytes over the limit",
                close_code, error);
  }
  uint8_t key[4] = {0, 0, 0, 0};
  if (masked) {
    if (in.size() < pos + 4) return DecodeResult::kIncomplete;
    std::memcpy(key, in.data() + pos, 4);
    pos += 4;
  }
  if (in.size() - pos < length) return DecodeResult::kIncomplete;
  frame->fin = fin;
  frame->opcode = opcode;
  frame->payload.assign(in.data() + pos, static_cast<size_t>(length));
  if (masked) {
    for (size_t i = 0; i < frame->payload.size(); ++i) frame->payload[i] ^= key[i & 3];
  }
  *consumed = pos + static_cast<size_t>(length);
  return DecodeResult::kFrame;
}

std::string EncodeFrame(Opcode opcode, std::string_view payload, bool fin, bool masked,
                        uint32_t mask_key) {
  std::string out;
  out.reserve(payload.size() + 14);
  out.push_back(static_cast<char>((fin ? 0x80 : 0) | static_cast<uint8_t>(opcode)));
  const uint8_t mask_bit = masked ? 0x80 : 0;
  const uint64_t n = payload.size();
  if (n < 126) {
    out.push_back(static_cast<char>(mask_bit | n));
  } else if (n <= 0xFFFF) {
    out.push_back(static_cast<char>(mask_bit | 126));
    out.push_back(static_cast<char>(n >> 8));
    out.push_back(static_cast<char>(n & 0xFF));
  } else {
    out.push_back(static_cast<char>(mask_bit | 127));
    for (int shift = 56; shift >= 0; shift -= 8) out.push_back(static_cast<char>(n >> shift));
  }
  if (!masked) {
    out.append(payload);
    return out;
  }
  const uint8_t key[4] = {static_cast<uint8_t>(mask_key >> 24),
                          static_cast<uint8_t>(mask_key >> 16), static_cast<uint8_t>(mask_key >> 8),
                          static_cast<uint8_t>(mask_key)};
  out.append(reinterpret_cast<const char*>(key), 4);
  const size_t start = out.size();
  out.append(payload);
  for (size_t i = 0; i < payload.size(); ++i) out[start + i] ^= static_cast<char>(key[i & 3]);
  return out;
}

std::string ClosePayload(uint16_t code, std::string_view reason) {
  std::string out;
  out.push_back(static_cast<char>(code >> 8));
  out.push_back(static_cast<char>(code & 0xFF));
  out.append(reason.substr(0, 123));
  return out;
}

std::string AcceptKey(std::string_view client_key) {
  std::string text(client_key);
  text += kGuid;
  unsigned char digest[SHA_DIGEST_LENGTH];
  SHA1(reinterpret_cast<const unsigned char*>(text.data()), text.size(), digest);
  return Base64(digest, sizeof(digest));
}

std::string NewClientKey() {
  unsigned char raw[16];
  if (RAND_bytes(raw, sizeof(raw)) != 1) {
    for (size_t i = 0; i < sizeof(raw); ++i) raw[i] = static_cast<unsigned char>(i * 37 + 11);
  }
  return Base64(raw, sizeof(raw));
}

DecodeResult MessageAssembler::Next(std::string* in, Frame* out, uint16_t* close_code,
                                    std::string* error) {
  size_t used = 0;
  for (;;) {
    Frame frame;
    size_t consumed = 0;
    const size_t room = max_message_ - (in_message_ ? partial_.payload.size() : 0);
    DecodeResult r = DecodeFrame(std::string_view(*in).substr(used), reader_,
                                 std::max<size_t>(room, 125), &frame, &consumed, close_code, error);
    if (r != DecodeResult::kFrame) {
      in->erase(0, used);
      return r;
    }
    used += consumed;
    if (IsControl(frame.opcode)) {
      if (frame.opcode == Opcode::kClose) {
        if (frame.payload.size() == 1) {
          in->erase(0, used);
          return Fail(kCloseProtocolError, "close payload of one byte", close_code, error);
        }
        if (frame.payload.size() > 2 && !ValidUtf8(std::string_view(frame.payload).substr(2))) {
          in->erase(0, used);
          return Fail(kCloseInvalidData, "close reason not UTF-8", close_code, error);
        }
      }
      in->erase(0, used);
      *out = std::move(frame);
      return DecodeResult::kFrame;
    }
    if (frame.opcode == Opcode::kContinuation) {
      if (!in_message_) {
        in->erase(0, used);
        return Fail(kCloseProtocolError, "continuation without a message", close_code, error);
      }
      if (frame.payload.size() > room) {
        in->erase(0, used);
        return Fail(kCloseTooBig, "message over the limit", close_code, error);
      }
      partial_.payload += frame.payload;
    } else {
      if (in_message_) {
        in->erase(0, used);
        return Fail(kCloseProtocolError, "new message inside a fragmented one", close_code, error);
      }
      if (frame.payload.size() > max_message_) {
        in->erase(0, used);
        return Fail(kCloseTooBig, "message over the limit", close_code, error);
      }
      partial_ = std::move(frame);
      in_message_ = true;
    }
    if (frame.fin) {
      in_message_ = false;
      in->erase(0, used);
      if (partial_.opcode == Opcode::kText && !ValidUtf8(partial_.payload)) {
        return Fail(kCloseInvalidData, "text message not UTF-8", close_code, error);
      }
      *out = std::move(partial_);
      out->fin = true;
      partial_ = Frame{};
      return DecodeResult::kFrame;
    }
  }
}

WsConnection::WsConnection(int fd, bool owned, Role role, WsLimits limits, std::string already_read)
    : fd_(fd),
      owned_(owned),
      role_(role),
      limits_(limits),
      in_(std::move(already_read)),
      assembler_(role, limits.max_message),
      last_frame_ms_(SteadyNowMs()) {}

WsConnection::~WsConnection() {
  if (owned_ && fd_ >= 0) ::close(fd_);
}

Status WsConnection::Send(Opcode opcode, std::string_view payload) {
  uint32_t key = 0;
  const bool masked = role_ == Role::kClient;
  if (masked) RAND_bytes(reinterpret_cast<unsigned char*>(&key), sizeof(key));
  std::string bytes = EncodeFrame(opcode, payload, true, masked, key);
  MutexLock lock(send_mu_);
  if (close_sent_) return Status::Unavailable("websocket: closed");
  iovec iov{bytes.data(), bytes.size()};
  if (!SendAll(fd_, &iov, 1, SteadyNowMs() + kSendTimeoutMs)) {
    return Status::Unavailable("websocket: the peer is gone");
  }
  if (opcode == Opcode::kClose) close_sent_ = true;
  return Status::Ok();
}

void WsConnection::SendClose(uint16_t code, std::string_view reason) {
  {
    MutexLock lock(send_mu_);
    if (close_sent_) return;
  }
  (void)Send(Opcode::kClose, ClosePayload(code, reason));
}

WsConnection::Got WsConnection::Receive(Frame* message, int64_t deadline_ms,
                                        const std::atomic<bool>* stopping, std::string* error) {
  bool read_once = false;
  for (;;) {
    uint16_t code = 0;
    DecodeResult r = assembler_.Next(&in_, message, &code, error);
    if (r == DecodeResult::kError) {
      SendClose(code, *error);
      return Got::kClosed;
    }
    if (r == DecodeResult::kFrame) {
      last_frame_ms_ = SteadyNowMs();
      switch (message->opcode) {
        case Opcode::kPing:
          (void)Send(Opcode::kPong, message->payload);
          continue;
        case Opcode::kPong:
          continue;
        case Opcode::kClose: {
          uint16_t their =
              message->payload.size() >= 2
                  ? static_cast<uint16_t>((static_cast<uint8_t>(message->payload[0]) << 8) |
                                          static_cast<uint8_t>(message->payload[1]))
                  : kCloseNormal;
          SendClose(their == kCloseNormal || their == kCloseGoingAway ? their : kCloseNormal, "");
          error->clear();
          return Got::kClosed;
        }
        default:
          return Got::kMessage;
      }
    }
    const int64_t idle_deadline =
        limits_.idle_timeout_ms > 0 ? last_frame_ms_ + limits_.idle_timeout_ms : -1;
    if (deadline_ms == 0) {  // no wait: one read of what is there
      if (idle_deadline >= 0 && SteadyNowMs() >= idle_deadline) {
        *error = "idle for " + std::to_string(limits_.idle_timeout_ms / 1000) + " s";
        SendClose(kCloseGoingAway, "idle timeout");
        return Got::kClosed;
      }
      if (read_once) return Got::kTimeout;
      read_once = true;
    } else if (!WaitForBytes(deadline_ms, idle_deadline, stopping, error)) {
      return error->empty() ? Got::kTimeout : Got::kClosed;
    }
    char buf[16384];
    ssize_t n = ::recv(fd_, buf, sizeof(buf), MSG_DONTWAIT);
    if (n < 0 && errno == EINTR) continue;
    if (n < 0 && errno == EAGAIN) {
      if (deadline_ms == 0) return Got::kTimeout;
      continue;
    }
    if (n <= 0) {
      *error = n == 0 ? "connection closed" : ErrnoMessage("recv", errno);
      return Got::kClosed;
    }
    // No bound needed here: DecodeFrame refuses a frame over the limit from its header, so in_
    // never holds more than one frame's worth past the limit.
    in_.append(buf, static_cast<size_t>(n));
  }
}

bool WsConnection::WaitForBytes(int64_t deadline_ms, int64_t idle_deadline,
                                const std::atomic<bool>* stopping, std::string* error) {
  error->clear();
  {
    // Wait for more bytes, a slice at a time so that `stopping` is noticed.
    int64_t until = deadline_ms;
    if (idle_deadline >= 0 && (until < 0 || idle_deadline < until)) until = idle_deadline;
    for (;;) {
      if (stopping != nullptr && stopping->load()) {
        *error = "stopping";
        SendClose(kCloseGoingAway, "server stopping");
        return false;
      }
      int64_t now = SteadyNowMs();
      if (until >= 0 && now >= until) {
        if (idle_deadline >= 0 && now >= idle_deadline) {
          *error = "idle for " + std::to_string(limits_.idle_timeout_ms / 1000) + " s";
          SendClose(kCloseGoingAway, "idle timeout");
        }
        return false;
      }
      int wait = 250;
      if (until >= 0) wait = static_cast<int>(std::min<int64_t>(until - now, 250));
      pollfd p{fd_, POLLIN, 0};
      int n = ::poll(&p, 1, wait);
      if (n < 0 && errno != EINTR) {
        *error = ErrnoMessage("poll", errno);
        return false;
      }
      if (n > 0) return true;
    }
  }
}

}  // namespace berth::net::ws
