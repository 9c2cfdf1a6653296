// Each node's image cache as its agent reports it (GET /v1/images, `berth images list --nodes`),
// and the configuration's ImageCacheSize handed to agents when they register.
#include <gtest/gtest.h>

#include <nlohmann/json.hpp>

#include "controller/controller_test_util.h"

namespace berth::controller {
namespace {

using nlohmann::json;

class NodeImagesTest : public ::testing::Test {
 protected:
  void SetUp() override { ASSERT_TRUE(controller_.ok()); }

  std::pair<int, json> Api(const std::string& method, const std::string& target,
                           const json& body = nullptr) {
    return controller_.Api(method, target, body);
  }

  static json Node(const std::string& name) {
    return {{"name", name}, {"cpus", 2}, {"mem_mib", 1024}};
  }

  static json Image(const std::string& name, const std::string& digest, bool in_use) {
    return {{"names", {name}}, {"digest", digest}, {"size_bytes", 1000}, {"in_use", in_use}};
  }

  TestController controller_{
      "NodeName=n[1-2] CPUs=2 RealMemory=1024\nPartitionName=p Nodes=n[1-2] Default=YES\n"
      "ImageCacheSize=2G\n"};
};

TEST_F(NodeImagesTest, RegistrationCarriesTheCacheSizeAndTheNodesImages) {
  auto [status, body] =
      Api("POST", "/v1/agents/register",
          {{"node", Node("n1")}, {"images", {Image("registry/a:1", "sha256:aa", true)}}});
  ASSERT_EQ(status, 200) << body.dump();
  EXPECT_EQ(body.value("image_cache_bytes", int64_t{0}), int64_t{2} << 30);
  std::tie(status, body) = Api("POST", "/v1/agents/register", {{"node", Node("n2")}});
  ASSERT_EQ(status, 200) << body.dump();

  std::tie(status, body) = Api("GET", "/v1/images");
  ASSERT_EQ(status, 200) << body.dump();
  ASSERT_EQ(body["images"].size(), 1u) << body.dump();
  EXPECT_EQ(body["images"][0]["node"], "n1");
  EXPECT_EQ(body["images"][0]["digest"], "sha256:aa");
  EXPECT_EQ(body["images"][0]["in_use"], true);
}

TEST_F(NodeImagesTest, AReportReplacesTheNodesListAndTheQueryPicksANode) {
  ASSERT_EQ(Api("POST", "/v1/agents/register",
                {{"node", Node("n1")}, {"images", {Image("a:1", "sha256:aa", false)}}})
                .first,
            200);
  ASSERT_EQ(Api("POST", "/v1/agents/register",
                {{"node", Node("n2")}, {"images", {Image("b:1", "sha256:bb", false)}}})
                .first,
            200);
  json report = {
      {"events",
       {{{"kind", "images"},
         {"images", {Image("a:1", "sha256:aa", false), Image("c:2", "sha256:cc", true)}}}}}};
  auto [status, body] = Api("POST", "/v1/agents/n1/status", report);
  ASSERT_EQ(status, 200) << body.dump();

  std::tie(status, body) = Api("GET", "/v1/images?node=n1");
  ASSERT_EQ(status, 200) << body.dump();
  ASSERT_EQ(body["images"].size(), 2u) << body.dump();
  EXPECT_EQ(body["images"][1]["digest"], "sha256:cc");
  EXPECT_EQ(body["images"][1]["node"], "n1");
  std::tie(status, body) = Api("GET", "/v1/images");
  EXPECT_EQ(body["images"].size(), 3u) << body.dump();
  std::tie(status, body) = Api("GET", "/v1/images?node=n9");
  EXPECT_EQ(body["images"].size(), 0u) << body.dump();
}

TEST_F(NodeImagesTest, AMalformedListIsRefusedAndChangesNothing) {
  ASSERT_EQ(Api("POST", "/v1/agents/register",
                {{"node", Node("n1")}, {"images", {Image("a:1", "sha256:aa", false)}}})
                .first,
            200);
  auto [status, body] =
      Api("POST", "/v1/agents/n1/status", {{"events", {{{"kind", "images"}, {"images", 7}}}}});
  EXPECT_EQ(status, 400) << body.dump();
  std::tie(status, body) =
      Api("POST", "/v1/agents/register", {{"node", Node("n1")}, {"images", "not a list"}});
  EXPECT_EQ(status, 400) << body.dump();
  std::tie(status, body) = Api("GET", "/v1/images");
  ASSERT_EQ(body["images"].size(), 1u) << body.dump();
  EXPECT_EQ(body["images"][0]["digest"], "sha256:aa");
}

}  // namespace
}  // namespace berth::controller
