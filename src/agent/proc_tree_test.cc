#include "agent/proc_tree.h"

#include <gtest/gtest.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>

namespace berth::agent {
namespace {

TEST(ProcTreeTest, ParentFromStat) {
  char state = 0;
  EXPECT_EQ(ParentFromStat("123 (bash) S 45 123 123 0 -1", &state), 45);
  EXPECT_EQ(state, 'S');
  // A command name with spaces and parentheses.
  EXPECT_EQ(ParentFromStat("7 (a) b (c)) Z 1 7 7", &state), 1);
  EXPECT_EQ(state, 'Z');
  EXPECT_EQ(ParentFromStat("garbage"), -1);
  EXPECT_EQ(ParentFromStat("1 (x)"), -1);
}

TEST(ProcTreeTest, StepLaunchers) {
  using V = std::vector<std::string>;
  EXPECT_TRUE(IsStepLauncher(V{"srun", "-n", "2", "hostname"}));
  EXPECT_TRUE(IsStepLauncher(V{"/usr/local/bin/srun", "hostname"}));
  EXPECT_TRUE(IsStepLauncher(V{"/opt/berth/bin/berth", "srun", "true"}));
  EXPECT_TRUE(IsStepLauncher(V{"/.berth/lib/ld-linux-x86-64.so.2", "--library-path", "/.berth/lib",
                               "/.berth/bin/berth", "srun", "--step"}));
  EXPECT_FALSE(IsStepLauncher(V{}));
  EXPECT_FALSE(IsStepLauncher(V{"/bin/sh", "-c", "srun hostname"}));
  EXPECT_FALSE(IsStepLauncher(V{"berth", "sbatch", "srun"}));
  EXPECT_FALSE(IsStepLauncher(V{"python3", "train.py", "berth", "srun"}));  // past the launcher
  EXPECT_FALSE(IsStepLauncher(V{"sruns"}));
}

// A launcher found under the root, the tasks below it; a launcher below a launcher is a task.
TEST(ProcTreeTest, FindsTheStepsAndTheirTasks) {
  // sh named srun; "; true" keeps the shell from exec'ing its command (the name would go).
  pid_t launcher = fork();
  ASSERT_GE(launcher, 0);
  if (launcher == 0) {
    setpgid(0, 0);  // a group of its own, so that the test ends all below it at once
    if (fork() == 0) {
      execl("/bin/sh", "srun", "-c", "sleep 30; true", static_cast<char*>(nullptr));
      _exit(127);
    }
    execl("/bin/sh", "srun", "-c", "sleep 30; true", static_cast<char*>(nullptr));
    _exit(127);
  }
  pid_t other = fork();
  ASSERT_GE(other, 0);
  if (other == 0) {
    setpgid(0, 0);
    execl("/bin/sh", "sh", "-c", "sleep 30; true", static_cast<char*>(nullptr));
    _exit(127);
  }
  // The launcher, and as its tasks (its children) a shell named srun (a task, not a launcher)
  // and a sleep; the shell's own sleep is below the tasks.
  StepProcesses steps;
  for (int i = 0; i < 300; ++i) {
    steps = FindStepProcesses(getpid());
    if (steps.launchers.size() == 1 && steps.tasks.size() == 2) break;
    usleep(10000);
  }
  EXPECT_EQ(steps.launchers, std::vector<pid_t>{launcher});
  EXPECT_EQ(steps.tasks.size(), 2u);
  EXPECT_EQ(std::count(steps.tasks.begin(), steps.tasks.end(), other), 0);
  // Outside the step: the launcher itself and the other shell with its sleep.
  EXPECT_EQ(std::count(steps.outside.begin(), steps.outside.end(), launcher), 1);
  EXPECT_EQ(std::count(steps.outside.begin(), steps.outside.end(), other), 1);
  for (pid_t t : steps.tasks) {
    EXPECT_EQ(std::count(steps.outside.begin(), steps.outside.end(), t), 0);
  }
  // Each group whole: a process forked while a list of pids was being killed would survive.
  for (pid_t p : {launcher, other}) {
    kill(-p, SIGKILL);
    kill(p, SIGKILL);  // not yet in its group: then nothing below it yet either
    waitpid(p, nullptr, 0);
  }
}

TEST(ProcTreeTest, StepIdOfEnviron) {
  using namespace std::string_view_literals;
  EXPECT_EQ(StepIdOfEnviron("A=1\0SLURM_STEP_ID=3\0B=2\0"sv), 3);
  EXPECT_EQ(StepIdOfEnviron("SLURM_STEP_ID=12"sv), 12);
  EXPECT_EQ(StepIdOfEnviron("A=1\0B=2\0"sv), -1);
  EXPECT_EQ(StepIdOfEnviron("XSLURM_STEP_ID=3\0"sv), -1);
  EXPECT_EQ(StepIdOfEnviron("SLURM_STEP_ID=\0"sv), -1);
  EXPECT_EQ(StepIdOfEnviron("SLURM_STEP_ID=-1\0"sv), -1);
  EXPECT_EQ(StepIdOfEnviron("SLURM_STEP_ID=4x\0"sv), -1);
  EXPECT_EQ(StepIdOfEnviron(""sv), -1);
}

TEST(ProcTreeTest, OneStepByTheStepIdOfItsTasks) {
  // Two launchers (shells named srun), each with a task whose environment names its step.
  auto launch = [](const char* step) {
    pid_t launcher = fork();
    if (launcher == 0) {
      setpgid(0, 0);
      if (fork() == 0) {
        setenv("SLURM_STEP_ID", step, 1);
        execl("/bin/sh", "sh", "-c", "sleep 30; true", static_cast<char*>(nullptr));
        _exit(127);
      }
      execl("/bin/sh", "srun", "-c", "sleep 30; true", static_cast<char*>(nullptr));
      _exit(127);
    }
    return launcher;
  };
  pid_t zero = launch("0");
  pid_t one = launch("1");
  ASSERT_GT(zero, 0);
  ASSERT_GT(one, 0);
  StepProcesses step1;
  for (int i = 0; i < 300; ++i) {
    step1 = FindStepProcesses(getpid(), 1);
    // The task's own sleep is below it, so "below" holds the task and that sleep.
    // Both processes started (a loaded machine may run the shells' forks late).
    if (step1.launchers.size() == 1 && step1.below.size() >= 2 && step1.tasks.size() >= 2) break;
    usleep(10000);
  }
  EXPECT_EQ(step1.launchers, std::vector<pid_t>{one});
  EXPECT_EQ(step1.tasks.size(), 2u);  // the task and the launcher's own sleep
  for (pid_t p : DescendantsOf(zero)) {
    EXPECT_EQ(std::count(step1.below.begin(), step1.below.end(), p), 0);
  }
  EXPECT_EQ(FindStepProcesses(getpid(), 7).launchers.size(), 0u);
  EXPECT_EQ(FindStepProcesses(getpid()).launchers.size(), 2u);
  for (pid_t l : {zero, one}) {
    kill(-l, SIGKILL);
    kill(l, SIGKILL);
    waitpid(l, nullptr, 0);
  }
}

TEST(ProcTreeTest, FindsChildrenAndGrandchildren) {
  int ready[2];
  ASSERT_EQ(pipe(ready), 0);
  pid_t child = fork();
  ASSERT_GE(child, 0);
  if (child == 0) {
    pid_t grandchild = fork();
    if (grandchild == 0) {
      pause();
      _exit(0);
    }
    (void)!write(ready[1], &grandchild, sizeof(grandchild));
    pause();
    _exit(0);
  }
  pid_t grandchild = -1;
  ASSERT_EQ(read(ready[0], &grandchild, sizeof(grandchild)),
            static_cast<ssize_t>(sizeof(grandchild)));
  std::vector<pid_t> found = DescendantsOf(getpid());
  EXPECT_NE(std::find(found.begin(), found.end(), child), found.end());
  EXPECT_NE(std::find(found.begin(), found.end(), grandchild), found.end());
  EXPECT_TRUE(DescendantsOf(grandchild).empty());
  kill(grandchild, SIGKILL);
  kill(child, SIGKILL);
  waitpid(child, nullptr, 0);
  close(ready[0]);
  close(ready[1]);
}

}  // namespace
}  // namespace berth::agent
