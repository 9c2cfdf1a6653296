#include "agent/pod_stream.h"

#include <gtest/gtest.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <csignal>
#include <map>
#include <thread>

namespace berth::agent {
namespace {

namespace ws = net::ws;
using nlohmann::json;

TEST(PodStreamTest, DecodesRequests) {
  Result<PodStreamRequest> r = DecodePodStreamRequest(json::parse(
      R"({"kind":"exec","command":["sh","-c","x"],"tty":true,"stdin":true,"stderr":true})"));
  ASSERT_TRUE(r.ok()) << r.status().message();
  EXPECT_EQ(r->command, (std::vector<std::string>{"sh", "-c", "x"}));
  EXPECT_TRUE(r->tty);
  EXPECT_TRUE(r->stdin);
  EXPECT_FALSE(r->stderr);  // a terminal has one output
  EXPECT_EQ(r->protocol, "v5.channel.k8s.io");
  const struct {
    const char* text;
    const char* says;
  } bad[] = {
      {R"([])", "must be an object"},
      {R"({"kind":"dance","command":["x"]})", "unknown pod stream kind"},
      {R"({"kind":"exec"})", "non-empty array"},
      {R"({"kind":"exec","command":[1]})", "must hold strings"},
      {R"({"kind":"exec","command":["x"],"tty":"yes"})", "\"tty\" must be a boolean"},
      {R"({"kind":"exec","command":["x"],"protocol":"channel.k8s.io"})", "unknown channel"},
      {R"({"kind":"attach","command":["x"]})", "an attach has no \"command\""},
  };
  Result<PodStreamRequest> attach =
      DecodePodStreamRequest(json::parse(R"({"kind":"attach","stdin":true,"tty":false})"));
  ASSERT_TRUE(attach.ok()) << attach.status().message();
  EXPECT_EQ(attach->kind, "attach");
  EXPECT_TRUE(attach->command.empty());
  EXPECT_TRUE(attach->stdin);
  for (const auto& c : bad) {
    Result<PodStreamRequest> b = DecodePodStreamRequest(json::parse(c.text));
    ASSERT_FALSE(b.ok()) << c.text;
    EXPECT_NE(b.status().message().find(c.says), std::string::npos) << b.status().message();
  }
}

TEST(PodStreamTest, ReadsAProcessContext) {
  PodContext c;
  ASSERT_TRUE(ParseStatusIds("Name:\tsh\nUid:\t1000\t1000\t1000\t1000\nGid:\t100\t100\t100\t100\n"
                             "Groups:\t100 27 \n",
                             &c)
                  .ok());
  EXPECT_EQ(c.uid, 1000u);
  EXPECT_EQ(c.gid, 100u);
  EXPECT_EQ(c.groups, (std::vector<gid_t>{100, 27}));
  EXPECT_FALSE(ParseStatusIds("Name: x\n", &c).ok());
  EXPECT_EQ(ParseEnviron(std::string("A=1\0B=two words\0\0", 17)),
            (std::vector<std::string>{"A=1", "B=two words"}));

  const std::string mountinfo =
      "30 25 0:26 / /sys/fs/cgroup/unified rw - cgroup2 cgroup2 rw\n"
      "31 25 0:27 / /sys/fs/cgroup/memory rw - cgroup cgroup rw,memory\n"
      "32 25 0:28 / /sys/fs/cgroup/cpu,cpuacct rw - cgroup cgroup rw,cpu,cpuacct\n"
      "33 25 0:29 /outer /sys/fs/cgroup/pids rw - cgroup cgroup rw,pids\n";
  const std::string proc_cgroup =
      "0::/berth/job_1_0\n4:memory:/berth/job_1_0\n2:cpu,cpuacct:/\n"
      "8:pids:/outer/berth/job_1_0\n9:blkio:/x\n";
  EXPECT_EQ(CgroupProcsFiles(mountinfo, proc_cgroup),
            (std::vector<std::string>{"/sys/fs/cgroup/unified/berth/job_1_0/cgroup.procs",
                                      "/sys/fs/cgroup/memory/berth/job_1_0/cgroup.procs",
                                      "/sys/fs/cgroup/cpu,cpuacct/cgroup.procs",
                                      "/sys/fs/cgroup/pids/berth/job_1_0/cgroup.procs"}));

  // A process that stands for a job: its SLURM_JOB_ID says so, as a pod's environment does.
  pid_t child = ::fork();
  if (child == 0) {
    char* const argv[] = {const_cast<char*>("sleep"), const_cast<char*>("30"), nullptr};
    char* const envp[] = {const_cast<char*>("SLURM_JOB_ID=4242"), const_cast<char*>("A=b"),
                          nullptr};
    ::chdir("/tmp");
    ::execve("/bin/sleep", argv, envp);
    ::_exit(127);
  }
  std::this_thread::sleep_for(std::chrono::milliseconds(200));  // until it has exec'd
  Result<PodContext> job = ReadPodContext(child, "no-such-group", 4242);
  ASSERT_TRUE(job.ok()) << job.status().message();
  EXPECT_EQ(job->uid, ::getuid());
  EXPECT_EQ(job->environment, (std::vector<std::string>{"SLURM_JOB_ID=4242", "A=b"}));
  EXPECT_EQ(job->cwd, "/tmp");
  EXPECT_TRUE(job->cgroup_procs.empty());  // none of its groups is the job's
  // A pid that is not the job's (the system gave it to another process since) is refused.
  EXPECT_EQ(ReadPodContext(child, "no-such-group", 7).status().code(),
            StatusCode::kFailedPrecondition);
  ::kill(child, SIGKILL);
  ::waitpid(child, nullptr, 0);
  EXPECT_EQ(ReadPodContext(999999999, "g", 1).status().code(), StatusCode::kNotFound);
}

TEST(PodStreamTest, ResolvesCommandsAsThePodsPathDoes) {
  PodContext c;
  c.environment = {"PATH=/nonexistent:/bin:/usr/bin"};
  c.cwd = "/";
  Result<std::string> sh = ResolveCommand("sh", c);
  ASSERT_TRUE(sh.ok());
  EXPECT_EQ(*sh, "/bin/sh");
  EXPECT_EQ(*ResolveCommand("/bin/sh", c), "/bin/sh");
  Result<std::string> none = ResolveCommand("no-such-command-x", c);
  EXPECT_EQ(none.status().message(),
            "exec: \"no-such-command-x\": executable file not found in $PATH");
  EXPECT_FALSE(ResolveCommand("./nope", c).ok());
}

TEST(PodStreamTest, TheErrorChannelsStatusIsKubeletsOne) {
  EXPECT_EQ(OutcomeStatus({true, 0, ""}, {"true"}),
            json::parse(R"({"metadata":{},"status":"Success"})"));
  json failure = OutcomeStatus({true, 3, ""}, {"sh", "-c", "exit 3"});
  EXPECT_EQ(failure["reason"], "NonZeroExitCode");
  EXPECT_EQ(failure["details"]["causes"][0], json::parse(R"({"reason":"ExitCode","message":"3"})"));
  EXPECT_EQ(failure["message"],
            "command terminated with non-zero exit code: error executing command [sh -c exit 3], "
            "exit code 3");
  json not_started = OutcomeStatus({false, 0, "exec: \"x\": not found"}, {"x"});
  EXPECT_EQ(not_started["reason"], "InternalError");
}

// This test process as the pod: its user, environment and folder, no cgroups to join.
Result<PodContext> SelfContext() {
  PodContext c;
  c.pid = ::getpid();
  c.uid = ::getuid();
  c.gid = ::getgid();
  for (char** e = environ; *e != nullptr; ++e) c.environment.emplace_back(*e);
  c.cwd = "/tmp";
  return c;
}

// A client on the other end of a socketpair: what arrived on each channel.
struct Client {
  int fd;
  std::map<int, std::string> channels;
  bool closed = false;

  void Send(uint8_t channel, std::string_view data) {
    std::string m(1, static_cast<char>(channel));
    m.append(data);
    std::string bytes = ws::EncodeFrame(ws::Opcode::kBinary, m, true, true, 0x11223344);
    ASSERT_EQ(::send(fd, bytes.data(), bytes.size(), MSG_NOSIGNAL),
              static_cast<ssize_t>(bytes.size()));
  }
  // Reads until the server closes (or 20 s pass).
  void ReadAll() {
    ws::WsConnection conn(fd, false, ws::Role::kClient, {});
    ws::Frame m;
    std::string error;
    const int64_t until = net::SteadyNowMs() + 20000;
    while (conn.Receive(&m, until, nullptr, &error) == ws::WsConnection::Got::kMessage) {
      if (!m.payload.empty()) channels[static_cast<uint8_t>(m.payload[0])] += m.payload.substr(1);
    }
    closed = error.empty();
  }
};

ExecOutcome Serve(const PodStreamRequest& request, const std::function<void(Client&)>& drive,
                  Client* seen) {
  int sv[2];
  EXPECT_EQ(::socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, sv), 0);
  Result<PodContext> context = SelfContext();
  std::atomic<bool> stopping{false};
  ExecOutcome outcome;
  std::thread server([&] {
    ws::WsConnection conn(sv[0], false, ws::Role::kServer, {});
    outcome = ServeExec(conn, request, *context, stopping, StreamLimits{.hangup_grace_ms = 2000});
    ::shutdown(sv[0], SHUT_RDWR);
  });
  Client client{sv[1], {}, false};
  drive(client);
  client.ReadAll();
  server.join();
  ::close(sv[0]);
  ::close(sv[1]);
  *seen = client;
  return outcome;
}

TEST(ServeExecTest, PipesStdinUntilItsCloseAndReportsTheExitCode) {
  PodStreamRequest r;
  r.command = {"sh", "-c", "cat; echo to-err >&2; exit 4"};
  r.stdin = true;
  Client seen;
  ExecOutcome o = Serve(
      r,
      [](Client& c) {
        c.Send(0, "line one\n");
        c.Send(0, "line two\n");
        c.Send(255, std::string(1, '\0'));  // v5: stdin ends
      },
      &seen);
  EXPECT_TRUE(o.started);
  EXPECT_EQ(o.exit_code, 4);
  EXPECT_EQ(seen.channels[1], "line one\nline two\n");
  EXPECT_EQ(seen.channels[2], "to-err\n");
  json status = json::parse(seen.channels[3]);
  EXPECT_EQ(status["reason"], "NonZeroExitCode");
  EXPECT_EQ(status["details"]["causes"][0]["message"], "4");
  EXPECT_TRUE(seen.closed);
}

TEST(ServeExecTest, ATerminalHasTheClientsSizeAndFollowsIt) {
  PodStreamRequest r;
  r.command = {"sh", "-c", "stty size; read x; stty size"};
  r.tty = true;
  r.stdin = true;
  r.stderr = false;
  Client seen;
  ExecOutcome o = Serve(
      r,
      [](Client& c) {
        c.Send(4, R"({"Width":101,"Height":33})");
        std::this_thread::sleep_for(std::chrono::milliseconds(300));
        c.Send(4, R"({"Width":120,"Height":40})");
        c.Send(0, "go\r");
      },
      &seen);
  EXPECT_EQ(o.exit_code, 0);
  EXPECT_NE(seen.channels[1].find("33 101"), std::string::npos) << seen.channels[1];
  EXPECT_NE(seen.channels[1].find("40 120"), std::string::npos) << seen.channels[1];
  EXPECT_EQ(seen.channels.count(2), 0u);
  EXPECT_EQ(json::parse(seen.channels[3])["status"], "Success");
}

TEST(ServeExecTest, AClientThatLeavesHangsTheCommandUp) {
  PodStreamRequest r;
  r.command = {"sleep", "60"};
  int sv[2];
  ASSERT_EQ(::socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, sv), 0);
  Result<PodContext> context = SelfContext();
  std::atomic<bool> stopping{false};
  ws::WsConnection conn(sv[0], true, ws::Role::kServer, {});
  std::thread leave([&] {
    std::this_thread::sleep_for(std::chrono::milliseconds(200));
    ::close(sv[1]);
  });
  const int64_t start = net::SteadyNowMs();
  ExecOutcome o = ServeExec(conn, r, *context, stopping);
  leave.join();
  EXPECT_EQ(o.exit_code, 128 + SIGHUP);
  EXPECT_LT(net::SteadyNowMs() - start, 5000);
}

TEST(ServeExecTest, ACommandThatCannotStartIsAnInternalError) {
  PodStreamRequest r;
  r.command = {"no-such-command-x"};
  Client seen;
  ExecOutcome o = Serve(
      r, [](Client&) {}, &seen);
  EXPECT_FALSE(o.started);
  json status = json::parse(seen.channels[3]);
  EXPECT_EQ(status["reason"], "InternalError");
  EXPECT_NE(status["message"].get<std::string>().find("executable file not found"),
            std::string::npos);
}

}  // namespace
}  // namespace berth::agent
