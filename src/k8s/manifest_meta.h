// A check of manifest metadata that Pods and Jobs share (k8s/pods.cc, k8s/jobs.cc). Pure.
#ifndef BERTH_K8S_MANIFEST_META_H_
#define BERTH_K8S_MANIFEST_META_H_

#include <nlohmann/json.hpp>
#include <optional>
#include <string>

#include "k8s/fields.h"

namespace berth::k8s::fields {

// metadata.labels and metadata.annotations, where given, are maps of strings: nullopt when they
// are, else the first problem (metadata.labels: "must be a map"; metadata.labels[k]: "must be a
// string").
inline std::optional<FieldProblem> CheckMetadataMaps(const nlohmann::json& meta) {
  for (const char* key : {"labels", "annotations"}) {
    const nlohmann::json& m = At(meta, {key});
    if (m.is_null()) continue;
    if (!m.is_object()) return Invalid(std::string("metadata.") + key, Text(m), "must be a map");
    for (const auto& [k, v] : m.items()) {
      if (!v.is_string()) {
        return Invalid(std::string("metadata.") + key + "[" + k + "]", Text(v), "must be a string");
      }
    }
  }
  return std::nullopt;
}

}  // namespace berth::k8s::fields

#endif  // BERTH_K8S_MANIFEST_META_H_
