#include "agent/file_util.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>

namespace berth::agent {

std::string ErrnoText(int err) {
  char buf[256];
  // The GNU strerror_r returns a pointer that may or may not point into buf.
  return strerror_r(err, buf, sizeof(buf));
}

Status ErrnoStatus(std::string_view what, int err) {
  std::string message = std::string(what) + ": " + ErrnoText(err);
  if (err == EACCES || err == EPERM) return Status::PermissionDenied(std::move(message));
  if (err == ENOENT) return Status::NotFound(std::move(message));
  return Status::Internal(std::move(message));
}

Result<std::string> ReadFile(const std::string& path) {
  int fd = open(path.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0) return ErrnoStatus("open " + path, errno);
  std::string out;
  char buf[8192];
  while (true) {
    ssize_t n = read(fd, buf, sizeof(buf));
    if (n < 0) {
      if (errno == EINTR) continue;
      int err = errno;
      close(fd);
      return ErrnoStatus("read " + path, err);
    }
    if (n == 0) break;
    out.append(buf, static_cast<size_t>(n));
  }
  close(fd);
  return out;
}

namespace {

Status WriteAll(int fd, std::string_view data, const std::string& path) {
  while (!data.empty()) {
    ssize_t n = write(fd, data.data(), data.size());
    if (n < 0) {
      if (errno == EINTR) continue;
      return ErrnoStatus("write " + path, errno);
    }
    data.remove_prefix(static_cast<size_t>(n));
  }
  return Status::Ok();
}

}  // namespace

Status WriteFileAtomic(const std::string& path, std::string_view data, mode_t mode, Sync sync) {
  std::string tmp = path + ".tmp";
  // O_NOFOLLOW: a stale link at the temporary name must not redirect the write.
  int fd = open(tmp.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC | O_NOFOLLOW, mode);
  if (fd < 0) return ErrnoStatus("open " + tmp, errno);
  Status s = WriteAll(fd, data, tmp);
  if (s.ok() && fchmod(fd, mode) != 0) s = ErrnoStatus("chmod " + tmp, errno);
  if (s.ok() && sync == Sync::kYes && fsync(fd) != 0) s = ErrnoStatus("fsync " + tmp, errno);
  close(fd);
  if (s.ok() && rename(tmp.c_str(), path.c_str()) != 0) s = ErrnoStatus("rename " + tmp, errno);
  if (!s.ok()) unlink(tmp.c_str());
  return s;
}

Status WriteControlFile(const std::string& path, std::string_view data) {
  int fd = open(path.c_str(), O_WRONLY | O_CLOEXEC);
  if (fd < 0) return ErrnoStatus("open " + path, errno);
  ssize_t n;
  do {
    n = write(fd, data.data(), data.size());
  } while (n < 0 && errno == EINTR);
  int err = errno;
  close(fd);
  if (n < 0) return ErrnoStatus("write '" + std::string(data) + "' to " + path, err);
  if (static_cast<size_t>(n) != data.size()) {
    return Status::Internal("short write to " + path);
  }
  return Status::Ok();
}

}  // namespace berth::agent
