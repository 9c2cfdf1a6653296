// Named containers' folders (named_container.h): made under the agent's state folder, removed once
// their job has no folder left on the node, with their image hold released.
#include "agent/named_container.h"

#include <gtest/gtest.h>
#include <stdlib.h>
#include <sys/stat.h>

#include <filesystem>
#include <fstream>
#include <utility>
#include <vector>

namespace berth::agent {
namespace {

namespace fs = std::filesystem;

class NamedContainerTest : public ::testing::Test {
 protected:
  void SetUp() override {
    char tmpl[] = "/tmp/named_container_test.XXXXXX";
    state_ = mkdtemp(tmpl);
    jobs_ = state_ + "/jobs";
    fs::create_directories(jobs_);
  }
  void TearDown() override { fs::remove_all(state_); }

  // A named container as a step leaves it (no overlay mounted: the sweep's unmount is a no-op).
  std::string Make(uint32_t job, int32_t attempt, const std::string& name) {
    std::string dir = NamedContainerDir(state_, job, attempt, name);
    Result<NamedContainerLock> lock = NamedContainerLock::Take(dir);
    EXPECT_TRUE(lock.ok()) << lock.status().message();
    fs::create_directories(dir + "/upper/kept");
    fs::create_directories(dir + "/rootfs");
    std::ofstream(dir + "/digest") << "sha256:" << name;
    std::ofstream(dir + "/image") << "registry/img:1";
    return dir;
  }

  int Sweep() {
    return SweepNamedContainers(state_, jobs_, [this](const std::string& d, const std::string& h) {
      released_.emplace_back(d, h);
    });
  }

  std::string state_, jobs_;
  std::vector<std::pair<std::string, std::string>> released_;
};

TEST_F(NamedContainerTest, PathsAndHolder) {
  EXPECT_EQ(NamedContainerDir("/s", 12, 1, "c1"), "/s/named/12.1/c1");
  EXPECT_EQ(NamedContainerHolder(12, 1, "c1"), "named-12.1-c1");
}

TEST_F(NamedContainerTest, KeptWhileTheJobHasAFolderHere) {
  std::string a = Make(7, 0, "c1");
  std::string b = Make(8, 2, "c2");
  fs::create_directories(jobs_ + "/7.0");    // job 7's batch part
  fs::create_directories(jobs_ + "/8.2.3");  // a step of job 8, attempt 2
  EXPECT_EQ(Sweep(), 0);
  EXPECT_TRUE(fs::exists(a + "/upper/kept"));
  EXPECT_TRUE(fs::exists(b + "/upper/kept"));
  EXPECT_TRUE(released_.empty());
}

TEST_F(NamedContainerTest, RemovedWithItsHoldOnceTheJobsFoldersAreGone) {
  std::string a = Make(7, 0, "c1");
  std::string b = Make(7, 0, "c2");
  std::string other = Make(7, 1, "c1");  // a later attempt of the same job runs here
  fs::create_directories(jobs_ + "/7.1");
  fs::create_directories(jobs_ + "/70.0");  // job 70 is not job 7
  EXPECT_EQ(Sweep(), 2);
  EXPECT_FALSE(fs::exists(a));
  EXPECT_FALSE(fs::exists(b));
  EXPECT_FALSE(fs::exists(a + ".lock"));
  EXPECT_FALSE(fs::exists(state_ + "/named/7.0"));
  EXPECT_TRUE(fs::exists(other + "/upper/kept"));
  std::sort(released_.begin(), released_.end());
  EXPECT_EQ(released_, (std::vector<std::pair<std::string, std::string>>{
                           {"sha256:c1", "named-7.0-c1"}, {"sha256:c2", "named-7.0-c2"}}));
  EXPECT_EQ(Sweep(), 0);
}

TEST_F(NamedContainerTest, NothingToSweepWithoutTheFolder) {
  EXPECT_EQ(Sweep(), 0);
  EXPECT_FALSE(IsMountPoint(state_ + "/jobs"));
  EXPECT_TRUE(IsMountPoint("/"));
}

}  // namespace
}  // namespace berth::agent
