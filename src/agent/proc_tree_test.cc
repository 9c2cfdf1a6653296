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
