#include "slurm/sbatch_job.h"

#include <dirent.h>
#include <gtest/gtest.h>

#include <cstdlib>
#include <fstream>
#include <iterator>
#include <map>
#include <nlohmann/json.hpp>

#include "common/slurm_time.h"
#include "core/model/array_spec.h"
#include "core/model/dependency.h"

namespace berth::slurm {
namespace {

constexpr Time kNow = 1796200000;  // 2026-12-02T10:26:40Z

// A submission from /work/x with the files in `files` ("job.sh" the script).
SbatchInputs Inputs(std::vector<std::string> args, std::map<std::string, std::string> files,
                    EnvironmentList env = {}) {
  SbatchInputs in;
  in.args = std::move(args);
  in.env = std::move(env);
  in.cwd = "/work/x";
  in.host = "login1";
  in.now = kNow;
  in.read_file = [files](const std::string& path) -> Result<std::string> {
    auto it = files.find(path);
    if (it == files.end()) return Status::NotFound(path);
    return it->second;
  };
  in.read_stdin = [files]() -> Result<std::string> {
    auto it = files.find("-");
    return it == files.end() ? std::string() : it->second;
  };
  return in;
}

SbatchRequest Parsed(const SbatchInputs& in) {
  SbatchOutcome out = ParseSbatch(in);
  if (auto* f = std::get_if<SbatchFailure>(&out)) {
    ADD_FAILURE() << "failed (" << f->exit_code << "): " << f->text;
    return {};
  }
  if (std::get_if<SbatchInfo>(&out)) {
    ADD_FAILURE() << "printed info";
    return {};
  }
  return std::get<SbatchRequest>(out);
}

SbatchFailure Failed(const SbatchInputs& in) {
  SbatchOutcome out = ParseSbatch(in);
  if (auto* f = std::get_if<SbatchFailure>(&out)) return *f;
  ADD_FAILURE() << "accepted";
  return {};
}

std::string Env(const SbatchRequest& r, const std::string& name) {
  for (const auto& [n, v] : r.exec.environment) {
    if (n == name) return v;
  }
  return "<unset>";
}

const std::string kScript = "#!/bin/sh\n#SBATCH -J fromscript\n#SBATCH -t 10 -p gpu\necho\n";

TEST(SbatchParseTest, BasicPathAndDefaults) {
  SbatchRequest r = Parsed(Inputs({"--hold", "job.sh", "a1", "a2"}, {{"job.sh", kScript}}));
  EXPECT_EQ(r.spec.name, "fromscript");
  EXPECT_EQ(r.spec.time_limit, 600);
  EXPECT_EQ(r.spec.partitions, std::vector<std::string>{"gpu"});
  EXPECT_EQ(r.spec.hold, core::HoldKind::kUser);
  EXPECT_EQ(r.exec.script, kScript);
  EXPECT_EQ(r.exec.work_dir, "/work/x");
  EXPECT_EQ(r.exec.stdout_pattern, "/work/x/slurm-%j.out");
  EXPECT_EQ(r.exec.stderr_pattern, "");  // the same file as stdout
  EXPECT_EQ(r.exec.stdin_path, "");      // /dev/null
  EXPECT_EQ(r.script_args, (std::vector<std::string>{"a1", "a2"}));
  EXPECT_EQ(Env(r, "SLURM_SUBMIT_DIR"), "/work/x");
  EXPECT_EQ(Env(r, "SLURM_SUBMIT_HOST"), "login1");
  EXPECT_EQ(Env(r, "SLURM_PRIO_PROCESS"), "0");
  EXPECT_FALSE(r.parsable || r.test_only || r.wait);
}

TEST(SbatchParseTest, DefaultJobNames) {
  const std::string plain = "#!/bin/sh\necho\n";
  EXPECT_EQ(Parsed(Inputs({"dir/run.sh"}, {{"dir/run.sh", plain}})).spec.name, "run.sh");
  EXPECT_EQ(Parsed(Inputs({}, {{"-", plain}})).spec.name, "sbatch");
  SbatchRequest wrap = Parsed(Inputs({"--wrap", "echo hi; exit 3"}, {}));
  EXPECT_EQ(wrap.spec.name, "wrap");
  EXPECT_EQ(wrap.exec.script,
            "#!/bin/sh\n# This script was created by sbatch --wrap.\n\necho hi; exit 3\n");
  EXPECT_EQ(Parsed(Inputs({"-J", "x", "--wrap=true"}, {})).spec.name, "x");
}

TEST(SbatchParseTest, PathsResolveAgainstTheWorkDir) {
  const std::string plain = "#!/bin/sh\necho\n";
  SbatchRequest r =
      Parsed(Inputs({"-D", "sub", "-o", "x.out", "-e", "/abs/e.err", "-i", "in.txt", "job.sh"},
                    {{"job.sh", plain}}));
  EXPECT_EQ(r.exec.work_dir, "/work/x/sub");
  EXPECT_EQ(r.exec.stdout_pattern, "/work/x/sub/x.out");
  EXPECT_EQ(r.exec.stderr_pattern, "/abs/e.err");
  EXPECT_EQ(r.exec.stdin_path, "/work/x/sub/in.txt");
  // Slurm joins without normalizing: -D ./ gives "<cwd>/./" and "<cwd>/.//slurm-%j.out".
  r = Parsed(Inputs({"-D", "./", "job.sh"}, {{"job.sh", plain}}));
  EXPECT_EQ(r.exec.work_dir, "/work/x/./");
  EXPECT_EQ(r.exec.stdout_pattern, "/work/x/.//slurm-%j.out");
  r = Parsed(Inputs({"-D", "/data", "--array=1-3", "job.sh"}, {{"job.sh", plain}}));
  EXPECT_EQ(r.exec.stdout_pattern, "/data/slurm-%A_%a.out");
}

TEST(SbatchParseTest, CommandLineOverEnvironmentOverScript) {
  EnvironmentList env = {{"SBATCH_TIMELIMIT", "20"}, {"SBATCH_JOB_NAME", "envname"}};
  SbatchRequest r = Parsed(Inputs({"job.sh"}, {{"job.sh", kScript}}, env));
  EXPECT_EQ(r.spec.name, "envname");
  EXPECT_EQ(r.spec.time_limit, 20 * 60);
  EXPECT_EQ(r.spec.partitions, std::vector<std::string>{"gpu"});
  r = Parsed(Inputs({"-t", "30", "-J", "cli", "job.sh"}, {{"job.sh", kScript}}, env));
  EXPECT_EQ(r.spec.name, "cli");
  EXPECT_EQ(r.spec.time_limit, 30 * 60);
  // Of two options that set the same thing, the one applied last wins.
  r = Parsed(
      Inputs({"--oversubscribe", "job.sh"}, {{"job.sh", "#!/bin/sh\n#SBATCH --exclusive\n"}}));
  EXPECT_TRUE(r.spec.oversubscribe);
  EXPECT_EQ(r.spec.exclusive, core::ExclusiveMode::kNo);
  r = Parsed(Inputs({"--requeue", "job.sh"}, {{"job.sh", "#!/bin/sh\n#SBATCH --no-requeue\n"}}));
  EXPECT_TRUE(r.spec.requeue);
  r = Parsed(Inputs({"job.sh"}, {{"job.sh", "#!/bin/sh\n#SBATCH --no-requeue\n"}},
                    {{"SBATCH_REQUEUE", "yes"}}));
  EXPECT_TRUE(r.spec.requeue);
}

// man sbatch, --mail-type: "Multiple type values may be specified in a comma separated list";
// Slurm adds each --mail-type to the ones before (BEGIN, then END, then FAIL: all three).
TEST(SbatchParseTest, RepeatedMailTypesAccumulate) {
  SbatchRequest r = Parsed(
      Inputs({"--mail-type=FAIL", "job.sh"},
             {{"job.sh", "#!/bin/sh\n#SBATCH --mail-type=BEGIN\n#SBATCH --mail-type=END\n"}}));
  EXPECT_EQ(r.exec.mail_type, "BEGIN,END,FAIL");
  r = Parsed(Inputs({"--mail-type=END", "job.sh"}, {{"job.sh", "#!/bin/sh\n"}}));
  EXPECT_EQ(r.exec.mail_type, "END");
}

// -O/--overcommit, --ntasks-per-socket and --ntasks-per-core reach the job (scontrol shows them
// in NumCPUs and NtasksPerN:B:S:C) and are no longer listed as ignored.
TEST(SbatchParseTest, OvercommitAndTasksPerSocketReachTheJob) {
  SbatchRequest r = Parsed(Inputs({"-O", "--ntasks-per-socket=2", "--ntasks-per-core=1", "job.sh"},
                                  {{"job.sh", "#!/bin/sh\n"}}));
  EXPECT_TRUE(r.spec.overcommit);
  EXPECT_EQ(r.spec.ntasks_per_socket, 2);
  EXPECT_EQ(r.spec.ntasks_per_core, 1);
  EXPECT_TRUE(r.ignored.empty());
}

TEST(SbatchParseTest, EnvironmentFlags) {
  const std::string plain = "#!/bin/sh\necho\n";
  struct Case {
    std::string value;
    bool set;
  };
  // Set by an empty value, "yes" or a non-zero number; ignored otherwise.
  for (const Case& c : {Case{"", true}, Case{"yes", true}, Case{"YES", true}, Case{"1", true},
                        Case{"0", false}, Case{"maybe", false}, Case{"no", false}}) {
    SbatchRequest r =
        Parsed(Inputs({"job.sh"}, {{"job.sh", plain}}, {{"SBATCH_NO_REQUEUE", c.value}}));
    EXPECT_EQ(r.spec.requeue, !c.set) << "'" << c.value << "'";
  }
  SbatchRequest r = Parsed(Inputs({"job.sh"}, {{"job.sh", plain}}, {{"SBATCH_EXCLUSIVE", "user"}}));
  EXPECT_EQ(r.spec.exclusive, core::ExclusiveMode::kUser);
  r = Parsed(Inputs({"job.sh"}, {{"job.sh", plain}}, {{"SBATCH_EXCLUSIVE", ""}}));
  EXPECT_EQ(r.spec.exclusive, core::ExclusiveMode::kNode);
}

TEST(SbatchParseTest, EveryInputEnvironmentVariable) {
  const std::string plain = "#!/bin/sh\necho\n";
  struct Case {
    std::string var, value;
    std::function<bool(const SbatchRequest&)> check;
    EnvironmentList more = {};
  };
  const Case cases[] = {
      {"SBATCH_ACCOUNT", "acc", [](auto& r) { return r.spec.account == "acc"; }},
      {"SBATCH_ARRAY_INX", "1-3", [](auto& r) { return r.spec.array.task_ids.size() == 3; }},
      {"SBATCH_CLUSTERS", "c1", [](auto& r) { return r.clusters == "c1"; }},
      {"SLURM_CLUSTERS", "c2", [](auto& r) { return r.clusters == "c2"; }},
      {"SBATCH_CONSTRAINT", "a100", [](auto& r) { return r.spec.constraint.text() == "a100"; }},
      {"SBATCH_CPUS_PER_GPU", "4", [](auto& r) { return r.spec.cpus_per_gpu == 4; }},
      {"SBATCH_ERROR", "e.txt", [](auto& r) { return r.exec.stderr_pattern == "/work/x/e.txt"; }},
      {"SBATCH_EXPORT", "NONE", [](auto& r) { return Env(r, "SLURM_EXPORT_ENV") == "NONE"; }},
      {"SBATCH_GET_USER_ENV", "", [](auto& r) { return Env(r, "SLURM_GET_USER_ENV") == "1"; }},
      {"SBATCH_GPU_BIND", "closest", [](auto& r) { return r.exec.gpu_bind == "closest"; }},
      {"SBATCH_GPUS", "a100:2",
       [](auto& r) { return r.spec.gpus == 2 && r.spec.gpu_type == "a100"; }},
      {"SBATCH_GPUS_PER_NODE", "4", [](auto& r) { return r.spec.gpus_per_node == 4; }},
      {"SBATCH_GPUS_PER_TASK",
       "1",
       [](auto& r) { return r.spec.gpus_per_task == 1; },
       {{"SBATCH_GPUS", "2"}}},
      {"SBATCH_GRES", "gpu:2", [](auto& r) { return r.spec.gpus_per_node == 2; }},
      {"SBATCH_HINT", "nomultithread", [](auto& r) { return r.ignored.size() == 1; }},
      {"SBATCH_INPUT", "/in", [](auto& r) { return r.exec.stdin_path == "/in"; }},
      {"SBATCH_JOB_NAME", "n", [](auto& r) { return r.spec.name == "n"; }},
      {"SBATCH_MEM_PER_CPU", "1G", [](auto& r) { return r.spec.mem_per_cpu_mib == 1024; }},
      {"SBATCH_MEM_PER_GPU",
       "2G",
       [](auto& r) { return r.spec.mem_per_gpu_mib == 2048; },
       {{"SBATCH_GRES", "gpu:1"}}},
      {"SBATCH_MEM_PER_NODE", "3G", [](auto& r) { return r.spec.mem_per_node_mib == 3072; }},
      {"SBATCH_NO_REQUEUE", "", [](auto& r) { return !r.spec.requeue; }},
      {"SBATCH_OPEN_MODE", "append", [](auto& r) { return r.exec.open_append; }},
      {"SBATCH_OUTPUT", "o.txt", [](auto& r) { return r.exec.stdout_pattern == "/work/x/o.txt"; }},
      {"SBATCH_OVERCOMMIT", "1", [](auto& r) { return Env(r, "SLURM_OVERCOMMIT") == "1"; }},
      {"SBATCH_PARTITION", "a,b", [](auto& r) { return r.spec.partitions.size() == 2; }},
      {"SBATCH_QOS", "high", [](auto& r) { return r.spec.qos == "high"; }},
      {"SBATCH_REQUEUE", "", [](auto& r) { return r.spec.requeue; }},
      {"SBATCH_RESERVATION", "resv", [](auto& r) { return r.spec.reservation == "resv"; }},
      {"SBATCH_SIGNAL", "B:USR1@90",
       [](auto& r) { return r.exec.signal_number == 10 && r.exec.signal_before == 90; }},
      {"SBATCH_TIMELIMIT", "1-0", [](auto& r) { return r.spec.time_limit == 86400; }},
      {"SBATCH_WAIT", "", [](auto& r) { return r.wait; }},
      {"SBATCH_DEBUG", "1", [](auto& r) { return r.ignored.empty(); }},
  };
  for (const Case& c : cases) {
    EnvironmentList env = c.more;
    env.emplace_back(c.var, c.value);
    SbatchRequest r = Parsed(Inputs({"job.sh"}, {{"job.sh", plain}}, env));
    EXPECT_TRUE(c.check(r)) << c.var << "=" << c.value;
  }
  SbatchFailure f = Failed(Inputs({"job.sh"}, {{"job.sh", plain}}, {{"SBATCH_TIMELIMIT", "abc"}}));
  EXPECT_EQ(f.text, "sbatch: error: Invalid --time specification\n");
  EXPECT_EQ(f.exit_code, 255);
}

TEST(SbatchParseTest, MemoryOptionsAreExclusiveBySource) {
  const std::string per_cpu = "#!/bin/sh\n#SBATCH --mem-per-cpu=1G\n";
  const std::string both = "#!/bin/sh\n#SBATCH --mem=1G\n#SBATCH --mem-per-cpu=1G\n";
  const std::string fatal =
      "sbatch: fatal: --mem, --mem-per-cpu, and --mem-per-gpu are mutually exclusive.\n";
  // The command line and the script count alike: two of them is an error.
  EXPECT_EQ(Failed(Inputs({"--mem=4G", "job.sh"}, {{"job.sh", per_cpu}})).text, fatal);
  EXPECT_EQ(Failed(Inputs({"job.sh"}, {{"job.sh", both}})).text, fatal);
  // One of them beats the environment.
  SbatchRequest r =
      Parsed(Inputs({"job.sh"}, {{"job.sh", per_cpu}}, {{"SBATCH_MEM_PER_NODE", "4G"}}));
  EXPECT_EQ(r.spec.mem_per_cpu_mib, 1024);
  EXPECT_EQ(r.spec.mem_per_node_mib, -1);
  r = Parsed(
      Inputs({"--mem=1G", "job.sh"}, {{"job.sh", "#!/bin/sh\n"}}, {{"SBATCH_MEM_PER_CPU", "2G"}}));
  EXPECT_EQ(r.spec.mem_per_node_mib, 1024);
  EXPECT_EQ(r.spec.mem_per_cpu_mib, -1);
  // The environment replaces a script's value and so takes it out of the count.
  r = Parsed(Inputs({"job.sh"}, {{"job.sh", both}}, {{"SBATCH_MEM_PER_CPU", "2G"}}));
  EXPECT_EQ(r.spec.mem_per_node_mib, 1024);
  EXPECT_EQ(r.spec.mem_per_cpu_mib, -1);
  EXPECT_EQ(Failed(Inputs({"job.sh"}, {{"job.sh", "#!/bin/sh\n"}},
                          {{"SBATCH_MEM_PER_CPU", "2G"}, {"SBATCH_MEM_PER_NODE", "3G"}}))
                .text,
            "sbatch: fatal: SLURM_MEM_PER_CPU, SLURM_MEM_PER_GPU, and SLURM_MEM_PER_NODE are "
            "mutually exclusive.\n");
}

TEST(SbatchParseTest, GpuRequestChecks) {
  const std::string plain = "#!/bin/sh\n";
  const std::string gres = "sbatch: error: Invalid generic resource (gres) specification\n";
  struct Case {
    std::vector<std::string> args;
    std::string text;  // "" = accepted
  };
  const Case cases[] = {
      {{"-c2", "--cpus-per-gpu=2", "--gpus=1"},
       "sbatch: error: --cpus-per-gpu is mutually exclusive with --cpus-per-task\n" + gres},
      {{"--gpus-per-task=1"},
       "sbatch: error: Failed to validate job spec. --gpus-per-task used without either --gpus "
       "or -n/--ntasks is not allowed.\n" +
           gres},
      {{"--gpus-per-task=1", "-n2"}, ""},
      // The task count also follows from a fixed node count and --ntasks-per-node.
      {{"--gpus-per-task=1", "-N2", "--ntasks-per-node=4"}, ""},
      {{"--gpus-per-task=1", "--ntasks-per-node=2"}, ""},
      {{"--gpus-per-task=1", "-N1"}, ""},
      {{"--gpus-per-task=1", "-N2-4", "--ntasks-per-node=2"},
       "sbatch: error: Failed to validate job spec. --gpus-per-task used without either --gpus "
       "or -n/--ntasks is not allowed.\n" +
           gres},
      {{"--gpus-per-task=1", "--gpus=2"}, ""},
      {{"--ntasks-per-gpu=2", "--gpus-per-task=1", "-n2"},
       "sbatch: fatal: --gpus-per-task is mutually exclusive with --ntasks-per-gpu and "
       "SLURM_NTASKS_PER_GPU\n"},
      {{"--ntasks-per-gpu=2"},
       "sbatch: error: gres_job_state_validate: --ntasks-per-tres needs either a GRES GPU "
       "specification or a node/ntask specification\n" +
           gres},
      {{"--ntasks-per-gpu=2", "--gpus=2"}, ""},
      {{"--mem-per-gpu=2G"},
       "sbatch: error: Requested mem_per_tres=gres:gpu:2048 but did not request any GPU.\n" + gres},
      {{"--mem-per-gpu=2G", "--gres=gpu:1"}, ""},
      {{"--cpus-per-gpu=2"}, ""},
      {{"--gpus=a100:x"}, gres},
      {{"--gpus-per-socket=1"},
       "sbatch: error: --gpus-per-socket option requires --sockets-per-node specification\n" +
           gres},
  };
  for (const Case& c : cases) {
    std::vector<std::string> args = c.args;
    args.push_back("job.sh");
    SbatchOutcome out = ParseSbatch(Inputs(args, {{"job.sh", plain}}));
    std::string what = c.args[0];
    if (c.text.empty()) {
      EXPECT_TRUE(std::holds_alternative<SbatchRequest>(out)) << what;
    } else if (auto* f = std::get_if<SbatchFailure>(&out)) {
      EXPECT_EQ(f->text, c.text) << what;
      EXPECT_EQ(f->exit_code, 1) << what;
    } else {
      ADD_FAILURE() << what << " was accepted";
    }
  }
  // A bare type is one GPU of it, as in Slurm.
  SbatchRequest r = Parsed(Inputs({"--gpus=a100", "job.sh"}, {{"job.sh", plain}}));
  EXPECT_EQ(r.spec.gpus, 1);
  EXPECT_EQ(r.spec.gpu_type, "a100");
}

// Errors in the order Slurm finds them, with its messages and exit statuses.
TEST(SbatchParseTest, ErrorsAndExitCodes) {
  const std::string ok = "#!/bin/sh\necho\n";
  struct Case {
    std::vector<std::string> args;
    std::string script;
    std::string text;
    int exit_code;
  };
  const std::string try_help = "Try \"sbatch --help\" for more information\n";
  const Case cases[] = {
      {{"--image=x", "job.sh"}, ok, "sbatch: unrecognized option '--image=x'\n" + try_help, 255},
      {{"-t", "1:xx", "job.sh"}, ok, "sbatch: error: Invalid --time specification\n", 255},
      // The command line is checked in order, before the script is read.
      {{"--time=abc", "--bogus", "job.sh"},
       ok,
       "sbatch: error: Invalid --time specification\n",
       255},
      {{"--bogus", "nonexist.sh"}, ok, "sbatch: unrecognized option '--bogus'\n" + try_help, 255},
      {{"nonexist.sh"}, ok, "sbatch: error: Unable to open file nonexist.sh\n", 1},
      {{"--time=abc", "job.sh"},
       "#!/bin/sh\n#SBATCH --bogus\n",
       "sbatch: error: Invalid --time specification\n",
       255},
      // Directives: in order, the getopt error after the options before it, then stray words.
      {{"job.sh"},
       "#!/bin/sh\n#SBATCH --time=abc\n#SBATCH --bogus\n",
       "sbatch: error: Invalid --time specification\n",
       255},
      {{"job.sh"},
       "#!/bin/sh\n#SBATCH --bogus\n#SBATCH --alsobogus\n",
       "sbatch: unrecognized option '--bogus'\n" + try_help,
       255},
      {{"job.sh"},
       "#!/bin/sh\n#SBATCH default: x\n",
       "sbatch: error: Invalid directive found in batch script: default:\n",
       255},
      {{"job.sh"},
       "#!/bin/sh\n#SBATCH -J one two\n",
       "sbatch: error: Invalid directive found in batch script: two\n",
       255},
      {{"job.sh"},
       "#!/bin/sh\n#SBATCH -- -J x\n",
       "sbatch: error: Invalid directive found in batch script: -J\n",
       255},
      {{"job.sh"},
       "#!/bin/sh\n#SBATCH -J\n",
       "sbatch: option requires an argument -- 'J'\n" + try_help,
       255},
      {{"job.sh"},
       "#!/bin/sh\n#SBATCH -J \"\" -p short\n#SBATCH -t 5\n",
       "sbatch: error: Invalid directive found in batch script: 5\n",
       255},
      {{"job.sh"},
       "#!/bin/sh\n#SBATCH: -N 2\n",
       "sbatch: fatal: job.sh: line 2: Unexpected `:` in [: -N 2]\n",
       1},
      {{"job.sh"},
       "#!/bin/sh\n#SBATCH -J \"unterminated\n",
       "sbatch: fatal: job.sh: line 2: Unmatched `\"` in [ \"unterminated]\n",
       1},
      {{"job.sh"},
       "#!/bin/sh\n#SBATCH --nodes=$N_nodes\n",
       "sbatch: error: \"$N_nodes\" is not a valid node count\n",
       255},
      {{"--wrap=x", "job.sh"},
       ok,
       "sbatch: error: Script arguments not permitted with --wrap option\n",
       1},
      {{"--wrap"}, ok, "sbatch: option '--wrap' requires an argument\n" + try_help, 255},
      // Values the controller judges in Slurm get its words.
      {{"--array=0-x", "job.sh"},
       ok,
       "sbatch: error: Batch job submission failed: Invalid job array specification\n",
       1},
      {{"--array=5-1", "job.sh"},
       ok,
       "sbatch: error: Batch job submission failed: Invalid job array specification\n",
       1},
      {{"--dependency=foo:1", "job.sh"},
       ok,
       "sbatch: error: Batch job submission failed: Job dependency problem\n",
       1},
      {{"--dependency=afterok:x", "job.sh"},
       ok,
       "sbatch: error: Batch job submission failed: Job dependency problem\n",
       1},
      {{"--constraint=[a|b", "job.sh"},
       ok,
       "sbatch: error: Batch job submission failed: Invalid feature specification\n",
       1},
      {{"--nodelist=node[001-3", "job.sh"},
       ok,
       "sbatch: error: Batch job submission failed: Invalid node name specified\n",
       1},
      {{"--licenses=cfs:x", "job.sh"},
       ok,
       "sbatch: error: Batch job submission failed: Invalid license specification\n",
       1},
      {{"--time=10", "--time-min=20", "job.sh"},
       ok,
       "sbatch: error: Batch job submission failed: Invalid time-min specification (exceeds "
       "job's time or other limits)\n",
       1},
      // A warning printed while reading the directives comes first.
      {{"job.sh"},
       "#!/bin/sh\n#SLURM -J a\n#SLURM --bogus\n",
       "sbatch: error: Change from #SLURM to #SBATCH in your script and verify the options are "
       "valid in sbatch\nsbatch: unrecognized option '--bogus'\n" +
           try_help,
       255},
      {{"job.sh"},
       "#!/bin/sh\n#SBATCH -J first\n#SBATCH hetjob\n#SBATCH -J second\n",
       "sbatch: error: berth does not run heterogeneous jobs (#SBATCH hetjob)\n",
       1},
  };
  for (const Case& c : cases) {
    SbatchFailure f = Failed(Inputs(c.args, {{"job.sh", c.script}}));
    EXPECT_EQ(f.text, c.text) << c.args[0] << " / " << c.script;
    EXPECT_EQ(f.exit_code, c.exit_code) << c.args[0] << " / " << c.script;
  }
}

TEST(SbatchParseTest, Arrays) {
  struct Case {
    std::string text;
    std::vector<int32_t> ids;
    int32_t max_running;
  };
  const Case cases[] = {
      {"0-15:4%2", {0, 4, 8, 12}, 2},
      {"1,3,5", {1, 3, 5}, 0},
      {"1-3,7,10-12", {1, 2, 3, 7, 10, 11, 12}, 0},
      {"0-3%1", {0, 1, 2, 3}, 1},
      {"100,200,300", {100, 200, 300}, 0},
      {"500-17000:1000%26",
       {500, 1500, 2500, 3500, 4500, 5500, 6500, 7500, 8500, 9500, 10500, 11500, 12500, 13500,
        14500, 15500, 16500},
       26},
      {"7", {7}, 0},
  };
  for (const Case& c : cases) {
    SbatchRequest r = Parsed(Inputs({"-a", c.text, "job.sh"}, {{"job.sh", "#!/bin/sh\n"}}));
    EXPECT_EQ(r.spec.array.task_ids, c.ids) << c.text;
    EXPECT_EQ(r.spec.array.max_running, c.max_running) << c.text;
    EXPECT_EQ(r.exec.stdout_pattern, "/work/x/slurm-%A_%a.out") << c.text;
  }
  for (const char* bad : {"0-x", "5-1", "-1", "0-3:0", "x", "1-3:2:1", "0-4000001"}) {
    SbatchFailure f =
        Failed(Inputs({std::string("--array=") + bad, "job.sh"}, {{"job.sh", "#!/bin/sh\n"}}));
    EXPECT_EQ(f.text,
              "sbatch: error: Batch job submission failed: Invalid job array specification\n")
        << bad;
    EXPECT_EQ(f.exit_code, 1);
  }
}

TEST(SbatchParseTest, Dependencies) {
  struct Case {
    std::string text;
    std::string canonical;  // core::FormatDependency of what was parsed
  };
  const Case cases[] = {
      {"afterok:20:21,afterany:23", "afterok:20:21,afterany:23"},
      {"afterok:20:21?afterany:23", "afterok:20:21?afterany:23"},
      {"after:7+5:8", "after:7+5:8"},
      {"afternotok:9", "afternotok:9"},
      {"aftercorr:10", "aftercorr:10"},
      {"singleton", "singleton"},
      {"afterany:12_3", "afterany:12_3"},
      {"12", "afterany:12"},  // afterany is the default type
      // berth has no burst buffers: their stage-out is done when the job ends.
      {"afterburstbuffer:5", "afterany:5"},
  };
  for (const Case& c : cases) {
    SbatchRequest r = Parsed(Inputs({"-d", c.text, "job.sh"}, {{"job.sh", "#!/bin/sh\n"}}));
    EXPECT_EQ(core::FormatDependency(r.spec.dependency), c.canonical) << c.text;
    EXPECT_EQ(Env(r, "SLURM_JOB_DEPENDENCY"), c.text);
  }
  for (const char* bad : {"foo:1", "afterok:x", "afterok", "afterok:1,afterany:2?after:3", ""}) {
    SbatchFailure f =
        Failed(Inputs({std::string("--dependency=") + bad, "job.sh"}, {{"job.sh", "#!/bin/sh\n"}}));
    EXPECT_EQ(f.text, "sbatch: error: Batch job submission failed: Job dependency problem\n")
        << bad;
    EXPECT_EQ(f.exit_code, 1);
  }
}

TEST(SbatchParseTest, HelpUsageVersion) {
  SbatchOutcome out = ParseSbatch(Inputs({"--help", "--bogus"}, {}));
  ASSERT_TRUE(std::holds_alternative<SbatchInfo>(out));
  EXPECT_EQ(std::get<SbatchInfo>(out).text.rfind("Usage: sbatch", 0), 0u);
  out = ParseSbatch(Inputs({"-V"}, {}));
  ASSERT_TRUE(std::holds_alternative<SbatchInfo>(out));
  EXPECT_EQ(std::get<SbatchInfo>(out).text, "slurm 22.05.8\n");
  // --help in a script is not acted on.
  SbatchRequest r = Parsed(Inputs({"job.sh"}, {{"job.sh", "#!/bin/sh\n#SBATCH --help\n"}}));
  EXPECT_EQ(r.spec.name, "job.sh");
}

TEST(SbatchParseTest, PyxisOptionsMakeTheJobsContainer) {
  // In a directive an unquoted '#' starts a comment, as in Slurm: pyxis's registry separator
  // needs quotes there.
  const std::string script =
      "#!/bin/sh\n#SBATCH --container-image='nvcr.io#nvidia/pytorch:24.05-py3'\n"
      "#SBATCH --container-mounts=/data:/data:ro\n";
  SbatchRequest r = Parsed(Inputs(
      {"-D", "sub", "--container-mounts", "./in:/in", "--container-env=TOKEN",
       "--no-container-mount-home", "--container-workdir=/in", "--container-name=pyt", "job.sh"},
      {{"job.sh", script}}, {{"TOKEN", "t0"}, {"PATH", "/bin"}}));
  EXPECT_EQ(nlohmann::json::parse(r.exec.container), nlohmann::json::parse(R"({
    "image": "nvcr.io#nvidia/pytorch:24.05-py3",
    "mounts": [{"source": "/data", "destination": "/data", "read_only": true},
               {"source": "/work/x/sub/in", "destination": "/in"}],
    "env": [["TOKEN", "t0"]],
    "work_dir": "/in",
    "mount_home": false,
    "name": "pyt"})"));
  // No pyxis option: no container; Slurm's own --container (an OCI bundle) is still ignored.
  EXPECT_EQ(
      Parsed(Inputs({"--container=/b", "job.sh"}, {{"job.sh", "#!/bin/sh\n"}})).exec.container, "");
  EXPECT_EQ(nlohmann::json::parse(
                Parsed(Inputs({"job.sh"},
                              {{"job.sh", "#!/bin/sh\n#SBATCH --container-image=nvcr.io#x\n"}}))
                    .exec.container)["image"],
            "nvcr.io");
  // The same value in the script and on the command line is one.
  r = Parsed(Inputs({"--container-image=nvcr.io#nvidia/pytorch:24.05-py3", "job.sh"},
                    {{"job.sh", script}}));
  EXPECT_EQ(nlohmann::json::parse(r.exec.container)["image"], "nvcr.io#nvidia/pytorch:24.05-py3");
}

TEST(SbatchParseTest, PyxisErrors) {
  const std::string plain = "#!/bin/sh\n";
  struct Case {
    std::vector<std::string> args;
    std::string script;
    std::string text;
    int exit_code;
  };
  const Case cases[] = {
      {{"--container-image=x", "--container-mounts=/tmp:", "job.sh"},
       plain,
       "sbatch: error: pyxis: --container-mounts: invalid format: /tmp:\n",
       255},
      {{"--container-image=b", "job.sh"},
       "#!/bin/sh\n#SBATCH --container-image=a\n",
       "sbatch: error: pyxis: --container-image specified multiple times\n",
       255},
      {{"--container-mounts=/a:/b", "job.sh"},
       plain,
       "sbatch: error: pyxis: --container-mounts needs --container-image or --container-name "
       "(neither is set)\n",
       1},
      {{"--container-name=pyt", "job.sh"},
       plain,
       "sbatch: error: pyxis: --container-name=pyt without --container-image: a new job has no "
       "container of that name yet\n",
       1},
      {{"--container-image=x", "--container-save=/x.sqsh", "job.sh"},
       plain,
       "sbatch: error: pyxis: --container-save is not supported by berth (a container's root is "
       "not saved to a file)\n",
       255},
      {{"--container-image=ubuntu 22.04", "job.sh"},
       plain,
       "sbatch: error: pyxis: --container-image: 'ubuntu 22.04' is not an image name (it has "
       "blanks)\n",
       255},
  };
  for (const Case& c : cases) {
    SbatchFailure f = Failed(Inputs(c.args, {{"job.sh", c.script}}));
    EXPECT_EQ(f.text, c.text) << c.args[0];
    EXPECT_EQ(f.exit_code, c.exit_code) << c.args[0];
  }
  // A bad value on the command line is found before the script is read, as in Slurm.
  EXPECT_EQ(Failed(Inputs({"--container-mounts=:", "missing.sh"}, {})).text,
            "sbatch: error: pyxis: --container-mounts: invalid format: :\n");
}

TEST(SbatchParseTest, HelpListsPyxisOptionsBeforeHelpOptions) {
  SbatchOutcome out = ParseSbatch(Inputs({"--help"}, {}));
  ASSERT_TRUE(std::holds_alternative<SbatchInfo>(out));
  const std::string& text = std::get<SbatchInfo>(out).text;
  size_t plugins = text.find("\n\nOptions provided by plugins:\n");
  size_t help = text.find("\n\nHelp options:\n");
  ASSERT_NE(plugins, std::string::npos);
  ASSERT_NE(help, std::string::npos);
  EXPECT_LT(plugins, help);
  EXPECT_NE(text.find("--container-mounts=SRC:DST[:FLAGS][,SRC:DST...]"), std::string::npos);
}

TEST(SbatchParseTest, ClientOptions) {
  const std::string plain = "#!/bin/sh\n";
  SbatchRequest r = Parsed(Inputs({"--parsable", "--test-only", "-W", "-M", "c1", "-vv", "job.sh"},
                                  {{"job.sh", plain}}));
  EXPECT_TRUE(r.parsable);
  EXPECT_TRUE(r.test_only);
  EXPECT_TRUE(r.wait);
  EXPECT_EQ(r.clusters, "c1");
  EXPECT_EQ(r.verbose, 2);
  r = Parsed(Inputs({"job.sh"}, {{"job.sh", "#!/bin/sh\n#SBATCH --parsable\n"}}));
  EXPECT_TRUE(r.parsable);
  r = Parsed(Inputs({"--hint=nomultithread", "--switches=1", "job.sh"}, {{"job.sh", plain}}));
  EXPECT_EQ(r.ignored, (std::vector<std::string>{"--hint", "--switches"}));
}

TEST(SbatchParseTest, RequestVariablesForTheJob) {
  const std::string plain = "#!/bin/sh\n";
  EnvironmentList inherited = {{"SLURM_NTASKS", "99"},
                               {"SLURM_CPUS_PER_TASK", "77"},
                               {"HOME", "/root"},
                               {"SLURM_CONF", "/etc/slurm.conf"}};
  // Nothing asked for: none of the request variables, and inherited ones are dropped.
  SbatchRequest r = Parsed(Inputs({"job.sh"}, {{"job.sh", plain}}, inherited));
  EXPECT_EQ(Env(r, "SLURM_NTASKS"), "<unset>");
  EXPECT_EQ(Env(r, "SLURM_CPUS_PER_TASK"), "<unset>");
  EXPECT_EQ(Env(r, "SLURM_MEM_PER_NODE"), "<unset>");
  EXPECT_EQ(Env(r, "SLURM_CONF"), "/etc/slurm.conf");
  EXPECT_EQ(Env(r, "HOME"), "/root");
  struct Case {
    std::vector<std::string> args;
    std::map<std::string, std::string> vars;
  };
  const Case cases[] = {
      {{"-n3"}, {{"SLURM_NTASKS", "3"}, {"SLURM_NPROCS", "3"}}},
      {{"-N2", "--ntasks-per-node=2"},
       {{"SLURM_NTASKS", "4"}, {"SLURM_NPROCS", "4"}, {"SLURM_NTASKS_PER_NODE", "2"}}},
      {{"--ntasks-per-gpu=1", "--gpus=2"},
       {{"SLURM_NTASKS", "2"}, {"SLURM_NTASKS_PER_GPU", "1"}, {"SLURM_GPUS", "2"}}},
      {{"-c", "1"}, {{"SLURM_CPUS_PER_TASK", "1"}}},
      {{"--gpus-per-node=a100:1"}, {{"SLURM_GPUS_PER_NODE", "a100:1"}}},
      {{"--gpus-per-task=1", "-n2", "--cpus-per-gpu=1", "--mem-per-gpu=100"},
       {{"SLURM_GPUS_PER_TASK", "1"}, {"SLURM_CPUS_PER_GPU", "1"}, {"SLURM_MEM_PER_GPU", "100"}}},
      {{"--mem=1G"}, {{"SLURM_MEM_PER_NODE", "1024"}}},
      {{"--mem=0"}, {{"SLURM_MEM_PER_NODE", "<unset>"}}},
      {{"--mem-per-cpu=500"}, {{"SLURM_MEM_PER_CPU", "500"}}},
      {{"-d", "singleton", "--open-mode=append"},
       {{"SLURM_JOB_DEPENDENCY", "singleton"}, {"SLURM_OPEN_MODE", "a"}}},
      {{"--export=NONE"},
       {{"SLURM_EXPORT_ENV", "NONE"},
        {"SLURM_GET_USER_ENV", "1"},
        {"HOME", "<unset>"},
        {"SLURM_CONF", "/etc/slurm.conf"}}},
      {{"--get-user-env"}, {{"SLURM_GET_USER_ENV", "1"}}},
      {{"-O", "--threads-per-core=1", "-m", "cyclic"},
       {{"SLURM_OVERCOMMIT", "1"},
        {"SLURM_THREADS_PER_CORE", "1"},
        {"SLURM_DISTRIBUTION", "cyclic"}}},
  };
  for (const Case& c : cases) {
    std::vector<std::string> args = c.args;
    args.push_back("job.sh");
    r = Parsed(Inputs(args, {{"job.sh", plain}}, inherited));
    for (const auto& [name, value] : c.vars)
      EXPECT_EQ(Env(r, name), value) << c.args[0] << " " << name;
  }
}

TEST(SbatchExportTest, Rules) {
  EnvironmentList env = {{"HOME", "/root"}, {"EDITOR", "vi"}, {"SLURM_CONF", "/c"}};
  auto names = [](const EnvironmentList& e) {
    std::map<std::string, std::string> m(e.begin(), e.end());
    return m;
  };
  using M = std::map<std::string, std::string>;
  EXPECT_EQ(names(ExportEnvironment("", env, {})), names(env));
  EXPECT_EQ(names(ExportEnvironment("ALL", env, {})), names(env));
  EXPECT_EQ(names(ExportEnvironment("NONE", env, {})), (M{{"SLURM_CONF", "/c"}}));
  EXPECT_EQ(names(ExportEnvironment("EDITOR,ARG1=test", env, {})),
            (M{{"SLURM_CONF", "/c"}, {"EDITOR", "vi"}, {"ARG1", "test"}}));
  // With ALL the caller's value wins over the one given.
  EXPECT_EQ(names(ExportEnvironment("ALL,EDITOR=/bin/emacs,X=1", env, {})),
            (M{{"HOME", "/root"}, {"EDITOR", "vi"}, {"SLURM_CONF", "/c"}, {"X", "1"}}));
  EXPECT_EQ(names(ExportEnvironment("EDITOR=/bin/emacs", env, {})),
            (M{{"SLURM_CONF", "/c"}, {"EDITOR", "/bin/emacs"}}));
  EXPECT_EQ(names(ExportEnvironment("NOSUCH", env, {})), (M{{"SLURM_CONF", "/c"}}));
  // An --export-file's variables, under the caller's environment.
  EnvironmentList file = ParseExportFile(std::string("A=1\0EDITOR=nano\0B=x=y", 21));
  EXPECT_EQ(names(file), (M{{"A", "1"}, {"EDITOR", "nano"}, {"B", "x=y"}}));
  EXPECT_EQ(
      names(ExportEnvironment("", env, file)),
      (M{{"A", "1"}, {"B", "x=y"}, {"EDITOR", "vi"}, {"HOME", "/root"}, {"SLURM_CONF", "/c"}}));
  EXPECT_EQ(names(ParseExportFile("A=1\nB=2\n")), (M{{"A", "1"}, {"B", "2"}}));
}

TEST(SbatchParseTest, ExportFileAndNodeFile) {
  SbatchRequest r = Parsed(Inputs(
      {"--export=NONE", "--export-file=vars", "-F", "hosts", "job.sh"},
      {{"job.sh", "#!/bin/sh\n"}, {"vars", std::string("A=1\0B=2", 7)}, {"hosts", "n1\nn2 n3\n"}}));
  EXPECT_EQ(Env(r, "A"), "1");
  EXPECT_EQ(Env(r, "B"), "2");
  EXPECT_EQ(r.spec.nodelist, (std::vector<std::string>{"n1", "n2", "n3"}));
}

// ---- The shared corpus against what the real Slurm 22.05 made of it.

std::string SharedDir() {
  if (const char* d = std::getenv("BERTH_SHARED_DIR")) return d;
  return std::string(BERTH_SOURCE_DIR) + "/../shared";
}

std::vector<std::string> ListDir(const std::string& dir) {
  std::vector<std::string> out;
  DIR* d = opendir(dir.c_str());
  if (d == nullptr) return out;
  while (dirent* e = readdir(d)) {
    std::string name = e->d_name;
    if (name != "." && name != "..") out.push_back(name);
  }
  closedir(d);
  std::sort(out.begin(), out.end());
  return out;
}

std::string Slurp(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  return std::string(std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>());
}

// scontrol's StdOut=/StdErr=: %j and %A the job id, %a the array's 4294967294, %x the name.
std::string AsScontrolShows(const std::string& pattern, const std::string& name) {
  std::string out;
  for (size_t i = 0; i < pattern.size(); ++i) {
    if (pattern[i] != '%' || i + 1 >= pattern.size()) {
      out += pattern[i];
      continue;
    }
    char c = pattern[++i];
    if (c == 'j' || c == 'A') {
      out += "<jobid>";
    } else if (c == 'a') {
      out += "4294967294";
    } else if (c == 'x') {
      out += name;
    } else {
      out += std::string("%") + c;
    }
  }
  return out;
}

TEST(SbatchOracleTest, SharedScriptsAsSlurmJudgedThem) {
  std::string scripts = SharedDir() + "/testdata/sbatch";
  std::string oracle = SharedDir() + "/bench/slurm/sbatch-oracle";
  std::vector<std::string> names = ListDir(scripts);
  if (names.empty()) GTEST_SKIP() << "no " << scripts;
  int compared = 0;
  for (const std::string& name : names) {
    std::string expected_text = Slurp(oracle + "/" + name + ".json");
    if (expected_text.empty()) continue;  // kept back from this repository
    nlohmann::json expected = nlohmann::json::parse(expected_text, nullptr, false);
    ASSERT_FALSE(expected.is_discarded()) << name;
    ++compared;
    // As the oracle ran it: `sbatch --hold job.sh` in a fresh directory, a clean environment.
    SbatchInputs in = Inputs({"--hold", "job.sh"}, {{"job.sh", Slurp(scripts + "/" + name)}});
    in.cwd = "<workdir>";
    SbatchOutcome out = ParseSbatch(in);
    bool accepted = std::holds_alternative<SbatchRequest>(out);
    EXPECT_EQ(accepted, expected.value("accepted", false)) << name;
    if (auto* f = std::get_if<SbatchFailure>(&out)) {
      EXPECT_EQ(f->text, expected.value("stderr", "")) << name;
      EXPECT_EQ(f->exit_code, expected.value("exit_code", 0)) << name;
    }
    auto* r = std::get_if<SbatchRequest>(&out);
    if (r == nullptr || !expected["fields"].is_object()) continue;
    EXPECT_EQ(r->warnings, expected.value("stderr", "")) << name;
    const nlohmann::json& fields = expected["fields"];
    EXPECT_EQ(r->spec.name, fields.value("JobName", "")) << name;
    EXPECT_EQ(r->spec.time_limit == kNoTime ? "UNLIMITED" : FormatTimeLimit(r->spec.time_limit),
              fields.value("TimeLimit", ""))
        << name;
    std::string partitions;
    for (const std::string& p : r->spec.partitions)
      partitions += (partitions.empty() ? "" : ",") + p;
    EXPECT_EQ(partitions.empty() ? "batch" : partitions, fields.value("Partition", "")) << name;
    EXPECT_EQ(std::to_string(r->spec.nice), fields.value("Nice", "")) << name;
    EXPECT_EQ(r->spec.requeue ? "1" : "0", fields.value("Requeue", "")) << name;
    std::string out_path = AsScontrolShows(r->exec.stdout_pattern, r->spec.name);
    EXPECT_EQ(out_path, fields.value("StdOut", "")) << name;
    std::string err_path = r->exec.stderr_pattern.empty()
                               ? out_path
                               : AsScontrolShows(r->exec.stderr_pattern, r->spec.name);
    EXPECT_EQ(err_path, fields.value("StdErr", "")) << name;
    std::string tasks = r->spec.array.empty() ? ""
                                              : core::FormatArrayTaskIds(r->spec.array.task_ids,
                                                                         r->spec.array.max_running);
    EXPECT_EQ(tasks, fields.value("ArrayTaskId", "")) << name;
  }
  EXPECT_GT(compared, 40);
}

}  // namespace
}  // namespace berth::slurm
