// Handing the pages of a large block back to the kernel before the block is freed.
//
// glibc keeps freed memory in the arena of the thread that freed it, and raises its thresholds
// to the largest blocks freed (malloc_trim leaves a thread arena's top alone): a connection that
// once read a megabyte body keeps that memory resident, though nothing but another such request
// of that thread reuses it. Dropping the block's whole pages
// first (MADV_DONTNEED: they read back as zeros, and are faulted in again when next used) leaves
// the block in the arena without the memory.
#ifndef BERTH_COMMON_RELEASE_PAGES_H_
#define BERTH_COMMON_RELEASE_PAGES_H_

#include <cstddef>

namespace berth {

// Blocks smaller than this keep their pages: a fault per page costs more than they weigh.
inline constexpr size_t kReleasePagesMinBytes = 256 << 10;

// Drops the whole pages inside [data, data + bytes). REQUIRES: the caller owns the block and
// reads nothing in it again before writing it.
void ReleasePages(void* data, size_t bytes);

// The same for a container's block (std::vector, std::string) about to be freed, when it is at
// least kReleasePagesMinBytes.
template <typename Container>
void ReleasePagesOf(Container& c) {
  const size_t bytes = c.capacity() * sizeof(typename Container::value_type);
  if (bytes >= kReleasePagesMinBytes) ReleasePages(c.data(), bytes);
}

}  // namespace berth

#endif  // BERTH_COMMON_RELEASE_PAGES_H_
