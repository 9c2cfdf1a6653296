// The Kubernetes objects and documents berth serves in this slice (docs/kubernetes.md): /version,
// discovery (aggregated v2/v2beta1 and legacy), the minimal OpenAPI v3 documents, core/v1 Nodes
// made from berth's nodes, core/v1 Namespaces, their Table columns, and what a PATCH of a Node
// may change. Pure functions of their arguments.
#ifndef BERTH_K8S_OBJECTS_H_
#define BERTH_K8S_OBJECTS_H_

#include <cstdint>
#include <nlohmann/json_fwd.hpp>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "common/status.h"

namespace berth::k8s {

// The Kubernetes version whose API berth's subset follows ("1", "33"); kubectl's dispatcher picks
// its binary from major/minor, and kubectl warns about skew from gitVersion.
nlohmann::json VersionInfo(const std::string& berth_version);

// One resource of a group-version, as discovery lists it.
struct ResourceInfo {
  std::string name;      // plural: "nodes"
  std::string singular;  // "node"
  std::string kind;      // "Node"
  bool namespaced = false;
  std::vector<std::string> verbs;
  std::vector<std::string> short_names;
};

// The core/v1 and batch/v1 resources served now ("pods/log": a subresource).
const std::vector<ResourceInfo>& CoreV1Resources();
const std::vector<ResourceInfo>& BatchV1Resources();
// metrics.k8s.io/v1beta1: NodeMetrics ("nodes") and PodMetrics ("pods"), get and list only.
inline constexpr const char* kMetricsGroup = "metrics.k8s.io";
const std::vector<ResourceInfo>& MetricsV1beta1Resources();

// GET /api (aggregated; version "v2" or "v2beta1").
nlohmann::json AggregatedCoreDiscovery(const std::string& version);
// GET /apis (aggregated): the batch and metrics.k8s.io groups.
nlohmann::json AggregatedGroupsDiscovery(const std::string& version);
// The Content-Type of an aggregated discovery answer of that version.
std::string AggregatedContentType(const std::string& version);
// Legacy: GET /api, GET /apis, GET /api/v1.
nlohmann::json LegacyApiVersions(const std::string& server_address);
nlohmann::json LegacyApiGroupList();
nlohmann::json LegacyCoreV1Resources();
nlohmann::json LegacyBatchV1Resources();         // GET /apis/batch/v1
nlohmann::json LegacyMetricsGroup();             // GET /apis/metrics.k8s.io
nlohmann::json LegacyMetricsV1beta1Resources();  // GET /apis/metrics.k8s.io/v1beta1

// GET /openapi/v3, and the document it points to for api/v1 (a PATCH operation per kind with a
// fieldValidation parameter: what kubectl's default validation looks for).
nlohmann::json OpenApiV3Index();
nlohmann::json OpenApiV3CoreV1();
nlohmann::json OpenApiV3BatchV1();

// What a berth node looks like to Kubernetes.
struct NodeFacts {
  std::string name;
  int32_t cpus = 0;
  int64_t mem_mib = 0;
  std::vector<std::string> gpus;  // one entry per GPU: its type, or ""
  // Units of nvidia.com/gpu.shared per device (PodContext::gpu_shared_replicas).
  int32_t gpu_shared_replicas = 4;
  std::vector<std::string> features;
  std::vector<std::string> partitions;
  std::string state;  // berth's long state name: "IDLE", "DRAINED", "DOWN", ...
  std::string reason;
  bool agent_connected = false;
  int64_t created = 0;      // when the controller first saw it
  int64_t last_seen = 0;    // the agent's last report
  int64_t state_since = 0;  // when the reason was set
  std::string berth_version;
  std::string resource_version;
};

// True for the states in which berth places no new work on the node by an operator's choice
// (drained or draining): Kubernetes' spec.unschedulable.
bool NodeUnschedulable(std::string_view state);
nlohmann::json EncodeNode(const NodeFacts& node);
// Whether a GPU type names a MIG profile ("1g.10gb", "3g.40gb", "1g.10gb+me"): such devices are
// MIG instances, advertised as nvidia.com/mig-PROFILE.
bool IsMigProfile(std::string_view type);
nlohmann::json NodeTableColumns();
nlohmann::json NodeTableCells(const nlohmann::json& node, int64_t now);

// A Namespace object (status.phase Active).
nlohmann::json EncodeNamespace(const std::string& name, int64_t created,
                               const std::string& resource_version, const nlohmann::json& labels,
                               const nlohmann::json& annotations);
nlohmann::json NamespaceTableColumns();
nlohmann::json NamespaceTableCells(const nlohmann::json& ns, int64_t now);
// "" when `name` is a valid namespace name (an RFC 1123 label), else what is wrong with it.
std::string NamespaceNameProblem(std::string_view name);

// What a PATCH of a Node asks for spec.unschedulable: true, false (false or null: uncordon), or
// nullopt when the patch leaves it alone. Strategic-merge, merge and JSON patches are read; a
// patch that changes anything else is INVALID_ARGUMENT naming the field (berth nodes take their
// other attributes from their agents and the cluster configuration).
Result<std::optional<bool>> UnschedulableFromPatch(std::string_view content_type,
                                                   std::string_view body);

}  // namespace berth::k8s

#endif  // BERTH_K8S_OBJECTS_H_
