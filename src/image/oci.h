// The OCI image format's JSON documents (and Docker's schema 2 equivalents): manifests, image
// indexes, image configs, and OCI layout folders (oci-layout, index.json, blobs/sha256/).
//
// Thread safety: pure functions.
#ifndef BERTH_IMAGE_OCI_H_
#define BERTH_IMAGE_OCI_H_

#include <cstdint>
#include <map>
#include <string>
#include <string_view>
#include <vector>

#include "common/status.h"
#include "image/store.h"

namespace berth::image {

struct Descriptor {
  std::string media_type;
  std::string digest;
  int64_t size = 0;
  std::map<std::string, std::string> annotations;
  std::string os, architecture;  // an index entry's platform
};

struct Manifest {
  std::string media_type;
  Descriptor config;
  std::vector<Descriptor> layers;
};

bool IsIndexMediaType(std::string_view media_type);
// A manifest (OCI or Docker schema 2); an index or a schema 1 manifest is an error.
Result<Manifest> ParseManifest(std::string_view text);
// An OCI index or Docker manifest list: its manifests.
Result<std::vector<Descriptor>> ParseIndex(std::string_view text);
// The image config's "config" object.
Result<ImageConfig> ParseImageConfig(std::string_view text);
// linux/amd64 from an index's entries (or the only entry); NotFound when none fits.
Result<Descriptor> PickPlatform(const std::vector<Descriptor>& manifests);

// Reads a whole (small) file; errors name it. `max` bounds the size read.
Result<std::string> ReadSmallFile(const std::string& path, int64_t max = 16 << 20);
// Writes `data` to `path` atomically (a temporary file beside it, then rename).
Status WriteFileAtomic(const std::string& path, std::string_view data);

}  // namespace berth::image

#endif  // BERTH_IMAGE_OCI_H_
