// srun's standard input, output and terminal between hosts (docs/slurm.md "srun's standard input
// and --pty"): the srun that launches a step (the "launcher": the srun a user started, in a batch
// script, an allocation or on a login host) and the srun that runs the step's tasks on a node (a
// "part": the srun the controller started on another node, or the srun inside a job that an srun
// outside an allocation created) each open GET /v1/jobs/ID/steps/STEP/io?side=...&node=...,
// upgraded to a plain byte stream (Upgrade: berth-step-io). The two connections with the same
// job, step and node meet here, and the controller copies bytes both ways until either side
// closes; what they say is srun_stdio.h's relay frames, which the controller does not read.
//
// A side waits for its peer at most the wait it asks for (bounded); at most kMaxWaiting streams
// wait at once, and one side of a key connects at most once at a time.
//
// Thread safety: every method is thread-safe (one mutex); Serve blocks its caller (an upgraded
// connection's own thread) for the life of the stream.
#ifndef BERTH_CONTROLLER_STEP_IO_H_
#define BERTH_CONTROLLER_STEP_IO_H_

#include <atomic>
#include <condition_variable>
#include <map>
#include <memory>
#include <string>

#include "common/status.h"
#include "common/thread_annotations.h"

namespace berth::controller {

class StepIoRendezvous {
 public:
  static constexpr size_t kMaxWaiting = 1024;
  // How long a side may ask to wait for the other, at most.
  static constexpr int kMaxWaitMs = 15 * 60 * 1000;

  enum class Side { kLauncher = 0, kPart = 1 };

  // Whether `side` of `key` may connect now: ALREADY_EXISTS when that side is connected already,
  // RESOURCE_EXHAUSTED when too many streams wait. Lets the endpoint refuse before it upgrades.
  Status MayJoin(const std::string& key, Side side) const EXCLUDES(mu_);

  // Serves one side's connection (`fd`, borrowed; `already_read`: what it sent after its
  // request): when the other side is there, copies bytes both ways until either end closes;
  // otherwise waits for it up to wait_ms (then UNAVAILABLE), or until `stopping`. Returns when
  // this side's connection may be closed.
  Status Serve(const std::string& key, Side side, int fd, std::string already_read, int wait_ms,
               const std::atomic<bool>& stopping) EXCLUDES(mu_);

  size_t waiting() const EXCLUDES(mu_);

 private:
  struct Slot {
    int fd[2] = {-1, -1};
    std::string already[2];
    bool paired = false;  // the second side came: it relays
    bool done = false;    // its relay ended: the first side may go
  };
  mutable Mutex mu_;
  std::condition_variable cv_;
  std::map<std::string, std::shared_ptr<Slot>> slots_ GUARDED_BY(mu_);
};

// Copies bytes between two connected sockets (each first given what the other sent before:
// `a_sent`, `b_sent`) until either closes or fails, or `stopping`. A side that does not read holds
// the other back (at most 256 KiB are buffered each way). Both sockets are left open.
void RelayBytes(int a, std::string a_sent, int b, std::string b_sent,
                const std::atomic<bool>& stopping);

}  // namespace berth::controller

#endif  // BERTH_CONTROLLER_STEP_IO_H_
