// The Kubernetes face's request machinery, written once for every resource handler
// (face_*.cc): how a resource appears in lists, Tables and watches, label and field selectors,
// `v1 Status` answers, and the list, object and watch answers.
//
// Thread safety: pure functions, but for WatchResponse's stream (which runs on the connection's
// thread and reads the port, whose reads any thread may make).
#ifndef BERTH_K8S_FACE_HTTP_H_
#define BERTH_K8S_FACE_HTTP_H_

#include <cstdint>
#include <functional>
#include <map>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <vector>

#include "common/status.h"
#include "k8s/codec.h"
#include "k8s/port.h"
#include "net/http.h"

namespace berth::k8s::http {

// A JSON answer of the Kubernetes face (a body and its Content-Type).
net::HttpResponse JsonResponse(int status, const nlohmann::json& body,
                               std::string content_type = "application/json");

// Objects of one answer, by a key that orders them ("name" or "namespace/name").
using Objects = std::map<std::string, nlohmann::json>;
using CellsFn = nlohmann::json (*)(const nlohmann::json&, int64_t);
// An object's value of a field selector's field; nullopt for a field the resource lacks.
using FieldFn = std::optional<std::string> (*)(const nlohmann::json&, const std::string&);

// How one resource appears in lists, tables and watches.
struct ResourceShape {
  std::string plural;       // "nodes"
  std::string list_kind;    // "NodeList"
  std::string api_version;  // "v1", "batch/v1"
  nlohmann::json columns;
  CellsFn cells;
  FieldFn field;
};

// metadata.name and metadata.namespace: the fields every resource has.
std::optional<std::string> MetadataField(const nlohmann::json& object, const std::string& field);

// The resources' shapes (each field selector's fields as k8s/ reads them).
const ResourceShape& NamespaceShape();
const ResourceShape& NodeShape();
const ResourceShape& PodShape();
const ResourceShape& EventShape();
const ResourceShape& JobShape();

struct Selectors {
  std::vector<Requirement> labels, fields;
};
// ?labelSelector= and ?fieldSelector=; INVALID_ARGUMENT for one it cannot read or a field the
// resource does not have.
Result<Selectors> ParseSelectors(const net::HttpRequest& req, const ResourceShape& shape);
bool Matches(const Selectors& s, const ResourceShape& shape, const nlohmann::json& object);

std::string Query(const net::HttpRequest& req, const char* key);
net::HttpResponse BadRequest(const std::string& message);
// The object of a create request for a workload (a Job, a CronJob): its JSON, or the protobuf
// body kubectl sends for one. InvalidArgument (for a 400) when it is neither a JSON object nor
// such a body, or when it names another namespace than `ns`, the path's.
Result<nlohmann::json> WorkloadCreateBody(const net::HttpRequest& req, const std::string& ns);
net::HttpResponse MethodNotAllowedHere();
// 404 NotFound for a path the server does not serve.
net::HttpResponse NotFoundPath();
// A patch that could not be applied: 415 for a patch type not supported, else 422.
net::HttpResponse PatchFailure(const Status& st);
// The value of a field selector's `key` = VALUE requirement; "" without one.
std::string SelectedField(const net::HttpRequest& req, const ResourceShape& shape,
                          std::string_view key);
// Keeps the objects the request's selectors match; a 400 answer for selectors it cannot read.
std::optional<net::HttpResponse> Select(const net::HttpRequest& req, const ResourceShape& shape,
                                        Objects* objects);
nlohmann::json TableOf(const ResourceShape& shape,
                       const std::vector<const nlohmann::json*>& objects, const std::string& rv,
                       int64_t now);
net::HttpResponse ListResponse(const net::HttpRequest& req, const ResourceShape& shape,
                               const Objects& objects, const std::string& rv, int64_t now);
net::HttpResponse ObjectResponse(const net::HttpRequest& req, const ResourceShape& shape,
                                 const nlohmann::json& object, int status, int64_t now);
// A watch's options (the API server's query parameters): timeoutSeconds (0: none; a negative one
// counts as none), allowWatchBookmarks and sendInitialEvents. INVALID_ARGUMENT for one that is
// not an integer or a boolean.
struct WatchOptions {
  int64_t timeout_s = 0;
  bool bookmarks = false;
  bool send_initial_events = false;
};
Result<WatchOptions> ParseWatchOptions(const net::HttpRequest& req);
// BOOKMARKs, as the API server's watch cache sends them: about every minute, and 2 s before the
// watch's deadline (its timeoutSeconds).
inline constexpr int64_t kBookmarkEveryMs = 60'000;
inline constexpr int64_t kBookmarkBeforeDeadlineMs = 2'000;
// When a watch that started at `start_ms`, with `deadline_ms` (0: none) and its last bookmark
// (or its start) at `after_ms`, sends its next one; INT64_MAX: none before its end.
int64_t NextBookmarkMs(int64_t start_ms, int64_t after_ms, int64_t deadline_ms);
// A BOOKMARK's object: only the kind, apiVersion and metadata.resourceVersion (and, ending a
// watch's initial events, the annotation k8s.io/initial-events-end).
nlohmann::json BookmarkObject(const ResourceShape& shape, const std::string& rv,
                              bool initial_events_end);
// A watch stream: ADDED for what exists (unless the client resumes from a resourceVersion), then
// ADDED / MODIFIED / DELETED (with the object's last state) as snapshots change, one JSON event
// per line, until the client goes, the controller stops or timeoutSeconds pass (the stream then
// ends cleanly); BOOKMARKs when allowWatchBookmarks asks for them. `snapshot` is called again
// whenever the port's watch sequence moves.
net::HttpResponse WatchResponse(const net::HttpRequest& req, const ResourceShape& shape,
                                ControllerPort& port,
                                std::function<Objects(std::string* rv)> snapshot);
bool IsWatch(const net::HttpRequest& req);
// A GET of a collection: the watch stream when ?watch= asks for it, else the list (selectors
// applied) with `snapshot`'s resourceVersion.
net::HttpResponse ListOrWatch(const net::HttpRequest& req, const ResourceShape& shape,
                              ControllerPort& port,
                              std::function<Objects(std::string* rv)> snapshot);
// The answer for a `v1 Status` body (its "code" is the HTTP status).
net::HttpResponse StatusResponse(const nlohmann::json& status);
// 503 ServiceUnavailable for a command the state thread refused because the controller is
// stopping (UNAVAILABLE), as /v1 answers it (k8s::StatusOf); nullopt for any other status.
std::optional<net::HttpResponse> UnavailableResponse(const Status& st);

// "namespace/name": how namespaced objects are keyed.
std::string ObjectKey(const std::string& ns, const std::string& name);
// Five characters as Kubernetes' generateName adds them (no vowels, no look-alikes).
std::string GenerateNameSuffix();
// The berth job of a Pod (its berth.io/job-id label).
uint32_t PodJobId(const nlohmann::json& pod);
// The name of a Pod's (only) container ("main" when it has none).
std::string ContainerName(const nlohmann::json& pod);
// Whether `who` may change, delete or read the output of what `owner_uid` owns: its owner or an
// operator.
bool Owns(const User& who, uint32_t owner_uid);

// The home folder of a user (a pod's working directory by default); "/" when unknown.
std::string HomeOf(uint32_t uid);
// A 405 MethodNotAllowed with empty details (the discovery paths').
net::HttpResponse MethodNotAllowed();

}  // namespace berth::k8s::http

#endif  // BERTH_K8S_FACE_HTTP_H_
