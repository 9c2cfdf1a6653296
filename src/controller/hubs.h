// Two fan-out points of the controller, each safe to use from any thread:
//   AgentHub: per node, an ordered queue of commands (launch, cancel, signal) that the node's
//     agent long-polls; commands stay until the agent acknowledges a later sequence number, so a
//     restarted agent sees them again (agents treat them idempotently).
//   WatchHub: a bounded log of change events (JSON lines) for watch streams.
#ifndef BERTH_CONTROLLER_HUBS_H_
#define BERTH_CONTROLLER_HUBS_H_

#include <condition_variable>
#include <cstdint>
#include <deque>
#include <map>
#include <mutex>
#include <string>
#include <vector>

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
  // Drops every queued command for `node` (a registering agent is reconciled afresh).
  void Clear(const std::string& node);
  // The highest sequence number handed out for `node` so far.
  uint64_t LastSeq(const std::string& node);
  void Shutdown();

 private:
  struct Queue {
    uint64_t next = 1;
    std::deque<std::pair<uint64_t, std::string>> items;
  };
  std::mutex mu_;
  std::condition_variable cv_;
  std::map<std::string, Queue> queues_;
  bool shutdown_ = false;
};

class WatchHub {
 public:
  explicit WatchHub(size_t capacity = 100000) : capacity_(capacity) {}
  void Publish(std::vector<std::string> events);
  // Events with sequence >= from (the first call passes the value of Next()), waiting up to
  // wait_ms. Sets *next to the sequence after the last returned. *lost is true when events
  // were dropped before the watcher read them (it fell too far behind).
  std::vector<std::string> Read(uint64_t from, int wait_ms, uint64_t* next, bool* lost);
  uint64_t Next();
  // Numbers the events from `sequence` on. REQUIRES: nothing was published yet. The controller
  // starts at the wall clock in microseconds, so that the numbers (the Kubernetes face's
  // resourceVersions) of a later start are above those of an earlier one.
  void StartAt(uint64_t sequence);
  void Shutdown();

 private:
  std::mutex mu_;
  std::condition_variable cv_;
  std::deque<std::string> events_;
  uint64_t first_ = 0;  // sequence of events_.front()
  size_t capacity_;
  bool shutdown_ = false;
};

}  // namespace berth::controller

#endif  // BERTH_CONTROLLER_HUBS_H_
