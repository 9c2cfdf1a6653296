// core/v1 Secrets and ConfigMaps as berth keeps and serves them (docs/kubernetes.md): a manifest
// checked and normalised as the API server stores it, the stored object's contents as a Pod reads
// them, base64, and their Table columns. The face keeps them (face_config.cc); Pods read them in
// containers mode (k8s/pod_container.h). Pure functions of their arguments.
#ifndef BERTH_K8S_CONFIG_OBJECTS_H_
#define BERTH_K8S_CONFIG_OBJECTS_H_

#include <cstdint>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <string_view>

#include "k8s/fields.h"
#include "k8s/pods.h"

namespace berth::k8s {

// The store's meta keys of Secrets and ConfigMaps: the prefix + "namespace/name".
inline constexpr const char* kSecretMetaPrefix = "k8s_secret/";
inline constexpr const char* kConfigMapMetaPrefix = "k8s_configmap/";
// The most data one object may hold (the API server's limit).
inline constexpr size_t kMaxConfigBytes = 1024 * 1024;

struct ConfigKindInfo {
  const char* kind;         // "Secret"
  const char* plural;       // "secrets"
  const char* meta_prefix;  // kSecretMetaPrefix
};
const ConfigKindInfo& InfoOf(ConfigKind kind);

std::string Base64Encode(std::string_view in);
// Standard base64 with padding (whitespace is not allowed, as in Go's encoding); nullopt when it
// is not.
std::optional<std::string> Base64Decode(std::string_view in);

// Checks a Secret or ConfigMap manifest of namespace `ns` and makes the object berth stores:
// kind, apiVersion, metadata {name (generateName + `name_suffix` when only that is given),
// namespace, uid, creationTimestamp, labels, annotations}, and
//   Secret: `type` (default Opaque), `data` (base64 values checked) with `stringData` merged
//     into it (encoded; it wins over data), `immutable`; kubernetes.io/dockerconfigjson needs a
//     `.dockerconfigjson` key holding a JSON object, kubernetes.io/dockercfg `.dockercfg`,
//     kubernetes.io/tls `tls.crt` and `tls.key`, kubernetes.io/basic-auth and ssh-auth their key.
//   ConfigMap: `data` (strings), `binaryData` (base64), a key in only one of them, `immutable`.
// Keys are config keys ([-._a-zA-Z0-9]+, not "." or ".."); the data at most kMaxConfigBytes.
// `previous` (an update): the stored object, whose uid, creation time and type are kept (a new
// type is refused), and whose data may not change when it is immutable. nullopt when fine.
std::optional<FieldProblem> NormalizeConfigObject(ConfigKind kind, const nlohmann::json& body,
                                                  const std::string& ns,
                                                  const std::string& name_suffix, int64_t now,
                                                  const nlohmann::json* previous,
                                                  nlohmann::json* out);

// A stored object's contents, decoded (k8s/pods.h).
ConfigData DecodeConfigData(ConfigKind kind, const nlohmann::json& object);

nlohmann::json SecretTableColumns();  // NAME TYPE DATA AGE: never the values
nlohmann::json SecretTableCells(const nlohmann::json& secret, int64_t now);
nlohmann::json ConfigMapTableColumns();  // NAME DATA AGE
nlohmann::json ConfigMapTableCells(const nlohmann::json& config_map, int64_t now);
// metadata.name, metadata.namespace, and a Secret's type.
std::optional<std::string> ConfigField(const nlohmann::json& object, const std::string& field);

}  // namespace berth::k8s

#endif  // BERTH_K8S_CONFIG_OBJECTS_H_
