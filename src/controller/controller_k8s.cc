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
#include "controller/controller_internal.h"
#include "k8s/codec.h"
#include "k8s/objects.h"
#include "k8s/openapi_v2.h"
#include "net/tls_pki.h"

namespace berth::controller {
namespace {

using nlohmann::json;

std::vector<std::string> SplitPath(std::string_view path) {
  std::vector<std::string> parts;
  size_t i = 0;
  while (i < path.size()) {
    size_t j = std::min(path.find('/', i), path.size());
    if (j > i) parts.emplace_back(path.substr(i, j - i));
    i = j + 1;
  }
  return parts;
}

net::HttpResponse NotFoundPath() {
  return K8sJsonResponse(
      404, k8s::StatusBody(404, "NotFound", "the server could not find the requested resource",
                           json::object()));
}

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

Status Controller::Impl::StartK8s() {
  k8s = std::make_shared<K8sFace>();
  // The namespaces, with the built-in ones made on the first start.
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
  // Versions continue above those of earlier starts (see WatchHub::StartAt).
  k8s->namespaces_rv = std::max(k8s->namespaces_rv, watch_hub.Next());
  k8s->jobs_rv = std::max(k8s->jobs_rv, watch_hub.Next());
  BERTH_RETURN_IF_ERROR(K8sLoad());
  // Nodes known at start-up are as old as this start (berth does not record when a node joined).
  for (const NodeView& n : *node_view) k8s->node_first_seen.emplace(n.name, Now());
  ::unlink((opt.state_dir + "/" + kK8sUrlFile).c_str());  // left by a controller that was killed
  // The token secret, even without a TLS listener: `berth token` on the Unix socket issues.
  BERTH_ASSIGN_OR_RETURN(net::TokenSigner signer,
                         net::TokenSigner::LoadOrCreate(opt.state_dir + "/token.secret"));
  k8s->signer.emplace(std::move(signer));
  if (opt.k8s_listen.empty() || opt.k8s_listen == "off") return Status::Ok();
  std::string host;
  uint16_t port = 0;
  BERTH_RETURN_IF_ERROR(ParseListen(opt.k8s_listen, &host, &port));
  std::string cert = opt.tls_cert, key = opt.tls_key;
  if (cert.empty() != key.empty()) {
    return Status::InvalidArgument("--tls-cert and --tls-key go together");
  }
  if (cert.empty()) {
    std::vector<std::string> dns, ips;
    net::DefaultServingNames(&dns, &ips);
    for (const std::string& name : opt.tls_san) {  // --tls-san: the names agents and users use
      unsigned char addr[16];
      bool ip = inet_pton(AF_INET, name.c_str(), addr) == 1 ||
                inet_pton(AF_INET6, name.c_str(), addr) == 1;
      (ip ? ips : dns).push_back(name);
    }
    BERTH_ASSIGN_OR_RETURN(net::PkiFiles pki, net::EnsurePki(opt.state_dir + "/pki", dns, ips));
    cert = pki.cert;
    key = pki.key;
    BERTH_ASSIGN_OR_RETURN(k8s->ca_pem, net::ReadTextFile(pki.ca_cert));
  } else if (!opt.tls_ca.empty()) {
    BERTH_ASSIGN_OR_RETURN(k8s->ca_pem, net::ReadTextFile(opt.tls_ca));
  }
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
  const Caller& who = *user;
  try {
    std::vector<std::string> p = SplitPath(req.path);
    const bool get = req.method == "GET" || req.method == "HEAD";
    if (p.size() >= 3 && p[0] == "api" && p[1] == "v1") {
      if (p[2] == "namespaces" && p.size() >= 5) {
        const std::vector<std::string> sub(p.begin() + 5, p.end());
        if (p[4] == "pods") return K8sPods(req, who, p[3], sub);
        if (p[4] == "events") return K8sEvents(req, who, p[3], sub);
        return NotFoundPath();
      }
      if (p[2] == "namespaces") return K8sNamespaces(req, who, p);
      if (p[2] == "nodes") return K8sNodes(req, who, p);
      if (p[2] == "pods" && p.size() == 3) return K8sPods(req, who, "", {});
      if (p[2] == "events" && p.size() == 3) return K8sEvents(req, who, "", {});
      return NotFoundPath();
    }
    if (p.size() >= 4 && p[0] == "apis" && p[1] == "batch" && p[2] == "v1") {
      if (p[3] == "jobs" && p.size() == 4) return K8sJobs(req, who, "", {});
      if (p[3] == "namespaces" && p.size() >= 6 && p[5] == "jobs") {
        return K8sJobs(req, who, p[4], std::vector<std::string>(p.begin() + 6, p.end()));
      }
      return NotFoundPath();
    }
    if (p.size() == 1 && (p[0] == "healthz" || p[0] == "livez" || p[0] == "readyz")) {
      net::HttpResponse r;
      r.content_type = "text/plain";
      r.body = "ok";
      return r;
    }
    if (p.size() == 4 && p[0] == "apis" && p[1] == "apiextensions.k8s.io" && p[2] == "v1" &&
        p[3] == "customresourcedefinitions" && get) {
      // No custom resources: kubectl asks when a manifest's kind is unknown, and then says so.
      return K8sJsonResponse(200, {{"kind", "CustomResourceDefinitionList"},
                                   {"apiVersion", "apiextensions.k8s.io/v1"},
                                   {"metadata", {{"resourceVersion", "1"}}},
                                   {"items", json::array()}});
    }
    if (p.size() == 2 && p[0] == "openapi" && p[1] == "v2") {  // kubectl <= 1.28 validates with it
      if (!get) return MethodNotAllowed();
      net::HttpResponse r;
      r.content_type = k8s::kOpenApiV2ProtobufContentType;
      r.body = k8s::OpenApiV2Protobuf(k8s::OpenApiV2Kinds());
      return r;
    }
    const bool known = (p.size() == 1 && (p[0] == "version" || p[0] == "api" || p[0] == "apis")) ||
                       (p.size() == 2 && p[0] == "api" && p[1] == "v1") ||
                       (p.size() == 3 && p[0] == "apis" && p[1] == "batch" && p[2] == "v1") ||
                       (p.size() >= 2 && p[0] == "openapi" && p[1] == "v3");
    if (!known) return NotFoundPath();
    if (!get) return MethodNotAllowed();
    if (p[0] == "version") return K8sJsonResponse(200, k8s::VersionInfo(BERTH_CONTROLLER_VERSION));
    if (p[0] == "api" || p[0] == "apis") {
      if (p.size() == 2) return K8sJsonResponse(200, k8s::LegacyCoreV1Resources());
      if (p.size() == 3) return K8sJsonResponse(200, k8s::LegacyBatchV1Resources());
      std::string version = k8s::AggregatedDiscoveryVersion(req.Header("accept"));
      if (!version.empty()) {
        return K8sJsonResponse(200,
                               p[0] == "api" ? k8s::AggregatedCoreDiscovery(version)
                                             : k8s::AggregatedGroupsDiscovery(version),
                               k8s::AggregatedContentType(version));
      }
      std::string address = k8s->server_url.substr(std::string_view("https://").size());
      return K8sJsonResponse(
          200, p[0] == "api" ? k8s::LegacyApiVersions(address) : k8s::LegacyApiGroupList());
    }
    // OpenAPI v3: the index and the core/v1 document.
    if (p.size() == 2) return K8sJsonResponse(200, k8s::OpenApiV3Index());
    if (p.size() == 4 && p[2] == "api" && p[3] == "v1") {
      return K8sJsonResponse(200, k8s::OpenApiV3CoreV1());
    }
    if (p.size() == 5 && p[2] == "apis" && p[3] == "batch" && p[4] == "v1") {
      return K8sJsonResponse(200, k8s::OpenApiV3BatchV1());
    }
    return NotFoundPath();
  } catch (const nlohmann::json::exception& e) {
    return K8sJsonResponse(
        400, k8s::StatusBody(400, "BadRequest", std::string("bad request: ") + e.what(), nullptr));
  } catch (const std::exception& e) {
    return K8sJsonResponse(
        500,
        k8s::StatusBody(500, "InternalError", std::string("internal error: ") + e.what(), nullptr));
  }
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
