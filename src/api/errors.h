// How berth's Status codes appear to each face, from one table (errors.cc): the HTTP status, the
// Kubernetes Status "reason", the CLI's exit code; and the /v1 JSON error body
// ({"error": {"code": "NOT_FOUND", "message": "..."}}). One place, as style.md asks.
// Pure functions; used by the controller's faces and the CLI client.
#ifndef BERTH_API_ERRORS_H_
#define BERTH_API_ERRORS_H_

#include <nlohmann/json_fwd.hpp>
#include <string_view>

#include "common/status.h"

namespace berth::api {

// kUnavailable is 503 on every face (the controller is stopping, or not ready).
int HttpStatusOf(StatusCode code);
// The Kubernetes Status "reason" for a code ("NotFound", "ServiceUnavailable", ...).
std::string_view K8sReasonOf(StatusCode code);
// The exit code of a CLI command that failed with `code` (0 for kOk; Slurm's commands exit 1 for
// every failure).
int ExitCodeOf(StatusCode code);
nlohmann::json ErrorBody(const Status& status);
// The inverse, for clients: a response's status and body back to a Status.
Status StatusFromHttp(int http_status, std::string_view body);

}  // namespace berth::api

#endif  // BERTH_API_ERRORS_H_
