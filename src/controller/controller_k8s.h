// What the controller keeps for its Kubernetes face (docs/kubernetes.md): the TLS server, the
// token signer, the CA handed out in kubeconfigs, and the Kubernetes-only objects (namespaces;
// when each node was first seen). The routes are Controller::Impl members
// (controller_k8s*.cc); this header holds the state they share.
//
// Thread safety: `mu` guards `namespaces` and `node_first_seen`. Namespaces change only on the
// state thread (so changes are ordered with the store's commits); HTTP threads read them under
// `mu`. The other members are set before the server starts and not changed after.
#ifndef BERTH_CONTROLLER_CONTROLLER_K8S_H_
#define BERTH_CONTROLLER_CONTROLLER_K8S_H_

#include <cstdint>
#include <deque>
#include <map>
#include <memory>
#include <mutex>
#include <nlohmann/json_fwd.hpp>
#include <optional>
#include <string>

#include "controller/k8s_routes.h"
#include "net/http.h"
#include "net/tls_token.h"

namespace berth::controller {

// The namespaces that always exist (and may not be deleted); Slurm jobs appear as Pods in
// "slurm" (k8s::kSlurmNamespace).
inline constexpr const char* kBuiltinNamespaces[] = {"default", "kube-system", "slurm"};
// The store's meta key that holds the namespaces.
inline constexpr const char* kNamespacesMetaKey = "k8s_namespaces";
// The file in the state folder that names the Kubernetes API's URL ("https://127.0.0.1:6443"),
// written once it listens and removed when it stops.
inline constexpr const char* kK8sUrlFile = "kubernetes-api.url";

// A JSON answer of the Kubernetes face (a body and its Content-Type).
net::HttpResponse K8sJsonResponse(int status, const nlohmann::json& body,
                                  std::string content_type = "application/json");

struct K8sFace {
  std::unique_ptr<net::HttpServer> server;
  std::optional<net::TokenSigner> signer;
  std::string ca_pem;      // the CA kubeconfigs carry
  std::string server_url;  // "https://127.0.0.1:PORT"
  std::string url_file;    // state_dir/kubernetes-api.url

  std::mutex mu;
  // name -> {"created": T, "labels": {...}, "annotations": {...}, "creator": USER} as JSON text,
  // persisted with namespaces_rv as {"rv": N, "items": {...}}.
  std::map<std::string, std::string> namespaces;
  uint64_t namespaces_rv = 1;
  std::map<std::string, int64_t> node_first_seen;

  // Pods (berth jobs made through this API) by "namespace/name" -> job id. An entry whose job
  // has ended and been deleted, or was dropped from the live view, no longer holds its name.
  std::map<std::string, uint32_t> pods;
  // batch/v1 Jobs by "namespace/name": the object as served plus a private "berth" section (who
  // made it; its pods and their last known states), kept in the store under
  // kJobMetaPrefix + "namespace/name". Written only by the state thread.
  std::map<std::string, std::shared_ptr<const nlohmann::json>> jobs;
  uint64_t jobs_rv = 1;
  // Events the Job controller made (SuccessfulCreate, Completed, ...): the last kMaxEvents.
  std::deque<std::shared_ptr<const nlohmann::json>> events;
  // Where pods' output goes (STATE_DIR/pod-logs, sticky and world-writable like /tmp).
  std::string log_dir;
};

inline constexpr const char* kJobMetaPrefix = "k8s_job/";
inline constexpr size_t kMaxEvents = 1000;

}  // namespace berth::controller

#endif  // BERTH_CONTROLLER_CONTROLLER_K8S_H_
