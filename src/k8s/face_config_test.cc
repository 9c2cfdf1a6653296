// Secrets and ConfigMaps through the face (face_config.cc) with a fake port: create, get, list
// (Tables without values), update, patch, delete, who may read and change them, their store
// keys across a restart and a namespace's deletion; and containers-mode Pods that read them
// (env, imagePullSecrets with the FailedToRetrieveImagePullSecret event) and show a failed pull.
#include <gtest/gtest.h>
#include <stdlib.h>

#include <filesystem>
#include <nlohmann/json.hpp>
#include <string>

#include "image/container_spec.h"
#include "k8s/face.h"
#include "k8s/face_test_port.h"

namespace berth::k8s {
namespace {

using facetest::FaceRequest;
using facetest::FakePort;
using nlohmann::json;

constexpr const char* kTable = "application/json;as=Table;v=v1;g=meta.k8s.io";

class FaceConfigTest : public ::testing::Test {
 protected:
  void SetUp() override {
    char dir[] = "/tmp/berth-face-config-test-XXXXXX";
    ASSERT_NE(::mkdtemp(dir), nullptr);
    dir_ = dir;
    port_.tokens["Bearer alice"] = User{1000, 1000, "alice", false, true};
    port_.tokens["Bearer bob"] = User{1001, 1001, "bob", false, true};
    port_.tokens["Bearer root"] = User{0, 0, "root", true, true};
    StartFace(true);
  }
  void StartFace(bool containers) {
    face_.reset();
    FaceOptions o;
    o.state_dir = dir_;
    o.listen = "off";
    o.version = "test";
    o.containers = containers;
    face_ = std::make_unique<Face>(port_, o);
    ASSERT_TRUE(face_->Start().ok());
  }
  void TearDown() override {
    face_.reset();
    std::filesystem::remove_all(dir_);
  }

  net::HttpResponse Send(const std::string& method, const std::string& path,
                         const std::string& body = "", const std::string& who = "alice",
                         const std::string& content_type = "application/json",
                         const std::string& accept = "application/json") {
    net::HttpRequest req = FaceRequest(method, path, body, who, content_type);
    req.headers["accept"] = accept;
    return face_->Serve(req);
  }
  static json Body(const net::HttpResponse& r) { return json::parse(r.body, nullptr, false); }

  FakePort port_;
  std::string dir_;
  std::unique_ptr<Face> face_;
};

const std::string kSecrets = "/api/v1/namespaces/default/secrets";
const std::string kConfigMaps = "/api/v1/namespaces/default/configmaps";

json Secret(const std::string& name, json string_data) {
  return {{"apiVersion", "v1"},
          {"kind", "Secret"},
          {"metadata", {{"name", name}}},
          {"stringData", string_data}};
}

TEST_F(FaceConfigTest, SecretsAreKeptAndReadOnlyByTheirPeople) {
  net::HttpResponse r = Send("POST", kSecrets, Secret("db", {{"password", "hunter2"}}).dump());
  ASSERT_EQ(r.status, 201) << r.body;
  EXPECT_EQ(Body(r)["data"]["password"], "aHVudGVyMg==");
  ASSERT_TRUE(port_.meta.count("k8s_secret/default/db"));
  EXPECT_EQ(json::parse(port_.meta["k8s_secret/default/db"])["berth"]["creator"], "alice");

  r = Send("GET", kSecrets + "/db");
  ASSERT_EQ(r.status, 200);
  EXPECT_EQ(Body(r)["type"], "Opaque");
  EXPECT_FALSE(Body(r).contains("berth"));
  EXPECT_EQ(Send("GET", kSecrets + "/db", "", "root").status, 200);
  r = Send("GET", kSecrets + "/db", "", "bob");
  EXPECT_EQ(r.status, 403);
  EXPECT_NE(Body(r)["message"].get<std::string>().find("cannot get resource \"secrets\""),
            std::string::npos);
  EXPECT_EQ(r.body.find("hunter2"), std::string::npos);

  r = Send("GET", kSecrets, "", "alice", "application/json", kTable);
  ASSERT_EQ(r.status, 200);
  EXPECT_EQ(Body(r)["kind"], "Table");
  EXPECT_EQ(Body(r)["rows"][0]["cells"], json({"db", "Opaque", "1", "0s"}));
  EXPECT_EQ(r.body.find("aHVudGVyMg=="), std::string::npos);
  EXPECT_EQ(r.body.find("hunter2"), std::string::npos);
  EXPECT_EQ(Body(Send("GET", kSecrets, "", "bob"))["items"].size(), 0u);
  EXPECT_EQ(Body(Send("GET", "/api/v1/secrets", "", "root"))["items"].size(), 1u);

  EXPECT_EQ(Send("DELETE", kSecrets + "/db", "", "bob").status, 403);
  EXPECT_EQ(Send("POST", kSecrets, Secret("db", {{"a", "b"}}).dump()).status, 409);
  EXPECT_EQ(Send("DELETE", kSecrets + "/db").status, 200);
  EXPECT_FALSE(port_.meta.count("k8s_secret/default/db"));
  EXPECT_EQ(Send("GET", kSecrets + "/db").status, 404);
}

TEST_F(FaceConfigTest, BadObjectsAndPlaces) {
  net::HttpResponse r =
      Send("POST", kSecrets, json({{"metadata", {{"name", "x"}}}, {"data", {{"k", "!!"}}}}).dump());
  EXPECT_EQ(r.status, 422);
  EXPECT_NE(r.body.find("Secret \\\"x\\\" is invalid: data[k]"), std::string::npos) << r.body;
  r = Send(
      "POST", kSecrets,
      json({{"metadata", {{"name", "r"}}}, {"type", "kubernetes.io/dockerconfigjson"}}).dump());
  EXPECT_EQ(r.status, 422);
  EXPECT_NE(r.body.find("data[.dockerconfigjson]: Required value"), std::string::npos) << r.body;
  EXPECT_EQ(Send("POST", "/api/v1/namespaces/nope/configmaps",
                 json({{"metadata", {{"name", "c"}}}}).dump())
                .status,
            404);
  EXPECT_EQ(Send("POST", "/api/v1/namespaces/slurm/configmaps",
                 json({{"metadata", {{"name", "c"}}}}).dump())
                .status,
            403);
  EXPECT_EQ(Send("POST", kConfigMaps, "{not json").status, 400);
  EXPECT_EQ(Send("PUT", kConfigMaps).status, 405);
}

TEST_F(FaceConfigTest, ConfigMapsUpdatePatchAndSurviveARestart) {
  ASSERT_EQ(Send("POST", kConfigMaps,
                 json({{"metadata", {{"name", "settings"}}}, {"data", {{"mode", "fast"}}}}).dump())
                .status,
            201);
  // Anyone may read a ConfigMap; only its people change it.
  EXPECT_EQ(Send("GET", kConfigMaps + "/settings", "", "bob").status, 200);
  EXPECT_EQ(Send("PATCH", kConfigMaps + "/settings", R"({"data":{"x":"1"}})", "bob",
                 "application/merge-patch+json")
                .status,
            403);
  net::HttpResponse r = Send("PATCH", kConfigMaps + "/settings", R"({"data":{"mode":"slow"}})",
                             "alice", "application/strategic-merge-patch+json");
  ASSERT_EQ(r.status, 200) << r.body;
  EXPECT_EQ(Body(r)["data"]["mode"], "slow");
  const std::string rv = Body(r)["metadata"]["resourceVersion"];
  json stale = Body(r);
  stale["metadata"]["resourceVersion"] = "1";
  EXPECT_EQ(Send("PUT", kConfigMaps + "/settings", stale.dump()).status, 409);
  json put = Body(r);
  put["data"] = {{"only", "this"}};
  r = Send("PUT", kConfigMaps + "/settings", put.dump());
  ASSERT_EQ(r.status, 200) << r.body;
  EXPECT_EQ(Body(r)["data"], json({{"only", "this"}}));
  EXPECT_NE(Body(r)["metadata"]["resourceVersion"], rv);

  StartFace(true);  // a restart reads them back from the store
  r = Send("GET", kConfigMaps + "/settings", "", "bob", "application/json", kTable);
  ASSERT_EQ(r.status, 200);
  EXPECT_EQ(Body(r)["rows"][0]["cells"][1], "1");
}

TEST_F(FaceConfigTest, ANamespacesDeletionTakesThem) {
  ASSERT_EQ(Send("POST", "/api/v1/namespaces", R"({"metadata":{"name":"team"}})", "bob").status,
            201);
  const std::string team = "/api/v1/namespaces/team/secrets";
  ASSERT_EQ(Send("POST", team, Secret("s", {{"k", "v"}}).dump(), "alice").status, 201);
  // The namespace's creator may read it too.
  EXPECT_EQ(Send("GET", team + "/s", "", "bob").status, 200);
  ASSERT_EQ(Send("DELETE", "/api/v1/namespaces/team", "", "bob").status, 200);
  EXPECT_FALSE(port_.meta.count("k8s_secret/team/s"));
}

TEST_F(FaceConfigTest, DiscoveryListsThem) {
  net::HttpResponse r = Send("GET", "/api/v1");
  ASSERT_EQ(r.status, 200);
  std::set<std::string> names;
  const json list = Body(r);
  for (const json& res : list["resources"]) names.insert(res["name"]);
  EXPECT_TRUE(names.count("secrets"));
  EXPECT_TRUE(names.count("configmaps"));
}

json ContainerPod(const std::string& name, json container_extra, json spec_extra = json::object()) {
  json c = {{"name", "main"}, {"image", "reg.example/app:1"}};
  if (container_extra.is_object()) c.update(container_extra);
  json spec = {{"containers", json::array({c})}};
  if (spec_extra.is_object()) spec.update(spec_extra);
  return {{"apiVersion", "v1"}, {"kind", "Pod"}, {"metadata", {{"name", name}}}, {"spec", spec}};
}

TEST_F(FaceConfigTest, ContainerPodsReadSecretsAsTheirUserMay) {
  ASSERT_EQ(Send("POST", kSecrets, Secret("db", {{"password", "hunter2"}}).dump()).status, 201);
  ASSERT_EQ(Send("POST", kSecrets,
                 json({{"metadata", {{"name", "regcred"}}},
                       {"type", "kubernetes.io/dockerconfigjson"},
                       {"stringData",
                        {{".dockerconfigjson", R"({"auths":{"reg.example":{"auth":"eA=="}}})"}}}})
                     .dump())
                .status,
            201);
  json env = {
      {{"name", "PW"}, {"valueFrom", {{"secretKeyRef", {{"name", "db"}, {"key", "password"}}}}}}};
  net::HttpResponse r =
      Send("POST", "/api/v1/namespaces/default/pods",
           ContainerPod("web", {{"env", env}},
                        {{"imagePullSecrets", {{{"name", "regcred"}}, {{"name", "gone"}}}}})
               .dump());
  ASSERT_EQ(r.status, 201) << r.body;
  ASSERT_EQ(port_.submits.size(), 1u);
  const PodMapping& m = port_.submits[0].second;
  Result<image::ContainerSpec> spec = image::DecodeContainerSpec(m.request["container"]);
  ASSERT_TRUE(spec.ok()) << spec.status().message();
  EXPECT_EQ(spec->env, (std::vector<std::pair<std::string, std::string>>{{"PW", "hunter2"}}));
  EXPECT_EQ(json::parse(spec->auth_config)["auths"].size(), 1u);
  // The missing pull secret: the pod is made, with a Warning event.
  r = Send("GET", "/api/v1/namespaces/default/events");
  ASSERT_EQ(r.status, 200);
  bool warned = false;
  const json events = Body(r);
  for (const json& e : events["items"]) {
    if (e["reason"] == "FailedToRetrieveImagePullSecret") {
      warned = true;
      EXPECT_EQ(e["involvedObject"]["name"], "web");
      EXPECT_NE(e["message"].get<std::string>().find("(gone)"), std::string::npos);
    }
  }
  EXPECT_TRUE(warned) << r.body;
  // bob may not read alice's Secret: for his Pod it does not exist.
  r = Send("POST", "/api/v1/namespaces/default/pods", ContainerPod("bobs", {{"env", env}}).dump(),
           "bob");
  EXPECT_EQ(r.status, 422);
  EXPECT_NE(r.body.find("secretKeyRef.name"), std::string::npos) << r.body;
  EXPECT_EQ(r.body.find("hunter2"), std::string::npos);
}

TEST_F(FaceConfigTest, APullFailureShowsAsKubeletShowsIt) {
  ASSERT_EQ(Send("POST", "/api/v1/namespaces/default/pods", ContainerPod("web", {}).dump()).status,
            201);
  PodJob& job = port_.jobs.begin()->second;
  job.facts.reason = "ErrImagePull";
  job.facts.reason_detail = "manifest unknown: reg.example/app:1";
  net::HttpResponse r = Send("GET", "/api/v1/namespaces/default/pods/web");
  ASSERT_EQ(r.status, 200);
  json pod = Body(r);
  EXPECT_EQ(pod["status"]["phase"], "Pending");
  EXPECT_EQ(pod["status"]["containerStatuses"][0]["state"]["waiting"],
            json({{"reason", "ErrImagePull"}, {"message", "manifest unknown: reg.example/app:1"}}));
  r = Send("GET", "/api/v1/namespaces/default/pods", "", "alice", "application/json", kTable);
  EXPECT_EQ(Body(r)["rows"][0]["cells"][2], "ErrImagePull");
  job.facts.reason = "ImagePullBackOff";
  r = Send("GET", "/api/v1/namespaces/default/events");
  std::set<std::string> reasons;
  const json events = Body(r);
  for (const json& e : events["items"]) reasons.insert(e["reason"]);
  EXPECT_TRUE(reasons.count("BackOff"));
  EXPECT_TRUE(reasons.count("Failed"));
  EXPECT_FALSE(reasons.count("FailedScheduling"));
  // Once running, imageID is the node's.
  job.facts.reason.clear();
  job.facts.state = "RUNNING";
  job.facts.start_time = port_.now;
  job.facts.node = "node1";
  job.facts.image_id = "reg.example/app@sha256:abcd";
  pod = Body(Send("GET", "/api/v1/namespaces/default/pods/web"));
  EXPECT_EQ(pod["status"]["containerStatuses"][0]["imageID"], "reg.example/app@sha256:abcd");
}

TEST_F(FaceConfigTest, ProcessModeIsUnchanged) {
  StartFace(false);
  net::HttpResponse r =
      Send("POST", "/api/v1/namespaces/default/pods",
           ContainerPod(
               "p", {{"command", {"/bin/true"}}},
               {{"initContainers", {{{"name", "i"}, {"image", "x"}, {"command", {"/bin/true"}}}}}})
               .dump());
  ASSERT_EQ(r.status, 201) << r.body;
  EXPECT_FALSE(port_.submits[0].second.request.contains("container"));
  EXPECT_TRUE(port_.submits[0].second.request.contains("script"));
  StartFace(true);
  r = Send("POST", "/api/v1/namespaces/default/pods",
           ContainerPod("q", {}, {{"initContainers", {{{"name", "i"}, {"image", "x"}}}}}).dump());
  EXPECT_EQ(r.status, 422);
  EXPECT_NE(r.body.find("one container per Pod"), std::string::npos);
}

}  // namespace
}  // namespace berth::k8s
