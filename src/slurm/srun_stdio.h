// srun's standard input and terminal, as Slurm 22.05's srun handles them (man srun: -i/--input,
// --pty, "IO Redirection"):
//  * InputMode: what --input says (all tasks, none, one task id, or a file pattern);
//  * InputFanout: the copy loop that writes what srun reads from its input to every task that
//    gets it (a pipe per task, or a pseudo-terminal's master), without blocking on a task that
//    does not read, and ends each task's input when srun's ends (EOF; a terminal gets its EOF
//    character instead, as closing its master would hang it up);
//  * RawTerminal: the caller's terminal in raw mode for --pty, restored when the guard goes;
//  * Pty / TerminalSize / SetTerminalSize: the pseudo-terminal of --pty's task 0 and its window
//    size, copied from the caller's terminal at the start and on SIGWINCH.
//
// Used by the local step (srun_step.cc). Thread safety: none of these are shared between
// threads; srun is single-threaded. RawTerminal changes process-wide terminal state: one at a
// time.
#ifndef BERTH_SLURM_SRUN_STDIO_H_
#define BERTH_SLURM_SRUN_STDIO_H_

#include <poll.h>
#include <sys/ioctl.h>
#include <termios.h>

#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "common/status.h"

namespace berth::slurm {

// -i/--input, read as Slurm's srun reads it (src/srun/libsrun/fname.c): "" (the default), any
// word starting with "all", or "-": every task; "none" (any case): /dev/null; a number below the
// step's task count: that task alone (the others get /dev/null); anything else: a file pattern
// (%t, %n, %N: a file per task or node).
struct InputMode {
  enum class Kind { kAll, kNone, kTask, kFile };
  Kind kind = Kind::kAll;
  int32_t task = -1;    // kTask
  std::string pattern;  // kFile
};
InputMode ParseInputMode(const std::string& value, int32_t ntasks);

// Whether `fd` is /dev/null (srun's input in a batch script): nothing to forward.
bool IsDevNull(int fd);

// The copy loop from srun's input to the tasks. Call Prepare before each poll() and Handle after
// it, with the same vector.
class InputFanout {
 public:
  // What a sink gets when the input ends.
  enum class AtEnd {
    kClose,    // a pipe: closed, so that the task reads EOF
    kEofChar,  // a pseudo-terminal's master: its EOF character (^D) when the line discipline is
               // canonical; the master stays open (closing it would hang up the task)
  };
  // `source`: read, never closed (srun's standard input); -1: the sinks end at once.
  explicit InputFanout(int source);
  ~InputFanout();
  InputFanout(const InputFanout&) = delete;
  InputFanout& operator=(const InputFanout&) = delete;

  // Takes `fd` (closed by the fanout) and makes it non-blocking.
  void AddSink(int fd, AtEnd at_end);
  // Adds the fds to wait for to `fds`: the source while no sink holds more than a bound of
  // unwritten input (so a task that does not read holds srun back, not its memory), and each
  // sink that has input waiting.
  void Prepare(std::vector<pollfd>& fds);
  // Reads and writes what poll() said is ready. A sink whose task went away (EPIPE) is dropped
  // with what was waiting for it, as Slurm drops input for a task that ended.
  void Handle(const std::vector<pollfd>& fds);
  // The input ended (or every sink went away) and every sink got all of it and its end.
  bool Done() const;
  // Bytes waiting for sinks, at most (tests).
  static constexpr size_t kMaxPending = 64 * 1024;

 private:
  struct Sink {
    int fd = -1;
    AtEnd at_end = AtEnd::kClose;
    std::string pending;
    bool ended = false;
  };
  void ReadSource();
  void Flush(Sink& s);
  void EndIfDrained(Sink& s);

  int source_ = -1;
  bool source_open_ = false;
  std::vector<Sink> sinks_;
  // Where Prepare put the fds: index of the source (or -1) and of each sink (or -1).
  int source_index_ = -1;
  std::vector<int> sink_index_;
};

// The caller's terminal in raw mode (Slurm's srun --pty: cfmakeraw, output processing kept so
// that srun's own messages still start on a new line), put back as it was when the guard is
// destroyed or Restore() is called. Nothing happens where `fd` is not a terminal.
class RawTerminal {
 public:
  explicit RawTerminal(int fd);
  ~RawTerminal();
  RawTerminal(const RawTerminal&) = delete;
  RawTerminal& operator=(const RawTerminal&) = delete;
  bool active() const { return active_; }
  void Restore();

 private:
  int fd_ = -1;
  bool active_ = false;
  termios saved_{};
};

// A terminal's window size; nullopt where `fd` is not a terminal.
std::optional<winsize> TerminalSize(int fd);
// Sets a (pseudo-)terminal's window size; the kernel sends SIGWINCH to its foreground group.
bool SetTerminalSize(int fd, const winsize& size);

// A pseudo-terminal pair: the master stays with srun, the slave becomes task 0's terminal.
struct Pty {
  int master = -1;  // close-on-exec
  int slave = -1;   // close-on-exec; the task dup2()s it onto 0, 1, 2
};
// Opens one, with `size` as its window size when given.
Result<Pty> OpenPty(const std::optional<winsize>& size);
// In the task's child process, after fork: a new session whose controlling terminal is `slave`,
// on standard input, output and error. Returns false (errno set) when that fails.
bool BecomeTerminalSession(int slave);

// The stream between the srun that launches a step and the srun that runs its tasks on a node
// (through the controller: src/cli/srun_relay.h): frames of one type byte, a 4-byte big-endian
// length and the payload. D, E and W go to the tasks' side, O, R and X come back.
enum class RelayFrame : char {
  kData = 'D',    // bytes of srun's standard input
  kEnd = 'E',     // srun's standard input ended
  kWindow = 'W',  // the caller's window size: rows, then columns, 2 bytes each, big-endian
  kOut = 'O',     // bytes the tasks wrote to their standard output
  kErr = 'R',     // bytes the tasks (or their srun) wrote to standard error
  kOutEnd = 'X',  // the tasks' output ended: nothing more comes
  // salloc and the holder of its allocation (src/cli/slurm_salloc.cc), on the "batch" stream:
  kAllocation = 'V',  // holder -> salloc: the allocation's variables, NAME=VALUE, NUL-ended
  kExit = 'Q',        // salloc -> holder: the command's exit status (decimal): end with it
};
std::string EncodeRelayFrame(RelayFrame type, std::string_view payload = {});
std::string EncodeWindowFrame(const winsize& size);
std::optional<winsize> DecodeWindow(std::string_view payload);

// Splits what arrives into frames. An unknown type or a frame over 1 MiB is an error (the
// stream is then given up).
class RelayDecoder {
 public:
  void Feed(std::string_view bytes) { buffer_.append(bytes); }
  // The next whole frame, if one has arrived.
  Result<std::optional<std::pair<RelayFrame, std::string>>> Next();

 private:
  std::string buffer_;
};

}  // namespace berth::slurm

#endif  // BERTH_SLURM_SRUN_STDIO_H_
