// srun's input fan-out and terminal handling (see srun_stdio.h).
#include "slurm/srun_stdio.h"

#include <fcntl.h>
#include <strings.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <unistd.h>

#include <cerrno>
#include <cstdlib>
#include <cstring>

namespace berth::slurm {

InputMode ParseInputMode(const std::string& value, int32_t ntasks) {
  InputMode m;
  if (value.empty() || strncasecmp(value.c_str(), "all", 3) == 0 || value[0] == '-') return m;
  if (strcasecmp(value.c_str(), "none") == 0) {
    m.kind = InputMode::Kind::kNone;
    return m;
  }
  // A task id only when below the task count; otherwise the digits name a file, as in Slurm.
  if (value.find_first_not_of("0123456789") == std::string::npos && value.size() <= 9 &&
      std::atoi(value.c_str()) < ntasks) {
    m.kind = InputMode::Kind::kTask;
    m.task = std::atoi(value.c_str());
    return m;
  }
  m.kind = InputMode::Kind::kFile;
  m.pattern = value;
  return m;
}

bool IsDevNull(int fd) {
  struct stat st, null;
  if (fstat(fd, &st) != 0 || !S_ISCHR(st.st_mode)) return false;
  if (stat("/dev/null", &null) != 0) return major(st.st_rdev) == 1 && minor(st.st_rdev) == 3;
  return st.st_rdev == null.st_rdev;
}

InputFanout::InputFanout(int source) : source_(source), source_open_(source >= 0) {}

InputFanout::~InputFanout() {
  for (Sink& s : sinks_) {
    if (s.fd >= 0) close(s.fd);
  }
}

void InputFanout::AddSink(int fd, AtEnd at_end) {
  const int flags = fcntl(fd, F_GETFL);
  if (flags >= 0) (void)fcntl(fd, F_SETFL, flags | O_NONBLOCK);
  sinks_.push_back({fd, at_end, "", false});
  if (!source_open_) EndIfDrained(sinks_.back());
}

void InputFanout::Prepare(std::vector<pollfd>& fds) {
  source_index_ = -1;
  sink_index_.assign(sinks_.size(), -1);
  bool room = false, backlog = false;
  for (size_t i = 0; i < sinks_.size(); ++i) {
    Sink& s = sinks_[i];
    if (s.fd < 0 || s.ended) continue;
    room = true;
    if (s.pending.size() >= kMaxPending) backlog = true;
    if (!s.pending.empty()) {
      sink_index_[i] = static_cast<int>(fds.size());
      fds.push_back({s.fd, POLLOUT, 0});
    }
  }
  if (source_open_ && room && !backlog) {
    source_index_ = static_cast<int>(fds.size());
    fds.push_back({source_, POLLIN, 0});
  }
}

void InputFanout::Handle(const std::vector<pollfd>& fds) {
  for (size_t i = 0; i < sinks_.size() && i < sink_index_.size(); ++i) {
    const int at = sink_index_[i];
    if (at >= 0 && static_cast<size_t>(at) < fds.size() && fds[at].revents != 0) {
      Flush(sinks_[i]);
    }
  }
  if (source_index_ >= 0 && static_cast<size_t>(source_index_) < fds.size() &&
      fds[source_index_].revents != 0) {
    ReadSource();
  }
}

bool InputFanout::Done() const {
  for (const Sink& s : sinks_) {
    if (s.fd >= 0 && !s.ended) return false;
  }
  return true;
}

void InputFanout::ReadSource() {
  char buf[16384];
  ssize_t n = read(source_, buf, sizeof(buf));
  if (n < 0 && (errno == EINTR || errno == EAGAIN)) return;
  if (n <= 0) {
    source_open_ = false;
    for (Sink& s : sinks_) EndIfDrained(s);
    return;
  }
  for (Sink& s : sinks_) {
    if (s.fd < 0 || s.ended) continue;
    s.pending.append(buf, static_cast<size_t>(n));
    Flush(s);
  }
}

void InputFanout::Flush(Sink& s) {
  while (s.fd >= 0 && !s.pending.empty()) {
    ssize_t n = write(s.fd, s.pending.data(), s.pending.size());
    if (n < 0 && errno == EINTR) continue;
    if (n < 0 && errno == EAGAIN) return;
    if (n <= 0) {  // EPIPE, EIO: the task is gone; its input with it
      close(s.fd);
      s.fd = -1;
      s.pending.clear();
      return;
    }
    s.pending.erase(0, static_cast<size_t>(n));
  }
  EndIfDrained(s);
}

void InputFanout::EndIfDrained(Sink& s) {
  if (source_open_ || s.fd < 0 || s.ended || !s.pending.empty()) return;
  s.ended = true;
  if (s.at_end == AtEnd::kClose) {
    close(s.fd);
    s.fd = -1;
    return;
  }
  // A terminal: its EOF character ends a read in canonical mode (a shell exits, cat ends); a
  // program that put the terminal in raw mode reads it as a byte, as from a keyboard.
  termios t;
  if (tcgetattr(s.fd, &t) == 0 && (t.c_lflag & ICANON) && t.c_cc[VEOF] != 0) {
    const char eof = static_cast<char>(t.c_cc[VEOF]);
    if (write(s.fd, &eof, 1) != 1) {
      // A task that is gone needs no end of input.
    }
  }
}

RawTerminal::RawTerminal(int fd) : fd_(fd) {
  if (!isatty(fd) || tcgetattr(fd, &saved_) != 0) return;
  termios raw = saved_;
  cfmakeraw(&raw);
  raw.c_oflag |= OPOST;
  active_ = tcsetattr(fd, TCSANOW, &raw) == 0;
}

RawTerminal::~RawTerminal() {
  Restore();
}

void RawTerminal::Restore() {
  if (!active_) return;
  // TCSADRAIN: what srun wrote in raw mode reaches the terminal under the raw settings.
  (void)tcsetattr(fd_, TCSADRAIN, &saved_);
  active_ = false;
}

std::optional<winsize> TerminalSize(int fd) {
  winsize ws{};
  if (ioctl(fd, TIOCGWINSZ, &ws) != 0) return std::nullopt;
  return ws;
}

bool SetTerminalSize(int fd, const winsize& size) {
  return ioctl(fd, TIOCSWINSZ, &size) == 0;
}

Result<Pty> OpenPty(const std::optional<winsize>& size) {
  Pty p;
  p.master = posix_openpt(O_RDWR | O_NOCTTY | O_CLOEXEC);
  if (p.master < 0) {
    return Status::Internal(std::string("posix_openpt: ") + std::strerror(errno));
  }
  char name[128];
  if (grantpt(p.master) != 0 || unlockpt(p.master) != 0 ||
      ptsname_r(p.master, name, sizeof(name)) != 0) {
    const int err = errno;
    close(p.master);
    return Status::Internal(std::string("pseudo-terminal: ") + std::strerror(err));
  }
  p.slave = open(name, O_RDWR | O_NOCTTY | O_CLOEXEC);
  if (p.slave < 0) {
    const int err = errno;
    close(p.master);
    return Status::Internal(std::string("open ") + name + ": " + std::strerror(err));
  }
  if (size) (void)SetTerminalSize(p.master, *size);
  return p;
}

bool BecomeTerminalSession(int slave) {
  if (setsid() < 0) return false;
  if (ioctl(slave, TIOCSCTTY, 0) != 0) return false;
  for (int fd = 0; fd <= 2; ++fd) {
    if (dup2(slave, fd) < 0) return false;
  }
  return true;
}

std::string EncodeRelayFrame(RelayFrame type, std::string_view payload) {
  std::string out(5, '\0');
  out[0] = static_cast<char>(type);
  const uint32_t n = static_cast<uint32_t>(payload.size());
  for (int i = 0; i < 4; ++i) out[1 + i] = static_cast<char>((n >> (8 * (3 - i))) & 0xff);
  out.append(payload);
  return out;
}

std::string EncodeWindowFrame(const winsize& size) {
  const char payload[4] = {static_cast<char>(size.ws_row >> 8), static_cast<char>(size.ws_row),
                           static_cast<char>(size.ws_col >> 8), static_cast<char>(size.ws_col)};
  return EncodeRelayFrame(RelayFrame::kWindow, std::string_view(payload, 4));
}

std::optional<winsize> DecodeWindow(std::string_view payload) {
  if (payload.size() != 4) return std::nullopt;
  auto byte = [&](size_t i) {
    return static_cast<unsigned short>(static_cast<uint8_t>(payload[i]));
  };
  winsize ws{};
  ws.ws_row = static_cast<unsigned short>(byte(0) << 8 | byte(1));
  ws.ws_col = static_cast<unsigned short>(byte(2) << 8 | byte(3));
  return ws;
}

Result<std::optional<std::pair<RelayFrame, std::string>>> RelayDecoder::Next() {
  constexpr uint32_t kMaxFrame = 1 << 20;
  if (buffer_.size() < 5) return std::optional<std::pair<RelayFrame, std::string>>();
  const char type = buffer_[0];
  if (std::string_view("DEWORXVQ").find(type) == std::string_view::npos) {
    return Status::InvalidArgument("srun relay: unknown frame type");
  }
  uint32_t n = 0;
  for (int i = 0; i < 4; ++i) n = n << 8 | static_cast<uint8_t>(buffer_[1 + i]);
  if (n > kMaxFrame) return Status::InvalidArgument("srun relay: frame too long");
  if (buffer_.size() < 5 + n) return std::optional<std::pair<RelayFrame, std::string>>();
  std::pair<RelayFrame, std::string> frame{static_cast<RelayFrame>(type), buffer_.substr(5, n)};
  buffer_.erase(0, 5 + n);
  return std::optional<std::pair<RelayFrame, std::string>>(std::move(frame));
}

}  // namespace berth::slurm
