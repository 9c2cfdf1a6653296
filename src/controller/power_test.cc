// The power-saving component on its own: a real cluster state, the real scheduler's placement on
// powered-down nodes, and real ResumeProgram/SuspendProgram scripts (ProgramProvider) that log
// their hostlist argument to a file.
#include "controller/power.h"

#include <gtest/gtest.h>
#include <stdlib.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <sstream>
#include <thread>

#include "core/sched/scheduler.h"
#include "core/testing/builders.h"

namespace berth::controller {
namespace {

using core::testing::MakeCluster;
using core::testing::MakeJob;

core::NodeSpec Cloud(const std::string& name, int cpus) {
  core::NodeSpec n;
  n.name = name;
  n.cpus = cpus;
  n.mem_mib = 64000;
  n.cloud = true;
  return n;
}

class PowerSaverTest : public ::testing::Test {
 protected:
  void SetUp() override {
    char tmpl[] = "/tmp/power_test.XXXXXX";
    dir_ = mkdtemp(tmpl);
    settings_.resume_program = Script("resume");
    settings_.suspend_program = Script("suspend");
    settings_.resume_fail_program = Script("resume_fail");
    settings_.resume_timeout = 60;
    settings_.suspend_time = 300;
    settings_.suspend_timeout = 30;
  }
  // The programs the tests ran end before their folder goes. Only they are waited for: other
  // tests of this binary may keep children of their own (the shared PostgreSQL and etcd).
  void TearDown() override {
    const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(30);
    while (RunningFromFolder() && std::chrono::steady_clock::now() < deadline) {
      while (waitpid(-1, nullptr, WNOHANG) > 0) {
      }
      std::this_thread::sleep_for(std::chrono::milliseconds(10));
    }
    while (waitpid(-1, nullptr, WNOHANG) > 0) {
    }
    std::filesystem::remove_all(dir_);
  }
  // Whether a live process runs one of this test's programs: its command line names the folder,
  // or it is a child of this process with no command line yet (posix_spawn returns once the
  // child execs, a moment before the kernel has set its arguments up). A zombie has none either.
  bool RunningFromFolder() const {
    for (const auto& e : std::filesystem::directory_iterator("/proc")) {
      const std::string name = e.path().filename().string();
      if (name.find_first_not_of("0123456789") != std::string::npos) continue;  // not a process
      const std::string cmdline = ReadProcFile(e.path() / "cmdline");
      if (cmdline.find(dir_) != std::string::npos) return true;
      if (!cmdline.empty()) continue;
      // "PID (COMM) STATE PPID ...": COMM may hold anything, so read from its last ')'.
      const std::string stat = ReadProcFile(e.path() / "stat");
      const size_t paren = stat.rfind(')');
      if (paren == std::string::npos) continue;
      char state = 0;
      long ppid = 0;
      if (std::sscanf(stat.c_str() + paren + 1, " %c %ld", &state, &ppid) == 2 &&
          ppid == getpid() && state != 'Z' && state != 'X') {
        return true;
      }
    }
    return false;
  }
  // A /proc file's text, "" when the process is gone: a process that ends meanwhile fails the
  // read (ESRCH), which std::ifstream would throw; stdio's errors are only a short read.
  static std::string ReadProcFile(const std::filesystem::path& path) {
    std::string text;
    std::FILE* f = std::fopen(path.c_str(), "re");
    if (f == nullptr) return text;
    char buf[4096];
    size_t n;
    while ((n = std::fread(buf, 1, sizeof(buf), f)) > 0) text.append(buf, n);
    std::fclose(f);
    return text;
  }

  // A program that appends its argument to DIR/NAME.log.
  std::string Script(const std::string& name) {
    const std::string path = dir_ + "/" + name + ".sh";
    std::ofstream(path) << "#!/bin/sh\necho \"$1\" >> " << dir_ << "/" << name << ".log\n";
    chmod(path.c_str(), 0755);
    return path;
  }
  // What the program NAME was run with, one line per run, once its runs have ended.
  std::string Log(const std::string& name, size_t runs) {
    std::string text;
    for (int i = 0; i < 200; ++i) {
      std::ifstream f(dir_ + "/" + name + ".log");
      std::stringstream s;
      s << f.rdbuf();
      text = s.str();
      if (static_cast<size_t>(std::count(text.begin(), text.end(), '\n')) >= runs) break;
      std::this_thread::sleep_for(std::chrono::milliseconds(10));
    }
    return text;
  }

  // One node up, two cloud nodes powered down.
  core::ClusterState Cluster() {
    return MakeCluster()
        .Nodes("up", 1, 4, 64000)
        .Node(Cloud("cloud01", 8))
        .Node(Cloud("cloud02", 8))
        .Build();
  }
  // Schedules and applies one pass, telling the saver of the jobs that wait for their nodes.
  void Pass(core::ClusterState& cs, PowerSaver& saver, Time now) {
    core::Plan plan = core::Schedule(cs, now, core::SchedulerConfig::Multifactor());
    core::ApplyResult applied = cs.Apply(plan, now);
    for (core::JobId id : applied.start_ids) {
      const core::Job* j = cs.FindJob(id);
      if (j != nullptr && j->state == core::JobState::kConfiguring) saver.JobConfiguring(id);
    }
  }

  std::string dir_;
  config::PowerSaving settings_;
  MetricsCounters metrics_;
};

TEST_F(PowerSaverTest, OffDoesNothingAndSaysSo) {
  PowerSaver saver(config::PowerSaving{}, &metrics_);
  core::ClusterState cs = Cluster();
  ASSERT_TRUE(saver.Start(cs, {}, 0).ok());
  EXPECT_FALSE(saver.enabled());
  PowerSaver::Effects e;
  saver.Tick(cs, 10, true, &e);
  EXPECT_TRUE(e.events.empty());
  EXPECT_FALSE(e.nodes_changed);
  EXPECT_EQ(saver.View()["enabled"], false);
}

TEST_F(PowerSaverTest, LocalAndAProgramMayNotBeMixed) {
  settings_.resume_program = "local";
  PowerSaver saver(settings_, &metrics_);
  core::ClusterState cs = Cluster();
  Status st = saver.Start(cs, {}, 0);
  EXPECT_EQ(st.code(), StatusCode::kInvalidArgument);
  EXPECT_NE(st.message().find("both be 'local'"), std::string::npos);
}

TEST_F(PowerSaverTest, ResumesWokenNodesAndLaunchesTheJobOnceTheyAreUp) {
  PowerSaver saver(settings_, &metrics_);
  core::ClusterState cs = Cluster();
  ASSERT_TRUE(saver.Start(cs, {}, 0).ok());
  core::JobId big = *cs.Submit(MakeJob().CpusPerTask(8).Mem(2000).Obj(), nullptr, 0);
  Pass(cs, saver, 10);
  ASSERT_EQ(cs.FindJob(big)->state, core::JobState::kConfiguring);
  const uint32_t node = cs.FindJob(big)->alloc.nodes[0].node;
  const std::string name = cs.node(node).spec.name;

  PowerSaver::Effects e;
  saver.Tick(cs, 10, false, &e);
  EXPECT_EQ(Log("resume", 1), name + "\n");
  ASSERT_EQ(e.events.size(), 1u);
  nlohmann::json ev = nlohmann::json::parse(e.events[0]);
  EXPECT_EQ(ev["power"]["action"], "resume");
  EXPECT_EQ(ev["power"]["reason"],
            "for job " + std::to_string(big) + " needs 1 node, 8 CPUs, 2000M");
  EXPECT_TRUE(e.launches.empty());
  EXPECT_EQ(metrics_.power_resumes.load(), 1u);

  // Asked once: a later tick in the same state does not ask again.
  PowerSaver::Effects again;
  saver.Tick(cs, 11, false, &again);
  EXPECT_TRUE(again.events.empty());

  // The node's agent registers: the job starts, and "up" is reported with the boot time.
  ASSERT_TRUE(cs.SetNodeHealth(node, core::NodeHealth::kUp, "", 40).ok());
  PowerSaver::Effects up;
  saver.Tick(cs, 40, true, &up);
  EXPECT_EQ(up.launches, std::vector<core::JobId>{big});
  EXPECT_EQ(up.touched, std::vector<core::JobId>{big});
  EXPECT_EQ(cs.FindJob(big)->state, core::JobState::kRunning);
  ASSERT_EQ(up.events.size(), 1u);
  EXPECT_EQ(nlohmann::json::parse(up.events[0])["power"]["reason"],
            "registered 30 s after its resume");
  EXPECT_EQ(saver.View()["events"].size(), 2u);
}

TEST_F(PowerSaverTest, AResumePastItsTimeoutGoesDownAndRequeuesTheJob) {
  PowerSaver saver(settings_, &metrics_);
  core::ClusterState cs = Cluster();
  ASSERT_TRUE(saver.Start(cs, {}, 0).ok());
  core::JobId big = *cs.Submit(MakeJob().CpusPerTask(8).Obj(), nullptr, 0);
  Pass(cs, saver, 10);
  const uint32_t node = cs.FindJob(big)->alloc.nodes[0].node;
  PowerSaver::Effects e;
  saver.Tick(cs, 10, false, &e);
  PowerSaver::Effects late;
  saver.Tick(cs, 71, false, &late);  // 61 s > ResumeTimeout
  EXPECT_EQ(cs.node(node).health, core::NodeHealth::kDown);
  EXPECT_EQ(cs.FindJob(big)->state, core::JobState::kPending);
  ASSERT_EQ(late.messages.size(), 1u);
  EXPECT_EQ(late.messages[0].first, big);
  EXPECT_NE(late.messages[0].second.find("did not resume within ResumeTimeout (60 s)"),
            std::string::npos);
  EXPECT_TRUE(late.reschedule);
  EXPECT_EQ(metrics_.resume_timeouts.load(), 1u);
  EXPECT_EQ(Log("resume_fail", 1), cs.node(node).spec.name + "\n");
  nlohmann::json ev = nlohmann::json::parse(late.events.back());
  EXPECT_EQ(ev["power"]["action"], "resume_timeout");
  EXPECT_NE(ev["power"]["reason"].get<std::string>().find("requeued job " + std::to_string(big)),
            std::string::npos);
}

TEST_F(PowerSaverTest, IdleNodesAreSuspendedWithinTheRateAndPoweredDownAfterTheTimeout) {
  settings_.suspend_rate = 1;
  PowerSaver saver(settings_, &metrics_);
  core::ClusterState cs = MakeCluster().Nodes("n", 2, 4, 64000).Build();
  ASSERT_TRUE(saver.Start(cs, {}, 0).ok());
  PowerSaver::Effects early;
  saver.Tick(cs, 100, false, &early);  // idle for less than SuspendTime
  EXPECT_TRUE(early.disconnected.empty());

  PowerSaver::Effects e;
  saver.Tick(cs, 400, false, &e);
  ASSERT_EQ(e.disconnected.size(), 1u);  // SuspendRate=1 per minute
  EXPECT_EQ(Log("suspend", 1), e.disconnected[0] + "\n");
  const uint32_t first = *cs.FindNode(e.disconnected[0]);
  EXPECT_EQ(cs.node(first).health, core::NodeHealth::kPoweringDown);
  EXPECT_EQ(metrics_.power_suspends.load(), 1u);

  PowerSaver::Effects same_minute;
  saver.Tick(cs, 420, false, &same_minute);
  EXPECT_TRUE(same_minute.disconnected.empty());
  EXPECT_EQ(cs.node(first).health, core::NodeHealth::kPoweringDown);

  PowerSaver::Effects later;
  saver.Tick(cs, 461, false, &later);  // past SuspendTimeout, and a new minute for the rate
  EXPECT_EQ(cs.node(first).health, core::NodeHealth::kPoweredDown);
  EXPECT_EQ(later.disconnected.size(), 1u);
  EXPECT_NE(later.disconnected[0], e.disconnected[0]);
}

TEST_F(PowerSaverTest, TicksWithinASecondScanOnlyWhenSomethingChanged) {
  PowerSaver saver(settings_, &metrics_);
  core::ClusterState cs = Cluster();
  ASSERT_TRUE(saver.Start(cs, {}, 0).ok());
  PowerSaver::Effects first;
  saver.Tick(cs, 10, false, &first);
  // A job placed in the same second wakes the saver: its node is resumed at once.
  core::JobId big = *cs.Submit(MakeJob().CpusPerTask(8).Obj(), nullptr, 10);
  Pass(cs, saver, 10);
  PowerSaver::Effects e;
  saver.Tick(cs, 10, false, &e);
  ASSERT_EQ(e.events.size(), 1u) << "job " << big << " waits for its node";
  // Nothing changed, same second: no scan (the resume is not asked twice, nor anything else).
  PowerSaver::Effects idle;
  saver.Tick(cs, 10, false, &idle);
  EXPECT_TRUE(idle.events.empty());
}

TEST_F(PowerSaverTest, RestoredNodesHoldingJobsArePoweredUpAgain) {
  core::ClusterState cs = Cluster();
  cs.SetPowerSaving(true);
  core::JobId big = *cs.Submit(MakeJob().CpusPerTask(8).Obj(), nullptr, 0);
  core::Plan plan = core::Schedule(cs, 5, core::SchedulerConfig::Multifactor());
  cs.Apply(plan, 5);
  const uint32_t node = cs.FindJob(big)->alloc.nodes[0].node;
  // As a restart finds it: the job waits CONFIGURING on a node recorded powered down.
  ASSERT_TRUE(cs.SetNodeHealth(node, core::NodeHealth::kPoweredDown, "", 6).ok());
  PowerSaver saver(settings_, &metrics_);
  PowerSaver::StartContext ctx;
  ctx.configuring = {big};
  ASSERT_TRUE(saver.Start(cs, std::move(ctx), 7).ok());
  EXPECT_EQ(cs.node(node).health, core::NodeHealth::kPoweringUp);
  PowerSaver::Effects e;
  saver.Tick(cs, 7, false, &e);
  EXPECT_EQ(Log("resume", 1), cs.node(node).spec.name + "\n");
  ASSERT_TRUE(cs.SetNodeHealth(node, core::NodeHealth::kUp, "", 20).ok());
  PowerSaver::Effects up;
  saver.Tick(cs, 20, true, &up);
  EXPECT_EQ(up.launches, std::vector<core::JobId>{big});
}

TEST(JobsNeedingTest, NamesEachJobsSizeOrSaysNoneWaits) {
  core::NodeSpec g;
  g.name = "g01";
  g.cpus = 16;
  g.mem_mib = 64000;
  g.gpus.assign(4, "h100");
  core::ClusterState cs = MakeCluster().Node(g).Build();
  EXPECT_EQ(JobsNeeding(cs, {0}), "no job waits for them any more");
  core::JobId id = *cs.Submit(MakeJob().CpusPerTask(4).Gpus(2).Mem(1000).Obj(), nullptr, 0);
  cs.Apply(core::Schedule(cs, 1, core::SchedulerConfig::Multifactor()), 1);
  EXPECT_EQ(JobsNeeding(cs, {0}),
            "for job " + std::to_string(id) + " needs 1 node, 4 CPUs, 2 h100 GPUs, 1000M");
}

}  // namespace
}  // namespace berth::controller
