// Secrets and ConfigMaps as berth checks and stores them (k8s/config_objects.h), base64, their
// Table rows, and the protobuf bodies `kubectl create secret` / `create configmap` send.
#include "k8s/config_objects.h"

#include <gtest/gtest.h>

#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "k8s/protobuf.h"

namespace berth::k8s {
namespace {

using nlohmann::json;

constexpr int64_t kNow = 1796270518;

TEST(K8sBase64Test, RoundTripsAndRefusesWhatIsNotBase64) {
  for (const std::string& s :
       std::vector<std::string>{"", "a", "ab", "abc", "abcd", std::string("\0\xff\x10", 3)}) {
    EXPECT_EQ(Base64Decode(Base64Encode(s)), s);
  }
  EXPECT_EQ(Base64Encode("alice:pw"), "YWxpY2U6cHc=");
  for (const char* bad : {"abc", "YW=j", "Y===", "a b=", "YWxp\n", "====", "YW*j"}) {
    EXPECT_EQ(Base64Decode(bad), std::nullopt) << bad;
  }
}

std::optional<FieldProblem> Norm(ConfigKind kind, const json& body, json* out,
                                 const json* previous = nullptr) {
  return NormalizeConfigObject(kind, body, "ml", "x7k2q", kNow, previous, out);
}

TEST(K8sSecretTest, StringDataMergesAndTypeDefaults) {
  json out;
  ASSERT_FALSE(Norm(ConfigKind::kSecret,
                    {{"metadata", {{"name", "s"}, {"labels", {{"a", "b"}}}}},
                     {"data", {{"user", "YWxpY2U="}, {"pw", "b2xk"}}},
                     {"stringData", {{"pw", "new"}}}},
                    &out));
  EXPECT_EQ(out["type"], "Opaque");
  EXPECT_EQ(out["kind"], "Secret");
  EXPECT_EQ(out["apiVersion"], "v1");
  EXPECT_EQ(out["data"], json({{"user", "YWxpY2U="}, {"pw", "bmV3"}}));
  EXPECT_FALSE(out.contains("stringData"));
  EXPECT_EQ(out["metadata"]["namespace"], "ml");
  EXPECT_EQ(out["metadata"]["labels"], json({{"a", "b"}}));
  EXPECT_FALSE(out["metadata"]["uid"].get<std::string>().empty());
  ConfigData d = DecodeConfigData(ConfigKind::kSecret, out);
  EXPECT_EQ(d.type, "Opaque");
  EXPECT_EQ(d.data, (std::map<std::string, std::string>{{"pw", "new"}, {"user", "alice"}}));
  // generateName.
  ASSERT_FALSE(Norm(ConfigKind::kSecret, {{"metadata", {{"generateName", "tok-"}}}}, &out));
  EXPECT_EQ(out["metadata"]["name"], "tok-x7k2q");
}

TEST(K8sSecretTest, Refusals) {
  json out;
  auto field = [&](const json& body) {
    std::optional<FieldProblem> p = Norm(ConfigKind::kSecret, body, &out);
    return p ? p->field : std::string("(accepted)");
  };
  EXPECT_EQ(field({{"metadata", json::object()}}), "metadata.name");
  EXPECT_EQ(field({{"metadata", {{"name", "Bad_Name"}}}}), "metadata.name");
  EXPECT_EQ(field({{"metadata", {{"name", "s"}}}, {"data", {{"k", "not base64!"}}}}), "data[k]");
  EXPECT_EQ(field({{"metadata", {{"name", "s"}}}, {"data", {{"bad/key", "YQ=="}}}}),
            "data[bad/key]");
  EXPECT_EQ(field({{"metadata", {{"name", "s"}}}, {"stringData", {{"k", 1}}}}), "stringData[k]");
  EXPECT_EQ(field({{"metadata", {{"name", "s"}}}, {"type", "kubernetes.io/dockerconfigjson"}}),
            "data[.dockerconfigjson]");
  EXPECT_EQ(field({{"metadata", {{"name", "s"}}},
                   {"type", "kubernetes.io/dockerconfigjson"},
                   {"stringData", {{".dockerconfigjson", "not json"}}}}),
            "data[.dockerconfigjson]");
  EXPECT_EQ(field({{"metadata", {{"name", "s"}}},
                   {"type", "kubernetes.io/dockerconfigjson"},
                   {"stringData", {{".dockerconfigjson", R"({"auths":{}})"}}}}),
            "(accepted)");
  EXPECT_EQ(field({{"metadata", {{"name", "s"}}}, {"type", "kubernetes.io/tls"}}), "data[tls.crt]");
  EXPECT_EQ(field({{"kind", "ConfigMap"}, {"metadata", {{"name", "s"}}}}), "kind");
  EXPECT_EQ(field({{"metadata", {{"name", "s"}}},
                   {"stringData", {{"big", std::string(kMaxConfigBytes, 'x')}}}}),
            "data");
  // The value of a bad Secret is never echoed.
  std::optional<FieldProblem> p = Norm(
      ConfigKind::kSecret, {{"metadata", {{"name", "s"}}}, {"data", {{"k", "hunter2!"}}}}, &out);
  ASSERT_TRUE(p);
  EXPECT_EQ(p->value, "<secret contents redacted>");
}

TEST(K8sSecretTest, UpdatesKeepIdentityTypeAndImmutability) {
  json first;
  ASSERT_FALSE(Norm(ConfigKind::kSecret,
                    {{"metadata", {{"name", "s"}}}, {"stringData", {{"k", "v"}}}}, &first));
  json next;
  ASSERT_FALSE(Norm(ConfigKind::kSecret,
                    {{"metadata", {{"name", "s"}}}, {"stringData", {{"k", "w"}}}}, &next, &first));
  EXPECT_EQ(next["metadata"]["uid"], first["metadata"]["uid"]);
  EXPECT_EQ(next["type"], "Opaque");
  std::optional<FieldProblem> p =
      Norm(ConfigKind::kSecret, {{"metadata", {{"name", "s"}}}, {"type", "other"}}, &next, &first);
  ASSERT_TRUE(p);
  EXPECT_EQ(p->field, "type");
  EXPECT_EQ(p->detail, "field is immutable");
  json frozen;
  ASSERT_FALSE(Norm(ConfigKind::kSecret,
                    {{"metadata", {{"name", "s"}}}, {"immutable", true}, {"data", {{"k", "dg=="}}}},
                    &frozen));
  p = Norm(ConfigKind::kSecret,
           {{"metadata", {{"name", "s"}}}, {"immutable", true}, {"data", {{"k", "dw=="}}}}, &next,
           &frozen);
  ASSERT_TRUE(p);
  EXPECT_EQ(p->field, "data");
  EXPECT_FALSE(Norm(ConfigKind::kSecret,
                    {{"metadata", {{"name", "s"}, {"labels", {{"x", "y"}}}}},
                     {"immutable", true},
                     {"data", {{"k", "dg=="}}}},
                    &next, &frozen));
}

TEST(K8sConfigMapTest, DataAndBinaryData) {
  json out;
  ASSERT_FALSE(Norm(ConfigKind::kConfigMap,
                    {{"metadata", {{"name", "c"}}},
                     {"data", {{"mode", "fast"}}},
                     {"binaryData", {{"blob", "AAE="}}}},
                    &out));
  EXPECT_FALSE(out.contains("type"));
  ConfigData d = DecodeConfigData(ConfigKind::kConfigMap, out);
  EXPECT_EQ(d.data, (std::map<std::string, std::string>{{"blob", std::string("\0\1", 2)},
                                                        {"mode", "fast"}}));
  std::optional<FieldProblem> p =
      Norm(ConfigKind::kConfigMap,
           {{"metadata", {{"name", "c"}}}, {"data", {{"k", "v"}}}, {"binaryData", {{"k", "AAE="}}}},
           &out);
  ASSERT_TRUE(p);
  EXPECT_EQ(p->field, "data[k]");
  EXPECT_TRUE(
      Norm(ConfigKind::kConfigMap, {{"metadata", {{"name", "c"}}}, {"data", {{"k", 1}}}}, &out));
}

TEST(K8sConfigTableTest, RowsNeverShowValues) {
  json secret;
  ASSERT_FALSE(Norm(ConfigKind::kSecret,
                    {{"metadata", {{"name", "s"}}}, {"stringData", {{"a", "hunter2"}, {"b", "x"}}}},
                    &secret));
  json cells = SecretTableCells(secret, kNow + 120);
  EXPECT_EQ(cells, json({"s", "Opaque", "2", "2m"}));
  EXPECT_EQ(cells.dump().find("hunter2"), std::string::npos);
  EXPECT_EQ(SecretTableColumns().size(), 4u);
  json cm;
  ASSERT_FALSE(
      Norm(ConfigKind::kConfigMap, {{"metadata", {{"name", "c"}}}, {"data", {{"a", "b"}}}}, &cm));
  EXPECT_EQ(ConfigMapTableCells(cm, kNow), json({"c", "1", "0s"}));
  EXPECT_EQ(ConfigField(secret, "type"), "Opaque");
  EXPECT_EQ(ConfigField(secret, "metadata.name"), "s");
  EXPECT_EQ(ConfigField(cm, "type"), std::nullopt);
}

// Protobuf writing, enough for the tests: a length-delimited field.
std::string Field(int number, const std::string& bytes) {
  std::string out;
  auto varint = [&](uint64_t v) {
    while (v >= 0x80) {
      out += static_cast<char>((v & 0x7f) | 0x80);
      v >>= 7;
    }
    out += static_cast<char>(v);
  };
  varint(static_cast<uint64_t>(number) << 3 | 2);
  varint(bytes.size());
  return out + bytes;
}

std::string Envelope(const std::string& kind, const std::string& raw) {
  return std::string("k8s\0", 4) + Field(1, Field(1, "v1") + Field(2, kind)) + Field(2, raw) +
         Field(4, "application/vnd.kubernetes.protobuf");
}

TEST(K8sConfigProtobufTest, ReadsKubectlsSecretAndConfigMap) {
  const std::string meta = Field(1, Field(1, "regcred") + Field(3, "ml"));
  const std::string secret = meta + Field(2, Field(1, "pw") + Field(2, std::string("\0bin", 4))) +
                             Field(3, "kubernetes.io/dockerconfigjson") +
                             Field(4, Field(1, "s") + Field(2, "text"));
  Result<json> s = DecodeProtobufConfigObject(Envelope("Secret", secret));
  ASSERT_TRUE(s.ok()) << s.status().message();
  EXPECT_EQ((*s)["kind"], "Secret");
  EXPECT_EQ((*s)["metadata"]["name"], "regcred");
  EXPECT_EQ((*s)["metadata"]["namespace"], "ml");
  EXPECT_EQ((*s)["type"], "kubernetes.io/dockerconfigjson");
  EXPECT_EQ((*s)["data"]["pw"], Base64Encode(std::string("\0bin", 4)));
  EXPECT_EQ((*s)["stringData"]["s"], "text");
  const std::string cm = meta + Field(2, Field(1, "mode") + Field(2, "fast")) +
                         Field(3, Field(1, "blob") + Field(2, "\x01"));
  Result<json> c = DecodeProtobufConfigObject(Envelope("ConfigMap", cm));
  ASSERT_TRUE(c.ok()) << c.status().message();
  EXPECT_EQ((*c)["data"], json({{"mode", "fast"}}));
  EXPECT_EQ((*c)["binaryData"], json({{"blob", "AQ=="}}));
  EXPECT_FALSE(DecodeProtobufConfigObject(Envelope("Pod", meta)).ok());
  EXPECT_FALSE(DecodeProtobufConfigObject("k8s").ok());
  EXPECT_FALSE(DecodeProtobufConfigObject(Envelope("Secret", meta + "\x12\x50")).ok());
}

TEST(K8sConfigProtobufTest, KubectlsOwnBytesWithEmptyStrings) {
  // `kubectl create configmap x --from-literal=a=b` (1.33): gogo-protobuf writes the empty
  // generateName, namespace, ... too; an empty namespace is none.
  const unsigned char bytes[] = {0x6b, 0x38, 0x73, 0x00, 0x0a, 0x0f, 0x0a, 0x02, 0x76, 0x31, 0x12,
                                 0x09, 0x43, 0x6f, 0x6e, 0x66, 0x69, 0x67, 0x4d, 0x61, 0x70, 0x12,
                                 0x1b, 0x0a, 0x11, 0x0a, 0x01, 0x78, 0x12, 0x00, 0x1a, 0x00, 0x22,
                                 0x00, 0x2a, 0x00, 0x32, 0x00, 0x38, 0x00, 0x42, 0x00, 0x12, 0x06,
                                 0x0a, 0x01, 0x61, 0x12, 0x01, 0x62, 0x1a, 0x00, 0x22, 0x00};
  Result<json> c =
      DecodeProtobufConfigObject(std::string(reinterpret_cast<const char*>(bytes), sizeof bytes));
  ASSERT_TRUE(c.ok()) << c.status().message();
  EXPECT_EQ((*c)["metadata"], json({{"name", "x"}}));
  EXPECT_EQ((*c)["data"], json({{"a", "b"}}));
}

}  // namespace
}  // namespace berth::k8s
