// The job's stdio socket: see attach_socket.h.
#include "agent/attach_socket.h"

#include <fcntl.h>
#include <poll.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>

#include "agent/file_util.h"

namespace berth::agent {

Status SendTagged(int sock, char tag, int fd, const std::string& text) {
  char byte = tag;
  iovec iov{&byte, 1};
  msghdr msg{};
  msg.msg_iov = &iov;
  msg.msg_iovlen = 1;
  alignas(cmsghdr) char control[CMSG_SPACE(sizeof(int))] = {};
  if (fd >= 0) {
    msg.msg_control = control;
    msg.msg_controllen = sizeof(control);
    cmsghdr* c = CMSG_FIRSTHDR(&msg);
    c->cmsg_level = SOL_SOCKET;
    c->cmsg_type = SCM_RIGHTS;
    c->cmsg_len = CMSG_LEN(sizeof(int));
    std::memcpy(CMSG_DATA(c), &fd, sizeof(int));
  }
  if (sendmsg(sock, &msg, MSG_NOSIGNAL) != 1) return ErrnoStatus("sendmsg", errno);
  size_t off = 0;
  while (off < text.size()) {
    ssize_t n = send(sock, text.data() + off, text.size() - off, MSG_NOSIGNAL);
    if (n <= 0) return ErrnoStatus("send", errno);
    off += static_cast<size_t>(n);
  }
  return Status::Ok();
}

Result<Tagged> ReceiveTagged(int sock, int timeout_ms, bool with_text) {
  Tagged out;
  char byte = 0;
  iovec iov{&byte, 1};
  msghdr msg{};
  msg.msg_iov = &iov;
  msg.msg_iovlen = 1;
  alignas(cmsghdr) char control[CMSG_SPACE(sizeof(int))] = {};
  msg.msg_control = control;
  msg.msg_controllen = sizeof(control);
  pollfd p{sock, POLLIN, 0};
  if (poll(&p, 1, timeout_ms) <= 0)
    return Status::Unavailable("the job's supervisor did not answer");
  ssize_t n = recvmsg(sock, &msg, MSG_CMSG_CLOEXEC);
  if (n < 0) return ErrnoStatus("recvmsg", errno);
  if (n == 0) return Status::Unavailable("the job's supervisor closed the stdio socket");
  out.tag = byte;
  for (cmsghdr* c = CMSG_FIRSTHDR(&msg); c != nullptr; c = CMSG_NXTHDR(&msg, c)) {
    if (c->cmsg_level == SOL_SOCKET && c->cmsg_type == SCM_RIGHTS &&
        c->cmsg_len >= CMSG_LEN(sizeof(int))) {
      const size_t count = (c->cmsg_len - CMSG_LEN(0)) / sizeof(int);
      for (size_t i = 0; i < count; ++i) {
        int fd = -1;
        std::memcpy(&fd, CMSG_DATA(c) + i * sizeof(int), sizeof(int));
        if (out.fd < 0) {
          out.fd = fd;
        } else {
          close(fd);  // one was asked for
        }
      }
    }
  }
  char buf[512];
  while (with_text && out.text.size() < 4096) {
    if (poll(&p, 1, timeout_ms) <= 0) break;
    ssize_t m = recv(sock, buf, sizeof(buf), 0);
    if (m <= 0) break;
    out.text.append(buf, static_cast<size_t>(m));
  }
  return out;
}

Result<Tagged> AskSupervisor(const std::string& dir, char request, int timeout_ms) {
  const std::string path = dir + "/" + kAttachSocketName;
  sockaddr_un addr{};
  addr.sun_family = AF_UNIX;
  if (path.size() >= sizeof(addr.sun_path)) {
    return Status::InvalidArgument("the job's folder path is too long for a socket: " + path);
  }
  std::memcpy(addr.sun_path, path.c_str(), path.size() + 1);
  int sock = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
  if (sock < 0) return ErrnoStatus("socket", errno);
  if (connect(sock, reinterpret_cast<sockaddr*>(&addr), sizeof(addr)) != 0) {
    int err = errno;
    close(sock);
    if (err == ENOENT || err == ECONNREFUSED) {
      return Status::NotFound("the pod's process has no stdin held for it on the node");
    }
    return ErrnoStatus("connect " + path, err);
  }
  Status sent = SendTagged(sock, request, -1);
  Result<Tagged> reply = sent.ok() ? ReceiveTagged(sock, timeout_ms) : Result<Tagged>(sent);
  close(sock);
  if (reply.ok() && reply->tag == 'n') {
    if (reply->fd >= 0) close(reply->fd);
    return Status::FailedPrecondition(reply->text);
  }
  return reply;
}

Result<int> ListenAttachSocket(const std::string& dir) {
  return ListenUnixSocket(dir + "/" + kAttachSocketName);
}

Result<int> ListenUnixSocket(const std::string& path) {
  sockaddr_un addr{};
  addr.sun_family = AF_UNIX;
  if (path.size() >= sizeof(addr.sun_path)) {
    return Status::InvalidArgument("the job's folder path is too long for a socket: " + path);
  }
  std::memcpy(addr.sun_path, path.c_str(), path.size() + 1);
  int sock = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC | SOCK_NONBLOCK, 0);
  if (sock < 0) return ErrnoStatus("socket", errno);
  unlink(path.c_str());
  // Created 0600 (the umask covers the window before the chmod).
  mode_t old = umask(077);
  int rc = bind(sock, reinterpret_cast<sockaddr*>(&addr), sizeof(addr));
  umask(old);
  if (rc != 0 || chmod(path.c_str(), 0600) != 0 || listen(sock, 16) != 0) {
    int err = errno;
    close(sock);
    return ErrnoStatus("listening on " + path, err);
  }
  return sock;
}

}  // namespace berth::agent
