#include "controller/web_sessions.h"

#include <openssl/crypto.h>
#include <openssl/rand.h>
#include <openssl/sha.h>

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <vector>

namespace berth::controller {

namespace {

std::string Hex(const unsigned char* data, size_t n) {
  static constexpr char kDigits[] = "0123456789abcdef";
  std::string out;
  out.reserve(2 * n);
  for (size_t i = 0; i < n; ++i) {
    out += kDigits[data[i] >> 4];
    out += kDigits[data[i] & 15];
  }
  return out;
}

std::string_view Trim(std::string_view s) {
  while (!s.empty() && (s.front() == ' ' || s.front() == '\t')) s.remove_prefix(1);
  while (!s.empty() && (s.back() == ' ' || s.back() == '\t')) s.remove_suffix(1);
  return s;
}

}  // namespace

std::string RandomHex(size_t n) {
  std::vector<unsigned char> bytes(n);
  if (RAND_bytes(bytes.data(), static_cast<int>(n)) != 1) {
    // No randomness is no security: a session secret must never be guessable.
    std::fprintf(stderr, "berth controller: RAND_bytes failed\n");
    std::abort();
  }
  return Hex(bytes.data(), n);
}

std::string Sha256Hex(std::string_view s) {
  unsigned char digest[SHA256_DIGEST_LENGTH];
  SHA256(reinterpret_cast<const unsigned char*>(s.data()), s.size(), digest);
  return Hex(digest, sizeof(digest));
}

bool SecretsEqual(std::string_view a, std::string_view b) {
  return a.size() == b.size() && CRYPTO_memcmp(a.data(), b.data(), a.size()) == 0;
}

std::string WebSessions::IssueCode(uint32_t uid, Time now) {
  std::string code = RandomHex(16);
  MutexLock<Mutex> l(mu_);
  DropExpired(now);
  // A user's outstanding codes are bounded: the oldest give way.
  std::vector<std::map<std::string, Code>::iterator> own;
  for (auto it = codes_.begin(); it != codes_.end(); ++it) {
    if (it->second.uid == uid) own.push_back(it);
  }
  if (own.size() >= kMaxCodesPerUser) {
    std::sort(own.begin(), own.end(),
              [](const auto& a, const auto& b) { return a->second.expires < b->second.expires; });
    for (size_t i = 0; i + kMaxCodesPerUser <= own.size(); ++i) codes_.erase(own[i]);
  }
  codes_[Sha256Hex(code)] = {uid, now + opt_.code_ttl_s};
  return code;
}

Result<NewWebSession> WebSessions::Redeem(std::string_view code, Time now) {
  NewWebSession s;
  {
    MutexLock<Mutex> l(mu_);
    auto it = codes_.find(Sha256Hex(code));
    if (it == codes_.end()) {
      return Status::PermissionDenied("this sign-in code is not valid or was used already");
    }
    const Code found = it->second;
    codes_.erase(it);
    if (found.expires <= now) {
      return Status::PermissionDenied("this sign-in code has expired (codes live " +
                                      std::to_string(opt_.code_ttl_s) + " s)");
    }
    s.uid = found.uid;
  }
  s.secret = RandomHex(32);
  s.csrf = RandomHex(16);
  MutexLock<Mutex> l(mu_);
  DropExpired(now);
  if (sessions_.size() >= opt_.max_sessions && !sessions_.empty()) {
    auto oldest = std::min_element(
        sessions_.begin(), sessions_.end(),
        [](const auto& a, const auto& b) { return a.second.last_used < b.second.last_used; });
    sessions_.erase(oldest);
  }
  sessions_[Sha256Hex(s.secret)] = {s.uid, s.csrf, now};
  return s;
}

std::optional<WebSession> WebSessions::Find(std::string_view secret, Time now) {
  const std::string key = Sha256Hex(secret);
  MutexLock<Mutex> l(mu_);
  auto it = sessions_.find(key);
  if (it == sessions_.end()) return std::nullopt;
  if (it->second.last_used + opt_.idle_s <= now) {
    sessions_.erase(it);
    return std::nullopt;
  }
  it->second.last_used = std::max(it->second.last_used, now);
  return WebSession{it->second.uid, it->second.csrf};
}

bool WebSessions::End(std::string_view secret) {
  MutexLock<Mutex> l(mu_);
  return sessions_.erase(Sha256Hex(secret)) > 0;
}

size_t WebSessions::sessions() const {
  MutexLock<Mutex> l(mu_);
  return sessions_.size();
}

size_t WebSessions::codes() const {
  MutexLock<Mutex> l(mu_);
  return codes_.size();
}

void WebSessions::DropExpired(Time now) {
  // At most once a second: each sweep walks every entry.
  if (now == swept_at_) return;
  swept_at_ = now;
  std::erase_if(codes_, [&](const auto& e) { return e.second.expires <= now; });
  std::erase_if(sessions_, [&](const auto& e) { return e.second.last_used + opt_.idle_s <= now; });
}

std::optional<std::string> CookieValueIn(std::string_view header, std::string_view name) {
  while (!header.empty()) {
    const size_t semi = std::min(header.find(';'), header.size());
    std::string_view pair = Trim(header.substr(0, semi));
    header.remove_prefix(std::min(semi + 1, header.size()));
    const size_t eq = pair.find('=');
    if (eq == std::string_view::npos || Trim(pair.substr(0, eq)) != name) continue;
    std::string_view value = Trim(pair.substr(eq + 1));
    if (value.size() >= 2 && value.front() == '"' && value.back() == '"') {
      value = value.substr(1, value.size() - 2);
    }
    return std::string(value);
  }
  return std::nullopt;
}

std::optional<std::string> CookieValue(const net::HttpRequest& req, std::string_view name) {
  return CookieValueIn(req.Header("cookie"), name);
}

Status CheckCookieRequest(const net::HttpRequest& req, const WebSession& session,
                          const std::vector<std::string>& own_origins) {
  if (req.method == "GET" || req.method == "HEAD") return Status::Ok();
  const std::string origin = req.Header("origin");
  if (!origin.empty()) {
    const std::string host = req.Header("host");
    const bool own = (!host.empty() && origin == "https://" + host) ||
                     std::find(own_origins.begin(), own_origins.end(), origin) != own_origins.end();
    if (!own) {
      return Status::PermissionDenied("cross-origin request refused: Origin " + origin +
                                      " is not this controller's");
    }
  }
  const std::string token = req.Header(kCsrfHeader);
  if (token.empty() || !SecretsEqual(token, session.csrf)) {
    return Status::PermissionDenied("CSRF token missing or wrong");
  }
  return Status::Ok();
}

std::vector<std::pair<std::string, std::string>> SessionCookies(const NewWebSession& s) {
  return {{"Set-Cookie", std::string(kSessionCookie) + "=" + s.secret +
                             "; Path=/; HttpOnly; Secure; SameSite=Strict"},
          {"Set-Cookie",
           std::string(kCsrfCookie) + "=" + s.csrf + "; Path=/; Secure; SameSite=Strict"}};
}

std::vector<std::pair<std::string, std::string>> ClearedCookies() {
  return {
      {"Set-Cookie",
       std::string(kSessionCookie) + "=; Path=/; HttpOnly; Secure; SameSite=Strict; Max-Age=0"},
      {"Set-Cookie", std::string(kCsrfCookie) + "=; Path=/; Secure; SameSite=Strict; Max-Age=0"}};
}

}  // namespace berth::controller
