// sha256 digests of blobs ("sha256:<64 hex>"), through OpenSSL's EVP.
//
// Thread safety: Sha256 is a value used by one thread; the functions are pure (they read files).
#ifndef BERTH_IMAGE_DIGEST_H_
#define BERTH_IMAGE_DIGEST_H_

#include <memory>
#include <string>
#include <string_view>

#include "common/status.h"

namespace berth::image {

class Sha256 {
 public:
  Sha256();
  ~Sha256();
  Sha256(const Sha256&) = delete;
  Sha256& operator=(const Sha256&) = delete;
  void Update(const void* data, size_t n);
  // "sha256:<hex>"; the object is then spent.
  std::string Digest();

 private:
  struct Ctx;
  std::unique_ptr<Ctx> ctx_;
};

std::string Sha256Digest(std::string_view data);  // "sha256:<hex>"
// The digest of a file's content; errors name the file.
Result<std::string> Sha256File(const std::string& path);
// True for "sha256:" and 64 lowercase hex digits (the only algorithm berth accepts).
bool IsSha256Digest(std::string_view digest);
// The 64 hex digits of a valid digest. REQUIRES: IsSha256Digest(digest)
std::string_view DigestHex(std::string_view digest);
// OK when the file at `path` has `digest`, else InvalidArgument naming both digests.
Status VerifyFile(const std::string& path, std::string_view digest);

}  // namespace berth::image

#endif  // BERTH_IMAGE_DIGEST_H_
