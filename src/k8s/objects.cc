#include "k8s/objects.h"

#include <algorithm>
#include <map>
#include <nlohmann/json.hpp>

#include "k8s/codec.h"

namespace berth::k8s {
namespace {

using nlohmann::json;

constexpr const char* kMajor = "1";
constexpr const char* kMinor = "33";
constexpr const char* kPatchableKinds[][2] = {
    {"/api/v1/namespaces/{name}", "Namespace"},
    {"/api/v1/nodes/{name}", "Node"},
    {"/api/v1/namespaces/{namespace}/pods/{name}", "Pod"},
    {"/api/v1/namespaces/{namespace}/events/{name}", "Event"},
    {"/api/v1/namespaces/{namespace}/secrets/{name}", "Secret"},
    {"/api/v1/namespaces/{namespace}/configmaps/{name}", "ConfigMap"}};
constexpr const char* kPatchableBatchKinds[][2] = {
    {"/apis/batch/v1/namespaces/{namespace}/jobs/{name}", "Job"},
    {"/apis/batch/v1/namespaces/{namespace}/cronjobs/{name}", "CronJob"}};

json ResourceList(const std::vector<ResourceInfo>& list, const std::string& group_version) {
  json resources = json::array();
  for (const ResourceInfo& r : list) {
    resources.push_back({{"name", r.name},
                         {"singularName", r.singular},
                         {"namespaced", r.namespaced},
                         {"kind", r.kind},
                         {"verbs", r.verbs},
                         {"shortNames", r.short_names}});
  }
  return {{"kind", "APIResourceList"},
          {"apiVersion", "v1"},
          {"groupVersion", group_version},
          {"resources", resources}};
}

// One group's versions as aggregated discovery lists them; "pods/log" style entries become
// subresources of their resource.
json AggregatedGroup(const std::string& group, const std::vector<ResourceInfo>& list,
                     const std::string& version = "v1") {
  json resources = json::array();
  for (const ResourceInfo& r : list) {
    const size_t slash = r.name.find('/');
    if (slash != std::string::npos) {
      for (json& parent : resources) {
        if (parent["resource"] != r.name.substr(0, slash)) continue;
        parent["subresources"].push_back(
            {{"subresource", r.name.substr(slash + 1)},
             {"responseKind", {{"group", group}, {"version", version}, {"kind", r.kind}}},
             {"verbs", r.verbs}});
      }
      continue;
    }
    resources.push_back(
        {{"resource", r.name},
         {"responseKind", {{"group", group}, {"version", version}, {"kind", r.kind}}},
         {"scope", r.namespaced ? "Namespaced" : "Cluster"},
         {"singularResource", r.singular},
         {"shortNames", r.short_names},
         {"verbs", r.verbs},
         {"subresources", json::array()}});
  }
  return {
      {"metadata", {{"name", group}}},
      {"versions",
       json::array({{{"version", version}, {"freshness", "Current"}, {"resources", resources}}})}};
}

json OpenApiV3Document(const std::string& group, const char* const (*kinds)[2], size_t n) {
  json paths = json::object();
  json schemas = json::object();
  for (size_t i = 0; i < n; ++i) {
    const std::string path = kinds[i][0], kind = kinds[i][1];
    json gvk = {{"group", group}, {"version", "v1"}, {"kind", kind}};
    json parameters = json::array();
    for (const char* p : {"dryRun", "fieldManager", "fieldValidation", "force"}) {
      parameters.push_back({{"name", p}, {"in", "query"}, {"schema", {{"type", "string"}}}});
    }
    paths[path] = {
        {"patch",
         {{"operationId", std::string("patch") + (group.empty() ? "Core" : "Batch") + "V1" + kind},
          {"x-kubernetes-group-version-kind", gvk},
          {"parameters", parameters},
          {"responses", {{"200", {{"description", "OK"}}}}}}}};
    schemas[std::string("io.k8s.api.") + (group.empty() ? "core" : group) + ".v1." + kind] = {
        {"type", "object"}, {"x-kubernetes-group-version-kind", json::array({gvk})}};
  }
  return {{"openapi", "3.0.0"},
          {"info", {{"title", "Kubernetes (berth)"}, {"version", std::string("v1.") + kMinor}}},
          {"paths", paths},
          {"components", {{"schemas", schemas}}}};
}

std::string Join(const std::vector<std::string>& items, const char* sep) {
  std::string out;
  for (const std::string& s : items) out += (out.empty() ? "" : sep) + s;
  return out;
}

const json& Get(const json& j, std::initializer_list<const char*> path) {
  static const json kNull;
  const json* at = &j;
  for (const char* key : path) {
    if (!at->is_object() || !at->contains(key)) return kNull;
    at = &(*at)[key];
  }
  return *at;
}

std::string Age(const json& object, int64_t now) {
  // creationTimestamp is RFC 3339; the seconds are kept beside it in berth's objects.
  const json& created = Get(object, {"metadata", "annotations", "berth.io/created-unix"});
  if (!created.is_string()) return "<unknown>";
  return HumanDuration(now - std::stoll(created.get<std::string>()));
}

}  // namespace

json VersionInfo(const std::string& berth_version) {
  return {{"major", kMajor},
          {"minor", kMinor},
          {"gitVersion", std::string("v") + kMajor + "." + kMinor + ".0+berth." + berth_version},
          {"gitCommit", "berth-" + berth_version},
          {"gitTreeState", "clean"},
          {"buildDate", "1970-01-01T00:00:00Z"},
          {"goVersion", "none (berth " + berth_version + ", C++)"},
          {"compiler", "berth"},
          {"platform", "linux/amd64"}};
}

const std::vector<ResourceInfo>& CoreV1Resources() {
  static const std::vector<ResourceInfo> kResources = {
      {"namespaces",
       "namespace",
       "Namespace",
       false,
       {"create", "delete", "get", "list", "watch"},
       {"ns"}},
      {"nodes", "node", "Node", false, {"get", "list", "patch", "watch"}, {"no"}},
      {"pods",
       "pod",
       "Pod",
       true,
       {"create", "delete", "get", "list", "patch", "update", "watch"},
       {"po"}},
      {"pods/log", "", "Pod", true, {"get"}, {}},
      {"pods/exec", "", "PodExecOptions", true, {"create", "get"}, {}},
      {"events", "event", "Event", true, {"get", "list", "watch"}, {"ev"}},
      {"secrets",
       "secret",
       "Secret",
       true,
       {"create", "delete", "get", "list", "patch", "update", "watch"},
       {}},
      {"configmaps",
       "configmap",
       "ConfigMap",
       true,
       {"create", "delete", "get", "list", "patch", "update", "watch"},
       {"cm"}},
  };
  return kResources;
}

const std::vector<ResourceInfo>& BatchV1Resources() {
  static const std::vector<ResourceInfo> kResources = {
      {"jobs",
       "job",
       "Job",
       true,
       {"create", "delete", "get", "list", "patch", "update", "watch"},
       {}},
      {"jobs/status", "", "Job", true, {"get"}, {}},
      {"cronjobs",
       "cronjob",
       "CronJob",
       true,
       {"create", "delete", "get", "list", "patch", "update", "watch"},
       {"cj"}},
      {"cronjobs/status", "", "CronJob", true, {"get"}, {}},
  };
  return kResources;
}

const std::vector<ResourceInfo>& MetricsV1beta1Resources() {
  static const std::vector<ResourceInfo> kResources = {
      {"nodes", "", "NodeMetrics", false, {"get", "list"}, {}},
      {"pods", "", "PodMetrics", true, {"get", "list"}, {}},
  };
  return kResources;
}

json AggregatedCoreDiscovery(const std::string& version) {
  return {{"kind", "APIGroupDiscoveryList"},
          {"apiVersion", "apidiscovery.k8s.io/" + version},
          {"metadata", json::object()},
          {"items", json::array({AggregatedGroup("", CoreV1Resources())})}};
}

json AggregatedGroupsDiscovery(const std::string& version) {
  return {{"kind", "APIGroupDiscoveryList"},
          {"apiVersion", "apidiscovery.k8s.io/" + version},
          {"metadata", json::object()},
          {"items",
           json::array({AggregatedGroup("batch", BatchV1Resources()),
                        AggregatedGroup(kMetricsGroup, MetricsV1beta1Resources(), "v1beta1")})}};
}

std::string AggregatedContentType(const std::string& version) {
  return "application/json;g=apidiscovery.k8s.io;v=" + version + ";as=APIGroupDiscoveryList";
}

json LegacyApiVersions(const std::string& server_address) {
  return {{"kind", "APIVersions"},
          {"versions", {"v1"}},
          {"serverAddressByClientCIDRs",
           json::array({{{"clientCIDR", "0.0.0.0/0"}, {"serverAddress", server_address}}})}};
}

json LegacyApiGroupList() {
  json v1 = {{"groupVersion", "batch/v1"}, {"version", "v1"}};
  json batch = {{"name", "batch"}, {"versions", json::array({v1})}, {"preferredVersion", v1}};
  json metrics = LegacyMetricsGroup();
  metrics.erase("kind");
  metrics.erase("apiVersion");
  return {
      {"kind", "APIGroupList"}, {"apiVersion", "v1"}, {"groups", json::array({batch, metrics})}};
}

json LegacyMetricsGroup() {
  json v = {{"groupVersion", std::string(kMetricsGroup) + "/v1beta1"}, {"version", "v1beta1"}};
  return {{"kind", "APIGroup"},
          {"apiVersion", "v1"},
          {"name", kMetricsGroup},
          {"versions", json::array({v})},
          {"preferredVersion", v}};
}

json LegacyMetricsV1beta1Resources() {
  return ResourceList(MetricsV1beta1Resources(), std::string(kMetricsGroup) + "/v1beta1");
}

json LegacyBatchV1Resources() {
  return ResourceList(BatchV1Resources(), "batch/v1");
}

json LegacyCoreV1Resources() {
  return ResourceList(CoreV1Resources(), "v1");
}

json OpenApiV3CoreV1() {
  return OpenApiV3Document("", kPatchableKinds, std::size(kPatchableKinds));
}

json OpenApiV3BatchV1() {
  return OpenApiV3Document("batch", kPatchableBatchKinds, std::size(kPatchableBatchKinds));
}

json OpenApiV3Index() {
  // The hash only has to change when the document does.
  auto hash_of = [](const json& doc) {
    std::string hash = StableUid("openapi", doc.dump());
    hash.erase(std::remove(hash.begin(), hash.end(), '-'), hash.end());
    return hash;
  };
  return {{"paths",
           {{"api/v1",
             {{"serverRelativeURL", "/openapi/v3/api/v1?hash=" + hash_of(OpenApiV3CoreV1())}}},
            {"apis/batch/v1",
             {{"serverRelativeURL",
               "/openapi/v3/apis/batch/v1?hash=" + hash_of(OpenApiV3BatchV1())}}}}}};
}

bool NodeUnschedulable(std::string_view state) {
  return state.find("DRAIN") != std::string_view::npos;
}

bool IsMigProfile(std::string_view type) {
  // "<slices>g.<memory>gb", optionally with a suffix such as "+me": 1g.10gb, 3g.40gb, 1g.10gb+me.
  size_t g = type.find("g.");
  if (g == 0 || g == std::string_view::npos) return false;
  for (size_t i = 0; i < g; ++i) {
    if (type[i] < '0' || type[i] > '9') return false;
  }
  size_t gb = type.find("gb", g + 2);
  if (gb == std::string_view::npos || gb == g + 2) return false;
  for (size_t i = g + 2; i < gb; ++i) {
    if (type[i] < '0' || type[i] > '9') return false;
  }
  return true;
}

json EncodeNode(const NodeFacts& n) {
  const bool unschedulable = NodeUnschedulable(n.state);
  const bool down = n.state.find("DOWN") != std::string::npos;
  json labels = {{"kubernetes.io/hostname", n.name},
                 {"kubernetes.io/os", "linux"},
                 {"berth.io/state", n.state}};
  for (const std::string& p : n.partitions) {
    labels["node-role.kubernetes.io/" + p] = "";
    labels["partition.berth.io/" + p] = "true";
  }
  for (const std::string& f : n.features) labels["feature.berth.io/" + f] = "true";
  std::string gpu_type;
  for (const std::string& g : n.gpus) {
    if (!g.empty()) gpu_type = g;
  }
  if (!n.gpus.empty()) {
    labels["nvidia.com/gpu.count"] = std::to_string(n.gpus.size());
    if (!gpu_type.empty()) labels["nvidia.com/gpu.product"] = gpu_type;
  }
  json capacity = {{"cpu", std::to_string(n.cpus)},
                   {"memory", MemoryQuantity(n.mem_mib)},
                   {"nvidia.com/gpu", std::to_string(n.gpus.size())},
                   {"pods", "110"},
                   {"ephemeral-storage", "0"}};
  // Shared and partitioned GPUs (docs/kubernetes.md): every device offers replicas of
  // nvidia.com/gpu.shared and 1000 berth.io/gpu-milli; a MIG instance (a device whose type is a
  // MIG profile, "1g.10gb") counts as nvidia.com/mig-PROFILE too, as the device plugin's mixed
  // strategy shows it.
  if (!n.gpus.empty()) {
    const int64_t devices = static_cast<int64_t>(n.gpus.size());
    capacity["nvidia.com/gpu.shared"] =
        std::to_string(devices * std::max(1, n.gpu_shared_replicas));
    capacity["berth.io/gpu-milli"] = std::to_string(devices * 1000);
    std::map<std::string, int64_t> mig;
    for (const std::string& g : n.gpus) {
      if (IsMigProfile(g)) ++mig[g];
    }
    for (const auto& [profile, count] : mig) {
      capacity["nvidia.com/mig-" + profile] = std::to_string(count);
    }
  }
  std::string ready = "Unknown", reason = "NodeStatusUnknown",
              message = "the berth agent has not registered";
  if (n.agent_connected && !down) {
    ready = "True";
    reason = "BerthAgentReady";
    message = "the berth agent is connected";
  } else if (n.agent_connected || down) {
    ready = "False";
    reason = "BerthNodeDown";
    message = "berth has the node " + n.state + (n.reason.empty() ? "" : ": " + n.reason);
  }
  json spec = json::object();
  if (unschedulable) {
    spec["unschedulable"] = true;
    spec["taints"] =
        json::array({{{"key", "node.kubernetes.io/unschedulable"},
                      {"effect", "NoSchedule"},
                      {"timeAdded", Rfc3339(n.state_since ? n.state_since : n.created)}}});
  }
  const int64_t transition = n.state_since ? n.state_since : n.created;
  json annotations = {{"berth.io/created-unix", std::to_string(n.created)}};
  if (!n.reason.empty()) annotations["berth.io/reason"] = n.reason;
  return {{"kind", "Node"},
          {"apiVersion", "v1"},
          {"metadata",
           {{"name", n.name},
            {"uid", StableUid("Node", n.name)},
            {"resourceVersion", n.resource_version},
            {"creationTimestamp", Rfc3339(n.created)},
            {"labels", labels},
            {"annotations", annotations}}},
          {"spec", spec},
          {"status",
           {{"capacity", capacity},
            {"allocatable", capacity},
            {"conditions",
             json::array({{{"type", "Ready"},
                           {"status", ready},
                           {"reason", reason},
                           {"message", message},
                           {"lastHeartbeatTime", Rfc3339(n.last_seen ? n.last_seen : n.created)},
                           {"lastTransitionTime", Rfc3339(transition)}}})},
            {"addresses", json::array({{{"type", "Hostname"}, {"address", n.name}}})},
            {"nodeInfo",
             {{"machineID", ""},
              {"systemUUID", ""},
              {"bootID", ""},
              {"kernelVersion", ""},
              {"osImage", ""},
              {"containerRuntimeVersion", "berth://" + n.berth_version},
              {"kubeletVersion", "berth-" + n.berth_version},
              {"kubeProxyVersion", ""},
              {"operatingSystem", "linux"},
              {"architecture", ""}}}}}};
}

json NodeTableColumns() {
  return json::array(
      {TableColumn("Name", "string", "name", "the node's name", 0),
       TableColumn("Status", "string", "",
                   "Ready, NotReady or Unknown; SchedulingDisabled when cordoned (drained)", 0),
       TableColumn("Roles", "string", "", "the berth partitions the node is in", 0),
       TableColumn("Age", "string", "", "since the controller first saw the node", 0),
       TableColumn("Version", "string", "", "the berth version", 0),
       TableColumn("Internal-IP", "string", "", "not known to berth", 1),
       TableColumn("External-IP", "string", "", "not known to berth", 1),
       TableColumn("OS-Image", "string", "", "not reported by berth agents", 1),
       TableColumn("Kernel-Version", "string", "", "not reported by berth agents", 1),
       TableColumn("Container-Runtime", "string", "", "berth runs processes, not containers", 1)});
}

json NodeTableCells(const json& node, int64_t now) {
  std::string status = "Unknown";
  const json conditions = Get(node, {"status", "conditions"}).is_array()
                              ? Get(node, {"status", "conditions"})
                              : json::array();
  for (const json& c : conditions) {
    if (c.value("type", "") != "Ready") continue;
    std::string s = c.value("status", "");
    status = s == "True" ? "Ready" : s == "False" ? "NotReady" : "Unknown";
  }
  if (Get(node, {"spec", "unschedulable"}) == true) status += ",SchedulingDisabled";
  std::vector<std::string> roles;
  const json labels = Get(node, {"metadata", "labels"}).is_object()
                          ? Get(node, {"metadata", "labels"})
                          : json::object();
  for (const auto& [key, value] : labels.items()) {
    constexpr std::string_view kRole = "node-role.kubernetes.io/";
    if (std::string_view(key).starts_with(kRole)) roles.push_back(key.substr(kRole.size()));
  }
  auto info = [&](const char* key) {
    const json& v = Get(node, {"status", "nodeInfo", key});
    return v.is_string() && !v.get<std::string>().empty() ? v.get<std::string>() : "<unknown>";
  };
  return json::array({Get(node, {"metadata", "name"}), status,
                      roles.empty() ? "<none>" : Join(roles, ","), Age(node, now),
                      info("kubeletVersion"), "<none>", "<none>", info("osImage"),
                      info("kernelVersion"), info("containerRuntimeVersion")});
}

json EncodeNamespace(const std::string& name, int64_t created, const std::string& resource_version,
                     const json& labels, const json& annotations) {
  json l = labels.is_object() ? labels : json::object();
  l["kubernetes.io/metadata.name"] = name;
  json a = annotations.is_object() ? annotations : json::object();
  a["berth.io/created-unix"] = std::to_string(created);
  return {{"kind", "Namespace"},
          {"apiVersion", "v1"},
          {"metadata",
           {{"name", name},
            {"uid", StableUid("Namespace", name + "@" + std::to_string(created))},
            {"resourceVersion", resource_version},
            {"creationTimestamp", Rfc3339(created)},
            {"labels", l},
            {"annotations", a}}},
          {"spec", {{"finalizers", {"kubernetes"}}}},
          {"status", {{"phase", "Active"}}}};
}

json NamespaceTableColumns() {
  return json::array({TableColumn("Name", "string", "name", "the namespace's name", 0),
                      TableColumn("Status", "string", "", "the namespace's phase", 0),
                      TableColumn("Age", "string", "", "since it was created", 0)});
}

json NamespaceTableCells(const json& ns, int64_t now) {
  const json& phase = Get(ns, {"status", "phase"});
  return json::array(
      {Get(ns, {"metadata", "name"}), phase.is_string() ? phase : json("Active"), Age(ns, now)});
}

std::string NamespaceNameProblem(std::string_view name) {
  bool ok = !name.empty() && name.size() <= 63;
  for (size_t i = 0; ok && i < name.size(); ++i) {
    char c = name[i];
    bool alnum = (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9');
    ok = alnum || (c == '-' && i != 0 && i + 1 != name.size());
  }
  if (ok) return "";
  return "a lowercase RFC 1123 label must consist of lower case alphanumeric characters or '-', "
         "and must start and end with an alphanumeric character (e.g. 'my-name',  or '123-abc', "
         "at most 63 characters)";
}

Result<std::optional<bool>> UnschedulableFromPatch(std::string_view content_type,
                                                   std::string_view body) {
  json patch = json::parse(body, nullptr, false);
  if (patch.is_discarded()) return Status::InvalidArgument("the patch is not JSON");
  auto as_value = [](const json& v) -> Result<std::optional<bool>> {
    if (v.is_null()) return std::optional<bool>(false);
    if (v.is_boolean()) return std::optional<bool>(v.get<bool>());
    return Status::InvalidArgument("spec.unschedulable: expected true, false or null");
  };
  if (content_type.starts_with("application/json-patch+json")) {
    if (!patch.is_array()) return Status::InvalidArgument("a JSON patch is an array of operations");
    std::optional<bool> out;
    for (const json& op : patch) {
      std::string kind = op.is_object() ? op.value("op", "") : "";
      std::string path = op.is_object() ? op.value("path", "") : "";
      if (kind == "test") continue;
      if (path != "/spec/unschedulable") {
        return Status::InvalidArgument((path.empty() ? std::string("(no path)") : path) +
                                       ": berth nodes accept changes of spec.unschedulable only");
      }
      if (kind == "remove") {
        out = false;
      } else if (kind == "add" || kind == "replace") {
        BERTH_ASSIGN_OR_RETURN(out, as_value(op.contains("value") ? op["value"] : json()));
      } else {
        return Status::InvalidArgument("unsupported JSON patch operation '" + kind + "'");
      }
    }
    return out;
  }
  if (!content_type.starts_with("application/strategic-merge-patch+json") &&
      !content_type.starts_with("application/merge-patch+json")) {
    return Status::InvalidArgument("unsupported patch type '" + std::string(content_type) + "'");
  }
  if (!patch.is_object()) return Status::InvalidArgument("a merge patch is a JSON object");
  std::optional<bool> out;
  for (const auto& [key, value] : patch.items()) {
    if (key == "spec" && value.is_object()) {
      for (const auto& [field, v] : value.items()) {
        if (field != "unschedulable") {
          return Status::InvalidArgument("spec." + field +
                                         ": berth nodes accept changes of spec.unschedulable only");
        }
        BERTH_ASSIGN_OR_RETURN(out, as_value(v));
      }
    } else if (!(key == "metadata" && value.is_object() && value.empty()) && key != "apiVersion" &&
               key != "kind") {
      return Status::InvalidArgument(key +
                                     ": berth nodes accept changes of spec.unschedulable only");
    }
  }
  return out;
}

}  // namespace berth::k8s
