// Bearer tokens for the TLS API, with no daemon: a token names a uid and carries an HMAC-SHA256
// of it under a secret only the controller reads. "berth.<uid>.<64 hex digits>".
// Changing (deleting) the secret file revokes every token issued under it.
//
// Thread safety: a TokenSigner is immutable; Issue and Verify may run concurrently.
#ifndef BERTH_NET_TLS_TOKEN_H_
#define BERTH_NET_TLS_TOKEN_H_

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

#include "common/status.h"

namespace berth::net {

class TokenSigner {
 public:
  // Reads the secret at `path`, or makes one (32 random bytes, hex, mode 0600) when the file is
  // missing. A secret file readable by others than its owner is refused (FAILED_PRECONDITION).
  static Result<TokenSigner> LoadOrCreate(const std::string& path);
  // REQUIRES: secret is not empty.
  explicit TokenSigner(std::string secret) : secret_(std::move(secret)) {}

  std::string Issue(uint32_t uid) const;
  // The uid a token names when its MAC is right (compared in constant time); nullopt for
  // anything else.
  std::optional<uint32_t> Verify(std::string_view token) const;

 private:
  std::string Mac(uint32_t uid) const;
  std::string secret_;
};

}  // namespace berth::net

#endif  // BERTH_NET_TLS_TOKEN_H_
