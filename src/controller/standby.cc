#include "controller/standby.h"

#include <charconv>
#include <cstdio>
#include <utility>

#include "api/errors.h"
#include "k8s/face.h"

namespace berth::controller {

namespace {

// 503: this controller did nothing; clients with a list of controllers move on when they see the
// X-Berth-Leader header (even empty: the leader unknown here).
net::HttpResponse NotTheLeader(const std::string& why, const std::string& leader_address) {
  net::HttpResponse r;
  r.status = 503;
  r.body = api::ErrorBody(Status::Unavailable(why)).dump();
  r.headers.push_back({"Retry-After", "1"});
  r.headers.push_back({"X-Berth-Leader", leader_address});
  return r;
}

}  // namespace

net::HttpResponse StandbyAnswer(const std::string& self, const std::string& leader_name,
                                const std::string& leader_address) {
  std::string why = "this controller (" + self + ") is a standby of its group";
  why += leader_name.empty()
             ? "; no leader is elected yet: try again in a moment"
             : "; the leader is " + leader_name +
                   (leader_address.empty() ? std::string() : " at " + leader_address);
  return NotTheLeader(why, leader_address);
}

bool ServedWhileDeposed(const net::HttpRequest& request) {
  if (request.path == "/readyz" || request.path.starts_with("/v1/agents")) return false;
  if (request.method == "GET" || request.method == "HEAD") return true;
  return request.method == "POST" && request.path.starts_with("/v1/views/");
}

net::HttpResponse DeposedAnswer() {
  return NotTheLeader(
      "this controller is no longer its group's leader (its etcd lease was lost, or etcd cannot "
      "be reached): it serves reads from its last state and refuses changes; another member takes "
      "them",
      "");
}

StandbyServer::StandbyServer(StandbyOptions options) : opt_(std::move(options)) {}

StandbyServer::~StandbyServer() {
  Stop();
}

void StandbyServer::SetLeader(const std::string& name, const std::string& address) {
  MutexLock<Mutex> l(mu_);
  leader_name_ = name;
  leader_address_ = address;
}

net::HttpResponse StandbyServer::Handle(const net::HttpRequest& request) {
  if (request.path == "/healthz") {
    net::HttpResponse r;
    r.body = R"({"status": "ok"})";
    return r;
  }
  if (request.method == "GET" && request.path == "/v1/ha" && opt_.group_status) {
    net::HttpResponse r;
    r.body = opt_.group_status().dump();
    return r;
  }
  std::string name, address;
  {
    MutexLock<Mutex> l(mu_);
    name = leader_name_;
    address = leader_address_;
  }
  // Over TCP or HTTPS the caller's credential travels with the request: pass it on. Not for
  // readiness (only the leader is ready) nor agents (they keep to the leader themselves).
  const std::string upstream = Forwarder::UpstreamOf(address);
  if (!request.peer && !upstream.empty() && forwarder_ != nullptr && request.path != "/readyz" &&
      !request.path.starts_with("/v1/agents")) {
    return forwarder_->Forward(request, name, upstream);
  }
  return StandbyAnswer(opt_.name, name, address);
}

Status StandbyServer::Start() {
  forwarder_ = std::make_unique<Forwarder>(Forwarder::Options{opt_.name, opt_.leader_ca});
  auto handler = [this](const net::HttpRequest& r) { return Handle(r); };
  unix_ = std::make_unique<net::HttpServer>(handler);
  BERTH_RETURN_IF_ERROR(unix_->ListenUnix(opt_.socket_path, 0666));
  BERTH_RETURN_IF_ERROR(unix_->Start());
  if (!opt_.tcp_listen.empty()) {
    const size_t colon = opt_.tcp_listen.rfind(':');
    uint16_t port = 0;
    const char* end = opt_.tcp_listen.data() + opt_.tcp_listen.size();
    if (colon == std::string::npos ||
        std::from_chars(opt_.tcp_listen.data() + colon + 1, end, port).ptr != end) {
      return Status::InvalidArgument("--listen-tcp: want HOST:PORT, got " + opt_.tcp_listen);
    }
    tcp_ = std::make_unique<net::HttpServer>(handler);
    BERTH_RETURN_IF_ERROR(tcp_->ListenTcp(opt_.tcp_listen.substr(0, colon), port));
    BERTH_RETURN_IF_ERROR(tcp_->Start());
  }
  if (!opt_.https_listen.empty()) {
    std::string host;
    uint16_t port = 0;
    Status st = k8s::ParseListen(opt_.https_listen, &host, &port);
    auto https = std::make_unique<net::HttpServer>(handler);
    if (st.ok()) st = https->ListenTls(host, port, opt_.tls_cert, opt_.tls_key);
    if (st.ok()) st = https->Start();
    if (st.ok()) {
      https_ = std::move(https);
    } else {
      std::fprintf(stderr,
                   "berth controller: warning: the standby does not serve HTTPS on %s: %s\n",
                   opt_.https_listen.c_str(), st.message().c_str());
    }
  }
  return Status::Ok();
}

void StandbyServer::Stop() {
  // Streams and relays in progress end first: the servers wait for their handlers.
  if (forwarder_) forwarder_->AbortAll();
  if (unix_) unix_->Stop();
  if (tcp_) tcp_->Stop();
  if (https_) https_->Stop();
  unix_.reset();
  tcp_.reset();
  https_.reset();
  forwarder_.reset();
}

}  // namespace berth::controller
