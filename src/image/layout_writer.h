// Writes a small OCI image layout (oci-layout, index.json, blobs/sha256/...) from files given in
// memory: one uncompressed tar layer, an image config, a manifest, and the index with the tag as
// its org.opencontainers.image.ref.name. For images made on the node itself without a registry:
// `berth up --demo`'s image (busybox from the host), tests.
//
// Thread safety: pure except for the files it writes.
#ifndef BERTH_IMAGE_LAYOUT_WRITER_H_
#define BERTH_IMAGE_LAYOUT_WRITER_H_

#include <string>
#include <vector>

#include "common/status.h"
#include "image/store.h"

namespace berth::image {

struct LayerEntry {
  enum class Kind { kFile, kDir, kSymlink };
  Kind kind = Kind::kFile;
  std::string path;     // relative, no leading "/" ("bin/sh")
  std::string content;  // kFile: the bytes; kSymlink: the target
  int mode = 0644;
};

// The tar (ustar) of the entries, in order; names up to 100 bytes (longer is an error).
Result<std::string> TarOf(const std::vector<LayerEntry>& entries);

// Writes the layout at `dir` (created; an existing layout there is replaced). Returns the
// manifest's digest.
Result<std::string> WriteOciLayout(const std::string& dir, const std::vector<LayerEntry>& layer,
                                   const ImageConfig& config, const std::string& tag);

}  // namespace berth::image

#endif  // BERTH_IMAGE_LAYOUT_WRITER_H_
