#include "k8s/config_objects.h"

#include <algorithm>

#include "k8s/codec.h"
#include "k8s/manifest_meta.h"

namespace berth::k8s {
namespace {

using nlohmann::json;
using namespace fields;

constexpr char kAlphabet[] = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
constexpr const char* kRedacted = "<secret contents redacted>";

// "" when `key` is a valid config key, else what is wrong.
std::string KeyProblem(const std::string& key) {
  const bool chars = !key.empty() && std::all_of(key.begin(), key.end(), [](char c) {
    return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '-' ||
           c == '_' || c == '.';
  });
  if (!chars) {
    return "a valid config key must consist of alphanumeric characters, '-', '_' or '.' (e.g. "
           "'key.name',  or 'KEY_NAME',  or 'key-name', regex used for validation is "
           "'[-._a-zA-Z0-9]+')";
  }
  if (key == "." || key == "..") return "must not be '.' or '..'";
  if (key.size() > 253) return "must be no more than 253 characters";
  return "";
}

// A map of strings at `field` into `out` (each value as is, or base64-decoded); the first problem.
std::optional<FieldProblem> ReadMap(const json& m, const std::string& field, bool base64,
                                    bool secret, std::map<std::string, std::string>* out) {
  if (m.is_null()) return std::nullopt;
  if (!m.is_object()) return Invalid(field, Text(m), "must be a map of strings");
  for (const auto& [k, v] : m.items()) {
    const std::string f = field + "[" + k + "]";
    if (std::string p = KeyProblem(k); !p.empty()) return Invalid(f, k, p);
    if (!v.is_string()) return Invalid(f, secret ? kRedacted : Text(v), "must be a string");
    if (!base64) {
      (*out)[k] = v.get<std::string>();
      continue;
    }
    std::optional<std::string> bytes = Base64Decode(v.get<std::string>());
    if (!bytes) {
      return Invalid(f, secret ? kRedacted : Text(v), "must be base64 (standard, padded) text");
    }
    (*out)[k] = std::move(*bytes);
  }
  return std::nullopt;
}

json EncodeMap(const std::map<std::string, std::string>& m, bool base64) {
  json out = json::object();
  for (const auto& [k, v] : m) out[k] = base64 ? Base64Encode(v) : v;
  return out;
}

// What a Secret's type requires of its keys.
std::optional<FieldProblem> CheckSecretType(const std::string& type,
                                            const std::map<std::string, std::string>& data) {
  auto json_key = [&](const char* key) -> std::optional<FieldProblem> {
    auto it = data.find(key);
    if (it == data.end()) return Required(std::string("data[") + key + "]");
    json j = json::parse(it->second, nullptr, false);
    if (!j.is_object()) {
      return Invalid(std::string("data[") + key + "]", kRedacted,
                     "must be a JSON object (a Docker config.json)");
    }
    return std::nullopt;
  };
  if (type == "kubernetes.io/dockerconfigjson") return json_key(".dockerconfigjson");
  if (type == "kubernetes.io/dockercfg") return json_key(".dockercfg");
  if (type == "kubernetes.io/tls") {
    for (const char* key : {"tls.crt", "tls.key"}) {
      if (!data.count(key)) return Required(std::string("data[") + key + "]");
    }
  }
  if (type == "kubernetes.io/ssh-auth" && !data.count("ssh-privatekey")) {
    return Required("data[ssh-privatekey]");
  }
  if (type == "kubernetes.io/basic-auth" && !data.count("username") && !data.count("password")) {
    return Required("data[username]", "a basic-auth secret holds a username or a password");
  }
  return std::nullopt;
}

size_t DataBytes(const std::map<std::string, std::string>& a,
                 const std::map<std::string, std::string>& b = {}) {
  size_t n = 0;
  for (const auto* m : {&a, &b}) {
    for (const auto& [k, v] : *m) n += k.size() + v.size();
  }
  return n;
}

// The contents of a Secret or ConfigMap manifest into `out`.
std::optional<FieldProblem> ReadContents(ConfigKind kind, const json& body, const json* previous,
                                         json* out) {
  if (const json& im = At(body, {"immutable"}); !im.is_null()) {
    if (!im.is_boolean()) return Invalid("immutable", Text(im), "must be a boolean");
    (*out)["immutable"] = im;
  }
  std::map<std::string, std::string> data, binary;
  if (kind == ConfigKind::kSecret) {
    const json& t = At(body, {"type"});
    if (!t.is_null() && !t.is_string()) return Invalid("type", Text(t), "must be a string");
    std::string type = Str(body, {"type"});
    if (type.empty()) type = previous ? Str(*previous, {"type"}) : "Opaque";
    if (previous && type != Str(*previous, {"type"})) {
      return Invalid("type", type, "field is immutable");
    }
    if (auto p = ReadMap(At(body, {"data"}), "data", true, true, &data)) return p;
    std::map<std::string, std::string> strings;
    if (auto p = ReadMap(At(body, {"stringData"}), "stringData", false, true, &strings)) return p;
    for (auto& [k, v] : strings) data[k] = std::move(v);  // stringData wins
    if (auto p = CheckSecretType(type, data)) return p;
    (*out)["type"] = type;
    (*out)["data"] = EncodeMap(data, true);
  } else {
    if (auto p = ReadMap(At(body, {"data"}), "data", false, false, &data)) return p;
    if (auto p = ReadMap(At(body, {"binaryData"}), "binaryData", true, false, &binary)) return p;
    for (const auto& [k, v] : binary) {
      (void)v;
      if (data.count(k)) {
        return Invalid("data[" + k + "]", k, "duplicate of key present in binaryData");
      }
    }
    if (!data.empty() || At(body, {"data"}).is_object()) (*out)["data"] = EncodeMap(data, false);
    if (!binary.empty()) (*out)["binaryData"] = EncodeMap(binary, true);
  }
  if (DataBytes(data, binary) > kMaxConfigBytes) {
    return FieldProblem{"data", "Too long", "",
                        "must have at most " + std::to_string(kMaxConfigBytes) + " bytes"};
  }
  if (previous && At(*previous, {"immutable"}) == true) {
    if (At(*out, {"immutable"}) != true) {
      return FieldProblem{"immutable", "Forbidden", "",
                          "field is immutable when `immutable` is set"};
    }
    for (const char* key : {"data", "binaryData"}) {
      if (At(*out, {key}) != At(*previous, {key})) {
        return FieldProblem{key, "Forbidden", "", "field is immutable when `immutable` is set"};
      }
    }
  }
  return std::nullopt;
}

}  // namespace

const ConfigKindInfo& InfoOf(ConfigKind kind) {
  static const ConfigKindInfo kSecret{"Secret", "secrets", kSecretMetaPrefix};
  static const ConfigKindInfo kConfigMap{"ConfigMap", "configmaps", kConfigMapMetaPrefix};
  return kind == ConfigKind::kSecret ? kSecret : kConfigMap;
}

std::string Base64Encode(std::string_view in) {
  std::string out;
  out.reserve((in.size() + 2) / 3 * 4);
  for (size_t i = 0; i < in.size(); i += 3) {
    uint32_t n = static_cast<uint8_t>(in[i]) << 16;
    if (i + 1 < in.size()) n |= static_cast<uint8_t>(in[i + 1]) << 8;
    if (i + 2 < in.size()) n |= static_cast<uint8_t>(in[i + 2]);
    out += kAlphabet[(n >> 18) & 63];
    out += kAlphabet[(n >> 12) & 63];
    out += i + 1 < in.size() ? kAlphabet[(n >> 6) & 63] : '=';
    out += i + 2 < in.size() ? kAlphabet[n & 63] : '=';
  }
  return out;
}

std::optional<std::string> Base64Decode(std::string_view in) {
  if (in.size() % 4 != 0) return std::nullopt;
  auto value = [](char c) -> int {
    if (c >= 'A' && c <= 'Z') return c - 'A';
    if (c >= 'a' && c <= 'z') return c - 'a' + 26;
    if (c >= '0' && c <= '9') return c - '0' + 52;
    if (c == '+') return 62;
    if (c == '/') return 63;
    return -1;
  };
  std::string out;
  out.reserve(in.size() / 4 * 3);
  for (size_t i = 0; i < in.size(); i += 4) {
    const bool last = i + 4 == in.size();
    int v[4];
    int pad = 0;
    for (int k = 0; k < 4; ++k) {
      const char c = in[i + k];
      if (c == '=' && last && k >= 2) {
        v[k] = 0;
        ++pad;
        continue;
      }
      if (pad > 0) return std::nullopt;  // data after padding
      v[k] = value(c);
      if (v[k] < 0) return std::nullopt;
    }
    const uint32_t n = (v[0] << 18) | (v[1] << 12) | (v[2] << 6) | v[3];
    out += static_cast<char>((n >> 16) & 0xff);
    if (pad < 2) out += static_cast<char>((n >> 8) & 0xff);
    if (pad < 1) out += static_cast<char>(n & 0xff);
  }
  return out;
}

std::optional<FieldProblem> NormalizeConfigObject(ConfigKind kind, const json& body,
                                                  const std::string& ns,
                                                  const std::string& name_suffix, int64_t now,
                                                  const json* previous, json* out) {
  const ConfigKindInfo& info = InfoOf(kind);
  if (!body.is_object()) {
    return Invalid("", Text(body), std::string("the body must be a ") + info.kind + " object");
  }
  if (body.contains("kind") && body["kind"] != info.kind) {
    return Invalid("kind", Text(body["kind"]), std::string("the body must be a ") + info.kind);
  }
  if (body.contains("apiVersion") && body["apiVersion"] != "v1") {
    return Invalid("apiVersion", Text(body["apiVersion"]), std::string(info.kind) + "s are in v1");
  }
  const json& meta = At(body, {"metadata"});
  std::string name = Str(meta, {"name"});
  if (name.empty() && !Str(meta, {"generateName"}).empty()) {
    name = Str(meta, {"generateName"}) + name_suffix;
  }
  if (name.empty()) return Required("metadata.name", "name or generateName is required");
  if (std::string p = SubdomainNameProblem(name); !p.empty()) {
    return Invalid("metadata.name", name, p);
  }
  if (auto p = CheckMetadataMaps(meta)) return p;
  json m = {{"name", name},
            {"namespace", ns},
            {"uid", previous ? Str(*previous, {"metadata", "uid"})
                             : StableUid(info.kind, ns + "/" + name + "/" + std::to_string(now) +
                                                        "/" + name_suffix)},
            {"creationTimestamp",
             previous ? Str(*previous, {"metadata", "creationTimestamp"}) : Rfc3339(now)}};
  for (const char* key : {"labels", "annotations"}) {
    if (At(meta, {key}).is_object() && !At(meta, {key}).empty()) m[key] = At(meta, {key});
  }
  if (!Str(meta, {"generateName"}).empty()) m["generateName"] = Str(meta, {"generateName"});
  *out = {{"kind", info.kind}, {"apiVersion", "v1"}, {"metadata", std::move(m)}};
  return ReadContents(kind, body, previous, out);
}

ConfigData DecodeConfigData(ConfigKind kind, const json& object) {
  ConfigData d;
  if (kind == ConfigKind::kSecret) d.type = Str(object, {"type"});
  const json data = At(object, {"data"}).is_object() ? At(object, {"data"}) : json::object();
  for (const auto& [k, v] : data.items()) {
    if (!v.is_string()) continue;
    if (kind == ConfigKind::kSecret) {
      d.data[k] = Base64Decode(v.get<std::string>()).value_or("");
    } else {
      d.data[k] = v.get<std::string>();
    }
  }
  const json binary =
      At(object, {"binaryData"}).is_object() ? At(object, {"binaryData"}) : json::object();
  for (const auto& [k, v] : binary.items()) {
    if (v.is_string()) d.data[k] = Base64Decode(v.get<std::string>()).value_or("");
  }
  return d;
}

namespace {
size_t KeyCount(const json& object) {
  size_t n = 0;
  for (const char* key : {"data", "binaryData"}) {
    if (At(object, {key}).is_object()) n += At(object, {key}).size();
  }
  return n;
}
}  // namespace

json SecretTableColumns() {
  return json::array({TableColumn("Name", "string", "name", "the secret's name", 0),
                      TableColumn("Type", "string", "", "the secret's type", 0),
                      TableColumn("Data", "string", "", "how many keys it holds", 0),
                      TableColumn("Age", "string", "", "since it was created", 0)});
}

json SecretTableCells(const json& secret, int64_t now) {
  return json::array({Str(secret, {"metadata", "name"}), Str(secret, {"type"}),
                      std::to_string(KeyCount(secret)), AgeCell(secret, now)});
}

json ConfigMapTableColumns() {
  return json::array({TableColumn("Name", "string", "name", "the config map's name", 0),
                      TableColumn("Data", "string", "", "how many keys it holds", 0),
                      TableColumn("Age", "string", "", "since it was created", 0)});
}

json ConfigMapTableCells(const json& config_map, int64_t now) {
  return json::array({Str(config_map, {"metadata", "name"}), std::to_string(KeyCount(config_map)),
                      AgeCell(config_map, now)});
}

std::optional<std::string> ConfigField(const json& object, const std::string& field) {
  if (field == "metadata.name") return Str(object, {"metadata", "name"});
  if (field == "metadata.namespace") return Str(object, {"metadata", "namespace"});
  if (field == "type" && Str(object, {"kind"}) != "ConfigMap") return Str(object, {"type"});
  return std::nullopt;
}

}  // namespace berth::k8s
