#include "agent/cgroup_layout.h"

#include <gtest/gtest.h>

namespace berth::agent {
namespace {

// This host's kind: v1 controllers mounted one per hierarchy, cgroup2 without controllers,
// the process in a nested memory cgroup.
constexpr const char* kHybridMountinfo =
    "31 23 0:28 / /sys/fs/cgroup rw,relatime - tmpfs tmpfs rw,mode=755\n"
    "32 31 0:29 / /sys/fs/cgroup/cpu rw,relatime - cgroup cgroup rw,cpu\n"
    "33 31 0:30 / /sys/fs/cgroup/cpuacct rw,relatime - cgroup cgroup rw,cpuacct\n"
    "34 31 0:31 / /sys/fs/cgroup/cpuset rw,relatime - cgroup cgroup rw,cpuset\n"
    "35 31 0:32 / /sys/fs/cgroup/memory rw,relatime - cgroup cgroup rw,memory\n"
    "37 31 0:34 / /sys/fs/cgroup/freezer rw,relatime - cgroup cgroup rw,freezer\n"
    "39 31 0:36 / /sys/fs/cgroup/pids rw,relatime - cgroup cgroup rw,pids\n"
    "40 31 0:37 / /sys/fs/cgroup/systemd rw,relatime - cgroup cgroup rw,name=systemd\n"
    "41 31 0:38 / /sys/fs/cgroup/unified rw,relatime - cgroup2 cgroup2 rw\n";
constexpr const char* kHybridCgroup =
    "9:name=systemd:/\n8:pids:/\n6:freezer:/\n4:memory:/process_api/abc\n3:cpuset:/\n"
    "2:cpuacct:/\n1:cpu:/\n0::/\n";

TEST(CgroupLayoutTest, ParsesMountinfo) {
  std::vector<MountInfo> m = ParseMountInfo(
      "36 35 98:0 /mnt1 /mnt/with\\040space rw,noatime master:1 - ext3 /dev/root rw,errors=x\n"
      "garbage\n");
  ASSERT_EQ(m.size(), 1u);
  EXPECT_EQ(m[0].root, "/mnt1");
  EXPECT_EQ(m[0].mount_point, "/mnt/with space");
  EXPECT_EQ(m[0].fs_type, "ext3");
  EXPECT_EQ(m[0].super_options, (std::vector<std::string>{"rw", "errors=x"}));
}

TEST(CgroupLayoutTest, ParsesProcCgroup) {
  std::vector<ProcCgroup> c = ParseProcCgroup("4:cpu,cpuacct:/a/b\n0::/user.slice\n");
  ASSERT_EQ(c.size(), 2u);
  EXPECT_EQ(c[0].id, 4);
  EXPECT_EQ(c[0].controllers, (std::vector<std::string>{"cpu", "cpuacct"}));
  EXPECT_EQ(c[0].path, "/a/b");
  EXPECT_TRUE(c[1].controllers.empty());
  EXPECT_EQ(c[1].path, "/user.slice");
}

TEST(CgroupLayoutTest, HybridHostIsV1WithUnifiedMount) {
  CgroupLayout l = LayoutFromProc(kHybridMountinfo, kHybridCgroup, "");
  EXPECT_EQ(l.mode, CgroupMode::kV1);
  EXPECT_EQ(l.v1_dirs.at("memory"), "/sys/fs/cgroup/memory/process_api/abc");
  EXPECT_EQ(l.v1_roots.at("memory"), "/sys/fs/cgroup/memory");
  EXPECT_EQ(l.v1_dirs.at("cpuset"), "/sys/fs/cgroup/cpuset");
  EXPECT_EQ(l.v1_dirs.at("pids"), "/sys/fs/cgroup/pids");
  EXPECT_EQ(l.v1_dirs.count("name=systemd"), 0u) << "named hierarchies are not controllers";
  EXPECT_EQ(l.unified_root, "/sys/fs/cgroup/unified");
  EXPECT_EQ(l.unified_dir, "/sys/fs/cgroup/unified");
  EXPECT_TRUE(l.v2_controllers.empty());
}

TEST(CgroupLayoutTest, CoMountedControllersShareADirectory) {
  CgroupLayout l = LayoutFromProc(
      "30 25 0:26 / /sys/fs/cgroup/cpu,cpuacct rw - cgroup cgroup rw,cpu,cpuacct\n"
      "31 25 0:27 / /sys/fs/cgroup/memory rw - cgroup cgroup rw,memory\n",
      "5:cpu,cpuacct:/system.slice/x.service\n3:memory:/system.slice/x.service\n", "");
  EXPECT_EQ(l.v1_dirs.at("cpu"), "/sys/fs/cgroup/cpu,cpuacct/system.slice/x.service");
  EXPECT_EQ(l.v1_dirs.at("cpuacct"), l.v1_dirs.at("cpu"));
  EXPECT_EQ(l.mode, CgroupMode::kV1);
  EXPECT_TRUE(l.unified_root.empty());
}

TEST(CgroupLayoutTest, V2Host) {
  CgroupLayout l = LayoutFromProc(
      "25 20 0:22 / /sys/fs/cgroup rw,nosuid - cgroup2 cgroup2 rw,nsdelegate\n",
      "0::/system.slice/berth-agent.service\n", "cpuset cpu io memory hugetlb pids rdma\n");
  EXPECT_EQ(l.mode, CgroupMode::kV2);
  EXPECT_EQ(l.unified_root, "/sys/fs/cgroup");
  EXPECT_EQ(l.unified_dir, "/sys/fs/cgroup/system.slice/berth-agent.service");
  EXPECT_TRUE(l.v2_controllers.count("memory"));
  EXPECT_TRUE(l.v1_dirs.empty());
}

TEST(CgroupLayoutTest, ContainerMountOfASubtree) {
  // A mount of the subtree /docker/x at /sys/fs/cgroup/memory: paths are relative to it.
  CgroupLayout l =
      LayoutFromProc("40 30 0:32 /docker/x /sys/fs/cgroup/memory ro - cgroup cgroup rw,memory\n",
                     "4:memory:/docker/x/inner\n", "");
  EXPECT_EQ(l.v1_dirs.at("memory"), "/sys/fs/cgroup/memory/inner");
}

TEST(CgroupLayoutTest, NoCgroups) {
  CgroupLayout l = LayoutFromProc("22 1 0:5 / /proc rw - proc proc rw\n", "", "");
  EXPECT_EQ(l.mode, CgroupMode::kNone);
  EXPECT_EQ(CgroupModeName(l.mode), "none");
}

}  // namespace
}  // namespace berth::agent
