// ProtoReader: one protobuf message's fields in order, as kubectl's protobuf bodies carry them
// (wire types 0, 1, 2 and 5; groups are malformed). Shared by the ObjectMeta/Secret/ConfigMap
// decoder (protobuf.cc) and the Job/CronJob decoder (protobuf_workloads.cc).
//
// Thread safety: a reader is used by one thread; it only reads the bytes it was given.
#ifndef BERTH_K8S_PROTOBUF_READER_H_
#define BERTH_K8S_PROTOBUF_READER_H_

#include <cstddef>
#include <cstdint>
#include <optional>
#include <string_view>

namespace berth::k8s {

// One field as read: its number, wire type and value (a varint, or the bytes of a
// length-delimited field; fixed-width values are skipped).
struct ProtoField {
  uint32_t number = 0;
  uint32_t type = 0;
  uint64_t varint = 0;
  std::string_view bytes;
};

class ProtoReader {
 public:
  explicit ProtoReader(std::string_view data) : data_(data) {}

  // The next field; nullopt at the end, or on malformed input (then failed()).
  std::optional<ProtoField> Next() {
    if (pos_ >= data_.size()) return std::nullopt;
    std::optional<uint64_t> key = Varint();
    if (!key) return Fail();
    ProtoField f;
    f.type = static_cast<uint32_t>(*key & 7);
    f.number = static_cast<uint32_t>(*key >> 3);
    if (f.type == 0) {
      std::optional<uint64_t> v = Varint();
      if (!v) return Fail();
      f.varint = *v;
    } else if (f.type == 1 || f.type == 5) {
      const size_t n = f.type == 1 ? 8 : 4;
      if (data_.size() - pos_ < n) return Fail();
      pos_ += n;
    } else if (f.type == 2) {
      std::optional<uint64_t> len = Varint();
      if (!len || *len > data_.size() - pos_) return Fail();
      f.bytes = data_.substr(pos_, static_cast<size_t>(*len));
      pos_ += static_cast<size_t>(*len);
    } else {
      return Fail();
    }
    return f;
  }
  // The next length-delimited field, the others skipped.
  std::optional<ProtoField> NextBytes() {
    while (std::optional<ProtoField> f = Next()) {
      if (f->type == 2) return f;
    }
    return std::nullopt;
  }
  bool failed() const { return failed_; }

 private:
  std::optional<uint64_t> Varint() {
    uint64_t v = 0;
    for (int shift = 0; shift < 64 && pos_ < data_.size(); shift += 7) {
      const uint8_t b = static_cast<uint8_t>(data_[pos_++]);
      v |= static_cast<uint64_t>(b & 0x7f) << shift;
      if ((b & 0x80) == 0) return v;
    }
    return std::nullopt;
  }
  std::optional<ProtoField> Fail() {
    failed_ = true;
    pos_ = data_.size();
    return std::nullopt;
  }

  std::string_view data_;
  size_t pos_ = 0;
  bool failed_ = false;
};

}  // namespace berth::k8s

#endif  // BERTH_K8S_PROTOBUF_READER_H_
