#include "k8s/routes.h"

namespace berth::k8s {

namespace {

using E = Endpoint;

constexpr std::string_view kPods = "/api/v1/namespaces/{namespace}/pods";
constexpr std::string_view kPod = "/api/v1/namespaces/{namespace}/pods/{name}";
constexpr std::string_view kJobs = "/apis/batch/v1/namespaces/{namespace}/jobs";
constexpr std::string_view kJob = "/apis/batch/v1/namespaces/{namespace}/jobs/{name}";
constexpr std::string_view kCronJobs = "/apis/batch/v1/namespaces/{namespace}/cronjobs";
constexpr std::string_view kCronJob = "/apis/batch/v1/namespaces/{namespace}/cronjobs/{name}";
constexpr std::string_view kCronJobStatus =
    "/apis/batch/v1/namespaces/{namespace}/cronjobs/{name}/status";
constexpr std::string_view kMetrics = "/apis/metrics.k8s.io/v1beta1";
constexpr std::string_view kNodeMetrics = "/apis/metrics.k8s.io/v1beta1/nodes";
constexpr std::string_view kNodeMetric = "/apis/metrics.k8s.io/v1beta1/nodes/{name}";
constexpr std::string_view kPodMetrics = "/apis/metrics.k8s.io/v1beta1/namespaces/{namespace}/pods";
constexpr std::string_view kPodMetric =
    "/apis/metrics.k8s.io/v1beta1/namespaces/{namespace}/pods/{name}";
constexpr std::string_view kJobStatus = "/apis/batch/v1/namespaces/{namespace}/jobs/{name}/status";

// Match order matters where patterns overlap: a path's own methods before its "*" route, the
// exact paths before the catch-all "{...}" of their prefix.
constexpr Route kRoutes[] = {
    {"*", "/healthz", E::kHealth},
    {"*", "/livez", E::kHealth},
    {"*", "/readyz", E::kHealth},
    // Discovery and OpenAPI.
    {"GET", "/apis/apiextensions.k8s.io/v1/customresourcedefinitions", E::kCrds},
    {"HEAD", "/apis/apiextensions.k8s.io/v1/customresourcedefinitions", E::kCrds},
    {"GET", "/openapi/v2", E::kOpenApiV2},
    {"HEAD", "/openapi/v2", E::kOpenApiV2},
    {"*", "/openapi/v2", E::kDiscoveryNotAllowed},
    {"GET", "/version", E::kVersion},
    {"HEAD", "/version", E::kVersion},
    {"GET", "/api", E::kApiVersions},
    {"HEAD", "/api", E::kApiVersions},
    {"GET", "/apis", E::kApiGroups},
    {"HEAD", "/apis", E::kApiGroups},
    {"GET", "/api/v1", E::kCoreV1},
    {"HEAD", "/api/v1", E::kCoreV1},
    {"GET", "/apis/batch/v1", E::kBatchV1},
    {"HEAD", "/apis/batch/v1", E::kBatchV1},
    {"GET", "/openapi/v3", E::kOpenApiV3Index},
    {"HEAD", "/openapi/v3", E::kOpenApiV3Index},
    {"GET", "/openapi/v3/api/v1", E::kOpenApiV3CoreV1},
    {"HEAD", "/openapi/v3/api/v1", E::kOpenApiV3CoreV1},
    {"GET", "/openapi/v3/apis/batch/v1", E::kOpenApiV3BatchV1},
    {"HEAD", "/openapi/v3/apis/batch/v1", E::kOpenApiV3BatchV1},
    {"GET", "/openapi/v3/{...}", E::kNotFound},
    {"HEAD", "/openapi/v3/{...}", E::kNotFound},
    {"*", "/version", E::kDiscoveryNotAllowed},
    {"*", "/api", E::kDiscoveryNotAllowed},
    {"*", "/apis", E::kDiscoveryNotAllowed},
    {"*", "/api/v1", E::kDiscoveryNotAllowed},
    {"*", "/apis/batch/v1", E::kDiscoveryNotAllowed},
    {"*", "/openapi/v3/{...}", E::kDiscoveryNotAllowed},
    // core/v1 Namespaces.
    {"GET", "/api/v1/namespaces", E::kNamespaceList},
    {"POST", "/api/v1/namespaces", E::kNamespaceCreate},
    {"*", "/api/v1/namespaces", E::kNotAllowed},
    {"GET", "/api/v1/namespaces/{name}", E::kNamespaceGet},
    {"HEAD", "/api/v1/namespaces/{name}", E::kNamespaceGet},
    {"PATCH", "/api/v1/namespaces/{name}", E::kNamespaceUpdate},
    {"PUT", "/api/v1/namespaces/{name}", E::kNamespaceUpdate},
    {"DELETE", "/api/v1/namespaces/{name}", E::kNamespaceDelete},
    {"*", "/api/v1/namespaces/{name}", E::kNotAllowed},
    // core/v1 Nodes.
    {"GET", "/api/v1/nodes", E::kNodeList},
    {"HEAD", "/api/v1/nodes", E::kNodeList},
    {"*", "/api/v1/nodes", E::kNotAllowed},
    {"GET", "/api/v1/nodes/{name}", E::kNodeGet},
    {"HEAD", "/api/v1/nodes/{name}", E::kNodeGet},
    {"PATCH", "/api/v1/nodes/{name}", E::kNodePatch},
    {"*", "/api/v1/nodes/{name}", E::kNodeOther},
    // core/v1 Pods.
    {"GET", "/api/v1/pods", E::kPodList},
    {"*", "/api/v1/pods", E::kNotAllowed},
    {"GET", kPods, E::kPodList},
    {"POST", kPods, E::kPodCreate},
    {"*", kPods, E::kNotAllowed},
    {"GET", kPod, E::kPodGet},
    {"HEAD", kPod, E::kPodGet},
    {"DELETE", kPod, E::kPodDelete},
    {"PATCH", kPod, E::kPodUpdate},
    {"PUT", kPod, E::kPodUpdate},
    {"*", kPod, E::kPodOther},
    {"*", "/api/v1/namespaces/{namespace}/pods/{name}/log", E::kPodLog},
    {"GET", "/api/v1/namespaces/{namespace}/pods/{name}/exec", E::kPodExec},
    {"POST", "/api/v1/namespaces/{namespace}/pods/{name}/exec", E::kPodExec},
    {"GET", "/api/v1/namespaces/{namespace}/pods/{name}/attach", E::kPodAttach},
    {"POST", "/api/v1/namespaces/{namespace}/pods/{name}/attach", E::kPodAttach},
    {"GET", "/api/v1/namespaces/{namespace}/pods/{name}/portforward", E::kPodPortForward},
    {"POST", "/api/v1/namespaces/{namespace}/pods/{name}/portforward", E::kPodPortForward},
    {"GET", "/api/v1/namespaces/{namespace}/pods/{name}/status", E::kPodGet},
    {"HEAD", "/api/v1/namespaces/{namespace}/pods/{name}/status", E::kPodGet},
    // core/v1 Events (an event's path may go on: its first segment names it).
    {"GET", "/api/v1/events", E::kEventList},
    {"HEAD", "/api/v1/events", E::kEventList},
    {"*", "/api/v1/events", E::kNotAllowed},
    {"GET", "/api/v1/namespaces/{namespace}/events", E::kEventList},
    {"HEAD", "/api/v1/namespaces/{namespace}/events", E::kEventList},
    {"GET", "/api/v1/namespaces/{namespace}/events/{name}/{...}", E::kEventGet},
    {"HEAD", "/api/v1/namespaces/{namespace}/events/{name}/{...}", E::kEventGet},
    {"*", "/api/v1/namespaces/{namespace}/events/{...}", E::kNotAllowed},
    // core/v1 Secrets and ConfigMaps.
    {"GET", "/api/v1/secrets", E::kConfigList},
    {"*", "/api/v1/secrets", E::kNotAllowed},
    {"GET", "/api/v1/namespaces/{namespace}/secrets", E::kConfigList},
    {"POST", "/api/v1/namespaces/{namespace}/secrets", E::kConfigCreate},
    {"*", "/api/v1/namespaces/{namespace}/secrets", E::kNotAllowed},
    {"GET", "/api/v1/namespaces/{namespace}/secrets/{name}", E::kConfigGet},
    {"HEAD", "/api/v1/namespaces/{namespace}/secrets/{name}", E::kConfigGet},
    {"PATCH", "/api/v1/namespaces/{namespace}/secrets/{name}", E::kConfigUpdate},
    {"PUT", "/api/v1/namespaces/{namespace}/secrets/{name}", E::kConfigUpdate},
    {"DELETE", "/api/v1/namespaces/{namespace}/secrets/{name}", E::kConfigDelete},
    {"*", "/api/v1/namespaces/{namespace}/secrets/{name}", E::kNotAllowed},
    {"GET", "/api/v1/configmaps", E::kConfigList},
    {"*", "/api/v1/configmaps", E::kNotAllowed},
    {"GET", "/api/v1/namespaces/{namespace}/configmaps", E::kConfigList},
    {"POST", "/api/v1/namespaces/{namespace}/configmaps", E::kConfigCreate},
    {"*", "/api/v1/namespaces/{namespace}/configmaps", E::kNotAllowed},
    {"GET", "/api/v1/namespaces/{namespace}/configmaps/{name}", E::kConfigGet},
    {"HEAD", "/api/v1/namespaces/{namespace}/configmaps/{name}", E::kConfigGet},
    {"PATCH", "/api/v1/namespaces/{namespace}/configmaps/{name}", E::kConfigUpdate},
    {"PUT", "/api/v1/namespaces/{namespace}/configmaps/{name}", E::kConfigUpdate},
    {"DELETE", "/api/v1/namespaces/{namespace}/configmaps/{name}", E::kConfigDelete},
    {"*", "/api/v1/namespaces/{namespace}/configmaps/{name}", E::kNotAllowed},
    // batch/v1 Jobs.
    {"GET", "/apis/batch/v1/jobs", E::kJobList},
    {"*", "/apis/batch/v1/jobs", E::kNotAllowed},
    {"GET", kJobs, E::kJobList},
    {"POST", kJobs, E::kJobCreate},
    {"*", kJobs, E::kNotAllowed},
    {"GET", kJob, E::kJobGet},
    {"HEAD", kJob, E::kJobGet},
    {"DELETE", kJob, E::kJobDelete},
    {"PATCH", kJob, E::kJobUpdate},
    {"PUT", kJob, E::kJobUpdate},
    {"*", kJob, E::kJobOther},
    {"GET", kJobStatus, E::kJobGet},
    {"HEAD", kJobStatus, E::kJobGet},
    {"DELETE", kJobStatus, E::kJobDelete},
    {"PATCH", kJobStatus, E::kJobStatusUpdate},
    {"PUT", kJobStatus, E::kJobStatusUpdate},
    {"*", kJobStatus, E::kJobOther},
    // batch/v1 CronJobs.
    {"GET", "/apis/batch/v1/cronjobs", E::kCronJobList},
    {"*", "/apis/batch/v1/cronjobs", E::kNotAllowed},
    {"GET", kCronJobs, E::kCronJobList},
    {"POST", kCronJobs, E::kCronJobCreate},
    {"*", kCronJobs, E::kNotAllowed},
    {"GET", kCronJob, E::kCronJobGet},
    {"HEAD", kCronJob, E::kCronJobGet},
    {"DELETE", kCronJob, E::kCronJobDelete},
    {"PATCH", kCronJob, E::kCronJobUpdate},
    {"PUT", kCronJob, E::kCronJobUpdate},
    {"*", kCronJob, E::kCronJobOther},
    {"GET", kCronJobStatus, E::kCronJobGet},
    {"HEAD", kCronJobStatus, E::kCronJobGet},
    {"*", kCronJobStatus, E::kCronJobOther},
    // metrics.k8s.io/v1beta1.
    {"GET", "/apis/metrics.k8s.io", E::kMetricsGroup},
    {"HEAD", "/apis/metrics.k8s.io", E::kMetricsGroup},
    {"*", "/apis/metrics.k8s.io", E::kDiscoveryNotAllowed},
    {"GET", kMetrics, E::kMetricsV1beta1},
    {"HEAD", kMetrics, E::kMetricsV1beta1},
    {"*", kMetrics, E::kDiscoveryNotAllowed},
    {"GET", kNodeMetrics, E::kNodeMetricsList},
    {"*", kNodeMetrics, E::kNotAllowed},
    {"GET", kNodeMetric, E::kNodeMetricsGet},
    {"*", kNodeMetric, E::kNotAllowed},
    {"GET", "/apis/metrics.k8s.io/v1beta1/pods", E::kPodMetricsList},
    {"*", "/apis/metrics.k8s.io/v1beta1/pods", E::kNotAllowed},
    {"GET", kPodMetrics, E::kPodMetricsList},
    {"*", kPodMetrics, E::kNotAllowed},
    {"GET", kPodMetric, E::kPodMetricsGet},
    {"*", kPodMetric, E::kNotAllowed},
};

}  // namespace

std::span<const Route> Routes() {
  return kRoutes;
}

RouteMatch MatchRoute(std::string_view method, std::string_view path) {
  RouteMatch m;
  m.match.parts = PathParts(path);
  for (const Route& r : kRoutes) {
    if ((r.method == "*" || r.method == method) &&
        PatternMatches(r.pattern, m.match.parts, m.match.params)) {
      m.endpoint = r.endpoint;
      return m;
    }
  }
  m.match.params.clear();
  return m;
}

}  // namespace berth::k8s
