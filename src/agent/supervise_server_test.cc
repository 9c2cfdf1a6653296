// Supervisors forked by `berth supervise-server` (SupervisorSpawner, BERTH_BINARY): the same as
// exec'd ones to the job and to the agent, the server started again when it has gone and ended
// with its link, and an exec'd supervisor where a folder does not fit.
#include <signal.h>
#include <sys/stat.h>
#include <unistd.h>

#include <chrono>
#include <filesystem>
#include <fstream>
#include <thread>

#include "agent/agent_test_util.h"
#include "agent/supervisor.h"

namespace berth::agent {
namespace {

using std::string_literals::operator""s;
using testing::Alive;
using testing::BaseSpec;
using testing::ScratchDir;
using testing::Slurp;
using testing::WaitResult;

// What the job sees of the process that started it: its open files, its signal mask and
// ignored signals, its session (the supervisor's own, so not the test's), its folder.
constexpr const char* kProbe =
    "#!/bin/sh\n"
    // Both read by the shell itself: a child's look would race with the shell's vfork, which
    // blocks every signal until the child has exec'd, and with its closing of a pipe's end.
    "fds=; for f in /proc/$$/fd/*; do fds=\"$fds ${f##*/}\"; done; echo FDS$fds\n"
    "while read -r line; do case $line in SigBlk*|SigIgn*) echo \"$line\";; esac\n"
    "  done < /proc/$$/status\n"
    "test \"$(cut -d' ' -f6 /proc/$$/stat)\" != \"$(cut -d' ' -f6 /proc/$TEST_PID/stat)\" &&\n"
    "  echo OWN_SESSION\n"
    "pwd\n"
    "sleep 0.3\n";

LaunchSpec ProbeSpec(const std::string& work, const std::string& out) {
  LaunchSpec spec = BaseSpec(work);
  spec.uid = getuid();
  spec.gid = getgid();
  spec.user = "";
  spec.stdout_pattern = out;
  spec.script = kProbe;
  spec.environment = {{"TEST_PID", std::to_string(getpid())}};
  return spec;
}

bool WaitGone(int64_t pid) {
  for (int i = 0; i < 500; ++i) {
    if (!Alive(static_cast<pid_t>(pid))) return true;
    std::this_thread::sleep_for(std::chrono::milliseconds(10));
  }
  return false;
}

// Reaped, not only ended: no /proc entry (a zombie still has one).
bool WaitReaped(int64_t pid) {
  const std::string proc = "/proc/" + std::to_string(pid);
  for (int i = 0; i < 500; ++i) {
    if (access(proc.c_str(), F_OK) != 0) return true;
    std::this_thread::sleep_for(std::chrono::milliseconds(10));
  }
  return false;
}

// A spawner for `jobs` (null, with the reason as a failure, when it cannot start).
std::unique_ptr<SupervisorSpawner> StartSpawner(
    const std::string& jobs, std::chrono::milliseconds answer_timeout = std::chrono::seconds(20)) {
  Result<std::unique_ptr<SupervisorSpawner>> s =
      SupervisorSpawner::Start(BERTH_BINARY, jobs, answer_timeout);
  EXPECT_TRUE(s.ok()) << s.status().ToString();
  return s.ok() ? std::move(*s) : nullptr;
}

std::string CommandLineOf(int64_t pid) {
  return Slurp("/proc/" + std::to_string(pid) + "/cmdline");
}

TEST(SuperviseServerTest, AForkedSupervisorsCommandLineIsItsFolderFollowedByNulBytes) {
  const std::string dir = "/var/lib/berth/jobs/42.3";
  const std::string running = "4242 (berth) S 1 4242 4242 0 -1";
  EXPECT_EQ(ClassifySupervisorProcess(
                running, "/usr/bin/berth\0supervise\0/var/lib/berth/jobs/42.3\0\0\0\0\0"s, dir),
            SupervisorProcess::kSupervisor);
  // The server itself, blanks in its room, is no job's supervisor.
  EXPECT_EQ(
      ClassifySupervisorProcess(running, "/usr/bin/berth\0supervise-server\0003\0    \0"s, dir),
      SupervisorProcess::kOther);
  EXPECT_EQ(ClassifySupervisorProcess(
                running, "/usr/bin/berth\0supervise\0/var/lib/berth/jobs/42.3\0\0x\0"s, dir),
            SupervisorProcess::kOther);
}

TEST(SuperviseServerTest, AForkedSupervisorIsToItsJobAndTheAgentWhatAnExecdOneIs) {
  ScratchDir jobs;
  ScratchDir work;
  std::unique_ptr<SupervisorSpawner> spawner = StartSpawner(jobs.path());
  ASSERT_NE(spawner, nullptr);
  std::string seen[2];
  for (int forked = 0; forked < 2; ++forked) {
    const std::string out = work.path() + "/probe" + std::to_string(forked) + ".out";
    LaunchSpec spec = ProbeSpec(work.path(), out);
    // The job goes on until the checks of its supervisor below are made (or 20 s), so that a
    // slow test thread does not find it ended.
    const std::string go = work.path() + "/go" + std::to_string(forked);
    spec.environment.push_back({"GO", go});
    spec.script +=
        "i=0; while [ ! -e \"$GO\" ] && [ $i -lt 400 ]; do sleep 0.05; i=$((i+1)); done\n";
    Result<SupervisorHandle> h =
        StartSupervisor(BERTH_BINARY, jobs.path(), spec, "", forked ? spawner.get() : nullptr);
    ASSERT_TRUE(h.ok()) << h.status().ToString();
    // The agent knows it by its command line (after a restart too), and it is nobody's child
    // here.
    EXPECT_TRUE(SupervisorRunning(h->dir));
    const std::string cmdline = CommandLineOf(h->pid);
    EXPECT_TRUE(cmdline.starts_with(BERTH_BINARY + "\0supervise\0"s + h->dir + '\0')) << cmdline;
    EXPECT_EQ(cmdline.ends_with("\0\0"s), forked == 1);
    const std::string stat = Slurp("/proc/" + std::to_string(h->pid) + "/stat");
    EXPECT_EQ(stat.find(") S " + std::to_string(getpid()) + " "), std::string::npos) << stat;
    std::ofstream(go) << "go\n";
    std::optional<JobResult> r = WaitResult(h->dir);
    ASSERT_TRUE(r.has_value()) << Slurp(h->dir + "/supervisor.log");
    EXPECT_EQ(r->state, "COMPLETED") << r->message;
    seen[forked] = Slurp(out);
    EXPECT_NE(seen[forked].find("OWN_SESSION"), std::string::npos) << seen[forked];
    EXPECT_NE(seen[forked].find("SigBlk:\t0000000000000000\nSigIgn:\t0000000000000000\n"),
              std::string::npos)
        << seen[forked];
    EXPECT_NE(seen[forked].find(work.path()), std::string::npos) << seen[forked];
    EXPECT_EQ(RemoveJobDir(h->dir).code(), StatusCode::kOk);
    // The server reaps what it forked (an exec'd supervisor is init's to reap).
    if (forked == 1) {
      EXPECT_TRUE(WaitReaped(h->pid));
    }
  }
  EXPECT_EQ(seen[1], seen[0]);
}

TEST(SuperviseServerTest, AServerThatWentIsStartedAgainAndEndsWithItsLink) {
  ScratchDir jobs;
  std::unique_ptr<SupervisorSpawner> spawner = StartSpawner(jobs.path());
  ASSERT_NE(spawner, nullptr);
  const int64_t first = spawner->server_pid();
  ASSERT_GT(first, 0);
  ASSERT_EQ(kill(static_cast<pid_t>(first), SIGKILL), 0);
  ASSERT_TRUE(WaitGone(first));
  LaunchSpec spec = ProbeSpec(jobs.path(), "/dev/null");
  spec.script = "#!/bin/sh\ntrue\n";
  Result<SupervisorHandle> h = StartSupervisor(BERTH_BINARY, jobs.path(), spec, "", spawner.get());
  ASSERT_TRUE(h.ok()) << h.status().ToString();
  const int64_t second = spawner->server_pid();
  EXPECT_GT(second, 0);
  EXPECT_NE(second, first);
  std::optional<JobResult> r = WaitResult(h->dir);
  ASSERT_TRUE(r.has_value()) << Slurp(h->dir + "/supervisor.log");
  EXPECT_EQ(r->state, "COMPLETED") << r->message;
  spawner.reset();
  EXPECT_TRUE(WaitGone(second));
}

TEST(SuperviseServerTest, AServerThatDoesNotAnswerIsKilledAndNoSupervisorIsExecdInstead) {
  ScratchDir jobs;
  std::unique_ptr<SupervisorSpawner> spawner =
      StartSpawner(jobs.path(), std::chrono::milliseconds(300));
  ASSERT_NE(spawner, nullptr);
  const int64_t stuck = spawner->server_pid();
  ASSERT_EQ(kill(static_cast<pid_t>(stuck), SIGSTOP), 0);
  LaunchSpec spec = ProbeSpec(jobs.path(), "/dev/null");
  spec.script = "#!/bin/sh\ntrue\n";
  Result<SupervisorHandle> h = StartSupervisor(BERTH_BINARY, jobs.path(), spec, "", spawner.get());
  // Not exec'd in its place: the stuck server might still have started one.
  ASSERT_FALSE(h.ok());
  EXPECT_EQ(h.status().code(), StatusCode::kInternal) << h.status().ToString();
  const std::string dir = jobs.path() + "/" + std::to_string(spec.job_id) + ".0";
  EXPECT_NE(access((dir + "/spec.json").c_str(), F_OK), -1);
  EXPECT_EQ(access((dir + "/supervisor.pid").c_str(), F_OK), -1);
  EXPECT_TRUE(WaitGone(stuck));  // killed, stopped as it was
  // The next launch gets a new server.
  spec.job_id = testing::NextJobId();
  h = StartSupervisor(BERTH_BINARY, jobs.path(), spec, "", spawner.get());
  ASSERT_TRUE(h.ok()) << h.status().ToString();
  EXPECT_NE(spawner->server_pid(), stuck);
  std::optional<JobResult> r = WaitResult(h->dir);
  ASSERT_TRUE(r.has_value()) << Slurp(h->dir + "/supervisor.log");
  EXPECT_EQ(r->state, "COMPLETED") << r->message;
}

TEST(SuperviseServerTest, AFolderTooLongForTheServerGetsAnExecdSupervisor) {
  ScratchDir jobs;
  std::unique_ptr<SupervisorSpawner> spawner = StartSpawner(jobs.path());
  ASSERT_NE(spawner, nullptr);
  const int64_t server = spawner->server_pid();
  LaunchSpec spec = ProbeSpec(jobs.path(), "/dev/null");
  spec.script = "#!/bin/sh\nsleep 0.2\n";
  const std::string folder(200, 'f');
  Result<SupervisorHandle> h =
      StartSupervisor(BERTH_BINARY, jobs.path(), spec, folder, spawner.get());
  ASSERT_TRUE(h.ok()) << h.status().ToString();
  EXPECT_EQ(CommandLineOf(h->pid), BERTH_BINARY + "\0supervise\0"s + h->dir + '\0');
  std::optional<JobResult> r = WaitResult(h->dir);
  ASSERT_TRUE(r.has_value()) << Slurp(h->dir + "/supervisor.log");
  EXPECT_EQ(r->state, "COMPLETED") << r->message;
  EXPECT_EQ(spawner->server_pid(), server);
}

}  // namespace
}  // namespace berth::agent
