// A dynamically sized bitset over small integer ids (node indices, feature ids), with the few
// whole-word operations the scheduler's inner loops need.
//
// Thread safety: a value type; no internal synchronisation.
#ifndef BERTH_COMMON_BITSET_H_
#define BERTH_COMMON_BITSET_H_

#include <algorithm>
#include <bit>
#include <cstddef>
#include <cstdint>
#include <vector>

namespace berth {

class Bitset {
 public:
  Bitset() = default;
  explicit Bitset(size_t size) : size_(size), words_((size + 63) / 64, 0) {}

  size_t size() const { return size_; }
  // Grows (new bits clear) or shrinks.
  void Resize(size_t size) {
    size_ = size;
    words_.resize((size + 63) / 64, 0);
    if (size % 64 != 0 && !words_.empty()) words_.back() &= (uint64_t{1} << (size % 64)) - 1;
  }

  // REQUIRES: i < size()
  bool Test(size_t i) const { return (words_[i >> 6] >> (i & 63)) & 1; }
  void Set(size_t i) { words_[i >> 6] |= uint64_t{1} << (i & 63); }
  void Reset(size_t i) { words_[i >> 6] &= ~(uint64_t{1} << (i & 63)); }
  void Assign(size_t i, bool v) { v ? Set(i) : Reset(i); }
  void Clear() { std::fill(words_.begin(), words_.end(), 0); }

  size_t Count() const {
    size_t n = 0;
    for (uint64_t w : words_) n += std::popcount(w);
    return n;
  }
  bool Any() const {
    for (uint64_t w : words_) {
      if (w) return true;
    }
    return false;
  }

  // REQUIRES: other.size() == size() for the binary operations.
  Bitset& operator&=(const Bitset& o) {
    for (size_t i = 0; i < words_.size(); ++i) words_[i] &= o.words_[i];
    return *this;
  }
  Bitset& operator|=(const Bitset& o) {
    for (size_t i = 0; i < words_.size(); ++i) words_[i] |= o.words_[i];
    return *this;
  }
  Bitset& AndNot(const Bitset& o) {
    for (size_t i = 0; i < words_.size(); ++i) words_[i] &= ~o.words_[i];
    return *this;
  }
  // True when some bit is set in both.
  bool Intersects(const Bitset& o) const {
    for (size_t i = 0; i < words_.size(); ++i) {
      if (words_[i] & o.words_[i]) return true;
    }
    return false;
  }

  // Calls f(i) for every set bit i in ascending order; f returns false to stop early.
  template <typename F>
  void ForEach(F&& f) const {
    for (size_t w = 0; w < words_.size(); ++w) {
      for (uint64_t bits = words_[w]; bits != 0; bits &= bits - 1) {
        if (!f(w * 64 + std::countr_zero(bits))) return;
      }
    }
  }
  // Like ForEach over the intersection of *this and other, without materialising it.
  template <typename F>
  void ForEachAnd(const Bitset& other, F&& f) const {
    for (size_t w = 0; w < words_.size(); ++w) {
      for (uint64_t bits = words_[w] & other.words_[w]; bits != 0; bits &= bits - 1) {
        if (!f(w * 64 + std::countr_zero(bits))) return;
      }
    }
  }

  const std::vector<uint64_t>& words() const { return words_; }
  friend bool operator==(const Bitset&, const Bitset&) = default;

 private:
  size_t size_ = 0;
  std::vector<uint64_t> words_;
};

}  // namespace berth

#endif  // BERTH_COMMON_BITSET_H_
