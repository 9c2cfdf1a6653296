#include "net/tls_token.h"

#include <openssl/crypto.h>
#include <openssl/evp.h>
#include <openssl/hmac.h>
#include <openssl/rand.h>
#include <sys/stat.h>

#include <charconv>

#include "net/tls_pki.h"

namespace berth::net {
namespace {

constexpr std::string_view kPrefix = "berth.";

std::string Hex(const unsigned char* p, size_t n) {
  static constexpr char kDigits[] = "0123456789abcdef";
  std::string out;
  out.reserve(n * 2);
  for (size_t i = 0; i < n; ++i) {
    out += kDigits[p[i] >> 4];
    out += kDigits[p[i] & 15];
  }
  return out;
}

}  // namespace

Result<TokenSigner> TokenSigner::LoadOrCreate(const std::string& path) {
  struct stat st {};
  if (::stat(path.c_str(), &st) != 0) {
    unsigned char bytes[32];
    if (RAND_bytes(bytes, sizeof(bytes)) != 1) {
      return Status::Internal("no random bytes for the token secret");
    }
    BERTH_RETURN_IF_ERROR(WriteFileAtomically(path, Hex(bytes, sizeof(bytes)) + "\n", 0600));
  } else if ((st.st_mode & 077) != 0) {
    return Status::FailedPrecondition("the token secret " + path +
                                      " is readable by others; chmod 600 it");
  }
  BERTH_ASSIGN_OR_RETURN(std::string secret, ReadTextFile(path));
  while (!secret.empty() && (secret.back() == '\n' || secret.back() == ' ')) secret.pop_back();
  if (secret.size() < 16)
    return Status::FailedPrecondition("the token secret " + path + " is too short");
  return TokenSigner(std::move(secret));
}

std::string TokenSigner::Mac(uint32_t uid) const {
  std::string message = "berth-token-v1:" + std::to_string(uid);
  unsigned char mac[EVP_MAX_MD_SIZE];
  unsigned int len = 0;
  HMAC(EVP_sha256(), secret_.data(), static_cast<int>(secret_.size()),
       reinterpret_cast<const unsigned char*>(message.data()), message.size(), mac, &len);
  return Hex(mac, len);
}

std::string TokenSigner::Issue(uint32_t uid) const {
  return std::string(kPrefix) + std::to_string(uid) + "." + Mac(uid);
}

std::optional<uint32_t> TokenSigner::Verify(std::string_view token) const {
  if (!token.starts_with(kPrefix)) return std::nullopt;
  token.remove_prefix(kPrefix.size());
  size_t dot = token.find('.');
  if (dot == std::string_view::npos || dot == 0) return std::nullopt;
  uint32_t uid = 0;
  auto [end, ec] = std::from_chars(token.data(), token.data() + dot, uid);
  if (ec != std::errc() || end != token.data() + dot) return std::nullopt;
  std::string_view mac = token.substr(dot + 1);
  std::string want = Mac(uid);
  if (mac.size() != want.size() || CRYPTO_memcmp(mac.data(), want.data(), want.size()) != 0) {
    return std::nullopt;
  }
  return uid;
}

}  // namespace berth::net
