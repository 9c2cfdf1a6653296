#include "controller/auth.h"

#include <pwd.h>

#include <algorithm>
#include <cstdio>
#include <ctime>

#include "common/strings.h"
#include "net/munge_cred.h"

namespace berth::controller {

namespace {

std::string UserName(uint32_t uid) {
  struct passwd pw, *found = nullptr;
  char buf[4096];
  if (getpwuid_r(uid, &pw, buf, sizeof(buf), &found) == 0 && found) return found->pw_name;
  return std::to_string(uid);
}

}  // namespace

CredentialKind KindOf(const Caller& who) {
  if (who.join_token) return CredentialKind::kJoinToken;
  if (!who.agent_node.empty()) return CredentialKind::kNode;
  if (who.step_job != 0) return CredentialKind::kStepToken;
  if (!who.known) return CredentialKind::kNobody;
  return who.admin ? CredentialKind::kOperator : CredentialKind::kUser;
}

Status ScopeRefusal(const Caller& who) {
  switch (KindOf(who)) {
    case CredentialKind::kNobody:
      return Status::PermissionDenied(
          "authentication required: use the Unix socket, or HTTPS with a bearer token (berth "
          "token)");
    case CredentialKind::kJoinToken:
      return Status::PermissionDenied("the join token may only join a node (POST /v1/agents/join)");
    case CredentialKind::kNode:
      return Status::PermissionDenied("a node credential acts for its node's agent only");
    case CredentialKind::kStepToken:
      return Status::PermissionDenied("a job's step token may only act on its steps (/v1/jobs/" +
                                      std::to_string(who.step_job) + "/steps)");
    case CredentialKind::kUser:
    case CredentialKind::kOperator:
      break;
  }
  return Status::Internal("a user's credential has no fixed scope");
}

std::optional<std::string_view> BearerToken(const net::HttpRequest& req) {
  static constexpr std::string_view kScheme = "bearer ";
  auto it = req.headers.find("authorization");
  if (it == req.headers.end() || it->second.size() <= kScheme.size()) return std::nullopt;
  std::string_view auth = it->second;
  if (!StartsWithIgnoreCase(auth, kScheme)) return std::nullopt;
  return auth.substr(kScheme.size());
}

Caller Auth::Identify(const net::HttpRequest& req) const {
  if (!req.peer) return Caller{};  // plain TCP: nobody (TLS callers come with a token)
  Caller c;
  c.known = true;
  c.uid = req.peer->uid;
  c.gid = req.peer->gid;
  c.user = UserName(c.uid);
  c.admin = IsAdmin(c);
  return c;
}

bool Auth::IsAdmin(const Caller& c) const {
  return c.uid == 0 || c.uid == opt_.own_uid ||
         std::find(opt_.operators.begin(), opt_.operators.end(), c.user) != opt_.operators.end();
}

Caller Auth::UserCaller(uint32_t uid) const {
  Caller who;
  who.known = true;
  who.uid = uid;
  struct passwd pw, *found = nullptr;
  char buf[4096];
  bool ok = getpwuid_r(uid, &pw, buf, sizeof(buf), &found) == 0 && found;
  who.user = ok ? found->pw_name : std::to_string(uid);
  who.gid = ok ? found->pw_gid : uid;
  who.admin = IsAdmin(who);
  return who;
}

std::optional<Caller> Auth::IdentifyMunge(const net::HttpRequest& req) const {
  std::string auth = req.Header("authorization");
  if (auth.size() <= 6 ||
      !(auth.compare(0, 6, "Munge ") == 0 || auth.compare(0, 6, "munge ") == 0)) {
    return std::nullopt;
  }
  const std::string cred = auth.substr(6);
  constexpr int64_t kTtlSeconds = 300;  // munge's default time-to-live
  const int64_t now = static_cast<int64_t>(::time(nullptr));
  {
    MutexLock<Mutex> l(munge_mu_);
    if (auto it = munge_seen_.find(cred); it != munge_seen_.end() && it->second.second > now) {
      return UserCaller(it->second.first);
    }
  }
  Result<net::MungeIdentity> id = net::MungeDecode(cred, opt_.munge_socket);
  if (!id.ok()) {
    if (id.status().code() != StatusCode::kPermissionDenied) {
      std::fprintf(stderr, "berth controller: %s\n", id.status().message().c_str());
    }
    return std::nullopt;
  }
  {
    MutexLock<Mutex> l(munge_mu_);
    if (munge_seen_.size() >= 10000) {
      std::erase_if(munge_seen_, [&](const auto& e) { return e.second.second <= now; });
      if (munge_seen_.size() >= 10000) munge_seen_.clear();
    }
    munge_seen_[cred] = {id->uid, now + kTtlSeconds};
  }
  return UserCaller(id->uid);
}

std::optional<Caller> Auth::IdentifyUserToken(const net::HttpRequest& req) const {
  if (signer_ == nullptr) return std::nullopt;
  std::optional<std::string_view> bearer = BearerToken(req);
  if (!bearer) return std::nullopt;
  if (std::optional<uint32_t> uid = signer_->Verify(*bearer)) return UserCaller(*uid);
  return std::nullopt;
}

std::optional<Caller> Auth::IdentifyToken(const net::HttpRequest& req) const {
  if (std::optional<Caller> munge = IdentifyMunge(req)) return munge;
  if (std::optional<Caller> user = IdentifyUserToken(req)) return user;
  std::optional<std::string_view> bearer = BearerToken(req);
  if (signer_ == nullptr || !bearer) return std::nullopt;
  std::string_view token = *bearer;
  Caller c;
  c.uid = UINT32_MAX;  // owns nothing
  c.gid = UINT32_MAX;
  if (std::optional<std::string> node = signer_->VerifyNode(token)) {
    c.agent_node = *node;
    c.user = "node:" + *node;
    return c;
  }
  if (std::optional<std::pair<uint32_t, int32_t>> job = signer_->VerifyJob(token)) {
    c.step_job = job->first;
    c.step_attempt = job->second;
    c.user = "job:" + std::to_string(job->first);
    return c;
  }
  if (signer_->VerifyJoin(token)) {
    c.join_token = true;
    c.user = "join-token";
    return c;
  }
  return std::nullopt;
}

}  // namespace berth::controller
