#include "agent/job_cgroup.h"

#include <dirent.h>
#include <fcntl.h>
#include <signal.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <chrono>
#include <cstdio>
#include <ctime>
#include <set>
#include <sstream>
#include <thread>

#include "agent/cpu_list.h"
#include "agent/file_util.h"
#include "common/strings.h"

namespace berth::agent {

namespace {

constexpr const char* kV1Controllers[] = {"memory", "cpuset", "cpu", "pids", "cpuacct", "freezer"};

bool Exists(const std::string& path) {
  return access(path.c_str(), F_OK) == 0;
}

std::string ReadTrimmed(const std::string& path) {
  Result<std::string> text = ReadFile(path);
  return text.ok() ? std::string(TrimWhitespace(*text)) : std::string();
}

// The value of `key` in a "key value" per line file (memory.events, cpu.stat, oom_control).
int64_t ReadKeyed(const std::string& path, const std::string& key) {
  Result<std::string> text = ReadFile(path);
  if (!text.ok()) return -1;
  std::istringstream in(*text);
  std::string k;
  int64_t v = 0;
  while (in >> k >> v) {
    if (k == key) return v;
  }
  return -1;
}

int64_t ReadInt(const std::string& path) {
  std::string text = ReadTrimmed(path);
  if (text.empty()) return -1;
  return std::strtoll(text.c_str(), nullptr, 10);
}

Status MakeDir(const std::string& dir) {
  if (mkdir(dir.c_str(), 0755) != 0 && errno != EEXIST) return ErrnoStatus("mkdir " + dir, errno);
  return Status::Ok();
}

// The groups below `dir` (a job's container gets one of its own: docs/containers.md), deepest
// first.
std::vector<std::string> SubGroups(const std::string& dir) {
  std::vector<std::string> out;
  DIR* d = opendir(dir.c_str());
  if (d == nullptr) return out;
  std::vector<std::string> children;
  while (dirent* e = readdir(d)) {
    std::string name = e->d_name;
    if (e->d_type == DT_DIR && name != "." && name != "..") children.push_back(dir + "/" + name);
  }
  closedir(d);
  for (const std::string& c : children) {
    std::vector<std::string> below = SubGroups(c);
    out.insert(out.end(), below.begin(), below.end());
    out.push_back(c);
  }
  return out;
}

// The processes of the group and of the groups below it.
std::vector<pid_t> ReadPids(const std::string& dir) {
  std::vector<pid_t> pids;
  std::vector<std::string> dirs = SubGroups(dir);
  dirs.push_back(dir);
  for (const std::string& d : dirs) {
    Result<std::string> text = ReadFile(d + "/cgroup.procs");
    if (!text.ok()) continue;
    std::istringstream in(*text);
    for (pid_t p; in >> p;) pids.push_back(p);
  }
  return pids;
}

// Removes a directory of the group (the groups below it first), waiting up to ~2 s for its last
// processes to leave.
Status RemoveDir(const std::string& dir) {
  for (const std::string& sub : SubGroups(dir)) rmdir(sub.c_str());
  for (int i = 0; i < 100; ++i) {
    if (rmdir(dir.c_str()) == 0 || errno == ENOENT) return Status::Ok();
    if (errno != EBUSY) return ErrnoStatus("rmdir " + dir, errno);
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
  }
  return ErrnoStatus("rmdir " + dir, EBUSY);
}

// A group left by an earlier supervisor of the same attempt: kill what is in it, remove it.
Status ReplaceStale(const std::string& dir) {
  if (!Exists(dir)) return Status::Ok();
  if (Exists(dir + "/cgroup.kill")) (void)WriteControlFile(dir + "/cgroup.kill", "1");
  for (pid_t p : ReadPids(dir)) kill(p, SIGKILL);
  return RemoveDir(dir);
}

// Groups of attempts whose supervisor was killed stay behind. An empty one older than this can
// belong to no starting job: a job joins its group milliseconds after creating it.
constexpr int64_t kStaleSeconds = 60;

void SweepStaleGroups(const std::string& parent) {
  DIR* d = opendir(parent.c_str());
  if (d == nullptr) return;
  std::vector<std::string> stale;
  time_t now = time(nullptr);
  while (dirent* e = readdir(d)) {
    std::string name = e->d_name;
    if (e->d_type != DT_DIR || name.rfind("job_", 0) != 0) continue;
    std::string dir = parent + "/" + name;
    struct stat st {};
    if (stat(dir.c_str(), &st) != 0 || now - st.st_ctime < kStaleSeconds) continue;
    if (ReadPids(dir).empty()) stale.push_back(dir);
  }
  closedir(d);
  for (const std::string& dir : stale) rmdir(dir.c_str());
}

std::string V1Base(const CgroupLayout& layout, const std::string& controller,
                   const JobCgroupSpec& spec) {
  const auto& base = spec.parent_at_root ? layout.v1_roots : layout.v1_dirs;
  return base.at(controller) + "/" + spec.parent;
}

std::string UnifiedBase(const CgroupLayout& layout, const JobCgroupSpec& spec) {
  if (layout.mode == CgroupMode::kV2 || spec.parent_at_root) {
    return layout.unified_root + "/" + spec.parent;
  }
  return layout.unified_dir + "/" + spec.parent;
}

// v1 cpuset groups start with empty cpuset.cpus/mems, and a process cannot join a group until
// both are set: fill the parent's in from its own parent.
Status InitV1CpusetParent(const std::string& parent) {
  std::string above = parent.substr(0, parent.rfind('/'));
  const std::pair<const char*, const char*> files[] = {{"cpuset.cpus", "cpuset.effective_cpus"},
                                                       {"cpuset.mems", "cpuset.effective_mems"}};
  for (const auto& [file, effective] : files) {
    if (!ReadTrimmed(parent + "/" + file).empty()) continue;
    std::string value = ReadTrimmed(above + "/" + file);
    if (value.empty()) value = ReadTrimmed(above + "/" + effective);
    BERTH_RETURN_IF_ERROR(WriteControlFile(parent + "/" + file, value));
  }
  return Status::Ok();
}

// cgroup v2: controllers must be enabled in every ancestor's cgroup.subtree_control.
void EnableV2Controllers(const CgroupLayout& layout, const std::string& parent) {
  for (const std::string& dir : {layout.unified_root, parent}) {
    for (const char* c : {"cpuset", "cpu", "memory", "pids"}) {
      if (layout.v2_controllers.count(c)) {
        (void)WriteControlFile(dir + "/cgroup.subtree_control", std::string("+") + c);
      }
    }
  }
}

Status SetV1Limits(const std::string& controller, const std::string& dir, const std::string& parent,
                   const JobCgroupSpec& spec, std::vector<std::string>* notes) {
  if (controller == "memory" && spec.memory_bytes > 0) {
    std::string bytes = std::to_string(spec.memory_bytes);
    BERTH_RETURN_IF_ERROR(WriteControlFile(dir + "/memory.limit_in_bytes", bytes));
    if (Exists(dir + "/memory.memsw.limit_in_bytes")) {
      BERTH_RETURN_IF_ERROR(WriteControlFile(dir + "/memory.memsw.limit_in_bytes", bytes));
    } else {
      notes->push_back("swap is not limited (no swap accounting: memory.memsw missing)");
    }
  } else if (controller == "cpuset") {
    std::string cpus =
        spec.cpus.empty() ? ReadTrimmed(parent + "/cpuset.cpus") : FormatCpuList(spec.cpus);
    BERTH_RETURN_IF_ERROR(WriteControlFile(dir + "/cpuset.cpus", cpus));
    BERTH_RETURN_IF_ERROR(
        WriteControlFile(dir + "/cpuset.mems", ReadTrimmed(parent + "/cpuset.mems")));
  } else if (controller == "cpu" && spec.cpu_quota_millis > 0) {
    BERTH_RETURN_IF_ERROR(WriteControlFile(dir + "/cpu.cfs_period_us", "100000"));
    BERTH_RETURN_IF_ERROR(
        WriteControlFile(dir + "/cpu.cfs_quota_us", std::to_string(spec.cpu_quota_millis * 100)));
  } else if (controller == "pids" && spec.pids_max > 0) {
    BERTH_RETURN_IF_ERROR(WriteControlFile(dir + "/pids.max", std::to_string(spec.pids_max)));
  }
  return Status::Ok();
}

Status SetV2Limits(const CgroupLayout& layout, const std::string& dir, const JobCgroupSpec& spec,
                   std::vector<std::string>* notes) {
  auto has = [&](const char* c) { return layout.v2_controllers.count(c) > 0; };
  if (spec.memory_bytes > 0) {
    if (!has("memory")) {
      notes->push_back("memory limit (no memory controller)");
    } else {
      BERTH_RETURN_IF_ERROR(
          WriteControlFile(dir + "/memory.max", std::to_string(spec.memory_bytes)));
      if (Exists(dir + "/memory.swap.max")) {
        BERTH_RETURN_IF_ERROR(WriteControlFile(dir + "/memory.swap.max", "0"));
      }
    }
  }
  if (!spec.cpus.empty() || spec.cpu_quota_millis > 0) {
    if (has("cpuset") && !spec.cpus.empty()) {
      BERTH_RETURN_IF_ERROR(WriteControlFile(dir + "/cpuset.cpus", FormatCpuList(spec.cpus)));
    }
    if (has("cpu")) {
      const int64_t quota = spec.cpu_quota_millis > 0
                                ? spec.cpu_quota_millis * 100
                                : 100000 * static_cast<int64_t>(spec.cpus.size());
      BERTH_RETURN_IF_ERROR(WriteControlFile(dir + "/cpu.max", std::to_string(quota) + " 100000"));
    } else if (spec.cpu_quota_millis > 0) {
      notes->push_back("CPU quota (no cpu controller)");
    }
    if (!has("cpuset") && !has("cpu")) notes->push_back("CPU limit (no cpuset or cpu controller)");
  }
  if (spec.pids_max > 0) {
    if (has("pids")) {
      BERTH_RETURN_IF_ERROR(WriteControlFile(dir + "/pids.max", std::to_string(spec.pids_max)));
    } else {
      notes->push_back("process limit (no pids controller)");
    }
  }
  return Status::Ok();
}

}  // namespace

std::string JobCgroupName(uint32_t job_id, int32_t attempt, const std::string& job_dir) {
  uint32_t hash = 2166136261u;  // FNV-1a
  for (unsigned char c : job_dir) hash = (hash ^ c) * 16777619u;
  char tag[9];
  std::snprintf(tag, sizeof(tag), "%08x", hash);
  return "job_" + std::to_string(job_id) + "_" + std::to_string(attempt) + "_" + tag;
}

std::string CpusetParentDir(const CgroupLayout& layout, const JobCgroupSpec& spec) {
  if (layout.mode == CgroupMode::kV2) {
    return layout.v2_controllers.count("cpuset") ? UnifiedBase(layout, spec) : "";
  }
  if (layout.mode == CgroupMode::kV1 && layout.v1_dirs.count("cpuset")) {
    return V1Base(layout, "cpuset", spec);
  }
  return "";
}

Result<CpusetView> ReadCpusetView(const CgroupLayout& layout, const JobCgroupSpec& spec) {
  std::string parent = CpusetParentDir(layout, spec);
  if (parent.empty()) return Status::NotFound("no cpuset controller");
  BERTH_RETURN_IF_ERROR(MakeDir(parent));
  SweepStaleGroups(parent);
  CpusetView view;
  std::string allowed_file = "/cpuset.cpus";
  if (layout.mode == CgroupMode::kV2) {
    EnableV2Controllers(layout, parent);
    allowed_file = "/cpuset.cpus.effective";
  } else {
    BERTH_RETURN_IF_ERROR(InitV1CpusetParent(parent));
  }
  BERTH_ASSIGN_OR_RETURN(view.allowed, ParseCpuList(ReadTrimmed(parent + allowed_file)));
  DIR* d = opendir(parent.c_str());
  if (d == nullptr) return ErrnoStatus("opendir " + parent, errno);
  while (dirent* e = readdir(d)) {
    std::string name = e->d_name;
    if (e->d_type != DT_DIR || name == "." || name == ".." || name == spec.name) continue;
    Result<std::vector<int32_t>> cpus =
        ParseCpuList(ReadTrimmed(parent + "/" + name + "/cpuset.cpus"));
    if (cpus.ok()) view.taken.insert(view.taken.end(), cpus->begin(), cpus->end());
  }
  closedir(d);
  return view;
}

Result<std::unique_ptr<JobCgroup>> JobCgroup::Create(const CgroupLayout& layout,
                                                     const JobCgroupSpec& spec,
                                                     std::vector<std::string>* notes) {
  std::unique_ptr<JobCgroup> cg(new JobCgroup());
  cg->mode_ = layout.mode;
  auto add_dir = [&](const std::string& parent, const std::string& dir) -> Status {
    BERTH_RETURN_IF_ERROR(MakeDir(parent));
    SweepStaleGroups(parent);
    BERTH_RETURN_IF_ERROR(ReplaceStale(dir));
    if (mkdir(dir.c_str(), 0755) != 0) return ErrnoStatus("mkdir " + dir, errno);
    cg->dirs_.push_back(dir);
    return Status::Ok();
  };
  Status s;
  if (layout.mode == CgroupMode::kV1) {
    std::set<std::string> made;
    for (const char* c : kV1Controllers) {
      if (std::string(c) == "cpuset" && !spec.v1_cpuset) continue;
      if (std::string(c) == "cpu" && spec.cpu_quota_millis <= 0) continue;  // only for a quota
      if (!layout.v1_dirs.count(c)) {
        notes->push_back(std::string("no cgroup v1 ") + c + " controller");
        continue;
      }
      std::string parent = V1Base(layout, c, spec);
      std::string dir = parent + "/" + spec.name;
      if (made.insert(dir).second) {
        s = add_dir(parent, dir);
        if (s.ok() && std::string(c) == "cpuset") s = InitV1CpusetParent(parent);
      }
      if (s.ok()) s = SetV1Limits(c, dir, parent, spec, notes);
      if (!s.ok()) break;
      std::string name = c;
      if (name == "memory") cg->memory_dir_ = dir;
      if (name == "cpuacct") cg->cpu_dir_ = dir;
      if (name == "freezer") cg->freeze_dir_ = dir;
      if (cg->procs_dir_.empty() || name == "freezer") cg->procs_dir_ = dir;
    }
  }
  if (s.ok() && !layout.unified_root.empty()) {
    std::string parent = UnifiedBase(layout, spec);
    std::string dir = parent + "/" + spec.name;
    if (layout.mode == CgroupMode::kV2) EnableV2Controllers(layout, parent);
    s = add_dir(parent, dir);
    if (s.ok() && layout.mode == CgroupMode::kV2) {
      s = SetV2Limits(layout, dir, spec, notes);
      cg->memory_dir_ = dir;
      cg->cpu_dir_ = dir;
    }
    if (s.ok()) {
      cg->procs_dir_ = dir;
      if (Exists(dir + "/cgroup.freeze")) {
        cg->freeze_dir_ = dir;
        cg->v2_freeze_ = true;
      }
      if (Exists(dir + "/cgroup.kill")) cg->kill_dir_ = dir;
    }
  }
  if (s.ok()) s = cg->OpenJoinFiles();
  if (!s.ok()) {
    (void)cg->Remove();
    return s;
  }
  return cg;
}

// The job's first process joins each group by writing "0" while it is still single-threaded.
// In a v1 hierarchy it writes to `tasks`: moving only the calling thread skips the global
// threadgroup lock, whose write side waits an RCU grace period (10-20 ms per start) when
// `cgroup.procs` is used. A v2 group has no `tasks`: the job is cloned straight into it
// (CLONE_INTO_CGROUP, through v2_dir_fd), and its cgroup.procs is the fallback for kernels
// before 5.7.
Status JobCgroup::OpenJoinFiles() {
  for (size_t i = 0; i < dirs_.size(); ++i) {
    bool v1 = Exists(dirs_[i] + "/tasks");
    std::string procs = dirs_[i] + (v1 ? "/tasks" : "/cgroup.procs");
    if (!v1 && v2_dir_fd_ < 0) {
      v2_dir_fd_ = open(dirs_[i].c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC);
      v2_join_index_ = static_cast<int>(join_fds_.size());
    }
    int fd = open(procs.c_str(), O_WRONLY | O_CLOEXEC);
    if (fd < 0) return ErrnoStatus("open " + procs, errno);
    join_fds_.push_back(fd);
  }
  return Status::Ok();
}

JobCgroup::~JobCgroup() {
  for (int fd : join_fds_) close(fd);
  if (v2_dir_fd_ >= 0) close(v2_dir_fd_);
}

std::vector<pid_t> JobCgroup::Pids() const {
  return ReadPids(procs_dir_);
}

Status JobCgroup::Freeze(bool frozen) {
  if (freeze_dir_.empty()) return Status::Unavailable("no freezer");
  std::string want = v2_freeze_ ? (frozen ? "1" : "0") : (frozen ? "FROZEN" : "THAWED");
  std::string file = freeze_dir_ + (v2_freeze_ ? "/cgroup.freeze" : "/freezer.state");
  BERTH_RETURN_IF_ERROR(WriteControlFile(file, want));
  if (!frozen) return Status::Ok();
  // Freezing is asynchronous: wait (briefly) until every task has stopped.
  for (int i = 0; i < 100; ++i) {
    bool done = v2_freeze_ ? ReadKeyed(freeze_dir_ + "/cgroup.events", "frozen") == 1
                           : ReadTrimmed(file) == "FROZEN";
    if (done) return Status::Ok();
    std::this_thread::sleep_for(std::chrono::milliseconds(10));
  }
  return Status::Unavailable("the group did not freeze within 1 s");
}

Status JobCgroup::Signal(int signal) {
  // A freeze that timed out still leaves the group freezing: thaw in any case.
  (void)Freeze(true);
  for (pid_t p : Pids()) kill(p, signal);
  if (!freeze_dir_.empty()) return Freeze(false);
  return Status::Ok();
}

Status JobCgroup::Kill() {
  if (!kill_dir_.empty()) return WriteControlFile(kill_dir_ + "/cgroup.kill", "1");
  for (int round = 0; round < 50; ++round) {
    std::vector<pid_t> pids = Pids();
    if (pids.empty()) return Status::Ok();
    (void)Signal(SIGKILL);
    std::this_thread::sleep_for(std::chrono::milliseconds(10));
  }
  return Status::Unavailable("processes survived SIGKILL");
}

int64_t JobCgroup::OomKills() const {
  if (memory_dir_.empty()) return 0;
  if (mode_ == CgroupMode::kV2) {
    // memory.events counts the whole subtree.
    int64_t n = ReadKeyed(memory_dir_ + "/memory.events", "oom_kill");
    return n < 0 ? 0 : n;
  }
  // v1 counts a kill only in the victim's own group: add the groups below (a container's).
  int64_t total = 0;
  std::vector<std::string> dirs = SubGroups(memory_dir_);
  dirs.push_back(memory_dir_);
  for (const std::string& d : dirs)
    total += std::max<int64_t>(0, ReadKeyed(d + "/memory.oom_control", "oom_kill"));
  return total;
}

double JobCgroup::CpuSeconds() const {
  if (cpu_dir_.empty()) return -1;
  if (mode_ == CgroupMode::kV2) {
    int64_t usec = ReadKeyed(cpu_dir_ + "/cpu.stat", "usage_usec");
    return usec < 0 ? -1 : static_cast<double>(usec) / 1e6;
  }
  int64_t ns = ReadInt(cpu_dir_ + "/cpuacct.usage");
  return ns < 0 ? -1 : static_cast<double>(ns) / 1e9;
}

int64_t JobCgroup::PeakMemoryBytes() const {
  if (memory_dir_.empty()) return -1;
  return ReadInt(memory_dir_ +
                 (mode_ == CgroupMode::kV2 ? "/memory.peak" : "/memory.max_usage_in_bytes"));
}

Status JobCgroup::Remove() {
  for (int fd : join_fds_) close(fd);
  join_fds_.clear();
  if (v2_dir_fd_ >= 0) close(v2_dir_fd_);
  v2_dir_fd_ = -1;
  v2_join_index_ = -1;
  Status first;
  for (auto it = dirs_.rbegin(); it != dirs_.rend(); ++it) {
    Status s = RemoveDir(*it);
    if (first.ok() && !s.ok()) first = s;
  }
  dirs_.clear();
  return first;
}

}  // namespace berth::agent
