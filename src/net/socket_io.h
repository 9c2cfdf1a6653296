// Small POSIX socket helpers shared by the HTTP server and client: an owned file descriptor, a
// read buffer that is never zero-filled, and a send loop that never raises SIGPIPE.
//
// Thread safety: UniqueFd and ReadBuffer are plain values (one thread at a time); the free
// functions are thread-safe.
#ifndef BERTH_NET_SOCKET_IO_H_
#define BERTH_NET_SOCKET_IO_H_

#include <sys/uio.h>

#include <cstddef>
#include <cstdint>
#include <memory>
#include <string>
#include <string_view>

#include "common/status.h"

namespace berth::net {

// Owns a file descriptor and closes it on destruction. -1 means "none".
class UniqueFd {
 public:
  UniqueFd() = default;
  explicit UniqueFd(int fd) : fd_(fd) {}
  ~UniqueFd() { Reset(); }
  UniqueFd(UniqueFd&& other) noexcept : fd_(other.Release()) {}
  UniqueFd& operator=(UniqueFd&& other) noexcept;
  UniqueFd(const UniqueFd&) = delete;
  UniqueFd& operator=(const UniqueFd&) = delete;

  int get() const { return fd_; }
  bool valid() const { return fd_ >= 0; }
  // Gives up ownership and returns the descriptor.
  int Release();
  // Closes the descriptor held (if any) and takes `fd`.
  void Reset(int fd = -1);

 private:
  int fd_ = -1;
};

// Bytes read from a socket and not yet consumed, in one heap block that grows on demand. Reads
// go straight into the block's free tail; nothing is zero-filled or copied per read.
class ReadBuffer {
 public:
  explicit ReadBuffer(size_t initial_capacity = 32 << 10);

  std::string_view view() const { return {data_.get() + begin_, end_ - begin_}; }
  size_t size() const { return end_ - begin_; }
  bool empty() const { return begin_ == end_; }
  // Drops the first n bytes. REQUIRES: n <= size().
  void Consume(size_t n);
  void Clear() { begin_ = end_ = 0; }
  // Returns the block to its initial capacity when it has grown past `max_capacity` (for a large
  // body) and holds no data, so that an idle connection does not keep megabytes.
  void ShrinkIfEmpty(size_t max_capacity);

  // Makes room for at least `min_free` bytes after the data (moving the data to the front or
  // growing the block) and returns where they start; writable_size() says how many there are.
  char* PrepareWrite(size_t min_free);
  size_t writable_size() const { return capacity_ - end_; }
  // Marks n bytes written at PrepareWrite()'s pointer as data. REQUIRES: n <= writable_size().
  void CommitWrite(size_t n) { end_ += n; }

 private:
  std::unique_ptr<char[]> data_;
  size_t initial_capacity_;
  size_t capacity_;
  size_t begin_ = 0;
  size_t end_ = 0;
};

// Milliseconds on the steady clock, for deadlines.
int64_t SteadyNowMs();

// Sends every byte described by iov[0..iovcnt) with sendmsg(MSG_NOSIGNAL), looping over partial
// sends. On EAGAIN it waits with poll() until `deadline_ms` (SteadyNowMs() time); a deadline of
// 0 means "do not wait" (blocking sockets with SO_SNDTIMEO report their timeout as EAGAIN).
// Returns false when the peer is gone, on timeout, or on any other error. Modifies iov.
// `*sent`, when given, receives the number of bytes the kernel accepted.
bool SendAll(int fd, struct iovec* iov, int iovcnt, int64_t deadline_ms, size_t* sent = nullptr);

// Waits until fd is readable (or hung up) or the deadline passes (-1: wait forever).
// Returns false on timeout or a poll error.
bool WaitReadable(int fd, int64_t deadline_ms);

// "what: strerror(errno)"
std::string ErrnoMessage(std::string_view what, int err);

// A free TCP port on 127.0.0.1 (the kernel's choice, released at once: another process may take
// it before the caller binds it).
Result<int> FreeLoopbackPort();

}  // namespace berth::net

#endif  // BERTH_NET_SOCKET_IO_H_
