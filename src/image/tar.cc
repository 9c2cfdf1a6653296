#include "image/tar.h"

#include <fcntl.h>
#include <unistd.h>
#include <zlib.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <vector>

namespace berth::image {
namespace {

constexpr int64_t kBlock = 512;
constexpr int64_t kMaxRecord = 1 << 20;

class MemSource : public ByteSource {
 public:
  explicit MemSource(std::string_view d) : d_(d) {}
  Result<size_t> Read(char* buf, size_t n) override {
    size_t k = std::min(n, d_.size());
    std::memcpy(buf, d_.data(), k);
    d_.remove_prefix(k);
    return k;
  }

 private:
  std::string_view d_;
};

class FileSource : public ByteSource {
 public:
  FileSource(int fd, std::string path) : fd_(fd), path_(std::move(path)) {}
  ~FileSource() override { close(fd_); }
  Result<size_t> Read(char* buf, size_t n) override {
    while (true) {
      ssize_t k = read(fd_, buf, n);
      if (k >= 0) return static_cast<size_t>(k);
      if (errno != EINTR) {
        return Status::Internal("cannot read " + path_ + ": " + std::strerror(errno));
      }
    }
  }

 private:
  int fd_;
  std::string path_;
};

class Gzip : public ByteSource {
 public:
  explicit Gzip(std::unique_ptr<ByteSource> in) : in_(std::move(in)), buf_(1 << 16) {
    std::memset(&z_, 0, sizeof(z_));
    ok_ = inflateInit2(&z_, 15 + 16) == Z_OK;
  }
  ~Gzip() override { inflateEnd(&z_); }
  Result<size_t> Read(char* out, size_t n) override {
    if (!ok_) return Status::Internal("zlib: cannot start inflating");
    if (done_ || n == 0) return size_t{0};
    z_.next_out = reinterpret_cast<Bytef*>(out);
    z_.avail_out = static_cast<uInt>(std::min<size_t>(n, 1 << 30));
    while (z_.avail_out == static_cast<uInt>(std::min<size_t>(n, 1 << 30))) {
      if (z_.avail_in == 0) {
        BERTH_ASSIGN_OR_RETURN(size_t k, in_->Read(buf_.data(), buf_.size()));
        if (k == 0) {
          if (member_started_) {
            return Status::InvalidArgument("truncated gzip stream");
          }
          done_ = true;
          break;
        }
        z_.next_in = reinterpret_cast<Bytef*>(buf_.data());
        z_.avail_in = static_cast<uInt>(k);
      }
      member_started_ = true;
      int rc = inflate(&z_, Z_NO_FLUSH);
      if (rc == Z_STREAM_END) {
        // Another member may follow (gzip allows concatenation).
        member_started_ = false;
        inflateReset(&z_);
        continue;
      }
      if (rc != Z_OK && rc != Z_BUF_ERROR) {
        return Status::InvalidArgument(std::string("corrupt gzip stream: ") +
                                       (z_.msg ? z_.msg : "inflate failed"));
      }
    }
    return static_cast<size_t>(std::min<size_t>(n, 1 << 30) - z_.avail_out);
  }

 private:
  std::unique_ptr<ByteSource> in_;
  std::vector<char> buf_;
  z_stream z_;
  bool ok_ = false;
  bool done_ = false;
  bool member_started_ = false;
};

// A numeric header field: octal (NUL or space terminated), or GNU's base-256.
Result<int64_t> ParseNumber(const char* f, size_t n, std::string_view what) {
  auto u = [&](size_t i) { return static_cast<unsigned char>(f[i]); };
  if (u(0) & 0x80) {
    if (u(0) & 0x40) return Status::InvalidArgument(std::string("negative tar ") + what.data());
    int64_t v = u(0) & 0x3f;
    for (size_t i = 1; i < n; ++i) {
      if (v > (INT64_MAX >> 8))
        return Status::InvalidArgument("tar " + std::string(what) + " too large");
      v = (v << 8) | u(i);
    }
    return v;
  }
  size_t i = 0;
  while (i < n && (f[i] == ' ' || f[i] == '\0')) ++i;
  int64_t v = 0;
  bool any = false;
  for (; i < n && f[i] >= '0' && f[i] <= '7'; ++i) {
    if (v > (INT64_MAX >> 3))
      return Status::InvalidArgument("tar " + std::string(what) + " too large");
    v = v * 8 + (f[i] - '0');
    any = true;
  }
  for (; i < n; ++i) {
    if (f[i] != ' ' && f[i] != '\0') {
      return Status::InvalidArgument("bad tar header: " + std::string(what) + " is not a number");
    }
  }
  (void)any;
  return v;
}

std::string Field(const char* f, size_t n) {
  return std::string(f, strnlen(f, n));
}

// Pax records "LEN key=value\n" into the entry being prepared.
Status ApplyPax(std::string_view data, TarEntry* e, bool* has_path, bool* has_link,
                bool* has_size) {
  while (!data.empty()) {
    size_t sp = data.find(' ');
    if (sp == std::string_view::npos) return Status::InvalidArgument("bad pax header record");
    int64_t len = 0;
    for (char c : data.substr(0, sp)) {
      if (c < '0' || c > '9' || len > kMaxRecord) {
        return Status::InvalidArgument("bad pax header record length");
      }
      len = len * 10 + (c - '0');
    }
    if (len <= static_cast<int64_t>(sp) + 1 || len > static_cast<int64_t>(data.size()) ||
        data[static_cast<size_t>(len) - 1] != '\n') {
      return Status::InvalidArgument("bad pax header record");
    }
    std::string_view rec = data.substr(sp + 1, static_cast<size_t>(len) - sp - 2);
    data.remove_prefix(static_cast<size_t>(len));
    size_t eq = rec.find('=');
    if (eq == std::string_view::npos) return Status::InvalidArgument("bad pax header record");
    std::string_view key = rec.substr(0, eq), value = rec.substr(eq + 1);
    auto number = [&](int64_t* out) -> Status {
      int64_t v = 0;
      size_t dot = value.find('.');
      std::string_view whole = value.substr(0, dot);
      if (whole.empty()) return Status::InvalidArgument("bad pax " + std::string(key));
      for (char c : whole) {
        if (c < '0' || c > '9' || v > (INT64_MAX / 10 - 10)) {
          return Status::InvalidArgument("bad pax " + std::string(key));
        }
        v = v * 10 + (c - '0');
      }
      *out = v;
      return Status::Ok();
    };
    if (key == "path") {
      e->path = std::string(value);
      *has_path = true;
    } else if (key == "linkpath") {
      e->link = std::string(value);
      *has_link = true;
    } else if (key == "size") {
      BERTH_RETURN_IF_ERROR(number(&e->size));
      *has_size = true;
    } else if (key == "uid") {
      BERTH_RETURN_IF_ERROR(number(&e->uid));
    } else if (key == "gid") {
      BERTH_RETURN_IF_ERROR(number(&e->gid));
    } else if (key == "mtime") {
      if (!value.empty() && value[0] != '-') BERTH_RETURN_IF_ERROR(number(&e->mtime));
    }
  }
  return Status::Ok();
}

}  // namespace

std::unique_ptr<ByteSource> MemorySource(std::string_view data) {
  return std::make_unique<MemSource>(data);
}

std::unique_ptr<ByteSource> GzipSource(std::unique_ptr<ByteSource> in) {
  return std::make_unique<Gzip>(std::move(in));
}

Result<std::unique_ptr<ByteSource>> OpenLayerFile(const std::string& path) {
  int fd = open(path.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0) return Status::NotFound("cannot open " + path + ": " + std::strerror(errno));
  unsigned char magic[4] = {0, 0, 0, 0};
  ssize_t k = pread(fd, magic, sizeof(magic), 0);
  if (k == 4 && magic[0] == 0x28 && magic[1] == 0xb5 && magic[2] == 0x2f && magic[3] == 0xfd) {
    close(fd);
    return Status::InvalidArgument("zstd layers are not supported (" + path + ")");
  }
  std::unique_ptr<ByteSource> src = std::make_unique<FileSource>(fd, path);
  if (k >= 2 && magic[0] == 0x1f && magic[1] == 0x8b) return GzipSource(std::move(src));
  return src;
}

Status TarReader::ReadFull(char* buf, size_t n, std::string_view what) {
  size_t got = 0;
  while (got < n) {
    BERTH_ASSIGN_OR_RETURN(size_t k, in_->Read(buf + got, n - got));
    if (k == 0)
      return Status::InvalidArgument("truncated tar archive (in " + std::string(what) + ")");
    got += k;
  }
  return Status::Ok();
}

Status TarReader::Skip(int64_t n) {
  char buf[8192];
  while (n > 0) {
    size_t k = static_cast<size_t>(std::min<int64_t>(n, sizeof(buf)));
    BERTH_RETURN_IF_ERROR(ReadFull(buf, k, "an entry's content"));
    n -= static_cast<int64_t>(k);
  }
  return Status::Ok();
}

Result<std::string> TarReader::ReadRecord(int64_t size, std::string_view what) {
  if (size > kMaxRecord) {
    return Status::InvalidArgument(std::string(what) + " over 1 MiB in the tar archive");
  }
  std::string data(static_cast<size_t>(size), '\0');
  BERTH_RETURN_IF_ERROR(ReadFull(data.data(), data.size(), what));
  BERTH_RETURN_IF_ERROR(Skip((kBlock - size % kBlock) % kBlock));
  return data;
}

Result<bool> TarReader::Next(TarEntry* e) {
  BERTH_RETURN_IF_ERROR(Skip(remaining_ + padding_));
  remaining_ = padding_ = 0;
  *e = TarEntry{};
  bool has_path = false, has_link = false, has_size = false;
  TarEntry pax;
  while (true) {
    char h[kBlock];
    // The archive may end without its two zero blocks (some writers stop early): an end of
    // stream exactly at a header boundary ends it.
    BERTH_ASSIGN_OR_RETURN(size_t first, in_->Read(h, kBlock));
    if (first == 0) {
      if (has_path || has_link || has_size) return Status::InvalidArgument("truncated tar archive");
      return false;
    }
    BERTH_RETURN_IF_ERROR(ReadFull(h + first, kBlock - first, "a header"));
    if (std::all_of(h, h + kBlock, [](char c) { return c == 0; })) return false;
    BERTH_ASSIGN_OR_RETURN(int64_t sum, ParseNumber(h + 148, 8, "checksum"));
    int64_t unsigned_sum = 0, signed_sum = 0;
    for (int i = 0; i < kBlock; ++i) {
      char c = (i >= 148 && i < 156) ? ' ' : h[i];
      unsigned_sum += static_cast<unsigned char>(c);
      signed_sum += static_cast<signed char>(c);
    }
    if (sum != unsigned_sum && sum != signed_sum) {
      return Status::InvalidArgument("bad tar header checksum (not a tar archive, or corrupt)");
    }
    char type = h[156];
    BERTH_ASSIGN_OR_RETURN(int64_t size, ParseNumber(h + 124, 12, "size"));
    if (type == 'x' || type == 'g' || type == 'L' || type == 'K') {
      BERTH_ASSIGN_OR_RETURN(std::string data, ReadRecord(size, "a pax or long-name record"));
      if (type == 'x') {
        BERTH_RETURN_IF_ERROR(ApplyPax(data, &pax, &has_path, &has_link, &has_size));
      } else if (type == 'L') {
        pax.path = Field(data.data(), data.size());
        has_path = true;
      } else if (type == 'K') {
        pax.link = Field(data.data(), data.size());
        has_link = true;
      }
      continue;
    }
    bool ustar = std::memcmp(h + 257, "ustar\0", 6) == 0;
    e->path = Field(h, 100);
    if (ustar && h[345] != '\0') e->path = Field(h + 345, 155) + "/" + e->path;
    e->link = Field(h + 157, 100);
    BERTH_ASSIGN_OR_RETURN(int64_t mode, ParseNumber(h + 100, 8, "mode"));
    BERTH_ASSIGN_OR_RETURN(e->uid, ParseNumber(h + 108, 8, "uid"));
    BERTH_ASSIGN_OR_RETURN(e->gid, ParseNumber(h + 116, 8, "gid"));
    BERTH_ASSIGN_OR_RETURN(e->mtime, ParseNumber(h + 136, 12, "mtime"));
    e->mode = static_cast<uint32_t>(mode & 07777);
    e->size = size;
    if (has_path) e->path = pax.path;
    if (has_link) e->link = pax.link;
    if (has_size) e->size = pax.size;
    if (pax.uid) e->uid = pax.uid;
    if (pax.gid) e->gid = pax.gid;
    if (pax.mtime) e->mtime = pax.mtime;
    switch (type) {
      case '0':
      case '\0':
      case '7':
        e->type = TarEntry::Type::kFile;
        break;
      case '1':
        e->type = TarEntry::Type::kHardlink;
        break;
      case '2':
        e->type = TarEntry::Type::kSymlink;
        break;
      case '3':
        e->type = TarEntry::Type::kCharDev;
        break;
      case '4':
        e->type = TarEntry::Type::kBlockDev;
        break;
      case '5':
        e->type = TarEntry::Type::kDir;
        break;
      case '6':
        e->type = TarEntry::Type::kFifo;
        break;
      default:
        return Status::InvalidArgument("unsupported tar entry type '" + std::string(1, type) +
                                       "' for '" + e->path + "'");
    }
    if (e->type == TarEntry::Type::kFile) {
      if (e->path.ends_with("/")) {
        e->type = TarEntry::Type::kDir;  // old tars mark folders with a trailing slash
      }
    }
    // Only regular files carry content in a layer; others' size field is skipped as content.
    remaining_ = e->size;
    padding_ = (kBlock - e->size % kBlock) % kBlock;
    if (e->type != TarEntry::Type::kFile) e->size = 0;
    return true;
  }
}

Result<size_t> TarReader::ReadData(char* buf, size_t n) {
  if (remaining_ == 0) return size_t{0};
  size_t k = static_cast<size_t>(std::min<int64_t>(remaining_, static_cast<int64_t>(n)));
  BERTH_RETURN_IF_ERROR(ReadFull(buf, k, "an entry's content"));
  remaining_ -= static_cast<int64_t>(k);
  return k;
}

}  // namespace berth::image
