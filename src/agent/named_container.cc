#include "agent/named_container.h"

#include <fcntl.h>
#include <sys/file.h>
#include <sys/mount.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <filesystem>
#include <map>

#include "agent/file_util.h"

namespace berth::agent {

std::string NamedContainerDir(const std::string& state_dir, uint32_t job_id, int32_t attempt,
                              const std::string& name) {
  return state_dir + "/named/" + std::to_string(job_id) + "." + std::to_string(attempt) + "/" +
         name;
}

std::string NamedContainerHolder(uint32_t job_id, int32_t attempt, const std::string& name) {
  return "named-" + std::to_string(job_id) + "." + std::to_string(attempt) + "-" + name;
}

Result<NamedContainerLock> NamedContainerLock::Take(const std::string& dir) {
  std::filesystem::path job = std::filesystem::path(dir).parent_path();
  for (const std::filesystem::path& d : {job.parent_path(), job}) {
    if (mkdir(d.c_str(), 0700) != 0 && errno != EEXIST)
      return ErrnoStatus("mkdir " + d.string(), errno);
  }
  int fd = open((dir + ".lock").c_str(), O_RDWR | O_CREAT | O_CLOEXEC, 0600);
  if (fd < 0) return ErrnoStatus("open " + dir + ".lock", errno);
  while (flock(fd, LOCK_EX) != 0) {
    if (errno != EINTR) {
      int err = errno;
      close(fd);
      return ErrnoStatus("flock " + dir + ".lock", err);
    }
  }
  return NamedContainerLock(fd);
}

NamedContainerLock& NamedContainerLock::operator=(NamedContainerLock&& o) noexcept {
  if (this != &o) {
    if (fd_ >= 0) close(fd_);
    fd_ = std::exchange(o.fd_, -1);
  }
  return *this;
}

NamedContainerLock::~NamedContainerLock() {
  if (fd_ >= 0) close(fd_);
}

bool IsMountPoint(const std::string& path) {
  struct stat self, parent;
  if (stat(path.c_str(), &self) != 0) return false;
  if (stat((path + "/..").c_str(), &parent) != 0) return false;
  return self.st_dev != parent.st_dev || self.st_ino == parent.st_ino;
}

int SweepNamedContainers(
    const std::string& state_dir, const std::string& jobs_dir,
    const std::function<void(const std::string&, const std::string&)>& release) {
  const std::string named = state_dir + "/named";
  std::error_code ec;
  if (!std::filesystem::is_directory(named, ec)) return 0;
  // The attempts listed first, their folders looked for after: a step that starts meanwhile has
  // its folder before it takes the container's lock.
  std::vector<std::string> attempts;
  for (const auto& e : std::filesystem::directory_iterator(named, ec)) {
    attempts.push_back(e.path().filename().string());
  }
  std::set<std::string> live;
  for (const auto& e : std::filesystem::directory_iterator(jobs_dir, ec)) {
    std::string n = e.path().filename().string();
    size_t first = n.find('.');
    if (first == std::string::npos) continue;
    size_t second = n.find('.', first + 1);
    live.insert(n.substr(0, second));
  }
  int removed = 0;
  for (const std::string& a : attempts) {
    if (live.count(a)) continue;
    size_t dot = a.find('.');
    uint32_t job_id = 0;
    int32_t attempt = 0;
    try {
      job_id = static_cast<uint32_t>(std::stoul(a.substr(0, dot)));
      attempt = dot == std::string::npos ? 0 : std::stoi(a.substr(dot + 1));
    } catch (const std::exception&) {
    }
    const std::string dir = named + "/" + a;
    for (const auto& e : std::filesystem::directory_iterator(dir, ec)) {
      if (!e.is_directory()) continue;
      const std::string c = e.path().string();
      Result<NamedContainerLock> lock = NamedContainerLock::Take(c);
      if (!lock.ok()) continue;
      if (IsMountPoint(c + "/rootfs")) umount2((c + "/rootfs").c_str(), MNT_DETACH);
      if (IsMountPoint(c + "/rootfs")) continue;  // still mounted: next time
      if (Result<std::string> digest = ReadFile(c + "/digest"); digest.ok() && !digest->empty()) {
        release(*digest, NamedContainerHolder(job_id, attempt, e.path().filename().string()));
      }
      std::error_code rm;
      std::filesystem::remove_all(c, rm);
      unlink((c + ".lock").c_str());
      ++removed;
    }
    rmdir(dir.c_str());  // fails while a container could not go
  }
  return removed;
}

}  // namespace berth::agent
