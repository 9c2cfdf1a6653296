#include "api/errors.h"

#include <nlohmann/json.hpp>

namespace berth::api {

namespace {

struct CodeMapping {
  StatusCode code;
  int http;
  std::string_view k8s_reason;
  int exit_code;
};

constexpr CodeMapping kMappings[] = {
    {StatusCode::kOk, 200, "", 0},
    {StatusCode::kInvalidArgument, 400, "BadRequest", 1},
    {StatusCode::kNotFound, 404, "NotFound", 1},
    {StatusCode::kAlreadyExists, 409, "AlreadyExists", 1},
    {StatusCode::kPermissionDenied, 403, "Forbidden", 1},
    {StatusCode::kFailedPrecondition, 409, "Conflict", 1},
    {StatusCode::kResourceExhausted, 429, "TooManyRequests", 1},
    {StatusCode::kUnavailable, 503, "ServiceUnavailable", 1},
    {StatusCode::kInternal, 500, "InternalError", 1},
};

const CodeMapping& MappingOf(StatusCode code) {
  for (const CodeMapping& m : kMappings) {
    if (m.code == code) return m;
  }
  return kMappings[std::size(kMappings) - 1];  // an unknown code is an internal error
}

}  // namespace

int HttpStatusOf(StatusCode code) {
  return MappingOf(code).http;
}

std::string_view K8sReasonOf(StatusCode code) {
  return MappingOf(code).k8s_reason;
}

int ExitCodeOf(StatusCode code) {
  return MappingOf(code).exit_code;
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
