#include "agent/pod_attach.h"

#include <fcntl.h>
#include <gtest/gtest.h>
#include <sys/socket.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <map>
#include <mutex>
#include <thread>

#include "agent/attach_socket.h"
#include "net/socket_io.h"

namespace berth::agent {
namespace {

namespace ws = net::ws;
using nlohmann::json;

std::string TempDir() {
  char tmpl[] = "/tmp/berth-pod-attach-XXXXXX";
  return ::mkdtemp(tmpl);
}

void Append(const std::string& path, const std::string& text) {
  std::ofstream(path, std::ios::app) << text;
}

std::string Frame(uint8_t channel, std::string_view data) {
  std::string m(1, static_cast<char>(channel));
  m.append(data);
  return ws::EncodeFrame(ws::Opcode::kBinary, m, true, true, 0x11223344);
}

// What the client got on each channel until the server closed.
std::map<int, std::string> ReadAll(int fd) {
  std::map<int, std::string> channels;
  ws::WsConnection conn(fd, false, ws::Role::kClient, {});
  ws::Frame m;
  std::string error;
  const int64_t until = net::SteadyNowMs() + 20000;
  while (conn.Receive(&m, until, nullptr, &error) == ws::WsConnection::Got::kMessage) {
    if (!m.payload.empty()) channels[static_cast<uint8_t>(m.payload[0])] += m.payload.substr(1);
  }
  return channels;
}

TEST(PodAttachTest, TheOutcomeIsTheJobsExit) {
  JobResult r;
  r.state = "COMPLETED";
  EXPECT_EQ(AttachOutcome(r).exit_code, 0);
  r.state = "FAILED";
  r.exit_code = 3;
  EXPECT_EQ(AttachOutcome(r).exit_code, 3);
  r.exit_code = 0;
  r.term_signal = 9;
  EXPECT_EQ(AttachOutcome(r).exit_code, 137);
  r.term_signal = 0;
  r.state = "CANCELLED";
  EXPECT_EQ(AttachOutcome(r).exit_code, 1);
  EXPECT_TRUE(AttachOutcome(r).started);
}

TEST(PodAttachTest, TheStdoutFileIsTheSupervisors) {
  LaunchSpec s;
  s.job_id = 42;
  s.stdout_pattern = "/var/log/pods/default_web_%j.log";
  EXPECT_EQ(JobStdoutPath(s, "n1"), "/var/log/pods/default_web_42.log");
  s.stdout_pattern = "";
  s.work_dir = "/home/u";
  EXPECT_EQ(JobStdoutPath(s, "n1"), "/home/u/slurm-42.out");
}

// Serves an attach to a job whose stdout file is DIR/out.log and whose supervisor (a thread
// here) hands out the write end of a pipe; `drive` plays the client.
struct Served {
  std::map<int, std::string> channels;
  std::string process_stdin;  // what reached the process's end of the pipe
  std::vector<char> supervisor_requests;
};

Served Serve(
    const PodStreamRequest& request, bool open_stdin,
    const std::function<void(int client, const std::string& log, std::atomic<bool>* done)>& drive) {
  Served out;
  const std::string dir = TempDir();
  const std::string log = dir + "/out.log";
  Append(log, "from-before\n");
  int pipe_fds[2];
  EXPECT_EQ(::pipe2(pipe_fds, O_CLOEXEC), 0);
  Result<int> listen = ListenAttachSocket(dir);
  EXPECT_TRUE(listen.ok());
  std::atomic<bool> done{false}, stop_supervisor{false};
  std::mutex mu;
  std::thread supervisor([&] {
    while (!stop_supervisor) {
      int conn = ::accept4(*listen, nullptr, nullptr, SOCK_CLOEXEC);
      if (conn < 0) {
        ::usleep(5000);
        continue;
      }
      Result<Tagged> req = ReceiveTagged(conn, 1000, false);
      if (req.ok()) {
        std::lock_guard<std::mutex> l(mu);
        out.supervisor_requests.push_back(req->tag);
        if (req->tag == kAttachGetStdin) {
          (void)SendTagged(conn, 'k', pipe_fds[1]);
        } else {
          (void)SendTagged(conn, 'k', -1);
        }
      }
      ::close(conn);
    }
  });
  int sv[2];
  EXPECT_EQ(::socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, sv), 0);
  std::atomic<bool> stopping{false};
  std::thread server([&] {
    ws::WsConnection conn(sv[0], false, ws::Role::kServer, {});
    AttachTarget target{dir, log, open_stdin, false};
    auto result = [&]() -> std::optional<JobResult> {
      if (!done) return std::nullopt;
      JobResult r;
      r.state = "FAILED";
      r.exit_code = 3;
      return r;
    };
    ServeAttach(conn, request, target, result, stopping, AttachLimits{.poll_ms = 10});
    ::shutdown(sv[0], SHUT_RDWR);
  });
  drive(sv[1], log, &done);
  out.channels = ReadAll(sv[1]);
  server.join();
  stop_supervisor = true;
  supervisor.join();
  ::close(pipe_fds[1]);
  char buf[256];
  ssize_t n;
  ::fcntl(pipe_fds[0], F_SETFL, O_NONBLOCK);
  while ((n = ::read(pipe_fds[0], buf, sizeof(buf))) > 0) out.process_stdin.append(buf, n);
  for (int fd : {pipe_fds[0], sv[0], sv[1], *listen}) ::close(fd);
  std::filesystem::remove_all(dir);
  return out;
}

TEST(ServeAttachTest, StreamsTheOutputFromNowAndTheExit) {
  PodStreamRequest r;
  r.kind = "attach";
  Served s = Serve(r, false, [](int, const std::string& log, std::atomic<bool>* done) {
    ::usleep(100000);
    Append(log, "after-attach\n");
    ::usleep(100000);
    Append(log, "last words\n");
    *done = true;
  });
  EXPECT_EQ(s.channels[1], "after-attach\nlast words\n");
  json status = json::parse(s.channels[3]);
  EXPECT_EQ(status["reason"], "NonZeroExitCode");
  EXPECT_EQ(status["details"]["causes"][0]["message"], "3");
  EXPECT_TRUE(s.supervisor_requests.empty());  // no stdin asked
}

TEST(ServeAttachTest, StdinGoesToTheHeldEndAndItsEndIsReported) {
  PodStreamRequest r;
  r.kind = "attach";
  r.stdin = true;
  Served s = Serve(r, true, [](int client, const std::string&, std::atomic<bool>* done) {
    for (const std::string& f : {Frame(0, "typed line\n"), Frame(255, std::string(1, '\0'))}) {
      ASSERT_EQ(::send(client, f.data(), f.size(), MSG_NOSIGNAL), static_cast<ssize_t>(f.size()));
    }
    ::usleep(300000);
    *done = true;
  });
  EXPECT_EQ(s.process_stdin, "typed line\n");
  EXPECT_EQ(s.supervisor_requests, (std::vector<char>{kAttachGetStdin, kAttachEndStdin}));
}

TEST(ServeAttachTest, StdinIsNotAskedForAJobWithout) {
  PodStreamRequest r;
  r.kind = "attach";
  r.stdin = true;
  Served s = Serve(r, false, [](int client, const std::string&, std::atomic<bool>* done) {
    const std::string f = Frame(0, "ignored\n");
    ASSERT_EQ(::send(client, f.data(), f.size(), MSG_NOSIGNAL), static_cast<ssize_t>(f.size()));
    ::usleep(100000);
    *done = true;
  });
  EXPECT_EQ(s.process_stdin, "");
  EXPECT_TRUE(s.supervisor_requests.empty());
}

}  // namespace
}  // namespace berth::agent
