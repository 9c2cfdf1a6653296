#include "agent/job_env.h"

#include <gtest/gtest.h>

#include <functional>
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
  // Not asked for (no SLURM_NTASKS from sbatch): Slurm sets no task count.
  EXPECT_EQ(env.count("SLURM_NTASKS"), 0u);
  EXPECT_EQ(env.count("SLURM_NPROCS"), 0u);
  EXPECT_EQ(env["SLURM_CPUS_PER_TASK"], "4");
  EXPECT_EQ(env["SLURM_CPUS_ON_NODE"], "8");
  EXPECT_EQ(env["SLURM_JOB_CPUS_PER_NODE"], "8(x2),4");
  EXPECT_EQ(env["SLURM_TASKS_PER_NODE"], "1(x3)");
  // The allocation's memory is not a request: SLURM_MEM_PER_NODE only comes from sbatch's --mem.
  EXPECT_EQ(env.count("SLURM_MEM_PER_NODE"), 0u);
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
  EXPECT_EQ(env["SLURM_TOPOLOGY_ADDR"], "gpu02");
  EXPECT_EQ(env["SLURM_TOPOLOGY_ADDR_PATTERN"], "node");
  EXPECT_EQ(env["SLURM_NODE_ALIASES"], "(null)");
  EXPECT_EQ(env["TMPDIR"], "/tmp");
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
  EXPECT_EQ(env.count("SLURM_SUBMIT_DIR"), 0u);
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

// A Pod's host name (kubelet's: its spec.hostname or its name) is its $HOSTNAME; a batch job's
// is the node's, as slurmd sets it.
TEST(JobEnvTest, HostNameIsTheJobsWhenItHasOne) {
  LaunchSpec spec;
  spec.job_id = 3;
  EXPECT_EQ(AsMap(BuildJobEnvironment(spec, Alice(), "gpu01", 1))["HOSTNAME"], "gpu01");
  spec.environment = {{"HOSTNAME", "login1"}};  // the submit host's, exported by sbatch
  EXPECT_EQ(AsMap(BuildJobEnvironment(spec, Alice(), "gpu01", 1))["HOSTNAME"], "gpu01");
  spec.hostname = "train-3";
  auto env = AsMap(BuildJobEnvironment(spec, Alice(), "gpu01", 1));
  EXPECT_EQ(env["HOSTNAME"], "train-3");
  EXPECT_EQ(env["SLURMD_NODENAME"], "gpu01");
}

// A GPU share sees its device; an MPS share also its thread percentage and the node's MPS
// directories; a MIG instance is named by its UUID.
TEST(JobEnvTest, GpuSharesAndMigInstances) {
  LaunchSpec spec;
  spec.job_id = 4;
  spec.gpu_indices = {2};
  spec.gpu_share_milli = 500;
  auto env = AsMap(BuildJobEnvironment(spec, Alice(), "gpu01", 1));
  EXPECT_EQ(env["CUDA_VISIBLE_DEVICES"], "2");
  EXPECT_EQ(env["SLURM_JOB_GPUS"], "2");
  EXPECT_EQ(env.count("CUDA_MPS_ACTIVE_THREAD_PERCENTAGE"), 0u) << "time-sliced: no MPS limit";
  spec.gpu_mps = true;
  env = AsMap(BuildJobEnvironment(spec, Alice(), "gpu01", 1));
  EXPECT_EQ(env["CUDA_MPS_ACTIVE_THREAD_PERCENTAGE"], "50");
  EXPECT_EQ(env.count("CUDA_MPS_PIPE_DIRECTORY"), 0u);
  spec.mps_pipe_dir = "/run/mps";
  spec.mps_log_dir = "/var/log/mps";
  env = AsMap(BuildJobEnvironment(spec, Alice(), "gpu01", 1));
  EXPECT_EQ(env["CUDA_MPS_PIPE_DIRECTORY"], "/run/mps");
  EXPECT_EQ(env["CUDA_MPS_LOG_DIRECTORY"], "/var/log/mps");

  LaunchSpec mig;
  mig.job_id = 5;
  mig.gpu_indices = {0, 3};
  mig.gpu_uuids = {"", "MIG-4f1c"};
  env = AsMap(BuildJobEnvironment(mig, Alice(), "gpu01", 1));
  EXPECT_EQ(env["CUDA_VISIBLE_DEVICES"], "0,MIG-4f1c");
  EXPECT_EQ(env["SLURM_JOB_GPUS"], "0,3");
  // The launch specification carries it all to the supervisor.
  Result<LaunchSpec> back = DecodeLaunchSpec(EncodeLaunchSpec(spec));
  ASSERT_TRUE(back.ok());
  EXPECT_EQ(back->gpu_share_milli, 500);
  EXPECT_TRUE(back->gpu_mps);
  EXPECT_EQ(back->mps_pipe_dir, "/run/mps");
  EXPECT_EQ(DecodeLaunchSpec(EncodeLaunchSpec(mig))->gpu_uuids, mig.gpu_uuids);
  // The NVML indices travel too; the supervisor samples only the devices NVML measures (the
  // whole GPU, NVML's device 2, not the MIG instance), by NVML's index, not berth's.
  mig.gpu_nvml_indices = {2, -1};
  EXPECT_EQ(DecodeLaunchSpec(EncodeLaunchSpec(mig))->gpu_nvml_indices, mig.gpu_nvml_indices);
  EXPECT_EQ(NvmlIndicesOf(mig), std::vector<int32_t>{2});
  EXPECT_TRUE(NvmlIndicesOf(spec).empty());  // declared GPUs: none known
}

// Slurm 22.05's batch environment, variable by variable, against what a real slurmd and sbatch
// 22.05.8 gave jobs (two nodes of 4 CPUs and 2 GPUs each). `exported` is what sbatch put in the
// job's environment from its request (src/slurm/sbatch_job.h).
TEST(JobEnvTest, MatchesSlurm2205) {
  struct Case {
    std::string what;
    std::function<void(LaunchSpec&)> shape;
    std::vector<std::pair<std::string, std::string>> exported;
    std::map<std::string, std::string> want;  // "<unset>" = must be absent
  };
  auto one_node = [](LaunchSpec& s) {
    s.node_names = {"envn1"};
    s.cpus_per_node = {1};
  };
  const Case cases[] = {
      {"plain",
       one_node,
       {{"SLURM_SUBMIT_DIR", "/home/u/run"},
        {"SLURM_SUBMIT_HOST", "vm"},
        {"SLURM_PRIO_PROCESS", "0"}},
       {{"SLURM_JOB_NODELIST", "envn1"},
        {"SLURM_JOB_NUM_NODES", "1"},
        {"SLURM_NNODES", "1"},
        {"SLURM_CPUS_ON_NODE", "1"},
        {"SLURM_JOB_CPUS_PER_NODE", "1"},
        {"SLURM_TASKS_PER_NODE", "1"},
        {"SLURM_NTASKS", "<unset>"},
        {"SLURM_NPROCS", "<unset>"},
        {"SLURM_CPUS_PER_TASK", "<unset>"},
        {"SLURM_MEM_PER_NODE", "<unset>"},
        {"SLURM_GPUS_ON_NODE", "<unset>"},
        {"CUDA_VISIBLE_DEVICES", "<unset>"},
        {"SLURM_RESTART_COUNT", "<unset>"},
        {"SLURM_ARRAY_JOB_ID", "<unset>"},
        {"SLURM_SUBMIT_DIR", "/home/u/run"},
        {"SLURM_SUBMIT_HOST", "vm"},
        {"SLURM_PRIO_PROCESS", "0"},
        {"SLURM_GTIDS", "0"},
        {"SLURM_PROCID", "0"},
        {"SLURM_LOCALID", "0"},
        {"SLURM_NODEID", "0"},
        {"SLURMD_NODENAME", "envn1"},
        {"HOSTNAME", "envn1"},
        {"ENVIRONMENT", "BATCH"},
        {"SLURM_TOPOLOGY_ADDR", "envn1"},
        {"SLURM_TOPOLOGY_ADDR_PATTERN", "node"},
        {"TMPDIR", "/tmp"}}},
      {"-c 2",
       [&](LaunchSpec& s) {
         one_node(s);
         s.cpus = 2;
         s.cpus_per_node = {2};
         s.cpus_per_task = 2;
       },
       {{"SLURM_CPUS_PER_TASK", "2"}},
       {{"SLURM_CPUS_PER_TASK", "2"},
        {"SLURM_CPUS_ON_NODE", "2"},
        {"SLURM_JOB_CPUS_PER_NODE", "2"},
        {"SLURM_TASKS_PER_NODE", "1"},
        {"SLURM_NTASKS", "<unset>"}}},
      {"-c 1 is still given",
       one_node,
       {{"SLURM_CPUS_PER_TASK", "1"}},
       {{"SLURM_CPUS_PER_TASK", "1"}}},
      {"-n 3",
       [&](LaunchSpec& s) {
         one_node(s);
         s.cpus = 3;
         s.cpus_per_node = {3};
         s.ntasks = 3;
       },
       {{"SLURM_NTASKS", "3"}, {"SLURM_NPROCS", "3"}},
       {{"SLURM_NTASKS", "3"},
        {"SLURM_NPROCS", "3"},
        {"SLURM_TASKS_PER_NODE", "3"},
        {"SLURM_CPUS_ON_NODE", "3"}}},
      {"-N 2 --ntasks-per-node=2 --mem=1000",
       [](LaunchSpec& s) {
         s.node_names = {"envn1", "envn2"};
         s.cpus_per_node = {2, 2};
         s.cpus = 2;
         s.ntasks = 4;
         s.tasks_per_node = {2, 2};
         s.mem_per_node_mib = 1000;
       },
       {{"SLURM_NTASKS", "4"},
        {"SLURM_NPROCS", "4"},
        {"SLURM_NTASKS_PER_NODE", "2"},
        {"SLURM_MEM_PER_NODE", "1000"}},
       {{"SLURM_JOB_NODELIST", "envn[1-2]"},
        {"SLURM_NODELIST", "envn[1-2]"},
        {"SLURM_JOB_NUM_NODES", "2"},
        {"SLURM_JOB_CPUS_PER_NODE", "2(x2)"},
        {"SLURM_TASKS_PER_NODE", "2(x2)"},
        {"SLURM_NTASKS", "4"},
        {"SLURM_NPROCS", "4"},
        {"SLURM_NTASKS_PER_NODE", "2"},
        {"SLURM_MEM_PER_NODE", "1000"},
        {"SLURM_CPUS_ON_NODE", "2"}}},
      {"-N 2-4 --ntasks-per-node=1: the count the allocation has",
       [](LaunchSpec& s) {
         s.node_names = {"a1", "a2", "a3"};
         s.cpus_per_node = {1, 1, 1};
         s.ntasks = 3;
         s.tasks_per_node = {1, 1, 1};
       },
       {{"SLURM_NTASKS", "2"}, {"SLURM_NTASKS_PER_NODE", "1"}},
       {{"SLURM_NTASKS", "3"},
        {"SLURM_NPROCS", "3"},
        {"SLURM_TASKS_PER_NODE", "1(x3)"},
        {"SLURM_JOB_NODELIST", "a[1-3]"}}},
      {"--gpus-per-node=1 --mem-per-cpu=500 -c 1",
       [&](LaunchSpec& s) {
         one_node(s);
         s.gpu_indices = {0};
         s.mem_per_cpu_mib = 500;
       },
       {{"SLURM_GPUS_PER_NODE", "1"}, {"SLURM_MEM_PER_CPU", "500"}, {"SLURM_CPUS_PER_TASK", "1"}},
       {{"SLURM_GPUS_ON_NODE", "1"},
        {"SLURM_JOB_GPUS", "0"},
        {"CUDA_VISIBLE_DEVICES", "0"},
        {"GPU_DEVICE_ORDINAL", "0"},
        {"SLURM_GPUS_PER_NODE", "1"},
        {"SLURM_MEM_PER_CPU", "500"},
        {"SLURM_CPUS_PER_TASK", "1"},
        {"SLURM_MEM_PER_NODE", "<unset>"}}},
      {"--gpus=3 -A acc1 over two nodes",
       [](LaunchSpec& s) {
         s.node_names = {"envn1", "envn2"};
         s.cpus_per_node = {1, 1};
         s.ntasks = 2;
         s.gpu_indices = {0, 1};
         s.account = "acc1";
       },
       {{"SLURM_GPUS", "3"}},
       {{"SLURM_GPUS", "3"},
        {"SLURM_GPUS_ON_NODE", "2"},
        {"SLURM_JOB_GPUS", "0,1"},
        {"SLURM_JOB_ACCOUNT", "acc1"},
        {"SLURM_JOB_CPUS_PER_NODE", "1(x2)"},
        {"SLURM_TASKS_PER_NODE", "1(x2)"}}},
      {"array task 4 of 1-7:3",
       [&](LaunchSpec& s) {
         one_node(s);
         s.job_id = 11;
         s.array_job_id = 6;
         s.array_task_id = 4;
         s.array_task_count = 3;
         s.array_task_min = 1;
         s.array_task_max = 7;
         s.array_task_step = 3;
       },
       {},
       {{"SLURM_JOB_ID", "11"},
        {"SLURM_JOBID", "11"},
        {"SLURM_ARRAY_JOB_ID", "6"},
        {"SLURM_ARRAY_TASK_ID", "4"},
        {"SLURM_ARRAY_TASK_COUNT", "3"},
        {"SLURM_ARRAY_TASK_MIN", "1"},
        {"SLURM_ARRAY_TASK_MAX", "7"},
        {"SLURM_ARRAY_TASK_STEP", "3"}}},
      {"restarted twice",
       [&](LaunchSpec& s) {
         one_node(s);
         s.attempt = 2;
       },
       {},
       {{"SLURM_RESTART_COUNT", "2"}}},
      {"a job that did not come through sbatch",
       [&](LaunchSpec& s) {
         one_node(s);
         s.submit_dir = "/srv/work";
         s.submit_host = "api";
       },
       {},
       {{"SLURM_SUBMIT_DIR", "/srv/work"}, {"SLURM_SUBMIT_HOST", "api"}}},
      {"the job's own identity wins over inherited values",
       [&](LaunchSpec& s) {
         one_node(s);
         s.job_id = 42;
       },
       {{"SLURM_JOB_ID", "7"}, {"SLURM_JOB_NODELIST", "old[1-9]"}, {"TMPDIR", "/scratch"}},
       {{"SLURM_JOB_ID", "42"}, {"SLURM_JOB_NODELIST", "envn1"}, {"TMPDIR", "/scratch"}}},
  };
  for (const Case& c : cases) {
    LaunchSpec s;
    s.job_id = 1;
    s.name = "env.sh";
    s.partition = "p1";
    s.cluster_name = "envcl";
    c.shape(s);
    s.environment = c.exported;
    auto env = AsMap(BuildJobEnvironment(s, Alice(), s.node_names.front(), 1000));
    for (const auto& [name, value] : c.want) {
      if (value == "<unset>") {
        EXPECT_EQ(env.count(name), 0u) << c.what << ": " << name << "=" << env[name];
      } else {
        EXPECT_EQ(env[name], value) << c.what << ": " << name;
      }
    }
    EXPECT_EQ(env["SLURM_CLUSTER_NAME"], "envcl") << c.what;
    EXPECT_EQ(env["SLURM_JOB_PARTITION"], "p1") << c.what;
    EXPECT_EQ(env["SLURM_JOB_NAME"], "env.sh") << c.what;
  }
}

}  // namespace
}  // namespace berth::agent
