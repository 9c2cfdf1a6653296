// srun's standard input and terminal for a job srun creates outside an allocation. The srun the
// user started (the "outer" one) and the srun that runs inside the new job (the "inner" one, which
// launches the step) talk over a Unix socket in the outer srun's private folder: the outer one
// sends its input, its end and the caller's window size as frames (slurm/srun_stdio.h
// RelayFrame); the inner one turns them into the input of its step and the size of --pty's
// terminal. The job's output still comes back through files in that folder (slurm_srun.cc).
//
// Both sruns must be on one host: today the job srun creates runs on srun's own host (the
// controller and the agents are there). Where the inner srun cannot reach the socket, its tasks
// read /dev/null (with a warning) and --pty fails with a message naming the limit; a stream
// through the controller and the node's agent would lift it.
//
// Thread safety: OuterRelay is used by the outer srun's one thread. ConnectRelay starts a thread
// of its own in the inner srun that only writes into the step's input pipe and records the
// window size under a mutex.
#ifndef BERTH_CLI_SRUN_RELAY_H_
#define BERTH_CLI_SRUN_RELAY_H_

#include <poll.h>
#include <sys/ioctl.h>

#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "common/status.h"
#include "slurm/srun_stdio.h"

namespace berth::cli {

// The variable that tells the inner srun where the socket is; given to no task.
inline constexpr char kRelayVariable[] = "BERTH_SRUN_IO";

// The outer srun's side: listens, accepts the inner srun (same uid only), then copies its
// standard input to it and sends the window size with --pty. With --pty the caller's terminal
// goes into raw mode once the inner srun is there (as Slurm's srun does once slurmstepd connects:
// until then ^C still cancels a job that waits for resources), and back when the relay goes.
class OuterRelay {
 public:
  // Listens on `path` (in a folder only srun's user may enter).
  static Result<std::unique_ptr<OuterRelay>> Listen(const std::string& path, bool pty);
  ~OuterRelay();
  OuterRelay(const OuterRelay&) = delete;
  OuterRelay& operator=(const OuterRelay&) = delete;

  // Waits up to `millis` for the socket or srun's input, and moves what is ready.
  void Poll(int millis);
  // The caller's terminal changed size (SIGWINCH): tell the inner srun.
  void WindowChanged();

 private:
  OuterRelay(int listen_fd, std::string path, bool pty);
  void Accept();
  void ReadInput();
  void Flush();
  void Drop();

  std::optional<slurm::RawTerminal> raw_;
  int listen_fd_ = -1;
  int conn_fd_ = -1;
  std::string path_;
  bool pty_ = false;
  bool input_open_ = true;
  std::string pending_;  // frames not yet written
};

// The inner srun's side: what its step reads and its terminal's size.
struct InnerRelay {
  int input_fd = -1;  // the step's input (a pipe the relay thread fills)
  std::optional<winsize> window;
  std::function<std::optional<winsize>()> window_now;  // after SIGWINCH
};
// Connects to the outer srun at `path`; with `pty` waits for the window size first.
Result<InnerRelay> ConnectRelay(const std::string& path, bool pty);

}  // namespace berth::cli

#endif  // BERTH_CLI_SRUN_RELAY_H_
