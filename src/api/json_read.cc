#include "api/json_read.h"

#include <cmath>
#include <nlohmann/json.hpp>
#include <optional>

#include "common/strings.h"

namespace berth::api {

using nlohmann::json;

Status KeyError(std::string_view key, std::string_view what) {
  return Status::InvalidArgument("\"" + std::string(key) + "\": " + std::string(what));
}

std::string ShowJson(const json& v, size_t max_shown) {
  return QuoteForMessage(v.dump(-1, ' ', false, json::error_handler_t::replace), max_shown);
}

Status GetInt(const json& v, std::string_view key, int64_t min, int64_t max, int64_t* out,
              size_t max_shown) {
  if (!v.is_number())
    return KeyError(key, "expected a whole number, got " + ShowJson(v, max_shown));
  std::optional<int64_t> n;  // empty when beyond kMaxJsonNumber
  if (v.is_number_unsigned()) {
    uint64_t u = v.get<uint64_t>();
    if (u <= static_cast<uint64_t>(kMaxJsonNumber)) n = static_cast<int64_t>(u);
  } else if (v.is_number_integer()) {
    int64_t i = v.get<int64_t>();
    if (i >= -kMaxJsonNumber && i <= kMaxJsonNumber) n = i;
  } else {
    double d = v.get<double>();
    if (!std::isfinite(d) || std::floor(d) != d) {
      return KeyError(key, "expected a whole number, got " + ShowJson(v, max_shown));
    }
    if (std::fabs(d) <= static_cast<double>(kMaxJsonNumber)) n = static_cast<int64_t>(d);
  }
  if (!n || *n < min || *n > max) {
    return KeyError(key, "must be from " + std::to_string(min) + " to " + std::to_string(max) +
                             ", got " + (n ? std::to_string(*n) : ShowJson(v, max_shown)));
  }
  *out = *n;
  return Status::Ok();
}

Status GetString(const json& v, std::string_view key, std::string* out) {
  if (!v.is_string()) return KeyError(key, "expected a string, got " + ShowJson(v));
  *out = v.get<std::string>();
  return Status::Ok();
}

Status GetBool(const json& v, std::string_view key, bool* out) {
  if (!v.is_boolean()) return KeyError(key, "expected true or false, got " + ShowJson(v));
  *out = v.get<bool>();
  return Status::Ok();
}

}  // namespace berth::api
