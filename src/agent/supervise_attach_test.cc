// The supervisor's side of a pod's stdin and terminal (supervise_attach.cc), with real jobs.
#include <fcntl.h>
#include <gtest/gtest.h>
#include <pwd.h>
#include <sys/ioctl.h>
#include <unistd.h>

#include <chrono>
#include <filesystem>
#include <thread>

#include "agent/agent_test_util.h"
#include "agent/attach_socket.h"
#include "agent/supervisor.h"

namespace berth::agent {
namespace {

using testing::ScratchDir;
using testing::Slurp;

LaunchSpec StdioSpec(const std::string& dir) {
  LaunchSpec spec = testing::BaseSpec(dir);
  spec.uid = getuid();
  spec.gid = getgid();
  passwd* pw = getpwuid(getuid());
  spec.user = pw != nullptr ? pw->pw_name : std::to_string(getuid());
  spec.stdout_pattern = dir + "/out-%j.log";
  spec.open_stdin = true;
  return spec;
}

// The supervisor's held end, once it offers it.
Result<Tagged> AskUntilReady(const std::string& dir, char request) {
  Result<Tagged> r = Status::NotFound("");
  for (int i = 0; i < 200; ++i) {
    r = AskSupervisor(dir, request);
    if (r.ok() || r.status().code() != StatusCode::kNotFound) return r;
    std::this_thread::sleep_for(std::chrono::milliseconds(25));
  }
  return r;
}

TEST(SuperviseAttachTest, AStdinPipeStaysOpenUntilStdinOnceEndsIt) {
  ScratchDir jobs;
  LaunchSpec spec = StdioSpec(jobs.path());
  spec.stdin_once = true;
  spec.argv = {"/bin/sh", "-c", "while read l; do echo \"got:$l\"; done; echo eof; exit 2"};
  Result<SupervisorHandle> h = StartSupervisor(BERTH_BINARY, jobs.path(), spec);
  ASSERT_TRUE(h.ok()) << h.status().ToString();
  Result<Tagged> first = AskUntilReady(h->dir, kAttachGetStdin);
  ASSERT_TRUE(first.ok()) << first.status().ToString();
  ASSERT_GE(first->fd, 0);
  ASSERT_EQ(::write(first->fd, "one\n", 4), 4);
  ::close(first->fd);  // one client leaving is not the process's EOF
  std::this_thread::sleep_for(std::chrono::milliseconds(300));
  EXPECT_FALSE(ReadResult(h->dir).has_value());
  Result<Tagged> second = AskSupervisor(h->dir, kAttachGetStdin);
  ASSERT_TRUE(second.ok()) << second.status().ToString();
  ASSERT_EQ(::write(second->fd, "two\n", 4), 4);
  ::close(second->fd);
  ASSERT_TRUE(AskSupervisor(h->dir, kAttachEndStdin).ok());  // stdinOnce: now it ends
  std::optional<JobResult> r = testing::WaitResult(h->dir);
  ASSERT_TRUE(r.has_value());
  EXPECT_EQ(r->exit_code, 2);
  EXPECT_EQ(Slurp(jobs.path() + "/out-" + std::to_string(spec.job_id) + ".log"),
            "got:one\ngot:two\neof\n");
  EXPECT_FALSE(std::filesystem::exists(h->dir + "/attach.sock"));
}

TEST(SuperviseAttachTest, ATerminalsOutputGoesToTheStdoutFile) {
  ScratchDir jobs;
  LaunchSpec spec = StdioSpec(jobs.path());
  spec.tty = true;
  spec.argv = {"/bin/sh", "-c", "tty; read l; stty size; echo \"line=$l\"; exit 5"};
  Result<SupervisorHandle> h = StartSupervisor(BERTH_BINARY, jobs.path(), spec);
  ASSERT_TRUE(h.ok()) << h.status().ToString();
  Result<Tagged> master = AskUntilReady(h->dir, kAttachGetStdin);
  ASSERT_TRUE(master.ok()) << master.status().ToString();
  winsize size{};
  size.ws_row = 33;
  size.ws_col = 101;
  ASSERT_EQ(::ioctl(master->fd, TIOCSWINSZ, &size), 0);
  ASSERT_EQ(::write(master->fd, "typed\r", 6), 6);
  ::close(master->fd);
  std::optional<JobResult> r = testing::WaitResult(h->dir);
  ASSERT_TRUE(r.has_value());
  EXPECT_EQ(r->exit_code, 5);
  const std::string out = Slurp(jobs.path() + "/out-" + std::to_string(spec.job_id) + ".log");
  EXPECT_NE(out.find("/dev/pts/"), std::string::npos) << out;
  EXPECT_NE(out.find("33 101"), std::string::npos) << out;
  EXPECT_NE(out.find("line=typed"), std::string::npos) << out;
}

TEST(SuperviseAttachTest, AJobWithoutStdinHasNoSocket) {
  ScratchDir jobs;
  LaunchSpec spec = StdioSpec(jobs.path());
  spec.open_stdin = false;
  spec.argv = {"/bin/sh", "-c", "cat; echo done"};  // /dev/null: ends at once
  Result<SupervisorHandle> h = StartSupervisor(BERTH_BINARY, jobs.path(), spec);
  ASSERT_TRUE(h.ok());
  std::optional<JobResult> r = testing::WaitResult(h->dir);
  ASSERT_TRUE(r.has_value());
  EXPECT_EQ(r->state, "COMPLETED") << r->message;
  EXPECT_EQ(AskSupervisor(h->dir, kAttachGetStdin).status().code(), StatusCode::kNotFound);
}

}  // namespace
}  // namespace berth::agent
