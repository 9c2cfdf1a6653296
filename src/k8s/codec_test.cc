// The Kubernetes codecs: Status bodies, durations, Accept negotiation, selectors, Tables, the
// Node and Namespace objects, node patches, and protobuf envelopes.
#include "k8s/codec.h"

#include <gtest/gtest.h>

#include <nlohmann/json.hpp>

#include "k8s/objects.h"
#include "k8s/protobuf.h"

namespace berth::k8s {
namespace {

using nlohmann::json;

TEST(K8sStatusTest, ShapesAsKubectlPrintsThem) {
  json nf = NotFoundStatus("nodes", "gpu1");
  EXPECT_EQ(nf["kind"], "Status");
  EXPECT_EQ(nf["status"], "Failure");
  EXPECT_EQ(nf["reason"], "NotFound");
  EXPECT_EQ(nf["code"], 404);
  EXPECT_EQ(nf["message"], "nodes \"gpu1\" not found");
  EXPECT_EQ(nf["details"], json({{"name", "gpu1"}, {"kind", "nodes"}}));
  json ae = AlreadyExistsStatus("jobs.batch", "train");
  EXPECT_EQ(ae["code"], 409);
  EXPECT_EQ(ae["details"]["group"], "batch");
  EXPECT_EQ(ae["details"]["kind"], "jobs");
  json inv = InvalidStatus("Namespace", "A_", "metadata.name", "A_", "bad");
  EXPECT_EQ(inv["code"], 422);
  EXPECT_EQ(inv["message"],
            "Namespace \"A_\" is invalid: metadata.name: Invalid value: \"A_\": bad");
  EXPECT_EQ(inv["details"]["causes"][0]["field"], "metadata.name");
  EXPECT_EQ(UnauthorizedStatus()["code"], 401);
  EXPECT_EQ(ForbiddenStatus("namespaces", "default", "no")["message"],
            "namespaces \"default\" is forbidden: no");
}

TEST(K8sTimeTest, HumanDurationAndRfc3339) {
  const std::pair<int64_t, const char*> cases[] = {{-5, "<invalid>"},
                                                   {-1, "0s"},
                                                   {0, "0s"},
                                                   {119, "119s"},
                                                   {120, "2m"},
                                                   {125, "2m5s"},
                                                   {600, "10m"},
                                                   {179 * 60, "179m"},
                                                   {3 * 3600 + 60, "3h1m"},
                                                   {8 * 3600, "8h"},
                                                   {47 * 3600, "47h"},
                                                   {2 * 86400, "2d"},
                                                   {2 * 86400 + 3600, "2d1h"},
                                                   {30 * 86400, "30d"},
                                                   {3 * 365 * 86400 + 86400, "3y1d"},
                                                   {9 * 365 * 86400, "9y"}};
  for (const auto& [seconds, text] : cases) EXPECT_EQ(HumanDuration(seconds), text) << seconds;
  EXPECT_EQ(Rfc3339(0), "1970-01-01T00:00:00Z");
  EXPECT_EQ(Rfc3339(1796270518), "2026-12-03T04:01:58Z");
  EXPECT_EQ(MemoryQuantity(16384), "16Gi");
  EXPECT_EQ(MemoryQuantity(1536), "1536Mi");
  EXPECT_EQ(StableUid("Node", "a"), StableUid("Node", "a"));
  EXPECT_NE(StableUid("Node", "a"), StableUid("Node", "b"));
  EXPECT_EQ(StableUid("Node", "a").size(), 36u);
}

TEST(K8sAcceptTest, TablesAndAggregatedDiscovery) {
  EXPECT_TRUE(AcceptsTable(
      "application/json;as=Table;v=v1;g=meta.k8s.io,application/json;as=Table;v=v1beta1;g=meta."
      "k8s.io,application/json"));
  EXPECT_FALSE(AcceptsTable("application/json"));
  EXPECT_FALSE(AcceptsTable("application/vnd.kubernetes.protobuf,application/json"));
  // kubectl 1.30+: v2 first; 1.27-1.29: v2beta1 only; 1.20: legacy only.
  EXPECT_EQ(AggregatedDiscoveryVersion(
                "application/json;g=apidiscovery.k8s.io;v=v2;as=APIGroupDiscoveryList,application/"
                "json;g=apidiscovery.k8s.io;v=v2beta1;as=APIGroupDiscoveryList,application/json"),
            "v2");
  EXPECT_EQ(AggregatedDiscoveryVersion("application/json;g=apidiscovery.k8s.io;v=v2beta1;as="
                                       "APIGroupDiscoveryList,application/json"),
            "v2beta1");
  EXPECT_EQ(AggregatedDiscoveryVersion("application/json, */*"), "");
  EXPECT_EQ(AggregatedContentType("v2"),
            "application/json;g=apidiscovery.k8s.io;v=v2;as=APIGroupDiscoveryList");
  EXPECT_EQ(ParseBool("True"), std::optional<bool>(true));
  EXPECT_EQ(ParseBool("0"), std::optional<bool>(false));
  EXPECT_EQ(ParseBool("yes"), std::nullopt);
}

TEST(K8sSelectorTest, LabelSelectors) {
  json labels = {{"app", "train"}, {"tier", "gpu"}, {"legacy", "1"}};
  auto match = [&](const char* text) {
    Result<std::vector<Requirement>> s = ParseLabelSelector(text);
    EXPECT_TRUE(s.ok()) << text;
    return s.ok() && LabelsMatch(*s, labels);
  };
  EXPECT_TRUE(match(""));
  EXPECT_TRUE(match("app=train"));
  EXPECT_TRUE(match("app==train,tier!=cpu"));
  EXPECT_FALSE(match("app=serve"));
  EXPECT_TRUE(match("tier in (cpu, gpu)"));
  EXPECT_FALSE(match("tier notin (gpu)"));
  EXPECT_TRUE(match("legacy"));
  EXPECT_FALSE(match("!legacy"));
  EXPECT_TRUE(match("!missing,missing!=x"));
  EXPECT_FALSE(match("missing"));
  EXPECT_FALSE(ParseLabelSelector("a b=c").ok());
  EXPECT_FALSE(ParseLabelSelector("=x").ok());
}

TEST(K8sSelectorTest, FieldSelectors) {
  Result<std::vector<Requirement>> s = ParseFieldSelector("metadata.name=a,status.phase!=Failed");
  ASSERT_TRUE(s.ok());
  auto fields = [](std::string name, std::string phase) {
    return [=](const std::string& key) -> std::optional<std::string> {
      if (key == "metadata.name") return name;
      if (key == "status.phase") return phase;
      return std::nullopt;
    };
  };
  EXPECT_TRUE(FieldsMatch(*s, fields("a", "Running")));
  EXPECT_FALSE(FieldsMatch(*s, fields("a", "Failed")));
  EXPECT_FALSE(FieldsMatch(*s, fields("b", "Running")));
  EXPECT_FALSE(ParseFieldSelector("metadata.name").ok());
}

TEST(K8sNodeTest, NodeObjectAndTable) {
  NodeFacts f;
  f.name = "gpu1";
  f.cpus = 64;
  f.mem_mib = 512 * 1024;
  f.gpus = {"h100", "h100"};
  f.features = {"ib"};
  f.partitions = {"gpu"};
  f.state = "IDLE";
  f.agent_connected = true;
  f.created = 1000;
  f.berth_version = "0.1.0";
  f.resource_version = "7";
  json n = EncodeNode(f);
  EXPECT_EQ(n["metadata"]["resourceVersion"], "7");
  EXPECT_EQ(n["metadata"]["labels"]["kubernetes.io/hostname"], "gpu1");
  EXPECT_EQ(n["metadata"]["labels"]["feature.berth.io/ib"], "true");
  EXPECT_EQ(n["metadata"]["labels"]["nvidia.com/gpu.product"], "h100");
  EXPECT_EQ(n["status"]["capacity"]["cpu"], "64");
  EXPECT_EQ(n["status"]["capacity"]["memory"], "512Gi");
  EXPECT_EQ(n["status"]["allocatable"]["nvidia.com/gpu"], "2");
  EXPECT_EQ(n["status"]["conditions"][0]["status"], "True");
  EXPECT_FALSE(n["spec"].contains("unschedulable"));
  json cells = NodeTableCells(n, 1000 + 3 * 86400);
  EXPECT_EQ(cells, json({"gpu1", "Ready", "gpu", "3d", "berth-0.1.0", "<none>", "<none>",
                         "<unknown>", "<unknown>", "berth://0.1.0"}));
  EXPECT_EQ(NodeTableColumns().size(), cells.size());
  f.state = "DRAINED";
  f.reason = "bad fan";
  json drained = EncodeNode(f);
  EXPECT_EQ(drained["spec"]["unschedulable"], true);
  EXPECT_EQ(NodeTableCells(drained, 1000)[1], "Ready,SchedulingDisabled");
  f.state = "DOWN";
  f.agent_connected = false;
  EXPECT_EQ(NodeTableCells(EncodeNode(f), 1000)[1], "NotReady");
  json row = TableRow(cells, n);
  EXPECT_EQ(row["object"]["kind"], "PartialObjectMetadata");
  EXPECT_EQ(row["object"]["metadata"]["name"], "gpu1");
}

TEST(K8sNodeTest, PatchesOfSpecUnschedulable) {
  const char* smp = "application/strategic-merge-patch+json";
  EXPECT_EQ(*UnschedulableFromPatch(smp, R"({"spec":{"unschedulable":true}})"), true);
  EXPECT_EQ(*UnschedulableFromPatch(smp, R"({"spec":{"unschedulable":null}})"), false);
  EXPECT_EQ(*UnschedulableFromPatch("application/merge-patch+json", "{}"), std::nullopt);
  EXPECT_EQ(
      *UnschedulableFromPatch("application/json-patch+json",
                              R"([{"op":"replace","path":"/spec/unschedulable","value":true}])"),
      true);
  EXPECT_EQ(*UnschedulableFromPatch("application/json-patch+json",
                                    R"([{"op":"remove","path":"/spec/unschedulable"}])"),
            false);
  EXPECT_FALSE(UnschedulableFromPatch(smp, R"({"metadata":{"labels":{"a":"b"}}})").ok());
  EXPECT_FALSE(UnschedulableFromPatch(smp, R"({"spec":{"taints":[]}})").ok());
  EXPECT_FALSE(UnschedulableFromPatch(smp, R"({"spec":{"unschedulable":"yes"}})").ok());
  EXPECT_FALSE(UnschedulableFromPatch(smp, "not json").ok());
  EXPECT_FALSE(UnschedulableFromPatch("application/apply-patch+yaml", "{}").ok());
}

TEST(K8sNamespaceTest, NamesAndObjects) {
  EXPECT_EQ(NamespaceNameProblem("team-a"), "");
  EXPECT_EQ(NamespaceNameProblem("a1"), "");
  for (const char* bad : {"", "A", "-a", "a-", "a_b", "a.b"}) {
    EXPECT_NE(NamespaceNameProblem(bad), "") << bad;
  }
  EXPECT_NE(NamespaceNameProblem(std::string(64, 'a')), "");
  json ns = EncodeNamespace("team-a", 0, "4", {{"team", "ml"}}, nullptr);
  EXPECT_EQ(ns["metadata"]["labels"]["kubernetes.io/metadata.name"], "team-a");
  EXPECT_EQ(ns["metadata"]["labels"]["team"], "ml");
  EXPECT_EQ(NamespaceTableCells(ns, 59), json({"team-a", "Active", "59s"}));
}

TEST(K8sDiscoveryTest, DocumentsKubectlReads) {
  json core = AggregatedCoreDiscovery("v2beta1");
  EXPECT_EQ(core["apiVersion"], "apidiscovery.k8s.io/v2beta1");
  const json& resources = core["items"][0]["versions"][0]["resources"];
  // pods/log and pods/exec are subresources of pods, not resources of their own.
  ASSERT_EQ(resources.size(), CoreV1Resources().size() - 2);
  EXPECT_EQ(resources[1]["resource"], "nodes");
  EXPECT_EQ(resources[1]["scope"], "Cluster");
  EXPECT_EQ(resources[2]["resource"], "pods");
  EXPECT_EQ(resources[2]["scope"], "Namespaced");
  EXPECT_EQ(resources[2]["subresources"][0]["subresource"], "log");
  EXPECT_EQ(resources[2]["subresources"][1]["subresource"], "exec");
  json groups = AggregatedGroupsDiscovery("v2");
  EXPECT_EQ(groups["items"][0]["metadata"]["name"], "batch");
  EXPECT_EQ(groups["items"][0]["versions"][0]["resources"][0]["resource"], "jobs");
  EXPECT_EQ(LegacyApiGroupList()["groups"][0]["preferredVersion"]["groupVersion"], "batch/v1");
  EXPECT_EQ(LegacyBatchV1Resources()["groupVersion"], "batch/v1");
  EXPECT_EQ(OpenApiV3BatchV1()["paths"]["/apis/batch/v1/namespaces/{namespace}/jobs/{name}"]
                              ["patch"]["x-kubernetes-group-version-kind"]["kind"],
            "Job");
  EXPECT_EQ(VersionInfo("0.1.0")["minor"], "33");
  // What kubectl's default validation looks for: a PATCH with a fieldValidation parameter.
  json doc = OpenApiV3CoreV1();
  const json& patch = doc["paths"]["/api/v1/namespaces/{name}"]["patch"];
  EXPECT_EQ(patch["x-kubernetes-group-version-kind"]["kind"], "Namespace");
  bool has_field_validation = false;
  for (const json& p : patch["parameters"]) has_field_validation |= p["name"] == "fieldValidation";
  EXPECT_TRUE(has_field_validation);
  std::string url = OpenApiV3Index()["paths"]["api/v1"]["serverRelativeURL"];
  EXPECT_TRUE(url.starts_with("/openapi/v3/api/v1?hash=")) << url;
}

// Protobuf helpers: a length-delimited field.
std::string Field(int number, const std::string& bytes) {
  std::string out(1, static_cast<char>(number << 3 | 2));
  size_t n = bytes.size();
  do {
    out += static_cast<char>((n & 0x7f) | (n > 0x7f ? 0x80 : 0));
    n >>= 7;
  } while (n != 0);
  return out + bytes;
}

TEST(K8sProtobufTest, NamespaceEnvelopeAsKubectlCreateSendsIt) {
  std::string meta = Field(1, "team-b") + Field(11, Field(1, "team") + Field(2, "ml")) +
                     std::string("\x20\x01", 2);  // a varint field (skipped)
  std::string object = Field(1, meta) + Field(2, "") + Field(3, "");
  std::string envelope = std::string("k8s\0", 4) +
                         Field(1, Field(1, "v1") + Field(2, "Namespace")) + Field(2, object) +
                         Field(3, "") + Field(4, "application/vnd.kubernetes.protobuf");
  Result<json> j = DecodeProtobufObjectMeta(envelope);
  ASSERT_TRUE(j.ok()) << j.status().ToString();
  EXPECT_EQ((*j)["kind"], "Namespace");
  EXPECT_EQ((*j)["apiVersion"], "v1");
  EXPECT_EQ((*j)["metadata"]["name"], "team-b");
  EXPECT_EQ((*j)["metadata"]["labels"]["team"], "ml");
  // Cut short anywhere, or without the magic: an error, never a crash.
  for (size_t cut = 4; cut < envelope.size(); ++cut) {
    Result<json> r = DecodeProtobufObjectMeta(std::string_view(envelope).substr(0, cut));
    (void)r;
  }
  EXPECT_FALSE(DecodeProtobufObjectMeta("{\"kind\":\"Namespace\"}").ok());
  EXPECT_FALSE(DecodeProtobufObjectMeta(std::string("k8s\0\x0a\x7f", 6)).ok());
}

}  // namespace
}  // namespace berth::k8s
