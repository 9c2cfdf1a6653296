#include "agent/container.h"

#include <gtest/gtest.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <unistd.h>

#include <algorithm>
#include <cstdlib>
#include <filesystem>
#include <nlohmann/json.hpp>

#include "agent/container_settings.h"

namespace berth::agent {
namespace {

using json = nlohmann::json;
using Strings = std::vector<std::string>;

image::ContainerSpec Pod(std::optional<Strings> command, std::optional<Strings> args) {
  image::ContainerSpec s;
  s.image = "perl:5.34.0";
  s.entry = image::EntryMode::kKubernetes;
  s.command = std::move(command);
  s.args = std::move(args);
  return s;
}

// Kubernetes' table (tasks/inject-data-application/define-command-argument-container).
TEST(ContainerArgsTest, KubernetesCombinesEntrypointAndCmdAsTheDocumentationSays) {
  image::ImageConfig image;
  image.entrypoint = {"/ep-1"};
  image.cmd = {"foo", "bar"};
  EXPECT_EQ(*ContainerArgs(Pod(std::nullopt, std::nullopt), image, {}),
            (Strings{"/ep-1", "foo", "bar"}));
  EXPECT_EQ(*ContainerArgs(Pod(Strings{"/ep-2"}, std::nullopt), image, {}), (Strings{"/ep-2"}));
  EXPECT_EQ(*ContainerArgs(Pod(std::nullopt, Strings{"zoo", "boo"}), image, {}),
            (Strings{"/ep-1", "zoo", "boo"}));
  EXPECT_EQ(*ContainerArgs(Pod(Strings{"/ep-2"}, Strings{"zoo", "boo"}), image, {}),
            (Strings{"/ep-2", "zoo", "boo"}));
  // An empty args list replaces the CMD with nothing.
  EXPECT_EQ(*ContainerArgs(Pod(std::nullopt, Strings{}), image, {}), (Strings{"/ep-1"}));
}

TEST(ContainerArgsTest, AnImageWithNothingToRunIsAnError) {
  Result<Strings> r = ContainerArgs(Pod(std::nullopt, std::nullopt), {}, {});
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.status().message(),
            "the image perl:5.34.0 gives no ENTRYPOINT or CMD, and the job no command");
}

TEST(ContainerArgsTest, ASlurmJobRunsItsOwnCommandNotTheEntrypoint) {
  image::ContainerSpec s;
  s.image = "x";
  image::ImageConfig image;
  image.entrypoint = {"/docker-entrypoint.sh"};
  image.cmd = {"bash"};
  EXPECT_EQ(*ContainerArgs(s, image, {"/bin/sh", "/.berth/script", "a"}),
            (Strings{"/bin/sh", "/.berth/script", "a"}));
}

TEST(ContainerEnvTest, ImageThenJobThenSpecButPathStaysTheImages) {
  image::ContainerSpec s;
  s.env = {{"B", "spec"}, {"C", "spec"}};
  Strings env = ContainerEnv({"PATH=/opt/conda/bin:/usr/bin", "A=image", "B=image"},
                             {"PATH=/home/u/bin:/usr/bin", "LD_LIBRARY_PATH=/host/lib", "A=job",
                              "C=job", "SLURM_JOB_ID=7"},
                             s);
  EXPECT_EQ(env, (Strings{"A=job", "B=spec", "C=spec", "PATH=/opt/conda/bin:/usr/bin",
                          "SLURM_JOB_ID=7"}));
  // An image without PATH gets the usual one; --container-env can still set PATH.
  s.env = {{"PATH", "/mine"}};
  EXPECT_EQ(ContainerEnv({}, {}, s), (Strings{"PATH=/mine"}));
  EXPECT_EQ(ContainerEnv({}, {}, {}),
            (Strings{"PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin"}));
}

TEST(OciConfigTest, AHostNameGetsAUtsNamespace) {
  ContainerPlan plan;
  plan.rootfs = "/r";
  plan.args = {"true"};
  plan.hostname = "train-3";
  json c = json::parse(OciConfig(plan));
  EXPECT_EQ(c["hostname"], "train-3");
  int uts = 0;
  for (const json& ns : c["linux"]["namespaces"]) uts += ns["type"] == "uts";
  EXPECT_EQ(uts, 1);
}

TEST(OciConfigTest, SaysWhatThePlanSays) {
  ContainerPlan p;
  p.rootfs = "/j/ctr/rootfs";
  p.readonly_root = true;
  p.args = {"/bin/sh", "-c", "true"};
  p.env = {"A=1"};
  p.cwd = "/work";
  p.uid = 1001;
  p.gid = 1002;
  p.groups = {1002, 27};
  p.mounts = {{"/data", "bind", "/srv/data", {"rbind", "ro"}}};
  p.devices = {{"/dev/nvidia1", 195, 1}};
  p.cgroup_name = "berth/job_1_0_x/container";
  json c = json::parse(OciConfig(p));
  EXPECT_EQ(c["ociVersion"], "1.0.2");
  EXPECT_EQ(c["root"], json({{"path", "/j/ctr/rootfs"}, {"readonly", true}}));
  EXPECT_EQ(c["process"]["args"], json(p.args));
  EXPECT_EQ(c["process"]["user"],
            json({{"uid", 1001}, {"gid", 1002}, {"additionalGids", {1002, 27}}}));
  EXPECT_EQ(c["process"]["noNewPrivileges"], true);
  EXPECT_TRUE(c["process"]["capabilities"]["bounding"].empty());
  EXPECT_EQ(c["process"]["cwd"], "/work");
  EXPECT_EQ(c["linux"]["cgroupsPath"], "berth/job_1_0_x/container");
  // The host's network and PID namespaces: no "network" or "pid" entry.
  for (const json& ns : c["linux"]["namespaces"]) {
    EXPECT_NE(ns["type"], "network");
    EXPECT_NE(ns["type"], "pid");
  }
  EXPECT_FALSE(c.contains("hostname"));
  EXPECT_EQ(c["mounts"].back(), json({{"destination", "/data"},
                                      {"type", "bind"},
                                      {"source", "/srv/data"},
                                      {"options", {"rbind", "ro"}}}));
  EXPECT_EQ(c["linux"]["devices"][0]["path"], "/dev/nvidia1");
  EXPECT_EQ(c["linux"]["resources"]["devices"][0], json({{"allow", false}, {"access", "rwm"}}));
  EXPECT_EQ(c["linux"]["resources"]["devices"][1]["minor"], 1);
  p.root_capabilities = true;
  EXPECT_FALSE(json::parse(OciConfig(p))["process"]["capabilities"]["bounding"].empty());
}

TEST(OciConfigTest, ATtyPodAsksRuncForATerminalOfTheStartingSize) {
  ContainerPlan p;
  p.rootfs = "/r";
  p.args = {"sh"};
  json plain = json::parse(OciConfig(p));
  EXPECT_EQ(plain["process"]["terminal"], false);
  EXPECT_FALSE(plain["process"].contains("consoleSize"));
  p.terminal = true;
  json tty = json::parse(OciConfig(p));
  EXPECT_EQ(tty["process"]["terminal"], true);
  // As a bare pod's terminal starts; an attach sets the client's size on the master.
  EXPECT_EQ(tty["process"]["consoleSize"], json({{"height", 24}, {"width", 80}}));
  // runc's /dev/pts is a devpts instance of the container's own, where the terminal is made.
  bool pts = false;
  for (const json& m : tty["mounts"]) {
    if (m["destination"] == "/dev/pts") {
      pts = true;
      EXPECT_NE(std::find(m["options"].begin(), m["options"].end(), "newinstance"),
                m["options"].end());
    }
  }
  EXPECT_TRUE(pts);
}

TEST(RuncCreateArgvTest, AConsoleSocketOnlyForATerminal) {
  EXPECT_EQ(
      RuncCreateArgv("/usr/sbin/runc", "/s/runc", "/j/1.0/ctr", "berth-x", ""),
      (Strings{"/usr/sbin/runc", "--root", "/s/runc", "--log", "/j/1.0/ctr/runc.log", "create",
               "--bundle", "/j/1.0/ctr", "--pid-file", "/j/1.0/ctr/init.pid", "berth-x"}));
  EXPECT_EQ(
      RuncCreateArgv("/usr/sbin/runc", "/s/runc", "/j/1.0/ctr", "berth-x", "/j/1.0/console.sock"),
      (Strings{"/usr/sbin/runc", "--root", "/s/runc", "--log", "/j/1.0/ctr/runc.log", "create",
               "--bundle", "/j/1.0/ctr", "--pid-file", "/j/1.0/ctr/init.pid", "--console-socket",
               "/j/1.0/console.sock", "berth-x"}));
}

TEST(NvidiaTest, DevicesOfTheAllocationOnlyAndNoneForDeclaredGpus) {
  if (geteuid() != 0) GTEST_SKIP() << "mknod needs root";
  std::string dev = testing::TempDir() + "/dev-" + std::to_string(getpid());
  std::filesystem::create_directories(dev);
  for (int i = 0; i < 3; ++i) {
    std::string p = dev + "/nvidia" + std::to_string(i);
    ASSERT_EQ(mknod(p.c_str(), S_IFCHR | 0666, makedev(195, i)), 0);
  }
  ASSERT_EQ(mknod((dev + "/nvidiactl").c_str(), S_IFCHR | 0666, makedev(195, 255)), 0);
  std::vector<OciDevice> d = NvidiaDevices({0, 2}, dev);
  EXPECT_EQ(d,
            (std::vector<OciDevice>{
                {"/dev/nvidia0", 195, 0}, {"/dev/nvidia2", 195, 2}, {"/dev/nvidiactl", 195, 255}}));
  EXPECT_TRUE(NvidiaDevices({5, 6}, dev).empty());  // declared, not present
  std::filesystem::remove_all(dev);
}

TEST(NvidiaTest, HostFilesFromLdconfig) {
  std::string out =
      "1234 libs found in cache `/etc/ld.so.cache'\n"
      "\tlibz.so.1 (libc6,x86-64) => /lib/x86_64-linux-gnu/libz.so.1\n"
      "\tlibnvidia-ml.so.1 (libc6,x86-64) => /usr/lib/x86_64-linux-gnu/libnvidia-ml.so.1\n"
      "\tlibcuda.so.1 (libc6,x86-64) => /usr/lib/x86_64-linux-gnu/libcuda.so.1\n"
      "\tlibcuda.so.1 (libc6) => /usr/lib/i386-linux-gnu/libcuda.so.1\n";
  Strings files = NvidiaHostFiles(out);
  ASSERT_GE(files.size(), 2u);
  EXPECT_EQ(files[0], "/usr/lib/x86_64-linux-gnu/libnvidia-ml.so.1");
  EXPECT_EQ(files[1], "/usr/lib/x86_64-linux-gnu/libcuda.so.1");
  EXPECT_TRUE(NvidiaHostFiles("\tlibz.so.1 (libc6,x86-64) => /lib/libz.so.1\n").empty());
}

TEST(PullPolicyTest, KubernetesDefaultFromTheTag) {
  image::ContainerSpec s;
  image::Reference latest{"docker.io", "library/busybox", "latest", ""};
  image::Reference tagged{"docker.io", "library/busybox", "1.36", ""};
  image::Reference pinned{"docker.io", "library/busybox", "", "sha256:ab"};
  EXPECT_EQ(EffectivePullPolicy(s, latest), image::PullPolicy::kAlways);
  EXPECT_EQ(EffectivePullPolicy(s, tagged), image::PullPolicy::kIfNotPresent);
  EXPECT_EQ(EffectivePullPolicy(s, pinned), image::PullPolicy::kIfNotPresent);
  s.pull_policy = image::PullPolicy::kNever;
  EXPECT_EQ(EffectivePullPolicy(s, latest), image::PullPolicy::kNever);
}

TEST(OverlayOptionsTest, TopLayerFirst) {
  EXPECT_EQ(OverlayOptions({"base", "mid", "top"}, "/j/upper", "/j/work"),
            "lowerdir=top:mid:base,upperdir=/j/upper,workdir=/j/work");
}

TEST(ContainerSettingsTest, RoundTripAndFileInTheStateFolder) {
  ContainerSettings s;
  s.runc = "/usr/sbin/runc";
  s.image_store = "/var/lib/berth/images";
  s.insecure_registries = {"reg:5000"};
  s.cache_bytes = 1 << 30;
  EXPECT_EQ(*DecodeContainerSettings(EncodeContainerSettings(s)), s);
  EXPECT_FALSE(DecodeContainerSettings("[]").ok());
  EXPECT_FALSE(DecodeContainerSettings(R"({"runc": 5})").ok());
  std::string dir = testing::TempDir() + "/settings-" + std::to_string(getpid());
  std::filesystem::create_directories(dir);
  ASSERT_TRUE(WriteContainerSettings(dir, s).ok());
  EXPECT_EQ(*ReadContainerSettings(dir), s);
  std::filesystem::remove_all(dir);
  EXPECT_EQ(FindExecutable("sh").empty(), false);
  EXPECT_EQ(FindExecutable("no-such-program-berth"), "");
}

}  // namespace
}  // namespace berth::agent
