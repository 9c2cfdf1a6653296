// The route table of the Kubernetes face (docs/kubernetes.md): each route is a method, a path
// pattern and the endpoint that answers, matched as the /v1 table matches its paths
// (common/path_pattern.h: literal segments, "{param}" for one segment, "{...}" last for the
// rest). The face binds each Endpoint to its handler (Face::Dispatch, face.cc). Every caller here
// is a user (a bearer token says who; Face::Serve answers 401 before the table), so the table
// holds no access rules: who may change an object is the object's business (its creator or an
// operator).
//
// A path no route matches is answered 404 NotFound. A resource's path with a method it does not
// serve is answered 405 MethodNotAllowed (kNotAllowed); the discovery paths answer theirs with
// empty details (kDiscoveryNotAllowed), as before the table.
//
// Thread safety: the table is immutable; MatchRoute is a pure function.
#ifndef BERTH_K8S_ROUTES_H_
#define BERTH_K8S_ROUTES_H_

#include <cstdint>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "common/path_pattern.h"
#include "k8s/port.h"
#include "net/http.h"

namespace berth::k8s {

enum class Endpoint : uint8_t {
  kNotFound,             // 404 NotFound
  kNotAllowed,           // 405 MethodNotAllowed of a resource
  kDiscoveryNotAllowed,  // 405 MethodNotAllowed of a discovery path
  // Health and discovery.
  kHealth,            // /healthz, /livez, /readyz: "ok"
  kCrds,              // no CustomResourceDefinitions
  kOpenApiV2,         // /openapi/v2 (protobuf)
  kVersion,           // /version
  kApiVersions,       // /api
  kApiGroups,         // /apis
  kCoreV1,            // /api/v1
  kBatchV1,           // /apis/batch/v1
  kOpenApiV3Index,    // /openapi/v3
  kOpenApiV3CoreV1,   // /openapi/v3/api/v1
  kOpenApiV3BatchV1,  // /openapi/v3/apis/batch/v1
  // core/v1 Namespaces.
  kNamespaceList,  // and watch
  kNamespaceCreate,
  kNamespaceGet,
  kNamespaceUpdate,  // PATCH, PUT
  kNamespaceDelete,
  // core/v1 Nodes.
  kNodeList,  // and watch
  kNodeGet,
  kNodePatch,
  kNodeOther,  // another method on a node: 404 for an unknown node, else 405
  // core/v1 Pods ({namespace} absent: all namespaces).
  kPodList,  // and watch
  kPodCreate,
  kPodGet,  // and its status subresource
  kPodDelete,
  kPodUpdate,  // PATCH (a server-side apply may create), PUT
  kPodOther,   // another method on a pod: 404 for an unknown pod, else 405
  kPodLog,
  kPodExec,         // pods/exec (WebSocket)
  kPodAttach,       // pods/attach
  kPodPortForward,  // pods/portforward
  // core/v1 Events.
  kEventList,  // and watch
  kEventGet,
  // core/v1 Secrets and ConfigMaps (the handler reads the kind from the path).
  kConfigList,  // and watch
  kConfigCreate,
  kConfigGet,
  kConfigUpdate,  // PATCH, PUT
  kConfigDelete,
  // batch/v1 Jobs.
  kJobList,  // and watch
  kJobCreate,
  kJobGet,  // and its status subresource
  kJobDelete,
  kJobUpdate,        // PATCH (a server-side apply may create), PUT
  kJobStatusUpdate,  // PATCH, PUT of the status subresource (as of the Job; never creates)
  kJobOther,         // another method on a Job: 404, 403 or 405
  // batch/v1 CronJobs.
  kCronJobList,  // and watch
  kCronJobCreate,
  kCronJobGet,  // and its status subresource
  kCronJobDelete,
  kCronJobUpdate,  // PATCH (a server-side apply may create), PUT
  kCronJobOther,   // another method on a CronJob: 404, 403 or 405
  // metrics.k8s.io/v1beta1 (get and list only; {namespace} absent: all namespaces).
  kMetricsGroup,    // /apis/metrics.k8s.io
  kMetricsV1beta1,  // /apis/metrics.k8s.io/v1beta1
  kNodeMetricsList,
  kNodeMetricsGet,
  kPodMetricsList,
  kPodMetricsGet,
};

struct Route {
  std::string_view method;  // "GET", "POST", ...; "*": any
  std::string_view pattern;
  Endpoint endpoint;
};

// The Kubernetes face's routes, in match order (the first whose method and pattern match).
std::span<const Route> Routes();

// A path's segments and the parameters of the route it matched ("namespace", "name").
struct PathMatch {
  std::vector<std::string> parts;
  PathParams params;

  // A parameter's segment; "" when the route has no such parameter.
  const std::string& Param(std::string_view name) const { return PathParam(params, name); }
};

struct RouteMatch {
  Endpoint endpoint = Endpoint::kNotFound;
  PathMatch match;
};

// The endpoint of a request's method and path (kNotFound when no route matches).
RouteMatch MatchRoute(std::string_view method, std::string_view path);

// A Kubernetes request as its handler sees it: the request, who asks (a user) and the route's
// parameters ("" for one the route does not have, e.g. the namespace of an all-namespaces list).
struct Call {
  const net::HttpRequest& req;
  const User& who;
  const PathMatch& match;

  const std::string& Namespace() const { return match.Param("namespace"); }
  const std::string& Name() const { return match.Param("name"); }
};

}  // namespace berth::k8s

#endif  // BERTH_K8S_ROUTES_H_
