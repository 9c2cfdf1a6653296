#include "image/container_spec.h"

#include <gtest/gtest.h>

#include <nlohmann/json.hpp>

namespace berth::image {
namespace {

using json = nlohmann::json;

TEST(ContainerSpecTest, RoundTripsEveryField) {
  ContainerSpec s;
  s.image = "reg.example:5000/team/app:1.0";
  s.pull_policy = PullPolicy::kAlways;
  s.entry = EntryMode::kKubernetes;
  s.command = std::vector<std::string>{"/bin/sh", "-c"};
  s.args = std::vector<std::string>{};
  s.env = {{"A", "1"}, {"B", ""}};
  s.work_dir = "/work";
  Mount bind{Mount::Kind::kBind, "/data", "/mnt/data", true, 0, {}, false};
  Mount files{Mount::Kind::kFiles, "", "/etc/cfg", true, 0, {{"a/b.txt", "x"}}, true};
  Mount tmp{Mount::Kind::kTmpfs, "", "/cache", false, 1 << 20, {}, false};
  s.mounts = {bind, files, tmp};
  s.mount_home = false;
  s.remap_root = true;
  s.writable = false;
  s.run_as_root = true;
  s.name = "pyt";
  s.auth_config = R"({"auths":{}})";
  s.node_name_env = {"NODE"};
  Result<ContainerSpec> back = DecodeContainerSpec(EncodeContainerSpec(s));
  ASSERT_TRUE(back.ok()) << back.status().message();
  EXPECT_EQ(*back, s);
}

TEST(ContainerSpecTest, DefaultsEncodeToTheImageAlone) {
  ContainerSpec s;
  s.image = "busybox";
  EXPECT_EQ(EncodeContainerSpec(s), json({{"image", "busybox"}}));
  Result<ContainerSpec> back = DecodeContainerSpec(json{{"image", "busybox"}});
  ASSERT_TRUE(back.ok());
  EXPECT_FALSE(back->command.has_value());
  EXPECT_TRUE(back->mount_home);
  EXPECT_TRUE(back->writable);
}

TEST(ContainerSpecTest, ANameAloneNamesAContainerTheJobHas) {
  Result<ContainerSpec> s = DecodeContainerSpec(json{{"name", "pyt"}});
  ASSERT_TRUE(s.ok()) << s.status().message();
  EXPECT_EQ(s->image, "");
  EXPECT_EQ(s->name, "pyt");
  EXPECT_EQ(EncodeContainerSpec(*s), json({{"image", ""}, {"name", "pyt"}}));
}

TEST(ContainerSpecTest, ErrorsNameTheKey) {
  auto err = [](const json& j) { return DecodeContainerSpec(j).status().message(); };
  EXPECT_EQ(err(json::array()), "container: must be an object");
  EXPECT_EQ(err(json::object()), "container.image: required");
  EXPECT_EQ(err({{"image", ""}, {"mount_home", false}}), "container.image: required");
  EXPECT_EQ(err({{"image", "x"}, {"pull_policy", "Sometimes"}}),
            "container.pull_policy: expected Always, IfNotPresent or Never, got 'Sometimes'");
  EXPECT_EQ(err({{"image", "x"}, {"imag", "y"}}), "container.imag: unknown key");
  EXPECT_EQ(err({{"image", "x"}, {"command", {"a", 1}}}),
            "container.command: must be a list of strings");
  EXPECT_EQ(err({{"image", "x"}, {"work_dir", "rel"}}),
            "container.work_dir: must be an absolute path, got 'rel'");
  EXPECT_EQ(err({{"image", "x"}, {"mounts", {{{"destination", "/a"}, {"source", "rel"}}}}}),
            "container.mounts[0].source: must be an absolute host path, got 'rel'");
  EXPECT_EQ(
      err({{"image", "x"},
           {"mounts",
            {{{"kind", "files"}, {"destination", "/a"}, {"files", {{"../etc/passwd", "x"}}}}}}}),
      "container.mounts[0].files: '../etc/passwd' is not a relative path inside the volume");
  EXPECT_EQ(err({{"image", "x"}, {"env", {{"A"}}}}),
            "container.env: must be a list of [name, value] pairs");
}

}  // namespace
}  // namespace berth::image
