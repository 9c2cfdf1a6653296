#include "cli/group_controller.h"

#include <unistd.h>

#include <chrono>
#include <cstdio>
#include <memory>
#include <nlohmann/json.hpp>
#include <optional>
#include <thread>
#include <utility>

#include "cli/client.h"
#include "controller/standby.h"
#include "k8s/face.h"
#include "net/tls_pki.h"
#include "net/tls_token.h"
#include "store/etcd_follower.h"

namespace berth::cli {
namespace {

// The leader compacts etcd's history every `interval_s` to the revision it saw the time before,
// so that reads and watches younger than an interval never meet a compacted revision (etcd keeps
// every version of every key until compacted), as Kubernetes' API server does.
class Compactor {
 public:
  Compactor(const store::Election& election, int interval_s)
      : election_(election), interval_(interval_s) {
    if (interval_s <= 0) return;
    next_ = std::chrono::steady_clock::now() + interval_;
    Result<int64_t> first = election_.Revision();
    if (first.ok()) compact_to_ = *first;
  }
  void Tick() {
    if (interval_.count() <= 0 || std::chrono::steady_clock::now() < next_) return;
    next_ += interval_;
    Result<int64_t> now = election_.Revision();
    Status st = compact_to_ > 0 ? election_.Compact(compact_to_) : Status::Ok();
    if (!st.ok()) {
      std::fprintf(stderr, "berth controller: etcd's history not compacted: %s\n",
                   st.message().c_str());
    }
    if (now.ok()) compact_to_ = *now;
  }

 private:
  const store::Election& election_;
  std::chrono::seconds interval_;
  std::chrono::steady_clock::time_point next_;
  int64_t compact_to_ = 0;
};

// A leader's term: serves until `stop`, or until its term is over and the group can go on
// without it. When the lease is lost or a commit fails (etcd unreachable, no quorum, another
// leader), the controller refuses every change (503) but keeps serving reads from its last
// state, and checks etcd every half second: once etcd answers (another leads, or none does), the
// term ends and the caller rejoins the group as a standby. Returns true on `stop`.
bool Lead(controller::Controller& c, const std::string& socket, store::Election& election,
          int compaction_s, const std::atomic<bool>& stop) {
  std::fprintf(stderr, "berth controller: listening on %s\n", socket.c_str());
  bool degraded = false;
  auto next_check = std::chrono::steady_clock::now();
  Compactor compactor(election, compaction_s);
  while (!stop) {
    std::this_thread::sleep_for(std::chrono::milliseconds(100));
    if (!degraded) compactor.Tick();
    Status failure = c.StoreFailure();
    if (!degraded && (election.Lost() || !failure.ok())) {
      degraded = true;
      std::fprintf(
          stderr,
          "berth controller: no longer leading (epoch %lld): %s; serving reads, refusing "
          "changes until etcd answers\n",
          static_cast<long long>(election.epoch()),
          election.Lost() ? "the lease could not be renewed in time" : failure.message().c_str());
    }
    if (!degraded || std::chrono::steady_clock::now() < next_check) continue;
    next_check = std::chrono::steady_clock::now() + std::chrono::milliseconds(500);
    Result<std::optional<store::Leader>> now = election.CurrentLeader();
    if (!now.ok()) continue;  // etcd still cannot be read: go on serving what is known
    // etcd answers: hand the key back if it is still ours, and rejoin (the next term, this
    // controller's or another's, loads the state afresh).
    if (now->has_value() && (*now)->epoch == election.epoch()) (void)election.Resign();
    break;
  }
  c.Stop();
  return stop;
}

// The group's token secret and CA (docs/ha.md): every member signs and checks tokens with one
// secret and serves with a certificate of one CA, so that users' tokens, nodes' credentials and
// kubeconfigs work with whichever member leads or forwards. The first member to ask offers its
// own (made if missing); the others take them into their HOME (a new CA: a new serving
// certificate under it). A site's own serving certificate (--tls-cert) is left as it is.
Status ShareGroupSecrets(const store::StoreLocation& where,
                         const controller::ControllerOptions& o) {
  const std::string secret_path = o.state_dir + "/token.secret";
  BERTH_RETURN_IF_ERROR(net::TokenSigner::LoadOrCreate(secret_path).status());
  BERTH_ASSIGN_OR_RETURN(std::string mine, net::ReadTextFile(secret_path));
  BERTH_ASSIGN_OR_RETURN(std::string agreed, store::AgreeOnGroupValue(where, "token.secret", mine));
  if (agreed != mine) BERTH_RETURN_IF_ERROR(net::WriteFileAtomically(secret_path, agreed, 0600));
  if (!o.tls_cert.empty()) return Status::Ok();
  BERTH_RETURN_IF_ERROR(
      k8s::ServingCertFiles(o.state_dir, "", "", "", o.tls_san).status());  // made if missing
  const net::PkiFiles pki = net::PkiFilesIn(o.state_dir + "/pki");
  BERTH_ASSIGN_OR_RETURN(std::string ca_cert, net::ReadTextFile(pki.ca_cert));
  BERTH_ASSIGN_OR_RETURN(std::string ca_key, net::ReadTextFile(pki.ca_key));
  const std::string offer = nlohmann::json{{"cert", ca_cert}, {"key", ca_key}}.dump();
  BERTH_ASSIGN_OR_RETURN(std::string group_ca, store::AgreeOnGroupValue(where, "ca", offer));
  if (group_ca == offer) return Status::Ok();
  const nlohmann::json ca = nlohmann::json::parse(group_ca, nullptr, false);
  if (!ca.is_object() || !ca.value("cert", nlohmann::json()).is_string() ||
      !ca.value("key", nlohmann::json()).is_string()) {
    return Status::Internal("the group's CA in etcd (" + where.prefix + "/group/ca) is malformed");
  }
  BERTH_RETURN_IF_ERROR(net::WriteFileAtomically(pki.ca_cert, ca["cert"].get<std::string>(), 0644));
  BERTH_RETURN_IF_ERROR(net::WriteFileAtomically(pki.ca_key, ca["key"].get<std::string>(), 0600));
  ::unlink(pki.cert.c_str());
  ::unlink(pki.key.c_str());
  return k8s::ServingCertFiles(o.state_dir, "", "", "", o.tls_san).status();
}

}  // namespace

int RunGroupController(const GroupControllerArgs& args,
                       const std::function<Result<controller::ControllerOptions>()>& options,
                       const std::atomic<bool>& stop) {
  const store::StoreLocation& where = args.where;
  const store::Member& self = args.self;
  Result<std::unique_ptr<store::Election>> joined =
      store::Election::Join(where, self, args.lease_ttl_s);
  if (!joined.ok()) {
    std::fprintf(stderr, "berth controller: cannot join the group: %s\n",
                 joined.status().message().c_str());
    return 75;  // etcd unreachable: a restart tries again
  }
  store::Election& election = **joined;
  Result<controller::ControllerOptions> base = options();
  if (!base.ok()) return Fail("berth controller", base.status());
  if (Status st = ShareGroupSecrets(where, *base); !st.ok()) {
    std::fprintf(stderr, "berth controller: cannot share the group's token secret and CA: %s\n",
                 st.message().c_str());
    return 75;  // etcd unreachable: a restart tries again
  }
  std::string endpoints;
  for (const std::string& e : where.endpoints) endpoints += (endpoints.empty() ? "" : ",") + e;
  const std::string described = "etcd " + endpoints + " " + where.prefix;
  auto group = [&election, described] { return store::GroupStatus(election, described); };
  controller::StandbyOptions so;
  so.name = self.name;
  so.socket_path = args.socket;
  so.tcp_listen = args.tcp;
  so.group_status = group;
  // A member that others reach over HTTPS (its --advertise) serves its Kubernetes API port as a
  // standby too, passing requests on to the leader (forward.h): kubectl, with one server in its
  // kubeconfig, works against any member. Members on one machine (Unix sockets) cannot share the
  // port, and do not.
  if (controller::Forwarder::UpstreamOf(self.address).starts_with("tls:")) {
    if (!base->k8s_listen.empty()) {
      Result<k8s::ServingFiles> files = k8s::ServingCertFiles(
          base->state_dir, base->tls_cert, base->tls_key, base->tls_ca, base->tls_san);
      if (!files.ok()) return Fail("berth controller", files.status());
      so.https_listen = base->k8s_listen;
      so.tls_cert = files->cert;
      so.tls_key = files->key;
      so.leader_ca = files->ca;
    }
  }
  controller::StandbyServer standby(so);
  while (!stop) {
    if (Status st = standby.Start(); !st.ok()) return Fail("berth controller", st);
    std::fprintf(stderr, "berth controller: %s is a standby of the group at %s\n",
                 self.name.c_str(), described.c_str());
    // The standby follows the state, so that leading needs no read of etcd (ADR 0008).
    std::unique_ptr<store::EtcdFollower> follower = store::EtcdFollower::Start(where);
    std::string seen = "-";
    Result<int64_t> epoch =
        election.Campaign(stop, 100, [&](const std::optional<store::Leader>& l) {
          const std::string name = l ? l->member.name : "";
          standby.SetLeader(name, l ? l->member.address : "");
          if (name != seen) {
            seen = name;
            if (l) {
              std::fprintf(stderr, "berth controller: the leader is %s at %s (epoch %lld)\n",
                           name.c_str(), l->member.address.c_str(),
                           static_cast<long long>(l->epoch));
            }
          }
        });
    standby.Stop();
    if (!epoch.ok()) break;  // stopped while waiting
    std::fprintf(stderr, "berth controller: %s leads the group (epoch %lld)\n", self.name.c_str(),
                 static_cast<long long>(*epoch));
    // The copy has seen this term's leader key (an event at revision `epoch`): every change of
    // the previous leaders is in it. Not there in time: the state is read from etcd.
    std::shared_ptr<const store::EtcdSnapshot> warm = follower->TakeAt(*epoch, 2000);
    follower.reset();
    if (warm == nullptr) {
      std::fprintf(stderr, "berth controller: the standby's copy is behind: reading etcd\n");
    }
    Result<controller::ControllerOptions> opt = options();
    if (!opt.ok()) return Fail("berth controller", opt.status());
    opt->store.fence_epoch = *epoch;
    opt->store.deposed = election.lost_flag();
    opt->store.warm = std::move(warm);
    opt->epoch = *epoch;
    opt->group_status = group;
    Result<std::unique_ptr<controller::Controller>> c =
        controller::Controller::Create(std::move(*opt));
    Status st = c.ok() ? (*c)->Start() : c.status();
    if (!st.ok()) {
      (void)election.Resign();
      std::fprintf(stderr, "berth controller: cannot lead: %s\n", st.message().c_str());
      std::this_thread::sleep_for(std::chrono::seconds(1));
      continue;  // a standby again (another member may do better)
    }
    const bool stopped = Lead(**c, args.socket, election, args.compaction_s, stop);
    c->reset();
    if (stopped) break;
  }
  // Hand over at once rather than after the lease's TTL (a lost term has nothing to hand).
  if (election.Leading()) (void)election.Resign();
  return 0;
}

}  // namespace berth::cli
