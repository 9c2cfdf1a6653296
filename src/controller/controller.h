// The controller (`berth controller`, or inside `berth up`): holds the cluster state, applies the
// scheduler's plans, keeps every acknowledged change durable, serves the REST API (docs/api.md)
// on a Unix socket, and drives the node agents.
//
// Concurrency (docs/architecture.md, "The controller"): one state thread owns the ClusterState
// and is the only writer; HTTP threads turn requests into commands for it and wait for their
// replies, which come only after the store has committed (group commit: one transaction for
// every command waiting at that moment). Reads (job and node lists, watch streams) are served
// from an immutable view published by the state thread after each batch, so they never wait for
// a scheduling pass.
#ifndef BERTH_CONTROLLER_CONTROLLER_H_
#define BERTH_CONTROLLER_CONTROLLER_H_

#include <cstdint>
#include <functional>
#include <memory>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "common/status.h"
#include "config/cluster_config.h"
#include "net/http.h"
#include "store/store.h"

namespace berth::controller {

struct ControllerOptions {
  std::string state_dir;  // holds state.db
  // Where the durable state lives (--store): the state folder's state.db by default, or etcd
  // (docs/adr/0007-etcd-store.md).
  store::StoreLocation store;
  // The accounting archive (--accounting-store): a libpq connection string or URI; "" = none
  // (finished jobs stay in the store). store/archive.h, docs/adr/0009-accounting-archive.md.
  std::string accounting_store;
  int archive_interval_s = 10;         // how often finished jobs due to move are looked for
  std::string socket_path;             // the Unix socket the API listens on
  std::string tcp_listen;              // "host:port" to also listen on TCP (off by default)
  config::ClusterConfig config;        // nodes, partitions, QoS, accounts, scheduler
  std::vector<std::string> operators;  // users who may act on anyone's jobs (root always may)
  int node_timeout_s = 60;             // a node silent this long goes DOWN (Slurm's SlurmdTimeout)
  int heartbeat_s = 5;                 // what agents are told to send
  int backfill_interval_s = 30;        // periodic pass even when nothing happens
  int min_job_age_s = 300;             // finished jobs stay in the live view this long (MinJobAge)
  int kill_wait_s = 30;                // SIGTERM -> SIGKILL grace given to nodes
  bool allow_dynamic_nodes = true;     // agents may register nodes the configuration lacks
  // The Kubernetes API (docs/kubernetes.md): HTTPS on this "host:port" ("" = off). When
  // k8s_listen_required is false (the default address was not asked for), an address in use
  // means no Kubernetes API and a warning, not a failed start.
  std::string k8s_listen = "127.0.0.1:6443";
  bool k8s_listen_required = false;
  // Pods run in their images (docs/containers.md); false: their commands run as processes.
  bool container_pods = true;
  // A site's own serving certificate and key (PEM); empty: the controller's own PKI in
  // state_dir/pki, made on first start.
  std::string tls_cert;
  std::string tls_key;
  std::string tls_ca;  // the CA that signed tls_cert, for kubeconfigs (optional)
  // More names (DNS or IP) for the serving certificate of the controller's own CA, besides
  // localhost and this host's name: the addresses agents and users reach the controller at.
  std::vector<std::string> tls_san;
  // munged's socket for decoding MUNGE credentials ("" = munge's default,
  // /run/munge/munge.socket.2). Credentials are accepted wherever munged answers.
  std::string munge_socket;
  // The cluster's history (GET /v1/history): seconds between samples (1 to 60).
  int history_sample_s = 10;
  // A web console session ends after this long without a request (docs/security.md).
  int web_session_idle_s = 12 * 3600;
  // In an HA group (docs/ha.md): this controller's epoch as the group's leader (store/election.h),
  // sent with every command to agents so that they refuse a deposed leader's; 0 alone.
  int64_t epoch = 0;
  // In an HA group: the group as GET /v1/ha shows it (members, leader, epoch, etcd's health);
  // unset alone (GET /v1/ha then says so).
  std::function<nlohmann::json()> group_status;
};

class K8sPort;

class Controller {
 public:
  // Opens the store, recovers the state it holds, and prepares the API. Errors name the file.
  static Result<std::unique_ptr<Controller>> Create(ControllerOptions options);
  ~Controller();  // Stop()s.

  // Starts the state thread and the API server.
  Status Start();
  // Stops serving, finishes the commands in flight, stops the threads. Running jobs keep
  // running on their nodes and are adopted again by the next start.
  void Stop();

  // The request handler (exposed for in-process clients and tests).
  net::HttpResponse Handle(const net::HttpRequest& request);

  const ControllerOptions& options() const;
  // Why the controller stopped accepting changes: a commit to the store failed (etcd
  // unreachable or without quorum, a failed disk write), its batch was answered with that error
  // and every later change is refused the same way, since memory may now hold what the store
  // does not. OK while all is well. The daemon exits on it, and a restart reloads the store.
  Status StoreFailure() const;
  // Why the Kubernetes API is not served at its default address ("" when it is, or is off).
  std::string KubernetesNotServed() const;

 private:
  Controller();
  struct Impl;
  friend class K8sPort;  // the Kubernetes face's port over Impl (k8s_port.h)
  std::unique_ptr<Impl> impl_;
};

}  // namespace berth::controller

#endif  // BERTH_CONTROLLER_CONTROLLER_H_
