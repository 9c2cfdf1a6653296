// Reading and refusing manifest fields (k8s/pods.cc, k8s/jobs.cc): safe look-ups in a
// JSON document and the problems a 422 Invalid Status names. Pure functions.
#ifndef BERTH_K8S_FIELDS_H_
#define BERTH_K8S_FIELDS_H_

#include <algorithm>
#include <cstdint>
#include <initializer_list>
#include <nlohmann/json.hpp>
#include <string>
#include <utility>

#include "k8s/codec.h"

namespace berth::k8s {

// What is wrong with a manifest, as a 422 Invalid Status names it:
// `Pod "x" is invalid: spec.containers[0].image: Required value`.
struct FieldProblem {
  std::string field;   // "spec.containers[0].image"
  std::string type;    // "Required value", "Invalid value", "Unsupported value", "Forbidden"
  std::string value;   // the offending value as text ("" when none)
  std::string detail;  // "" or the explanation
};

namespace fields {

// The value at `path` (object keys), or null where the path does not lead.
inline const nlohmann::json& At(const nlohmann::json& j, std::initializer_list<const char*> path) {
  static const nlohmann::json kNull;
  const nlohmann::json* cur = &j;
  for (const char* key : path) {
    if (!cur->is_object()) return kNull;
    auto it = cur->find(key);
    if (it == cur->end()) return kNull;
    cur = &*it;
  }
  return *cur;
}

// The string at `path`, or "" for anything else.
inline std::string Str(const nlohmann::json& j, std::initializer_list<const char*> path) {
  const nlohmann::json& v = At(j, path);
  return v.is_string() ? v.get<std::string>() : "";
}

// A value as a problem shows it: strings bare, null empty, the rest as JSON.
inline std::string Text(const nlohmann::json& v) {
  if (v.is_string()) return v.get<std::string>();
  if (v.is_null()) return "";
  return v.dump();
}

// The AGE cell of an object: since its metadata.creationTimestamp ("0s" when it has none).
inline std::string AgeCell(const nlohmann::json& object, int64_t now) {
  const nlohmann::json& t = At(object, {"metadata", "creationTimestamp"});
  const int64_t created = t.is_string() ? ParseRfc3339(t.get<std::string>()).value_or(now) : now;
  return HumanDuration(std::max<int64_t>(0, now - created));
}

inline FieldProblem Required(std::string field, std::string detail = "") {
  return {std::move(field), "Required value", "", std::move(detail)};
}
inline FieldProblem Invalid(std::string field, std::string value, std::string detail) {
  return {std::move(field), "Invalid value", std::move(value), std::move(detail)};
}
inline FieldProblem Unsupported(std::string field, std::string value, std::string detail) {
  return {std::move(field), "Unsupported value", std::move(value), std::move(detail)};
}

}  // namespace fields
}  // namespace berth::k8s

#endif  // BERTH_K8S_FIELDS_H_
