// The Kubernetes face's handlers through a fake port (face_test_port.h): what each request asks
// of the controller (submits, cancels, node actions, store writes) and what it answers.
#include "k8s/face.h"

#include <gtest/gtest.h>
#include <stdlib.h>

#include <filesystem>
#include <nlohmann/json.hpp>
#include <string>

#include "k8s/face_test_port.h"

namespace berth::k8s {
namespace {

using facetest::FaceRequest;
using facetest::FakePort;
using nlohmann::json;

constexpr uint32_t kAlice = 1000;
constexpr uint32_t kBob = 1001;

class FaceTest : public ::testing::Test {
 protected:
  void SetUp() override {
    char dir[] = "/tmp/berth-face-test-XXXXXX";
    ASSERT_NE(::mkdtemp(dir), nullptr);
    dir_ = dir;
    port_.tokens["Bearer alice"] = User{kAlice, kAlice, "alice", false, true};
    port_.tokens["Bearer bob"] = User{kBob, kBob, "bob", false, true};
    port_.tokens["Bearer root"] = User{0, 0, "root", true, true};
    NodeFacts n;
    n.name = "node1";
    n.cpus = 8;
    n.mem_mib = 16384;
    n.state = "IDLE";
    n.resource_version = "3";
    port_.nodes.push_back(n);
    FaceOptions o;
    o.state_dir = dir_;
    o.listen = "off";
    o.version = "test";
    face_ = std::make_unique<Face>(port_, o);
    ASSERT_TRUE(face_->Start().ok());
  }
  void TearDown() override {
    face_.reset();
    std::filesystem::remove_all(dir_);
  }

  net::HttpResponse Send(const std::string& method, const std::string& path,
                         const std::string& body = "", const std::string& who = "alice",
                         const std::map<std::string, std::string>& query = {},
                         const std::string& content_type = "application/json") {
    net::HttpRequest req = FaceRequest(method, path, body, who, content_type);
    req.query = query;
    return face_->Serve(req);
  }
  static json Body(const net::HttpResponse& r) { return json::parse(r.body, nullptr, false); }

  json Namespaces() { return json::parse(port_.meta.at(kNamespacesMetaKey))["items"]; }

  FakePort port_;
  std::string dir_;
  std::unique_ptr<Face> face_;
};

json PodManifest(const std::string& name, json labels = json::object()) {
  return {
      {"apiVersion", "v1"},
      {"kind", "Pod"},
      {"metadata", {{"name", name}, {"labels", labels}}},
      {"spec",
       {{"containers",
         json::array({{{"name", "main"}, {"image", "busybox"}, {"command", {"/bin/true"}}}})}}}};
}

TEST_F(FaceTest, StartPersistsTheBuiltinNamespaces) {
  json items = Namespaces();
  EXPECT_TRUE(items.contains("default"));
  EXPECT_TRUE(items.contains("kube-system"));
  EXPECT_TRUE(items.contains("slurm"));
  EXPECT_TRUE(std::filesystem::is_directory(dir_ + "/pod-logs"));
  ASSERT_NE(face_->signer(), nullptr);
  EXPECT_FALSE(face_->serving());
}

TEST_F(FaceTest, NoTokenIsUnauthorizedAndV1GoesToBerthsApi) {
  EXPECT_EQ(Send("GET", "/api/v1/pods", "", "").status, 401);
  EXPECT_EQ(Send("GET", "/api/v1/pods", "", "mallory").status, 401);
  EXPECT_EQ(Send("GET", "/v1/jobs", "", "").status, 299);
  EXPECT_EQ(Send("GET", "/metrics", "", "").status, 299);
  EXPECT_EQ(Send("GET", "/ui/", "", "").status, 299);  // the web console: the controller's too
  EXPECT_EQ(Send("GET", "/ui/assets/app.js", "", "").status, 299);
  EXPECT_EQ(Send("GET", "/version").status, 200);
  EXPECT_EQ(Send("GET", "/nowhere").status, 404);
}

TEST_F(FaceTest, PodCreateSubmitsTheMappedRequest) {
  net::HttpResponse r = Send("POST", "/api/v1/namespaces/default/pods", PodManifest("web").dump());
  ASSERT_EQ(r.status, 201) << r.body;
  ASSERT_EQ(port_.submits.size(), 1u);
  const auto& [who, mapping] = port_.submits[0];
  EXPECT_EQ(who.name, "alice");
  EXPECT_EQ(mapping.name, "web");
  EXPECT_EQ(mapping.meta["namespace"], "default");
  EXPECT_EQ(mapping.request["argv"], json::array({"/bin/true"}));
  json pod = Body(r);
  EXPECT_EQ(pod["kind"], "Pod");
  EXPECT_EQ(pod["metadata"]["name"], "web");
  EXPECT_EQ(pod["metadata"]["labels"]["berth.io/job-id"], "100");
  // The name is taken now.
  EXPECT_EQ(Send("POST", "/api/v1/namespaces/default/pods", PodManifest("web").dump()).status, 409);
  EXPECT_EQ(port_.submits.size(), 1u);
  EXPECT_EQ(Send("GET", "/api/v1/namespaces/default/pods/web").status, 200);
}

TEST_F(FaceTest, PodDryRunOnlyTests) {
  net::HttpResponse r = Send("POST", "/api/v1/namespaces/default/pods", PodManifest("web").dump(),
                             "alice", {{"dryRun", "All"}});
  EXPECT_EQ(r.status, 201) << r.body;
  EXPECT_EQ(port_.test_submits.size(), 1u);
  EXPECT_TRUE(port_.submits.empty());
}

TEST_F(FaceTest, PodCreateRefusals) {
  // An unknown namespace, the slurm namespace, a bad manifest, a refused submit.
  EXPECT_EQ(Send("POST", "/api/v1/namespaces/nope/pods", PodManifest("a").dump()).status, 404);
  EXPECT_EQ(Send("POST", "/api/v1/namespaces/slurm/pods", PodManifest("a").dump()).status, 403);
  json bad = PodManifest("a");
  bad["spec"]["containers"] = json::array();
  EXPECT_EQ(Send("POST", "/api/v1/namespaces/default/pods", bad.dump()).status, 422);
  EXPECT_EQ(Send("POST", "/api/v1/namespaces/default/pods", "{not json").status, 400);
  port_.submit_status = Status::InvalidArgument("no partition fits");
  net::HttpResponse r = Send("POST", "/api/v1/namespaces/default/pods", PodManifest("a").dump());
  EXPECT_EQ(r.status, 422);
  EXPECT_NE(r.body.find("no partition fits"), std::string::npos);
  EXPECT_TRUE(port_.submits.empty());
}

TEST_F(FaceTest, StoppingControllerIsServiceUnavailable) {
  port_.stopping = true;
  EXPECT_EQ(Send("POST", "/api/v1/namespaces/default/pods", PodManifest("a").dump()).status, 503);
  EXPECT_EQ(Send("POST", "/api/v1/namespaces", R"({"metadata":{"name":"team"}})").status, 503);
}

TEST_F(FaceTest, PodDeleteCancelsItsJobForItsOwnerOnly) {
  ASSERT_EQ(Send("POST", "/api/v1/namespaces/default/pods", PodManifest("web").dump()).status, 201);
  EXPECT_EQ(Send("DELETE", "/api/v1/namespaces/default/pods/web", "", "bob").status, 403);
  EXPECT_TRUE(port_.deleted.empty());
  net::HttpResponse r = Send("DELETE", "/api/v1/namespaces/default/pods/web");
  EXPECT_EQ(r.status, 200) << r.body;
  EXPECT_EQ(port_.deleted, std::vector<uint32_t>{100});
  EXPECT_TRUE(Body(r)["metadata"].contains("deletionTimestamp"));
  EXPECT_EQ(Send("DELETE", "/api/v1/namespaces/default/pods/nope").status, 404);
}

TEST_F(FaceTest, PodListHonoursLabelSelectorsAndNamespaces) {
  ASSERT_EQ(
      Send("POST", "/api/v1/namespaces/default/pods", PodManifest("a", {{"app", "web"}}).dump())
          .status,
      201);
  ASSERT_EQ(
      Send("POST", "/api/v1/namespaces/default/pods", PodManifest("b", {{"app", "db"}}).dump())
          .status,
      201);
  port_.AddSlurmJob(3, kBob);  // slurm/job-3
  auto names = [](const net::HttpResponse& r) {
    std::vector<std::string> out;
    const json list = json::parse(r.body);
    for (const json& p : list["items"]) out.push_back(p["metadata"]["name"]);
    return out;
  };
  EXPECT_EQ(names(Send("GET", "/api/v1/namespaces/default/pods")),
            (std::vector<std::string>{"a", "b"}));
  EXPECT_EQ(names(Send("GET", "/api/v1/namespaces/default/pods", "", "alice",
                       {{"labelSelector", "app=web"}})),
            std::vector<std::string>{"a"});
  EXPECT_EQ(names(Send("GET", "/api/v1/pods", "", "alice", {{"labelSelector", "app!=web"}})),
            (std::vector<std::string>{"b", "job-3"}));
  EXPECT_EQ(names(Send("GET", "/api/v1/namespaces/slurm/pods")), std::vector<std::string>{"job-3"});
  EXPECT_EQ(Send("GET", "/api/v1/pods", "", "alice", {{"labelSelector", "app in (("}}).status, 400);
  EXPECT_EQ(Send("GET", "/api/v1/pods", "", "alice", {{"fieldSelector", "spec.nope=1"}}).status,
            400);
}

TEST_F(FaceTest, PodLabelsChangeButNotItsSpec) {
  ASSERT_EQ(Send("POST", "/api/v1/namespaces/default/pods", PodManifest("web").dump()).status, 201);
  net::HttpResponse r = Send("PATCH", "/api/v1/namespaces/default/pods/web",
                             R"({"metadata":{"labels":{"tier":"gold"}}})", "alice", {},
                             "application/merge-patch+json");
  ASSERT_EQ(r.status, 200) << r.body;
  EXPECT_EQ(Body(r)["metadata"]["labels"]["tier"], "gold");
  EXPECT_EQ((*port_.jobs.at(100).meta)["labels"]["tier"], "gold");
  r = Send("PATCH", "/api/v1/namespaces/default/pods/web",
           R"({"spec":{"containers":[{"name":"main","image":"other"}]}})", "alice", {},
           "application/merge-patch+json");
  EXPECT_EQ(r.status, 422) << r.body;
  EXPECT_EQ(
      Send("PATCH", "/api/v1/namespaces/default/pods/web",
           R"({"metadata":{"labels":{"tier":"x"}}})", "bob", {}, "application/merge-patch+json")
          .status,
      403);
}

TEST_F(FaceTest, NamespacesArePersistedThroughMetaWrites) {
  net::HttpResponse r =
      Send("POST", "/api/v1/namespaces", R"({"metadata":{"name":"team","labels":{"env":"dev"}}})");
  ASSERT_EQ(r.status, 201) << r.body;
  EXPECT_EQ(Namespaces()["team"]["creator"], "alice");
  EXPECT_EQ(Namespaces()["team"]["labels"]["env"], "dev");
  EXPECT_EQ(Send("POST", "/api/v1/namespaces", R"({"metadata":{"name":"team"}})").status, 409);
  EXPECT_EQ(Send("POST", "/api/v1/namespaces", R"({"metadata":{"name":"Bad_Name"}})").status, 422);
  EXPECT_EQ(Send("GET", "/api/v1/namespaces/team").status, 200);
  EXPECT_EQ(Send("GET", "/api/v1/namespaces/nope").status, 404);
  // Its pods go with it.
  ASSERT_EQ(Send("POST", "/api/v1/namespaces/team/pods", PodManifest("web").dump()).status, 201);
  EXPECT_EQ(Send("DELETE", "/api/v1/namespaces/team", "", "bob").status, 403);
  EXPECT_TRUE(Namespaces().contains("team"));
  EXPECT_EQ(Send("DELETE", "/api/v1/namespaces/team").status, 200);
  EXPECT_FALSE(Namespaces().contains("team"));
  EXPECT_EQ(port_.deleted, std::vector<uint32_t>{100});
  EXPECT_EQ(Send("DELETE", "/api/v1/namespaces/team").status, 404);
  EXPECT_EQ(Send("DELETE", "/api/v1/namespaces/default", "", "root").status, 403);
}

TEST_F(FaceTest, NamespaceDryRunWritesNothing) {
  const std::string before = port_.meta.at(kNamespacesMetaKey);
  EXPECT_EQ(Send("POST", "/api/v1/namespaces", R"({"metadata":{"name":"team"}})", "alice",
                 {{"dryRun", "All"}})
                .status,
            201);
  EXPECT_EQ(port_.meta.at(kNamespacesMetaKey), before);
  EXPECT_EQ(Send("GET", "/api/v1/namespaces/team").status, 404);
}

TEST_F(FaceTest, JobCreateMakesItsPodsAndIsStored) {
  json job = {
      {"apiVersion", "batch/v1"},
      {"kind", "Job"},
      {"metadata", {{"name", "train"}}},
      {"spec", {{"parallelism", 2}, {"completions", 2}, {"template", PodManifest("ignored")}}}};
  job["spec"]["template"]["spec"]["restartPolicy"] = "Never";
  net::HttpResponse r = Send("POST", "/apis/batch/v1/namespaces/default/jobs", job.dump());
  ASSERT_EQ(r.status, 201) << r.body;
  EXPECT_EQ(port_.submits.size(), 2u);
  EXPECT_TRUE(port_.meta.count(std::string(kJobMetaPrefix) + "default/train"));
  EXPECT_FALSE(Body(r).contains("berth"));  // berth's own section is not served
  EXPECT_EQ(Send("POST", "/apis/batch/v1/namespaces/default/jobs", job.dump()).status, 409);
  EXPECT_EQ(Send("GET", "/apis/batch/v1/namespaces/default/jobs/train").status, 200);
  EXPECT_EQ(Send("DELETE", "/apis/batch/v1/namespaces/default/jobs/train", "", "bob").status, 403);
  EXPECT_EQ(Send("DELETE", "/apis/batch/v1/namespaces/default/jobs/train").status, 200);
  EXPECT_FALSE(port_.meta.count(std::string(kJobMetaPrefix) + "default/train"));
  EXPECT_EQ(port_.deleted.size(), 2u);  // Background: its pods go too
  EXPECT_EQ(Send("GET", "/apis/batch/v1/namespaces/default/jobs/train").status, 404);
}

TEST_F(FaceTest, NodeCordonIsADrain) {
  net::HttpResponse r = Send("PATCH", "/api/v1/nodes/node1", R"({"spec":{"unschedulable":true}})",
                             "root", {}, "application/strategic-merge-patch+json");
  ASSERT_EQ(r.status, 200) << r.body;
  EXPECT_EQ(port_.node_actions, std::vector<std::string>{"drain node1 by root"});
  EXPECT_EQ(Body(r)["spec"]["unschedulable"], true);
  EXPECT_EQ(Send("PATCH", "/api/v1/nodes/nope", R"({"spec":{"unschedulable":true}})", "root", {},
                 "application/strategic-merge-patch+json")
                .status,
            404);
  EXPECT_EQ(Send("GET", "/api/v1/nodes/node1").status, 200);
  EXPECT_EQ(Send("POST", "/api/v1/nodes/node1").status, 405);
}

TEST_F(FaceTest, NamespaceLabelsChangeForItsCreatorOnly) {
  ASSERT_EQ(Send("POST", "/api/v1/namespaces", R"({"metadata":{"name":"team"}})").status, 201);
  const std::string patch = R"({"metadata":{"labels":{"env":"prod"}}})";
  EXPECT_EQ(
      Send("PATCH", "/api/v1/namespaces/team", patch, "bob", {}, "application/merge-patch+json")
          .status,
      403);
  EXPECT_FALSE(Namespaces()["team"].contains("labels") &&
               Namespaces()["team"]["labels"].contains("env"));
  net::HttpResponse r =
      Send("PATCH", "/api/v1/namespaces/team", patch, "alice", {}, "application/merge-patch+json");
  ASSERT_EQ(r.status, 200) << r.body;
  EXPECT_EQ(Body(r)["metadata"]["labels"]["env"], "prod");
  EXPECT_EQ(Namespaces()["team"]["labels"]["env"], "prod");
  EXPECT_EQ(Send("PATCH", "/api/v1/namespaces/team", R"({"metadata":{"labels":{"n":1}}})", "alice",
                 {}, "application/merge-patch+json")
                .status,
            422);
  EXPECT_EQ(
      Send("PATCH", "/api/v1/namespaces/nope", patch, "alice", {}, "application/merge-patch+json")
          .status,
      404);
}

TEST_F(FaceTest, JobTemplateIsImmutableAndPutChecksTheVersion) {
  json job = {{"apiVersion", "batch/v1"},
              {"kind", "Job"},
              {"metadata", {{"name", "train"}}},
              {"spec", {{"template", PodManifest("ignored")}}}};
  job["spec"]["template"]["spec"]["restartPolicy"] = "Never";
  ASSERT_EQ(Send("POST", "/apis/batch/v1/namespaces/default/jobs", job.dump()).status, 201);
  EXPECT_EQ(Send("PATCH", "/apis/batch/v1/namespaces/default/jobs/train",
                 R"({"spec":{"completions":3}})", "alice", {}, "application/merge-patch+json")
                .status,
            422);
  net::HttpResponse r =
      Send("PATCH", "/apis/batch/v1/namespaces/default/jobs/train", R"({"spec":{"suspend":true}})",
           "alice", {}, "application/merge-patch+json");
  ASSERT_EQ(r.status, 200) << r.body;
  EXPECT_EQ(Body(r)["spec"]["suspend"], true);
  json stored = json::parse(port_.meta.at(std::string(kJobMetaPrefix) + "default/train"));
  EXPECT_EQ(stored["spec"]["suspend"], true);
  json stale = Body(r);
  stale["metadata"]["resourceVersion"] = "1";
  EXPECT_EQ(Send("PUT", "/apis/batch/v1/namespaces/default/jobs/train", stale.dump()).status, 409);
  EXPECT_EQ(Send("POST", "/apis/batch/v1/namespaces/nope/jobs", job.dump()).status, 404);
}

TEST_F(FaceTest, PodLogIsItsOwnersOnly) {
  ASSERT_EQ(Send("POST", "/api/v1/namespaces/default/pods", PodManifest("web").dump()).status, 201);
  EXPECT_EQ(Send("GET", "/api/v1/namespaces/default/pods/web/log", "", "bob").status, 403);
  // Not started yet.
  EXPECT_EQ(Send("GET", "/api/v1/namespaces/default/pods/web/log").status, 400);
  port_.jobs.at(100).started = true;
  net::HttpResponse r = Send("GET", "/api/v1/namespaces/default/pods/web/log");
  EXPECT_EQ(r.status, 200);
  EXPECT_EQ(r.body, "");  // its output file does not exist (yet)
}

TEST_F(FaceTest, NodesAndEventsAreListed) {
  net::HttpResponse r =
      Send("GET", "/api/v1/nodes", "", "alice", {{"fieldSelector", "metadata.name=node1"}});
  ASSERT_EQ(r.status, 200) << r.body;
  EXPECT_EQ(Body(r)["items"].size(), 1u);
  EXPECT_EQ(Body(r)["items"][0]["metadata"]["name"], "node1");
  r = Send("GET", "/api/v1/nodes", "", "alice", {{"fieldSelector", "metadata.name=other"}});
  EXPECT_EQ(Body(r)["items"].size(), 0u);
  ASSERT_EQ(Send("POST", "/api/v1/namespaces/default/pods", PodManifest("web").dump()).status, 201);
  r = Send("GET", "/api/v1/namespaces/default/events");
  ASSERT_EQ(r.status, 200) << r.body;
  EXPECT_EQ(Body(r)["kind"], "EventList");
}

}  // namespace
}  // namespace berth::k8s
