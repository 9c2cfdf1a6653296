// The Kubernetes face's health, discovery and OpenAPI answers: /healthz, /version, /api, /apis,
// /api/v1, /apis/batch/v1, the aggregated discovery documents kubectl >= 1.26 asks for, OpenAPI
// v2 (protobuf) and v3, and the empty CustomResourceDefinitionList.
#include <algorithm>

#include "k8s/face.h"
#include "k8s/objects.h"
#include "k8s/openapi_v2.h"

namespace berth::k8s {

using nlohmann::json;

net::HttpResponse Face::Discovery(Endpoint e, const net::HttpRequest& req) {
  using E = Endpoint;
  switch (e) {
    case E::kHealth: {
      net::HttpResponse r;
      r.content_type = "text/plain";
      r.body = "ok";
      return r;
    }
    case E::kCrds:
      // No custom resources: kubectl asks when a manifest's kind is unknown, and then says so.
      return http::JsonResponse(200, {{"kind", "CustomResourceDefinitionList"},
                                      {"apiVersion", "apiextensions.k8s.io/v1"},
                                      {"metadata", {{"resourceVersion", "1"}}},
                                      {"items", json::array()}});
    case E::kOpenApiV2: {  // kubectl <= 1.28 validates with it
      net::HttpResponse r;
      r.content_type = kOpenApiV2ProtobufContentType;
      r.body = OpenApiV2Protobuf(OpenApiV2Kinds());
      return r;
    }
    case E::kVersion:
      return http::JsonResponse(200, VersionInfo(opt_.version));
    case E::kApiVersions:
    case E::kApiGroups:
      return ApiDiscovery(e == E::kApiVersions, req);
    case E::kCoreV1:
      return http::JsonResponse(200, LegacyCoreV1Resources());
    case E::kBatchV1:
      return http::JsonResponse(200, LegacyBatchV1Resources());
    case E::kMetricsGroup:
      return http::JsonResponse(200, LegacyMetricsGroup());
    case E::kMetricsV1beta1:
      return http::JsonResponse(200, LegacyMetricsV1beta1Resources());
    case E::kOpenApiV3Index:
      return http::JsonResponse(200, OpenApiV3Index());
    case E::kOpenApiV3CoreV1:
      return http::JsonResponse(200, OpenApiV3CoreV1());
    case E::kOpenApiV3BatchV1:
      return http::JsonResponse(200, OpenApiV3BatchV1());
    case E::kDiscoveryNotAllowed:
      return http::MethodNotAllowed();
    default:
      return http::NotFoundPath();
  }
}

net::HttpResponse Face::ApiDiscovery(bool core, const net::HttpRequest& req) {
  std::string version = AggregatedDiscoveryVersion(req.Header("accept"));
  if (!version.empty()) {
    return http::JsonResponse(
        200, core ? AggregatedCoreDiscovery(version) : AggregatedGroupsDiscovery(version),
        AggregatedContentType(version));
  }
  std::string address =
      server_url_.substr(std::min(server_url_.size(), std::string_view("https://").size()));
  return http::JsonResponse(200, core ? LegacyApiVersions(address) : LegacyApiGroupList());
}

}  // namespace berth::k8s
