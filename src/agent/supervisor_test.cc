// Real jobs through `berth supervise` (BERTH_BINARY): environment, output files, users, exit
// codes, adoption by a new agent. Limits and signals are in supervisor_limits_test.cc.
#include "agent/supervisor.h"

#include <grp.h>
#include <pwd.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <filesystem>

#include "agent/agent_test_util.h"
#include "agent/cgroup_layout.h"
#include "agent/job_cgroup.h"
#include "agent/job_env.h"

namespace berth::agent {
namespace {

using testing::BaseSpec;
using testing::Root;
using testing::ScratchDir;
using testing::Slurp;
using testing::WaitResult;

// Every test job's cgroups go under one parent of this test process; removed at the end.
class CgroupParentEnvironment : public ::testing::Environment {
 public:
  void SetUp() override { setenv("BERTH_CGROUP_PARENT", testing::TestCgroupParent().c_str(), 1); }
  void TearDown() override {
    Result<CgroupLayout> layout = DetectCgroupLayout();
    if (!layout.ok()) return;
    std::string parent = "/" + testing::TestCgroupParent();
    for (const auto& [controller, dir] : layout->v1_dirs) rmdir((dir + parent).c_str());
    if (!layout->unified_dir.empty()) rmdir((layout->unified_dir + parent).c_str());
    if (!layout->unified_root.empty()) rmdir((layout->unified_root + parent).c_str());
  }
};
::testing::Environment* const kCgroupParent =
    ::testing::AddGlobalTestEnvironment(new CgroupParentEnvironment);

std::string UserName(uid_t uid) {
  passwd* pw = getpwuid(uid);
  return pw != nullptr ? pw->pw_name : std::to_string(uid);
}

LaunchSpec SpecAsMe(const std::string& work_dir) {
  LaunchSpec spec = BaseSpec(work_dir);
  spec.uid = getuid();
  spec.gid = getgid();
  spec.user = UserName(getuid());
  return spec;
}

JobResult RunJob(const LaunchSpec& spec, const std::string& jobs_dir, std::string* dir = nullptr) {
  Result<SupervisorHandle> h = StartSupervisor(BERTH_BINARY, jobs_dir, spec);
  EXPECT_TRUE(h.ok()) << h.status().ToString();
  if (!h.ok()) return JobResult{};
  if (dir != nullptr) *dir = h->dir;
  std::optional<JobResult> r = WaitResult(h->dir);
  EXPECT_TRUE(r.has_value()) << "no result in " << h->dir << ": "
                             << Slurp(h->dir + "/supervisor.log");
  return r.value_or(JobResult{});
}

bool Contains(const std::string& text, const std::string& part) {
  return text.find(part) != std::string::npos;
}

// Lines of `env | sort` and of the script that the environment test expects.
std::vector<std::string> ExpectedEnvLines(const LaunchSpec& spec, const std::string& work) {
  std::string id = std::to_string(spec.job_id);
  return {
      "SLURM_JOB_ID=" + id,
      "SLURM_JOBID=" + id,
      "SLURM_JOB_NAME=envtest",
      "SLURM_JOB_USER=" + spec.user,
      "SLURM_JOB_UID=" + std::to_string(getuid()),
      "SLURM_JOB_NODELIST=node[01-02]",
      "SLURM_NNODES=2",
      "SLURM_JOB_CPUS_PER_NODE=1,4",
      "SLURM_TASKS_PER_NODE=1,2",
      "SLURM_NTASKS=3",
      "SLURM_CPUS_ON_NODE=1",
      "SLURM_MEM_PER_NODE=64",
      "SLURM_GPUS_ON_NODE=2",
      "CUDA_VISIBLE_DEVICES=1,3",
      "SLURM_JOB_GPUS=1,3",
      "SLURMD_NODENAME=node01",
      "SLURM_NODEID=0",
      "SLURM_JOB_PARTITION=debug",
      "ENVIRONMENT=BATCH",
      "BERTH_JOB_ID=" + id,
      "BERTH_ATTEMPT=0",
      "FOO=bar baz",
      std::string("PATH=") + kDefaultJobPath,
      "PWD=" + work,
      "ARGS=one two",
  };
}

TEST(SupervisorTest, RunsTheScriptWithSlurmVariablesIntoThePatternFile) {
  ScratchDir jobs;
  ScratchDir work;
  setenv("BERTH_TEST_LEAK", "1", 1);  // the agent's environment must not reach the job
  Result<CgroupLayout> layout = DetectCgroupLayout();
  bool cgroups = Root() && layout.ok() && layout->v1_roots.count("memory");
  LaunchSpec spec = SpecAsMe(work.path());
  spec.name = "envtest";
  spec.node_names = {"node01", "node02"};
  spec.cpus_per_node = {1, 4};
  spec.ntasks = 3;
  spec.gpu_indices = {1, 3};
  spec.mem_mib = 64;
  spec.mem_per_node_mib = 64;
  spec.stdout_pattern = "%x-%j-%u-%N.out";
  // sbatch exports what the job asked for (-n 3, --mem=64M) in the job's environment.
  spec.environment = {{"FOO", "bar baz"},
                      {"SLURM_NTASKS", "3"},
                      {"SLURM_MEM_PER_NODE", "64"},
                      {"MEMROOT", cgroups ? layout->v1_roots.at("memory") : std::string()}};
  spec.script =
      "#!/bin/sh\n"
      "env | sort\n"
      "echo PWD=$(pwd)\n"
      "echo ARGS=$*\n"
      "grep Cpus_allowed_list /proc/self/status\n"
      "m=$(grep ':memory:' /proc/self/cgroup | cut -d: -f3)\n"
      "echo MEMLIMIT=$(cat $MEMROOT$m/memory.limit_in_bytes 2>/dev/null)\n"
      "sed 's/^/CGROUP=/' /proc/self/cgroup\n";
  spec.script_args = {"one", "two"};
  std::string dir;
  JobResult r = RunJob(spec, jobs.path(), &dir);
  unsetenv("BERTH_TEST_LEAK");
  EXPECT_EQ(r.state, "COMPLETED") << r.message;
  EXPECT_EQ(r.exit_code, 0);
  EXPECT_EQ(r.job_id, spec.job_id);
  EXPECT_GE(r.end_time, r.start_time);
  std::string id = std::to_string(spec.job_id);
  std::string out = Slurp(work.path() + "/envtest-" + id + "-" + spec.user + "-node01.out");
  ASSERT_FALSE(out.empty()) << "no output file; supervisor log: " << Slurp(dir + "/supervisor.log");
  for (const std::string& line : ExpectedEnvLines(spec, work.path())) {
    EXPECT_TRUE(Contains(out, line + "\n")) << "missing " << line << " in:\n" << out;
  }
  EXPECT_FALSE(Contains(out, "BERTH_TEST_LEAK"));
  EXPECT_FALSE(Contains(out, "BERTH_CGROUP_PARENT"));
  // The CPU set the supervisor chose is the one the job runs on.
  std::string cpus = Slurp(dir + "/cpus");
  ASSERT_FALSE(cpus.empty());
  EXPECT_TRUE(Contains(out, "Cpus_allowed_list:\t" + cpus)) << out;
  if (cgroups) {
    EXPECT_TRUE(Contains(out, "MEMLIMIT=" + std::to_string(64 << 20) + "\n")) << out;
    std::string group =
        "/" + testing::TestCgroupParent() + "/" + JobCgroupName(spec.job_id, 0, dir);
    // The job ran inside its groups from the start: v1 ones joined through `tasks`, the v2 one
    // by clone3(CLONE_INTO_CGROUP).
    EXPECT_TRUE(Contains(out, ":pids:" + group + "\n")) << out;
    if (!layout->unified_dir.empty()) {
      EXPECT_TRUE(Contains(out, "CGROUP=0::" + group + "\n")) << out;
    }
    // The attempt's groups are gone once the supervisor has exited.
    for (const auto& [controller, cdir] : layout->v1_dirs) {
      EXPECT_FALSE(std::filesystem::exists(cdir + group)) << cdir + group;
    }
    if (!layout->unified_dir.empty()) {
      EXPECT_FALSE(std::filesystem::exists(layout->unified_dir + group));
    }
  }
}

TEST(SupervisorTest, RunsAsTheSubmittingUserAndCannotWriteWhereTheUserMayNot) {
  if (!Root()) GTEST_SKIP() << "needs root to create a user and switch to it";
  testing::TestUser user;
  if (!user.ok()) GTEST_SKIP() << "useradd/groupadd failed";
  passwd* pw = getpwnam(user.name().c_str());
  group* gr = getgrnam(user.group().c_str());
  ASSERT_NE(pw, nullptr);
  ASSERT_NE(gr, nullptr);
  uid_t uid = pw->pw_uid;
  gid_t gid = pw->pw_gid;
  gid_t extra = gr->gr_gid;
  std::string home = pw->pw_dir;
  ScratchDir jobs;
  std::string work = jobs.path() + "/work";
  std::string root_only = jobs.path() + "/rootonly";
  ASSERT_EQ(mkdir(work.c_str(), 0755), 0);
  ASSERT_EQ(chown(work.c_str(), uid, gid), 0);
  ASSERT_EQ(mkdir(root_only.c_str(), 0700), 0);

  LaunchSpec spec = BaseSpec(work);
  spec.user = user.name();
  spec.uid = uid;
  spec.gid = gid;
  spec.stdout_pattern = "out-%u.txt";
  spec.script =
      "#!/bin/sh\necho UID=$(id -u) GID=$(id -g)\necho GROUPS=$(id -G)\n"
      "echo USER=$USER HOME=$HOME LOGNAME=$LOGNAME\n"
      "touch " +
      root_only + "/x 2>/dev/null; echo TOUCH=$?\n";
  JobResult r = RunJob(spec, jobs.path());
  EXPECT_EQ(r.state, "COMPLETED") << r.message;
  std::string out_path = work + "/out-" + user.name() + ".txt";
  std::string out = Slurp(out_path);
  EXPECT_TRUE(Contains(out, "UID=" + std::to_string(uid) + " GID=" + std::to_string(gid))) << out;
  EXPECT_TRUE(Contains(out, " " + std::to_string(extra))) << "supplementary group missing: " << out;
  EXPECT_TRUE(Contains(out, "USER=" + user.name() + " HOME=" + home + " LOGNAME=" + user.name()))
      << out;
  EXPECT_TRUE(Contains(out, "TOUCH=1")) << out;
  struct stat st {};
  ASSERT_EQ(stat(out_path.c_str(), &st), 0);
  EXPECT_EQ(st.st_uid, uid) << "the output file is created by the user, not by root";

  // The output file itself lies where the user may not write: the attempt fails, cleanly.
  LaunchSpec bad = spec;
  bad.job_id = testing::NextJobId();
  bad.stdout_pattern = root_only + "/out-%j.txt";
  JobResult rb = RunJob(bad, jobs.path());
  EXPECT_EQ(rb.state, "FAILED");
  EXPECT_TRUE(Contains(rb.message, "could not open stdout file " + root_only)) << rb.message;
  EXPECT_TRUE(Contains(rb.message, "Permission denied")) << rb.message;
  EXPECT_FALSE(std::filesystem::exists(root_only + "/out-" + std::to_string(bad.job_id) + ".txt"));
}

TEST(SupervisorTest, MissingWorkDirRunsInTmpWithAWarning) {
  ScratchDir jobs;
  LaunchSpec spec = SpecAsMe("/nonexistent-berth-work-dir");
  spec.stdout_pattern = jobs.path() + "/out.txt";  // absolute: still opens
  spec.script = "#!/bin/sh\necho PWD=$(pwd)\n";
  JobResult r = RunJob(spec, jobs.path());
  EXPECT_EQ(r.state, "COMPLETED") << r.message;
  EXPECT_TRUE(Contains(r.message, "went to /tmp")) << r.message;
  std::string out = Slurp(jobs.path() + "/out.txt");
  EXPECT_TRUE(Contains(out, "couldn't chdir to `/nonexistent-berth-work-dir'")) << out;
  EXPECT_TRUE(Contains(out, "PWD=/tmp\n")) << out;
}

TEST(SupervisorTest, ReportsExitCodesAndSignals) {
  ScratchDir jobs;
  LaunchSpec spec = SpecAsMe(jobs.path());
  spec.stdout_pattern = "/dev/null";
  spec.script = "exit 3\n";  // no #!: run with /bin/sh
  JobResult r = RunJob(spec, jobs.path());
  EXPECT_EQ(r.state, "FAILED");
  EXPECT_EQ(r.exit_code, 3);
  EXPECT_EQ(r.term_signal, 0);

  spec.job_id = testing::NextJobId();
  spec.script.clear();
  spec.argv = {"/bin/sh", "-c", "kill -TERM $$"};
  r = RunJob(spec, jobs.path());
  EXPECT_EQ(r.state, "FAILED");
  EXPECT_EQ(r.exit_code, 0);
  EXPECT_EQ(r.term_signal, SIGTERM);

  spec.job_id = testing::NextJobId();
  spec.argv = {"true"};  // found on the job's PATH
  r = RunJob(spec, jobs.path());
  EXPECT_EQ(r.state, "COMPLETED") << r.message;

  spec.job_id = testing::NextJobId();
  spec.argv = {"/nonexistent/program"};
  r = RunJob(spec, jobs.path());
  EXPECT_EQ(r.state, "FAILED");
  EXPECT_EQ(r.exit_code, 127);
  EXPECT_TRUE(Contains(r.message, "execve(/nonexistent/program)")) << r.message;
}

TEST(SupervisorTest, UnknownUserIsANodeFailure) {
  if (!Root()) GTEST_SKIP() << "as non-root, jobs run as the calling user";
  ScratchDir jobs;
  LaunchSpec spec = BaseSpec(jobs.path());
  spec.user = "";
  spec.uid = 3999999;
  spec.script = "#!/bin/sh\ntrue\n";
  JobResult r = RunJob(spec, jobs.path());
  EXPECT_EQ(r.state, "NODE_FAIL");
  EXPECT_TRUE(Contains(r.message, "no passwd entry")) << r.message;
}

TEST(SupervisorTest, OutlivesItsAgentAndANewAgentAdoptsIt) {
  ScratchDir jobs;
  LaunchSpec spec = SpecAsMe(jobs.path());
  spec.stdout_pattern = "adopted.out";
  spec.script = "#!/bin/sh\nsleep 1\necho done\n";
  pid_t agent = fork();
  ASSERT_GE(agent, 0);
  if (agent == 0) {
    Result<SupervisorHandle> h = StartSupervisor(BERTH_BINARY, jobs.path(), spec);
    _exit(h.ok() ? 0 : 1);  // the agent dies while the job runs
  }
  int status = 0;
  ASSERT_EQ(waitpid(agent, &status, 0), agent);
  ASSERT_TRUE(WIFEXITED(status) && WEXITSTATUS(status) == 0);
  std::vector<std::string> dirs = ListJobDirs(jobs.path());
  ASSERT_EQ(dirs.size(), 1u);
  EXPECT_TRUE(SupervisorRunning(dirs[0]));
  EXPECT_FALSE(ReadResult(dirs[0]).has_value());
  Result<LaunchSpec> read = ReadSpec(dirs[0]);
  ASSERT_TRUE(read.ok()) << read.status().ToString();
  EXPECT_EQ(read->job_id, spec.job_id);
  // The folder's name alone says which attempt it is.
  EXPECT_EQ(JobDirKey(dirs[0]), std::make_pair(spec.job_id, spec.attempt));
  EXPECT_EQ(RemoveJobDir(dirs[0]).code(), StatusCode::kFailedPrecondition);
  std::optional<JobResult> r = WaitResult(dirs[0]);
  ASSERT_TRUE(r.has_value());
  EXPECT_EQ(r->state, "COMPLETED") << r->message;
  EXPECT_EQ(Slurp(jobs.path() + "/adopted.out"), "done\n");
  // Requests to an ended job are no-ops.
  EXPECT_TRUE(CancelJob(dirs[0]).ok());
  EXPECT_TRUE(SignalJob(dirs[0], SIGUSR1, {}).ok());
  EXPECT_TRUE(RemoveJobDir(dirs[0]).ok());
  EXPECT_TRUE(ListJobDirs(jobs.path()).empty());
}

TEST(SupervisorTest, JobDirKeyReadsOnlyTheNamesTheAgentMakes) {
  EXPECT_EQ(JobDirKey("/var/lib/berth/jobs/42.3"), std::make_pair(42u, 3));
  EXPECT_EQ(JobDirKey("7.0"), std::make_pair(7u, 0));
  for (const char* bad : {"/jobs/42", "/jobs/.cpus.lock", "/jobs/42.", "/jobs/.3", "/jobs/4x.1",
                          "/jobs/4.1x", "/jobs/4.-1", "/jobs/99999999999.0"}) {
    EXPECT_FALSE(JobDirKey(bad).has_value()) << bad;
  }
}

TEST(SupervisorTest, AnEmptyCommandLineIsAnExecUnderWayNotAnotherProcess) {
  const std::string dir = "/var/lib/berth/jobs/42.3";
  const std::string running = "4242 (berth) S 1 4242 4242 0 -1";
  using std::string_literals::operator""s;
  EXPECT_EQ(ClassifySupervisorProcess(running,
                                      "/usr/bin/berth\0supervise\0/var/lib/berth/jobs/42.3"s, dir),
            SupervisorProcess::kSupervisor);
  // Between the exec's closing of the agent's pipe and the new program's arguments.
  EXPECT_EQ(ClassifySupervisorProcess(running, "", dir), SupervisorProcess::kExecuting);
  EXPECT_EQ(ClassifySupervisorProcess(running, "/usr/bin/berth\0supervise\0/jobs/7.0"s, dir),
            SupervisorProcess::kOther);
  EXPECT_EQ(ClassifySupervisorProcess(running, "/bin/sleep\0100"s, dir), SupervisorProcess::kOther);
  EXPECT_EQ(ClassifySupervisorProcess("4242 (berth) Z 1 4242 4242 0 -1",
                                      "/usr/bin/berth\0supervise\0/var/lib/berth/jobs/42.3"s, dir),
            SupervisorProcess::kOther);
  EXPECT_EQ(ClassifySupervisorProcess("4242 (berth) Z 1 4242 4242 0 -1", "", dir),
            SupervisorProcess::kOther);
  EXPECT_EQ(ClassifySupervisorProcess("garbage", "", dir), SupervisorProcess::kOther);
}

TEST(SupervisorTest, StepDirKeyReadsOnlyStepFolderNames) {
  StepDirKey k{42, 3, 7};
  EXPECT_EQ(k.Name(), "42.3.7");
  EXPECT_EQ(StepDirKey::Of("/var/lib/berth/jobs/42.3.7"), std::make_optional(k));
  EXPECT_EQ(JobDirKey("/jobs/42.3.7"), std::nullopt);  // never taken for an attempt's folder
  for (const char* bad : {"/jobs/42.3", "/jobs/.cpus.lock", "/jobs/42.3.", "/jobs/.3.1",
                          "/jobs/4..1", "/jobs/4.-1.2", "/jobs/4.1.2x", "/jobs/4.1.99999999999"}) {
    EXPECT_FALSE(StepDirKey::Of(bad).has_value()) << bad;
  }
}

TEST(SupervisorTest, StartingTheSameAttemptTwiceIsRefused) {
  ScratchDir jobs;
  LaunchSpec spec = SpecAsMe(jobs.path());
  spec.stdout_pattern = "/dev/null";
  spec.script = "#!/bin/sh\ntrue\n";
  Result<SupervisorHandle> h = StartSupervisor(BERTH_BINARY, jobs.path(), spec);
  ASSERT_TRUE(h.ok()) << h.status().ToString();
  EXPECT_EQ(StartSupervisor(BERTH_BINARY, jobs.path(), spec).status().code(),
            StatusCode::kAlreadyExists);
  EXPECT_TRUE(WaitResult(h->dir).has_value());
  EXPECT_FALSE(StartSupervisor("/nonexistent/berth", jobs.path(), BaseSpec(jobs.path())).ok());
}

}  // namespace
}  // namespace berth::agent
