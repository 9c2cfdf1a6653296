// The image store's file plumbing: flocks, per-operation temporary folders in ROOT/tmp that a
// later Store::Open can tell from live ones, and small folder helpers.
//
// Thread safety: FileLock and TmpDir are owned by one thread; the functions are reentrant.
#ifndef BERTH_IMAGE_STORE_FILES_H_
#define BERTH_IMAGE_STORE_FILES_H_

#include <cstdint>
#include <string>
#include <vector>

#include "common/status.h"

namespace berth::image {

// An flock on a file (created when missing), released when destroyed.
class FileLock {
 public:
  // Blocks until the lock is taken; *waited (when given) says whether another held it first.
  static Result<FileLock> Take(const std::string& path, bool exclusive, bool* waited = nullptr);
  FileLock(FileLock&& o) noexcept : fd_(o.fd_) { o.fd_ = -1; }
  FileLock& operator=(FileLock&&) = delete;
  FileLock(const FileLock&) = delete;
  ~FileLock();

 private:
  explicit FileLock(int fd) : fd_(fd) {}
  int fd_;
};

// ROOT/tmp/NAME (a folder) with ROOT/tmp/NAME.lock flocked while it lives; removed (both) when
// destroyed. CleanTmp removes the folders whose lock nobody holds.
class TmpDir {
 public:
  static Result<TmpDir> Make(const std::string& tmp_root, const std::string& prefix);
  TmpDir(TmpDir&& o) noexcept : path_(std::move(o.path_)), fd_(o.fd_) { o.fd_ = -1; }
  TmpDir& operator=(TmpDir&&) = delete;
  TmpDir(const TmpDir&) = delete;
  ~TmpDir();
  const std::string& path() const { return path_; }

 private:
  TmpDir(std::string path, int fd) : path_(std::move(path)), fd_(fd) {}
  std::string path_;
  int fd_;
};

// Removes what interrupted operations left in `tmp_root`: folders whose lock is free.
Status CleanTmp(const std::string& tmp_root);

// Removes the temporary files a killed skopeo or import left among the blobs (in `blobs` and
// `blobs`/sha256: any name but "sha256" and 64 hex digits) once older than `age_s` seconds (a
// live pull's are younger: it is killed at its time limit).
void CleanBlobTemps(const std::string& blobs, int64_t age_s);

// mkdir that accepts an existing folder.
Status MakeDir(const std::string& path, int mode);
// The names in a folder (not "." and ".."); empty when it cannot be read.
std::vector<std::string> ListDir(const std::string& path);
// The size of the regular files under `path` (symlinks not followed).
int64_t TreeBytes(const std::string& path);
// Copies src to dst (when dst is not there yet), checking the content's digest on the way; a
// mismatch is InvalidArgument and leaves nothing at dst.
Status CopyVerified(const std::string& src, const std::string& dst, const std::string& digest,
                    const std::string& tmp_root);

}  // namespace berth::image

#endif  // BERTH_IMAGE_STORE_FILES_H_
