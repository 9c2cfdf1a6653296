// The image store's shared insides (store.cc, store_import.cc): Store::Impl, the record's paths.
//
// Thread safety: as Store (every operation takes its flocks; Impl holds no mutable state).
#ifndef BERTH_IMAGE_STORE_INTERNAL_H_
#define BERTH_IMAGE_STORE_INTERNAL_H_

#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "image/digest.h"
#include "image/store.h"
#include "image/store_files.h"

namespace berth::image {

// A layer's folder name: the first 16 hex digits of its digest.
std::string LayerId(std::string_view digest);

// The store's folder and options; every operation finds its state in files (store.h's layout).
struct Store::Impl {
  std::string root;
  StoreOptions options;

  std::string Dir(std::string_view sub) const { return root + "/" + std::string(sub); }
  std::string BlobPath(std::string_view digest) const {
    return root + "/blobs/sha256/" + std::string(DigestHex(digest));
  }
  std::string RecordPath(std::string_view digest) const {
    return root + "/images/" + std::string(DigestHex(digest)) + ".json";
  }
  std::string LayerDir(std::string_view digest) const {
    return root + "/layers/" + LayerId(digest);
  }

  Result<FileLock> IndexLock() const { return FileLock::Take(Dir("locks/index.lock"), true); }

  Result<ImageRecord> Load(std::string_view digest) const;
  // Every record; one being replaced or damaged is skipped.
  Result<std::vector<ImageRecord>> LoadAll() const;
  std::optional<ImageRecord> FindByRef(const Reference& ref) const;
  // skopeo's options for reaching `ref`'s registry; `copy` selects copy's --src-* spellings.
  std::vector<std::string> RegistryArgs(const Reference& ref, const Credentials& creds,
                                        bool copy) const;

  // skopeo's temporary files go in the operation's own folder (CleanTmp keeps live ones).
  static std::vector<std::string> Env(const TmpDir& tmp) {
    return {"TMPDIR=" + tmp.path(), "XDG_RUNTIME_DIR=" + tmp.path()};
  }

  Result<ImageRecord> Pull(const Reference& ref, const Credentials& creds);
  Result<ImageRecord> Commit(const std::string& manifest_digest,
                             const std::vector<std::string>& names, const Credentials& creds);
  Result<int64_t> EnsureLayer(const std::string& digest);
  Status AddUid(const std::string& digest, int64_t uid);
  bool Held(std::string_view digest) const;
  Result<std::vector<ImageRecord>> ImportLayout(const std::string& layout, const std::string& stem);
  Result<std::vector<ImageRecord>> ImportDockerSave(const std::string& dir);
};

}  // namespace berth::image

#endif  // BERTH_IMAGE_STORE_INTERNAL_H_
