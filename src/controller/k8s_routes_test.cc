#include "controller/k8s_routes.h"

#include <gtest/gtest.h>

#include <string>

namespace berth::controller {
namespace {

using E = K8sEndpoint;

E Of(std::string_view method, std::string_view path) {
  return MatchK8sRoute(method, path).endpoint;
}

TEST(K8sRoutesTest, HealthAnswersEveryMethod) {
  for (const char* path : {"/healthz", "/livez", "/readyz", "//readyz/"}) {
    EXPECT_EQ(Of("GET", path), E::kHealth) << path;
    EXPECT_EQ(Of("POST", path), E::kHealth) << path;
  }
}

TEST(K8sRoutesTest, Discovery) {
  EXPECT_EQ(Of("GET", "/version"), E::kVersion);
  EXPECT_EQ(Of("HEAD", "/version"), E::kVersion);
  EXPECT_EQ(Of("GET", "/api"), E::kApiVersions);
  EXPECT_EQ(Of("GET", "/apis"), E::kApiGroups);
  EXPECT_EQ(Of("GET", "/api/v1"), E::kCoreV1);
  EXPECT_EQ(Of("GET", "/apis/batch/v1"), E::kBatchV1);
  EXPECT_EQ(Of("GET", "/openapi/v2"), E::kOpenApiV2);
  EXPECT_EQ(Of("GET", "/openapi/v3"), E::kOpenApiV3Index);
  EXPECT_EQ(Of("GET", "/openapi/v3/api/v1"), E::kOpenApiV3CoreV1);
  EXPECT_EQ(Of("GET", "/openapi/v3/apis/batch/v1"), E::kOpenApiV3BatchV1);
  EXPECT_EQ(Of("GET", "/openapi/v3/apis/apps/v1"), E::kNotFound);
  EXPECT_EQ(Of("GET", "/apis/apiextensions.k8s.io/v1/customresourcedefinitions"), E::kCrds);
  // Other methods: 405 with empty details on the discovery paths; the CRDs' path is unknown.
  for (const char* path : {"/version", "/api", "/apis", "/api/v1", "/apis/batch/v1", "/openapi/v2",
                           "/openapi/v3", "/openapi/v3/api/v1", "/openapi/v3/x"}) {
    EXPECT_EQ(Of("POST", path), E::kDiscoveryNotAllowed) << path;
  }
  EXPECT_EQ(Of("POST", "/apis/apiextensions.k8s.io/v1/customresourcedefinitions"), E::kNotFound);
  EXPECT_EQ(Of("GET", "/apis/batch"), E::kNotFound);
  EXPECT_EQ(Of("GET", "/"), E::kNotFound);
  EXPECT_EQ(Of("GET", "/apis/apps/v1"), E::kNotFound);
}

TEST(K8sRoutesTest, Namespaces) {
  EXPECT_EQ(Of("GET", "/api/v1/namespaces"), E::kNamespaceList);
  EXPECT_EQ(Of("POST", "/api/v1/namespaces"), E::kNamespaceCreate);
  EXPECT_EQ(Of("HEAD", "/api/v1/namespaces"), E::kNotAllowed);
  EXPECT_EQ(Of("DELETE", "/api/v1/namespaces"), E::kNotAllowed);
  K8sRouteMatch m = MatchK8sRoute("GET", "/api/v1/namespaces/team");
  EXPECT_EQ(m.endpoint, E::kNamespaceGet);
  EXPECT_EQ(m.match.Param("name"), "team");
  EXPECT_EQ(Of("HEAD", "/api/v1/namespaces/team"), E::kNamespaceGet);
  EXPECT_EQ(Of("PATCH", "/api/v1/namespaces/team"), E::kNamespaceUpdate);
  EXPECT_EQ(Of("PUT", "/api/v1/namespaces/team"), E::kNamespaceUpdate);
  EXPECT_EQ(Of("DELETE", "/api/v1/namespaces/team"), E::kNamespaceDelete);
  EXPECT_EQ(Of("POST", "/api/v1/namespaces/team"), E::kNotAllowed);
  EXPECT_EQ(Of("GET", "/api/v1/namespaces/team/configmaps"), E::kNotFound);
  EXPECT_EQ(Of("GET", "/api/v1/namespaces/team/configmaps/x"), E::kNotFound);
}

TEST(K8sRoutesTest, Nodes) {
  EXPECT_EQ(Of("GET", "/api/v1/nodes"), E::kNodeList);
  EXPECT_EQ(Of("HEAD", "/api/v1/nodes"), E::kNodeList);
  EXPECT_EQ(Of("POST", "/api/v1/nodes"), E::kNotAllowed);
  EXPECT_EQ(Of("GET", "/api/v1/nodes/n1"), E::kNodeGet);
  EXPECT_EQ(Of("PATCH", "/api/v1/nodes/n1"), E::kNodePatch);
  EXPECT_EQ(Of("DELETE", "/api/v1/nodes/n1"), E::kNodeOther);
  EXPECT_EQ(Of("GET", "/api/v1/nodes/n1/status"), E::kNotFound);
}

TEST(K8sRoutesTest, Pods) {
  EXPECT_EQ(Of("GET", "/api/v1/pods"), E::kPodList);
  EXPECT_EQ(Of("POST", "/api/v1/pods"), E::kNotAllowed);
  EXPECT_EQ(Of("HEAD", "/api/v1/pods"), E::kNotAllowed);
  EXPECT_EQ(MatchK8sRoute("GET", "/api/v1/pods").match.Param("namespace"), "");
  K8sRouteMatch list = MatchK8sRoute("GET", "/api/v1/namespaces/default/pods");
  EXPECT_EQ(list.endpoint, E::kPodList);
  EXPECT_EQ(list.match.Param("namespace"), "default");
  EXPECT_EQ(Of("POST", "/api/v1/namespaces/default/pods"), E::kPodCreate);
  EXPECT_EQ(Of("DELETE", "/api/v1/namespaces/default/pods"), E::kNotAllowed);
  const std::string pod = "/api/v1/namespaces/default/pods/web";
  EXPECT_EQ(Of("GET", pod), E::kPodGet);
  EXPECT_EQ(Of("HEAD", pod), E::kPodGet);
  EXPECT_EQ(Of("DELETE", pod), E::kPodDelete);
  EXPECT_EQ(Of("PATCH", pod), E::kPodUpdate);
  EXPECT_EQ(Of("PUT", pod), E::kPodUpdate);
  EXPECT_EQ(Of("POST", pod), E::kPodOther);
  EXPECT_EQ(Of("GET", pod + "/log"), E::kPodLog);
  EXPECT_EQ(Of("POST", pod + "/log"), E::kPodLog);
  EXPECT_EQ(Of("GET", pod + "/status"), E::kPodGet);
  EXPECT_EQ(Of("PATCH", pod + "/status"), E::kNotFound);
  EXPECT_EQ(Of("GET", pod + "/exec"), E::kNotFound);
  EXPECT_EQ(Of("GET", pod + "/log/x"), E::kNotFound);
  EXPECT_EQ(Of("GET", "/api/v1/pods/web"), E::kNotFound);
  K8sRouteMatch m = MatchK8sRoute("GET", pod + "/log");
  EXPECT_EQ(m.match.Param("namespace"), "default");
  EXPECT_EQ(m.match.Param("name"), "web");
}

TEST(K8sRoutesTest, Events) {
  EXPECT_EQ(Of("GET", "/api/v1/events"), E::kEventList);
  EXPECT_EQ(Of("HEAD", "/api/v1/events"), E::kEventList);
  EXPECT_EQ(Of("POST", "/api/v1/events"), E::kNotAllowed);
  EXPECT_EQ(Of("GET", "/api/v1/events/x"), E::kNotFound);
  EXPECT_EQ(Of("GET", "/api/v1/namespaces/default/events"), E::kEventList);
  EXPECT_EQ(Of("POST", "/api/v1/namespaces/default/events"), E::kNotAllowed);
  EXPECT_EQ(Of("GET", "/api/v1/namespaces/default/events/e1"), E::kEventGet);
  EXPECT_EQ(Of("GET", "/api/v1/namespaces/default/events/e1/more"), E::kEventGet);
  EXPECT_EQ(Of("DELETE", "/api/v1/namespaces/default/events/e1"), E::kNotAllowed);
}

TEST(K8sRoutesTest, Jobs) {
  EXPECT_EQ(Of("GET", "/apis/batch/v1/jobs"), E::kJobList);
  EXPECT_EQ(Of("POST", "/apis/batch/v1/jobs"), E::kNotAllowed);
  EXPECT_EQ(Of("HEAD", "/apis/batch/v1/jobs"), E::kNotAllowed);
  const std::string jobs = "/apis/batch/v1/namespaces/default/jobs";
  EXPECT_EQ(Of("GET", jobs), E::kJobList);
  EXPECT_EQ(Of("POST", jobs), E::kJobCreate);
  EXPECT_EQ(Of("PUT", jobs), E::kNotAllowed);
  const std::string job = jobs + "/train";
  EXPECT_EQ(Of("GET", job), E::kJobGet);
  EXPECT_EQ(Of("DELETE", job), E::kJobDelete);
  EXPECT_EQ(Of("PATCH", job), E::kJobUpdate);
  EXPECT_EQ(Of("PUT", job), E::kJobUpdate);
  EXPECT_EQ(Of("POST", job), E::kJobOther);
  EXPECT_EQ(Of("GET", job + "/status"), E::kJobGet);
  EXPECT_EQ(Of("DELETE", job + "/status"), E::kJobDelete);
  EXPECT_EQ(Of("PATCH", job + "/status"), E::kJobStatusUpdate);
  EXPECT_EQ(Of("POST", job + "/status"), E::kJobOther);
  EXPECT_EQ(Of("GET", job + "/scale"), E::kNotFound);
  EXPECT_EQ(Of("GET", "/apis/batch/v1/namespaces/default"), E::kNotFound);
  EXPECT_EQ(Of("GET", "/apis/batch/v1/cronjobs"), E::kNotFound);
  K8sRouteMatch m = MatchK8sRoute("PATCH", job + "/status");
  EXPECT_EQ(m.match.Param("namespace"), "default");
  EXPECT_EQ(m.match.Param("name"), "train");
}

}  // namespace
}  // namespace berth::controller
