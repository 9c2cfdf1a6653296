// Credentials over the API (docs/security.md): a node joins with the cluster's join token and
// gets its own credential; `berth token` gets a user's bearer token (or, for operators, another
// user's, a node's, or the join token).
#include <pwd.h>

#include <charconv>
#include <cstdio>

#include "controller/controller_internal.h"

namespace berth::controller {

using nlohmann::json;

namespace {

// The uid of a user name, or of a uid given as digits.
std::optional<uint32_t> LookUpUser(const std::string& name) {
  uint32_t uid = 0;
  auto [end, ec] = std::from_chars(name.data(), name.data() + name.size(), uid);
  if (!name.empty() && ec == std::errc() && end == name.data() + name.size()) return uid;
  struct passwd pw, *found = nullptr;
  char buf[4096];
  if (getpwnam_r(name.c_str(), &pw, buf, sizeof(buf), &found) == 0 && found) return found->pw_uid;
  return std::nullopt;
}

}  // namespace

Result<json> Controller::Impl::JoinNode(const JoinRequest& request, const std::string& remote) {
  const net::TokenSigner* signer = auth.signer();
  if (signer == nullptr) return Status::Unavailable("this controller issues no credentials");
  BERTH_RETURN_IF_ERROR(request.error);
  const std::string& node = request.node;
  std::fprintf(stderr, "berth controller: node %s joined from %s\n", node.c_str(), remote.c_str());
  return json{{"node", node}, {"credential", signer->IssueNode(node)}};
}

Result<json> Controller::Impl::IssueToken(const Caller& who, const TokenRequest& request) {
  if (who.web_session) return Status::PermissionDenied(std::string(kWebSessionMintsNothing));
  const net::TokenSigner* signer = auth.signer();
  if (signer == nullptr) return Status::Unavailable("this controller issues no tokens");
  BERTH_RETURN_IF_ERROR(request.shape);
  json out = {{"server", k8s->server_url()}, {"ca", k8s->ca_pem()}};
  if (request.join) {
    if (!who.admin) return Status::PermissionDenied("only an operator may read the join token");
    out["kind"] = "join";
    out["token"] = signer->IssueJoin();
    return out;
  }
  if (request.has_node) {
    if (!who.admin) return Status::PermissionDenied("only an operator may issue a node credential");
    BERTH_RETURN_IF_ERROR(request.node_error);
    if (!net::TokenSigner::ValidNodeName(request.node)) {
      return Status::InvalidArgument("bad node name '" + request.node + "'");
    }
    out["kind"] = "node";
    out["node"] = request.node;
    out["token"] = signer->IssueNode(request.node);
    return out;
  }
  uint32_t uid = who.uid;
  if (request.has_user) {
    BERTH_RETURN_IF_ERROR(request.user_error);
    std::optional<uint32_t> found = LookUpUser(request.user);
    if (!found) return Status::NotFound("no such user: " + request.user);
    if (*found != who.uid && !who.admin) {
      return Status::PermissionDenied("only an operator may issue a token for another user");
    }
    uid = *found;
  }
  Caller user = auth.UserCaller(uid);
  out["kind"] = "user";
  out["user"] = user.user;
  out["uid"] = uid;
  out["token"] = signer->Issue(uid);
  return out;
}

}  // namespace berth::controller
