// StandbyServer: what a controller of an HA group serves while another one leads
// (docs/ha.md): its health, its group (GET /v1/ha), requests that came over TCP or HTTPS passed
// on to the leader when the leader advertises such an address (forward.h: kubectl, which knows
// one server, works against any member), and for the rest a 503 that names the leader (header
// X-Berth-Leader: its address) so that clients with a list of controllers move on to it: Unix
// socket callers (their identity is the socket's), agents (they keep to the leader themselves),
// readiness (only the leader is ready). Nothing is done on a standby itself.
//
// Thread safety: SetLeader may be called from any thread while the server runs.
#ifndef BERTH_CONTROLLER_STANDBY_H_
#define BERTH_CONTROLLER_STANDBY_H_

#include <functional>
#include <memory>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>

#include "common/status.h"
#include "common/thread_annotations.h"
#include "controller/forward.h"
#include "net/http.h"

namespace berth::controller {

struct StandbyOptions {
  std::string name;         // this controller's name in the group
  std::string socket_path;  // the Unix socket the leader would listen on
  std::string tcp_listen;   // "host:port", or ""
  // GET /v1/ha's answer (the group as etcd has it now).
  std::function<nlohmann::json()> group_status;
  // HTTPS (the Kubernetes API's port, --k8s-listen) with this certificate and key: "" = none.
  // Not listening there (the address taken) is a warning: the other listeners serve on.
  std::string https_listen;
  std::string tls_cert, tls_key;
  // The CA the leader's HTTPS certificate chains to, for forwarding ("" = the system's).
  std::string leader_ca;
};

// The 503 a standby answers (and the header naming the leader), for the server and its tests.
net::HttpResponse StandbyAnswer(const std::string& self, const std::string& leader_name,
                                const std::string& leader_address);

// What a deposed leader (its lease lost, or etcd out of reach) still serves itself: reads (GET,
// and the POST views of squeue and scancel), but not readiness nor its agents' endpoints, which
// must find the next leader.
bool ServedWhileDeposed(const net::HttpRequest& request);
// The 503 a deposed leader answers the rest with (X-Berth-Leader empty: ask another member).
net::HttpResponse DeposedAnswer();

class StandbyServer {
 public:
  explicit StandbyServer(StandbyOptions options);
  ~StandbyServer();  // stops
  StandbyServer(const StandbyServer&) = delete;
  StandbyServer& operator=(const StandbyServer&) = delete;

  // Listens on the socket (and TCP) and serves. Errors name the address.
  Status Start();
  // Stops serving and removes the socket file (the leader's controller takes the addresses).
  void Stop();
  // The leader seen last (name "" when none).
  void SetLeader(const std::string& name, const std::string& address);

  net::HttpResponse Handle(const net::HttpRequest& request);

 private:
  StandbyOptions opt_;
  std::unique_ptr<Forwarder> forwarder_;
  Mutex mu_;
  std::string leader_name_ GUARDED_BY(mu_);
  std::string leader_address_ GUARDED_BY(mu_);
  std::unique_ptr<net::HttpServer> unix_, tcp_, https_;
};

}  // namespace berth::controller

#endif  // BERTH_CONTROLLER_STANDBY_H_
