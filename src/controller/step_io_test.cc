#include "controller/step_io.h"

#include <gtest/gtest.h>
#include <poll.h>
#include <sys/socket.h>
#include <unistd.h>

#include <chrono>
#include <string>
#include <thread>

namespace berth::controller {
namespace {

using Side = StepIoRendezvous::Side;

// A connection as the server hands it over: the server's end (to Serve) and the client's.
struct Conn {
  int server = -1;
  int client = -1;
  Conn() {
    int fds[2];
    EXPECT_EQ(::socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, fds), 0);
    server = fds[0];
    client = fds[1];
  }
  ~Conn() {
    for (int fd : {server, client}) {
      if (fd >= 0) ::close(fd);
    }
  }
  Conn(const Conn&) = delete;
  Conn& operator=(const Conn&) = delete;
};

void Send(int fd, const std::string& s) {
  ASSERT_EQ(::send(fd, s.data(), s.size(), MSG_NOSIGNAL), static_cast<ssize_t>(s.size()));
}

// Reads until `n` bytes came or the other end closed (or 10 s passed).
std::string Read(int fd, size_t n) {
  std::string got;
  const auto until = std::chrono::steady_clock::now() + std::chrono::seconds(10);
  while (got.size() < n && std::chrono::steady_clock::now() < until) {
    pollfd p{fd, POLLIN, 0};
    if (::poll(&p, 1, 100) <= 0) continue;
    char buf[65536];
    ssize_t r = ::recv(fd, buf, sizeof(buf), 0);
    if (r <= 0) break;
    got.append(buf, static_cast<size_t>(r));
  }
  return got;
}

TEST(StepIoTest, TheTwoSidesMeetWhicheverComesFirstAndBytesGoBothWays) {
  for (bool launcher_first : {true, false}) {
    SCOPED_TRACE(launcher_first ? "launcher first" : "part first");
    StepIoRendezvous r;
    std::atomic<bool> stopping{false};
    Conn launcher, part;
    const Side first = launcher_first ? Side::kLauncher : Side::kPart;
    const Side second = launcher_first ? Side::kPart : Side::kLauncher;
    Conn& a = launcher_first ? launcher : part;
    Conn& b = launcher_first ? part : launcher;
    // What each sent right after its request comes first.
    std::thread t1(
        [&] { EXPECT_TRUE(r.Serve("7.0/h2", first, a.server, "early-a|", 5000, stopping).ok()); });
    while (r.waiting() == 0) std::this_thread::sleep_for(std::chrono::milliseconds(5));
    EXPECT_EQ(r.MayJoin("7.0/h2", first).code(), StatusCode::kAlreadyExists);
    EXPECT_TRUE(r.MayJoin("7.0/h2", second).ok());
    Send(a.client, "from-a");
    std::thread t2(
        [&] { EXPECT_TRUE(r.Serve("7.0/h2", second, b.server, "early-b|", 5000, stopping).ok()); });
    EXPECT_EQ(Read(b.client, 14), "early-a|from-a");
    Send(b.client, "from-b");
    EXPECT_EQ(Read(a.client, 14), "early-b|from-b");
    // 1 MiB one way, while the other way is quiet: nothing is lost or reordered.
    std::string big(1 << 20, 'x');
    for (size_t i = 0; i < big.size(); i += 4096) big[i] = static_cast<char>('a' + i % 26);
    std::thread writer([&] {
      size_t off = 0;
      while (off < big.size()) {
        ssize_t n = ::send(b.client, big.data() + off, big.size() - off, MSG_NOSIGNAL);
        if (n <= 0) break;
        off += static_cast<size_t>(n);
      }
    });
    EXPECT_EQ(Read(a.client, big.size()), big);
    writer.join();
    // One side ends after its last bytes: they still arrive, then the other sees the end.
    Send(b.client, "last");
    ::shutdown(b.client, SHUT_WR);
    EXPECT_EQ(Read(a.client, 4), "last");
    t1.join();  // both Serve calls return: the server closes both connections
    t2.join();
    ::close(a.server);
    a.server = -1;
    EXPECT_EQ(Read(a.client, 1), "");
    EXPECT_EQ(r.waiting(), 0u);
  }
}

TEST(StepIoTest, ASideAloneWaitsItsTimeThenIsRefused) {
  StepIoRendezvous r;
  std::atomic<bool> stopping{false};
  Conn c;
  const auto start = std::chrono::steady_clock::now();
  Status st = r.Serve("8.batch/", Side::kLauncher, c.server, "", 200, stopping);
  EXPECT_EQ(st.code(), StatusCode::kUnavailable);
  EXPECT_GE(std::chrono::steady_clock::now() - start, std::chrono::milliseconds(200));
  EXPECT_EQ(r.waiting(), 0u);
  // Another key's side never pairs with this one's.
  Conn x, y;
  std::thread t([&] { (void)r.Serve("9.0/h1", Side::kLauncher, x.server, "", 300, stopping); });
  Status other = r.Serve("9.0/h2", Side::kPart, y.server, "", 300, stopping);
  t.join();
  EXPECT_EQ(other.code(), StatusCode::kUnavailable);
}

TEST(StepIoTest, AWaitingSideLeavesWhenTheControllerStops) {
  StepIoRendezvous r;
  std::atomic<bool> stopping{false};
  Conn c;
  std::thread t([&] {
    EXPECT_EQ(r.Serve("1.0/h", Side::kPart, c.server, "", 60000, stopping).code(),
              StatusCode::kUnavailable);
  });
  while (r.waiting() == 0) std::this_thread::sleep_for(std::chrono::milliseconds(5));
  stopping = true;
  t.join();
  EXPECT_EQ(r.waiting(), 0u);
}

}  // namespace
}  // namespace berth::controller
