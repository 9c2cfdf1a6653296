// Real jobs through `berth supervise`: memory, time limit, cancel, --signal, and running without
// cgroups. Kept short: limits of 2-4 s and kill_wait 1 s.
#include <pwd.h>
#include <signal.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <filesystem>
#include <string_view>
#include <utility>
#include <vector>

#include "agent/agent_test_util.h"
#include "agent/supervisor.h"

namespace berth::agent {
namespace {

using testing::Alive;
using testing::BaseSpec;
using testing::ScratchDir;
using testing::Slurp;
using testing::WaitResult;
using Clock = std::chrono::steady_clock;

LaunchSpec Spec(const std::string& work_dir) {
  LaunchSpec spec = BaseSpec(work_dir);
  spec.uid = getuid();
  spec.gid = getgid();
  passwd* pw = getpwuid(getuid());
  spec.user = pw != nullptr ? pw->pw_name : "";
  spec.stdout_pattern = "out-%j.txt";
  return spec;
}

bool Contains(const std::string& text, const std::string& part) {
  return text.find(part) != std::string::npos;
}

double Seconds(Clock::time_point since) {
  return std::chrono::duration<double>(Clock::now() - since).count();
}

// Waits until the job has written each of `files` (pid files) and returns their pids.
std::vector<pid_t> WaitForPids(const std::string& dir, const std::vector<std::string>& files) {
  std::vector<pid_t> pids;
  auto deadline = Clock::now() + std::chrono::seconds(10);
  for (const std::string& f : files) {
    std::string text;
    while (Clock::now() < deadline) {
      text = Slurp(dir + "/" + f);
      if (!text.empty() && text.back() == '\n') break;
      usleep(10000);
    }
    pids.push_back(static_cast<pid_t>(std::atoi(text.c_str())));
  }
  return pids;
}

// The script leaves behind a background process, one in a session of its own, and an orphan
// (its parent exits at once): every one must die with the job.
constexpr const char* kScatteringScript =
    "#!/bin/sh\n"
    "sleep 1000 &\n"
    "echo $! > bg.pid\n"
    "setsid sleep 1000 &\n"
    "echo $! > setsid.pid\n"
    "sh -c 'sleep 1000 & echo $! > orphan.pid'\n"
    "sleep 1000\n";

TEST(SupervisorLimitsTest, MemoryLimitEndsAsOutOfMemory) {
  BERTH_REQUIRE_ROOT_AND_CGROUPS();
  ScratchDir jobs;
  LaunchSpec spec = Spec(jobs.path());
  spec.mem_mib = 32;
  // dd touches its whole 256 MiB buffer; the kernel kills it, the script goes on.
  spec.script = "#!/bin/sh\ndd if=/dev/zero of=/dev/null bs=256M count=1\necho dd=$?\n";
  Result<SupervisorHandle> h = StartSupervisor(BERTH_BINARY, jobs.path(), spec);
  ASSERT_TRUE(h.ok()) << h.status().ToString();
  std::optional<JobResult> r = WaitResult(h->dir);
  ASSERT_TRUE(r.has_value());
  EXPECT_EQ(r->state, "OUT_OF_MEMORY") << r->message;
  EXPECT_TRUE(Contains(r->message, "exceeding the memory limit")) << r->message;
  EXPECT_LE(r->max_rss_mib, 32);
  EXPECT_TRUE(
      Contains(Slurp(jobs.path() + "/out-" + std::to_string(spec.job_id) + ".txt"), "dd=137"));
}

TEST(SupervisorLimitsTest, ConcurrentJobsGetDifferentCpus) {
  BERTH_REQUIRE_ROOT_AND_CGROUPS();
  if (sysconf(_SC_NPROCESSORS_ONLN) < 2) GTEST_SKIP() << "needs two CPUs";
  ScratchDir jobs;
  LaunchSpec a = Spec(jobs.path());
  a.stdout_pattern = "/dev/null";
  a.script = "#!/bin/sh\nwhile [ ! -e go ]; do sleep 0.05; done\n";
  Result<SupervisorHandle> ha = StartSupervisor(BERTH_BINARY, jobs.path(), a);
  ASSERT_TRUE(ha.ok()) << ha.status().ToString();
  WaitForPids(ha->dir, {"job.pid"});  // A's group and CPU set exist from here on
  LaunchSpec b = Spec(jobs.path());
  b.stdout_pattern = "/dev/null";
  b.script = "#!/bin/sh\ntrue\n";
  Result<SupervisorHandle> hb = StartSupervisor(BERTH_BINARY, jobs.path(), b);
  ASSERT_TRUE(hb.ok()) << hb.status().ToString();
  ASSERT_TRUE(WaitResult(hb->dir).has_value());
  std::string cpus_a = Slurp(ha->dir + "/cpus");
  std::string cpus_b = Slurp(hb->dir + "/cpus");
  EXPECT_FALSE(cpus_a.empty());
  EXPECT_NE(cpus_a, cpus_b) << "the second job must avoid the first one's CPU";
  std::ofstream(jobs.path() + "/go").put('\n');
  std::optional<JobResult> ra = WaitResult(ha->dir);
  ASSERT_TRUE(ra.has_value());
  EXPECT_EQ(ra->state, "COMPLETED") << ra->message;
}

TEST(SupervisorLimitsTest, TimeLimitTermsThenKillsAndEndsAsTimeout) {
  ScratchDir jobs;
  LaunchSpec spec = Spec(jobs.path());
  spec.time_limit = 2;
  spec.kill_wait = 1;
  // Ignores SIGTERM (and so do its children): only the SIGKILL after kill_wait ends it.
  spec.script = "#!/bin/sh\ntrap '' TERM\nsleep 30 &\nwait\n";
  auto start = Clock::now();
  Result<SupervisorHandle> h = StartSupervisor(BERTH_BINARY, jobs.path(), spec);
  ASSERT_TRUE(h.ok()) << h.status().ToString();
  std::optional<JobResult> r = WaitResult(h->dir);
  double took = Seconds(start);
  ASSERT_TRUE(r.has_value());
  EXPECT_EQ(r->state, "TIMEOUT") << r->message;
  EXPECT_EQ(r->term_signal, SIGKILL);
  EXPECT_GE(took, 2.9);
  EXPECT_LE(took, 2 + 1 + 2.0);
}

TEST(SupervisorLimitsTest, CancelKillsEveryProcessOfTheJob) {
  ScratchDir jobs;
  LaunchSpec spec = Spec(jobs.path());
  spec.kill_wait = 1;
  spec.script = kScatteringScript;
  Result<SupervisorHandle> h = StartSupervisor(BERTH_BINARY, jobs.path(), spec);
  ASSERT_TRUE(h.ok()) << h.status().ToString();
  std::vector<pid_t> pids = WaitForPids(jobs.path(), {"bg.pid", "setsid.pid", "orphan.pid"});
  for (pid_t p : pids) ASSERT_TRUE(Alive(p)) << p;
  auto start = Clock::now();
  ASSERT_TRUE(CancelJob(h->dir).ok());
  std::optional<JobResult> r = WaitResult(h->dir);
  ASSERT_TRUE(r.has_value());
  EXPECT_EQ(r->state, "CANCELLED") << r->message;
  EXPECT_LE(Seconds(start), 1 + 2.0);
  for (pid_t p : pids) EXPECT_FALSE(Alive(p)) << "pid " << p << " survived the cancel";
}

// A job step as the supervisor knows one: a process whose name is srun (a link to sh here, so that
// it runs the trap it is given), started by the batch script.
constexpr const char* kStepAndChild =
    "ln -sf /bin/sh srun\n"
    "./srun -c 'trap \"echo step got $0\" USR1 USR2; for i in $(seq 30); do sleep 0.1; done' "
    "STEP &\n"
    "( trap 'echo child got it' USR1 USR2; for i in $(seq 30); do sleep 0.1; done ) &\n";

// sbatch --signal=[B:]SIG@TIME: B: the batch shell alone; else, as Slurm, the job's steps only.
TEST(SupervisorLimitsTest, SignalBeforeTheLimitReachesTheStepsOrTheBatchShell) {
  ScratchDir jobs;
  for (bool batch_only : {true, false}) {
    LaunchSpec spec = Spec(jobs.path());
    spec.time_limit = 5;
    spec.signal_number = SIGUSR1;
    spec.signal_before = 4;  // at 1 s
    spec.signal_batch_only = batch_only;
    spec.script = std::string("#!/bin/sh\n") + "cd " + jobs.path() + "\n" + kStepAndChild +
                  "trap 'echo batch got USR1' USR1\n"
                  "sleep 10 & wait $!\n"
                  "echo after\n";
    auto start = Clock::now();
    Result<SupervisorHandle> h = StartSupervisor(BERTH_BINARY, jobs.path(), spec);
    ASSERT_TRUE(h.ok()) << h.status().ToString();
    std::optional<JobResult> r = WaitResult(h->dir);
    double took = Seconds(start);
    ASSERT_TRUE(r.has_value());
    std::string out = Slurp(jobs.path() + "/out-" + std::to_string(spec.job_id) + ".txt");
    EXPECT_GE(took, 1.0);
    EXPECT_FALSE(Contains(out, "child got it")) << out;
    if (batch_only) {
      EXPECT_EQ(r->state, "COMPLETED") << r->message;
      EXPECT_LT(took, 5.0) << "the signal must come before the limit";
      EXPECT_TRUE(Contains(out, "batch got USR1\n")) << out;
      EXPECT_FALSE(Contains(out, "step got")) << out;
      EXPECT_TRUE(Contains(out, "after\n")) << out;
    } else {
      EXPECT_TRUE(Contains(out, "step got STEP\n")) << out;
      EXPECT_FALSE(Contains(out, "batch got USR1")) << out;
    }
  }
}

// scancel --signal: the job's steps (no flag), the batch shell (-b), every process (-f).
TEST(SupervisorLimitsTest, SignalsReachWhatTheirScopeNames) {
  const std::pair<SignalScope, std::vector<const char*>> cases[] = {
      {{false, false}, {"step got STEP"}},
      {{true, false}, {"batch got USR2"}},
      {{false, true}, {"step got STEP", "batch got USR2", "child got it"}},
  };
  for (const auto& [scope, want] : cases) {
    ScratchDir jobs;
    LaunchSpec spec = Spec(jobs.path());
    spec.script = std::string("#!/bin/sh\n") + "cd " + jobs.path() + "\n" + kStepAndChild +
                  "trap 'echo batch got USR2' USR2\n"
                  "echo $$ > batch.pid\n"
                  "wait\nwait\nwait\n";
    Result<SupervisorHandle> h = StartSupervisor(BERTH_BINARY, jobs.path(), spec);
    ASSERT_TRUE(h.ok()) << h.status().ToString();
    WaitForPids(jobs.path(), {"batch.pid"});
    usleep(300000);  // the step's and the child's traps in place
    ASSERT_TRUE(SignalJob(h->dir, SIGUSR2, scope).ok());
    std::optional<JobResult> r = WaitResult(h->dir, 15);
    ASSERT_TRUE(r.has_value());
    EXPECT_EQ(r->state, "COMPLETED") << r->message;
    std::string out = Slurp(jobs.path() + "/out-" + std::to_string(spec.job_id) + ".txt");
    for (const char* line : {"step got STEP", "batch got USR2", "child got it"}) {
      bool expected = std::find(want.begin(), want.end(), std::string_view(line)) != want.end();
      EXPECT_EQ(Contains(out, line), expected)
          << line << " (batch_only " << scope.batch_only << ", full " << scope.full << ")\n"
          << out;
    }
  }
}

TEST(SupervisorLimitsTest, ForwardsSignalsToEveryProcess) {
  ScratchDir jobs;
  LaunchSpec spec = Spec(jobs.path());
  spec.script =
      "#!/bin/sh\n"
      "setsid sh -c 'trap \"echo child got USR2; exit 0\" USR2; echo $$ > child.pid; "
      "while :; do sleep 0.1; done' &\n"
      "trap 'echo batch got USR2' USR2\n"
      "echo $$ > batch.pid\n"
      "wait\n"
      "wait\n";
  Result<SupervisorHandle> h = StartSupervisor(BERTH_BINARY, jobs.path(), spec);
  ASSERT_TRUE(h.ok()) << h.status().ToString();
  WaitForPids(jobs.path(), {"child.pid", "batch.pid"});
  ASSERT_TRUE(SignalJob(h->dir, SIGUSR2, {/*batch_only=*/false, /*full=*/true}).ok());
  std::optional<JobResult> r = WaitResult(h->dir, 10);
  ASSERT_TRUE(r.has_value());
  EXPECT_EQ(r->state, "COMPLETED") << r->message;
  std::string out = Slurp(jobs.path() + "/out-" + std::to_string(spec.job_id) + ".txt");
  EXPECT_TRUE(Contains(out, "child got USR2")) << out;
  EXPECT_TRUE(Contains(out, "batch got USR2")) << out;
}

TEST(SupervisorLimitsTest, WithoutCgroupsStillRunsAndSaysWhatItCannotEnforce) {
  ScratchDir jobs;
  LaunchSpec spec = Spec(jobs.path());
  spec.mem_mib = 64;
  spec.script = "#!/bin/sh\necho DATA=$(ulimit -d)\ngrep Cpus_allowed_list /proc/self/status\n";
  setenv("BERTH_SUPERVISE_NO_CGROUPS", "1", 1);
  Result<SupervisorHandle> h = StartSupervisor(BERTH_BINARY, jobs.path(), spec);
  LaunchSpec cancel = Spec(jobs.path());
  cancel.script = kScatteringScript;
  std::string sub = jobs.path() + "/c";
  std::filesystem::create_directory(sub);
  cancel.work_dir = sub;
  Result<SupervisorHandle> hc = StartSupervisor(BERTH_BINARY, jobs.path(), cancel);
  unsetenv("BERTH_SUPERVISE_NO_CGROUPS");
  ASSERT_TRUE(h.ok()) << h.status().ToString();
  ASSERT_TRUE(hc.ok()) << hc.status().ToString();

  std::optional<JobResult> r = WaitResult(h->dir);
  ASSERT_TRUE(r.has_value());
  EXPECT_EQ(r->state, "COMPLETED") << r->message;
  EXPECT_TRUE(Contains(r->message, "RLIMIT_DATA")) << r->message;
  EXPECT_TRUE(Contains(r->message, "process count not limited")) << r->message;
  std::string out = Slurp(jobs.path() + "/out-" + std::to_string(spec.job_id) + ".txt");
  EXPECT_TRUE(Contains(out, "DATA=65536\n")) << out;
  EXPECT_TRUE(Contains(out, "Cpus_allowed_list:\t" + Slurp(h->dir + "/cpus"))) << out;

  // The process tree (the supervisor is a subreaper) stands in for the cgroup's process list.
  std::vector<pid_t> pids = WaitForPids(sub, {"bg.pid", "setsid.pid", "orphan.pid"});
  for (pid_t p : pids) ASSERT_TRUE(Alive(p)) << p;
  ASSERT_TRUE(CancelJob(hc->dir).ok());
  std::optional<JobResult> rc = WaitResult(hc->dir);
  ASSERT_TRUE(rc.has_value());
  EXPECT_EQ(rc->state, "CANCELLED") << rc->message;
  for (pid_t p : pids) EXPECT_FALSE(Alive(p)) << "pid " << p << " survived the cancel";
}

}  // namespace
}  // namespace berth::agent
