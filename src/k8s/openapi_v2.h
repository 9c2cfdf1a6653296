// GET /openapi/v2: the minimal OpenAPI v2 document, in protobuf (gnostic's openapi.v2.Document),
// that kubectl 1.20 to 1.28 fetch before `create -f` and `apply -f` with default validation
// (docs/kubernetes.md; kubernetes-api.md §4 has the capture). It holds, per kind, only the PATCH
// operation of the kind's item path with the x-kubernetes-group-version-kind extension and a
// fieldValidation query parameter: from that kubectl ≥1.27 learns that the server validates fields
// itself. There are no schemas, so kubectl 1.20's client-side validation finds nothing to check.
// Pure functions.
#ifndef BERTH_K8S_OPENAPI_V2_H_
#define BERTH_K8S_OPENAPI_V2_H_

#include <string>
#include <string_view>
#include <vector>

namespace berth::k8s {

// The Content-Type of the answer. kube-apiserver writes ".v1.0" where kubectl's Accept has
// "@v1.0"; echoing the "@" form makes kubectl fail ("mime: unexpected content after media
// subtype").
inline constexpr std::string_view kOpenApiV2ProtobufContentType =
    "application/com.github.proto-openapi.spec.v2.v1.0+protobuf";

// A kind as the document lists it.
struct OpenApiKind {
  std::string group;    // "" for the core group
  std::string version;  // "v1"
  std::string kind;     // "Pod"
  std::string plural;   // "pods": the path's resource
  bool namespaced = false;
};

// The kinds berth serves: core/v1 Namespace, Node, Pod and Event, and batch/v1 Job.
const std::vector<OpenApiKind>& OpenApiV2Kinds();

// The path of one object of the kind, as the document names it:
// "/api/v1/namespaces/{namespace}/pods/{name}",
// "/apis/batch/v1/namespaces/{namespace}/jobs/{name}",
// "/api/v1/nodes/{name}".
std::string OpenApiItemPath(const OpenApiKind& kind);

// The serialized openapi.v2.Document: swagger "2.0", info {title, version "v1.<minor>"}, and one
// path per kind, in the given order, whose PATCH operation carries an operationId
// ("patchCoreV1NamespacedPod"), the query parameters dryRun, fieldManager, fieldValidation and
// force, and the x-kubernetes-group-version-kind extension as YAML.
std::string OpenApiV2Protobuf(const std::vector<OpenApiKind>& kinds);

}  // namespace berth::k8s

#endif  // BERTH_K8S_OPENAPI_V2_H_
