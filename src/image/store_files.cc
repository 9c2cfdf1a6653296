#include "image/store_files.h"

#include <dirent.h>
#include <fcntl.h>
#include <ftw.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <unistd.h>

#include <atomic>
#include <cerrno>
#include <cstring>
#include <ctime>
#include <random>

#include "image/digest.h"
#include "image/unpack.h"

namespace berth::image {
namespace {

std::string Errno() {
  return std::strerror(errno);
}

int FlockRetry(int fd, int op) {
  while (true) {
    if (flock(fd, op) == 0) return 0;
    if (errno != EINTR) return -1;
  }
}

bool SameFile(int fd, const std::string& path) {
  struct stat a, b;
  return fstat(fd, &a) == 0 && stat(path.c_str(), &b) == 0 && a.st_ino == b.st_ino &&
         a.st_dev == b.st_dev;
}

thread_local int64_t tree_bytes = 0;

int AddSize(const char*, const struct stat* st, int type, struct FTW*) {
  if (type == FTW_F && S_ISREG(st->st_mode)) tree_bytes += st->st_size;
  return 0;
}

}  // namespace

Result<FileLock> FileLock::Take(const std::string& path, bool exclusive, bool* waited) {
  int fd = open(path.c_str(), O_RDWR | O_CREAT | O_CLOEXEC, 0600);
  if (fd < 0) return Status::Internal("cannot open the lock " + path + ": " + Errno());
  int op = exclusive ? LOCK_EX : LOCK_SH;
  if (waited) *waited = false;
  if (FlockRetry(fd, op | LOCK_NB) != 0) {
    if (errno != EWOULDBLOCK) {
      close(fd);
      return Status::Internal("cannot lock " + path + ": " + Errno());
    }
    if (waited) *waited = true;
    if (FlockRetry(fd, op) != 0) {
      close(fd);
      return Status::Internal("cannot lock " + path + ": " + Errno());
    }
  }
  return FileLock(fd);
}

FileLock::~FileLock() {
  if (fd_ >= 0) close(fd_);
}

Result<TmpDir> TmpDir::Make(const std::string& tmp_root, const std::string& prefix) {
  static std::atomic<uint64_t> counter{0};
  std::random_device rd;
  for (int attempt = 0; attempt < 100; ++attempt) {
    std::string path = tmp_root + "/" + prefix + "-" + std::to_string(getpid()) + "-" +
                       std::to_string(counter++) + "-" + std::to_string(rd() % 1000000);
    std::string lock = path + ".lock";
    int fd = open(lock.c_str(), O_RDWR | O_CREAT | O_EXCL | O_CLOEXEC, 0600);
    if (fd < 0 && errno == EEXIST) continue;
    if (fd < 0) return Status::Internal("cannot create " + lock + ": " + Errno());
    // A cleaner may have taken the lock file between its creation and our flock: ours must
    // still be the file at that path.
    if (FlockRetry(fd, LOCK_EX) != 0 || !SameFile(fd, lock)) {
      close(fd);
      continue;
    }
    if (mkdir(path.c_str(), 0700) != 0) {
      int e = errno;
      unlink(lock.c_str());
      close(fd);
      if (e == ENOSPC) return Status::ResourceExhausted("no space left on device");
      return Status::Internal("cannot create " + path + ": " + std::strerror(e));
    }
    return TmpDir(path, fd);
  }
  return Status::Internal("cannot create a temporary folder in " + tmp_root);
}

TmpDir::~TmpDir() {
  if (fd_ < 0) return;
  (void)RemoveTree(path_);
  unlink((path_ + ".lock").c_str());
  close(fd_);
}

Status CleanTmp(const std::string& tmp_root) {
  std::vector<std::string> names = ListDir(tmp_root);
  for (const std::string& name : names) {
    if (!name.ends_with(".lock")) continue;
    std::string lock = tmp_root + "/" + name;
    int fd = open(lock.c_str(), O_RDWR | O_CLOEXEC);
    if (fd < 0) continue;
    if (FlockRetry(fd, LOCK_EX | LOCK_NB) == 0 && SameFile(fd, lock)) {
      Status s = RemoveTree(lock.substr(0, lock.size() - 5));
      if (s.ok()) unlink(lock.c_str());
    }
    close(fd);
  }
  // Anything else without a lock file beside it (its lock was made before it, so it is left over
  // from an operation whose lock has gone).
  for (const std::string& name : ListDir(tmp_root)) {
    if (name.ends_with(".lock")) continue;
    struct stat st;
    std::string lock = tmp_root + "/" + name + ".lock";
    if (stat(lock.c_str(), &st) == 0) continue;
    BERTH_RETURN_IF_ERROR(RemoveTree(tmp_root + "/" + name));
  }
  return Status::Ok();
}

void CleanBlobTemps(const std::string& blobs, int64_t age_s) {
  const int64_t cutoff = static_cast<int64_t>(time(nullptr)) - age_s;
  auto stale = [&](const std::string& path) {
    struct stat st;
    return lstat(path.c_str(), &st) == 0 && S_ISREG(st.st_mode) && st.st_mtime < cutoff;
  };
  for (const std::string& name : ListDir(blobs)) {
    if (name != "sha256" && stale(blobs + "/" + name)) unlink((blobs + "/" + name).c_str());
  }
  for (const std::string& name : ListDir(blobs + "/sha256")) {
    bool hex = name.size() == 64 && name.find_first_not_of("0123456789abcdef") == std::string::npos;
    std::string path = blobs + "/sha256/" + name;
    if (!hex && stale(path)) unlink(path.c_str());
  }
}

Status MakeDir(const std::string& path, int mode) {
  if (mkdir(path.c_str(), static_cast<mode_t>(mode)) == 0) return Status::Ok();
  struct stat st;
  if (errno == EEXIST && stat(path.c_str(), &st) == 0 && S_ISDIR(st.st_mode)) return Status::Ok();
  if (errno == ENOSPC) return Status::ResourceExhausted("no space left on device making " + path);
  return Status::Internal("cannot make folder " + path + ": " + Errno());
}

std::vector<std::string> ListDir(const std::string& path) {
  std::vector<std::string> out;
  DIR* d = opendir(path.c_str());
  if (!d) return out;
  while (struct dirent* e = readdir(d)) {
    std::string n = e->d_name;
    if (n != "." && n != "..") out.push_back(std::move(n));
  }
  closedir(d);
  return out;
}

int64_t TreeBytes(const std::string& path) {
  tree_bytes = 0;
  nftw(path.c_str(), AddSize, 32, FTW_PHYS);
  return tree_bytes;
}

Status CopyVerified(const std::string& src, const std::string& dst, const std::string& digest,
                    const std::string& tmp_root) {
  (void)tmp_root;
  struct stat st;
  if (stat(dst.c_str(), &st) == 0) return Status::Ok();  // verified again before use
  int in = open(src.c_str(), O_RDONLY | O_CLOEXEC);
  if (in < 0) return Status::InvalidArgument("blob " + digest + " is missing (" + src + ")");
  std::string tmp = dst + ".import." + std::to_string(getpid());
  int out = open(tmp.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
  if (out < 0) {
    close(in);
    return Status::Internal("cannot create " + tmp + ": " + Errno());
  }
  Sha256 h;
  std::vector<char> buf(1 << 20);
  Status status;
  while (status.ok()) {
    ssize_t n = read(in, buf.data(), buf.size());
    if (n < 0 && errno == EINTR) continue;
    if (n < 0) {
      status = Status::Internal("cannot read " + src + ": " + Errno());
      break;
    }
    if (n == 0) break;
    h.Update(buf.data(), static_cast<size_t>(n));
    for (ssize_t off = 0; off < n;) {
      ssize_t w = write(out, buf.data() + off, static_cast<size_t>(n - off));
      if (w < 0 && errno == EINTR) continue;
      if (w < 0) {
        status = errno == ENOSPC ? Status::ResourceExhausted("no space left on device")
                                 : Status::Internal("cannot write " + tmp + ": " + Errno());
        break;
      }
      off += w;
    }
  }
  close(in);
  if (close(out) != 0 && status.ok()) status = Status::Internal("cannot write " + tmp);
  if (status.ok()) {
    std::string got = h.Digest();
    if (got != digest) {
      status = Status::InvalidArgument("blob " + digest +
                                       " does not match its digest (its content is " + got + ")");
    }
  }
  if (status.ok() && rename(tmp.c_str(), dst.c_str()) != 0) {
    status = Status::Internal("cannot rename " + tmp + ": " + Errno());
  }
  if (!status.ok()) unlink(tmp.c_str());
  return status;
}

}  // namespace berth::image
