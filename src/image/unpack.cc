#include "image/unpack.h"

#include <dirent.h>
#include <fcntl.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <sys/xattr.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <vector>

namespace berth::image {
namespace {

constexpr size_t kMaxPath = 4096;
constexpr std::string_view kWhiteoutPrefix = ".wh.";
constexpr std::string_view kOpaque = ".wh..wh..opq";

class Fd {
 public:
  explicit Fd(int fd = -1) : fd_(fd) {}
  ~Fd() {
    if (fd_ >= 0) close(fd_);
  }
  Fd(Fd&& o) noexcept : fd_(o.fd_) { o.fd_ = -1; }
  Fd& operator=(Fd&& o) noexcept {
    if (this != &o) {
      if (fd_ >= 0) close(fd_);
      fd_ = o.fd_;
      o.fd_ = -1;
    }
    return *this;
  }
  int get() const { return fd_; }

 private:
  int fd_;
};

std::string Errno() {
  return std::strerror(errno);
}

Status Refuse(const std::string& entry, const std::string& why) {
  return Status::InvalidArgument("layer entry '" + entry + "' refused: " + why);
}

// The entry's path as components below the root ("." and empty parts dropped, ".." applied); an
// error when ".." climbs above the root.
Result<std::vector<std::string>> Components(const std::string& path) {
  if (path.size() > kMaxPath) return Refuse(path.substr(0, 64) + "...", "path too long");
  std::vector<std::string> out;
  size_t start = 0;
  while (start <= path.size()) {
    size_t slash = path.find('/', start);
    std::string c =
        path.substr(start, slash == std::string::npos ? std::string::npos : slash - start);
    if (c == "..") {
      if (out.empty()) return Refuse(path, "its path escapes the layer's root");
      out.pop_back();
    } else if (!c.empty() && c != ".") {
      out.push_back(std::move(c));
    }
    if (slash == std::string::npos) break;
    start = slash + 1;
  }
  return out;
}

std::string Join(const std::vector<std::string>& comps, size_t n) {
  std::string s;
  for (size_t i = 0; i < n; ++i) s += (i ? "/" : "") + comps[i];
  return s;
}

// Opens the folder comps[0..n) below `root` without following any symlink, creating missing
// folders when `create`.
Result<Fd> OpenParent(int root, const std::vector<std::string>& comps, size_t n, bool create,
                      const std::string& entry) {
  Fd cur(dup(root));
  if (cur.get() < 0) return Status::Internal("dup: " + Errno());
  for (size_t i = 0; i < n; ++i) {
    const char* c = comps[i].c_str();
    int fd = openat(cur.get(), c, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
    if (fd < 0 && errno == ENOENT && create) {
      if (mkdirat(cur.get(), c, 0755) != 0 && errno != EEXIST) {
        return Status::Internal("cannot make folder '" + Join(comps, i + 1) + "': " + Errno());
      }
      fd = openat(cur.get(), c, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
    }
    if (fd < 0) {
      int e = errno;
      struct stat st;
      if ((e == ELOOP || e == ENOTDIR) && fstatat(cur.get(), c, &st, AT_SYMLINK_NOFOLLOW) == 0 &&
          S_ISLNK(st.st_mode)) {
        return Refuse(entry,
                      "it would be written through the symlink '" + Join(comps, i + 1) + "'");
      }
      if (e == ENOENT) return Refuse(entry, "'" + Join(comps, i + 1) + "' does not exist");
      return Refuse(entry, "'" + Join(comps, i + 1) + "' is not a folder");
    }
    cur = Fd(fd);
  }
  return cur;
}

Status RemoveAt(int parent_fd, const char* name) {
  struct stat st;
  if (fstatat(parent_fd, name, &st, AT_SYMLINK_NOFOLLOW) != 0) {
    return errno == ENOENT ? Status::Ok()
                           : Status::Internal(std::string("stat ") + name + ": " + Errno());
  }
  if (S_ISDIR(st.st_mode)) {
    int fd = openat(parent_fd, name, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
    if (fd < 0) return Status::Internal(std::string("open ") + name + ": " + Errno());
    fchmod(fd, 0700);  // a read-only folder's entries could not be removed otherwise
    DIR* d = fdopendir(fd);
    if (!d) {
      close(fd);
      return Status::Internal("fdopendir: " + Errno());
    }
    std::vector<std::string> names;
    while (struct dirent* ent = readdir(d)) {
      std::string n = ent->d_name;
      if (n != "." && n != "..") names.push_back(n);
    }
    Status st2;
    for (const std::string& n : names) {
      st2 = RemoveAt(dirfd(d), n.c_str());
      if (!st2.ok()) break;
    }
    closedir(d);
    BERTH_RETURN_IF_ERROR(st2);
    if (unlinkat(parent_fd, name, AT_REMOVEDIR) != 0 && errno != ENOENT) {
      return Status::Internal(std::string("rmdir ") + name + ": " + Errno());
    }
    return Status::Ok();
  }
  if (unlinkat(parent_fd, name, 0) != 0 && errno != ENOENT) {
    return Status::Internal(std::string("unlink ") + name + ": " + Errno());
  }
  return Status::Ok();
}

struct DirAttrs {
  std::vector<std::string> comps;
  TarEntry entry;
};

class Unpacker {
 public:
  Unpacker(int root, const UnpackOptions& o)
      : root_(root), options_(o), root_user_(geteuid() == 0) {}

  Status Entry(TarReader& tar, const TarEntry& e) {
    if (++stats_.entries > options_.max_entries) {
      return Status::InvalidArgument("the layer has more than " +
                                     std::to_string(options_.max_entries) + " entries");
    }
    BERTH_ASSIGN_OR_RETURN(std::vector<std::string> comps, Components(e.path));
    if (comps.empty()) return Status::Ok();  // the root itself
    // aufs metadata (.wh..wh.plnk/..., .wh..wh.aufs) has no meaning for overlayfs.
    for (size_t i = 0; i + 1 < comps.size(); ++i) {
      if (comps[i].starts_with(".wh..wh.")) return Status::Ok();
    }
    const std::string name = comps.back();
    BERTH_ASSIGN_OR_RETURN(Fd parent, OpenParent(root_, comps, comps.size() - 1, true, e.path));
    if (name == kOpaque) {
      if (fsetxattr(parent.get(), "trusted.overlay.opaque", "y", 1, 0) != 0) {
        return Refuse(e.path, "cannot mark the folder opaque (trusted.overlay.opaque): " + Errno());
      }
      return Status::Ok();
    }
    if (name.starts_with(".wh..wh.")) return Status::Ok();  // aufs metadata, as above
    if (name.starts_with(kWhiteoutPrefix)) {
      std::string target = name.substr(kWhiteoutPrefix.size());
      if (target.empty() || target == "." || target == "..") return Refuse(e.path, "bad whiteout");
      BERTH_RETURN_IF_ERROR(RemoveAt(parent.get(), target.c_str()));
      if (mknodat(parent.get(), target.c_str(), S_IFCHR | 0, makedev(0, 0)) != 0) {
        return Refuse(e.path,
                      "cannot make the overlay whiteout (a 0:0 device, needs root): " + Errno());
      }
      return Status::Ok();
    }
    const char* n = name.c_str();
    struct stat st;
    bool exists = fstatat(parent.get(), n, &st, AT_SYMLINK_NOFOLLOW) == 0;
    if (e.type == TarEntry::Type::kCharDev || e.type == TarEntry::Type::kBlockDev ||
        e.type == TarEntry::Type::kFifo) {
      return Status::Ok();  // runc provides /dev; fifos have no use in an image
    }
    if (exists && !(e.type == TarEntry::Type::kDir && S_ISDIR(st.st_mode))) {
      BERTH_RETURN_IF_ERROR(RemoveAt(parent.get(), n));
    }
    timespec times[2] = {{e.mtime, 0}, {e.mtime, 0}};
    mode_t mode = static_cast<mode_t>(e.mode & 07777 & ~(S_ISUID | S_ISGID));
    switch (e.type) {
      case TarEntry::Type::kDir:
        if (!(exists && S_ISDIR(st.st_mode)) && mkdirat(parent.get(), n, 0700) != 0) {
          return Refuse(e.path, "cannot make the folder: " + Errno());
        }
        dirs_.push_back({comps, e});
        return Status::Ok();
      case TarEntry::Type::kSymlink:
        if (symlinkat(e.link.c_str(), parent.get(), n) != 0) {
          return Refuse(e.path, "cannot make the symlink: " + Errno());
        }
        if (root_user_ && fchownat(parent.get(), n, static_cast<uid_t>(e.uid),
                                   static_cast<gid_t>(e.gid), AT_SYMLINK_NOFOLLOW) != 0) {
          return Refuse(e.path, "cannot set its owner: " + Errno());
        }
        utimensat(parent.get(), n, times, AT_SYMLINK_NOFOLLOW);
        return Status::Ok();
      case TarEntry::Type::kHardlink: {
        Result<std::vector<std::string>> target_comps = Components(e.link);
        if (!target_comps.ok()) {
          return Refuse(e.path, "a hard link to '" + e.link + "', outside the layer's root");
        }
        std::vector<std::string>& target = *target_comps;
        if (target.empty()) return Refuse(e.path, "a hard link to the root");
        Result<Fd> tparent = OpenParent(root_, target, target.size() - 1, false, e.path);
        if (!tparent.ok() && tparent.status().message().find("symlink") != std::string::npos) {
          return tparent.status();
        }
        if (!tparent.ok() ||
            linkat(tparent->get(), target.back().c_str(), parent.get(), n, 0) != 0) {
          return Refuse(e.path, "a hard link to '" + e.link +
                                    "', which is not an earlier file of this layer");
        }
        return Status::Ok();
      }
      case TarEntry::Type::kFile:
        return File(tar, e, parent.get(), n, mode, times);
      default:
        return Status::Ok();
    }
  }

  // Folders' owners, modes and times last: adding their entries changed their mtimes.
  Status FinishDirs() {
    for (auto it = dirs_.rbegin(); it != dirs_.rend(); ++it) {
      Result<Fd> dir = OpenParent(root_, it->comps, it->comps.size(), false, it->entry.path);
      if (!dir.ok()) continue;  // replaced by a later entry
      const TarEntry& e = it->entry;
      if (root_user_ &&
          fchown(dir->get(), static_cast<uid_t>(e.uid), static_cast<gid_t>(e.gid)) != 0) {
        return Refuse(e.path, "cannot set its owner: " + Errno());
      }
      fchmod(dir->get(), static_cast<mode_t>(e.mode & 07777 & ~(S_ISUID | S_ISGID)));
      timespec times[2] = {{e.mtime, 0}, {e.mtime, 0}};
      futimens(dir->get(), times);
    }
    return Status::Ok();
  }

  const UnpackStats& stats() const { return stats_; }

 private:
  Status File(TarReader& tar, const TarEntry& e, int parent, const char* n, mode_t mode,
              const timespec* times) {
    if (e.size > options_.max_bytes - stats_.bytes) {
      return Status::InvalidArgument("the layer's content is over " +
                                     std::to_string(options_.max_bytes) + " bytes");
    }
    Fd fd(openat(parent, n, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0600));
    if (fd.get() < 0) return Refuse(e.path, "cannot create the file: " + Errno());
    std::vector<char> buf(1 << 16);
    while (true) {
      BERTH_ASSIGN_OR_RETURN(size_t k, tar.ReadData(buf.data(), buf.size()));
      if (k == 0) break;
      for (size_t off = 0; off < k;) {
        ssize_t w = write(fd.get(), buf.data() + off, k - off);
        if (w < 0 && errno == EINTR) continue;
        if (w < 0) {
          if (errno == ENOSPC || errno == EDQUOT) {
            return Status::ResourceExhausted("no space left while unpacking '" + e.path + "'");
          }
          return Status::Internal("cannot write '" + e.path + "': " + Errno());
        }
        off += static_cast<size_t>(w);
      }
    }
    stats_.bytes += e.size;
    if (root_user_ && fchown(fd.get(), static_cast<uid_t>(e.uid), static_cast<gid_t>(e.gid)) != 0) {
      return Refuse(e.path, "cannot set its owner: " + Errno());
    }
    fchmod(fd.get(), mode);
    futimens(fd.get(), times);
    return Status::Ok();
  }

  int root_;
  UnpackOptions options_;
  bool root_user_;
  UnpackStats stats_;
  std::vector<DirAttrs> dirs_;
};

}  // namespace

Result<UnpackStats> UnpackTar(ByteSource* in, const std::string& dest,
                              const UnpackOptions& options) {
  Fd root(open(dest.c_str(), O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC));
  if (root.get() < 0) return Status::Internal("cannot open " + dest + ": " + Errno());
  TarReader tar(in);
  Unpacker u(root.get(), options);
  TarEntry e;
  while (true) {
    BERTH_ASSIGN_OR_RETURN(bool more, tar.Next(&e));
    if (!more) break;
    BERTH_RETURN_IF_ERROR(u.Entry(tar, e));
  }
  BERTH_RETURN_IF_ERROR(u.FinishDirs());
  return u.stats();
}

Result<UnpackStats> UnpackLayer(const std::string& path, const std::string& dest,
                                const UnpackOptions& options) {
  BERTH_ASSIGN_OR_RETURN(std::unique_ptr<ByteSource> in, OpenLayerFile(path));
  return UnpackTar(in.get(), dest, options);
}

Status RemoveTree(const std::string& path) {
  size_t slash = path.rfind('/');
  std::string dir = slash == std::string::npos ? "." : (slash == 0 ? "/" : path.substr(0, slash));
  std::string base = slash == std::string::npos ? path : path.substr(slash + 1);
  Fd d(open(dir.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC));
  if (d.get() < 0)
    return errno == ENOENT ? Status::Ok() : Status::Internal("open " + dir + ": " + Errno());
  return RemoveAt(d.get(), base.c_str());
}

}  // namespace berth::image
