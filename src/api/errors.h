// How berth's Status codes appear on the wire: the HTTP status for each code, and the JSON error
// body ({"error": {"code": "NOT_FOUND", "message": "..."}}). One place, as style.md asks.
#ifndef BERTH_API_ERRORS_H_
#define BERTH_API_ERRORS_H_

#include <nlohmann/json_fwd.hpp>
#include <string_view>

#include "common/status.h"

namespace berth::api {

int HttpStatusOf(StatusCode code);
nlohmann::json ErrorBody(const Status& status);
// The inverse, for clients: a response's status and body back to a Status.
Status StatusFromHttp(int http_status, std::string_view body);

}  // namespace berth::api

#endif  // BERTH_API_ERRORS_H_
