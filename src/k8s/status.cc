#include "k8s/status.h"

#include "api/errors.h"
#include "k8s/codec.h"

namespace berth::k8s {

std::string_view ReasonOf(int http_code) {
  switch (http_code) {
    case 400:
      return "BadRequest";
    case 403:
      return "Forbidden";
    case 404:
      return "NotFound";
    case 409:
      return "Conflict";
    case 422:
      return "Invalid";
    case 429:
      return "TooManyRequests";
    case 503:
      return "ServiceUnavailable";
    default:
      return "InternalError";
  }
}

nlohmann::json StatusOf(const Status& st) {
  const int code = api::HttpStatusOf(st.code());
  return StatusBody(code, ReasonOf(code), st.message(), nullptr);
}

}  // namespace berth::k8s
