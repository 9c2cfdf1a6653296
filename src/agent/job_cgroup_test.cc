#include "agent/job_cgroup.h"

#include <gtest/gtest.h>
#include <unistd.h>

#include <filesystem>

#include "agent/agent_test_util.h"
#include "agent/file_util.h"

namespace berth::agent {
namespace {

TEST(JobCgroupTest, NamesAreStablePerFolderAndDistinctAcrossFolders) {
  std::string a = JobCgroupName(12, 1, "/var/lib/berth/jobs/12.1");
  const std::string prefix = "job_12_1_";
  ASSERT_EQ(a.size(), prefix.size() + 8) << a;
  EXPECT_EQ(a.substr(0, prefix.size()), prefix) << a;
  EXPECT_EQ(a.find_first_not_of("0123456789abcdef", prefix.size()), std::string::npos) << a;
  EXPECT_EQ(a, JobCgroupName(12, 1, "/var/lib/berth/jobs/12.1"));
  EXPECT_NE(a, JobCgroupName(12, 1, "/tmp/other-agent/jobs/12.1"));
}

TEST(JobCgroupTest, CreatesLimitsAndRemovesTheGroups) {
  BERTH_REQUIRE_ROOT_AND_CGROUPS();
  Result<CgroupLayout> layout = DetectCgroupLayout();
  ASSERT_TRUE(layout.ok());
  JobCgroupSpec spec;
  spec.parent = testing::TestCgroupParent();
  spec.name = JobCgroupName(1, 0, "/job-cgroup-test/" + std::to_string(getpid()));
  spec.memory_bytes = 48 << 20;
  spec.pids_max = 77;
  Result<CpusetView> view = ReadCpusetView(*layout, spec);
  if (view.ok()) {
    ASSERT_FALSE(view->allowed.empty());
    spec.cpus = {view->allowed.front()};
  }
  std::vector<std::string> notes;
  Result<std::unique_ptr<JobCgroup>> cg = JobCgroup::Create(*layout, spec, &notes);
  ASSERT_TRUE(cg.ok()) << cg.status().ToString();
  std::vector<std::string> dirs = (*cg)->dirs();
  ASSERT_FALSE(dirs.empty());
  EXPECT_EQ((*cg)->join_fds().size(), dirs.size());
  EXPECT_TRUE((*cg)->Pids().empty());
  EXPECT_EQ((*cg)->OomKills(), 0);
  for (const std::string& dir : dirs) {
    if (std::filesystem::exists(dir + "/memory.limit_in_bytes")) {
      EXPECT_EQ(*ReadFile(dir + "/memory.limit_in_bytes"), std::to_string(48 << 20) + "\n");
    }
    if (std::filesystem::exists(dir + "/memory.max")) {
      EXPECT_EQ(*ReadFile(dir + "/memory.max"), std::to_string(48 << 20) + "\n");
    }
    if (std::filesystem::exists(dir + "/pids.max")) {
      EXPECT_EQ(*ReadFile(dir + "/pids.max"), "77\n");
    }
    if (view.ok() && std::filesystem::exists(dir + "/cpuset.cpus")) {
      EXPECT_EQ(*ReadFile(dir + "/cpuset.cpus"), std::to_string(spec.cpus[0]) + "\n");
    }
  }
  // Creating it again replaces the (empty) leftover.
  Result<std::unique_ptr<JobCgroup>> again = JobCgroup::Create(*layout, spec, &notes);
  ASSERT_TRUE(again.ok()) << again.status().ToString();
  EXPECT_TRUE((*again)->Remove().ok());
  for (const std::string& dir : dirs) EXPECT_FALSE(std::filesystem::exists(dir)) << dir;
}

}  // namespace
}  // namespace berth::agent
