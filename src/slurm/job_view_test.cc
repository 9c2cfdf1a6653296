#include "slurm/job_view.h"

#include <gtest/gtest.h>
#include <stdlib.h>
#include <time.h>

#include <map>
#include <nlohmann/json.hpp>

namespace berth::slurm {
namespace {

using nlohmann::json;

// The oracle cluster's facts (shared/bench/slurm/oracle): 256 CPUs and 2 TiB nodes, no
// DefMemPerCPU, no accounting, GPUs not a TRES.
json OracleFacts(bool account_given = false) {
  return {{"node_mem_mib", 2097152}, {"node_cpus", 256},    {"default_time_limit", 1LL << 52},
          {"gpus_in_tres", false},   {"accounting", false}, {"account_given", account_given}};
}

// A held job as the controller reports it right after `sbatch --hold`.
json HeldJob(json request, bool account_given = false) {
  request["hold"] = "user";
  request["uid"] = 0;
  request["gid"] = 0;
  request["user"] = "root";
  if (!request.contains("name")) request["name"] = "job.sh";
  if (!request.contains("partition")) request["partition"] = "batch";
  request["work_dir"] = "/w";
  request["script"] = "#!/bin/sh\ntrue\n";
  return {{"id", 7720001},
          {"state", "PENDING"},
          {"request", request},
          {"submit_time", 1700000000},
          {"eligible_time", 1700000000},
          {"start_time", -1},
          {"end_time", -1},
          {"time_limit", -1},
          {"partition", ""},
          {"restart_count", 0},
          {"exit_code", 0},
          {"term_signal", 0},
          {"submit_host", "login1"},
          {"priority", 0},
          {"slurm", OracleFacts(account_given)}};
}

std::map<std::string, std::string> Fields(const json& record) {
  Result<JobView> v = JobViewFromJson(record, 1700000100);
  EXPECT_TRUE(v.ok()) << v.status().ToString();
  std::map<std::string, std::string> m;
  if (!v.ok()) return m;
  for (const auto& [k, val] : ScontrolJobFields(*v)) m[k] = val;
  return m;
}

struct OracleCase {
  const char* name;
  json request;
  std::map<std::string, std::string> want;  // "<absent>" = the key must not be printed
};

// Requests as sbatch sends them for scripts of shared/testdata/sbatch, and what the real Slurm
// 22.05 showed (shared/bench/slurm/sbatch-oracle, with <workdir> = /w and <jobid> = 7720001).
TEST(JobViewTest, MatchesTheSlurmOracle) {
  const std::vector<OracleCase> cases = {
      {"cedar: -N1 --gres=gpu:4 --ntasks-per-node=24 --exclusive --mem=125G -t 3:00",
       {{"nodes", 1},
        {"gpus_per_node", 4},
        {"ntasks_per_node", 24},
        {"exclusive", true},
        {"mem_per_node", 128000},
        {"time_limit", 180}},
       {{"NumNodes", "1-1"},
        {"NumCPUs", "24"},
        {"NumTasks", "24"},
        {"CPUs/Task", "1"},
        {"TRES", "cpu=24,mem=125G,node=1,billing=24"},
        {"TresPerNode", "gres:gpu:4"},
        {"MinCPUsNode", "24"},
        {"MinMemoryNode", "125G"},
        {"MinMemoryCPU", "<absent>"},
        {"TimeLimit", "00:03:00"},
        {"OverSubscribe", "NO"},
        {"StdOut", "/w/slurm-7720001.out"},
        {"StdErr", "/w/slurm-7720001.out"},
        {"Account", "(null)"},
        {"QOS", "(null)"},
        {"Priority", "0"},
        {"Reason", "JobHeldUser"},
        {"NtasksPerN:B:S:C", "24:0:*:*"}}},
      {"array with %A_%a, --mem-per-cpu=50MB, 1-5%2",
       {{"nodes", 1},
        {"ntasks_per_node", 1},
        {"cpus_per_task", 1},
        {"array", "1-5%2"},
        {"mem_per_cpu", 50},
        {"stdout", "array_test_%A_%a.out"},
        {"stderr", "array_test_%A_%a.error"},
        {"name", "btialg"},
        {"time_limit", 216000}},
       {{"ArrayJobId", "7720001"},
        {"ArrayTaskId", "1-5%2"},
        {"ArrayTaskThrottle", "2"},
        {"TRES", "cpu=1,mem=50M,node=1,billing=1"},
        {"MinMemoryCPU", "50M"},
        {"MinMemoryNode", "<absent>"},
        {"TimeLimit", "2-12:00:00"},
        {"StdOut", "/w/array_test_7720001_4294967294.out"},
        {"StdErr", "/w/array_test_7720001_4294967294.error"}}},
      {"-n 32 --mem-per-cpu=2600M, no -N",
       {{"ntasks", 32}, {"mem_per_cpu", 2600}, {"account", "<set_this>"}, {"partition", "p"}},
       {{"NumNodes", "1"},
        {"NumCPUs", "32"},
        {"NumTasks", "32"},
        {"MinCPUsNode", "1"},
        {"TRES", "cpu=32,mem=83200M,node=1,billing=32"},
        {"TimeLimit", "UNLIMITED"},
        {"Partition", "p"}}},
      {"-N 2 -n 8 --mem=24000",
       {{"nodes", 2}, {"ntasks", 8}, {"mem_per_node", 24000}},
       {{"NumNodes", "2-2"},
        {"NumCPUs", "8"},
        {"TRES", "cpu=8,mem=48000M,node=2,billing=8"},
        {"MinMemoryNode", "24000M"}}},
      {"-N 30 --ntasks-per-node=8 -c 12 --exclusive: no memory asked",
       {{"nodes", 30}, {"ntasks_per_node", 8}, {"cpus_per_task", 12}, {"exclusive", true}},
       {{"NumCPUs", "2880"},
        {"NumTasks", "240"},
        {"MinCPUsNode", "96"},
        {"TRES", "cpu=2880,mem=60T,node=30,billing=2880"},
        {"MinMemoryNode", "0"}}},
      {"-N 2 alone: one task per node",
       {{"nodes", 2}, {"time_min", 7200}, {"time_limit", 172800}},
       {{"NumCPUs", "2"},
        {"NumTasks", "2"},
        {"TRES", "cpu=2,mem=4T,node=2,billing=2"},
        {"TimeMin", "02:00:00"},
        {"TimeLimit", "2-00:00:00"}}},
      {"-G rtx5000:2 --mem-per-cpu 6000",
       {{"gpus", 2}, {"gpu_type", "rtx5000"}, {"mem_per_cpu", 6000}},
       {{"TresPerJob", "gres:gpu:rtx5000:2"},
        {"TresPerNode", "<absent>"},
        {"TRES", "cpu=1,mem=6000M,node=1,billing=1"}}},
      {"-N 2 -n 2 --gpus-per-task=1 -c 4",
       {{"nodes", 2}, {"ntasks", 2}, {"gpus_per_task", 1}, {"cpus_per_task", 4}},
       {{"NumCPUs", "8"}, {"MinCPUsNode", "4"}, {"TresPerTask", "gres:gpu:1"}}},
      {"--gpus-per-node=4 --ntasks-per-gpu=1 -n 4 -N 1, licence, constraint",
       {{"nodes", 1},
        {"ntasks", 4},
        {"gpus_per_node", 4},
        {"ntasks_per_gpu", 1},
        {"licenses", {{"SCRATCH", 1}}},
        {"constraint", "gpu"},
        {"stdout", "%j.out"}},
       {{"NumCPUs", "4"},
        {"TresPerNode", "gres:gpu:4"},
        {"NtasksPerTRES", "1"},
        {"Licenses", "SCRATCH"},
        {"Features", "gpu"},
        {"StdOut", "/w/7720001.out"}}},
      {"-A PROROK-SL3-GPU --no-requeue --gres=gpu:1 -c 3",
       {{"account", "PROROK-SL3-GPU"},
        {"requeue", false},
        {"nodes", 1},
        {"ntasks", 1},
        {"ntasks_per_node", 1},
        {"gpus_per_node", 1},
        {"cpus_per_task", 3},
        {"mail_type", "FAIL"}},
       {{"Account", "prorok-sl3-gpu"},
        {"Requeue", "0"},
        {"MinCPUsNode", "3"},
        {"MailUser", "root"},
        {"MailType", "FAIL"}}},
      {"--oversubscribe --exclude, %x/%J/%N kept or expanded",
       {{"oversubscribe", true},
        {"exclude", "cnode[212,213,240,260,284]"},
        {"name", "llmc"},
        {"stdout", "/out/%x_%j_%t.log"},
        {"stderr", "logs/job-%J.%N.err"},
        {"mail_type", "ALL"},
        {"mail_user", "a@b.c"},
        {"nice", 10000}},
       {{"OverSubscribe", "YES"},
        {"ExcNodeList", "cnode[212-213,240,260,284]"},
        {"StdOut", "/out/llmc_7720001_%t.log"},
        {"StdErr", "/w/logs/job-%J.%N.err"},
        {"MailType", "INVALID_DEPEND,BEGIN,END,FAIL,REQUEUE,STAGE_OUT"},
        {"MailUser", "a@b.c"},
        {"Nice", "10000"}}},
  };
  for (const OracleCase& c : cases) {
    bool account_given = c.request.contains("account");
    std::map<std::string, std::string> got = Fields(HeldJob(c.request, account_given));
    for (const auto& [key, want] : c.want) {
      if (want == "<absent>") {
        EXPECT_EQ(got.count(key), 0u) << c.name << ": " << key << "=" << got[key];
      } else {
        EXPECT_EQ(got[key], want) << c.name << ": " << key;
      }
    }
  }
}

class JobViewGoldenTest : public ::testing::Test {
 protected:
  void SetUp() override {
    setenv("TZ", "UTC", 1);
    tzset();
  }
};

std::string OneLine(const JobView& v) {
  std::string out;
  for (const auto& [k, val] : ScontrolJobFields(v)) out += (out.empty() ? "" : " ") + k + "=" + val;
  return out;
}

TEST_F(JobViewGoldenTest, HeldJobOneLine) {
  json r = HeldJob({{"nodes", 1},
                    {"gpus_per_node", 1},
                    {"mem_per_node", 4096},
                    {"time_limit", 300},
                    {"name", "torch-test"},
                    {"qos", "gpu_priority"},
                    {"comment", "laion"}});
  Result<JobView> v = JobViewFromJson(r, 1700000100);
  ASSERT_TRUE(v.ok()) << v.status().ToString();
  EXPECT_EQ(
      OneLine(*v),
      "JobId=7720001 JobName=torch-test UserId=root(0) GroupId=root(0) MCS_label=N/A Priority=0 "
      "Nice=0 Account=(null) QOS=(null) JobState=PENDING Reason=JobHeldUser Dependency=(null) "
      "Requeue=1 Restarts=0 BatchFlag=1 Reboot=0 ExitCode=0:0 RunTime=00:00:00 "
      "TimeLimit=00:05:00 TimeMin=N/A SubmitTime=2023-11-14T22:13:20 EligibleTime=Unknown "
      "AccrueTime=Unknown StartTime=Unknown EndTime=Unknown Deadline=N/A SuspendTime=None "
      "SecsPreSuspend=0 LastSchedEval=2023-11-14T22:13:20 Scheduler=Main Partition=batch "
      "AllocNode:Sid=login1:0 ReqNodeList=(null) ExcNodeList=(null) NodeList= NumNodes=1-1 "
      "NumCPUs=1 NumTasks=1 CPUs/Task=1 ReqB:S:C:T=0:0:*:* TRES=cpu=1,mem=4G,node=1,billing=1 "
      "Socks/Node=* NtasksPerN:B:S:C=0:0:*:* CoreSpec=* MinCPUsNode=1 MinMemoryNode=4G "
      "MinTmpDiskNode=0 Features=(null) DelayBoot=00:00:00 OverSubscribe=OK Contiguous=0 "
      "Licenses=(null) Network=(null) Command=(null) WorkDir=/w Comment=laion "
      "StdErr=/w/slurm-7720001.out StdIn=/dev/null StdOut=/w/slurm-7720001.out Power= "
      "TresPerNode=gres:gpu:1");
}

TEST_F(JobViewGoldenTest, RunningJob) {
  json r =
      HeldJob({{"ntasks", 2}, {"gpus_per_node", 2}, {"gpu_type", "h100"}, {"time_limit", 3600}});
  r["request"].erase("hold");
  r["state"] = "RUNNING";
  r["partition"] = "gpu";
  r["start_time"] = 1700000000;
  r["time_limit"] = 3600;
  r["priority"] = 4321;
  r["slurm"]["gpus_in_tres"] = true;
  r["allocation"] = {
      {"nodes",
       {{{"node", "g2"}, {"cpus", 1}, {"mem_mib", 1024}, {"tasks", 1}, {"gpus", {0}}},
        {{"node", "g1"}, {"cpus", 1}, {"mem_mib", 1024}, {"tasks", 1}, {"gpus", {1}}}}},
      {"licenses", json::object()}};
  r["usage"] = {{"cpu_seconds", 50.0}, {"max_rss_mib", 300}, {"gpu_utilization", 40.0}};
  Result<JobView> v = JobViewFromJson(r, 1700000100);
  ASSERT_TRUE(v.ok()) << v.status().ToString();
  EXPECT_EQ(v->state_compact, "R");
  EXPECT_EQ(v->run_time, 100);
  EXPECT_EQ(v->cpu_time, 200);
  EXPECT_EQ(v->nodes, "g[1-2]");
  EXPECT_EQ(v->batch_host, "g2");
  std::map<std::string, std::string> m;
  for (const auto& [k, val] : ScontrolJobFields(*v)) m[k] = val;
  EXPECT_EQ(m["JobState"], "RUNNING");
  EXPECT_EQ(m["Reason"], "None");
  EXPECT_EQ(m["Priority"], "4321");
  EXPECT_EQ(m["RunTime"], "00:01:40");
  EXPECT_EQ(m["Partition"], "gpu");
  EXPECT_EQ(m["NodeList"], "g[1-2]");
  EXPECT_EQ(m["BatchHost"], "g2");
  EXPECT_EQ(m["NumNodes"], "2");
  EXPECT_EQ(m["NumCPUs"], "2");
  EXPECT_EQ(m["StartTime"], "2023-11-14T22:13:20");
  EXPECT_EQ(m["EndTime"], "2023-11-14T23:13:20");
  EXPECT_EQ(m["TRES"], "cpu=2,mem=2G,node=2,billing=2,gres/gpu=2,gres/gpu:h100=2");
  EXPECT_EQ(m["TresPerNode"], "gres:gpu:h100:2");
}

// scancel's list: the views of a list answer's records, read one at a time, in order; a record
// that is not JSON or not a job is skipped and counted; a broken list is refused.
TEST(JobViewTest, ViewsOfAListAnswer) {
  json a = HeldJob({{"name", "a"}});
  json b = HeldJob({{"name", "b}\"]"}});
  b["id"] = 7720002;
  const std::string text = "{\"jobs\":[" + a.dump() + ",{\"id\":1}, {\"id\":nul}, " + b.dump() +
                           "], \"more\": {\"jobs\": []}}";
  int skipped = -1;
  Result<std::vector<JobView>> v = JobViewsFromList(text, 0, &skipped);
  ASSERT_TRUE(v.ok()) << v.status().ToString();
  ASSERT_EQ(v->size(), 2u);
  EXPECT_EQ((*v)[0].display_id, "7720001");
  EXPECT_EQ((*v)[1].name, "b}\"]");
  EXPECT_EQ(skipped, 2);
  EXPECT_FALSE(JobViewsFromList("{\"jobs\":[" + a.dump(), 0).ok());
  Result<std::vector<JobView>> none = JobViewsFromList("{\"jobs\":[]}", 0);
  ASSERT_TRUE(none.ok());
  EXPECT_TRUE(none->empty());
}

TEST(JobViewTest, IdentityAndArrays) {
  json master = HeldJob({{"array", "0,8,16"}});
  Result<JobView> v = JobViewFromJson(master, 0);
  ASSERT_TRUE(v.ok());
  EXPECT_EQ(v->display_id, "7720001_[0,8,16]");
  EXPECT_EQ(ArrayTaskIdText(*v), "0,8,16");

  json task = HeldJob({{"name", "t"}, {"stdout", "o-%A_%a-%3a.txt"}});
  task["id"] = 7720005;
  task["array_job_id"] = 7720001;
  task["array_task_id"] = 8;
  v = JobViewFromJson(task, 0);
  ASSERT_TRUE(v.ok());
  EXPECT_EQ(v->display_id, "7720001_8");
  EXPECT_EQ(v->std_out, "/w/o-7720001_8-008.txt");
  EXPECT_EQ(ArrayTaskIdText(*v), "8");

  json plain = HeldJob({});
  v = JobViewFromJson(plain, 0);
  ASSERT_TRUE(v.ok());
  EXPECT_EQ(v->display_id, "7720001");
  EXPECT_EQ(ArrayTaskIdText(*v), "");
  EXPECT_EQ(v->state_compact, "PD");
}

TEST(JobViewTest, FinishedJobExitCodeAndTimes) {
  json r = HeldJob({{"time_limit", 600}});
  r["request"].erase("hold");
  r["state"] = "FAILED";
  r["start_time"] = 1000;
  r["end_time"] = 1090;
  r["exit_code"] = 3;
  r["term_signal"] = 0;
  Result<JobView> v = JobViewFromJson(r, 5000);
  ASSERT_TRUE(v.ok());
  EXPECT_EQ(v->run_time, 90);
  EXPECT_EQ(ExitCodeText(*v), "3:0");
  EXPECT_EQ(v->state_compact, "F");
  EXPECT_EQ(v->end_time, 1090);
}

TEST(JobViewTest, MemoryDefaultsFromTheCluster) {
  json r = HeldJob({{"ntasks", 4}});
  r["slurm"]["def_mem_per_cpu_mib"] = 2048;
  std::map<std::string, std::string> m = Fields(r);
  EXPECT_EQ(m["MinMemoryCPU"], "2G");
  EXPECT_EQ(m["TRES"], "cpu=4,mem=8G,node=1,billing=4");
  r["request"]["mem_per_node"] = 0;  // --mem=0: the whole node
  m = Fields(r);
  EXPECT_EQ(m["MinMemoryNode"], "0");
  EXPECT_EQ(m["TRES"], "cpu=4,mem=2T,node=1,billing=4");
}

// Slurm 22.05.8 (sbatch --hold, scontrol show job): memory that is a whole number of half GiB
// shows in GiB with two decimals, other amounts stay in MiB.
TEST(JobViewTest, TresMemoryInExactUnits) {
  const struct {
    int64_t mem_mib;
    const char* tres_mem;
  } cases[] = {{64000, "62.50G"}, {65000, "65000M"},     {1536, "1.50G"},    {1280, "1280M"},
               {64512, "63G"},    {1048064, "1023.50G"}, {1572864, "1.50T"}, {1600000, "1562.50G"}};
  for (const auto& c : cases) {
    std::map<std::string, std::string> m = Fields(HeldJob({{"mem_per_node", c.mem_mib}}));
    EXPECT_EQ(m["TRES"], "cpu=1,mem=" + std::string(c.tres_mem) + ",node=1,billing=1") << c.mem_mib;
    EXPECT_EQ(m["MinMemoryNode"], c.tres_mem) << c.mem_mib;
  }
  std::map<std::string, std::string> m =
      Fields(HeldJob({{"ntasks", 2}, {"mem_per_cpu", 1280}}));  // --mem-per-cpu=1280 -n 2
  EXPECT_EQ(m["TRES"], "cpu=2,mem=2.50G,node=1,billing=2");
  EXPECT_EQ(m["MinMemoryCPU"], "1280M");
}

// What the real Slurm 22.05.8 recorded on the oracle cluster (256-CPU nodes) for each request.
TEST(JobViewTest, OvercommitSocketsAndNodeEstimates) {
  struct Case {
    const char* name;
    json request;
    std::map<std::string, std::string> want;
  };
  const Case cases[] = {
      // man sbatch -O: "a job allocation ... will be allocated one CPU per node"; slurmctld
      // records the node count as its CPU count, --exclusive or not.
      {"-O --exclusive -N2 -n4",
       {{"overcommit", true}, {"exclusive", true}, {"nodes", 2}, {"ntasks", 4}},
       {{"NumNodes", "2-2"},
        {"NumCPUs", "2"},
        {"NumTasks", "4"},
        {"TRES", "cpu=2,mem=4T,node=2,billing=2"}}},
      {"-O -N2 -n4 -c8",
       {{"overcommit", true}, {"nodes", 2}, {"ntasks", 4}, {"cpus_per_task", 8}},
       {{"NumCPUs", "2"}, {"MinCPUsNode", "8"}, {"TRES", "cpu=2,mem=4T,node=2,billing=2"}}},
      {"-O -n8", {{"overcommit", true}, {"ntasks", 8}}, {{"NumNodes", "1"}, {"NumCPUs", "1"}}},
      // --ntasks-per-socket and --ntasks-per-core fill the S and C of NtasksPerN:B:S:C.
      {"--ntasks-per-socket=2 -N1",
       {{"ntasks_per_socket", 2}, {"nodes", 1}},
       {{"NtasksPerN:B:S:C", "0:0:2:*"}}},
      {"-N2 --ntasks-per-node=4 --ntasks-per-socket=2 --ntasks-per-core=1",
       {{"nodes", 2}, {"ntasks_per_node", 4}, {"ntasks_per_socket", 2}, {"ntasks_per_core", 1}},
       {{"NtasksPerN:B:S:C", "4:0:2:1"}, {"NumCPUs", "8"}}},
      // Without -N, NumNodes is the tasks over as many a node as its CPUs hold (at least one).
      {"-c300", {{"cpus_per_task", 300}}, {{"NumNodes", "1"}, {"NumCPUs", "300"}}},
      {"-n3 -c300",
       {{"ntasks", 3}, {"cpus_per_task", 300}},
       {{"NumNodes", "3"}, {"NumCPUs", "900"}, {"TRES", "cpu=900,mem=2T,node=1,billing=900"}}},
      {"-n3 -c100", {{"ntasks", 3}, {"cpus_per_task", 100}}, {{"NumNodes", "2"}}},
      {"-n600", {{"ntasks", 600}}, {{"NumNodes", "3"}, {"NumCPUs", "600"}}},
      {"-n2 -c300 -N1",
       {{"ntasks", 2}, {"cpus_per_task", 300}, {"nodes", 1}},
       {{"NumNodes", "1-1"}, {"NumCPUs", "600"}}},
  };
  for (const Case& c : cases) {
    std::map<std::string, std::string> m = Fields(HeldJob(c.request));
    for (const auto& [k, want] : c.want) EXPECT_EQ(m[k], want) << c.name << ": " << k;
  }
}

// squeue shows an array's pending remainder as "1_[6-9%3]" (man squeue, %i: "<jobid>_[<taskids>]"
// for pending array tasks); berth's own `berth jobs` and the demo print the same.
TEST(JobViewTest, DisplayJobIdOfArrays) {
  json master = HeldJob({{"array", "6-9%3"}});
  master["id"] = 1;
  master["array_job_id"] = 1;
  master["array_task_id"] = -1;
  EXPECT_EQ(DisplayJobId(master), "1_[6-9%3]");
  EXPECT_EQ(Fields(master)["ArrayTaskId"], "6-9%3");
  master["request"]["array"] = "500-17000:1000%26";
  EXPECT_EQ(DisplayJobId(master), "1_[500-16500:1000%26]");
  EXPECT_EQ(Fields(master)["ArrayTaskId"], "500-16500:1000%26");
  json task = HeldJob({});
  task["id"] = 4;
  task["array_job_id"] = 1;
  task["array_task_id"] = 3;
  EXPECT_EQ(DisplayJobId(task), "1_3");
  EXPECT_EQ(DisplayJobId(HeldJob({})), "7720001");
}

TEST(JobViewTest, AccountingOnShowsQosAndDefaultAccount) {
  json r = HeldJob({{"qos", "high"}, {"account", "physics"}}, true);
  r["slurm"]["accounting"] = true;
  std::map<std::string, std::string> m = Fields(r);
  EXPECT_EQ(m["QOS"], "high");
  EXPECT_EQ(m["Account"], "physics");
}

TEST(JobViewTest, BadRecords) {
  EXPECT_FALSE(JobViewFromJson(json::array(), 0).ok());
  EXPECT_FALSE(JobViewFromJson({{"id", 1}}, 0).ok());
  EXPECT_FALSE(
      JobViewFromJson({{"id", "x"}, {"state", "PENDING"}, {"request", json::object()}}, 0).ok());
  json bad = HeldJob({});
  bad["request"]["nodes"] = "many";
  EXPECT_FALSE(JobViewFromJson(bad, 0).ok());
  json minimal = {{"id", 5}, {"state", "PENDING"}, {"request", json::object()}};
  EXPECT_TRUE(JobViewFromJson(minimal, 0).ok());
}

TEST(JobViewTest, SlurmTimeText) {
  setenv("TZ", "UTC", 1);
  tzset();
  EXPECT_EQ(SlurmTimeText(kNoTime), "Unknown");
  EXPECT_EQ(SlurmTimeText(0), "Unknown");
  EXPECT_EQ(SlurmTimeText(1764669337), "2025-12-02T09:55:37");
}

}  // namespace
}  // namespace berth::slurm
