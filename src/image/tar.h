// A streaming reader of tar archives (ustar, GNU long names 'L'/'K', pax 'x' headers; 'g'
// ignored), over a byte source that may be gzip-compressed. Bounded: a pax or GNU long-name
// record over 1 MiB is an error; a short read inside a header or an entry is "truncated".
//
// Thread safety: one reader per thread.
#ifndef BERTH_IMAGE_TAR_H_
#define BERTH_IMAGE_TAR_H_

#include <cstdint>
#include <memory>
#include <string>
#include <string_view>

#include "common/status.h"

namespace berth::image {

// A stream of bytes. Read returns 0 at the end.
class ByteSource {
 public:
  virtual ~ByteSource() = default;
  virtual Result<size_t> Read(char* buf, size_t n) = 0;
};

// Bytes held in memory (for tests and small archives); `data` must outlive the source.
std::unique_ptr<ByteSource> MemorySource(std::string_view data);
// A file's bytes, decompressed when it starts with gzip's magic; zstd is refused ("zstd layers
// are not supported"). Errors name the file.
Result<std::unique_ptr<ByteSource>> OpenLayerFile(const std::string& path);
// gzip (one or more members) over `in`; a stream that ends early is an error.
std::unique_ptr<ByteSource> GzipSource(std::unique_ptr<ByteSource> in);

struct TarEntry {
  enum class Type { kFile, kDir, kSymlink, kHardlink, kCharDev, kBlockDev, kFifo };
  Type type = Type::kFile;
  std::string path;  // as written in the archive (normalised by the unpacker)
  std::string link;  // symlink target or hard link's target path
  int64_t size = 0;  // the content's size (kFile)
  uint32_t mode = 0;
  int64_t uid = 0;
  int64_t gid = 0;
  int64_t mtime = 0;
};

class TarReader {
 public:
  explicit TarReader(ByteSource* in) : in_(in) {}
  // The next entry into *e: true, or false at the end of the archive. Skips what is left of the
  // previous entry's content.
  Result<bool> Next(TarEntry* e);
  // Reads the current entry's content: up to n bytes, 0 at its end.
  Result<size_t> ReadData(char* buf, size_t n);

 private:
  Status ReadFull(char* buf, size_t n, std::string_view what);
  Status Skip(int64_t n);
  Result<std::string> ReadRecord(int64_t size, std::string_view what);

  ByteSource* in_;
  int64_t remaining_ = 0;  // of the current entry's content
  int64_t padding_ = 0;    // after it, to the next 512-byte block
};

}  // namespace berth::image

#endif  // BERTH_IMAGE_TAR_H_
