#include "image/digest.h"

#include <fcntl.h>
#include <openssl/evp.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <vector>

namespace berth::image {

struct Sha256::Ctx {
  EVP_MD_CTX* md = nullptr;
};

Sha256::Sha256() : ctx_(std::make_unique<Ctx>()) {
  ctx_->md = EVP_MD_CTX_new();
  EVP_DigestInit_ex(ctx_->md, EVP_sha256(), nullptr);
}

Sha256::~Sha256() {
  EVP_MD_CTX_free(ctx_->md);
}

void Sha256::Update(const void* data, size_t n) {
  EVP_DigestUpdate(ctx_->md, data, n);
}

std::string Sha256::Digest() {
  unsigned char out[EVP_MAX_MD_SIZE];
  unsigned int len = 0;
  EVP_DigestFinal_ex(ctx_->md, out, &len);
  static constexpr char kHex[] = "0123456789abcdef";
  std::string s = "sha256:";
  for (unsigned int i = 0; i < len; ++i) {
    s += kHex[out[i] >> 4];
    s += kHex[out[i] & 15];
  }
  return s;
}

std::string Sha256Digest(std::string_view data) {
  Sha256 h;
  h.Update(data.data(), data.size());
  return h.Digest();
}

Result<std::string> Sha256File(const std::string& path) {
  int fd = open(path.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0) return Status::NotFound("cannot open " + path + ": " + std::strerror(errno));
  Sha256 h;
  std::vector<char> buf(1 << 20);
  while (true) {
    ssize_t n = read(fd, buf.data(), buf.size());
    if (n < 0 && errno == EINTR) continue;
    if (n < 0) {
      int e = errno;
      close(fd);
      return Status::Internal("cannot read " + path + ": " + std::strerror(e));
    }
    if (n == 0) break;
    h.Update(buf.data(), static_cast<size_t>(n));
  }
  close(fd);
  return h.Digest();
}

bool IsSha256Digest(std::string_view digest) {
  if (digest.size() != 71 || !digest.starts_with("sha256:")) return false;
  for (char c : digest.substr(7)) {
    if (!((c >= '0' && c <= '9') || (c >= 'a' && c <= 'f'))) return false;
  }
  return true;
}

std::string_view DigestHex(std::string_view digest) {
  return digest.substr(7);
}

Status VerifyFile(const std::string& path, std::string_view digest) {
  BERTH_ASSIGN_OR_RETURN(std::string got, Sha256File(path));
  if (got != digest) {
    return Status::InvalidArgument("blob " + std::string(digest) +
                                   " does not match its digest (its content is " + got + ")");
  }
  return Status::Ok();
}

}  // namespace berth::image
