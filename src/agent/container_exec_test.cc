#include "agent/container_exec.h"

#include <fcntl.h>
#include <gtest/gtest.h>
#include <sys/socket.h>
#include <unistd.h>

#include <chrono>
#include <csignal>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <thread>

#include "net/socket_io.h"

namespace berth::agent {
namespace {

using nlohmann::json;

TEST(ContainerExecTest, TheProcessIsTheContainersWithTheCommandsArguments) {
  const std::string config = R"({"ociVersion":"1.0.2","process":{
      "terminal":false,"consoleSize":{"height":1,"width":2},
      "user":{"uid":1234,"gid":1235,"additionalGids":[1236]},
      "args":["/bin/sh","-c","main"],"env":["PATH=/bin","IMAGE_VAR=image"],"cwd":"/work",
      "noNewPrivileges":true,"capabilities":{"bounding":[]}},"root":{"path":"/r"}})";
  Result<json> p = ExecProcess(config, {"cat", "/etc/marker"}, true);
  ASSERT_TRUE(p.ok()) << p.status().message();
  EXPECT_EQ((*p)["args"], json::parse(R"(["cat","/etc/marker"])"));
  EXPECT_EQ((*p)["terminal"], true);
  EXPECT_FALSE(p->contains("consoleSize"));
  // What the pod's process has, the exec'd command has.
  EXPECT_EQ((*p)["user"], json::parse(R"({"uid":1234,"gid":1235,"additionalGids":[1236]})"));
  EXPECT_EQ((*p)["env"], json::parse(R"(["PATH=/bin","IMAGE_VAR=image"])"));
  EXPECT_EQ((*p)["cwd"], "/work");
  EXPECT_EQ((*p)["noNewPrivileges"], true);
  EXPECT_EQ((*p)["capabilities"], json::parse(R"({"bounding":[]})"));
  EXPECT_EQ((*ExecProcess(config, {"id"}, false))["terminal"], false);
  for (const char* bad : {"", "[]", "{}", R"({"process":[]})", "{\"process\":"}) {
    Result<json> b = ExecProcess(bad, {"id"}, false);
    ASSERT_FALSE(b.ok()) << bad;
    EXPECT_EQ(b.status().code(), StatusCode::kInvalidArgument);
    EXPECT_NE(b.status().message().find("no process"), std::string::npos);
  }
}

TEST(ContainerExecTest, RuncArguments) {
  RuncTarget t{"/usr/sbin/runc", "/run/berth-runc", "berth-job-7", "/s/jobs/7.0/ctr", 42};
  EXPECT_EQ(
      RuncExecArgv(t, "/tmp/e/process.json", "/tmp/e/pid", ""),
      (std::vector<std::string>{"/usr/sbin/runc", "--root", "/run/berth-runc", "exec", "--process",
                                "/tmp/e/process.json", "--pid-file", "/tmp/e/pid", "berth-job-7"}));
  EXPECT_EQ(
      RuncExecArgv(t, "/tmp/e/process.json", "/tmp/e/pid", "/tmp/e/console.sock"),
      (std::vector<std::string>{"/usr/sbin/runc", "--root", "/run/berth-runc", "exec", "--process",
                                "/tmp/e/process.json", "--pid-file", "/tmp/e/pid", "--detach",
                                "--console-socket", "/tmp/e/console.sock", "berth-job-7"}));
}

TEST(ContainerExecTest, LooksUpCommandsAsThePodsPathDoes) {
  const struct {
    std::string name;
    std::vector<std::string> env;
    std::string cwd;
    std::vector<std::string> candidates;
    std::string not_found;
  } cases[] = {
      {"cat",
       {"HOME=/root", "PATH=/usr/bin:/bin"},
       "/",
       {"/usr/bin/cat", "/bin/cat"},
       "exec: \"cat\": executable file not found in $PATH"},
      // No PATH: the standard one.
      {"id",
       {},
       "/",
       {"/usr/local/sbin/id", "/usr/local/bin/id", "/usr/sbin/id", "/usr/bin/id", "/sbin/id",
        "/bin/id"},
       "exec: \"id\": executable file not found in $PATH"},
      // Empty and relative entries are the working directory's.
      {"tool", {"PATH=/bin::bin/"}, "/work", {"/bin/tool", "/work/tool", "/work/bin/tool"}, ""},
      {"/opt/x",
       {"PATH=/bin"},
       "/work",
       {"/opt/x"},
       "exec: \"/opt/x\": stat /opt/x: no such "
       "file or directory"},
      {"./run.sh", {"PATH=/bin"}, "/work", {"/work/./run.sh"}, ""},
      {"./run.sh", {"PATH=/bin"}, "", {"/./run.sh"}, ""},
  };
  for (const auto& c : cases) {
    Result<CommandLookup> l = LookupCommand(c.name, c.env, c.cwd);
    ASSERT_TRUE(l.ok()) << c.name;
    EXPECT_EQ(l->candidates, c.candidates) << c.name;
    if (!c.not_found.empty()) {
      EXPECT_EQ(l->not_found, c.not_found) << c.name;
    }
  }
  Result<CommandLookup> empty = LookupCommand("", {}, "/");
  ASSERT_FALSE(empty.ok());
  EXPECT_EQ(empty.status().code(), StatusCode::kInvalidArgument);
}

TEST(ContainerExecTest, FindsTheCommandInAProcesssRoot) {
  if (::geteuid() != 0) GTEST_SKIP() << "chroot needs root";
  // This process's root is the host's: /bin/sh is there, /no/such is not.
  CommandLookup l{{"/no/such/sh", "/bin/sh"}, "not here"};
  Result<std::string> found = FindInContainer(::getpid(), l);
  ASSERT_TRUE(found.ok()) << found.status().message();
  EXPECT_EQ(*found, "/bin/sh");
  Result<std::string> missing = FindInContainer(::getpid(), {{"/no/such/sh", "/etc"}, "not here"});
  ASSERT_FALSE(missing.ok());
  EXPECT_EQ(missing.status().code(), StatusCode::kNotFound);
  EXPECT_EQ(missing.status().message(), "not here");
  // A process that does not exist: its root cannot be entered.
  Result<std::string> gone = FindInContainer(0x3fffffff, l);
  ASSERT_FALSE(gone.ok());
  EXPECT_EQ(gone.status().code(), StatusCode::kUnavailable);
}

// Sends `fds` with SCM_RIGHTS and `text` as the payload, as runc sends its console.
void SendFds(int sock, const std::string& text, const std::vector<int>& fds) {
  iovec iov{const_cast<char*>(text.data()), text.size()};
  msghdr msg{};
  msg.msg_iov = &iov;
  msg.msg_iovlen = 1;
  alignas(cmsghdr) char control[CMSG_SPACE(sizeof(int) * 4)] = {};
  if (!fds.empty()) {
    msg.msg_control = control;
    msg.msg_controllen = CMSG_SPACE(sizeof(int) * fds.size());
    cmsghdr* c = CMSG_FIRSTHDR(&msg);
    c->cmsg_level = SOL_SOCKET;
    c->cmsg_type = SCM_RIGHTS;
    c->cmsg_len = CMSG_LEN(sizeof(int) * fds.size());
    std::memcpy(CMSG_DATA(c), fds.data(), sizeof(int) * fds.size());
  }
  ASSERT_EQ(::sendmsg(sock, &msg, 0), static_cast<ssize_t>(text.size()));
}

TEST(ContainerExecTest, ReceivesTheTerminalsDescriptor) {
  int sv[2];
  ASSERT_EQ(::socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, sv), 0);
  int pipe_fds[2];
  ASSERT_EQ(::pipe(pipe_fds), 0);
  SendFds(sv[1], "/dev/ptmx", {pipe_fds[1]});
  Result<int> got = ReceiveFd(sv[0], net::SteadyNowMs() + 5000);
  ASSERT_TRUE(got.ok()) << got.status().message();
  EXPECT_NE(*got, pipe_fds[1]);
  EXPECT_EQ(::fcntl(*got, F_GETFD) & FD_CLOEXEC, FD_CLOEXEC);
  // It is the same pipe: what goes in comes out of the other end.
  ASSERT_EQ(::write(*got, "x", 1), 1);
  char c = 0;
  ASSERT_EQ(::read(pipe_fds[0], &c, 1), 1);
  EXPECT_EQ(c, 'x');
  ::close(*got);
  // Two descriptors: the first is kept, the other closed.
  SendFds(sv[1], "two", {pipe_fds[1], pipe_fds[1]});
  got = ReceiveFd(sv[0], net::SteadyNowMs() + 5000);
  ASSERT_TRUE(got.ok()) << got.status().message();
  ::close(*got);
  // A message without one.
  SendFds(sv[1], "nothing", {});
  got = ReceiveFd(sv[0], net::SteadyNowMs() + 5000);
  ASSERT_FALSE(got.ok());
  EXPECT_EQ(got.status().code(), StatusCode::kInvalidArgument);
  // Nothing before the deadline.
  got = ReceiveFd(sv[0], net::SteadyNowMs() + 100);
  ASSERT_FALSE(got.ok());
  EXPECT_EQ(got.status().code(), StatusCode::kUnavailable);
  EXPECT_NE(got.status().message().find("in time"), std::string::npos);
  // The peer closed.
  ::close(sv[1]);
  got = ReceiveFd(sv[0], net::SteadyNowMs() + 5000);
  ASSERT_FALSE(got.ok());
  EXPECT_EQ(got.status().code(), StatusCode::kUnavailable);
  EXPECT_NE(got.status().message().find("closed"), std::string::npos);
  ::close(sv[0]);
  ::close(pipe_fds[0]);
  ::close(pipe_fds[1]);
}

TEST(ContainerExecTest, ReadsTheTargetFromTheJobsFolder) {
  const std::string dir = ::testing::TempDir() + "container_exec_target";
  std::filesystem::remove_all(dir);
  std::filesystem::create_directories(dir + "/ctr");
  Result<RuncTarget> none = ReadRuncTarget(dir);
  ASSERT_FALSE(none.ok());
  EXPECT_EQ(none.status().code(), StatusCode::kFailedPrecondition);
  EXPECT_EQ(none.status().message(), "the pod's container has not started");
  std::ofstream(dir + "/ctr/runc.json") << R"({"runc":"/usr/sbin/runc","root":"/run/r","id":"c1"})";
  EXPECT_FALSE(ReadRuncTarget(dir).ok());  // no job.pid yet
  std::ofstream(dir + "/job.pid") << "4321\n";
  Result<RuncTarget> t = ReadRuncTarget(dir);
  ASSERT_TRUE(t.ok()) << t.status().message();
  EXPECT_EQ(t->runc, "/usr/sbin/runc");
  EXPECT_EQ(t->root, "/run/r");
  EXPECT_EQ(t->id, "c1");
  EXPECT_EQ(t->bundle, dir + "/ctr");
  EXPECT_EQ(t->init_pid, 4321);
  std::ofstream(dir + "/ctr/runc.json") << R"({"runc":1})";
  EXPECT_EQ(ReadRuncTarget(dir).status().message(), "the pod's container has not started");
  std::filesystem::remove(dir + "/ctr/runc.json");
  Result<RuncTarget> older = ReadRuncTarget(dir);
  ASSERT_FALSE(older.ok());
  EXPECT_NE(older.status().message().find("older berth agent"), std::string::npos);
  std::filesystem::remove_all(dir);
}

// ServeCommand with a start of the test's own (as ContainerExec::Start plugs in): the hang-up
// goes through the process's signal hook, and a start's error reaches the client.
TEST(ServeCommandTest, TheHangUpGoesThroughTheStartsSignalHook) {
  PodStreamRequest r;
  r.command = {"sleep", "60"};
  std::vector<int> signals;
  pid_t child = -1;
  auto start = [&](const winsize&) -> Result<StreamProcess> {
    child = ::fork();
    if (child == 0) {
      ::setsid();
      ::execl("/bin/sleep", "sleep", "60", static_cast<char*>(nullptr));
      ::_exit(127);
    }
    StreamProcess p;
    p.pid = child;
    p.signal = [&signals, pid = child](int sig) {
      signals.push_back(sig);
      ::kill(pid, sig);
    };
    return p;
  };
  int sv[2];
  ASSERT_EQ(::socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, sv), 0);
  std::atomic<bool> stopping{false};
  net::ws::WsConnection conn(sv[0], true, net::ws::Role::kServer, {});
  std::thread leave([&] {
    std::this_thread::sleep_for(std::chrono::milliseconds(200));
    ::close(sv[1]);
  });
  ExecOutcome o = ServeCommand(conn, r, start, stopping, StreamLimits{.hangup_grace_ms = 2000});
  leave.join();
  EXPECT_TRUE(o.started);
  EXPECT_EQ(o.exit_code, 128 + SIGHUP);
  ASSERT_GE(signals.size(), 1u);
  EXPECT_EQ(signals.front(), SIGHUP);
}

TEST(ServeCommandTest, AStartsErrorIsTheClientsInternalError) {
  PodStreamRequest r;
  r.command = {"no-such-command-here"};
  int sv[2];
  ASSERT_EQ(::socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, sv), 0);
  std::atomic<bool> stopping{false};
  ExecOutcome o;
  {
    net::ws::WsConnection conn(sv[0], true, net::ws::Role::kServer, {});
    o = ServeCommand(
        conn, r,
        [](const winsize&) -> Result<StreamProcess> {
          return Status::NotFound(
              "exec: \"no-such-command-here\": executable file not found in $PATH");
        },
        stopping);
  }
  EXPECT_FALSE(o.started);
  EXPECT_EQ(o.error, "exec: \"no-such-command-here\": executable file not found in $PATH");
  // The error channel's Status went out before the close.
  net::ws::WsConnection client(sv[1], true, net::ws::Role::kClient, {});
  net::ws::Frame m;
  std::string error;
  ASSERT_EQ(client.Receive(&m, net::SteadyNowMs() + 5000, nullptr, &error),
            net::ws::WsConnection::Got::kMessage)
      << error;
  ASSERT_FALSE(m.payload.empty());
  EXPECT_EQ(m.payload[0], '\x03');
  json status = json::parse(m.payload.substr(1));
  EXPECT_EQ(status["reason"], "InternalError");
  EXPECT_NE(status["message"].get<std::string>().find("executable file not found in $PATH"),
            std::string::npos);
}

}  // namespace
}  // namespace berth::agent
