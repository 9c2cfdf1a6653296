// Image references as Docker and pyxis write them.
//
//   Docker:  [REGISTRY/]REPOSITORY[:TAG][@DIGEST]   "busybox", "nvcr.io/nvidia/pytorch:24.05-py3",
//            "127.0.0.1:5000/team/app@sha256:..."; a first component with a '.' or ':' or
//            "localhost" is the registry, else docker.io (with "library/" for one-word names).
//   pyxis:   [USER@][REGISTRY#]IMAGE[:TAG]          "nvcr.io#nvidia/pytorch:24.05-py3"
//            (USER@ names a credential, which berth reads from the user's auth files instead).
//   "docker://" before either form is dropped.
//
// Thread safety: pure functions.
#ifndef BERTH_IMAGE_REFERENCE_H_
#define BERTH_IMAGE_REFERENCE_H_

#include <string>
#include <string_view>

#include "common/status.h"

namespace berth::image {

struct Reference {
  std::string registry;    // "docker.io", "127.0.0.1:5000", "nvcr.io"
  std::string repository;  // "library/busybox", "nvidia/pytorch"
  std::string tag;         // "latest" when neither a tag nor a digest is given; "" with a digest
  std::string digest;      // "sha256:<64 hex>" or ""

  // "registry/repository:tag" or "registry/repository@digest" (both when both are given).
  std::string String() const;
  // The repository as skopeo's docker transport takes it: "//registry/repository:tag".
  std::string Transport() const;
  // True when the registry is on loopback (127.0.0.0/8, ::1, localhost): plain HTTP allowed, as
  // Docker does.
  bool OnLoopback() const;
  friend bool operator==(const Reference&, const Reference&) = default;
};

// A reference from either form; an error names what is wrong ("invalid reference format:
// repository name must be lowercase: 'Busybox'").
Result<Reference> ParseReference(std::string_view text);

// True for a local image: an absolute path (an OCI archive file or an OCI layout folder).
bool IsLocalImagePath(std::string_view text);

}  // namespace berth::image

#endif  // BERTH_IMAGE_REFERENCE_H_
