#include "slurm/srun.h"

#include <gtest/gtest.h>
#include <stdlib.h>
#include <sys/wait.h>
#include <unistd.h>

#include <fstream>
#include <iterator>
#include <nlohmann/json.hpp>

#include "slurm/srun_step.h"

namespace berth::slurm {
namespace {

SrunOptions Parse(std::vector<std::string> args) {
  args.insert(args.begin(), "srun");
  SrunParse p = ParseSrunArgs(args);
  EXPECT_FALSE(p.done) << p.err;
  return p.options;
}

TEST(SrunArgsTest, StepAndJobOptions) {
  SrunOptions o = Parse({"-n2", "-N", "1-2", "-c", "4", "--gpus-per-task=1", "-l", "-o", "out-%t",
                         "-p", "gpu", "--mem=4G", "-t", "10", "-J", "name", "hostname", "-n", "5"});
  EXPECT_EQ(o.ntasks, 2);
  EXPECT_EQ(o.min_nodes, 1);
  EXPECT_EQ(o.max_nodes, 2);
  EXPECT_EQ(o.cpus_per_task, 4);
  EXPECT_EQ(o.gpus_per_task, 1);
  EXPECT_TRUE(o.label);
  EXPECT_EQ(o.output, "out-%t");
  EXPECT_EQ(o.job_name, "name");
  // The command's own options are not srun's.
  EXPECT_EQ(o.command, (std::vector<std::string>{"hostname", "-n", "5"}));
  EXPECT_EQ(o.job_options, (std::vector<std::pair<std::string, std::string>>{{"ntasks", "2"},
                                                                             {"nodes", "1-2"},
                                                                             {"cpus-per-task", "4"},
                                                                             {"gpus-per-task", "1"},
                                                                             {"partition", "gpu"},
                                                                             {"mem", "4G"},
                                                                             {"time", "10"}}));
  EXPECT_EQ(o.step_args, (std::vector<std::string>{"-n", "2", "-N", "1-2", "-c", "4",
                                                   "--gpus-per-task=1", "-l", "--output=out-%t"}));
  EXPECT_EQ(InnerSrunArgs("/b/berth", o),
            (std::vector<std::string>{"/b/berth", "srun", "-n", "2", "-N", "1-2", "-c", "4",
                                      "--gpus-per-task=1", "-l", "--output=out-%t", "--",
                                      "hostname", "-n", "5"}));
}

TEST(SrunArgsTest, InputAndPty) {
  SrunOptions o = Parse({"-i", "none", "-n2", "cat"});
  EXPECT_EQ(o.input, "none");
  EXPECT_FALSE(o.pty);
  o = Parse({"--pty", "bash", "-i"});
  EXPECT_TRUE(o.pty);
  EXPECT_EQ(o.command, (std::vector<std::string>{"bash", "-i"}));
  // The srun inside a job srun creates makes the terminal.
  EXPECT_EQ(InnerSrunArgs("/b/berth", o),
            (std::vector<std::string>{"/b/berth", "srun", "--pty", "--", "bash", "-i"}));
}

TEST(SrunArgsTest, Errors) {
  struct Case {
    std::vector<std::string> args;
    std::string err;
  };
  const Case cases[] = {
      {{}, "srun: fatal: No command given to execute.\n"},
      {{"-n", "x", "true"}, "srun: error: Invalid numeric value \"x\" for --ntasks\n"},
      {{"-N", "3-1", "true"}, "srun: error: invalid node count `3-1'\n"},
      {{"--bogus", "true"}, "Try \"srun --help\" for more information\n"},
      {{"--pty", "-i", "none", "bash"},
       "srun: error: --error/--input/--output are incompatible with --pty\n"},
      {{"-o", "x", "--pty", "bash"},
       "srun: error: --error/--input/--output are incompatible with --pty\n"},
      {{"-m", "cyclic", "true"},
       "srun: error: berth lays tasks out by block only (got --distribution=cyclic)\n"},
  };
  for (const Case& c : cases) {
    std::vector<std::string> args = c.args;
    args.insert(args.begin(), "srun");
    SrunParse p = ParseSrunArgs(args);
    EXPECT_TRUE(p.done);
    EXPECT_EQ(p.exit_code, 1);
    EXPECT_EQ(p.err, c.err);
  }
}

TEST(SrunArgsTest, PyxisOptions) {
  SrunOptions o = Parse({"-n2", "--container-image=nvcr.io#nvidia/pytorch:24.05-py3",
                         "--container-mounts", "./d:/d:ro", "--container-mounts=/x",
                         "--no-container-mount-home", "--container-name=pyt", "-D", "/w",
                         "--container-env=A", "python", "--container-image=not-srun's"});
  EXPECT_EQ(o.pyxis.image, "nvcr.io#nvidia/pytorch:24.05-py3");
  EXPECT_EQ(o.pyxis.mounts, (std::vector<PyxisMount>{{"./d", "/d", true}, {"/x", "/x", false}}));
  EXPECT_EQ(o.pyxis.mount_home, 0);
  EXPECT_EQ(o.pyxis.name, "pyt");
  EXPECT_EQ(o.command, (std::vector<std::string>{"python", "--container-image=not-srun's"}));
  // The steps' other nodes do not get them (the container travels as JSON); the srun inside a
  // job srun makes does.
  EXPECT_EQ(o.step_args, (std::vector<std::string>{"-n", "2"}));
  EXPECT_EQ(InnerSrunArgs("/b/berth", o),
            (std::vector<std::string>{
                "/b/berth", "srun", "-n", "2", "--container-image=nvcr.io#nvidia/pytorch:24.05-py3",
                "--container-mounts=./d:/d:ro", "--container-mounts=/x",
                "--no-container-mount-home", "--container-name=pyt", "--container-env=A", "--",
                "python", "--container-image=not-srun's"}));
  Result<std::optional<image::ContainerSpec>> c =
      StepContainer(o, {{"A", "1"}}, "/home/u", /*new_job=*/false);
  ASSERT_TRUE(c.ok()) << c.status().message();
  ASSERT_TRUE(c->has_value());
  EXPECT_EQ(image::EncodeContainerSpec(**c), nlohmann::json::parse(R"({
    "image": "nvcr.io#nvidia/pytorch:24.05-py3",
    "mounts": [{"source": "/w/d", "destination": "/d", "read_only": true},
               {"source": "/x", "destination": "/x"}],
    "env": [["A", "1"]], "mount_home": false, "name": "pyt"})"));
  // Without pyxis's options a step runs on the host.
  c = StepContainer(Parse({"true"}), {}, "/home/u", false);
  ASSERT_TRUE(c.ok());
  EXPECT_FALSE(c->has_value());
}

// Each of pyxis's options reaches pyxis's checks under its own name (srun's getopt table lists
// them in PyxisOptions()'s order).
TEST(SrunArgsTest, EveryPyxisOptionIsItself) {
  for (const PyxisOption& p : PyxisOptions()) {
    const std::string word = "--" + std::string(p.name) + (p.arg_info.empty() ? "" : "=/v");
    SrunParse parsed = ParseSrunArgs({"srun", word, "true"});
    if (parsed.done) {
      // Refused by berth: the message names the option.
      EXPECT_NE(parsed.err.find("--" + std::string(p.name)), std::string::npos) << parsed.err;
      continue;
    }
    ASSERT_EQ(parsed.options.container_args.size(), 1u) << word;
    EXPECT_EQ(parsed.options.container_args[0], word);
    EXPECT_EQ(parsed.options.pyxis.given, std::vector<std::string>{"--" + std::string(p.name)});
  }
}

TEST(SrunArgsTest, PyxisErrors) {
  auto err = [](std::vector<std::string> args) {
    args.insert(args.begin(), "srun");
    SrunParse p = ParseSrunArgs(args);
    EXPECT_TRUE(p.done);
    EXPECT_EQ(p.exit_code, 1);
    return p.err;
  };
  EXPECT_EQ(err({"--container-image=x", "--container-mounts=/tmp:", "true"}),
            "srun: error: pyxis: --container-mounts: invalid format: /tmp:\n");
  EXPECT_EQ(err({"--container-image=", "true"}),
            "srun: error: pyxis: --container-image: argument required\n");
  EXPECT_EQ(err({"--container-readonly", "--container-writable", "true"}),
            "srun: error: pyxis: both --container-writable and --container-readonly were "
            "specified\n");
  auto container_error = [](std::vector<std::string> args, bool new_job) {
    args.insert(args.begin(), "srun");
    SrunParse p = ParseSrunArgs(args);
    EXPECT_FALSE(p.done) << p.err;
    Result<std::optional<image::ContainerSpec>> c = StepContainer(p.options, {}, "/", new_job);
    return c.ok() ? std::string("ok") : c.status().message();
  };
  EXPECT_EQ(container_error({"--container-workdir=/w", "true"}, false),
            "pyxis: --container-workdir needs --container-image or --container-name (neither is "
            "set)");
  // --container-name alone: a container an earlier step made, not one of a job srun creates.
  EXPECT_EQ(container_error({"--container-name=pyt", "true"}, false), "ok");
  EXPECT_EQ(container_error({"--container-name=pyt", "true"}, true),
            "pyxis: --container-name=pyt without --container-image: a new job has no container "
            "of that name yet");
}

TEST(SrunArgsTest, HelpListsPyxisOptions) {
  SrunParse p = ParseSrunArgs({"srun", "--help"});
  EXPECT_TRUE(p.done);
  EXPECT_NE(p.out.find("\nOptions provided by plugins:\n"), std::string::npos);
  EXPECT_NE(p.out.find("      --container-workdir=PATH\n"), std::string::npos);
}

EnvList BatchEnv(const std::string& nodes = "n[1-2]", const std::string& cpus = "4(x2)") {
  return {{"SLURM_JOB_ID", "12"},
          {"SLURM_JOB_NAME", "job"},
          {"SLURM_JOB_USER", "alice"},
          {"SLURM_JOB_NODELIST", nodes},
          {"SLURM_JOB_CPUS_PER_NODE", cpus},
          {"SLURM_NODEID", "0"},
          {"SLURMD_NODENAME", "n1"},
          {"SLURM_NTASKS", "2"},
          {"SLURM_NNODES", "2"},
          {"CUDA_VISIBLE_DEVICES", "1,3,5,7"},
          {"PATH", "/usr/bin:/bin"}};
}

TEST(SrunAllocationTest, FromTheBatchEnvironment) {
  Result<Allocation> a = AllocationFromEnv(BatchEnv());
  ASSERT_TRUE(a.ok()) << a.status().ToString();
  EXPECT_EQ(a->job_id, 12u);
  EXPECT_EQ(a->nodes, (std::vector<std::string>{"n1", "n2"}));
  EXPECT_EQ(a->cpus, (std::vector<int32_t>{4, 4}));
  EXPECT_EQ(a->this_node, 0);
  EXPECT_EQ(a->gpus, (std::vector<std::string>{"1", "3", "5", "7"}));
  EXPECT_EQ(a->env_ntasks, 2);
  EXPECT_EQ(AllocationFromEnv({{"PATH", "/bin"}}).status().code(), StatusCode::kNotFound);
  // salloc's shell on a login host: no SLURM_NODEID, no node name of the allocation. srun runs
  // on none of its nodes, and every part of a step starts through the controller.
  EnvList login;
  for (const auto& [n, v] : BatchEnv()) {
    if (n != "SLURM_NODEID" && n != "SLURMD_NODENAME") login.emplace_back(n, v);
  }
  login.emplace_back("SLURMD_NODENAME", "login1");
  Result<Allocation> l = AllocationFromEnv(login);
  ASSERT_TRUE(l.ok());
  EXPECT_EQ(l->this_node, -1);
  Result<StepLayout> layout = PlanStep(SrunOptions{}, *l);
  ASSERT_TRUE(layout.ok()) << layout.status().ToString();
  const StepSplit split = SplitStep(*layout, *l);
  EXPECT_EQ(split.local, layout->nodes.size());
  EXPECT_EQ(split.others, layout->nodes);
  EXPECT_EQ(*ExpandCounts("4(x2),2"), (std::vector<int32_t>{4, 4, 2}));
  EXPECT_FALSE(ExpandCounts("4(x").ok());
}

struct LayoutCase {
  std::vector<std::string> args;
  std::string nodes, cpus;
  std::vector<int32_t> tasks_per_node;  // empty: an error
  std::string message;                  // the error, or a warning
};

TEST(SrunLayoutTest, SlurmsBlockDistribution) {
  const LayoutCase cases[] = {
      // SLURM_NNODES=2, SLURM_NTASKS=2 from the job: one task per node.
      {{}, "n[1-2]", "4(x2)", {1, 1}, ""},
      {{"-n", "4"}, "n[1-2]", "4(x2)", {2, 2}, ""},
      {{"-n", "3"}, "n[1-2]", "4(x2)", {2, 1}, ""},
      {{"-N", "1", "-n", "3"}, "n[1-2]", "4(x2)", {3}, ""},
      {{"-n", "1"},
       "n[1-2]",
       "4(x2)",
       {1},
       "srun: Warning: can't run 1 processes on 2 nodes, setting nnodes to 1"},
      {{"-n", "6", "-c", "2"},
       "n[1-2]",
       "4(x2)",
       {},
       "srun: error: Unable to create step for job 12: More processors requested than permitted"},
      {{"-n", "6", "-O"}, "n1", "2", {6}, ""},
      {{"--ntasks-per-node=2"}, "n[1-2]", "4(x2)", {2, 2}, ""},
      {{"-N", "3"},
       "n[1-2]",
       "4(x2)",
       {},
       "srun: error: Unable to create step for job 12: Requested node configuration is not "
       "available"},
      {{"-w", "n2", "-n", "2"}, "n[1-2]", "4(x2)", {2}, ""},
  };
  for (const LayoutCase& c : cases) {
    std::vector<std::string> args = c.args;
    args.push_back("true");
    SrunOptions o = Parse(args);
    Result<Allocation> a = AllocationFromEnv(BatchEnv(c.nodes, c.cpus));
    ASSERT_TRUE(a.ok());
    if (c.nodes == "n1") a->env_nnodes = 1;
    Result<StepLayout> l = PlanStep(o, *a);
    std::string name = "srun";
    for (const std::string& word : c.args) name += " " + word;
    if (c.tasks_per_node.empty()) {
      ASSERT_FALSE(l.ok()) << name;
      EXPECT_EQ(l.status().message(), c.message) << name;
      continue;
    }
    ASSERT_TRUE(l.ok()) << name << ": " << l.status().ToString();
    EXPECT_EQ(l->tasks_per_node, c.tasks_per_node) << name;
    EXPECT_EQ(l->warnings,
              c.message.empty() ? std::vector<std::string>{} : std::vector<std::string>{c.message})
        << name;
  }
}

TEST(SrunLayoutTest, SplitsTheStepIntoThisNodeAndTheOthers) {
  Result<Allocation> a = AllocationFromEnv(BatchEnv());
  Result<StepLayout> two = PlanStep(Parse({"true"}), *a);
  StepSplit split = SplitStep(*two, *a);
  EXPECT_EQ(split.local, 0u);
  EXPECT_EQ(split.others, std::vector<std::string>{"n2"});
  Result<StepLayout> one = PlanStep(Parse({"-N", "1", "true"}), *a);
  split = SplitStep(*one, *a);
  EXPECT_EQ(split.local, 0u);
  EXPECT_TRUE(split.others.empty());
  // A step of other nodes only: srun runs no task itself.
  Result<StepLayout> other = PlanStep(Parse({"-w", "n2", "true"}), *a);
  split = SplitStep(*other, *a);
  EXPECT_EQ(split.local, other->nodes.size());
  EXPECT_EQ(split.others, std::vector<std::string>{"n2"});
  // A step in a container: every node's part starts through the controller, this one's too.
  split = SplitStep(*two, *a, /*in_container=*/true);
  EXPECT_EQ(split.local, two->nodes.size());
  EXPECT_EQ(split.others, (std::vector<std::string>{"n1", "n2"}));
}

TEST(SrunLayoutTest, TheLayoutTravelsToTheOtherNodesIntact) {
  Result<Allocation> a = AllocationFromEnv(BatchEnv());
  Result<StepLayout> l = PlanStep(Parse({"-n", "3", "-c", "2", "true"}), *a);
  ASSERT_TRUE(l.ok());
  Result<std::pair<StepLayout, uint32_t>> back = DecodeStepLayout(EncodeStepLayout(*l, 7));
  ASSERT_TRUE(back.ok()) << back.status().ToString();
  EXPECT_EQ(back->second, 7u);
  EXPECT_EQ(back->first.nodes, l->nodes);
  EXPECT_EQ(back->first.node_index, l->node_index);
  EXPECT_EQ(back->first.tasks_per_node, l->tasks_per_node);
  EXPECT_EQ(back->first.ntasks, 3);
  EXPECT_EQ(back->first.cpus_per_task, 2);
  EXPECT_EQ(back->first.TaskIds(1), l->TaskIds(1));
  for (const char* bad :
       {"", "[]", "{\"step_id\": 1}",
        R"({"step_id":1,"nodes":["a","b"],"node_index":[0],"tasks_per_node":[1,1],"ntasks":2,)"
        R"("cpus_per_task":1})",
        R"({"step_id":1,"nodes":["a"],"node_index":[0],"tasks_per_node":[3],"ntasks":2,)"
        R"("cpus_per_task":1})",
        R"({"step_id":-1,"nodes":["a"],"node_index":[0],"tasks_per_node":[1],"ntasks":1,)"
        R"("cpus_per_task":1})"}) {
    Result<std::pair<StepLayout, uint32_t>> r = DecodeStepLayout(bad);
    ASSERT_FALSE(r.ok()) << bad;
    EXPECT_TRUE(r.status().message().starts_with("srun: error: bad BERTH_STEP: ")) << bad;
  }
}

TEST(SrunLayoutTest, TheBatchNodesOwnVariablesStayThere) {
  for (const char* v : {"CUDA_VISIBLE_DEVICES", "SLURMD_NODENAME", "BERTH_JOB_TOKEN", "BERTH_STEP",
                        "SLURM_JOB_GPUS", "HOSTNAME"}) {
    EXPECT_TRUE(NodeSpecificVariable(v)) << v;
  }
  for (const char* v :
       {"PATH", "SLURM_JOB_ID", "SLURM_NTASKS", "OMP_NUM_THREADS", "BERTH_SERVER"}) {
    EXPECT_FALSE(NodeSpecificVariable(v)) << v;
  }
}

std::string Get(const EnvList& env, const std::string& name) {
  for (const auto& [n, v] : env) {
    if (n == name) return v;
  }
  return "<unset>";
}

TEST(SrunEnvTest, TaskVariables) {
  Result<Allocation> a = AllocationFromEnv(BatchEnv());
  SrunOptions o = Parse({"-N", "1", "-n", "2", "--gpus-per-task=2", "true"});
  Result<StepLayout> l = PlanStep(o, *a);
  ASSERT_TRUE(l.ok());
  Result<std::vector<std::string>> gpus = TaskGpus(*a, o, 2, 1);
  ASSERT_TRUE(gpus.ok());
  EXPECT_EQ(*gpus, (std::vector<std::string>{"5", "7"}));
  EnvList env = TaskEnvironment(BatchEnv(), *l, {1, 1, 0}, 3, *gpus);
  EXPECT_EQ(Get(env, "SLURM_PROCID"), "1");
  EXPECT_EQ(Get(env, "SLURM_LOCALID"), "1");
  EXPECT_EQ(Get(env, "SLURM_NODEID"), "0");
  EXPECT_EQ(Get(env, "SLURM_STEP_ID"), "3");
  EXPECT_EQ(Get(env, "SLURM_STEPID"), "3");
  EXPECT_EQ(Get(env, "SLURM_STEP_NUM_TASKS"), "2");
  EXPECT_EQ(Get(env, "SLURM_STEP_NUM_NODES"), "1");
  EXPECT_EQ(Get(env, "SLURM_STEP_NODELIST"), "n1");
  EXPECT_EQ(Get(env, "SLURM_STEP_TASKS_PER_NODE"), "2");
  EXPECT_EQ(Get(env, "SLURM_NTASKS"), "2");
  EXPECT_EQ(Get(env, "SLURM_NNODES"), "1");
  EXPECT_EQ(Get(env, "SLURM_GTIDS"), "0,1");
  EXPECT_EQ(Get(env, "CUDA_VISIBLE_DEVICES"), "5,7");
  EXPECT_EQ(Get(env, "SLURM_JOB_ID"), "12");  // the job's own variables stay
  // PyTorch's: the step's first node is the master, the port comes from the job id.
  EXPECT_EQ(Get(env, "MASTER_ADDR"), "n1");
  EXPECT_EQ(Get(env, "MASTER_PORT"), "20012");
  EXPECT_EQ(Get(env, "WORLD_SIZE"), "2");
  EXPECT_EQ(Get(env, "RANK"), "1");
  EXPECT_EQ(Get(env, "LOCAL_RANK"), "1");
  EXPECT_EQ(Get(env, "LOCAL_WORLD_SIZE"), "2");
  EXPECT_EQ(Get(env, "NODE_RANK"), "0");
  EnvList mine = BatchEnv();
  mine.emplace_back("MASTER_ADDR", "10.0.0.9");
  mine.emplace_back("MASTER_PORT", "1234");
  EnvList kept = TaskEnvironment(mine, *l, {0, 0, 0}, 3, {});
  EXPECT_EQ(Get(kept, "MASTER_ADDR"), "10.0.0.9");  // the user's choice wins
  EXPECT_EQ(Get(kept, "MASTER_PORT"), "1234");
  EXPECT_EQ(Get(kept, "RANK"), "0");
  EXPECT_FALSE(TaskGpus(*a, Parse({"--gpus-per-task=3", "true"}), 2, 0).ok());
  EXPECT_TRUE(TaskGpus(*a, Parse({"true"}), 2, 0)->empty());
}

TEST(SrunPatternTest, Expansion) {
  PatternContext c{12, 3, 7, 0, "n1", "alice", "job", 0, -1};
  EXPECT_EQ(ExpandSrunPattern("out-%j.%s-%t-%N-%n-%u-%x-%%", c), "out-12.3-7-n1-0-alice-job-%");
  EXPECT_EQ(ExpandSrunPattern("%J-%3t", c), "12.3-007");
  EXPECT_EQ(ExpandSrunPattern("%A_%a", c), "12_4294967294");
  EXPECT_EQ(ExpandSrunPattern("none", c), "/dev/null");
  EXPECT_EQ(ExpandSrunPattern("x%q%", c), "x%q%");
  EXPECT_TRUE(PatternPerTask("o-%t"));
  EXPECT_TRUE(PatternPerTask("o-%4t"));
  EXPECT_FALSE(PatternPerTask("o-%%t"));
  EXPECT_FALSE(PatternPerTask("o-%j"));
}

TEST(SrunReportTest, LabelsEndLinesAndExitCodes) {
  EXPECT_EQ(TaskLabel(0, 2), "0: ");
  EXPECT_EQ(TaskLabel(3, 10), "3: ");
  EXPECT_EQ(TaskLabel(3, 11), " 3: ");
  EXPECT_EQ(TaskLabel(12, 100), "12: ");
  auto exited = [](int code) { return code << 8; };
  std::vector<TaskEnd> ends = {{0, exited(3)}, {1, exited(0)}, {2, exited(3)}, {3, SIGKILL}};
  EXPECT_EQ(TaskEndLines("n1", ends),
            (std::vector<std::string>{"srun: error: n1: tasks 0,2: Exited with exit code 3",
                                      "srun: error: n1: task 3: Killed"}));
  EXPECT_EQ(SrunExitCode(ends), 3);  // srun keeps the largest wait status
  EXPECT_EQ(SrunExitCode({{0, SIGTERM}, {1, 0}}), 143);
  EXPECT_EQ(SrunExitCode({{0, 0}, {1, 0}}), 0);
  EXPECT_TRUE(TaskEndLines("n1", {{0, 0}}).empty());
  EXPECT_EQ(TaskEndLines("n1", {{0, exited(1)}, {1, exited(1)}, {2, exited(1)}}),
            std::vector<std::string>{"srun: error: n1: tasks 0-2: Exited with exit code 1"});
}

// ---- The local launch, with real processes.

class SrunStepTest : public ::testing::Test {
 protected:
  void SetUp() override {
    char tmpl[] = "/tmp/srun-test-XXXXXX";
    ASSERT_NE(mkdtemp(tmpl), nullptr);
    dir_ = tmpl;
  }
  void TearDown() override {
    std::string cmd = "rm -rf '" + dir_ + "'";
    ASSERT_EQ(system(cmd.c_str()), 0);
  }
  int Run(std::vector<std::string> args) {
    SrunOptions o = Parse(std::move(args));
    EnvList env = BatchEnv("n1", "4");
    Result<Allocation> a = AllocationFromEnv(env);
    a->env_nnodes = 1;
    Result<StepLayout> l = PlanStep(o, *a);
    EXPECT_TRUE(l.ok()) << l.status().ToString();
    return RunLocalStep({o, *a, *l, 0, 5, env});
  }
  std::string Read(const std::string& name) {
    std::ifstream in(dir_ + "/" + name);
    return std::string(std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>());
  }
  std::string dir_;
};

TEST_F(SrunStepTest, TasksGetTheirIdsAndFiles) {
  EXPECT_EQ(Run({"-n", "3", "-o", dir_ + "/out-%t", "sh", "-c",
                 "echo $SLURM_PROCID $SLURM_LOCALID $SLURM_STEP_ID $SLURM_STEP_NUM_TASKS; "
                 "echo err >&2"}),
            0);
  EXPECT_EQ(Read("out-0"), "0 0 5 3\nerr\n");
  EXPECT_EQ(Read("out-2"), "2 2 5 3\nerr\n");
}

TEST_F(SrunStepTest, LabelledOutput) {
  EXPECT_EQ(Run({"-n", "2", "-l", "-o", dir_ + "/out-%t", "-e", dir_ + "/err-%t", "sh", "-c",
                 "echo a$SLURM_PROCID; printf tail$SLURM_PROCID; echo e >&2"}),
            0);
  EXPECT_EQ(Read("out-0"), "0: a0\n0: tail0");  // the last part line too, at the end
  EXPECT_EQ(Read("out-1"), "1: a1\n1: tail1");
  EXPECT_EQ(Read("err-1"), "1: e\n");
}

TEST_F(SrunStepTest, SharedFileGetsEveryTask) {
  EXPECT_EQ(Run({"-n", "3", "-o", dir_ + "/all", "sh", "-c", "echo line"}), 0);
  EXPECT_EQ(Read("all"), "line\nline\nline\n");
}

TEST_F(SrunStepTest, WorstExitCodeAndMissingPrograms) {
  EXPECT_EQ(Run({"-n", "2", "-o", dir_ + "/o", "sh", "-c", "exit $((SLURM_PROCID + 4))"}), 5);
  EXPECT_EQ(Run({"-n", "1", "-o", dir_ + "/o", "/nonexistent/program"}), 2);
  EXPECT_EQ(Read("o"),
            "slurmstepd: error: execve(): /nonexistent/program: No such file or "
            "directory\n");
  EXPECT_EQ(Run({"-n", "1", "-o", dir_ + "/o", "sh", "-c", "kill -TERM $$"}), 143);
}

TEST(SrunStepIdTest, CountsUpPerJobAndStart) {
  Allocation a;
  a.job_id = 4000000000u + static_cast<uint32_t>(getpid());
  a.start_time = "1700000000";
  Allocation later = a;
  later.start_time = "1700000999";  // the same id, another job
  EXPECT_EQ(NextStepId(a), 0u);
  EXPECT_EQ(NextStepId(a), 1u);
  EXPECT_EQ(NextStepId(later), 0u);
  EXPECT_EQ(NextStepId(a), 2u);
  const char* tmpdir = getenv("TMPDIR");
  const std::string dir = tmpdir != nullptr && tmpdir[0] == '/' ? tmpdir : "/tmp";
  for (const Allocation* x : {&a, &later}) {
    unlink((dir + "/.berth-steps-" + std::to_string(getuid()) + "-" + std::to_string(x->job_id) +
            "-" + x->start_time)
               .c_str());
  }
}

TEST(SrunAllocationTest, CpusPerTaskComesFromSrunsOwnVariable) {
  EnvList env = BatchEnv();
  env.emplace_back("SLURM_CPUS_PER_TASK", "4");
  EXPECT_EQ(AllocationFromEnv(env)->env_cpus_per_task, 0);
  env.emplace_back("SRUN_CPUS_PER_TASK", "2");
  EXPECT_EQ(AllocationFromEnv(env)->env_cpus_per_task, 2);
}

}  // namespace
}  // namespace berth::slurm
