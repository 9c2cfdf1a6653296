// The Kubernetes face (docs/kubernetes.md): berth's jobs as Pods and batch/v1 Jobs, its nodes
// as Nodes, Namespaces and Events, served over HTTPS (its own TLS server, bearer tokens) to the
// real kubectl and client libraries. One class owns what the face keeps (the TLS server, the
// token signer, the CA handed out in kubeconfigs, the namespaces, the Pods' names, the Jobs, the
// Job controller's Events, the Pods' log folder); it reaches the controller only through its
// port (port.h). Routes: routes.h; request machinery: face_http.h; one handler file per
// resource: face_namespaces.cc, face_nodes.cc, face_pods.cc, face_pod_log.cc, face_events.cc,
// face_jobs.cc, face_discovery.cc; the Job controller's pass: face_job_controller.cc.
//
// Thread safety: Serve runs on the TLS server's connection threads (and any thread in tests);
// OnPass and the StateOps-taking helpers run on the controller's state thread only, inside a
// command or pass the port handed them to. `mu_` guards every member that changes after Start
// (GUARDED_BY below); the state thread takes it around its changes (so they are ordered with the
// store's commits) and HTTP threads take it to read. Lock order: `mu_` before anything the port
// locks; the face never holds `mu_` while it calls a ControllerPort read or Run (a StateOps call
// under `mu_` is fine: the port takes its own locks inside and never calls back). The members
// set by Start (options, signer, CA, URL, log folder) are not changed after it.
// "State thread only" is not a ThreadRole capability here: the role is the controller's state
// loop's, and a role handed through the port could not be tied by the analysis to the loop's
// own. What enforces it instead is that changes need a StateOps, which only the state thread
// holds (inside ControllerPort::Run and OnPass).
#ifndef BERTH_K8S_FACE_H_
#define BERTH_K8S_FACE_H_

#include <cstdint>
#include <deque>
#include <map>
#include <memory>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <vector>

#include "common/status.h"
#include "common/thread_annotations.h"
#include "k8s/config_objects.h"
#include "k8s/face_http.h"
#include "k8s/port.h"
#include "k8s/routes.h"
#include "net/http.h"
#include "net/tls_token.h"

namespace berth::k8s {

// The namespaces that always exist (and may not be deleted); Slurm jobs appear as Pods in
// "slurm" (kSlurmNamespace).
inline constexpr const char* kBuiltinNamespaces[] = {"default", "kube-system", "slurm"};
// The store's meta key that holds the namespaces.
inline constexpr const char* kNamespacesMetaKey = "k8s_namespaces";
// The store's meta keys of the batch/v1 Jobs: this prefix + "namespace/name".
inline constexpr const char* kJobMetaPrefix = "k8s_job/";
inline constexpr const char* kCronJobMetaPrefix = "k8s_cronjob/";
// The file in the state folder that names the Kubernetes API's URL ("https://127.0.0.1:6443"),
// written once it listens and removed when it stops.
inline constexpr const char* kK8sUrlFile = "kubernetes-api.url";
// How many of the Job controller's Events are kept.
inline constexpr size_t kMaxEvents = 1000;

struct FaceOptions {
  std::string state_dir;                  // the PKI, the token secret, the URL file, pod-logs/
  std::string listen;                     // "HOST:PORT"; "" or "off": no TLS listener
  bool listen_required = false;           // false: an address in use is a warning, not an error
  std::string tls_cert, tls_key, tls_ca;  // a serving certificate of the site's own
  std::vector<std::string> tls_san;       // more names for the PKI's serving certificate
  std::string version;                    // berth's version (/version, Nodes)
  // Pods run in their images (the job request's "container" object; docs/kubernetes.md "Pods in
  // their images"); false: a Pod's command runs on the host as a process.
  bool containers = false;
};

// The HTTPS serving certificate and key: the site's own (tls_cert, tls_key, and tls_ca naming their
// CA, or ""), else those of the state folder's PKI (made on first use, with the host's names and
// tls_san), whose CA is then `ca`. A controller and, in an HA group, its standby serve with them.
// --k8s-listen's "HOST:PORT" -> host (brackets of an IPv6 literal removed) and port; errors
// name the option.
Status ParseListen(const std::string& text, std::string* host, uint16_t* port);

struct ServingFiles {
  std::string cert, key, ca;
};
Result<ServingFiles> ServingCertFiles(const std::string& state_dir, const std::string& tls_cert,
                                      const std::string& tls_key, const std::string& tls_ca,
                                      const std::vector<std::string>& tls_san);

class Face {
 public:
  Face(ControllerPort& port, FaceOptions options);
  ~Face();  // Stop()
  Face(const Face&) = delete;
  Face& operator=(const Face&) = delete;

  // Loads the namespaces (built-in ones made on the first start), the Jobs and the Pods' names,
  // makes the token secret (and the PKI, on the first start) and starts the TLS server; with the
  // default address taken (and listen_required false), says so and serves no Kubernetes API.
  // REQUIRES: the controller's state thread has not started (it reads the store directly).
  Status Start();
  // Stops the TLS server and removes the URL file. Idempotent.
  void Stop();

  // Answers a request on the face's port: /v1 and /metrics as berth's own API (the port's
  // ServeApi), the rest through the route table to one handler per resource and verb.
  net::HttpResponse Serve(const net::HttpRequest& req);

  // The controller's per-pass hook, on the state thread: runs every unfinished Job's controller
  // step (new pods, retries, conditions, deadlines, suspension, TTL).
  void OnPass(StateOps& ops) EXCLUDES(mu_);

  // Set by Start, constant after it.
  const net::TokenSigner* signer() const { return signer_ ? &*signer_ : nullptr; }
  bool serving() const { return server_ != nullptr; }
  const std::string& server_url() const { return server_url_; }  // "https://127.0.0.1:PORT"
  // Why the default address could not be served ("" when it is, or when none was asked for).
  const std::string& not_served() const { return not_served_; }
  const std::string& ca_pem() const { return ca_pem_; }  // the CA kubeconfigs carry

 private:
  // face.cc: start-up and dispatch.
  Status LoadNamespaces() EXCLUDES(mu_);
  Status LoadJobsAndPods() EXCLUDES(mu_);
  Status ServingCert(std::string* cert, std::string* key);
  Status Listen();
  net::HttpResponse Dispatch(Endpoint e, const Call& c);
  // face_discovery.cc: health, discovery and OpenAPI (no state but the server's address).
  net::HttpResponse Discovery(Endpoint e, const net::HttpRequest& req);
  net::HttpResponse ApiDiscovery(bool core, const net::HttpRequest& req);

  // face_metrics.cc: metrics.k8s.io NodeMetrics and PodMetrics (`only`: that one's).
  http::Objects NodeMetricsObjects(const std::string& only) EXCLUDES(mu_);
  http::Objects PodMetricsObjects(const std::string& ns, const std::string& only) EXCLUDES(mu_);
  // The metrics endpoints (kNodeMetricsList, kNodeMetricsGet, kPodMetricsList, kPodMetricsGet).
  net::HttpResponse MetricsItem(Endpoint e, const Call& c);

  // face_namespaces.cc
  http::Objects NamespaceObjects(std::string* rv) EXCLUDES(mu_);
  // The store's write of every namespace (as {"rv": N, "items": {...}}).
  std::string NamespacesText() const REQUIRES(mu_);
  net::HttpResponse NamespaceList(const Call& c);
  net::HttpResponse NamespaceCreate(const Call& c);
  net::HttpResponse NamespaceGet(const Call& c);
  net::HttpResponse NamespaceUpdate(const Call& c);
  net::HttpResponse NamespaceDelete(const Call& c);
  // State thread: the namespace `name` and what lives in it (its Jobs; its Pods, whose jobs are
  // cancelled) go.
  void DeleteNamespaceContents(const std::string& name, StateOps& ops) REQUIRES(mu_);

  // face_nodes.cc. The Nodes (`only`: that one), with `state_override` as the state of each (a
  // state just changed, before the published view follows); `rv` gets the list's
  // resourceVersion.
  http::Objects NodeObjects(std::string* rv, const std::string& only,
                            const std::string& state_override) EXCLUDES(mu_);
  net::HttpResponse NodeList(const Call& c);
  net::HttpResponse NodeGet(const Call& c);  // another method than GET: 405 (when found)
  net::HttpResponse NodePatch(const Call& c);
  // After a cordon: waits (briefly) for the published view to show the node's new state.
  void AwaitNodeState(const std::string& name, const std::string& state);

  // face_pods.cc. The namespace is "" on the all-namespaces paths.
  // The Pods in `ns` ("" = all; `only` = that name only), as served now.
  http::Objects PodObjects(const std::string& ns, const std::string& only) EXCLUDES(mu_);
  net::HttpResponse PodList(const Call& c);
  net::HttpResponse PodCreate(const Call& c);  // POST, or a server-side apply of a new Pod
  net::HttpResponse PodGet(const Call& c);     // another method than GET: 405 (when found)
  net::HttpResponse PodDelete(const Call& c);
  net::HttpResponse PodUpdate(const Call& c);
  // Submits (or, with dryRun, tests) a mapped Pod and answers with the Pod made.
  net::HttpResponse PodSubmit(const Call& c, const PodMapping& mapping);
  // Sets a Pod's labels and annotations and answers with the Pod.
  net::HttpResponse PodSetMeta(const Call& c, uint32_t id, const nlohmann::json& labels,
                               const nlohmann::json& annotations);
  // State thread: submits the job of a Pod mapping for `who`; the Pod's name must be free.
  Result<uint32_t> SubmitPod(const User& who, const PodMapping& m, StateOps& ops) EXCLUDES(mu_);
  // face_pod_log.cc: pods/log.
  net::HttpResponse PodLog(const Call& c);
  // face_stream.cc: pods/exec, pods/attach, pods/portforward ("exec", ...): a WebSocket relayed
  // to the pod's agent (docs/adr/0006-pod-streams.md).
  net::HttpResponse PodStream(const Call& c, std::string_view subresource);
  // face_events.cc. The Events of the Pods in `ns` ("" = all; `only`: of that Pod only) and the
  // Job controller's; `rv` gets the list's resourceVersion.
  http::Objects EventObjects(const std::string& ns, const std::string& only, std::string* rv)
      EXCLUDES(mu_);
  net::HttpResponse EventList(const Call& c);
  net::HttpResponse EventGet(const Call& c);

  // face_config.cc: core/v1 Secrets and ConfigMaps (the kind is the path's).
  Status LoadConfigObjects() EXCLUDES(mu_);
  // The objects of `kind` in `ns` ("" = all) that `who` may read (a Secret: see MayReadConfig), as
  // served; `rv` gets the list's resourceVersion.
  http::Objects ConfigObjects(ConfigKind kind, const std::string& ns, const User& who,
                              std::string* rv) EXCLUDES(mu_);
  net::HttpResponse ConfigList(const Call& c);
  net::HttpResponse ConfigCreate(const Call& c);
  net::HttpResponse ConfigGet(const Call& c);
  net::HttpResponse ConfigUpdate(const Call& c);  // PATCH, PUT
  net::HttpResponse ConfigDelete(const Call& c);
  // Whether `who` may read the stored object (ConfigMaps: anyone; Secrets: its creator, the
  // namespace's creator and operators) or change and delete it (its creator, the namespace's
  // creator and operators).
  bool MayReadConfig(ConfigKind kind, const User& who, const nlohmann::json& stored) const
      REQUIRES(mu_);
  bool MayChangeConfig(const User& who, const nlohmann::json& stored) const REQUIRES(mu_);
  // The lookup of a PodContext for a Pod of `who` in `ns` (containers mode).
  ConfigLookup ConfigLookupFor(const std::string& ns, const User& who);
  // Containers mode: the Warning event of a Pod made without some of its image pull secrets.
  void AddPullSecretEvent(uint32_t id, const PodMapping& m, int64_t now) REQUIRES(mu_);

  // face_jobs.cc: batch/v1 Jobs.
  http::Objects JobObjects(const std::string& ns, std::string* rv) EXCLUDES(mu_);
  std::optional<nlohmann::json> FindJob(const std::string& key) EXCLUDES(mu_);
  net::HttpResponse JobList(const Call& c);
  net::HttpResponse JobCreate(const Call& c);
  // Creates the Job `body` in the call's namespace; 201 with the object.
  net::HttpResponse JobCreateFrom(const Call& c, const nlohmann::json& body);
  // One Job's path (kJobGet, kJobDelete, kJobUpdate, kJobStatusUpdate, kJobOther).
  net::HttpResponse JobItem(Endpoint e, const Call& c);
  net::HttpResponse JobDelete(const Call& c, const nlohmann::json& current);
  net::HttpResponse JobUpdate(const Call& c, const nlohmann::json& current);
  // Stores `next` as the Job (its status and berth's section kept) and reconciles.
  net::HttpResponse JobCommit(const Call& c, nlohmann::json next);
  // State thread: stores a Job (a new resourceVersion) with the command's transaction.
  void PutJob(const std::string& key, nlohmann::json job, StateOps& ops) REQUIRES(mu_);
  void DeleteJob(const std::string& key, StateOps& ops) REQUIRES(mu_);

  // face_cronjobs.cc: batch/v1 CronJobs.
  Status LoadCronJobs() EXCLUDES(mu_);
  http::Objects CronJobObjects(const std::string& ns, std::string* rv) EXCLUDES(mu_);
  net::HttpResponse CronJobList(const Call& c);
  net::HttpResponse CronJobCreate(const Call& c);
  net::HttpResponse CronJobCreateFrom(const Call& c, const nlohmann::json& body);
  // One CronJob's path (kCronJobGet, kCronJobDelete, kCronJobUpdate, kCronJobOther).
  net::HttpResponse CronJobItem(Endpoint e, const Call& c);
  net::HttpResponse CronJobDelete(const Call& c, const nlohmann::json& current);
  net::HttpResponse CronJobUpdate(const Call& c, const nlohmann::json& current);
  // The stored CronJob `key` as served, with `status` (404 when it is gone).
  net::HttpResponse CronJobAnswer(const Call& c, const std::string& key, int status);
  // State thread: stores a CronJob (a new resourceVersion) with the command's transaction.
  void PutCronJob(const std::string& key, nlohmann::json cronjob, StateOps& ops) REQUIRES(mu_);
  // State thread: deletes a Job and cancels its pods (a cascading delete's Background).
  void DeleteJobAndPods(const std::string& key, StateOps& ops) REQUIRES(mu_);
  // State thread: every CronJob's controller step (cronjobs.h ReconcileCronJob): due Jobs made,
  // Replace and history deletes, status, events.
  void CronPass(StateOps& ops) EXCLUDES(mu_);

  // face_job_controller.cc (state thread): one Job's controller step.
  void ReconcileJob(const std::string& key, const std::shared_ptr<const nlohmann::json>& stored,
                    int64_t now, StateOps& ops) EXCLUDES(mu_);
  void AddEvent(const nlohmann::json& object, const std::string& type, const std::string& reason,
                const std::string& message, int64_t now) REQUIRES(mu_);

  ControllerPort& port_;
  const FaceOptions opt_;

  // Set by Start, constant after it.
  std::unique_ptr<net::HttpServer> server_;
  std::optional<net::TokenSigner> signer_;
  std::string ca_pem_;
  std::string server_url_;
  std::string url_file_;  // state_dir/kubernetes-api.url
  std::string not_served_;
  std::string log_dir_;  // where pods' output goes (state_dir/pod-logs, sticky, world-writable)

  mutable Mutex mu_;
  // name -> {"created": T, "labels": {...}, "annotations": {...}, "creator": USER, "rv": N} as
  // JSON text, persisted with namespaces_rv_ under kNamespacesMetaKey. Changed on the state
  // thread only.
  std::map<std::string, std::string> namespaces_ GUARDED_BY(mu_);
  uint64_t namespaces_rv_ GUARDED_BY(mu_) = 1;
  // When each node was first seen (berth does not record when a node joined).
  std::map<std::string, int64_t> node_first_seen_ GUARDED_BY(mu_);
  // Pods (berth jobs made through this face) by "namespace/name" -> job id. An entry whose job
  // has ended and been deleted, or was dropped from the live view, no longer holds its name.
  std::map<std::string, uint32_t> pods_ GUARDED_BY(mu_);
  // batch/v1 Jobs by "namespace/name": the object as served plus a private "berth" section (who
  // made it; its pods and their last known states), kept in the store under kJobMetaPrefix +
  // "namespace/name". Changed on the state thread only.
  std::map<std::string, std::shared_ptr<const nlohmann::json>> jobs_ GUARDED_BY(mu_);
  uint64_t jobs_rv_ GUARDED_BY(mu_) = 1;  // also the CronJobs' resourceVersions
  // batch/v1 CronJobs by "namespace/name": the object as served plus a private "berth" section
  // (its creator; the events of the controller's last step), kept in the store under
  // kCronJobMetaPrefix + "namespace/name". Changed on the state thread only.
  std::map<std::string, std::shared_ptr<const nlohmann::json>> cronjobs_ GUARDED_BY(mu_);
  // Secrets ([kSecret]) and ConfigMaps ([kConfigMap]) by "namespace/name": the object as served
  // plus a private "berth" section (its creator), kept in the store under the kind's meta prefix
  // + "namespace/name". Changed on the state thread only; one resourceVersion counter for both.
  std::map<std::string, std::shared_ptr<const nlohmann::json>> config_[2] GUARDED_BY(mu_);
  uint64_t config_rv_ GUARDED_BY(mu_) = 1;
  // Events the Job controller made (SuccessfulCreate, Completed, ...): the last kMaxEvents.
  std::deque<std::shared_ptr<const nlohmann::json>> events_ GUARDED_BY(mu_);
};

}  // namespace berth::k8s

#endif  // BERTH_K8S_FACE_H_
