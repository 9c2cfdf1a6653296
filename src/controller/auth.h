// Authentication and authorisation for every face of the controller (docs/security.md): who is
// asking (a Unix socket's peer credentials, a MUNGE credential, a bearer token naming a user, a
// node, a job attempt's steps or the cluster's join token), and the one place that says what each
// kind of credential may do. The route table (routes.h) applies these rules to each route.
//
// Thread safety: an Auth may be used from any number of API threads at once. Configure and
// set_signer run once at start-up, before any server starts (they are not synchronised).
// Used by the controller's REST API (controller_http.cc), its Kubernetes face and the routes.
#ifndef BERTH_CONTROLLER_AUTH_H_
#define BERTH_CONTROLLER_AUTH_H_

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "common/status.h"
#include "common/thread_annotations.h"
#include "core/model/job.h"
#include "net/http.h"
#include "net/tls_token.h"

namespace berth::controller {

// Who is asking.
struct Caller {
  uint32_t uid = 0;
  uint32_t gid = 0;
  std::string user;
  bool admin = false;  // root, the controller's own user, or an operator
  bool known = false;  // a user: a Unix-socket peer or a user's bearer token
  // Named by a web console session's cookie (web_sessions.h): a user who may not issue
  // credentials.
  bool web_session = false;
  // Not users (known is false): a node agent's credential names its node, and the cluster's join
  // token may only ask for a node credential (docs/security.md).
  std::string agent_node;
  bool join_token = false;
  // A job attempt's step token (srun on the job's first node, over TLS): it may only start,
  // watch and signal steps of that attempt.
  core::JobId step_job = 0;
  int32_t step_attempt = -1;
};

// The kinds of credential, each with its own rights.
enum class CredentialKind : uint8_t {
  kNobody,     // plain TCP without a credential: health, readiness and metrics only
  kUser,       // any /v1 endpoint, acting as that user
  kOperator,   // a user who is root, the controller's own user or an operator
  kNode,       // a node's credential: POST /v1/agents/register and its own /v1/agents/NODE/...
  kJoinToken,  // the cluster's join token: POST /v1/agents/join only
  kStepToken,  // a job attempt's step token: /v1/jobs/JOB/steps... of its own job only
};

CredentialKind KindOf(const Caller& who);
// Why a credential that is not a user's is refused wherever its kind has no right (the 403's
// message); for kNobody, the 401's. REQUIRES: KindOf(who) is not kUser or kOperator.
Status ScopeRefusal(const Caller& who);

// The token of an "Authorization: Bearer TOKEN" header (the scheme in any case); nullopt without.
// The view points into req.
std::optional<std::string_view> BearerToken(const net::HttpRequest& req);

struct AuthOptions {
  uint32_t own_uid = 0;                // the controller's own user: an operator
  std::vector<std::string> operators;  // user names with an operator's rights
  std::string munge_socket;            // munged's socket ("" = munge's default)
};

class Auth {
 public:
  Auth() = default;
  Auth(const Auth&) = delete;
  Auth& operator=(const Auth&) = delete;

  // REQUIRES: no API thread runs yet.
  void Configure(AuthOptions options) { opt_ = std::move(options); }
  // The signer of bearer tokens; null (the default) when this controller issues none.
  // REQUIRES: no API thread runs yet; `signer` outlives every call.
  void set_signer(const net::TokenSigner* signer) { signer_ = signer; }
  const net::TokenSigner* signer() const { return signer_; }

  // The Unix socket's peer, a user; nobody for a request without peer credentials.
  Caller Identify(const net::HttpRequest& req) const;
  // The caller a MUNGE credential or a bearer token (user, node, step or join token) names;
  // nullopt without a valid one.
  std::optional<Caller> IdentifyToken(const net::HttpRequest& req) const;
  // The user a user's bearer token names (the Kubernetes face takes no other); nullopt without.
  std::optional<Caller> IdentifyUserToken(const net::HttpRequest& req) const;
  // The user a MUNGE credential names ("Authorization: Munge MUNGE:..."), decoded by munged;
  // nullopt for none or a refused one. Decoded credentials are remembered until they expire, so
  // a kept-alive client may send one credential with several requests.
  std::optional<Caller> IdentifyMunge(const net::HttpRequest& req) const;
  // A user named by uid (passwd's name and group).
  Caller UserCaller(uint32_t uid) const;
  // Root, the controller's own user or an operator.
  bool IsAdmin(const Caller& c) const;

 private:
  AuthOptions opt_;
  const net::TokenSigner* signer_ = nullptr;
  mutable Mutex munge_mu_;
  // credential -> uid, expiry (Unix seconds)
  mutable std::map<std::string, std::pair<uint32_t, int64_t>> munge_seen_ GUARDED_BY(munge_mu_);
};

}  // namespace berth::controller

#endif  // BERTH_CONTROLLER_AUTH_H_
