#include "k8s/openapi_v2.h"

#include <cstdint>
#include <nlohmann/json.hpp>

#include "k8s/objects.h"

namespace berth::k8s {
namespace {

// Field numbers of gnostic's openapiv2/OpenAPIv2.proto (package openapi.v2) that the document
// uses, named kMessageField. Every one is length-delimited (a string or a message), so one writer
// does them all.
constexpr uint32_t kDocumentSwagger = 1, kDocumentInfo = 2, kDocumentPaths = 8;
constexpr uint32_t kInfoTitle = 1, kInfoVersion = 2;
constexpr uint32_t kPathsPath = 2;                   // repeated NamedPathItem
constexpr uint32_t kNamedName = 1, kNamedValue = 2;  // NamedPathItem and NamedAny
constexpr uint32_t kPathItemPatch = 8;
constexpr uint32_t kOperationId = 5, kOperationParameters = 8, kOperationVendorExtension = 13;
// ParametersItem{1 parameter} -> Parameter{2 non_body_parameter} -> NonBodyParameter{3
// query_parameter_sub_schema}.
constexpr uint32_t kParametersItemParameter = 1, kParameterNonBody = 2, kNonBodyQuery = 3;
constexpr uint32_t kQueryIn = 2, kQueryName = 4, kQueryType = 6;  // QueryParameterSubSchema
constexpr uint32_t kAnyYaml = 2;

void PutVarint(uint64_t v, std::string* out) {
  while (v >= 0x80) {
    out->push_back(static_cast<char>((v & 0x7f) | 0x80));
    v >>= 7;
  }
  out->push_back(static_cast<char>(v));
}

// Appends field `number` (wire type 2) holding `bytes`.
void PutField(uint32_t number, std::string_view bytes, std::string* out) {
  PutVarint(uint64_t{number} << 3 | 2, out);
  PutVarint(bytes.size(), out);
  out->append(bytes);
}

// A message holding only `bytes` in field `number`.
std::string Wrap(uint32_t number, std::string_view bytes) {
  std::string out;
  PutField(number, bytes, &out);
  return out;
}

std::string QueryParameter(std::string_view name) {
  std::string schema;
  PutField(kQueryIn, "query", &schema);
  PutField(kQueryName, name, &schema);
  PutField(kQueryType, "string", &schema);
  return Wrap(kParametersItemParameter, Wrap(kParameterNonBody, Wrap(kNonBodyQuery, schema)));
}

// The extension's value as kube-apiserver writes it: YAML with sorted keys, the empty core group
// quoted (kubectl reads it into a map of strings).
std::string GroupVersionKindYaml(const OpenApiKind& k) {
  return "group: " + (k.group.empty() ? std::string("\"\"") : k.group) + "\nkind: " + k.kind +
         "\nversion: " + k.version + "\n";
}

std::string Capitalized(std::string s) {
  if (!s.empty() && s[0] >= 'a' && s[0] <= 'z') s[0] = static_cast<char>(s[0] - 'a' + 'A');
  return s;
}

// The group as kube-apiserver's operation ids spell it: "Core", "Batch", "RbacAuthorization" (for
// rbac.authorization.k8s.io), "ExampleCom".
std::string OperationGroup(std::string_view group) {
  if (group.empty()) return "Core";
  if (group.ends_with(".k8s.io")) group.remove_suffix(std::string_view(".k8s.io").size());
  std::string out;
  while (!group.empty()) {
    const size_t dot = group.find('.');
    out += Capitalized(std::string(group.substr(0, dot)));
    group.remove_prefix(dot == std::string_view::npos ? group.size() : dot + 1);
  }
  return out;
}

std::string PatchOperation(const OpenApiKind& k) {
  std::string op;
  PutField(kOperationId,
           "patch" + OperationGroup(k.group) + Capitalized(k.version) +
               (k.namespaced ? "Namespaced" : "") + k.kind,
           &op);
  for (const char* p : {"dryRun", "fieldManager", "fieldValidation", "force"}) {
    PutField(kOperationParameters, QueryParameter(p), &op);
  }
  std::string extension;
  PutField(kNamedName, "x-kubernetes-group-version-kind", &extension);
  PutField(kNamedValue, Wrap(kAnyYaml, GroupVersionKindYaml(k)), &extension);
  PutField(kOperationVendorExtension, extension, &op);
  return op;
}

}  // namespace

const std::vector<OpenApiKind>& OpenApiV2Kinds() {
  static const std::vector<OpenApiKind> kKinds = {{"", "v1", "Namespace", "namespaces", false},
                                                  {"", "v1", "Node", "nodes", false},
                                                  {"", "v1", "Pod", "pods", true},
                                                  {"", "v1", "Event", "events", true},
                                                  {"", "v1", "Secret", "secrets", true},
                                                  {"", "v1", "ConfigMap", "configmaps", true},
                                                  {"batch", "v1", "Job", "jobs", true},
                                                  {"batch", "v1", "CronJob", "cronjobs", true}};
  return kKinds;
}

std::string OpenApiItemPath(const OpenApiKind& k) {
  std::string path = k.group.empty() ? "/api/" + k.version : "/apis/" + k.group + "/" + k.version;
  if (k.namespaced) path += "/namespaces/{namespace}";
  return path + "/" + k.plural + "/{name}";
}

std::string OpenApiV2Protobuf(const std::vector<OpenApiKind>& kinds) {
  const nlohmann::json version = VersionInfo("");
  std::string info;
  PutField(kInfoTitle, "Kubernetes (berth)", &info);
  PutField(kInfoVersion,
           "v" + version["major"].get<std::string>() + "." + version["minor"].get<std::string>(),
           &info);
  std::string paths;
  for (const OpenApiKind& k : kinds) {
    std::string named_path;
    PutField(kNamedName, OpenApiItemPath(k), &named_path);
    PutField(kNamedValue, Wrap(kPathItemPatch, PatchOperation(k)), &named_path);
    PutField(kPathsPath, named_path, &paths);
  }
  std::string doc;
  PutField(kDocumentSwagger, "2.0", &doc);
  PutField(kDocumentInfo, info, &doc);
  PutField(kDocumentPaths, paths, &doc);
  return doc;
}

}  // namespace berth::k8s
