// SmallVector<T, N>: a vector whose first N elements live inside it, for the many small lists
// kept per job (a pending job names one partition nearly always): no heap block, and no pointer
// to follow, until it holds more than N.
//
// It has the parts of std::vector's interface that berth uses: iteration over contiguous
// elements, size(), [], at(), front()/back(), push_back/emplace_back, reserve, clear, copies and
// moves. A move leaves the source empty. References and iterators are invalidated as std::vector's
// are (by growth), and also by a move of the container while its elements are inline.
#ifndef BERTH_COMMON_SMALL_VECTOR_H_
#define BERTH_COMMON_SMALL_VECTOR_H_

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <initializer_list>
#include <memory>
#include <new>
#include <stdexcept>
#include <utility>

namespace berth {

template <typename T, size_t N>
class SmallVector {
  static_assert(N > 0, "a SmallVector without inline room is a std::vector");

 public:
  using value_type = T;
  using size_type = size_t;
  using iterator = T*;
  using const_iterator = const T*;
  using reference = T&;
  using const_reference = const T&;

  SmallVector() = default;
  SmallVector(std::initializer_list<T> init) {
    reserve(init.size());
    for (const T& v : init) emplace_back(v);
  }
  SmallVector(const SmallVector& other) {
    reserve(other.size_);
    std::uninitialized_copy(other.begin(), other.end(), data_);
    size_ = other.size_;
  }
  SmallVector(SmallVector&& other) noexcept { TakeFrom(other); }
  SmallVector& operator=(const SmallVector& other) {
    if (this != &other) {
      clear();
      reserve(other.size_);
      std::uninitialized_copy(other.begin(), other.end(), data_);
      size_ = other.size_;
    }
    return *this;
  }
  SmallVector& operator=(SmallVector&& other) noexcept {
    if (this != &other) {
      clear();
      FreeHeap();
      TakeFrom(other);
    }
    return *this;
  }
  ~SmallVector() {
    clear();
    FreeHeap();
  }

  size_t size() const { return size_; }
  bool empty() const { return size_ == 0; }
  size_t capacity() const { return capacity_; }
  // True while the elements are inside the object (no heap block).
  bool is_inline() const { return data_ == Inline(); }

  T* data() { return data_; }
  const T* data() const { return data_; }
  iterator begin() { return data_; }
  iterator end() { return data_ + size_; }
  const_iterator begin() const { return data_; }
  const_iterator end() const { return data_ + size_; }
  T& operator[](size_t i) { return data_[i]; }
  const T& operator[](size_t i) const { return data_[i]; }
  T& at(size_t i) { return data_[Checked(i)]; }
  const T& at(size_t i) const { return data_[Checked(i)]; }
  T& front() { return data_[0]; }
  const T& front() const { return data_[0]; }
  T& back() { return data_[size_ - 1]; }
  const T& back() const { return data_[size_ - 1]; }

  void reserve(size_t n) {
    if (n > capacity_) MoveTo(n, nullptr);
  }

  template <typename... Args>
  T& emplace_back(Args&&... args) {
    if (size_ == capacity_) {
      // The new element first, into the new block: an argument may be one of the elements.
      MoveTo(std::max<size_t>(2 * capacity_, size_ + 1),
             [&](T* slot) { ::new (static_cast<void*>(slot)) T(std::forward<Args>(args)...); });
    } else {
      ::new (static_cast<void*>(data_ + size_)) T(std::forward<Args>(args)...);
    }
    return data_[size_++];
  }
  void push_back(const T& v) { emplace_back(v); }
  void push_back(T&& v) { emplace_back(std::move(v)); }
  void pop_back() { data_[--size_].~T(); }

  void clear() {
    std::destroy(begin(), end());
    size_ = 0;
  }

  friend bool operator==(const SmallVector& a, const SmallVector& b) {
    return std::equal(a.begin(), a.end(), b.begin(), b.end());
  }

 private:
  size_t Checked(size_t i) const {
    if (i >= size_) throw std::out_of_range("SmallVector::at");
    return i;
  }
  // The inline storage's address (not std::launder'ed: no element need live there).
  T* Inline() { return reinterpret_cast<T*>(inline_); }
  const T* Inline() const { return reinterpret_cast<const T*>(inline_); }

  // Moves the elements into a heap block of `capacity`; `place_new`, if given, first constructs
  // one more element after them there.
  template <typename Place>
  void MoveTo(size_t capacity, Place place_new) {
    T* block = std::allocator<T>().allocate(capacity);
    if constexpr (!std::is_same_v<Place, std::nullptr_t>) {
      try {
        place_new(block + size_);
      } catch (...) {
        std::allocator<T>().deallocate(block, capacity);
        throw;
      }
    }
    std::uninitialized_move(begin(), end(), block);
    std::destroy(begin(), end());
    FreeHeap();
    data_ = block;
    capacity_ = static_cast<uint32_t>(capacity);
  }

  void FreeHeap() {
    if (!is_inline()) std::allocator<T>().deallocate(data_, capacity_);
    data_ = Inline();
    capacity_ = N;
  }

  // REQUIRES: this is empty and inline.
  void TakeFrom(SmallVector& other) {
    if (other.is_inline()) {
      std::uninitialized_move(other.begin(), other.end(), data_);
      size_ = other.size_;
      other.clear();
    } else {
      data_ = other.data_;
      size_ = other.size_;
      capacity_ = other.capacity_;
      other.data_ = other.Inline();
      other.size_ = 0;
      other.capacity_ = N;
    }
  }

  alignas(T) unsigned char inline_[N * sizeof(T)];
  T* data_ = Inline();
  uint32_t size_ = 0;
  uint32_t capacity_ = N;
};

}  // namespace berth

#endif  // BERTH_COMMON_SMALL_VECTOR_H_
