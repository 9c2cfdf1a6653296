// Helpers for the agent's tests that run real jobs through `berth supervise` (BERTH_BINARY):
// a scratch jobs folder, unique job ids, waiting for results, a throw-away Unix user.
#ifndef BERTH_AGENT_AGENT_TEST_UTIL_H_
#define BERTH_AGENT_AGENT_TEST_UTIL_H_

#include <gtest/gtest.h>
#include <sys/stat.h>
#include <unistd.h>

#include <chrono>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <optional>
#include <sstream>
#include <string>
#include <thread>

#include "agent/cgroup_layout.h"
#include "agent/launch.h"
#include "agent/supervisor.h"

namespace berth::agent::testing {

// The cgroup parent of the test jobs: one per test process, so that concurrent test runs (and
// a real agent on the same host) do not see each other's jobs.
inline std::string TestCgroupParent() {
  return "berth-test-" + std::to_string(getpid());
}

inline bool Root() {
  return geteuid() == 0;
}

inline bool HaveCgroups() {
  Result<CgroupLayout> layout = DetectCgroupLayout();
  return layout.ok() && layout->mode != CgroupMode::kNone;
}

#define BERTH_REQUIRE_ROOT_AND_CGROUPS()                                                  \
  do {                                                                                    \
    if (!::berth::agent::testing::Root()) GTEST_SKIP() << "needs root (setuid, cgroups)"; \
    if (!::berth::agent::testing::HaveCgroups())                                          \
      GTEST_SKIP() << "no usable cgroup hierarchy on this host";                          \
  } while (false)

// A fresh folder for job folders, searchable by other users (a job's user reaches its script).
class ScratchDir {
 public:
  ScratchDir() {
    char tmpl[] = "/tmp/berth-agent-test-XXXXXX";
    path_ = mkdtemp(tmpl);
    chmod(path_.c_str(), 0711);
  }
  ~ScratchDir() {
    std::error_code ec;
    std::filesystem::remove_all(path_, ec);
  }
  const std::string& path() const { return path_; }

 private:
  std::string path_;
};

// Job ids unique across test processes running at once.
inline uint32_t NextJobId() {
  static uint32_t counter = 0;
  return static_cast<uint32_t>(getpid() % 100000) * 1000 + ++counter;
}

inline LaunchSpec BaseSpec(const std::string& work_dir) {
  LaunchSpec spec;
  spec.job_id = NextJobId();
  spec.name = "test";
  spec.user = "root";
  spec.partition = "debug";
  spec.work_dir = work_dir;
  spec.node_names = {"node01"};
  spec.cpus_per_node = {1};
  spec.kill_wait = 1;
  return spec;
}

// The result once the supervisor has written it and exited (so its cgroups are gone).
inline std::optional<JobResult> WaitResult(const std::string& dir, double timeout_s = 20) {
  auto deadline = std::chrono::steady_clock::now() +
                  std::chrono::milliseconds(static_cast<int64_t>(timeout_s * 1000));
  while (std::chrono::steady_clock::now() < deadline) {
    std::optional<JobResult> r = ReadResult(dir);
    if (r && !SupervisorRunning(dir)) return r;
    std::this_thread::sleep_for(std::chrono::milliseconds(10));
  }
  return std::nullopt;
}

inline std::string Slurp(const std::string& path) {
  std::ifstream in(path);
  std::stringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

inline bool Alive(pid_t pid) {
  std::string stat = Slurp("/proc/" + std::to_string(pid) + "/stat");
  if (stat.empty()) return false;
  size_t close = stat.rfind(')');
  return close != std::string::npos && close + 2 < stat.size() && stat[close + 2] != 'Z';
}

// A Unix user (and a group it belongs to besides its own) made for one test and removed after.
class TestUser {
 public:
  TestUser() {
    name_ = "berthtest" + std::to_string(getpid());
    group_ = "berthtg" + std::to_string(getpid());
    ok_ =
        std::system(("groupadd " + group_ + " 2>/dev/null").c_str()) == 0 &&
        std::system(
            ("useradd -M -N -s /bin/sh -G " + group_ + " " + name_ + " 2>/dev/null").c_str()) == 0;
  }
  ~TestUser() {
    std::system(("userdel " + name_ + " 2>/dev/null").c_str());
    std::system(("groupdel " + group_ + " 2>/dev/null").c_str());
  }
  bool ok() const { return ok_; }
  const std::string& name() const { return name_; }
  const std::string& group() const { return group_; }

 private:
  std::string name_;
  std::string group_;
  bool ok_ = false;
};

}  // namespace berth::agent::testing

#endif  // BERTH_AGENT_AGENT_TEST_UTIL_H_
