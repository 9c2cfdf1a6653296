#include "image/oci.h"

#include <gtest/gtest.h>

namespace berth::image {
namespace {

const std::string kA = "sha256:" + std::string(64, 'a');
const std::string kB = "sha256:" + std::string(64, 'b');
const std::string kC = "sha256:" + std::string(64, 'c');

TEST(OciTest, DockerSchema2Manifest) {
  std::string text = R"({"schemaVersion":2,
    "mediaType":"application/vnd.docker.distribution.manifest.v2+json",
    "config":{"mediaType":"application/vnd.docker.container.image.v1+json","digest":")" +
                     kA + R"(","size":10},
    "layers":[{"mediaType":"application/vnd.docker.image.rootfs.diff.tar.gzip","digest":")" +
                     kB + R"(","size":20}]})";
  Result<Manifest> m = ParseManifest(text);
  ASSERT_TRUE(m.ok()) << m.status().ToString();
  EXPECT_EQ(m->config.digest, kA);
  ASSERT_EQ(m->layers.size(), 1u);
  EXPECT_EQ(m->layers[0].digest, kB);
  EXPECT_EQ(m->layers[0].size, 20);
}

TEST(OciTest, BadManifests) {
  EXPECT_FALSE(ParseManifest("[]").ok());
  EXPECT_FALSE(ParseManifest(R"({"schemaVersion":1,"fsLayers":[]})").ok());
  EXPECT_NE(ParseManifest(R"({"schemaVersion":2,"manifests":[]})").status().message().find("index"),
            std::string::npos);
  Result<Manifest> m =
      ParseManifest(R"({"schemaVersion":2,"config":{"digest":"md5:00"},"layers":[]})");
  ASSERT_FALSE(m.ok());
  EXPECT_NE(m.status().message().find("sha256 only"), std::string::npos);
}

TEST(OciTest, IndexPicksLinuxAmd64) {
  std::string text = R"({"schemaVersion":2,"manifests":[
    {"digest":")" + kA +
                     R"(","platform":{"os":"linux","architecture":"arm64"}},
    {"digest":")" + kB +
                     R"(","platform":{"os":"linux","architecture":"amd64"}},
    {"digest":")" + kC +
                     R"(","platform":{"os":"windows","architecture":"amd64"}}]})";
  Result<std::vector<Descriptor>> idx = ParseIndex(text);
  ASSERT_TRUE(idx.ok()) << idx.status().ToString();
  Result<Descriptor> d = PickPlatform(*idx);
  ASSERT_TRUE(d.ok());
  EXPECT_EQ(d->digest, kB);
  idx->erase(idx->begin() + 1);
  EXPECT_EQ(PickPlatform(*idx).status().code(), StatusCode::kNotFound);
}

TEST(OciTest, ImageConfig) {
  Result<ImageConfig> c = ParseImageConfig(
      R"({"config":{"Entrypoint":["/e"],"Cmd":["a","b"],"Env":["A=1"],"WorkingDir":"/w",
          "User":"1000:1000"}})");
  ASSERT_TRUE(c.ok());
  EXPECT_EQ(c->entrypoint, std::vector<std::string>{"/e"});
  EXPECT_EQ(c->cmd, (std::vector<std::string>{"a", "b"}));
  EXPECT_EQ(c->env, std::vector<std::string>{"A=1"});
  EXPECT_EQ(c->working_dir, "/w");
  EXPECT_EQ(c->user, "1000:1000");
  EXPECT_TRUE(ParseImageConfig(R"({"config":null})")->cmd.empty());
}

}  // namespace
}  // namespace berth::image
