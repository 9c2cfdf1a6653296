#include "k8s/routes.h"

#include <gtest/gtest.h>

#include <string>

namespace berth::k8s {
namespace {

using E = Endpoint;

struct Case {
  const char* method;
  const char* path;
  Endpoint endpoint;
};

// Which paths reach which endpoint; kNotFound is a 404, kNotAllowed and kDiscoveryNotAllowed
// are 405s, as the face answered them before the table.
constexpr Case kCases[] = {
    {"GET", "/version", E::kVersion},
    {"HEAD", "/version", E::kVersion},
    {"GET", "/api", E::kApiVersions},
    {"GET", "/apis", E::kApiGroups},
    {"GET", "/api/v1", E::kCoreV1},
    {"GET", "/apis/batch/v1", E::kBatchV1},
    {"GET", "/openapi/v2", E::kOpenApiV2},
    {"GET", "/openapi/v3", E::kOpenApiV3Index},
    {"GET", "/openapi/v3/api/v1", E::kOpenApiV3CoreV1},
    {"GET", "/openapi/v3/apis/batch/v1", E::kOpenApiV3BatchV1},
    {"GET", "/openapi/v3/apis/apps/v1", E::kNotFound},
    {"GET", "/apis/apiextensions.k8s.io/v1/customresourcedefinitions", E::kCrds},
    {"POST", "/apis/apiextensions.k8s.io/v1/customresourcedefinitions", E::kNotFound},
    {"GET", "/apis/batch", E::kNotFound},
    {"GET", "/", E::kNotFound},
    {"GET", "/apis/apps/v1", E::kNotFound},
    {"GET", "/api/v1/namespaces", E::kNamespaceList},
    {"POST", "/api/v1/namespaces", E::kNamespaceCreate},
    {"HEAD", "/api/v1/namespaces", E::kNotAllowed},
    {"DELETE", "/api/v1/namespaces", E::kNotAllowed},
    {"HEAD", "/api/v1/namespaces/team", E::kNamespaceGet},
    {"PATCH", "/api/v1/namespaces/team", E::kNamespaceUpdate},
    {"PUT", "/api/v1/namespaces/team", E::kNamespaceUpdate},
    {"DELETE", "/api/v1/namespaces/team", E::kNamespaceDelete},
    {"POST", "/api/v1/namespaces/team", E::kNotAllowed},
    {"GET", "/api/v1/namespaces/team/configmaps", E::kConfigList},
    {"GET", "/api/v1/namespaces/team/configmaps/x", E::kConfigGet},
    {"POST", "/api/v1/namespaces/team/secrets", E::kConfigCreate},
    {"PATCH", "/api/v1/namespaces/team/secrets/x", E::kConfigUpdate},
    {"DELETE", "/api/v1/namespaces/team/secrets/x", E::kConfigDelete},
    {"POST", "/api/v1/namespaces/team/secrets/x", E::kNotAllowed},
    {"GET", "/api/v1/secrets", E::kConfigList},
    {"GET", "/api/v1/namespaces/team/serviceaccounts", E::kNotFound},
    {"GET", "/api/v1/nodes", E::kNodeList},
    {"HEAD", "/api/v1/nodes", E::kNodeList},
    {"POST", "/api/v1/nodes", E::kNotAllowed},
    {"GET", "/api/v1/nodes/n1", E::kNodeGet},
    {"PATCH", "/api/v1/nodes/n1", E::kNodePatch},
    {"DELETE", "/api/v1/nodes/n1", E::kNodeOther},
    {"GET", "/api/v1/nodes/n1/status", E::kNotFound},
    {"GET", "/api/v1/pods", E::kPodList},
    {"POST", "/api/v1/pods", E::kNotAllowed},
    {"HEAD", "/api/v1/pods", E::kNotAllowed},
    {"POST", "/api/v1/namespaces/default/pods", E::kPodCreate},
    {"DELETE", "/api/v1/namespaces/default/pods", E::kNotAllowed},
    {"GET", "/api/v1/namespaces/default/pods/web", E::kPodGet},
    {"HEAD", "/api/v1/namespaces/default/pods/web", E::kPodGet},
    {"DELETE", "/api/v1/namespaces/default/pods/web", E::kPodDelete},
    {"PATCH", "/api/v1/namespaces/default/pods/web", E::kPodUpdate},
    {"PUT", "/api/v1/namespaces/default/pods/web", E::kPodUpdate},
    {"POST", "/api/v1/namespaces/default/pods/web", E::kPodOther},
    {"GET", "/api/v1/namespaces/default/pods/web/log", E::kPodLog},
    {"POST", "/api/v1/namespaces/default/pods/web/log", E::kPodLog},
    {"GET", "/api/v1/namespaces/default/pods/web/status", E::kPodGet},
    {"PATCH", "/api/v1/namespaces/default/pods/web/status", E::kNotFound},
    {"GET", "/api/v1/namespaces/default/pods/web/exec", E::kPodExec},
    {"POST", "/api/v1/namespaces/default/pods/web/exec", E::kPodExec},
    {"GET", "/api/v1/namespaces/default/pods/web/attach", E::kPodAttach},
    {"POST", "/api/v1/namespaces/default/pods/web/portforward", E::kPodPortForward},
    {"DELETE", "/api/v1/namespaces/default/pods/web/exec", E::kNotFound},
    {"GET", "/api/v1/namespaces/default/pods/web/ephemeralcontainers", E::kNotFound},
    {"GET", "/api/v1/namespaces/default/pods/web/log/x", E::kNotFound},
    {"GET", "/api/v1/pods/web", E::kNotFound},
    {"GET", "/api/v1/events", E::kEventList},
    {"HEAD", "/api/v1/events", E::kEventList},
    {"POST", "/api/v1/events", E::kNotAllowed},
    {"GET", "/api/v1/events/x", E::kNotFound},
    {"GET", "/api/v1/namespaces/default/events", E::kEventList},
    {"POST", "/api/v1/namespaces/default/events", E::kNotAllowed},
    {"GET", "/api/v1/namespaces/default/events/e1", E::kEventGet},
    {"GET", "/api/v1/namespaces/default/events/e1/more", E::kEventGet},
    {"DELETE", "/api/v1/namespaces/default/events/e1", E::kNotAllowed},
    {"GET", "/apis/batch/v1/jobs", E::kJobList},
    {"POST", "/apis/batch/v1/jobs", E::kNotAllowed},
    {"HEAD", "/apis/batch/v1/jobs", E::kNotAllowed},
    {"GET", "/apis/batch/v1/namespaces/default/jobs", E::kJobList},
    {"POST", "/apis/batch/v1/namespaces/default/jobs", E::kJobCreate},
    {"PUT", "/apis/batch/v1/namespaces/default/jobs", E::kNotAllowed},
    {"GET", "/apis/batch/v1/namespaces/default/jobs/train", E::kJobGet},
    {"DELETE", "/apis/batch/v1/namespaces/default/jobs/train", E::kJobDelete},
    {"PATCH", "/apis/batch/v1/namespaces/default/jobs/train", E::kJobUpdate},
    {"PUT", "/apis/batch/v1/namespaces/default/jobs/train", E::kJobUpdate},
    {"POST", "/apis/batch/v1/namespaces/default/jobs/train", E::kJobOther},
    {"GET", "/apis/batch/v1/namespaces/default/jobs/train/status", E::kJobGet},
    {"DELETE", "/apis/batch/v1/namespaces/default/jobs/train/status", E::kJobDelete},
    {"PATCH", "/apis/batch/v1/namespaces/default/jobs/train/status", E::kJobStatusUpdate},
    {"POST", "/apis/batch/v1/namespaces/default/jobs/train/status", E::kJobOther},
    {"GET", "/apis/batch/v1/namespaces/default/jobs/train/scale", E::kNotFound},
    {"GET", "/apis/batch/v1/namespaces/default", E::kNotFound},
    {"GET", "/apis/batch/v1/cronjobs", E::kCronJobList},
    {"POST", "/apis/batch/v1/namespaces/default/cronjobs", E::kCronJobCreate},
    {"GET", "/apis/batch/v1/namespaces/default/cronjobs/nightly", E::kCronJobGet},
    {"PATCH", "/apis/batch/v1/namespaces/default/cronjobs/nightly", E::kCronJobUpdate},
    {"DELETE", "/apis/batch/v1/namespaces/default/cronjobs/nightly", E::kCronJobDelete},
    {"POST", "/apis/batch/v1/namespaces/default/cronjobs/nightly", E::kCronJobOther},
    {"GET", "/apis/batch/v1/namespaces/default/cronjobs/nightly/status", E::kCronJobGet},
    {"GET", "/apis/metrics.k8s.io", E::kMetricsGroup},
    {"GET", "/apis/metrics.k8s.io/v1beta1", E::kMetricsV1beta1},
    {"GET", "/apis/metrics.k8s.io/v1beta1/nodes", E::kNodeMetricsList},
    {"GET", "/apis/metrics.k8s.io/v1beta1/nodes/node1", E::kNodeMetricsGet},
    {"GET", "/apis/metrics.k8s.io/v1beta1/pods", E::kPodMetricsList},
    {"GET", "/apis/metrics.k8s.io/v1beta1/namespaces/ml/pods", E::kPodMetricsList},
    {"GET", "/apis/metrics.k8s.io/v1beta1/namespaces/ml/pods/p", E::kPodMetricsGet},
    {"DELETE", "/apis/metrics.k8s.io/v1beta1/namespaces/ml/pods/p", E::kNotAllowed},
};

TEST(K8sRoutesTest, EachPathReachesItsEndpoint) {
  for (const Case& c : kCases) {
    EXPECT_EQ(MatchRoute(c.method, c.path).endpoint, c.endpoint) << c.method << " " << c.path;
  }
}

TEST(K8sRoutesTest, HealthAnswersEveryMethod) {
  for (const char* path : {"/healthz", "/livez", "/readyz", "//readyz/"}) {
    EXPECT_EQ(MatchRoute("GET", path).endpoint, E::kHealth) << path;
    EXPECT_EQ(MatchRoute("POST", path).endpoint, E::kHealth) << path;
  }
}

TEST(K8sRoutesTest, DiscoveryPathsRefuseOtherMethods) {
  for (const char* path : {"/version", "/api", "/apis", "/api/v1", "/apis/batch/v1", "/openapi/v2",
                           "/openapi/v3", "/openapi/v3/api/v1", "/openapi/v3/x"}) {
    EXPECT_EQ(MatchRoute("POST", path).endpoint, E::kDiscoveryNotAllowed) << path;
  }
}

TEST(K8sRoutesTest, Parameters) {
  RouteMatch ns = MatchRoute("GET", "/api/v1/namespaces/team");
  EXPECT_EQ(ns.match.Param("name"), "team");
  EXPECT_EQ(MatchRoute("GET", "/api/v1/pods").match.Param("namespace"), "");
  RouteMatch log = MatchRoute("GET", "/api/v1/namespaces/default/pods/web/log");
  EXPECT_EQ(log.match.Param("namespace"), "default");
  EXPECT_EQ(log.match.Param("name"), "web");
  RouteMatch status = MatchRoute("PATCH", "/apis/batch/v1/namespaces/default/jobs/train/status");
  EXPECT_EQ(status.endpoint, E::kJobStatusUpdate);
  EXPECT_EQ(status.match.Param("namespace"), "default");
  EXPECT_EQ(status.match.Param("name"), "train");
}

}  // namespace
}  // namespace berth::k8s
