#include "agent/job_env.h"

#include <gtest/gtest.h>

#include <map>

namespace berth::agent {
namespace {

std::map<std::string, std::string> AsMap(const std::vector<std::string>& env) {
  std::map<std::string, std::string> m;
  for (const std::string& kv : env) {
    size_t eq = kv.find('=');
    EXPECT_NE(eq, std::string::npos) << kv;
    EXPECT_EQ(m.count(kv.substr(0, eq)), 0u) << "duplicate " << kv;
    m[kv.substr(0, eq)] = kv.substr(eq + 1);
  }
  return m;
}

JobUser Alice() {
  return JobUser{"alice", 1001, 1002, "/home/alice", "/bin/bash"};
}

TEST(JobEnvTest, CompressCounts) {
  EXPECT_EQ(CompressCounts({4, 4, 2}), "4(x2),2");
  EXPECT_EQ(CompressCounts({2}), "2");
  EXPECT_EQ(CompressCounts({1, 1, 1, 1}), "1(x4)");
  EXPECT_EQ(CompressCounts({1, 2, 1}), "1,2,1");
  EXPECT_EQ(CompressCounts({}), "");
}

TEST(JobEnvTest, TasksPerNodeFollowsSlurmsBlockLayout) {
  LaunchSpec s;
  s.node_names = {"a", "b"};
  s.cpus_per_node = {4, 4};
  s.ntasks = 5;
  EXPECT_EQ(TasksPerNode(s), (std::vector<int32_t>{4, 1}));
  s.ntasks = 2;
  EXPECT_EQ(TasksPerNode(s), (std::vector<int32_t>{1, 1}));
  s.ntasks = 8;
  s.cpus_per_task = 2;
  // Capacity 2 per node, 4 left over: round-robin (overcommit).
  EXPECT_EQ(TasksPerNode(s), (std::vector<int32_t>{4, 4}));
  s.tasks_per_node = {3, 5};
  EXPECT_EQ(TasksPerNode(s), (std::vector<int32_t>{3, 5}));
  LaunchSpec one;
  one.ntasks = 3;
  EXPECT_EQ(TasksPerNode(one), (std::vector<int32_t>{3}));
}

TEST(JobEnvTest, SlurmVariables) {
  LaunchSpec s;
  s.job_id = 42;
  s.name = "train";
  s.account = "ml";
  s.partition = "gpu";
  s.qos = "normal";
  s.cluster_name = "c1";
  s.node_names = {"gpu01", "gpu02", "gpu03"};
  s.cpus_per_node = {8, 8, 4};
  s.node_index = 1;
  s.cpus = 8;
  s.ntasks = 3;
  s.cpus_per_task = 4;
  s.mem_per_node_mib = 16000;
  s.gpu_indices = {1, 3};
  s.submit_dir = "/home/alice/run";
  s.submit_host = "login1";
  s.time_limit = 600;
  s.environment = {
      {"FOO", "bar"}, {"PATH", "/opt/x/bin:/usr/bin"}, {"SLURM_JOB_ID", "999"}, {"BAD=NAME", "x"}};
  auto env = AsMap(BuildJobEnvironment(s, Alice(), "gpu02", 1000));
  EXPECT_EQ(env["HOME"], "/home/alice");
  EXPECT_EQ(env["USER"], "alice");
  EXPECT_EQ(env["LOGNAME"], "alice");
  EXPECT_EQ(env["SHELL"], "/bin/bash");
  EXPECT_EQ(env["PATH"], "/opt/x/bin:/usr/bin");  // exported PATH wins over the default
  EXPECT_EQ(env["FOO"], "bar");
  EXPECT_EQ(env.count("BAD=NAME"), 0u);
  EXPECT_EQ(env.count("BAD"), 0u);
  EXPECT_EQ(env["SLURM_JOB_ID"], "42");  // the job's own values win over exported ones
  EXPECT_EQ(env["SLURM_JOBID"], "42");
  EXPECT_EQ(env["SLURM_JOB_NAME"], "train");
  EXPECT_EQ(env["SLURM_JOB_USER"], "alice");
  EXPECT_EQ(env["SLURM_JOB_UID"], "1001");
  EXPECT_EQ(env["SLURM_JOB_GID"], "1002");
  EXPECT_EQ(env["SLURM_JOB_ACCOUNT"], "ml");
  EXPECT_EQ(env["SLURM_JOB_PARTITION"], "gpu");
  EXPECT_EQ(env["SLURM_JOB_QOS"], "normal");
  EXPECT_EQ(env["SLURM_CLUSTER_NAME"], "c1");
  EXPECT_EQ(env["SLURM_JOB_NODELIST"], "gpu[01-03]");
  EXPECT_EQ(env["SLURM_NODELIST"], "gpu[01-03]");
  EXPECT_EQ(env["SLURM_JOB_NUM_NODES"], "3");
  EXPECT_EQ(env["SLURM_NNODES"], "3");
  EXPECT_EQ(env["SLURM_NTASKS"], "3");
  EXPECT_EQ(env["SLURM_NPROCS"], "3");
  EXPECT_EQ(env["SLURM_CPUS_PER_TASK"], "4");
  EXPECT_EQ(env["SLURM_CPUS_ON_NODE"], "8");
  EXPECT_EQ(env["SLURM_JOB_CPUS_PER_NODE"], "8(x2),4");
  EXPECT_EQ(env["SLURM_TASKS_PER_NODE"], "1(x3)");
  EXPECT_EQ(env["SLURM_MEM_PER_NODE"], "16000");
  EXPECT_EQ(env.count("SLURM_MEM_PER_CPU"), 0u);
  EXPECT_EQ(env["SLURM_GPUS_ON_NODE"], "2");
  EXPECT_EQ(env["SLURM_JOB_GPUS"], "1,3");
  EXPECT_EQ(env["CUDA_VISIBLE_DEVICES"], "1,3");
  EXPECT_EQ(env["GPU_DEVICE_ORDINAL"], "1,3");
  EXPECT_EQ(env["SLURM_SUBMIT_DIR"], "/home/alice/run");
  EXPECT_EQ(env["SLURM_SUBMIT_HOST"], "login1");
  EXPECT_EQ(env["SLURM_NODEID"], "1");
  EXPECT_EQ(env["SLURM_PROCID"], "0");
  EXPECT_EQ(env["SLURM_LOCALID"], "0");
  EXPECT_EQ(env["SLURMD_NODENAME"], "gpu02");
  EXPECT_EQ(env["SLURM_JOB_START_TIME"], "1000");
  EXPECT_EQ(env["SLURM_JOB_END_TIME"], "1600");
  EXPECT_EQ(env["ENVIRONMENT"], "BATCH");
  EXPECT_EQ(env["BERTH_JOB_ID"], "42");
  EXPECT_EQ(env["BERTH_ATTEMPT"], "0");
  EXPECT_EQ(env["BERTH_GPUS"], "1,3");
  // Only once restarted, and only for array tasks.
  EXPECT_EQ(env.count("SLURM_RESTART_COUNT"), 0u);
  EXPECT_EQ(env.count("SLURM_ARRAY_JOB_ID"), 0u);
}

TEST(JobEnvTest, ArrayTaskRestartAndDefaults) {
  LaunchSpec s;
  s.job_id = 107;
  s.attempt = 2;
  s.array_job_id = 100;
  s.array_task_id = 7;
  s.array_task_count = 4;
  s.array_task_min = 1;
  s.array_task_max = 7;
  s.array_task_step = 2;
  s.mem_per_cpu_mib = 2000;
  s.start_time = 5000;
  auto env = AsMap(BuildJobEnvironment(s, Alice(), "n1", 6000));
  EXPECT_EQ(env["SLURM_RESTART_COUNT"], "2");
  EXPECT_EQ(env["SLURM_ARRAY_JOB_ID"], "100");
  EXPECT_EQ(env["SLURM_ARRAY_TASK_ID"], "7");
  EXPECT_EQ(env["SLURM_ARRAY_TASK_COUNT"], "4");
  EXPECT_EQ(env["SLURM_ARRAY_TASK_MIN"], "1");
  EXPECT_EQ(env["SLURM_ARRAY_TASK_MAX"], "7");
  EXPECT_EQ(env["SLURM_ARRAY_TASK_STEP"], "2");
  EXPECT_EQ(env["SLURM_MEM_PER_CPU"], "2000");
  EXPECT_EQ(env.count("SLURM_MEM_PER_NODE"), 0u);
  EXPECT_EQ(env["PATH"], kDefaultJobPath);
  EXPECT_EQ(env["SLURM_JOB_NODELIST"], "n1");  // no node list: this node
  EXPECT_EQ(env["SLURM_JOB_CPUS_PER_NODE"], "1");
  EXPECT_EQ(env.count("SLURM_CPUS_PER_TASK"), 0u);
  EXPECT_EQ(env.count("CUDA_VISIBLE_DEVICES"), 0u);
  EXPECT_EQ(env.count("SLURM_JOB_ACCOUNT"), 0u);
  EXPECT_EQ(env["BERTH_GPUS"], "");
  EXPECT_EQ(env["SLURM_JOB_START_TIME"], "5000");  // the controller's start time
  EXPECT_EQ(env["SLURM_JOB_END_TIME"], std::to_string(5000 + 365 * 24 * 3600));
}

}  // namespace
}  // namespace berth::agent
