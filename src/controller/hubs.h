// Two fan-out points of the controller, each safe to use from any thread:
//   AgentHub: per node, an ordered queue of commands (launch, cancel, signal) that the node's
//     agent long-polls; commands stay until the agent acknowledges a later sequence number, so a
//     restarted agent sees them again (agents treat them idempotently).
//   WatchHub: a bounded log of change events (JSON lines) for watch streams. Each event is kept
//     once, immutable, and shared with every reader that reads it; one read hands out at most
//     about max_read_bytes of events, so the memory that readers hold is bounded per reader,
//     whatever their backlog.
#ifndef BERTH_CONTROLLER_HUBS_H_
#define BERTH_CONTROLLER_HUBS_H_

#include <condition_variable>
#include <cstdint>
#include <deque>
#include <map>
#include <memory>
#include <mutex>
#include <string>
#include <vector>

#include "common/thread_annotations.h"
#include "common/time.h"

namespace berth::controller {

class AgentHub {
 public:
  // Appends a command (a JSON object as text) for `node`; returns its sequence number.
  uint64_t Push(const std::string& node, std::string command);
  // Commands for `node` with sequence > after, waiting up to wait_ms for one to arrive (or until
  // Shutdown). Also drops the commands at or below `after` (acknowledged).
  std::vector<std::pair<uint64_t, std::string>> Poll(const std::string& node, uint64_t after,
                                                     int wait_ms);
  // Drops every queued command for `node` (a registering agent is reconciled afresh); returns
  // them, in order: those no agent acknowledged (some may have been fetched, not yet acted on).
  std::vector<std::string> Clear(const std::string& node);
  // The highest sequence number handed out for `node` so far.
  uint64_t LastSeq(const std::string& node);
  void Shutdown();

 private:
  struct Queue {
    uint64_t next = 1;
    std::deque<std::pair<uint64_t, std::string>> items;
  };
  Mutex mu_;
  std::condition_variable cv_;  // waits on mu_ (UniqueLock)
  std::map<std::string, Queue> queues_ GUARDED_BY(mu_);
  bool shutdown_ GUARDED_BY(mu_) = false;
};

// One published event's text, given, or made when a reader first asks for it (Make, in a
// subclass): an event that no watcher reads costs a few words and what its maker holds (a job's
// record, which the controller holds anyway while the job lives), not a text of its own.
class WatchEventText {
 public:
  explicit WatchEventText(std::string text)
      : size_(static_cast<uint32_t>(text.size())),
        text_(std::make_unique<const std::string>(std::move(text))) {}
  virtual ~WatchEventText() = default;
  WatchEventText(const WatchEventText&) = delete;
  WatchEventText& operator=(const WatchEventText&) = delete;

  // Made by the first caller (any thread; the others wait for it), then kept.
  const std::string& text() const {
    std::call_once(once_, [this] {
      if (text_ == nullptr) text_ = std::make_unique<const std::string>(Make());
    });
    return *text_;
  }
  // About how long the text is (what a read counts against max_read_bytes).
  size_t size() const { return size_; }

 protected:
  explicit WatchEventText(size_t size) : size_(static_cast<uint32_t>(size)) {}
  // The text, called once; it may let go of what it made it from.
  virtual std::string Make() const { return {}; }

 private:
  mutable std::once_flag once_;
  const uint32_t size_;
  mutable std::unique_ptr<const std::string> text_;
};

// One published event: immutable, shared by the hub and every reader holding it.
using WatchEvent = std::shared_ptr<const WatchEventText>;
inline WatchEvent MakeWatchEvent(std::string text) {
  return std::make_shared<const WatchEventText>(std::move(text));
}

// The events one WatchHub::Read returned, in order. It iterates as strings (const
// std::string&), so a caller can walk it like a std::vector<std::string>; holding it keeps
// those events alive even after the hub dropped them, and copies no text.
class WatchBatch {
 public:
  class const_iterator {
   public:
    using iterator_category = std::random_access_iterator_tag;
    using value_type = std::string;
    using difference_type = std::ptrdiff_t;
    using pointer = const std::string*;
    using reference = const std::string&;

    const_iterator() = default;
    explicit const_iterator(std::vector<WatchEvent>::const_iterator it) : it_(it) {}
    reference operator*() const { return (*it_)->text(); }
    pointer operator->() const { return &(*it_)->text(); }
    reference operator[](difference_type n) const { return it_[n]->text(); }
    const_iterator& operator++() { return ++it_, *this; }
    const_iterator operator++(int) { return const_iterator(it_++); }
    const_iterator& operator--() { return --it_, *this; }
    const_iterator operator--(int) { return const_iterator(it_--); }
    const_iterator& operator+=(difference_type n) { return it_ += n, *this; }
    const_iterator& operator-=(difference_type n) { return it_ -= n, *this; }
    friend const_iterator operator+(const_iterator a, difference_type n) { return a += n; }
    friend const_iterator operator+(difference_type n, const_iterator a) { return a += n; }
    friend const_iterator operator-(const_iterator a, difference_type n) { return a -= n; }
    friend difference_type operator-(const const_iterator& a, const const_iterator& b) {
      return a.it_ - b.it_;
    }
    friend auto operator<=>(const const_iterator&, const const_iterator&) = default;

   private:
    std::vector<WatchEvent>::const_iterator it_;
  };
  using value_type = std::string;
  using iterator = const_iterator;

  WatchBatch() = default;
  explicit WatchBatch(std::vector<WatchEvent> events) : events_(std::move(events)) {}

  bool empty() const { return events_.empty(); }
  size_t size() const { return events_.size(); }
  const std::string& operator[](size_t i) const { return events_[i]->text(); }
  const_iterator begin() const { return const_iterator(events_.begin()); }
  const_iterator end() const { return const_iterator(events_.end()); }
  // The events themselves, to keep or pass on without copying their text.
  const std::vector<WatchEvent>& shared() const { return events_; }
  // A copy of the text, for callers that keep a std::vector<std::string>.
  operator std::vector<std::string>() const { return {begin(), end()}; }  // NOLINT

 private:
  std::vector<WatchEvent> events_;
};

class WatchHub {
 public:
  // Keeps the latest `capacity` events; one Read returns events up to `max_read_bytes` of text
  // (at least one event when any is there).
  explicit WatchHub(size_t capacity = 100000, size_t max_read_bytes = 64 << 10)
      : capacity_(capacity), max_read_bytes_(max_read_bytes) {}
  void Publish(std::vector<WatchEvent> events);
  // Events with sequence >= from (the first call passes the value of Next()), waiting up to
  // wait_ms, oldest first and no more than max_read_bytes of them: a reader with a larger
  // backlog gets the rest from the following calls, which do not wait. Sets *next to the
  // sequence after the last returned. *lost is true when events were dropped before the watcher
  // read them (it fell more than `capacity` events behind); the batch then starts at the oldest
  // event kept.
  WatchBatch Read(uint64_t from, int wait_ms, uint64_t* next, bool* lost);
  uint64_t Next();
  // Numbers the events from `sequence` on. REQUIRES: nothing was published yet. The controller
  // starts at the wall clock in microseconds, so that the numbers (the Kubernetes face's
  // resourceVersions) of a later start are above those of an earlier one.
  void StartAt(uint64_t sequence);
  void Shutdown();

 private:
  Mutex mu_;
  std::condition_variable cv_;  // waits on mu_ (UniqueLock)
  std::deque<WatchEvent> events_ GUARDED_BY(mu_);
  uint64_t first_ GUARDED_BY(mu_) = 0;  // sequence of events_.front()
  const size_t capacity_;
  const size_t max_read_bytes_;
  bool shutdown_ GUARDED_BY(mu_) = false;
};

}  // namespace berth::controller

#endif  // BERTH_CONTROLLER_HUBS_H_
