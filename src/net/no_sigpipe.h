// NoSigpipeHere: SIGPIPE blocked in the calling thread for the guard's life, and any SIGPIPE that
// came meanwhile taken when it ends. OpenSSL writes to its socket with write(), which raises
// SIGPIPE when the peer has closed first; a process that does not ignore SIGPIPE (the CLI over
// HTTPS, BERTH_SERVER=https://...) would die of it instead of seeing EPIPE.
//
// Thread safety: acts on the calling thread's signal mask only. Used by the TLS relay and the
// TLS client channel (net/tls.cc).
#ifndef BERTH_NET_NO_SIGPIPE_H_
#define BERTH_NET_NO_SIGPIPE_H_

#include <pthread.h>
#include <signal.h>
#include <time.h>

namespace berth::net {

class NoSigpipeHere {
 public:
  NoSigpipeHere() {
    sigset_t pipe = PipeSet();
    pthread_sigmask(SIG_BLOCK, &pipe, &old_);
  }
  ~NoSigpipeHere() {
    if (!sigismember(&old_, SIGPIPE)) {  // ours to take: it was not blocked before
      sigset_t pipe = PipeSet();
      const timespec now{0, 0};
      while (sigtimedwait(&pipe, nullptr, &now) == SIGPIPE) {
      }
    }
    pthread_sigmask(SIG_SETMASK, &old_, nullptr);
  }
  NoSigpipeHere(const NoSigpipeHere&) = delete;
  NoSigpipeHere& operator=(const NoSigpipeHere&) = delete;

 private:
  static sigset_t PipeSet() {
    sigset_t s;
    sigemptyset(&s);
    sigaddset(&s, SIGPIPE);
    return s;
  }
  sigset_t old_;
};

}  // namespace berth::net

#endif  // BERTH_NET_NO_SIGPIPE_H_
