// The Kubernetes face (docs/kubernetes.md): start and stop, bearer-token identity, routing,
// /version, discovery and OpenAPI, and the kubeconfig handed out on the Unix socket. The
// resources themselves are in controller_k8s_resources.cc.
#include <arpa/inet.h>
#include <pwd.h>
#include <unistd.h>

#include <algorithm>
#include <charconv>
#include <cstdio>

#include "api/errors.h"
#include "controller/controller_k8s_http.h"
#include "controller/k8s_routes.h"
#include "k8s/codec.h"
#include "k8s/objects.h"
#include "k8s/openapi_v2.h"
#include "net/tls_pki.h"

namespace berth::controller {
namespace {

using nlohmann::json;

net::HttpResponse MethodNotAllowed() {
  return K8sJsonResponse(
      405, k8s::StatusBody(405, "MethodNotAllowed",
                           "the server does not allow this method on the requested resource",
                           json::object()));
}

// "host:port" -> host (brackets of an IPv6 literal removed) and port.
Status ParseListen(const std::string& text, std::string* host, uint16_t* port) {
  size_t colon = text.rfind(':');
  if (colon == std::string::npos) {
    return Status::InvalidArgument("--k8s-listen: expected HOST:PORT (or off), got '" + text + "'");
  }
  *host = text.substr(0, colon);
  if (host->size() >= 2 && host->front() == '[' && host->back() == ']') {
    *host = host->substr(1, host->size() - 2);
  }
  std::string_view p(text);
  p.remove_prefix(colon + 1);
  auto [end, ec] = std::from_chars(p.data(), p.data() + p.size(), *port);
  if (ec != std::errc() || end != p.data() + p.size() || p.empty()) {
    return Status::InvalidArgument("--k8s-listen: bad port in '" + text + "'");
  }
  return Status::Ok();
}

std::string Base64(std::string_view in) {
  static constexpr char kAlphabet[] =
      "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
  std::string out;
  out.reserve((in.size() + 2) / 3 * 4);
  for (size_t i = 0; i < in.size(); i += 3) {
    uint32_t v = static_cast<uint8_t>(in[i]) << 16;
    if (i + 1 < in.size()) v |= static_cast<uint8_t>(in[i + 1]) << 8;
    if (i + 2 < in.size()) v |= static_cast<uint8_t>(in[i + 2]);
    out += kAlphabet[(v >> 18) & 63];
    out += kAlphabet[(v >> 12) & 63];
    out += i + 1 < in.size() ? kAlphabet[(v >> 6) & 63] : '=';
    out += i + 2 < in.size() ? kAlphabet[v & 63] : '=';
  }
  return out;
}

}  // namespace

net::HttpResponse K8sJsonResponse(int status, const json& body, std::string content_type) {
  net::HttpResponse r;
  r.status = status;
  r.content_type = std::move(content_type);
  r.body = body.dump();
  r.body += '\n';
  r.headers.emplace_back("Cache-Control", "no-cache, private");
  return r;
}

Status Controller::Impl::K8sLoadNamespaces() {
  Result<std::optional<std::string>> saved = store->GetMeta(kNamespacesMetaKey);
  if (saved.ok() && saved->has_value()) {
    json j = json::parse(**saved, nullptr, false);
    if (j.is_object() && j.contains("items") && j["items"].is_object()) {
      k8s->namespaces_rv = j.value("rv", uint64_t{1});
      for (const auto& [name, record] : j["items"].items()) k8s->namespaces[name] = record.dump();
    }
  }
  bool added = false;
  for (const char* name : kBuiltinNamespaces) {
    if (k8s->namespaces.count(name)) continue;
    k8s->namespaces[name] = json{{"created", Now()}, {"rv", k8s->namespaces_rv}}.dump();
    added = true;
  }
  if (added) {
    json items = json::object();
    for (const auto& [name, record] : k8s->namespaces) items[name] = json::parse(record);
    BERTH_RETURN_IF_ERROR(
        store->Commit({{store::Write::Kind::kPutMeta,
                        {},
                        kNamespacesMetaKey,
                        json{{"rv", k8s->namespaces_rv}, {"items", items}}.dump()}}));
  }
  return Status::Ok();
}

Status Controller::Impl::K8sServingCert(std::string* cert, std::string* key) {
  *cert = opt.tls_cert;
  *key = opt.tls_key;
  if (cert->empty() != key->empty()) {
    return Status::InvalidArgument("--tls-cert and --tls-key go together");
  }
  if (cert->empty()) {
    std::vector<std::string> dns, ips;
    net::DefaultServingNames(&dns, &ips);
    for (const std::string& name : opt.tls_san) {  // --tls-san: the names agents and users use
      unsigned char addr[16];
      bool ip = inet_pton(AF_INET, name.c_str(), addr) == 1 ||
                inet_pton(AF_INET6, name.c_str(), addr) == 1;
      (ip ? ips : dns).push_back(name);
    }
    BERTH_ASSIGN_OR_RETURN(net::PkiFiles pki, net::EnsurePki(opt.state_dir + "/pki", dns, ips));
    *cert = pki.cert;
    *key = pki.key;
    BERTH_ASSIGN_OR_RETURN(k8s->ca_pem, net::ReadTextFile(pki.ca_cert));
  } else if (!opt.tls_ca.empty()) {
    BERTH_ASSIGN_OR_RETURN(k8s->ca_pem, net::ReadTextFile(opt.tls_ca));
  }
  return Status::Ok();
}

Status Controller::Impl::StartK8s() {
  k8s = std::make_shared<K8sFace>();
  BERTH_RETURN_IF_ERROR(K8sLoadNamespaces());
  // Versions continue above those of earlier starts (see WatchHub::StartAt).
  k8s->namespaces_rv = std::max(k8s->namespaces_rv, watch_hub.Next());
  k8s->jobs_rv = std::max(k8s->jobs_rv, watch_hub.Next());
  BERTH_RETURN_IF_ERROR(K8sLoad());
  // Nodes known at start-up are as old as this start (berth does not record when a node joined).
  std::shared_ptr<const std::vector<NodeView>> nodes;
  {
    ReaderLock l(view_mu);
    nodes = node_view;
  }
  for (const NodeView& n : *nodes) k8s->node_first_seen.emplace(n.name, Now());
  ::unlink((opt.state_dir + "/" + kK8sUrlFile).c_str());  // left by a controller that was killed
  // The token secret, even without a TLS listener: `berth token` on the Unix socket issues.
  BERTH_ASSIGN_OR_RETURN(net::TokenSigner signer,
                         net::TokenSigner::LoadOrCreate(opt.state_dir + "/token.secret"));
  k8s->signer.emplace(std::move(signer));
  if (opt.k8s_listen.empty() || opt.k8s_listen == "off") return Status::Ok();
  std::string host;
  uint16_t port = 0;
  BERTH_RETURN_IF_ERROR(ParseListen(opt.k8s_listen, &host, &port));
  std::string cert, key;
  BERTH_RETURN_IF_ERROR(K8sServingCert(&cert, &key));
  auto server =
      std::make_unique<net::HttpServer>([this](const net::HttpRequest& r) { return K8sServe(r); });
  Status st = server->ListenTls(host, port, cert, key);
  if (!st.ok()) {
    if (st.code() == StatusCode::kUnavailable && !opt.k8s_listen_required) {
      std::fprintf(stderr,
                   "berth controller: warning: not serving the Kubernetes API: %s (choose "
                   "another address with --k8s-listen)\n",
                   st.message().c_str());
      return Status::Ok();
    }
    return st;
  }
  BERTH_RETURN_IF_ERROR(server->Start());
  std::string url_host = host.empty() || host == "0.0.0.0" || host == "::" ? "127.0.0.1" : host;
  if (url_host.find(':') != std::string::npos) url_host = "[" + url_host + "]";
  k8s->server_url = "https://" + url_host + ":" + std::to_string(server->port());
  k8s->url_file = opt.state_dir + "/" + kK8sUrlFile;
  BERTH_RETURN_IF_ERROR(net::WriteFileAtomically(k8s->url_file, k8s->server_url + "\n", 0644));
  k8s->server = std::move(server);
  std::fprintf(stderr, "berth controller: Kubernetes API on %s (berth kubeconfig)\n",
               k8s->server_url.c_str());
  return Status::Ok();
}

void Controller::Impl::StopK8s() {
  if (!k8s || !k8s->server) return;
  k8s->server->Stop();
  ::unlink(k8s->url_file.c_str());
}

net::HttpResponse Controller::Impl::K8sServe(const net::HttpRequest& req) {
  // berth's own API shares the port: the same paths and answers as on the Unix socket, with the
  // caller named by a bearer token (a user's, a node's credential, or the join token).
  if (req.path == "/metrics" || req.path == "/v1" || req.path.starts_with("/v1/")) {
    std::optional<Caller> caller = auth.IdentifyToken(req);
    if (!caller) return Unauthorized("a valid bearer token is required (berth token)");
    return ServeAs(req, *caller);
  }
  // Who is asking: only a valid bearer token says.
  std::optional<Caller> user = auth.IdentifyUserToken(req);
  if (!user) return K8sJsonResponse(401, k8s::UnauthorizedStatus());
  try {
    const K8sRouteMatch m = MatchK8sRoute(req.method, req.path);
    return K8sDispatch(m.endpoint, K8sCall{req, *user, m.match});
  } catch (const nlohmann::json::exception& e) {
    return K8sJsonResponse(
        400, k8s::StatusBody(400, "BadRequest", std::string("bad request: ") + e.what(), nullptr));
  } catch (const std::exception& e) {
    return K8sJsonResponse(
        500,
        k8s::StatusBody(500, "InternalError", std::string("internal error: ") + e.what(), nullptr));
  }
}

net::HttpResponse Controller::Impl::K8sDispatch(K8sEndpoint e, const K8sCall& c) {
  using E = K8sEndpoint;
  switch (e) {
    case E::kNotFound:
      return k8sface::NotFoundPath();
    case E::kNotAllowed:
      return k8sface::MethodNotAllowedHere();
    case E::kNamespaceList:
      return K8sNamespaceList(c);
    case E::kNamespaceCreate:
      return K8sNamespaceCreate(c);
    case E::kNamespaceGet:
      return K8sNamespaceGet(c);
    case E::kNamespaceUpdate:
      return K8sNamespaceUpdate(c);
    case E::kNamespaceDelete:
      return K8sNamespaceDelete(c);
    case E::kNodeList:
      return K8sNodeList(c);
    case E::kNodeGet:
    case E::kNodeOther:
      return K8sNodeGet(c);
    case E::kNodePatch:
      return K8sNodePatch(c);
    case E::kPodList:
      return K8sPodList(c);
    case E::kPodCreate:
      return K8sPodCreate(c);
    case E::kPodGet:
    case E::kPodOther:
      return K8sPodGet(c);
    case E::kPodDelete:
      return K8sPodDelete(c);
    case E::kPodUpdate:
      return K8sPodUpdate(c);
    case E::kPodLog:
      return K8sPodLog(c);
    case E::kEventList:
      return K8sEventList(c);
    case E::kEventGet:
      return K8sEventGet(c);
    case E::kJobList:
      return K8sJobList(c);
    case E::kJobCreate:
      return K8sJobCreate(c);
    case E::kJobGet:
    case E::kJobDelete:
    case E::kJobUpdate:
    case E::kJobStatusUpdate:
    case E::kJobOther:
      return K8sJobItem(e, c);
    default:
      return K8sDiscovery(e, c.req);
  }
}

net::HttpResponse Controller::Impl::K8sDiscovery(K8sEndpoint e, const net::HttpRequest& req) {
  using E = K8sEndpoint;
  switch (e) {
    case E::kHealth: {
      net::HttpResponse r;
      r.content_type = "text/plain";
      r.body = "ok";
      return r;
    }
    case E::kCrds:
      // No custom resources: kubectl asks when a manifest's kind is unknown, and then says so.
      return K8sJsonResponse(200, {{"kind", "CustomResourceDefinitionList"},
                                   {"apiVersion", "apiextensions.k8s.io/v1"},
                                   {"metadata", {{"resourceVersion", "1"}}},
                                   {"items", json::array()}});
    case E::kOpenApiV2: {  // kubectl <= 1.28 validates with it
      net::HttpResponse r;
      r.content_type = k8s::kOpenApiV2ProtobufContentType;
      r.body = k8s::OpenApiV2Protobuf(k8s::OpenApiV2Kinds());
      return r;
    }
    case E::kVersion:
      return K8sJsonResponse(200, k8s::VersionInfo(BERTH_CONTROLLER_VERSION));
    case E::kApiVersions:
    case E::kApiGroups:
      return K8sApiDiscovery(e == E::kApiVersions, req);
    case E::kCoreV1:
      return K8sJsonResponse(200, k8s::LegacyCoreV1Resources());
    case E::kBatchV1:
      return K8sJsonResponse(200, k8s::LegacyBatchV1Resources());
    case E::kOpenApiV3Index:
      return K8sJsonResponse(200, k8s::OpenApiV3Index());
    case E::kOpenApiV3CoreV1:
      return K8sJsonResponse(200, k8s::OpenApiV3CoreV1());
    case E::kOpenApiV3BatchV1:
      return K8sJsonResponse(200, k8s::OpenApiV3BatchV1());
    case E::kDiscoveryNotAllowed:
      return MethodNotAllowed();
    default:
      return k8sface::NotFoundPath();
  }
}

net::HttpResponse Controller::Impl::K8sApiDiscovery(bool core, const net::HttpRequest& req) {
  std::string version = k8s::AggregatedDiscoveryVersion(req.Header("accept"));
  if (!version.empty()) {
    return K8sJsonResponse(
        200, core ? k8s::AggregatedCoreDiscovery(version) : k8s::AggregatedGroupsDiscovery(version),
        k8s::AggregatedContentType(version));
  }
  std::string address = k8s->server_url.substr(std::string_view("https://").size());
  return K8sJsonResponse(200, core ? k8s::LegacyApiVersions(address) : k8s::LegacyApiGroupList());
}

net::HttpResponse Controller::Impl::Kubeconfig(const Caller& who) const {
  auto error = [](const Status& st) {
    return K8sJsonResponse(api::HttpStatusOf(st.code()), api::ErrorBody(st));
  };
  if (!who.known) {
    return error(Status::PermissionDenied(
        "a kubeconfig is given only on the Unix socket, for the user connected to it"));
  }
  if (!k8s || !k8s->server) {
    return error(Status::Unavailable(
        "this controller serves no Kubernetes API (berth controller --k8s-listen HOST:PORT)"));
  }
  json cluster = {{"server", k8s->server_url}};
  if (!k8s->ca_pem.empty()) cluster["certificate-authority-data"] = Base64(k8s->ca_pem);
  const std::string context = who.user + "@berth";
  json config = {
      {"apiVersion", "v1"},
      {"kind", "Config"},
      {"preferences", json::object()},
      {"clusters", json::array({{{"name", "berth"}, {"cluster", cluster}}})},
      {"users",
       json::array({{{"name", who.user}, {"user", {{"token", k8s->signer->Issue(who.uid)}}}}})},
      {"contexts",
       json::array(
           {{{"name", context},
             {"context", {{"cluster", "berth"}, {"user", who.user}, {"namespace", "default"}}}}})},
      {"current-context", context}};
  return K8sJsonResponse(200, config);
}

}  // namespace berth::controller
