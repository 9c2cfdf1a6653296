// Test support: tar archives (and gzip) built in memory, including the malformed ones the
// unpacker must refuse. Header-only; used by the image tests.
#ifndef BERTH_IMAGE_TAR_BUILDER_TESTING_H_
#define BERTH_IMAGE_TAR_BUILDER_TESTING_H_

#include <zlib.h>

#include <cstdio>
#include <cstring>
#include <string>

namespace berth::image::testing {

// An entry's mode, owner and time.
struct TarOpts {
  unsigned mode = 0644;
  long uid = 0, gid = 0;
  long mtime = 1700000000;
};

class TarBuilder {
 public:
  using Opts = TarOpts;
  TarBuilder& File(const std::string& path, const std::string& content, Opts o = {}) {
    Header(path, '0', content.size(), o, "");
    Data(content);
    return *this;
  }
  TarBuilder& Dir(const std::string& path, Opts o = {}) {
    if (o.mode == 0644) o.mode = 0755;
    Header(path, '5', 0, o, "");
    return *this;
  }
  TarBuilder& Symlink(const std::string& path, const std::string& target, Opts o = {}) {
    o.mode = 0777;
    Header(path, '2', 0, o, target);
    return *this;
  }
  TarBuilder& Hardlink(const std::string& path, const std::string& target, Opts o = {}) {
    Header(path, '1', 0, o, target);
    return *this;
  }
  TarBuilder& Device(const std::string& path, char type, Opts o = {}) {
    Header(path, type, 0, o, "");
    return *this;
  }
  // A GNU 'L' long name record, then a file whose header holds a truncated name.
  TarBuilder& LongNameFile(const std::string& path, const std::string& content) {
    Header("././@LongLink", 'L', path.size() + 1, {}, "");
    Data(path + '\0');
    return File(path.substr(0, 99), content);
  }
  // A pax 'x' header with `records` (key -> value), then a file whose header holds `short_path`.
  TarBuilder& PaxFile(const std::string& short_path, const std::string& pax_path,
                      const std::string& content) {
    std::string rec = Record("path", pax_path) + Record("mtime", "1700000001.5");
    Header("PaxHeaders/x", 'x', rec.size(), {}, "");
    Data(rec);
    return File(short_path, content);
  }
  TarBuilder& GlobalPax() {
    std::string rec = Record("comment", "ignored");
    Header("pax_global_header", 'g', rec.size(), {}, "");
    Data(rec);
    return *this;
  }
  std::string Finish() const { return out_ + std::string(1024, '\0'); }
  const std::string& Unfinished() const { return out_; }

  static std::string Gzip(const std::string& data) {
    z_stream z;
    std::memset(&z, 0, sizeof(z));
    deflateInit2(&z, 6, Z_DEFLATED, 15 + 16, 8, Z_DEFAULT_STRATEGY);
    std::string out(deflateBound(&z, data.size()) + 64, '\0');
    z.next_in = reinterpret_cast<Bytef*>(const_cast<char*>(data.data()));
    z.avail_in = static_cast<uInt>(data.size());
    z.next_out = reinterpret_cast<Bytef*>(out.data());
    z.avail_out = static_cast<uInt>(out.size());
    deflate(&z, Z_FINISH);
    out.resize(z.total_out);
    deflateEnd(&z);
    return out;
  }

 private:
  static std::string Record(const std::string& k, const std::string& v) {
    std::string body = " " + k + "=" + v + "\n";
    size_t len = body.size() + 1;
    while (std::to_string(len).size() + body.size() != len) ++len;
    return std::to_string(len) + body;
  }
  static void Octal(char* f, size_t n, unsigned long v) {
    for (size_t i = n - 1; i-- > 0; v >>= 3) f[i] = static_cast<char>('0' + (v & 7));
    f[n - 1] = '\0';
  }
  void Header(const std::string& name, char type, size_t size, const Opts& o,
              const std::string& link) {
    char h[512];
    std::memset(h, 0, sizeof(h));
    std::memcpy(h, name.data(), std::min<size_t>(name.size(), 100));
    Octal(h + 100, 8, o.mode);
    Octal(h + 108, 8, static_cast<unsigned long>(o.uid));
    Octal(h + 116, 8, static_cast<unsigned long>(o.gid));
    Octal(h + 124, 12, size);
    Octal(h + 136, 12, static_cast<unsigned long>(o.mtime));
    h[156] = type;
    std::memcpy(h + 157, link.data(), std::min<size_t>(link.size(), 100));
    std::memcpy(h + 257,
                "ustar\0"
                "00",
                8);
    std::memset(h + 148, ' ', 8);
    unsigned sum = 0;
    for (unsigned char c : h) sum += c;
    Octal(h + 148, 7, sum);
    out_.append(h, sizeof(h));
  }
  void Data(const std::string& d) {
    out_ += d;
    out_.append((512 - d.size() % 512) % 512, '\0');
  }
  std::string out_;
};

}  // namespace berth::image::testing

#endif  // BERTH_IMAGE_TAR_BUILDER_TESTING_H_
