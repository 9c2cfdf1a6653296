// berth's Status as the Kubernetes face answers it: one mapping to a `v1 Status` body, whose
// HTTP code is api::HttpStatusOf's (the status /v1 answers for the same error) and whose reason
// is the one Kubernetes gives that code. Pure functions; used by the face's handlers
// (face_*.cc).
#ifndef BERTH_K8S_STATUS_H_
#define BERTH_K8S_STATUS_H_

#include <nlohmann/json.hpp>
#include <string_view>

#include "common/status.h"

namespace berth::k8s {

// Kubernetes' reason for an HTTP error code: 400 BadRequest, 403 Forbidden, 404 NotFound,
// 409 Conflict, 422 Invalid, 429 TooManyRequests, 503 ServiceUnavailable; InternalError for
// any other.
std::string_view ReasonOf(int http_code);

// The `v1 Status` body of a failed `st` (its message as the message, no details); e.g. a
// command refused because the controller is stopping (UNAVAILABLE) is 503 ServiceUnavailable.
// REQUIRES: !st.ok().
nlohmann::json StatusOf(const Status& st);

}  // namespace berth::k8s

#endif  // BERTH_K8S_STATUS_H_
