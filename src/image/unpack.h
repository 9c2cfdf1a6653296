// Unpacking one image layer (a tar, gzip-compressed or not) into a folder for overlayfs, safely:
//
//   - entry paths are made relative ("/a" and "./a" are "a"); a path whose ".." climbs above the
//     root is refused;
//   - nothing is ever written through a symlink: each parent folder is opened component by
//     component with O_NOFOLLOW from the root's descriptor, so an entry under a symlink (one the
//     layer made earlier) is refused;
//   - symlinks are stored as they are (never followed); hard links must name an entry already
//     unpacked in this layer;
//   - whiteouts ".wh.NAME" become overlay whiteouts (a 0:0 character device, which needs root),
//     ".wh..wh..opq" sets trusted.overlay.opaque=y on its folder;
//   - device nodes and fifos are skipped (runc provides /dev); setuid and setgid bits are
//     stripped; owners (when root), modes and mtimes are kept;
//   - bounded: more than max_bytes of content or max_entries entries is an error.
// A refused entry fails the whole layer with InvalidArgument naming it. The caller unpacks into
// a fresh folder and removes it on error (the store does this in ROOT/tmp).
//
// Thread safety: functions of their arguments; distinct destinations may be used concurrently.
#ifndef BERTH_IMAGE_UNPACK_H_
#define BERTH_IMAGE_UNPACK_H_

#include <cstdint>
#include <string>

#include "common/status.h"
#include "image/tar.h"

namespace berth::image {

struct UnpackOptions {
  int64_t max_bytes = int64_t{64} << 30;
  int64_t max_entries = 10'000'000;
};

struct UnpackStats {
  int64_t bytes = 0;    // regular files' content
  int64_t entries = 0;  // tar entries read
};

// REQUIRES: `dest` is an existing, empty folder.
Result<UnpackStats> UnpackTar(ByteSource* in, const std::string& dest,
                              const UnpackOptions& options);
// The layer blob at `path` (gzip or plain tar; zstd is refused).
Result<UnpackStats> UnpackLayer(const std::string& path, const std::string& dest,
                                const UnpackOptions& options);

// Removes `path` and everything under it without following symlinks; a missing path is OK.
Status RemoveTree(const std::string& path);

}  // namespace berth::image

#endif  // BERTH_IMAGE_UNPACK_H_
