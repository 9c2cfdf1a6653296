// The OpenAPI v2 protobuf document, read back with a small reader of its own (so that a mistake
// in the encoder is not mirrored by the same mistake in a shared decoder), field by field as
// kubectl's query-parameter verifier walks it: paths -> PATCH -> x-kubernetes-group-version-kind
// extension and the fieldValidation query parameter.
#include "k8s/openapi_v2.h"

#include <gtest/gtest.h>

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <vector>

namespace berth::k8s {
namespace {

// A message's fields by number, in order; nullopt unless every field is a well-formed
// length-delimited one (the only wire type the document uses).
using Message = std::multimap<uint32_t, std::string>;

std::optional<Message> Parse(std::string_view data) {
  Message fields;
  size_t pos = 0;
  auto varint = [&]() -> std::optional<uint64_t> {
    uint64_t v = 0;
    for (int shift = 0; shift < 64 && pos < data.size(); shift += 7) {
      const auto b = static_cast<uint8_t>(data[pos++]);
      v |= uint64_t{b & 0x7fu} << shift;
      if ((b & 0x80) == 0) return v;
    }
    return std::nullopt;
  };
  while (pos < data.size()) {
    std::optional<uint64_t> key = varint();
    if (!key || (*key & 7) != 2) return std::nullopt;
    std::optional<uint64_t> len = varint();
    if (!len || *len > data.size() - pos) return std::nullopt;
    fields.emplace(static_cast<uint32_t>(*key >> 3), std::string(data.substr(pos, *len)));
    pos += *len;
  }
  return fields;
}

// The one value of field `number`; fails the test (returning "") when there is not exactly one.
std::string One(const Message& m, uint32_t number) {
  EXPECT_EQ(m.count(number), 1u) << "field " << number;
  auto it = m.find(number);
  return it == m.end() ? "" : it->second;
}

std::vector<std::string> All(const Message& m, uint32_t number) {
  std::vector<std::string> out;
  for (auto [it, end] = m.equal_range(number); it != end; ++it) out.push_back(it->second);
  return out;
}

Message MustParse(std::string_view data) {
  std::optional<Message> m = Parse(data);
  EXPECT_TRUE(m.has_value()) << "malformed protobuf";
  return m.value_or(Message{});
}

// What one path of the document says, decoded.
struct PatchPath {
  std::string path;
  std::string operation_id;
  std::vector<std::string> query_parameters;  // names, each checked to be in=query type=string
  std::string gvk_yaml;
};

// The field numbers are gnostic's (openapiv2/OpenAPIv2.proto), written out here on purpose:
// NamedPathItem{1 name, 2 PathItem{8 patch: Operation{5 operationId, 8 ParametersItem{1
// Parameter{2 NonBodyParameter{3 QueryParameterSubSchema{2 in, 4 name, 6 type}}}}, 13 NamedAny{1
// name, 2 Any{2 yaml}}}}}.
PatchPath ReadPath(std::string_view named_path_item) {
  Message named = MustParse(named_path_item);
  PatchPath out;
  out.path = One(named, 1);
  Message item = MustParse(One(named, 2));
  EXPECT_EQ(item.size(), 1u) << "only a PATCH operation";
  Message op = MustParse(One(item, 8));
  out.operation_id = One(op, 5);
  for (const std::string& p : All(op, 8)) {
    Message parameters_item = MustParse(p);
    Message parameter = MustParse(One(parameters_item, 1));
    Message non_body = MustParse(One(parameter, 2));
    Message query = MustParse(One(non_body, 3));
    EXPECT_EQ(One(query, 2), "query");
    EXPECT_EQ(One(query, 6), "string");
    out.query_parameters.push_back(One(query, 4));
  }
  Message extension = MustParse(One(op, 13));
  EXPECT_EQ(One(extension, 1), "x-kubernetes-group-version-kind");
  Message any = MustParse(One(extension, 2));
  out.gvk_yaml = One(any, 2);
  EXPECT_EQ(any.count(1), 0u) << "the value is YAML, not a google.protobuf.Any";
  return out;
}

std::vector<PatchPath> ReadPaths(const std::string& doc_bytes) {
  Message doc = MustParse(doc_bytes);
  std::vector<PatchPath> out;
  for (const std::string& p : All(MustParse(One(doc, 8)), 2)) out.push_back(ReadPath(p));
  return out;
}

TEST(K8sOpenApiV2Test, ContentTypeIsTheOneKubectlParses) {
  EXPECT_EQ(kOpenApiV2ProtobufContentType,
            "application/com.github.proto-openapi.spec.v2.v1.0+protobuf");
}

TEST(K8sOpenApiV2Test, DocumentHeader) {
  Message doc = MustParse(OpenApiV2Protobuf(OpenApiV2Kinds()));
  EXPECT_EQ(One(doc, 1), "2.0");
  Message info = MustParse(One(doc, 2));
  EXPECT_EQ(One(info, 1), "Kubernetes (berth)");
  EXPECT_EQ(One(info, 2), "v1.33");
  EXPECT_EQ(doc.size(), 3u) << "swagger, info and paths only: no schemas";
}

TEST(K8sOpenApiV2Test, EveryServedKindHasAPatchWithFieldValidation) {
  const struct {
    const char* path;
    const char* operation_id;
    const char* gvk_yaml;
  } want[] = {
      {"/api/v1/namespaces/{name}", "patchCoreV1Namespace",
       "group: \"\"\nkind: Namespace\nversion: v1\n"},
      {"/api/v1/nodes/{name}", "patchCoreV1Node", "group: \"\"\nkind: Node\nversion: v1\n"},
      {"/api/v1/namespaces/{namespace}/pods/{name}", "patchCoreV1NamespacedPod",
       "group: \"\"\nkind: Pod\nversion: v1\n"},
      {"/api/v1/namespaces/{namespace}/events/{name}", "patchCoreV1NamespacedEvent",
       "group: \"\"\nkind: Event\nversion: v1\n"},
      {"/api/v1/namespaces/{namespace}/secrets/{name}", "patchCoreV1NamespacedSecret",
       "group: \"\"\nkind: Secret\nversion: v1\n"},
      {"/api/v1/namespaces/{namespace}/configmaps/{name}", "patchCoreV1NamespacedConfigMap",
       "group: \"\"\nkind: ConfigMap\nversion: v1\n"},
      {"/apis/batch/v1/namespaces/{namespace}/jobs/{name}", "patchBatchV1NamespacedJob",
       "group: batch\nkind: Job\nversion: v1\n"},
      {"/apis/batch/v1/namespaces/{namespace}/cronjobs/{name}", "patchBatchV1NamespacedCronJob",
       "group: batch\nkind: CronJob\nversion: v1\n"},
  };
  std::vector<PatchPath> got = ReadPaths(OpenApiV2Protobuf(OpenApiV2Kinds()));
  ASSERT_EQ(got.size(), std::size(want));
  for (size_t i = 0; i < got.size(); ++i) {
    SCOPED_TRACE(want[i].path);
    EXPECT_EQ(got[i].path, want[i].path);
    EXPECT_EQ(got[i].operation_id, want[i].operation_id);
    EXPECT_EQ(got[i].gvk_yaml, want[i].gvk_yaml);
    EXPECT_EQ(got[i].query_parameters,
              (std::vector<std::string>{"dryRun", "fieldManager", "fieldValidation", "force"}));
  }
}

TEST(K8sOpenApiV2Test, ItemPaths) {
  EXPECT_EQ(OpenApiItemPath({"", "v1", "Node", "nodes", false}), "/api/v1/nodes/{name}");
  EXPECT_EQ(OpenApiItemPath({"batch", "v1", "Job", "jobs", true}),
            "/apis/batch/v1/namespaces/{namespace}/jobs/{name}");
}

TEST(K8sOpenApiV2Test, OperationIdsSpellTheGroupAsKubeApiserverDoes) {
  OpenApiKind k{"rbac.authorization.k8s.io", "v1", "Role", "roles", true};
  EXPECT_EQ(ReadPaths(OpenApiV2Protobuf({k})).at(0).operation_id,
            "patchRbacAuthorizationV1NamespacedRole");
}

TEST(K8sOpenApiV2Test, NoKindsGiveEmptyPaths) {
  Message doc = MustParse(OpenApiV2Protobuf({}));
  EXPECT_EQ(One(doc, 1), "2.0");
  EXPECT_TRUE(MustParse(One(doc, 8)).empty());
}

TEST(K8sOpenApiV2Test, LongFieldsUseMultiByteLengths) {
  // A path over 127 bytes needs a two-byte length varint: read back intact.
  OpenApiKind k{"example.com", "v1", "Widget", std::string(200, 'w'), true};
  std::vector<PatchPath> got = ReadPaths(OpenApiV2Protobuf({k}));
  ASSERT_EQ(got.size(), 1u);
  EXPECT_EQ(got[0].path, OpenApiItemPath(k));
  EXPECT_EQ(got[0].operation_id, "patchExampleComV1NamespacedWidget");
  EXPECT_EQ(got[0].gvk_yaml, "group: example.com\nkind: Widget\nversion: v1\n");
}

}  // namespace
}  // namespace berth::k8s
