// Where the cgroup hierarchies are and where this process sits in them: read from
// /proc/self/mountinfo (the mounts: v1 hierarchies of type "cgroup" with their controllers in the
// super options, the cgroup2 hierarchy of type "cgroup2") and /proc/self/cgroup (this process's
// path in each hierarchy).
//
// The mode berth uses for jobs: "v2" when the cgroup2 hierarchy has the memory controller (a
// cgroup-v2 host); "v1" when the v1 hierarchies have memory, cpuset or pids (a v1 or hybrid host:
// the cgroup2 mount, if any, then serves only for cgroup.kill, cgroup.freeze and the process
// list); "none" otherwise.
//
// Thread safety: the parse functions are pure; DetectCgroupLayout reads /proc and /sys only.
#ifndef BERTH_AGENT_CGROUP_LAYOUT_H_
#define BERTH_AGENT_CGROUP_LAYOUT_H_

#include <map>
#include <set>
#include <string>
#include <string_view>
#include <vector>

#include "common/status.h"

namespace berth::agent {

// One line of /proc/self/mountinfo (the fields berth needs; octal escapes like "\040" decoded).
struct MountInfo {
  std::string root;  // the mounted subtree's path within the filesystem
  std::string mount_point;
  std::string fs_type;
  std::vector<std::string> super_options;  // e.g. {"rw", "cpu", "cpuacct"}
};
std::vector<MountInfo> ParseMountInfo(std::string_view text);

// One line of /proc/self/cgroup: "ID:CONTROLLERS:PATH" ("0::/PATH" for cgroup2).
struct ProcCgroup {
  int id = 0;
  std::vector<std::string> controllers;  // e.g. {"cpu", "cpuacct"}, {"name=systemd"}, {} for v2
  std::string path;
};
std::vector<ProcCgroup> ParseProcCgroup(std::string_view text);

enum class CgroupMode { kNone, kV1, kV2 };
std::string_view CgroupModeName(CgroupMode mode);  // "none", "v1", "v2"

struct CgroupLayout {
  CgroupMode mode = CgroupMode::kNone;
  // v1: controller -> {hierarchy root (mount point), this process's cgroup directory}. Controllers
  // mounted together ("cpu,cpuacct") map to the same directories.
  std::map<std::string, std::string> v1_roots;
  std::map<std::string, std::string> v1_dirs;
  // cgroup2: the mount point and this process's cgroup directory ("" without a cgroup2 mount),
  // and the controllers the cgroup2 root offers (its cgroup.controllers).
  std::string unified_root;
  std::string unified_dir;
  std::set<std::string> v2_controllers;
};

// The layout from the texts of /proc/self/mountinfo, /proc/self/cgroup and the cgroup2 root's
// cgroup.controllers.
CgroupLayout LayoutFromProc(std::string_view mountinfo, std::string_view proc_cgroup,
                            std::string_view v2_root_controllers);

// The layout of this process on this host.
Result<CgroupLayout> DetectCgroupLayout();

}  // namespace berth::agent

#endif  // BERTH_AGENT_CGROUP_LAYOUT_H_
