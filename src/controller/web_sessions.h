// The web console's sign-in (docs/security.md, "The web console"): `berth web` asks for a
// single-use sign-in code, the browser exchanges it at GET /ui/login for a session, and the
// session's cookie then names its user on /v1 like that user's bearer token. Non-GET requests a
// cookie authenticates must carry the session's CSRF token (X-CSRF-Token) and, when the browser
// sends one, the controller's own Origin.
//
// Only a SHA-256 of each secret (code, session cookie) is kept, so a memory dump of the table names
// no usable credential; the CSRF token is not a credential by itself and is kept as is. Sessions
// live in memory: a controller restart signs every browser out.
//
// Bounds: codes live `code_ttl_s` and work once, at most kMaxCodesPerUser outstanding per user
// (the oldest go first); sessions end after `idle_s` without a request, and at most
// `max_sessions` exist (the least recently used goes first).
//
// Thread safety: every method may be called from any thread (one mutex). Time is passed in.
#ifndef BERTH_CONTROLLER_WEB_SESSIONS_H_
#define BERTH_CONTROLLER_WEB_SESSIONS_H_

#include <cstddef>
#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "common/status.h"
#include "common/thread_annotations.h"
#include "common/time.h"
#include "net/http.h"

namespace berth::controller {

inline constexpr std::string_view kSessionCookie = "berth_session";
inline constexpr std::string_view kCsrfCookie = "berth_csrf";
inline constexpr std::string_view kCsrfHeader = "x-csrf-token";

struct WebSessionOptions {
  Duration code_ttl_s = 60;
  Duration idle_s = 12 * 3600;
  size_t max_sessions = 10000;
};

// A session as a request sees it.
struct WebSession {
  uint32_t uid = 0;
  std::string csrf;
};

// A new session: the cookie values to set.
struct NewWebSession {
  uint32_t uid = 0;
  std::string secret;  // berth_session's value (256 random bits, hex)
  std::string csrf;    // berth_csrf's value (128 random bits, hex)
};

class WebSessions {
 public:
  static constexpr size_t kMaxCodesPerUser = 16;

  explicit WebSessions(WebSessionOptions options = {}) : opt_(options) {}
  WebSessions(const WebSessions&) = delete;
  WebSessions& operator=(const WebSessions&) = delete;

  // REQUIRES: no other thread uses this yet.
  void Configure(WebSessionOptions options) { opt_ = options; }
  const WebSessionOptions& options() const { return opt_; }

  // A new single-use sign-in code for `uid`, valid until now + code_ttl_s.
  std::string IssueCode(uint32_t uid, Time now) EXCLUDES(mu_);
  // Exchanges a valid, unexpired, unused code for a new session (the code is used up, whatever
  // the outcome); PermissionDenied naming why otherwise.
  Result<NewWebSession> Redeem(std::string_view code, Time now) EXCLUDES(mu_);
  // The session a cookie's secret names, its idle time restarted; nullopt for none or an
  // expired one.
  std::optional<WebSession> Find(std::string_view secret, Time now) EXCLUDES(mu_);
  // Ends the session; false when there was none.
  bool End(std::string_view secret) EXCLUDES(mu_);

  size_t sessions() const EXCLUDES(mu_);
  size_t codes() const EXCLUDES(mu_);

 private:
  struct Code {
    uint32_t uid = 0;
    Time expires = 0;
  };
  struct Session {
    uint32_t uid = 0;
    std::string csrf;
    Time last_used = 0;
  };
  void DropExpired(Time now) REQUIRES(mu_);

  WebSessionOptions opt_;
  mutable Mutex mu_;
  std::map<std::string, Code> codes_ GUARDED_BY(mu_);        // SHA-256 (hex) -> code
  std::map<std::string, Session> sessions_ GUARDED_BY(mu_);  // SHA-256 (hex) -> session
  Time swept_at_ GUARDED_BY(mu_) = 0;
};

// `n` random bytes from OpenSSL's generator, as hex.
std::string RandomHex(size_t n);
// SHA-256 of `s`, as hex.
std::string Sha256Hex(std::string_view s);
// Equal strings, compared in time that does not depend on where they differ.
bool SecretsEqual(std::string_view a, std::string_view b);

// The value of cookie `name` in the request's Cookie header(s); nullopt without one.
std::optional<std::string> CookieValue(const net::HttpRequest& req, std::string_view name);
// The value of cookie `name` in one Cookie header's text ("a=1; b=2").
std::optional<std::string> CookieValueIn(std::string_view header, std::string_view name);

// Whether a request a session cookie authenticates may go on: GET and HEAD always; any other
// method only with X-CSRF-Token equal to the session's token and, when an Origin header is sent,
// an Origin that is the controller's own ("https://" + the request's Host, or one of
// `own_origins`). PermissionDenied naming what is wrong otherwise.
Status CheckCookieRequest(const net::HttpRequest& req, const WebSession& session,
                          const std::vector<std::string>& own_origins);

// The Set-Cookie headers of a new session (browser-session cookies: no Max-Age; the controller
// ends the session itself), and those that clear both cookies.
std::vector<std::pair<std::string, std::string>> SessionCookies(const NewWebSession& s);
std::vector<std::pair<std::string, std::string>> ClearedCookies();

}  // namespace berth::controller

#endif  // BERTH_CONTROLLER_WEB_SESSIONS_H_
