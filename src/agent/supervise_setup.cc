// Preparing a job attempt: see supervise_internal.h.
#include <fcntl.h>
#include <grp.h>
#include <pwd.h>
#include <sched.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstdlib>
#include <filesystem>

#include "agent/cgroup_layout.h"
#include "agent/cpu_list.h"
#include "agent/file_util.h"
#include "agent/output_path.h"
#include "agent/supervise_internal.h"
#include "agent/supervisor.h"

namespace berth::agent {

namespace {

constexpr int64_t kMiB = 1024 * 1024;

int64_t EnvInt(const char* name, int64_t fallback) {
  const char* v = std::getenv(name);
  if (v == nullptr || *v == '\0') return fallback;
  char* end = nullptr;
  long long n = std::strtoll(v, &end, 10);
  return (*end == '\0' && n > 0) ? n : fallback;
}

bool EnvFlag(const char* name) {
  const char* v = std::getenv(name);
  return v != nullptr && (std::string(v) == "1" || std::string(v) == "true");
}

std::string ShortHostname() {
  char buf[256] = {};
  if (gethostname(buf, sizeof(buf) - 1) != 0) return "localhost";
  std::string name = buf;
  return name.substr(0, name.find('.'));
}

// The passwd entry of `uid`; kNotFound when there is none.
Result<JobUser> LookUpUser(uid_t uid) {
  std::vector<char> buf(16384);
  passwd pw{};
  passwd* found = nullptr;
  int rc;
  while ((rc = getpwuid_r(uid, &pw, buf.data(), buf.size(), &found)) == ERANGE) {
    buf.resize(buf.size() * 2);
  }
  if (rc != 0 || found == nullptr) {
    return Status::NotFound("uid " + std::to_string(uid) + " has no passwd entry on this node");
  }
  JobUser user;
  user.name = pw.pw_name;
  user.uid = pw.pw_uid;
  user.gid = pw.pw_gid;
  user.home = pw.pw_dir;
  user.shell = pw.pw_shell;
  return user;
}

std::vector<gid_t> GroupsOf(const std::string& name, gid_t gid) {
  int n = 64;
  std::vector<gid_t> groups(n);
  while (getgrouplist(name.c_str(), gid, groups.data(), &n) < 0) groups.resize(n);
  groups.resize(n);
  return groups;
}

std::vector<int32_t> AffinityCpus() {
  std::vector<int32_t> cpus;
  cpu_set_t set;
  CPU_ZERO(&set);
  if (sched_getaffinity(0, sizeof(set), &set) == 0) {
    for (int i = 0; i < CPU_SETSIZE; ++i) {
      if (CPU_ISSET(i, &set)) cpus.push_back(i);
    }
  }
  return cpus;
}

// An exclusive flock on a file, released when the object goes.
class FileLock {
 public:
  explicit FileLock(const std::string& path)
      : fd_(open(path.c_str(), O_WRONLY | O_CREAT | O_CLOEXEC | O_NOFOLLOW, 0600)) {
    if (fd_ >= 0) {
      while (flock(fd_, LOCK_EX) != 0 && errno == EINTR) {
      }
    }
  }
  ~FileLock() {
    if (fd_ >= 0) close(fd_);
  }
  FileLock(const FileLock&) = delete;
  FileLock& operator=(const FileLock&) = delete;

 private:
  int fd_;
};

}  // namespace

SuperviseOptions SuperviseOptions::FromEnvironment() {
  SuperviseOptions o;
  o.use_cgroups = !EnvFlag("BERTH_SUPERVISE_NO_CGROUPS");
  if (const char* p = std::getenv("BERTH_CGROUP_PARENT"); p != nullptr && *p != '\0') {
    o.cgroup_parent = p;
  }
  o.cgroup_parent_at_root = EnvFlag("BERTH_CGROUP_AT_ROOT");
  o.default_pids_max = EnvInt("BERTH_PIDS_MAX", o.default_pids_max);
  o.gpu_sample_seconds = EnvInt("BERTH_GPU_SAMPLE_SECONDS", o.gpu_sample_seconds);
  return o;
}

Status Supervisor::LoadSpec() {
  BERTH_ASSIGN_OR_RETURN(spec_, ReadSpec(dir_));
  if (spec_.node_index >= 0 && static_cast<size_t>(spec_.node_index) < spec_.node_names.size()) {
    node_name_ = spec_.node_names[spec_.node_index];
  } else {
    node_name_ = ShortHostname();
  }
  return Status::Ok();
}

Status Supervisor::ResolveUser() {
  bool root = geteuid() == 0;
  uid_t uid = root ? spec_.uid : getuid();
  Result<JobUser> user = LookUpUser(uid);
  if (!user.ok()) {
    if (root) return user.status();
    user = JobUser{std::to_string(uid), uid, getgid(), "/", "/bin/sh"};
  }
  user_ = *user;
  if (!root) {
    user_.gid = getgid();
    if (spec_.uid != uid) {
      notes_.push_back("not root: ran as " + user_.name + " (uid " + std::to_string(uid) +
                       "), not as " + (spec_.user.empty() ? "uid" : spec_.user) + " (uid " +
                       std::to_string(spec_.uid) + ")");
    }
    return Status::Ok();
  }
  if (!spec_.user.empty() && spec_.user != user_.name) {
    return Status::InvalidArgument("uid " + std::to_string(uid) + " is '" + user_.name +
                                   "' on this node, not '" + spec_.user + "'");
  }
  // The job's gid as sent (sbatch --gid); 0 from a non-root user means "not given".
  if (spec_.gid != 0 || uid == 0) user_.gid = spec_.gid;
  switch_user_ = true;
  groups_ = GroupsOf(user_.name, user_.gid);
  return Status::Ok();
}

std::vector<int32_t> Supervisor::CpusOfOtherJobs() const {
  std::vector<int32_t> taken;
  std::error_code ec;
  std::filesystem::path jobs_dir = std::filesystem::path(dir_).parent_path();
  for (const auto& entry : std::filesystem::directory_iterator(jobs_dir, ec)) {
    std::string other = entry.path().string();
    if (other == dir_ || !entry.is_directory(ec) || !SupervisorRunning(other)) continue;
    Result<std::string> text = ReadFile(other + "/cpus");
    if (!text.ok()) continue;
    Result<std::vector<int32_t>> cpus = ParseCpuList(*text);
    if (cpus.ok()) taken.insert(taken.end(), cpus->begin(), cpus->end());
  }
  return taken;
}

Status Supervisor::SetUpLimits() {
  // One job at a time chooses its CPUs on this node.
  FileLock lock(std::filesystem::path(dir_).parent_path().string() + "/.cpus.lock");
  if (!options_.use_cgroups) {
    notes_.push_back("cgroups turned off (BERTH_SUPERVISE_NO_CGROUPS)");
    SetUpRlimits();
  } else if (geteuid() != 0) {
    notes_.push_back("not root: no cgroups");
    SetUpRlimits();
  } else {
    BERTH_RETURN_IF_ERROR(SetUpCgroups());
  }
  return WriteFileAtomic(dir_ + "/cpus", FormatCpuList(cpus_) + "\n");
}

Status Supervisor::SetUpCgroups() {
  Result<CgroupLayout> layout =
      options_.layout != nullptr ? *options_.layout : DetectCgroupLayout();
  if (!layout.ok() || layout->mode == CgroupMode::kNone) {
    notes_.push_back("no cgroups on this node");
    SetUpRlimits();
    return Status::Ok();
  }
  JobCgroupSpec cs;
  cs.parent = options_.cgroup_parent;
  cs.parent_at_root = options_.cgroup_parent_at_root;
  cs.name = JobCgroupName(spec_.job_id, spec_.attempt, dir_);
  cs.memory_bytes = spec_.mem_mib > 0 ? spec_.mem_mib * kMiB : 0;
  cs.pids_max = spec_.pids_max > 0 ? spec_.pids_max : options_.default_pids_max;
  cs.cpu_quota_millis = spec_.cpu_quota_millis;
  int32_t want = std::max(1, spec_.cpus);
  const char* cpuset_env = std::getenv("BERTH_CPUSET_CGROUP");
  cs.v1_cpuset = cpuset_env != nullptr && std::string(cpuset_env) == "1";
  Result<CpusetView> view = layout->mode == CgroupMode::kV1 && !cs.v1_cpuset
                                ? Result<CpusetView>(Status::NotFound(
                                      "CPU affinity instead of a v1 cpuset group (faster start)"))
                                : ReadCpusetView(*layout, cs);
  if (view.ok()) {
    cpus_ = ChooseCpus(view->allowed, view->taken, want);
    for (int32_t c : cpus_) {
      if (std::find(view->taken.begin(), view->taken.end(), c) != view->taken.end()) {
        notes_.push_back("CPUs " + FormatCpuList(cpus_) + " shared with other jobs");
        break;
      }
    }
    cs.cpus = cpus_;
  } else {
    cpus_ = ChooseCpus(AffinityCpus(), CpusOfOtherJobs(), want);
    notes_.push_back("CPU set by affinity only (" + view.status().message() + ")");
  }
  if (static_cast<int32_t>(cpus_.size()) < want) {
    notes_.push_back("asked for " + std::to_string(want) + " CPUs, the node has " +
                     std::to_string(cpus_.size()));
  }
  BERTH_ASSIGN_OR_RETURN(cgroup_, JobCgroup::Create(*layout, cs, &notes_));
  cgroup2_root_ = layout->unified_root;
  if (!view.ok()) cpuset_by_affinity_ = true;
  return Status::Ok();
}

void Supervisor::SetUpRlimits() {
  if (spec_.mem_mib > 0) {
    rlimit_data_bytes_ = spec_.mem_mib * kMiB;
    notes_.push_back("memory limit per process only (RLIMIT_DATA), no OOM detection");
  }
  cpus_ = ChooseCpus(AffinityCpus(), CpusOfOtherJobs(), std::max(1, spec_.cpus));
  cpuset_by_affinity_ = true;
  notes_.push_back("CPUs by affinity only (a job may change it)");
  notes_.push_back("process count not limited");
}

Status Supervisor::WriteScript(std::string* path) {
  *path = dir_ + "/script";
  if (unlink(path->c_str()) != 0 && errno != ENOENT) return ErrnoStatus("unlink " + *path, errno);
  int fd = open(path->c_str(), O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0700);
  if (fd < 0) return ErrnoStatus("create " + *path, errno);
  std::string_view data = spec_.script;
  Status s;
  while (s.ok() && !data.empty()) {
    ssize_t n = write(fd, data.data(), data.size());
    if (n < 0 && errno != EINTR) s = ErrnoStatus("write " + *path, errno);
    if (n > 0) data.remove_prefix(static_cast<size_t>(n));
  }
  // The job reads and runs it as its user: owned by the user, read and execute only.
  if (s.ok() && switch_user_ && fchown(fd, user_.uid, user_.gid) != 0) {
    s = ErrnoStatus("chown " + *path, errno);
  }
  if (s.ok() && fchmod(fd, 0500) != 0) s = ErrnoStatus("chmod " + *path, errno);
  close(fd);
  return s;
}

Result<JobExec> Supervisor::BuildExec() {
  JobExec e;
  e.env = BuildJobEnvironment(spec_, user_, node_name_, start_time_);
  if (!spec_.script.empty()) {
    std::string path;
    BERTH_RETURN_IF_ERROR(WriteScript(&path));
    if (spec_.script.rfind("#!", 0) == 0) {
      e.exec_paths = {path};
      e.argv = {path};
    } else {
      e.exec_paths = {"/bin/sh"};
      e.argv = {"/bin/sh", path};
    }
    e.argv.insert(e.argv.end(), spec_.script_args.begin(), spec_.script_args.end());
  } else if (!spec_.argv.empty()) {
    e.argv = spec_.argv;
    const std::string& cmd = spec_.argv[0];
    if (cmd.find('/') != std::string::npos) {
      e.exec_paths = {cmd};
    } else {
      std::string path_var = kDefaultJobPath;
      for (const std::string& kv : e.env) {
        if (kv.rfind("PATH=", 0) == 0) path_var = kv.substr(5);
      }
      size_t start = 0;
      while (start <= path_var.size()) {
        size_t end = std::min(path_var.find(':', start), path_var.size());
        std::string d = path_var.substr(start, end - start);
        e.exec_paths.push_back((d.empty() ? "." : d) + "/" + cmd);
        start = end + 1;
      }
    }
  } else if (spec_.container.empty()) {
    return Status::InvalidArgument("nothing to run: the spec has neither a script nor argv");
  }  // else a Pod's container: the image's ENTRYPOINT and CMD (supervise_container.cc)
  e.switch_user = switch_user_;
  e.uid = user_.uid;
  e.gid = user_.gid;
  e.groups = groups_;
  e.work_dir = !spec_.work_dir.empty() ? spec_.work_dir : (user_.home.empty() ? "/" : user_.home);
  OutputPatternFields f;
  f.job_id = spec_.job_id;
  f.array_job_id = spec_.array_job_id;
  f.array_task_id = spec_.array_task_id;
  f.job_name = spec_.name;
  f.user = user_.name;
  f.node_name = node_name_;
  f.node_index = spec_.node_index;
  e.stdout_path = OutputPath(spec_.stdout_pattern, DefaultStdoutPattern(spec_.array_task_id >= 0),
                             f, e.work_dir);
  if (!spec_.stderr_pattern.empty())
    e.stderr_path = OutputPath(spec_.stderr_pattern, "", f, e.work_dir);
  if (!spec_.stdin_path.empty()) e.stdin_path = OutputPath(spec_.stdin_path, "", f, e.work_dir);
  e.append = spec_.open_append;
  if (cgroup_) {
    e.join_fds = cgroup_->join_fds();
    e.cgroup_dir_fd = cgroup_->v2_dir_fd();
    e.cgroup_dir_join_index = cgroup_->v2_join_index();
  }
  if (cpuset_by_affinity_) e.cpu_affinity = cpus_;
  e.rlimit_data_bytes = rlimit_data_bytes_;
  e.reset_oom_score = geteuid() == 0;
  return e;
}

}  // namespace berth::agent
