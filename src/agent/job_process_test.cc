#include "agent/job_process.h"

#include <gtest/gtest.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <fstream>
#include <sstream>
#include <string>

#include "agent/agent_test_util.h"

namespace berth::agent {
namespace {

void NoteSignal(int) {}

class JobProcessTest : public ::testing::Test {
 protected:
  JobExec Shell(const std::string& script) const {
    JobExec exec;
    exec.exec_paths = {"/bin/sh"};
    exec.argv = {"sh", "-c", script};
    exec.env = {"PATH=/usr/bin:/bin"};
    exec.work_dir = dir();
    exec.stdout_path = dir() + "/out";
    return exec;
  }

  static int Wait(pid_t pid) {
    int status = 0;
    while (waitpid(pid, &status, 0) < 0 && errno == EINTR) {
    }
    return status;
  }

  std::string Read(const std::string& name) const {
    std::ifstream in(dir() + "/" + name);
    std::stringstream text;
    text << in.rdbuf();
    return text.str();
  }

  const std::string& dir() const { return scratch_.path(); }

  testing::ScratchDir scratch_;
};

// The child starts as a new program should whatever the caller's signal state (it runs on the
// caller's memory until it execs: a handler that ran there would run the caller's code), and the
// caller's state is as it was afterwards.
TEST_F(JobProcessTest, TheJobStartsWithDefaultSignalsAndTheCallersAreKept) {
  struct sigaction handled {};
  handled.sa_handler = NoteSignal;
  struct sigaction ignored {};
  ignored.sa_handler = SIG_IGN;
  struct sigaction old_usr1 {};
  struct sigaction old_usr2 {};
  ASSERT_EQ(sigaction(SIGUSR1, &handled, &old_usr1), 0);
  ASSERT_EQ(sigaction(SIGUSR2, &ignored, &old_usr2), 0);
  sigset_t blocked;
  sigset_t old_mask;
  sigemptyset(&blocked);
  sigaddset(&blocked, SIGTERM);
  ASSERT_EQ(sigprocmask(SIG_BLOCK, &blocked, &old_mask), 0);

  Result<JobStart> start =
      StartJobProcess(Shell("while read -r line; do case $line in SigBlk*|SigIgn*) "
                            "echo \"$line\";; esac; done < /proc/$$/status"));
  ASSERT_TRUE(start.ok()) << start.status().ToString();
  EXPECT_FALSE(start->failure.has_value());
  int status = Wait(start->pid);

  sigset_t mask_after;
  sigprocmask(SIG_SETMASK, nullptr, &mask_after);
  struct sigaction usr1_after {};
  struct sigaction usr2_after {};
  sigaction(SIGUSR1, nullptr, &usr1_after);
  sigaction(SIGUSR2, nullptr, &usr2_after);
  sigprocmask(SIG_SETMASK, &old_mask, nullptr);
  sigaction(SIGUSR1, &old_usr1, nullptr);
  sigaction(SIGUSR2, &old_usr2, nullptr);

  ASSERT_TRUE(WIFEXITED(status) && WEXITSTATUS(status) == 0) << status;
  // What survives exec: the mask and the ignored signals (the shell's own handlers are its own).
  EXPECT_EQ(Read("out"), "SigBlk:\t0000000000000000\nSigIgn:\t0000000000000000\n");
  EXPECT_TRUE(sigismember(&mask_after, SIGTERM));
  EXPECT_FALSE(sigismember(&mask_after, SIGUSR1));
  EXPECT_EQ(usr1_after.sa_handler, NoteSignal);
  EXPECT_EQ(usr2_after.sa_handler, SIG_IGN);
}

// A child that fails before exec reports its stage and is reaped; the caller's memory, which the
// child shared until then, is untouched, and the next start works.
TEST_F(JobProcessTest, AFailureBeforeExecIsReportedAndTheCallerGoesOn) {
  const std::string kept(4096, 'k');
  JobExec exec = Shell("echo never");
  exec.stdout_path = dir() + "/missing/out";
  Result<JobStart> start = StartJobProcess(exec);
  ASSERT_TRUE(start.ok()) << start.status().ToString();
  ASSERT_TRUE(start->failure.has_value());
  EXPECT_EQ(start->failure->stage, JobStartStage::kStdout);
  EXPECT_EQ(start->failure->err, ENOENT);
  EXPECT_TRUE(WIFEXITED(start->exit_status) && WEXITSTATUS(start->exit_status) == 1);
  EXPECT_EQ(waitpid(start->pid, nullptr, WNOHANG), -1);  // reaped already
  EXPECT_EQ(kept, std::string(4096, 'k'));

  JobExec missing = Shell("");
  missing.exec_paths = {dir() + "/no-such-program"};
  Result<JobStart> again = StartJobProcess(missing);
  ASSERT_TRUE(again.ok()) << again.status().ToString();
  ASSERT_TRUE(again->failure.has_value());
  EXPECT_EQ(again->failure->stage, JobStartStage::kExec);
  EXPECT_TRUE(WIFEXITED(again->exit_status) && WEXITSTATUS(again->exit_status) == 127);

  Result<JobStart> ok = StartJobProcess(Shell("echo $$ started"));
  ASSERT_TRUE(ok.ok());
  EXPECT_FALSE(ok->failure.has_value());
  EXPECT_EQ(WEXITSTATUS(Wait(ok->pid)), 0);
  EXPECT_EQ(Read("out"), std::to_string(ok->pid) + " started\n");
}

// A working directory that cannot be entered is a warning, as in Slurm: the job runs in /tmp.
TEST_F(JobProcessTest, AWorkDirThatCannotBeEnteredRunsTheJobInTmp) {
  JobExec exec = Shell("pwd");
  exec.work_dir = dir() + "/gone";
  exec.stderr_path = dir() + "/err";
  Result<JobStart> start = StartJobProcess(exec);
  ASSERT_TRUE(start.ok());
  EXPECT_FALSE(start->failure.has_value());
  ASSERT_EQ(start->warnings.size(), 1u);
  EXPECT_EQ(start->warnings[0].stage, JobStartStage::kChdir);
  EXPECT_EQ(WEXITSTATUS(Wait(start->pid)), 0);
  EXPECT_EQ(Read("out"), "/tmp\n");
  EXPECT_NE(Read("err").find("couldn't chdir to `" + dir() + "/gone'"), std::string::npos);
}

}  // namespace
}  // namespace berth::agent
