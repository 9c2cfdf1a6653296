#include "agent/attach_socket.h"

#include <fcntl.h>
#include <gtest/gtest.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <unistd.h>

#include <filesystem>
#include <thread>

namespace berth::agent {
namespace {

std::string TempDir() {
  char tmpl[] = "/tmp/berth-attach-sock-XXXXXX";
  return ::mkdtemp(tmpl);
}

TEST(AttachSocketTest, PassesADescriptorWithItsTag) {
  int sv[2], pipe_fds[2];
  ASSERT_EQ(::socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, sv), 0);
  ASSERT_EQ(::pipe2(pipe_fds, O_CLOEXEC), 0);
  ASSERT_TRUE(SendTagged(sv[0], 'k', pipe_fds[1]).ok());
  ::close(sv[0]);
  Result<Tagged> got = ReceiveTagged(sv[1], 1000);
  ASSERT_TRUE(got.ok()) << got.status().message();
  EXPECT_EQ(got->tag, 'k');
  ASSERT_GE(got->fd, 0);
  // The same pipe: what goes into the passed end comes out of ours.
  ASSERT_EQ(::write(got->fd, "hi", 2), 2);
  char buf[4] = {};
  ASSERT_EQ(::read(pipe_fds[0], buf, sizeof(buf)), 2);
  EXPECT_STREQ(buf, "hi");
  for (int fd : {got->fd, pipe_fds[0], pipe_fds[1], sv[1]}) ::close(fd);
}

TEST(AttachSocketTest, ARefusalCarriesItsReason) {
  int sv[2];
  ASSERT_EQ(::socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, sv), 0);
  ASSERT_TRUE(SendTagged(sv[0], 'n', -1, "stdin was closed").ok());
  ::close(sv[0]);
  Result<Tagged> got = ReceiveTagged(sv[1], 1000);
  ASSERT_TRUE(got.ok());
  EXPECT_EQ(got->tag, 'n');
  EXPECT_EQ(got->fd, -1);
  EXPECT_EQ(got->text, "stdin was closed");
  ::close(sv[1]);
}

TEST(AttachSocketTest, APeerThatClosesSaysNothing) {
  int sv[2];
  ASSERT_EQ(::socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, sv), 0);
  ::close(sv[0]);
  EXPECT_EQ(ReceiveTagged(sv[1], 1000).status().code(), StatusCode::kUnavailable);
  ::close(sv[1]);
}

TEST(AttachSocketTest, AsksTheSupervisorsSocket) {
  const std::string dir = TempDir();
  // No socket: a job without stdin.
  EXPECT_EQ(AskSupervisor(dir, kAttachGetStdin).status().code(), StatusCode::kNotFound);
  Result<int> listen = ListenAttachSocket(dir);
  ASSERT_TRUE(listen.ok()) << listen.status().message();
  struct stat st {};
  ASSERT_EQ(::stat((dir + "/attach.sock").c_str(), &st), 0);
  EXPECT_EQ(st.st_mode & 0777, 0600u);
  std::thread supervisor([&] {
    for (int i = 0; i < 2; ++i) {
      int conn = -1;
      for (int t = 0; t < 500 && conn < 0; ++t) {
        conn = ::accept4(*listen, nullptr, nullptr, SOCK_CLOEXEC);
        if (conn < 0) ::usleep(10000);
      }
      ASSERT_GE(conn, 0);
      Result<Tagged> req = ReceiveTagged(conn, 1000, false);
      ASSERT_TRUE(req.ok());
      if (req->tag == kAttachGetStdin) {
        (void)SendTagged(conn, 'n', -1, "closed (stdinOnce)");
      } else {
        (void)SendTagged(conn, 'k', -1);
      }
      ::close(conn);
    }
  });
  Result<Tagged> refused = AskSupervisor(dir, kAttachGetStdin);
  EXPECT_EQ(refused.status().code(), StatusCode::kFailedPrecondition);
  EXPECT_EQ(refused.status().message(), "closed (stdinOnce)");
  Result<Tagged> ended = AskSupervisor(dir, kAttachEndStdin);
  ASSERT_TRUE(ended.ok());
  EXPECT_EQ(ended->tag, 'k');
  supervisor.join();
  ::close(*listen);
  std::filesystem::remove_all(dir);
}

}  // namespace
}  // namespace berth::agent
