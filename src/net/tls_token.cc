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
constexpr std::string_view kNodePrefix = "berth-node.";
constexpr std::string_view kJoinPrefix = "berth-join.";
constexpr std::string_view kJoinMessage = "berth-join-v1";
constexpr std::string_view kJobPrefix = "berth-job.";

std::string UserMessage(uint32_t uid) {
  return "berth-token-v1:" + std::to_string(uid);
}

std::string NodeMessage(std::string_view node) {
  return "berth-node-v1:" + std::string(node);
}

std::string JobMessage(uint32_t job_id, int32_t attempt) {
  return "berth-job-v1:" + std::to_string(job_id) + "." + std::to_string(attempt);
}

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

std::string TokenSigner::Mac(std::string_view message) const {
  unsigned char mac[EVP_MAX_MD_SIZE];
  unsigned int len = 0;
  HMAC(EVP_sha256(), secret_.data(), static_cast<int>(secret_.size()),
       reinterpret_cast<const unsigned char*>(message.data()), message.size(), mac, &len);
  return Hex(mac, len);
}

bool TokenSigner::MacMatches(std::string_view message, std::string_view mac) const {
  std::string want = Mac(message);
  return mac.size() == want.size() && CRYPTO_memcmp(mac.data(), want.data(), want.size()) == 0;
}

std::string TokenSigner::Issue(uint32_t uid) const {
  return std::string(kPrefix) + std::to_string(uid) + "." + Mac(UserMessage(uid));
}

std::optional<uint32_t> TokenSigner::Verify(std::string_view token) const {
  if (!token.starts_with(kPrefix)) return std::nullopt;
  token.remove_prefix(kPrefix.size());
  size_t dot = token.find('.');
  if (dot == std::string_view::npos || dot == 0) return std::nullopt;
  uint32_t uid = 0;
  auto [end, ec] = std::from_chars(token.data(), token.data() + dot, uid);
  if (ec != std::errc() || end != token.data() + dot) return std::nullopt;
  if (!MacMatches(UserMessage(uid), token.substr(dot + 1))) return std::nullopt;
  return uid;
}

bool TokenSigner::ValidNodeName(std::string_view node) {
  if (node.empty() || node.size() > 63 || node.front() == '.' || node.front() == '-') return false;
  for (char c : node) {
    bool ok = (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') ||
              c == '.' || c == '_' || c == '-';
    if (!ok) return false;
  }
  return true;
}

std::string TokenSigner::IssueNode(std::string_view node) const {
  return std::string(kNodePrefix) + std::string(node) + "." + Mac(NodeMessage(node));
}

std::optional<std::string> TokenSigner::VerifyNode(std::string_view token) const {
  if (!token.starts_with(kNodePrefix)) return std::nullopt;
  token.remove_prefix(kNodePrefix.size());
  // The MAC is the part after the last dot (node names may hold dots).
  size_t dot = token.rfind('.');
  if (dot == std::string_view::npos) return std::nullopt;
  std::string_view node = token.substr(0, dot);
  if (!ValidNodeName(node) || !MacMatches(NodeMessage(node), token.substr(dot + 1))) {
    return std::nullopt;
  }
  return std::string(node);
}

std::string TokenSigner::IssueJoin() const {
  return std::string(kJoinPrefix) + Mac(kJoinMessage);
}

bool TokenSigner::VerifyJoin(std::string_view token) const {
  if (!token.starts_with(kJoinPrefix)) return false;
  return MacMatches(kJoinMessage, token.substr(kJoinPrefix.size()));
}

std::string TokenSigner::IssueJob(uint32_t job_id, int32_t attempt) const {
  return std::string(kJobPrefix) + std::to_string(job_id) + "." + std::to_string(attempt) + "." +
         Mac(JobMessage(job_id, attempt));
}

std::optional<std::pair<uint32_t, int32_t>> TokenSigner::VerifyJob(std::string_view token) const {
  if (!token.starts_with(kJobPrefix)) return std::nullopt;
  token.remove_prefix(kJobPrefix.size());
  const size_t dot1 = token.find('.');
  const size_t dot2 = dot1 == std::string_view::npos ? dot1 : token.find('.', dot1 + 1);
  if (dot2 == std::string_view::npos) return std::nullopt;
  uint32_t job_id = 0;
  int32_t attempt = 0;
  auto [e1, ec1] = std::from_chars(token.data(), token.data() + dot1, job_id);
  auto [e2, ec2] = std::from_chars(token.data() + dot1 + 1, token.data() + dot2, attempt);
  if (ec1 != std::errc() || e1 != token.data() + dot1 || dot1 == 0 || ec2 != std::errc() ||
      e2 != token.data() + dot2 || dot2 == dot1 + 1 || attempt < 0) {
    return std::nullopt;
  }
  if (!MacMatches(JobMessage(job_id, attempt), token.substr(dot2 + 1))) return std::nullopt;
  return std::make_pair(job_id, attempt);
}

}  // namespace berth::net
