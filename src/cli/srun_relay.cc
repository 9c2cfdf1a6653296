// srun's standard input, output and terminal between hosts (srun_relay.h).
#include "cli/srun_relay.h"

#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <sys/socket.h>
#include <unistd.h>

#include <cerrno>
#include <chrono>
#include <cstdio>
#include <cstring>

#include "cli/client.h"
#include "common/thread_annotations.h"
#include "net/http.h"

namespace berth::cli {
namespace {

using slurm::RelayFrame;

// Bytes held for one reader, at most, before srun stops reading what feeds it (a task that does
// not read holds srun's input back, not its memory).
constexpr size_t kMaxPending = 256 * 1024;
constexpr int kSliceMs = 200;
constexpr int kCloseMillis = 5000;

int64_t NowMs() {
  return std::chrono::duration_cast<std::chrono::milliseconds>(
             std::chrono::steady_clock::now().time_since_epoch())
      .count();
}

// Threads made while this lives (the relays', and a TLS connection's) take none of srun's
// signals: they are the main thread's, which waits for them (SIGCHLD included) on a signalfd.
class QuietThreads {
 public:
  QuietThreads() {
    sigset_t all;
    sigfillset(&all);
    pthread_sigmask(SIG_BLOCK, &all, &old_);
  }
  ~QuietThreads() { pthread_sigmask(SIG_SETMASK, &old_, nullptr); }
  QuietThreads(const QuietThreads&) = delete;
  QuietThreads& operator=(const QuietThreads&) = delete;

 private:
  sigset_t old_;
};

void SetNonBlocking(int fd) {
  ::fcntl(fd, F_SETFL, ::fcntl(fd, F_GETFL) | O_NONBLOCK);
}

// Writes all of `data` to srun's own output (which may be a terminal or a pipe).
void WriteOut(int fd, std::string_view data) {
  while (!data.empty()) {
    ssize_t n = ::write(fd, data.data(), data.size());
    if (n > 0) {
      data.remove_prefix(static_cast<size_t>(n));
      continue;
    }
    if (n < 0 && errno == EINTR) continue;
    if (n < 0 && (errno == EAGAIN || errno == EWOULDBLOCK)) {
      pollfd p{fd, POLLOUT, 0};
      (void)::poll(&p, 1, kSliceMs);
      continue;
    }
    return;  // gone: what the tasks print is lost, as it would be for srun itself
  }
}

// Sends or writes what it can of `pending` (non-blocking `fd`); false when the reader is gone.
bool FlushSome(int fd, std::string& pending, bool socket) {
  while (!pending.empty()) {
    ssize_t n = socket ? ::send(fd, pending.data(), pending.size(), MSG_NOSIGNAL)
                       : ::write(fd, pending.data(), pending.size());
    if (n > 0) {
      pending.erase(0, static_cast<size_t>(n));
      continue;
    }
    if (n < 0 && errno == EINTR) continue;
    if (n < 0 && (errno == EAGAIN || errno == EWOULDBLOCK)) return true;
    pending.clear();
    return false;
  }
  return true;
}

// Ends this side of a stream so that what was sent arrives (a TLS connection's relay flushes on
// the half-close, where closing at once would drop it): shuts the writing down, then waits up to
// `millis` for the other end to close, dropping what still comes.
void CloseGracefully(int fd, int millis) {
  ::shutdown(fd, SHUT_WR);
  const int64_t until = NowMs() + millis;
  char buf[4096];
  for (;;) {
    const int64_t left = until - NowMs();
    pollfd p{fd, POLLIN, 0};
    if (left <= 0 || ::poll(&p, 1, static_cast<int>(left)) <= 0) return;
    ssize_t n = ::recv(fd, buf, sizeof(buf), MSG_DONTWAIT);
    if (n == 0 || (n < 0 && errno != EINTR && errno != EAGAIN)) return;
  }
}

bool SameSize(const std::optional<winsize>& a, const std::optional<winsize>& b) {
  if (a.has_value() != b.has_value()) return false;
  return !a || (a->ws_row == b->ws_row && a->ws_col == b->ws_col);
}

std::string WindowFrame(const std::optional<winsize>& w) {
  winsize none{};
  return slurm::EncodeWindowFrame(w ? *w : none);
}

}  // namespace

// The window size the launcher last sent, for the step's SIGWINCH.
struct PartStream::SharedWindow {
  Mutex mu;
  std::optional<winsize> size GUARDED_BY(mu);
};

// ---- StepStream

Result<std::unique_ptr<StepStream>> StepStream::Open(uint32_t job_id, const std::string& step,
                                                     const std::string& node, bool launcher,
                                                     int wait_ms) {
  QuietThreads quiet;
  BERTH_ASSIGN_OR_RETURN(std::unique_ptr<Client> client, Client::Connect());
  std::unique_ptr<StepStream> s(new StepStream());
  const std::string target = "/v1/jobs/" + std::to_string(job_id) + "/steps/" + step +
                             "/io?side=" + (launcher ? "launcher" : "part") +
                             "&node=" + net::UrlEncode(node) +
                             "&wait_ms=" + std::to_string(wait_ms);
  BERTH_RETURN_IF_ERROR(client->Upgrade(target, "berth-step-io", &s->fd_, &s->already_read_));
  s->client_ = std::move(client);
  return s;
}

StepStream::~StepStream() = default;  // the client closes the connection

// ---- LauncherStreams

LauncherStreams::LauncherStreams(std::vector<std::unique_ptr<StepStream>> streams, Options options)
    : streams_(std::move(streams)), options_(std::move(options)) {}

LauncherStreams::~LauncherStreams() {
  if (thread_.joinable()) Finish(0);
  if (local_input_ >= 0) ::close(local_input_);
}

int LauncherStreams::LocalInput() {
  int fds[2];
  if (::pipe2(fds, O_CLOEXEC) != 0) return -1;
  local_input_ = fds[1];
  return fds[0];
}

void LauncherStreams::Start() {
  QuietThreads quiet;
  thread_ = std::thread([this] { Run(); });
}

void LauncherStreams::Finish(int millis) {
  if (!thread_.joinable()) return;
  stop_deadline_ = NowMs() + millis;
  stop_ = true;
  thread_.join();
}

void LauncherStreams::Run() {
  struct Peer {
    int fd = -1;
    std::string pending;  // frames not yet sent
    slurm::RelayDecoder decoder;
    bool open = true;
    bool ended = false;  // its output ended (X), or its stream did
  };
  std::vector<Peer> peers(streams_.size());
  for (size_t i = 0; i < streams_.size(); ++i) {
    peers[i].fd = streams_[i]->fd();
    peers[i].decoder.Feed(streams_[i]->TakeAlreadyRead());
    SetNonBlocking(peers[i].fd);
  }
  if (local_input_ >= 0) SetNonBlocking(local_input_);
  auto to_all = [&peers](const std::string& frame) {
    for (Peer& p : peers) {
      if (p.open) p.pending += frame;
    }
  };
  // --pty: the caller's keys go to the task's terminal as typed, until the step is over.
  std::optional<slurm::RawTerminal> raw;
  const int input = options_.input_fd;
  if (options_.pty) raw.emplace(input);
  auto window = [this, input]() {
    return options_.window_now ? options_.window_now() : slurm::TerminalSize(input);
  };
  std::optional<winsize> sent_window;
  if (options_.pty) {
    sent_window = window();
    to_all(WindowFrame(sent_window));
  }
  bool input_open = options_.forward_input;
  if (!input_open) to_all(slurm::EncodeRelayFrame(RelayFrame::kEnd));
  std::string local_pending;
  bool local_end = !input_open;
  int64_t next_window_check = NowMs() + kSliceMs;
  for (;;) {
    bool all_ended = true;
    for (const Peer& p : peers) all_ended = all_ended && p.ended;
    if (stop_ && (all_ended || NowMs() >= stop_deadline_)) break;
    if (all_ended && !peers.empty()) {
      // Every part's tasks ended: what is typed now is for whatever runs after srun (the shell
      // srun was started from), not for them.
      input_open = false;
      raw.reset();
    }
    std::vector<pollfd> fds;
    bool room = local_pending.size() < kMaxPending;
    for (const Peer& p : peers) room = room && (!p.open || p.pending.size() < kMaxPending);
    const size_t first_peer = input_open && room ? 1 : 0;
    if (first_peer == 1) fds.push_back({input, POLLIN, 0});
    for (const Peer& p : peers) {
      short events = 0;
      if (p.open) events |= POLLIN;
      if (p.open && !p.pending.empty()) events |= POLLOUT;
      fds.push_back({p.open ? p.fd : -1, events, 0});
    }
    if (local_input_ >= 0 && !local_pending.empty()) fds.push_back({local_input_, POLLOUT, 0});
    if (::poll(fds.data(), fds.size(), kSliceMs) < 0 && errno != EINTR) break;
    if (first_peer == 1 && (fds[0].revents & (POLLIN | POLLHUP | POLLERR))) {
      char buf[65536];
      ssize_t n = ::read(input, buf, sizeof(buf));
      if (n > 0) {
        const std::string_view data(buf, static_cast<size_t>(n));
        to_all(slurm::EncodeRelayFrame(RelayFrame::kData, data));
        if (local_input_ >= 0) local_pending.append(data);
      } else if (n == 0 || (errno != EINTR && errno != EAGAIN)) {
        input_open = false;
        local_end = true;
        to_all(slurm::EncodeRelayFrame(RelayFrame::kEnd));
      }
    }
    for (size_t i = 0; i < peers.size(); ++i) {
      Peer& p = peers[i];
      const pollfd& f = fds[first_peer + i];
      if (p.open && (f.revents & (POLLIN | POLLHUP | POLLERR))) {
        char buf[65536];
        ssize_t n = ::recv(p.fd, buf, sizeof(buf), 0);
        if (n > 0) {
          p.decoder.Feed(std::string_view(buf, static_cast<size_t>(n)));
        } else if (n == 0 || (errno != EINTR && errno != EAGAIN)) {
          p.open = false;
        }
      }
      for (;;) {
        Result<std::optional<std::pair<RelayFrame, std::string>>> frame = p.decoder.Next();
        if (!frame.ok()) {
          p.open = false;
          break;
        }
        if (!*frame) break;
        const auto& [type, payload] = **frame;
        if (type == RelayFrame::kOut) WriteOut(STDOUT_FILENO, payload);
        if (type == RelayFrame::kErr) WriteOut(STDERR_FILENO, payload);
        if (type == RelayFrame::kOutEnd) p.ended = true;
      }
      if (p.open && !FlushSome(p.fd, p.pending, true)) p.open = false;
      if (!p.open) {
        p.ended = true;
        p.pending.clear();
      }
    }
    if (local_input_ >= 0) {
      if (!FlushSome(local_input_, local_pending, false) || (local_end && local_pending.empty())) {
        ::close(local_input_);  // this node's tasks read the end
        local_input_ = -1;
      }
    }
    if (options_.pty && NowMs() >= next_window_check) {
      next_window_check = NowMs() + kSliceMs;
      std::optional<winsize> now = window();
      if (now && !SameSize(now, sent_window)) {
        sent_window = now;
        to_all(WindowFrame(now));
      }
    }
  }
  if (local_input_ >= 0) {
    ::close(local_input_);
    local_input_ = -1;
  }
  // The parts read the end of srun's input.
  for (Peer& p : peers) {
    if (p.open) CloseGracefully(p.fd, kCloseMillis);
  }
  streams_.clear();
}

// ---- PartStream

Result<std::unique_ptr<PartStream>> PartStream::Connect(uint32_t job_id, const std::string& step,
                                                        const std::string& node, bool pty) {
  BERTH_ASSIGN_OR_RETURN(std::unique_ptr<StepStream> stream,
                         StepStream::Open(job_id, step, node, false, 60000));
  std::unique_ptr<PartStream> p(new PartStream());
  slurm::RelayDecoder decoder;
  decoder.Feed(stream->TakeAlreadyRead());
  const int sock = stream->fd();
  p->stream_ = std::move(stream);
  // --pty: the terminal starts with the caller's size, which the launcher sends first.
  if (pty) {
    std::optional<std::pair<RelayFrame, std::string>> first;
    const int64_t deadline = NowMs() + 60000;
    for (;;) {
      Result<std::optional<std::pair<RelayFrame, std::string>>> f = decoder.Next();
      if (!f.ok()) break;
      if (*f) {
        first = **f;
        break;
      }
      pollfd pf{sock, POLLIN, 0};
      const int64_t left = deadline - NowMs();
      if (left <= 0 || ::poll(&pf, 1, static_cast<int>(left)) <= 0) break;
      char buf[4096];
      ssize_t n = ::recv(sock, buf, sizeof(buf), 0);
      if (n <= 0) break;
      decoder.Feed(std::string_view(buf, static_cast<size_t>(n)));
    }
    if (!first || first->first != RelayFrame::kWindow) {
      return Status::Unavailable("the launching srun sent no window size");
    }
    p->io_.window = slurm::DecodeWindow(first->second);
    if (p->io_.window && p->io_.window->ws_row == 0 && p->io_.window->ws_col == 0) {
      p->io_.window.reset();
    }
  }
  int in[2], out[2], err[2];
  if (::pipe2(in, O_CLOEXEC) != 0) return Status::Internal(std::string("pipe: ") + strerror(errno));
  if (::pipe2(out, O_CLOEXEC) != 0) {
    ::close(in[0]);
    ::close(in[1]);
    return Status::Internal(std::string("pipe: ") + strerror(errno));
  }
  if (::pipe2(err, O_CLOEXEC) != 0) {
    for (int fd : {in[0], in[1], out[0], out[1]}) ::close(fd);
    return Status::Internal(std::string("pipe: ") + strerror(errno));
  }
  p->io_.input_fd = in[0];
  p->input_w_ = in[1];
  std::fflush(nullptr);
  ::dup2(out[1], STDOUT_FILENO);  // the tasks inherit these (dup2 clears close-on-exec)
  ::dup2(err[1], STDERR_FILENO);
  ::close(out[1]);
  ::close(err[1]);
  p->out_r_ = out[0];
  p->err_r_ = err[0];
  p->window_ = std::make_shared<SharedWindow>();
  p->io_.window_now = [window = p->window_]() {
    MutexLock<Mutex> lock(window->mu);
    return window->size;
  };
  PartStream* self = p.get();
  QuietThreads quiet;
  self->thread_ =
      std::thread([self, d = std::move(decoder)]() mutable { self->Run(std::move(d)); });
  return p;
}

PartStream::~PartStream() {
  Finish(0);
}

void PartStream::Finish(int millis) {
  if (finished_) return;
  finished_ = true;
  std::fflush(nullptr);
  const int null_fd = ::open("/dev/null", O_WRONLY | O_CLOEXEC);
  if (null_fd >= 0) {
    ::dup2(null_fd, STDOUT_FILENO);  // srun's own write ends: the tasks' are theirs to close
    ::dup2(null_fd, STDERR_FILENO);
    ::close(null_fd);
  }
  stop_deadline_ = NowMs() + std::max(millis, 1);
  if (thread_.joinable()) thread_.join();
}

void PartStream::Run(slurm::RelayDecoder decoder) {
  const int sock = stream_->fd();
  SetNonBlocking(sock);
  SetNonBlocking(input_w_);
  SetNonBlocking(out_r_);
  SetNonBlocking(err_r_);
  std::string to_sock, to_input;
  bool sock_open = true, input_end = false;
  int pipes[2] = {out_r_, err_r_};
  const RelayFrame kinds[2] = {RelayFrame::kOut, RelayFrame::kErr};
  for (;;) {
    const int64_t deadline = stop_deadline_;
    if (deadline != 0 && ((pipes[0] < 0 && pipes[1] < 0) || NowMs() >= deadline)) break;
    // Frames that came: the step's input, its end, the caller's window size.
    for (;;) {
      Result<std::optional<std::pair<RelayFrame, std::string>>> f = decoder.Next();
      if (!f.ok()) {
        sock_open = false;
        break;
      }
      if (!*f) break;
      const auto& [type, payload] = **f;
      if (type == RelayFrame::kData && input_w_ >= 0) to_input += payload;
      if (type == RelayFrame::kEnd) input_end = true;
      if (type == RelayFrame::kWindow) {
        if (std::optional<winsize> w = slurm::DecodeWindow(payload)) {
          {
            MutexLock<Mutex> lock(window_->mu);
            window_->size = *w;
          }
          ::kill(::getpid(), SIGWINCH);  // srun's step sets its terminal's size on SIGWINCH
        }
      }
    }
    if (!sock_open) input_end = true;
    if (input_w_ >= 0) {
      if (!FlushSome(input_w_, to_input, false) || (input_end && to_input.empty())) {
        ::close(input_w_);  // the tasks read the end
        input_w_ = -1;
        to_input.clear();
      }
    }
    std::vector<pollfd> fds;
    short sock_events = 0;
    if (sock_open && to_input.size() < kMaxPending) sock_events |= POLLIN;
    if (sock_open && !to_sock.empty()) sock_events |= POLLOUT;
    fds.push_back({sock_open ? sock : -1, sock_events, 0});
    for (int fd : pipes) {
      fds.push_back({fd >= 0 && to_sock.size() < kMaxPending ? fd : -1, POLLIN, 0});
    }
    fds.push_back({input_w_ >= 0 && !to_input.empty() ? input_w_ : -1, POLLOUT, 0});
    if (::poll(fds.data(), fds.size(), kSliceMs) < 0 && errno != EINTR) break;
    if (sock_open && (fds[0].revents & (POLLIN | POLLHUP | POLLERR))) {
      char buf[65536];
      ssize_t n = ::recv(sock, buf, sizeof(buf), 0);
      if (n > 0) {
        decoder.Feed(std::string_view(buf, static_cast<size_t>(n)));
      } else if (n == 0 || (errno != EINTR && errno != EAGAIN)) {
        sock_open = false;  // the launcher went away: the input ends, the output goes nowhere
      }
    }
    for (int i = 0; i < 2; ++i) {
      if (pipes[i] < 0 || !(fds[1 + static_cast<size_t>(i)].revents & (POLLIN | POLLHUP | POLLERR)))
        continue;
      char buf[65536];
      ssize_t n = ::read(pipes[i], buf, sizeof(buf));
      if (n > 0) {
        if (sock_open) {
          to_sock +=
              slurm::EncodeRelayFrame(kinds[i], std::string_view(buf, static_cast<size_t>(n)));
        }
      } else if (n == 0 || (errno != EINTR && errno != EAGAIN)) {
        ::close(pipes[i]);
        pipes[i] = -1;
      }
    }
    if (sock_open && !FlushSome(sock, to_sock, true)) sock_open = false;
    if (!sock_open) to_sock.clear();
  }
  // The end of the output, and what is still to send, within a bound.
  if (sock_open) {
    to_sock += slurm::EncodeRelayFrame(RelayFrame::kOutEnd);
    const int64_t until = NowMs() + 5000;
    while (!to_sock.empty() && NowMs() < until) {
      if (!FlushSome(sock, to_sock, true)) break;
      pollfd p{sock, POLLOUT, 0};
      if (!to_sock.empty()) (void)::poll(&p, 1, kSliceMs);
    }
  }
  if (sock_open) CloseGracefully(sock, kCloseMillis);
  for (int fd : pipes) {
    if (fd >= 0) ::close(fd);
  }
  if (input_w_ >= 0) ::close(input_w_);
  input_w_ = -1;
  out_r_ = err_r_ = -1;
  stream_.reset();
}

}  // namespace berth::cli
