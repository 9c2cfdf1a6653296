#include "slurm/srun_stdio.h"

#include <fcntl.h>
#include <gtest/gtest.h>
#include <poll.h>
#include <sys/wait.h>
#include <unistd.h>

#include <csignal>
#include <fstream>
#include <iterator>
#include <string>
#include <vector>

#include "slurm/srun.h"
#include "slurm/srun_step.h"

namespace berth::slurm {
namespace {

TEST(InputModeTest, AsSlurmReadsIt) {
  using K = InputMode::Kind;
  EXPECT_EQ(ParseInputMode("", 4).kind, K::kAll);
  EXPECT_EQ(ParseInputMode("all", 4).kind, K::kAll);
  EXPECT_EQ(ParseInputMode("ALL", 4).kind, K::kAll);
  EXPECT_EQ(ParseInputMode("-", 4).kind, K::kAll);
  EXPECT_EQ(ParseInputMode("none", 4).kind, K::kNone);
  EXPECT_EQ(ParseInputMode("None", 4).kind, K::kNone);
  InputMode one = ParseInputMode("3", 4);
  EXPECT_EQ(one.kind, K::kTask);
  EXPECT_EQ(one.task, 3);
  // Not below the task count: a file of that name, as Slurm's fname_create reads it.
  InputMode file = ParseInputMode("4", 4);
  EXPECT_EQ(file.kind, K::kFile);
  EXPECT_EQ(file.pattern, "4");
  EXPECT_EQ(ParseInputMode("in-%t.txt", 4).kind, K::kFile);
  EXPECT_EQ(ParseInputMode("/dev/stdin", 4).pattern, "/dev/stdin");
}

TEST(InputModeTest, DevNull) {
  int null_fd = open("/dev/null", O_RDONLY);
  int zero_fd = open("/dev/zero", O_RDONLY);
  EXPECT_TRUE(IsDevNull(null_fd));
  EXPECT_FALSE(IsDevNull(zero_fd));
  int p[2];
  ASSERT_EQ(pipe(p), 0);
  EXPECT_FALSE(IsDevNull(p[0]));
  for (int fd : {null_fd, zero_fd, p[0], p[1]}) close(fd);
}

// Runs the fanout's loop until it is done or `rounds` polls passed.
void Pump(InputFanout& f, int rounds = 1000, int wait_millis = 1000) {
  for (int i = 0; i < rounds && !f.Done(); ++i) {
    std::vector<pollfd> fds;
    f.Prepare(fds);
    if (fds.empty()) return;
    ASSERT_GE(poll(fds.data(), fds.size(), wait_millis), 0);
    f.Handle(fds);
  }
}

std::string ReadAll(int fd) {
  std::string out;
  char buf[4096];
  ssize_t n;
  while ((n = read(fd, buf, sizeof(buf))) > 0) out.append(buf, static_cast<size_t>(n));
  return out;
}

TEST(InputFanoutTest, EverySinkGetsAllOfItAndThenEof) {
  int src[2], a[2], b[2];
  ASSERT_EQ(pipe(src), 0);
  ASSERT_EQ(pipe(a), 0);
  ASSERT_EQ(pipe(b), 0);
  std::string data(10000, 'x');
  data += "end\n";
  ASSERT_EQ(write(src[1], data.data(), data.size()), static_cast<ssize_t>(data.size()));
  close(src[1]);
  {
    InputFanout f(src[0]);
    f.AddSink(a[1], InputFanout::AtEnd::kClose);
    f.AddSink(b[1], InputFanout::AtEnd::kClose);
    Pump(f);
    EXPECT_TRUE(f.Done());
  }
  // The write ends are closed: each reader sees all of the input, then EOF.
  EXPECT_EQ(ReadAll(a[0]), data);
  EXPECT_EQ(ReadAll(b[0]), data);
  for (int fd : {src[0], a[0], b[0]}) close(fd);
}

TEST(InputFanoutTest, NoSourceEndsAtOnce) {
  int a[2];
  ASSERT_EQ(pipe(a), 0);
  InputFanout f(-1);
  f.AddSink(a[1], InputFanout::AtEnd::kClose);
  EXPECT_TRUE(f.Done());
  EXPECT_EQ(ReadAll(a[0]), "");
  close(a[0]);
}

TEST(InputFanoutTest, ASinkThatGoesAwayIsDroppedAndOneThatDoesNotReadHoldsTheSourceBack) {
  struct sigaction ignore = {}, old = {};
  ignore.sa_handler = SIG_IGN;
  sigaction(SIGPIPE, &ignore, &old);
  int src[2], gone[2], slow[2];
  ASSERT_EQ(pipe(src), 0);
  ASSERT_EQ(pipe(gone), 0);
  ASSERT_EQ(pipe(slow), 0);
  close(gone[0]);  // its task ended
  fcntl(src[1], F_SETFL, O_NONBLOCK);
  InputFanout f(src[0]);
  f.AddSink(gone[1], InputFanout::AtEnd::kClose);
  f.AddSink(slow[1], InputFanout::AtEnd::kClose);
  // Far more than the slow sink's pipe and the bound hold.
  std::string chunk(65536, 'y');
  size_t written = 0;
  for (int i = 0; i < 64; ++i) {
    Pump(f, 4, 0);
    ssize_t n = write(src[1], chunk.data(), chunk.size());
    if (n > 0) written += static_cast<size_t>(n);
  }
  Pump(f, 64, 0);
  EXPECT_FALSE(f.Done());
  // srun stopped reading: what it holds is bounded, the rest waits in the source pipe.
  std::vector<pollfd> fds;
  f.Prepare(fds);
  for (const pollfd& p : fds) EXPECT_NE(p.fd, src[0]) << "still reading with a full backlog";
  EXPECT_LT(written, 64u * chunk.size());
  close(src[1]);
  // Reading the slow sink lets everything through.
  fcntl(slow[0], F_SETFL, O_NONBLOCK);
  size_t got = 0;
  char buf[65536];
  for (int i = 0; i < 10000 && !f.Done(); ++i) {
    ssize_t n = read(slow[0], buf, sizeof(buf));
    if (n > 0) got += static_cast<size_t>(n);
    Pump(f, 1, 10);
  }
  EXPECT_TRUE(f.Done());
  ssize_t n;
  while ((n = read(slow[0], buf, sizeof(buf))) > 0) got += static_cast<size_t>(n);
  EXPECT_EQ(got, written);
  close(slow[0]);
  close(src[0]);
  sigaction(SIGPIPE, &old, nullptr);
}

TEST(TerminalTest, RawModeIsRestoredAndSizesAreCopied) {
  winsize size{};
  size.ws_row = 33;
  size.ws_col = 101;
  Result<Pty> p = OpenPty(size);
  ASSERT_TRUE(p.ok()) << p.status().message();
  std::optional<winsize> got = TerminalSize(p->slave);
  ASSERT_TRUE(got.has_value());
  EXPECT_EQ(got->ws_row, 33);
  EXPECT_EQ(got->ws_col, 101);
  termios before;
  ASSERT_EQ(tcgetattr(p->slave, &before), 0);
  ASSERT_TRUE(before.c_lflag & ICANON);
  {
    RawTerminal raw(p->slave);
    EXPECT_TRUE(raw.active());
    termios now;
    ASSERT_EQ(tcgetattr(p->slave, &now), 0);
    EXPECT_FALSE(now.c_lflag & (ICANON | ECHO | ISIG));
    EXPECT_TRUE(now.c_oflag & OPOST);  // srun's own messages still start on a new line
  }
  termios after;
  ASSERT_EQ(tcgetattr(p->slave, &after), 0);
  EXPECT_EQ(after.c_lflag, before.c_lflag);
  EXPECT_EQ(after.c_iflag, before.c_iflag);
  // Not a terminal: nothing to do.
  int null_fd = open("/dev/null", O_RDONLY);
  RawTerminal none(null_fd);
  EXPECT_FALSE(none.active());
  EXPECT_FALSE(TerminalSize(null_fd).has_value());
  for (int fd : {null_fd, p->master, p->slave}) close(fd);
}

TEST(RelayTest, FramesRoundTripInPieces) {
  winsize size{};
  size.ws_row = 300;
  size.ws_col = 7;
  std::string stream = EncodeWindowFrame(size) +
                       EncodeRelayFrame(RelayFrame::kData, std::string("ab\0c", 4)) +
                       EncodeRelayFrame(RelayFrame::kEnd);
  RelayDecoder d;
  std::vector<std::pair<RelayFrame, std::string>> frames;
  for (char c : stream) {  // one byte at a time, as a socket may deliver it
    d.Feed(std::string_view(&c, 1));
    Result<std::optional<std::pair<RelayFrame, std::string>>> f = d.Next();
    ASSERT_TRUE(f.ok());
    if (*f) frames.push_back(**f);
  }
  ASSERT_EQ(frames.size(), 3u);
  EXPECT_EQ(frames[0].first, RelayFrame::kWindow);
  std::optional<winsize> w = DecodeWindow(frames[0].second);
  ASSERT_TRUE(w.has_value());
  EXPECT_EQ(w->ws_row, 300);
  EXPECT_EQ(w->ws_col, 7);
  EXPECT_EQ(frames[1],
            (std::pair<RelayFrame, std::string>{RelayFrame::kData, std::string("ab\0c", 4)}));
  EXPECT_EQ(frames[2].first, RelayFrame::kEnd);
  RelayDecoder back;  // the tasks' side: output, error, their end
  back.Feed(EncodeRelayFrame(RelayFrame::kOut, "o") + EncodeRelayFrame(RelayFrame::kErr, "e") +
            EncodeRelayFrame(RelayFrame::kOutEnd));
  for (RelayFrame t : {RelayFrame::kOut, RelayFrame::kErr, RelayFrame::kOutEnd}) {
    Result<std::optional<std::pair<RelayFrame, std::string>>> f = back.Next();
    ASSERT_TRUE(f.ok() && f->has_value());
    EXPECT_EQ((*f)->first, t);
  }
  RelayDecoder bad;
  bad.Feed(std::string("Z\0\0\0\0", 5));
  EXPECT_FALSE(bad.Next().ok());
  RelayDecoder huge;
  huge.Feed(std::string("D\x7f\0\0\0", 5));
  EXPECT_FALSE(huge.Next().ok());
  EXPECT_FALSE(DecodeWindow("abc").has_value());
}

// ---- The local step's input, with real processes (in a child, whose standard input and
// output the test chooses).

EnvList OneNodeEnv() {
  return {{"SLURM_JOB_ID", "77"},   {"SLURM_JOB_NODELIST", "n1"}, {"SLURM_JOB_CPUS_PER_NODE", "4"},
          {"SLURM_NODEID", "0"},    {"SLURMD_NODENAME", "n1"},    {"SLURM_JOB_USER", "u"},
          {"PATH", "/usr/bin:/bin"}};
}

class StepInputTest : public ::testing::Test {
 protected:
  void SetUp() override {
    char tmpl[] = "/tmp/srun-stdio-test-XXXXXX";
    ASSERT_NE(mkdtemp(tmpl), nullptr);
    dir_ = tmpl;
  }
  void TearDown() override {
    std::string cmd = "rm -rf '" + dir_ + "'";
    ASSERT_EQ(system(cmd.c_str()), 0);
  }
  // Runs `srun ARGS` inside a one-node allocation with `input` on its standard input; its
  // standard output and error go to out_ and err_. Returns srun's exit code.
  int Run(std::vector<std::string> args, const std::string& input,
          std::optional<winsize> window = std::nullopt) {
    args.insert(args.begin(), "srun");
    SrunParse parsed = ParseSrunArgs(args);
    EXPECT_FALSE(parsed.done) << parsed.err;
    std::fflush(nullptr);
    int in[2];
    EXPECT_EQ(pipe(in), 0);
    pid_t pid = fork();
    if (pid == 0) {
      dup2(in[0], 0);
      close(in[0]);
      close(in[1]);
      int out = open((dir_ + "/stdout").c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0644);
      int err = open((dir_ + "/stderr").c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0644);
      dup2(out, 1);
      dup2(err, 2);
      EnvList env = OneNodeEnv();
      Result<Allocation> a = AllocationFromEnv(env);
      Result<StepLayout> l = PlanStep(parsed.options, *a);
      if (!l.ok()) _exit(99);
      LocalStep step{parsed.options, *a, *l, 0, 3, env};
      step.window = window;
      _exit(RunLocalStep(step));
    }
    close(in[0]);
    // srun may end before it read everything (its tasks did not want it): EPIPE, as for any
    // writer into a pipe whose reader has gone.
    struct sigaction ignore = {}, old = {};
    ignore.sa_handler = SIG_IGN;
    sigaction(SIGPIPE, &ignore, &old);
    size_t done = 0;
    while (done < input.size()) {
      ssize_t n = write(in[1], input.data() + done, input.size() - done);
      if (n <= 0) break;
      done += static_cast<size_t>(n);
    }
    written_ = done;
    close(in[1]);
    sigaction(SIGPIPE, &old, nullptr);
    int status = 0;
    EXPECT_EQ(waitpid(pid, &status, 0), pid);
    out_ = Read("stdout");
    err_ = Read("stderr");
    return WIFEXITED(status) ? WEXITSTATUS(status) : -1;
  }
  std::string Read(const std::string& name) {
    std::ifstream in(dir_ + "/" + name);
    return std::string(std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>());
  }
  std::string dir_, out_, err_;
  size_t written_ = 0;
};

TEST_F(StepInputTest, EveryTaskGetsSrunsInputByDefault) {
  EXPECT_EQ(Run({"-n", "2", "-o", dir_ + "/out-%t", "sh", "-c", "cat; echo end"}, "a\nb\n"), 0)
      << err_;
  EXPECT_EQ(Read("out-0"), "a\nb\nend\n");
  EXPECT_EQ(Read("out-1"), "a\nb\nend\n");
}

TEST_F(StepInputTest, OneTaskOrNone) {
  EXPECT_EQ(
      Run({"-n", "3", "-i", "1", "-o", dir_ + "/out-%t", "sh", "-c", "cat; echo end"}, "data\n"),
      0);
  EXPECT_EQ(Read("out-0"), "end\n");
  EXPECT_EQ(Read("out-1"), "data\nend\n");
  EXPECT_EQ(Read("out-2"), "end\n");
  EXPECT_EQ(Run({"-n", "2", "--input=none", "-o", dir_ + "/none-%t", "sh", "-c", "cat; echo end"},
                "data\n"),
            0);
  EXPECT_EQ(Read("none-0"), "end\n");
  EXPECT_EQ(Read("none-1"), "end\n");
}

TEST_F(StepInputTest, FilesWholeForEachTaskAndPerTask) {
  std::ofstream(dir_ + "/in") << "shared\n";
  std::ofstream(dir_ + "/in-0") << "zero\n";
  std::ofstream(dir_ + "/in-1") << "one\n";
  EXPECT_EQ(Run({"-n", "2", "-i", dir_ + "/in", "-o", dir_ + "/a-%t", "cat"}, "ignored\n"), 0);
  EXPECT_EQ(Read("a-0"), "shared\n");
  EXPECT_EQ(Read("a-1"), "shared\n");
  EXPECT_EQ(Run({"-n", "2", "-i", dir_ + "/in-%t", "-o", dir_ + "/b-%t", "cat"}, ""), 0);
  EXPECT_EQ(Read("b-0"), "zero\n");
  EXPECT_EQ(Read("b-1"), "one\n");
  // A task id not below the task count names a file.
  EXPECT_EQ(Run({"-n", "2", "-i", "7", "cat"}, ""), 1);
  EXPECT_EQ(err_, "srun: error: Could not open stdin file: No such file or directory\n");
  EXPECT_EQ(Run({"-i", dir_ + "/missing", "cat"}, ""), 1);
  EXPECT_EQ(err_, "srun: error: Could not open stdin file: No such file or directory\n");
}

TEST_F(StepInputTest, ATaskThatDoesNotReadItsInputDoesNotHoldSrun) {
  EXPECT_EQ(Run({"-n", "2", "sh", "-c", "exit $SLURM_PROCID"}, std::string(3000000, 'z')), 1);
  EXPECT_LT(written_, 3000000u);  // srun ended without reading what nobody wanted
  // One task reads it all, the other reads nothing and keeps running a while.
  EXPECT_EQ(Run({"-n", "2", "-o", dir_ + "/o-%t", "sh", "-c",
                 "if [ $SLURM_PROCID = 0 ]; then wc -c; else sleep 1; fi"},
                std::string(3000000, 'z')),
            0);
  EXPECT_EQ(Read("o-0"), "3000000\n");
}

TEST_F(StepInputTest, PtyGivesTaskZeroATerminalWithTheWindowSize) {
  winsize size{};
  size.ws_row = 31;
  size.ws_col = 97;
  EXPECT_EQ(Run({"--pty", "-n", "2", "sh", "-c",
                 "if [ $SLURM_PROCID = 0 ]; then tty -s && echo tty; stty size; "
                 "echo cols=$SLURM_PTY_WIN_COL; read x; echo got:$x; exit 4; "
                 "else echo other; fi"},
                "hello\n", size),
            4);
  // The terminal echoes what it was sent (whenever it arrives: between the task's lines too),
  // and ends lines with CR LF; task 1's output goes to /dev/null, as with Slurm's --pty.
  std::string shown = out_;
  for (size_t at = shown.find("hello\r\n"); at != std::string::npos;
       at = shown.find("hello\r\n", at + 1)) {
    if (at < 4 || shown.compare(at - 4, 4, "got:") != 0) {
      shown.erase(at, 7);  // the echo
      break;
    }
  }
  EXPECT_LT(shown.size(), out_.size()) << out_;
  EXPECT_NE(shown.find("tty\r\n31 97\r\ncols=97\r\n"), std::string::npos) << out_;
  EXPECT_NE(out_.find("got:hello\r\n"), std::string::npos) << out_;
  EXPECT_EQ(out_.find("other"), std::string::npos) << out_;
  EXPECT_EQ(err_, "srun: error: n1: task 0: Exited with exit code 4\n");
}

TEST_F(StepInputTest, PtyInputEndsWithTheTerminalsEof) {
  // cat on a terminal ends at ^D, which srun sends when its own input ends.
  EXPECT_EQ(Run({"--pty", "cat"}, "line\n"), 0) << err_;
  EXPECT_NE(out_.find("line\r\n"), std::string::npos) << out_;
}

}  // namespace
}  // namespace berth::slurm
