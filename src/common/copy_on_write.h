// CopyOnWrite<T>: a value that copies of it share until one of them changes it. For what is set
// once and copied often: a job's request lives in the scheduler's state and in every record the
// controller keeps of the job, and is changed only by an update (hold, release, a new limit).
#ifndef BERTH_COMMON_COPY_ON_WRITE_H_
#define BERTH_COMMON_COPY_ON_WRITE_H_

#include <atomic>
#include <memory>
#include <utility>

namespace berth {

template <typename T>
class CopyOnWrite {
 public:
  // Every default-made value shares one T{} until it is changed.
  CopyOnWrite() : p_(Empty()) {}
  CopyOnWrite(T value) : p_(std::make_shared<T>(std::move(value))) {}  // NOLINT: a T converts

  const T& operator*() const { return *p_; }
  const T* operator->() const { return p_.get(); }
  operator const T&() const { return *p_; }  // NOLINT: read where a const T& is asked for

  // The value to change in place: this copy's own (copied first when others share it). Other
  // threads may hold copies and read them; this copy itself must not be read meanwhile.
  T& Mut() {
    if (p_.use_count() != 1) {
      p_ = std::make_shared<T>(*p_);
    } else {
      // The last other holder dropped its copy with a release (shared_ptr's count): its reads
      // happened before this change.
      std::atomic_thread_fence(std::memory_order_acquire);
    }
    return *p_;
  }
  // Whether the two share one value (not whether their values are equal).
  bool SharesWith(const CopyOnWrite& o) const { return p_ == o.p_; }

 private:
  static const std::shared_ptr<T>& Empty() {
    static const std::shared_ptr<T> empty = std::make_shared<T>();
    return empty;
  }
  std::shared_ptr<T> p_;  // never null
};

// `value` shared with `last` when the two are equal, else a value of its own that becomes `last`:
// for values made one after another that mostly repeat (the facts of a partition's jobs).
template <typename T>
CopyOnWrite<T> ShareWithLast(T value, CopyOnWrite<T>& last) {
  if (*last != value) last = CopyOnWrite<T>(std::move(value));
  return last;
}

}  // namespace berth

#endif  // BERTH_COMMON_COPY_ON_WRITE_H_
