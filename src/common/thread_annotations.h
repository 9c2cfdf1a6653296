// Clang's thread-safety annotations (https://clang.llvm.org/docs/ThreadSafetyAnalysis.html),
// empty under GCC. A member written under a mutex says so with GUARDED_BY(mu); a function that
// must be called with a lock held says REQUIRES(mu). The clang build (-Wthread-safety, the `tsa`
// preset that CI runs) then refuses code that touches such a member without its lock.
//
// std::mutex carries no capability attribute in libstdc++, so annotated code uses berth::Mutex
// and berth::MutexLock below: thin wrappers with the attributes, nothing more.
//
// State owned by one thread (the controller's state thread) is marked with a capability too:
// a ThreadRole that the thread "holds" while it runs (ThreadRole::Scope), so that a member only
// that thread may touch is GUARDED_BY(the_role) and checked the same way.
#ifndef BERTH_COMMON_THREAD_ANNOTATIONS_H_
#define BERTH_COMMON_THREAD_ANNOTATIONS_H_

#include <mutex>
#include <shared_mutex>

#if defined(__clang__)
#define BERTH_TSA(x) __attribute__((x))
#else
#define BERTH_TSA(x)
#endif

#define CAPABILITY(x) BERTH_TSA(capability(x))
#define SCOPED_CAPABILITY BERTH_TSA(scoped_lockable)
#define GUARDED_BY(x) BERTH_TSA(guarded_by(x))
#define PT_GUARDED_BY(x) BERTH_TSA(pt_guarded_by(x))
#define REQUIRES(...) BERTH_TSA(requires_capability(__VA_ARGS__))
#define REQUIRES_SHARED(...) BERTH_TSA(requires_shared_capability(__VA_ARGS__))
#define ACQUIRE(...) BERTH_TSA(acquire_capability(__VA_ARGS__))
#define ACQUIRE_SHARED(...) BERTH_TSA(acquire_shared_capability(__VA_ARGS__))
#define RELEASE(...) BERTH_TSA(release_capability(__VA_ARGS__))
#define RELEASE_SHARED(...) BERTH_TSA(release_shared_capability(__VA_ARGS__))
#define RELEASE_GENERIC(...) BERTH_TSA(release_generic_capability(__VA_ARGS__))
#define EXCLUDES(...) BERTH_TSA(locks_excluded(__VA_ARGS__))
#define ASSERT_CAPABILITY(x) BERTH_TSA(assert_capability(x))
#define NO_THREAD_SAFETY_ANALYSIS BERTH_TSA(no_thread_safety_analysis)

namespace berth {

// std::mutex with the capability attribute.
class CAPABILITY("mutex") Mutex {
 public:
  void lock() ACQUIRE() { mu_.lock(); }
  void unlock() RELEASE() { mu_.unlock(); }
  bool try_lock() BERTH_TSA(try_acquire_capability(true)) { return mu_.try_lock(); }
  // For std::condition_variable: the wrapped mutex (the analysis cannot follow a wait).
  std::mutex& native() { return mu_; }

 private:
  std::mutex mu_;
};

// std::shared_mutex with the capability attribute.
class CAPABILITY("mutex") SharedMutex {
 public:
  void lock() ACQUIRE() { mu_.lock(); }
  void unlock() RELEASE() { mu_.unlock(); }
  void lock_shared() ACQUIRE_SHARED() { mu_.lock_shared(); }
  void unlock_shared() RELEASE_SHARED() { mu_.unlock_shared(); }

 private:
  std::shared_mutex mu_;
};

// std::lock_guard for Mutex and SharedMutex (exclusive).
template <typename M>
class SCOPED_CAPABILITY MutexLock {
 public:
  explicit MutexLock(M& mu) ACQUIRE(mu) : mu_(mu) { mu_.lock(); }
  ~MutexLock() RELEASE() { mu_.unlock(); }
  MutexLock(const MutexLock&) = delete;
  MutexLock& operator=(const MutexLock&) = delete;

 private:
  M& mu_;
};

// std::unique_lock for Mutex, for waits on a std::condition_variable (get()). The analysis holds
// the mutex for the whole scope; a wait's release and reacquire are invisible to it, as they
// should be. A predicate that reads guarded members says REQUIRES(mu) itself.
class SCOPED_CAPABILITY UniqueLock {
 public:
  explicit UniqueLock(Mutex& mu) ACQUIRE(mu) : lock_(mu.native()) {}
  ~UniqueLock() RELEASE() {}
  UniqueLock(const UniqueLock&) = delete;
  UniqueLock& operator=(const UniqueLock&) = delete;
  std::unique_lock<std::mutex>& get() { return lock_; }

 private:
  std::unique_lock<std::mutex> lock_;
};

// std::shared_lock for SharedMutex.
class SCOPED_CAPABILITY ReaderLock {
 public:
  explicit ReaderLock(SharedMutex& mu) ACQUIRE_SHARED(mu) : mu_(mu) { mu_.lock_shared(); }
  ~ReaderLock() RELEASE() { mu_.unlock_shared(); }
  ReaderLock(const ReaderLock&) = delete;
  ReaderLock& operator=(const ReaderLock&) = delete;

 private:
  SharedMutex& mu_;
};

// A thread's role as a capability: members only that thread may touch are GUARDED_BY the role,
// and the thread's entry point (or a function that asserts it runs there) holds it.
class CAPABILITY("role") ThreadRole {
 public:
  // Held for the scope: the thread's main loop opens one.
  class SCOPED_CAPABILITY Scope {
   public:
    explicit Scope(const ThreadRole& role) ACQUIRE(role) { (void)role; }
    ~Scope() RELEASE() {}
    Scope(const Scope&) = delete;
    Scope& operator=(const Scope&) = delete;
  };
  // For code that the analysis cannot follow into the thread (callbacks run by it).
  void AssertHeld() const ASSERT_CAPABILITY(this) {}
};

}  // namespace berth

#endif  // BERTH_COMMON_THREAD_ANNOTATIONS_H_
