// The signals a command waits for itself (srun's job mode, salloc): blocked while it lives, taken
// one at a time with a timeout, the old mask put back at the end (and given to children it forks).
//
// Thread safety: for the main thread of a CLI command; threads made while it lives inherit the
// blocked set.
#ifndef BERTH_CLI_SIGNAL_WATCH_H_
#define BERTH_CLI_SIGNAL_WATCH_H_

#include <signal.h>

#include <initializer_list>

namespace berth::cli {

class SignalWatch {
 public:
  explicit SignalWatch(std::initializer_list<int> signals) {
    sigemptyset(&mask_);
    for (int sig : signals) sigaddset(&mask_, sig);
    sigprocmask(SIG_BLOCK, &mask_, &old_);
  }
  ~SignalWatch() { sigprocmask(SIG_SETMASK, &old_, nullptr); }
  SignalWatch(const SignalWatch&) = delete;
  SignalWatch& operator=(const SignalWatch&) = delete;

  // Waits up to `millis` for one of the signals; returns it, or 0.
  int Wait(int millis) {
    timespec ts{millis / 1000, (millis % 1000) * 1000000L};
    const int sig = sigtimedwait(&mask_, nullptr, &ts);
    return sig > 0 ? sig : 0;
  }
  // The mask before: what a forked child should run with.
  const sigset_t& old_mask() const { return old_; }

 private:
  sigset_t mask_, old_;
};

}  // namespace berth::cli

#endif  // BERTH_CLI_SIGNAL_WATCH_H_
