// Credentials over the API (docs/security.md): a node joins with the cluster's join token and
// gets its own credential; `berth token` gets a user's bearer token (or, for operators, another
// user's, a node's, or the join token).
#include <pwd.h>

#include <charconv>
#include <cstdio>

#include "controller/controller_internal.h"
#include "controller/controller_k8s.h"

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

Result<json> Controller::Impl::JoinNode(const Caller& who, const json& body,
                                        const std::string& remote) {
  if (!who.join_token && !who.admin) {
    return Status::PermissionDenied("joining a node needs the cluster's join token");
  }
  if (!k8s || !k8s->signer) return Status::Unavailable("this controller issues no credentials");
  if (!body.is_object() || !body.contains("node") || !body.at("node").is_string()) {
    return Status::InvalidArgument("expected {\"node\": NAME}");
  }
  const std::string node = body.at("node").get<std::string>();
  if (!net::TokenSigner::ValidNodeName(node)) {
    return Status::InvalidArgument("bad node name '" + node +
                                   "': 1 to 63 of letters, digits, '.', '_' and '-'");
  }
  std::fprintf(stderr, "berth controller: node %s joined from %s\n", node.c_str(), remote.c_str());
  return json{{"node", node}, {"credential", k8s->signer->IssueNode(node)}};
}

Result<json> Controller::Impl::IssueToken(const Caller& who, const json& body) {
  if (!who.known) return Status::PermissionDenied("only a user may ask for a token");
  if (!k8s || !k8s->signer) return Status::Unavailable("this controller issues no tokens");
  if (!body.is_null() && !body.is_object()) {
    return Status::InvalidArgument(
        "expected {} or {\"user\": NAME} or {\"node\": NAME} or {\"join\": true}");
  }
  json out = {{"server", k8s->server_url}, {"ca", k8s->ca_pem}};
  const json b = body.is_object() ? body : json::object();
  if (b.value("join", false)) {
    if (!who.admin) return Status::PermissionDenied("only an operator may read the join token");
    out["kind"] = "join";
    out["token"] = k8s->signer->IssueJoin();
    return out;
  }
  if (b.contains("node")) {
    if (!who.admin) return Status::PermissionDenied("only an operator may issue a node credential");
    const std::string node = b.at("node").get<std::string>();
    if (!net::TokenSigner::ValidNodeName(node)) {
      return Status::InvalidArgument("bad node name '" + node + "'");
    }
    out["kind"] = "node";
    out["node"] = node;
    out["token"] = k8s->signer->IssueNode(node);
    return out;
  }
  uint32_t uid = who.uid;
  if (b.contains("user")) {
    const std::string name = b.at("user").is_number_unsigned()
                                 ? std::to_string(b.at("user").get<uint32_t>())
                                 : b.at("user").get<std::string>();
    std::optional<uint32_t> found = LookUpUser(name);
    if (!found) return Status::NotFound("no such user: " + name);
    if (*found != who.uid && !who.admin) {
      return Status::PermissionDenied("only an operator may issue a token for another user");
    }
    uid = *found;
  }
  Caller user = UserCaller(uid);
  out["kind"] = "user";
  out["user"] = user.user;
  out["uid"] = uid;
  out["token"] = k8s->signer->Issue(uid);
  return out;
}

}  // namespace berth::controller
