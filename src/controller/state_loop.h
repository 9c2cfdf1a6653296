// The controller's state loop: a queue of commands and the one thread that runs them in batches
// (each batch one transaction, group-committed by the controller's batch runner), and Call, which
// runs a command all-or-nothing and hands its reply back once its batch is durable.
//
// A command run through Call either succeeds or leaves the batch's transaction exactly as it
// found it: a mark is taken before it runs, and on an error status or an exception the
// transaction is rolled back to that mark (the replies of earlier commands stay). What a failing
// command changed outside the transaction (the cluster state, records in memory) is its own
// business: commands validate before they change anything.
//
// Thread safety: Post, Call and Stop may be called from any thread (Call blocks until the reply,
// so never from the state thread). The batch runner and wake hook run on the state thread, which
// holds role() while it runs: members only it may touch are GUARDED_BY that role.
// Used by Controller::Impl (controller.cc, controller_state.cc), which forwards its Post and
// Call here.
#ifndef BERTH_CONTROLLER_STATE_LOOP_H_
#define BERTH_CONTROLLER_STATE_LOOP_H_

#include <chrono>
#include <condition_variable>
#include <deque>
#include <functional>
#include <thread>

#include "common/thread_annotations.h"
#include "controller/txn.h"

namespace berth::controller {

// A command with a reply (Controller::Impl::Call's argument).
using ReplyCommand = std::function<void(Txn&, Reply* out)>;

// Runs `c` on `t` all-or-nothing: when it sets an error status in `out` or throws (the exception
// becomes an InvalidArgument "bad request: ..."), `t` is rolled back to where it stood before.
void RunAllOrNothing(const ReplyCommand& c, Txn& t, Reply* out);

class StateLoop {
 public:
  struct Hooks {
    // Runs one batch of commands (possibly none: a periodic turn) and commits it.
    std::function<void(std::deque<Command> batch)> run_batch;
    // With no command queued: when to run an empty batch (a pass or tick is due).
    std::function<std::chrono::steady_clock::time_point()> next_wake;
  };

  StateLoop() = default;
  ~StateLoop();  // Stop()
  StateLoop(const StateLoop&) = delete;
  StateLoop& operator=(const StateLoop&) = delete;

  // Starts the state thread. REQUIRES: not started before.
  void Start(Hooks hooks);
  // Queues a command for the state thread; false when stopping.
  bool Post(Command c);
  // Runs `c` on the state thread (RunAllOrNothing) and waits for its reply, which comes once the
  // batch it ran in is committed; Unavailable when stopping. When the batch's Txn has `refuse`
  // set, `c` is not run and the reply is that error; a failed commit answers with its error.
  Reply Call(ReplyCommand c);
  // Refuses new commands, lets the thread run those queued, and joins it. Idempotent.
  void Stop();

  // Held by the state thread while it runs.
  const ThreadRole& role() const { return role_; }

 private:
  void Run();

  ThreadRole role_;
  Hooks hooks_;
  Mutex mu_;
  std::condition_variable cv_;  // waits on mu_.native()
  std::deque<Command> commands_ GUARDED_BY(mu_);
  bool stopping_ GUARDED_BY(mu_) = false;
  std::thread thread_;
};

}  // namespace berth::controller

#endif  // BERTH_CONTROLLER_STATE_LOOP_H_
