// The Kubernetes face's start, stop and dispatch (face.h).
#include "k8s/face.h"

#include <arpa/inet.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <charconv>
#include <cstdio>
#include <cstring>

#include "k8s/codec.h"
#include "net/tls_pki.h"

namespace berth::k8s {
namespace {

using nlohmann::json;

}  // namespace

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

Face::Face(ControllerPort& port, FaceOptions options) : port_(port), opt_(std::move(options)) {}

Face::~Face() {
  Stop();
}

Status Face::LoadNamespaces() {
  Result<std::optional<std::string>> saved = port_.GetMeta(kNamespacesMetaKey);
  MutexLock l(mu_);
  if (saved.ok() && saved->has_value()) {
    json j = json::parse(**saved, nullptr, false);
    if (j.is_object() && j.contains("items") && j["items"].is_object()) {
      namespaces_rv_ = j.value("rv", uint64_t{1});
      for (const auto& [name, record] : j["items"].items()) namespaces_[name] = record.dump();
    }
  }
  bool added = false;
  for (const char* name : kBuiltinNamespaces) {
    if (namespaces_.count(name)) continue;
    namespaces_[name] = json{{"created", port_.Now()}, {"rv", namespaces_rv_}}.dump();
    added = true;
  }
  if (added) return port_.PutMetaNow(kNamespacesMetaKey, NamespacesText());
  return Status::Ok();
}

Status Face::LoadJobsAndPods() {
  log_dir_ = opt_.state_dir + "/pod-logs";
  if (::mkdir(log_dir_.c_str(), 01777) != 0 && errno != EEXIST) {
    return Status::Internal("cannot create " + log_dir_ + ": " + std::strerror(errno));
  }
  (void)::chmod(log_dir_.c_str(), 01777);  // past the umask
  std::vector<PodJob> jobs = port_.FacePodJobs();
  std::map<std::string, std::shared_ptr<const json>> loaded;
  Status st = port_.ScanMeta(kJobMetaPrefix, [&](const std::string& key, const std::string& v) {
    json j = json::parse(v, nullptr, false);
    if (!j.is_object()) {
      std::fprintf(stderr, "berth controller: warning: unreadable Kubernetes Job %s skipped\n",
                   key.c_str());
      return;
    }
    loaded[key.substr(std::string_view(kJobMetaPrefix).size())] =
        std::make_shared<const json>(std::move(j));
  });
  MutexLock l(mu_);
  for (const PodJob& p : jobs) {
    if (!p.meta || !p.Visible()) continue;
    pods_[http::ObjectKey(p.meta->value("namespace", ""), p.meta->value("name", ""))] = p.id;
  }
  for (auto& [key, job] : loaded) jobs_[key] = std::move(job);
  return st;
}

Result<ServingFiles> ServingCertFiles(const std::string& state_dir, const std::string& tls_cert,
                                      const std::string& tls_key, const std::string& tls_ca,
                                      const std::vector<std::string>& tls_san) {
  ServingFiles f{tls_cert, tls_key, tls_ca};
  if (f.cert.empty() != f.key.empty()) {
    return Status::InvalidArgument("--tls-cert and --tls-key go together");
  }
  if (f.cert.empty()) {
    std::vector<std::string> dns, ips;
    net::DefaultServingNames(&dns, &ips);
    for (const std::string& name : tls_san) {  // --tls-san: the names agents and users use
      unsigned char addr[16];
      bool ip = inet_pton(AF_INET, name.c_str(), addr) == 1 ||
                inet_pton(AF_INET6, name.c_str(), addr) == 1;
      (ip ? ips : dns).push_back(name);
    }
    BERTH_ASSIGN_OR_RETURN(net::PkiFiles pki, net::EnsurePki(state_dir + "/pki", dns, ips));
    f.cert = pki.cert;
    f.key = pki.key;
    f.ca = pki.ca_cert;
  }
  return f;
}

Status Face::ServingCert(std::string* cert, std::string* key) {
  BERTH_ASSIGN_OR_RETURN(ServingFiles f, ServingCertFiles(opt_.state_dir, opt_.tls_cert,
                                                          opt_.tls_key, opt_.tls_ca, opt_.tls_san));
  *cert = f.cert;
  *key = f.key;
  if (!f.ca.empty()) {
    BERTH_ASSIGN_OR_RETURN(ca_pem_, net::ReadTextFile(f.ca));
  }
  return Status::Ok();
}

Status Face::Start() {
  BERTH_RETURN_IF_ERROR(LoadNamespaces());
  {
    // Versions continue above those of earlier starts (see the controller's WatchHub::StartAt).
    MutexLock l(mu_);
    namespaces_rv_ = std::max(namespaces_rv_, port_.WatchNext());
    jobs_rv_ = std::max(jobs_rv_, port_.WatchNext());
  }
  BERTH_RETURN_IF_ERROR(LoadJobsAndPods());
  BERTH_RETURN_IF_ERROR(LoadCronJobs());
  BERTH_RETURN_IF_ERROR(LoadConfigObjects());
  // Nodes known at start-up are as old as this start (berth does not record when a node joined).
  std::vector<NodeFacts> nodes = port_.Nodes();
  {
    MutexLock l(mu_);
    for (const NodeFacts& n : nodes) node_first_seen_.emplace(n.name, port_.Now());
  }
  ::unlink((opt_.state_dir + "/" + kK8sUrlFile).c_str());  // left by a controller that was killed
  // The token secret, even without a TLS listener: `berth token` on the Unix socket issues.
  BERTH_ASSIGN_OR_RETURN(net::TokenSigner signer,
                         net::TokenSigner::LoadOrCreate(opt_.state_dir + "/token.secret"));
  signer_.emplace(std::move(signer));
  if (opt_.listen.empty() || opt_.listen == "off") return Status::Ok();
  return Listen();
}

Status Face::Listen() {
  std::string host;
  uint16_t port = 0;
  BERTH_RETURN_IF_ERROR(ParseListen(opt_.listen, &host, &port));
  std::string cert, key;
  BERTH_RETURN_IF_ERROR(ServingCert(&cert, &key));
  auto server =
      std::make_unique<net::HttpServer>([this](const net::HttpRequest& r) { return Serve(r); });
  Status st = server->ListenTls(host, port, cert, key);
  if (!st.ok()) {
    if (st.code() == StatusCode::kUnavailable && !opt_.listen_required) {
      not_served_ = st.message();
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
  server_url_ = "https://" + url_host + ":" + std::to_string(server->port());
  url_file_ = opt_.state_dir + "/" + kK8sUrlFile;
  BERTH_RETURN_IF_ERROR(net::WriteFileAtomically(url_file_, server_url_ + "\n", 0644));
  server_ = std::move(server);
  std::fprintf(stderr, "berth controller: Kubernetes API on %s (berth kubeconfig)\n",
               server_url_.c_str());
  return Status::Ok();
}

void Face::Stop() {
  if (!server_) return;
  server_->Stop();
  ::unlink(url_file_.c_str());
  url_file_.clear();
}

net::HttpResponse Face::Serve(const net::HttpRequest& req) {
  // berth's own API shares the port: the same paths and answers as on the Unix socket, with the
  // caller named by a bearer token (a user's, a node's credential, or the join token).
  // The web console (/ui: its pages, sign-in and sign-out) too: the controller serves it.
  if (req.path == "/metrics" || req.path == "/v1" || req.path.starts_with("/v1/") ||
      req.path == "/ui" || req.path.starts_with("/ui/")) {
    return port_.ServeApi(req);
  }
  // Who is asking: only a valid bearer token says.
  std::optional<User> user = port_.IdentifyUser(req);
  if (!user) return http::JsonResponse(401, UnauthorizedStatus());
  try {
    const RouteMatch m = MatchRoute(req.method, req.path);
    return Dispatch(m.endpoint, Call{req, *user, m.match});
  } catch (const nlohmann::json::exception& e) {
    return http::JsonResponse(
        400, StatusBody(400, "BadRequest", std::string("bad request: ") + e.what(), nullptr));
  } catch (const std::exception& e) {
    return http::JsonResponse(
        500, StatusBody(500, "InternalError", std::string("internal error: ") + e.what(), nullptr));
  }
}

net::HttpResponse Face::Dispatch(Endpoint e, const Call& c) {
  using E = Endpoint;
  switch (e) {
    case E::kNotFound:
      return http::NotFoundPath();
    case E::kNotAllowed:
      return http::MethodNotAllowedHere();
    case E::kNamespaceList:
      return NamespaceList(c);
    case E::kNamespaceCreate:
      return NamespaceCreate(c);
    case E::kNamespaceGet:
      return NamespaceGet(c);
    case E::kNamespaceUpdate:
      return NamespaceUpdate(c);
    case E::kNamespaceDelete:
      return NamespaceDelete(c);
    case E::kNodeList:
      return NodeList(c);
    case E::kNodeGet:
    case E::kNodeOther:
      return NodeGet(c);
    case E::kNodePatch:
      return NodePatch(c);
    case E::kPodList:
      return PodList(c);
    case E::kPodCreate:
      return PodCreate(c);
    case E::kPodGet:
    case E::kPodOther:
      return PodGet(c);
    case E::kPodDelete:
      return PodDelete(c);
    case E::kPodUpdate:
      return PodUpdate(c);
    case E::kPodLog:
      return PodLog(c);
    case E::kPodExec:
      return PodStream(c, "exec");
    case E::kPodAttach:
      return PodStream(c, "attach");
    case E::kPodPortForward:
      return PodStream(c, "portforward");
    case E::kEventList:
      return EventList(c);
    case E::kEventGet:
      return EventGet(c);
    case E::kConfigList:
      return ConfigList(c);
    case E::kConfigCreate:
      return ConfigCreate(c);
    case E::kConfigGet:
      return ConfigGet(c);
    case E::kConfigUpdate:
      return ConfigUpdate(c);
    case E::kConfigDelete:
      return ConfigDelete(c);
    case E::kJobList:
      return JobList(c);
    case E::kJobCreate:
      return JobCreate(c);
    case E::kJobGet:
    case E::kJobDelete:
    case E::kJobUpdate:
    case E::kJobStatusUpdate:
    case E::kJobOther:
      return JobItem(e, c);
    case E::kCronJobList:
      return CronJobList(c);
    case E::kCronJobCreate:
      return CronJobCreate(c);
    case E::kCronJobGet:
    case E::kCronJobDelete:
    case E::kCronJobUpdate:
    case E::kCronJobOther:
      return CronJobItem(e, c);
    case E::kNodeMetricsList:
    case E::kNodeMetricsGet:
    case E::kPodMetricsList:
    case E::kPodMetricsGet:
      return MetricsItem(e, c);
    default:
      return Discovery(e, c.req);
  }
}

}  // namespace berth::k8s
