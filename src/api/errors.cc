#include "api/errors.h"

#include <nlohmann/json.hpp>

namespace berth::api {

int HttpStatusOf(StatusCode code) {
  switch (code) {
    case StatusCode::kOk:
      return 200;
    case StatusCode::kInvalidArgument:
      return 400;
    case StatusCode::kNotFound:
      return 404;
    case StatusCode::kAlreadyExists:
      return 409;
    case StatusCode::kPermissionDenied:
      return 403;
    case StatusCode::kFailedPrecondition:
      return 409;
    case StatusCode::kResourceExhausted:
      return 429;
    case StatusCode::kUnavailable:
      return 503;
    case StatusCode::kInternal:
      return 500;
  }
  return 500;
}

nlohmann::json ErrorBody(const Status& status) {
  return {{"error",
           {{"code", std::string(StatusCodeName(status.code()))}, {"message", status.message()}}}};
}

Status StatusFromHttp(int http_status, std::string_view body) {
  if (http_status >= 200 && http_status < 300) return Status::Ok();
  std::string message = "HTTP " + std::to_string(http_status);
  // What the HTTP status says, unless the body names a code (401 has no code of its own: it
  // comes back as PERMISSION_DENIED, with the server's message).
  StatusCode code = StatusCode::kInternal;
  if (http_status == 404) code = StatusCode::kNotFound;
  if (http_status == 403 || http_status == 401) code = StatusCode::kPermissionDenied;
  if (http_status == 503) code = StatusCode::kUnavailable;
  if (http_status == 400) code = StatusCode::kInvalidArgument;
  try {
    nlohmann::json j = nlohmann::json::parse(body);
    const nlohmann::json& e = j.at("error");
    message = e.at("message").get<std::string>();
    std::string name = e.at("code").get<std::string>();
    for (int c = 0; c <= static_cast<int>(StatusCode::kInternal); ++c) {
      if (StatusCodeName(static_cast<StatusCode>(c)) == name) code = static_cast<StatusCode>(c);
    }
  } catch (const std::exception&) {
  }
  return Status(code, message);
}

}  // namespace berth::api
