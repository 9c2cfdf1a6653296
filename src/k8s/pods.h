// core/v1 Pods as berth serves them (docs/kubernetes.md): what a Pod manifest asks of berth's
// scheduler (a berth job request), how a berth job looks as a Pod, and its Table columns. Jobs
// and Events are in k8s/jobs.h. Pure functions of their arguments.
#ifndef BERTH_K8S_PODS_H_
#define BERTH_K8S_PODS_H_

#include <cstdint>
#include <functional>
#include <map>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "k8s/fields.h"

namespace berth::k8s {

// The 422 Status body for `problem` of the object `kind` ("Pod", "Job.batch") named `name`.
nlohmann::json InvalidStatusOf(const std::string& kind, const std::string& name,
                               const FieldProblem& problem);

// A quantity ("500m", "2", 1.5, "16Gi", "1e9") as a number of units (cores, bytes); nullopt when
// it is not one.
std::optional<double> ParseQuantity(const nlohmann::json& q);

// "" when `name` is a valid DNS subdomain name (RFC 1123: lower-case alphanumerics, '-' and '.',
// at most 253), else what is wrong.
std::string SubdomainNameProblem(std::string_view name);

// What a Pod manifest becomes.
struct PodMapping {
  std::string name;        // metadata.name (generateName + a suffix when only that is given)
  nlohmann::json request;  // a berth job request (docs/formats/job-json.md)
  nlohmann::json meta;     // what berth keeps with the job: the record's "k8s" object
  // Containers mode: the spec.imagePullSecrets that could not be read (no such Secret, one the
  // Pod's user may not read, or not of a registry type): the Pod is made without them, with a
  // Warning event FailedToRetrieveImagePullSecret.
  std::vector<std::string> missing_pull_secrets;
};

// Secrets and ConfigMaps, as a Pod reads them (k8s/config_objects.h keeps and serves them).
enum class ConfigKind { kSecret, kConfigMap };
// One object's contents: its type (a Secret's, "" for a ConfigMap) and its keys' values (a
// Secret's decoded from base64; a ConfigMap's data and decoded binaryData).
struct ConfigData {
  std::string type;
  std::map<std::string, std::string> data;
};
// The Secret or ConfigMap `name` of the Pod's namespace as the Pod's user may read it; nullopt
// when there is none (or the user may not read it).
using ConfigLookup =
    std::function<std::optional<ConfigData>(ConfigKind kind, const std::string& name)>;

struct PodContext {
  std::string ns;           // the namespace of the request's path
  std::string home;         // the caller's home: the working directory when none is given
  std::string log_dir;      // where pod logs go (the job's stdout, %j = its id)
  std::string name_suffix;  // 5 characters for generateName
  int64_t now = 0;
  // Containers mode (the face's FaceOptions::containers): the Pod's one container runs in its
  // image (the request's "container" object, image::ContainerSpec); off: its command runs on the
  // host as a process.
  bool containers = false;
  uint32_t uid = 0;    // the Pod's user (securityContext.runAsUser must be it, or 0 for admins)
  bool admin = false;  // an operator
  // The namespace's Secrets and ConfigMaps (env valueFrom, envFrom, volumes, imagePullSecrets);
  // unset: none exist.
  ConfigLookup find_config;
  // false: references to Secrets and ConfigMaps are not resolved (a Job template's check, before
  // its pods are made); a missing one is then no problem.
  bool resolve_refs = true;
  // How many `nvidia.com/gpu.shared` units one device offers (the NVIDIA device plugin's
  // time-slicing replicas): one unit is 1000 / replicas thousandths of a device.
  int32_t gpu_shared_replicas = 4;
};

// Checks a Pod manifest and maps it. nullopt when it maps; `out` is then filled.
std::optional<FieldProblem> MapPod(const nlohmann::json& pod, const PodContext& ctx,
                                   PodMapping* out);

// A berth job as Kubernetes sees it.
struct PodFacts {
  uint32_t job_id = 0;
  std::string state;   // berth's state name: "PENDING", "RUNNING", "COMPLETED", ...
  std::string reason;  // the pending reason ("Resources", "Priority", ...) or ""
  std::string reason_detail;
  std::string node;  // where it runs or ran ("" when not placed)
  int64_t submit_time = 0, start_time = 0, end_time = 0;  // 0 = not yet
  int32_t exit_code = 0, term_signal = 0, restart_count = 0;
  std::string message;  // what the node said (e.g. out of memory)
  std::string user, account, partition, job_name;
  int32_t cpus = 0;
  int64_t mem_mib = 0;
  int32_t gpus = 0;
  int32_t gpu_milli = 0;   // a share of one device (thousandths); 0 = none
  int64_t time_limit = 0;  // seconds
  int64_t deleted_at = 0;  // when a delete was asked (0 = not)
  std::string resource_version;
  // The image the container runs, as the node resolved it ("repo@sha256:..."; "" when not known
  // or not in a container): status.containerStatuses[].imageID.
  std::string image_id;
  // The node's image pull for this attempt (containers mode): "pulling" while it runs, then
  // "pulled" (with pull_seconds) or "present" (the node had it); "" when not reported.
  std::string image_pull;
  double pull_seconds = 0;
  const nlohmann::json* meta = nullptr;  // the "k8s" object; null for a Slurm job
};

// The namespace Slurm jobs appear in (as Pods named job-ID).
inline constexpr const char* kSlurmNamespace = "slurm";

// The uid of the Pod of berth job `job_id` named `ns`/`name` (metadata.uid).
std::string PodUid(uint32_t job_id, const std::string& ns, const std::string& name);
// The Pod's namespace and name.
std::string PodNamespace(const PodFacts& f);
std::string PodName(const PodFacts& f);
// Kubernetes' phase: Pending, Running, Succeeded or Failed.
std::string PodPhase(std::string_view berth_state);
nlohmann::json EncodePod(const PodFacts& f);
nlohmann::json PodTableColumns();
nlohmann::json PodTableCells(const nlohmann::json& pod, int64_t now);
// The Pod's field for a field selector (metadata.name, metadata.namespace, spec.nodeName,
// status.phase, spec.restartPolicy, spec.schedulerName, spec.serviceAccountName,
// status.podIP, status.nominatedNodeName); nullopt for others.
std::optional<std::string> PodField(const nlohmann::json& pod, const std::string& field);

}  // namespace berth::k8s

#endif  // BERTH_K8S_PODS_H_
