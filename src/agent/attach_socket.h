// The job's stdio socket (docs/adr/0006-pod-streams.md, attach): a pod with stdin: true (and
// tty: true) has its main process read a pipe (or run on a pseudo-terminal) whose other end the
// job's supervisor holds for the life of the job. The supervisor offers that end on a Unix
// socket in the job's folder, DIR/attach.sock (mode 0600, owned by the supervisor's user: the
// agent's), where the agent, serving `kubectl attach -i`, asks for it:
//
//   request (1 byte)   reply
//   'i'                'k' with the fd (SCM_RIGHTS): the pipe's write end, or the terminal's
//                      master (write to type, TIOCSWINSZ to resize); or 'n' + a reason (text)
//                      when stdin is closed already (stdinOnce) or the job has none
//   'e'                'k': the first client's stdin ended; with stdinOnce the supervisor closes
//                      its end of the pipe (the process sees EOF once every client closed its
//                      copy) or, on a terminal, types the terminal's EOF character once; and
//                      hands the end out no more
//
// One request per connection. Because the supervisor holds the ends, they survive an agent
// restart, as the job does.
//
// Thread safety: free functions on file descriptors the caller owns.
#ifndef BERTH_AGENT_ATTACH_SOCKET_H_
#define BERTH_AGENT_ATTACH_SOCKET_H_

#include <string>

#include "common/status.h"

namespace berth::agent {

inline constexpr char kAttachSocketName[] = "attach.sock";
inline constexpr char kAttachGetStdin = 'i';
inline constexpr char kAttachEndStdin = 'e';

// Sends one byte `tag` and, when fd >= 0, the descriptor with it; then `text` (a reason).
Status SendTagged(int sock, char tag, int fd, const std::string& text = "");
// Receives what SendTagged sent: the tag, the descriptor (-1 when none came; the caller owns
// it) and, with `with_text` (a reply), the text that followed until the peer closed (at most
// 4 KiB; a request has none). UNAVAILABLE when the peer closed without a tag.
struct Tagged {
  char tag = 0;
  int fd = -1;
  std::string text;
};
Result<Tagged> ReceiveTagged(int sock, int timeout_ms, bool with_text = true);

// Connects to DIR/attach.sock, sends `request` and returns the reply. NOT_FOUND when the job
// has no such socket (a job without stdin: true); FAILED_PRECONDITION with the supervisor's
// reason for 'n'.
Result<Tagged> AskSupervisor(const std::string& dir, char request, int timeout_ms = 5000);

// The listening socket at DIR/attach.sock (replacing a stale one), mode 0600, non-blocking and
// close-on-exec.
Result<int> ListenAttachSocket(const std::string& dir);

// The same at any `path`: also a container's console socket (runc sends a tty pod's terminal
// there). INVALID_ARGUMENT when the path does not fit a socket address.
Result<int> ListenUnixSocket(const std::string& path);

}  // namespace berth::agent

#endif  // BERTH_AGENT_ATTACH_SOCKET_H_
