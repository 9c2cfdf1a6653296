#include "agent/cgroup_layout.h"

#include <cstdlib>
#include <sstream>

#include "agent/file_util.h"
#include "common/strings.h"

namespace berth::agent {

namespace {

std::vector<std::string> SplitToStrings(std::string_view s, char sep) {
  std::vector<std::string> out;
  for (std::string_view part : Split(s, sep)) out.emplace_back(part);
  return out;
}

// mountinfo escapes space, tab, newline and backslash as \ooo.
std::string Unescape(std::string_view s) {
  std::string out;
  for (size_t i = 0; i < s.size(); ++i) {
    if (s[i] == '\\' && i + 3 < s.size()) {
      std::string_view oct = s.substr(i + 1, 3);
      if (oct.find_first_not_of("01234567") == std::string_view::npos) {
        out += static_cast<char>(std::strtol(std::string(oct).c_str(), nullptr, 8));
        i += 3;
        continue;
      }
    }
    out += s[i];
  }
  return out;
}

// The directory of `path` (a cgroup path from /proc/self/cgroup) in a hierarchy mounted at
// `mount_point` whose mounted subtree is `root`.
std::string CgroupDir(const std::string& mount_point, const std::string& root,
                      const std::string& path) {
  std::string rel = path;
  if (root != "/" && rel.compare(0, root.size(), root) == 0) rel = rel.substr(root.size());
  if (rel == "/") rel.clear();
  return mount_point + rel;
}

}  // namespace

std::vector<MountInfo> ParseMountInfo(std::string_view text) {
  std::vector<MountInfo> mounts;
  for (std::string_view line : Split(text, '\n')) {
    std::vector<std::string> fields;
    std::istringstream in{std::string(line)};
    for (std::string f; in >> f;) fields.push_back(f);
    // ID PARENT MAJ:MIN ROOT MOUNT_POINT OPTIONS [OPTIONAL...] - FSTYPE SOURCE SUPER_OPTIONS
    if (fields.size() < 8) continue;
    size_t dash = 6;
    while (dash < fields.size() && fields[dash] != "-") ++dash;
    if (dash + 1 >= fields.size()) continue;
    MountInfo m;
    m.root = Unescape(fields[3]);
    m.mount_point = Unescape(fields[4]);
    m.fs_type = fields[dash + 1];
    if (dash + 3 < fields.size()) m.super_options = SplitToStrings(fields[dash + 3], ',');
    mounts.push_back(std::move(m));
  }
  return mounts;
}

std::vector<ProcCgroup> ParseProcCgroup(std::string_view text) {
  std::vector<ProcCgroup> out;
  for (std::string_view line : Split(text, '\n')) {
    size_t c1 = line.find(':');
    if (c1 == std::string_view::npos) continue;
    size_t c2 = line.find(':', c1 + 1);
    if (c2 == std::string_view::npos) continue;
    ProcCgroup pc;
    pc.id = std::atoi(std::string(line.substr(0, c1)).c_str());
    std::string_view controllers = line.substr(c1 + 1, c2 - c1 - 1);
    if (!controllers.empty()) pc.controllers = SplitToStrings(controllers, ',');
    pc.path = std::string(line.substr(c2 + 1));
    out.push_back(std::move(pc));
  }
  return out;
}

std::string_view CgroupModeName(CgroupMode mode) {
  switch (mode) {
    case CgroupMode::kV1:
      return "v1";
    case CgroupMode::kV2:
      return "v2";
    case CgroupMode::kNone:
      break;
  }
  return "none";
}

CgroupLayout LayoutFromProc(std::string_view mountinfo, std::string_view proc_cgroup,
                            std::string_view v2_root_controllers) {
  CgroupLayout layout;
  std::vector<ProcCgroup> mine = ParseProcCgroup(proc_cgroup);
  for (const MountInfo& m : ParseMountInfo(mountinfo)) {
    if (m.fs_type == "cgroup2") {
      if (!layout.unified_root.empty()) continue;  // the first mount wins
      for (const ProcCgroup& pc : mine) {
        if (pc.id == 0 && pc.controllers.empty()) {
          layout.unified_root = m.mount_point;
          layout.unified_dir = CgroupDir(m.mount_point, m.root, pc.path);
        }
      }
      continue;
    }
    if (m.fs_type != "cgroup") continue;
    for (const ProcCgroup& pc : mine) {
      bool all_mounted = !pc.controllers.empty();
      for (const std::string& c : pc.controllers) {
        bool found = false;
        for (const std::string& o : m.super_options) found = found || o == c;
        all_mounted = all_mounted && found;
      }
      if (!all_mounted) continue;
      for (const std::string& c : pc.controllers) {
        // Named hierarchies ("name=systemd") carry no resource controller.
        if (c.rfind("name=", 0) == 0 || layout.v1_roots.count(c)) continue;
        layout.v1_roots[c] = m.mount_point;
        layout.v1_dirs[c] = CgroupDir(m.mount_point, m.root, pc.path);
      }
    }
  }
  if (!layout.unified_root.empty()) {
    std::istringstream in{std::string(v2_root_controllers)};
    for (std::string c; in >> c;) layout.v2_controllers.insert(c);
  }
  if (layout.v2_controllers.count("memory")) {
    layout.mode = CgroupMode::kV2;
  } else if (layout.v1_dirs.count("memory") || layout.v1_dirs.count("cpuset") ||
             layout.v1_dirs.count("pids")) {
    layout.mode = CgroupMode::kV1;
  }
  return layout;
}

Result<CgroupLayout> DetectCgroupLayout() {
  BERTH_ASSIGN_OR_RETURN(std::string mountinfo, ReadFile("/proc/self/mountinfo"));
  BERTH_ASSIGN_OR_RETURN(std::string proc_cgroup, ReadFile("/proc/self/cgroup"));
  CgroupLayout first = LayoutFromProc(mountinfo, proc_cgroup, "");
  std::string controllers;
  if (!first.unified_root.empty()) {
    Result<std::string> text = ReadFile(first.unified_root + "/cgroup.controllers");
    if (text.ok()) controllers = *text;
  }
  return LayoutFromProc(mountinfo, proc_cgroup, controllers);
}

}  // namespace berth::agent
