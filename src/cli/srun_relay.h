// srun's standard input, output and terminal between hosts. The srun that launches a step (the
// "launcher": the one a user started, in a batch script, an allocation or on a login host) and
// the srun that runs the step's tasks on a node (a "part": the srun the controller starts on a
// step's other node, or the srun inside a job that an srun outside an allocation created) talk
// through the controller (GET /v1/jobs/ID/steps/STEP/io, src/controller/step_io.h), in
// slurm/srun_stdio.h's relay frames: the launcher sends its input (D, E) and, with --pty, the
// caller's window size (W); the part sends its tasks' output and error back (O, R) and their end
// (X). So a job on another host, or a step's tasks on other nodes, read what srun reads, and
// their output comes to srun's own, as with Slurm.
//
// A part knows it has a launcher by kRelayVariable in its environment: "batch" for the srun
// inside a job srun created (the stream is the job's "batch" step, node ""), "step" for a step's
// part on another node (the stream is that step's, named by the node).
//
// Thread safety: each class runs one thread of its own (started with every signal blocked, so
// that srun's signals stay the main thread's); its methods are for the thread that made it.
#ifndef BERTH_CLI_SRUN_RELAY_H_
#define BERTH_CLI_SRUN_RELAY_H_

#include <sys/ioctl.h>

#include <atomic>
#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <thread>
#include <vector>

#include "common/status.h"
#include "slurm/srun_stdio.h"

namespace berth::cli {

class Client;

// The variable that tells an srun started by berth that a launcher waits for it; given to no task.
inline constexpr char kRelayVariable[] = "BERTH_SRUN_IO";

// One side's connection to a step's stream (the controller pairs it with the other side's).
class StepStream {
 public:
  // `step`: a step id or "batch"; `node`: the part's node ("" for "batch"); `wait_ms`: how long
  // the controller keeps this side waiting for the other.
  static Result<std::unique_ptr<StepStream>> Open(uint32_t job_id, const std::string& step,
                                                  const std::string& node, bool launcher,
                                                  int wait_ms);
  ~StepStream();
  int fd() const { return fd_; }
  std::string TakeAlreadyRead() { return std::move(already_read_); }

 private:
  StepStream() = default;
  std::unique_ptr<Client> client_;  // holds the connection
  int fd_ = -1;
  std::string already_read_;
};

// The launcher's side: copies srun's standard input (when asked) to every part, and to this
// node's own tasks through a pipe; with --pty puts the caller's terminal in raw mode and sends its
// window size (at the start and whenever it changes); writes what the parts' tasks print to
// srun's standard output and error.
class LauncherStreams {
 public:
  struct Options {
    bool forward_input = false;  // srun's input goes to the parts (else they read its end)
    int input_fd = 0;            // srun's input (standard input, or its own part's stream)
    bool pty = false;
    // Where the caller's window size comes from; unset: srun's standard input's terminal.
    std::function<std::optional<winsize>()> window_now;
  };
  LauncherStreams(std::vector<std::unique_ptr<StepStream>> streams, Options options);
  ~LauncherStreams();  // Finish(0) if not done yet
  LauncherStreams(const LauncherStreams&) = delete;
  LauncherStreams& operator=(const LauncherStreams&) = delete;

  // A pipe that this node's tasks read srun's input from, fed with the same bytes as the parts
  // (call before Start; -1 on failure). The read end is the caller's.
  int LocalInput();
  void Start();
  bool started() const { return thread_.joinable(); }
  // Waits up to `millis` for every part's output to end (their X, or their stream closing),
  // then stops; the caller's terminal is as it was.
  void Finish(int millis);

 private:
  void Run();
  std::vector<std::unique_ptr<StepStream>> streams_;
  Options options_;
  int local_input_ = -1;  // write end
  std::atomic<bool> stop_{false};
  std::atomic<int64_t> stop_deadline_{0};
  std::thread thread_;
};

// What a part's step reads and how big its terminal is.
struct PartIo {
  int input_fd = -1;  // the step's input (a pipe the stream fills; EOF when srun's input ends)
  std::optional<winsize> window;                       // --pty: the caller's at the start
  std::function<std::optional<winsize>()> window_now;  // after SIGWINCH (sent to this process)
};

// A part's side: its standard output and error (fds 1 and 2, which its tasks inherit) become
// pipes whose bytes go to the launcher; the launcher's input fills PartIo::input_fd.
class PartStream {
 public:
  // With `pty` waits (bounded) for the launcher's first window size.
  static Result<std::unique_ptr<PartStream>> Connect(uint32_t job_id, const std::string& step,
                                                     const std::string& node, bool pty);
  ~PartStream();  // Finish(0) if not done yet
  PartStream(const PartStream&) = delete;
  PartStream& operator=(const PartStream&) = delete;
  PartIo io() const { return io_; }
  // Once the step is over: srun's own fds 1 and 2 become /dev/null, what the tasks still print
  // (for up to `millis`) goes to the launcher, then the end (X), and the stream closes.
  void Finish(int millis);

 private:
  struct SharedWindow;  // the launcher's latest window size
  PartStream() = default;
  void Run(slurm::RelayDecoder decoder);
  std::unique_ptr<StepStream> stream_;
  std::shared_ptr<SharedWindow> window_;
  PartIo io_;
  int input_w_ = -1;
  int out_r_ = -1;
  int err_r_ = -1;
  std::atomic<int64_t> stop_deadline_{0};  // 0: running; else drain the output until then
  std::thread thread_;
  bool finished_ = false;
};

}  // namespace berth::cli

#endif  // BERTH_CLI_SRUN_RELAY_H_
