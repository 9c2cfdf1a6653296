#include "slurm/scontrol.h"

#include <gtest/gtest.h>
#include <stdlib.h>
#include <time.h>

#include <nlohmann/json.hpp>

namespace berth::slurm {
namespace {

using nlohmann::json;

class ScontrolGoldenTest : public ::testing::Test {
 protected:
  void SetUp() override {
    setenv("TZ", "UTC", 1);
    tzset();
  }
};

json HeldCedarJob() {
  json request = {{"nodes", 1},           {"gpus_per_node", 4},     {"ntasks_per_node", 24},
                  {"exclusive", true},    {"mem_per_node", 128000}, {"time_limit", 180},
                  {"hold", "user"},       {"user", "root"},         {"name", "job.sh"},
                  {"partition", "batch"}, {"work_dir", "/w"},       {"script", "#!/bin/sh\n"},
                  {"comment", "c1"}};
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
          {"slurm",
           {{"node_mem_mib", 2097152},
            {"gpus_in_tres", false},
            {"accounting", false},
            {"account_given", false}}}};
}

TEST_F(ScontrolGoldenTest, JobMultiLine) {
  Result<JobView> v = JobViewFromJson(HeldCedarJob(), 1700000100);
  ASSERT_TRUE(v.ok()) << v.status().ToString();
  EXPECT_EQ(FormatScontrolJob(*v, /*one_liner=*/false),
            "JobId=7720001 JobName=job.sh\n"
            "   UserId=root(0) GroupId=root(0) MCS_label=N/A\n"
            "   Priority=0 Nice=0 Account=(null) QOS=(null)\n"
            "   JobState=PENDING Reason=JobHeldUser Dependency=(null)\n"
            "   Requeue=1 Restarts=0 BatchFlag=1 Reboot=0 ExitCode=0:0\n"
            "   RunTime=00:00:00 TimeLimit=00:03:00 TimeMin=N/A\n"
            "   SubmitTime=2023-11-14T22:13:20 EligibleTime=Unknown\n"
            "   AccrueTime=Unknown\n"
            "   StartTime=Unknown EndTime=Unknown Deadline=N/A\n"
            "   SuspendTime=None SecsPreSuspend=0 LastSchedEval=2023-11-14T22:13:20 "
            "Scheduler=Main\n"
            "   Partition=batch AllocNode:Sid=login1:0\n"
            "   ReqNodeList=(null) ExcNodeList=(null)\n"
            "   NodeList=\n"
            "   NumNodes=1-1 NumCPUs=24 NumTasks=24 CPUs/Task=1 ReqB:S:C:T=0:0:*:*\n"
            "   TRES=cpu=24,mem=125G,node=1,billing=24\n"
            "   Socks/Node=* NtasksPerN:B:S:C=24:0:*:* CoreSpec=*\n"
            "   MinCPUsNode=24 MinMemoryNode=125G MinTmpDiskNode=0\n"
            "   Features=(null) DelayBoot=00:00:00\n"
            "   OverSubscribe=NO Contiguous=0 Licenses=(null) Network=(null)\n"
            "   Command=(null)\n"
            "   WorkDir=/w\n"
            "   Comment=c1 \n"
            "   StdErr=/w/slurm-7720001.out\n"
            "   StdIn=/dev/null\n"
            "   StdOut=/w/slurm-7720001.out\n"
            "   Power=\n"
            "   TresPerNode=gres:gpu:4\n"
            "   \n\n");
}

TEST_F(ScontrolGoldenTest, JobOneLinerKeepsSlurmSpacing) {
  Result<JobView> v = JobViewFromJson(HeldCedarJob(), 1700000100);
  ASSERT_TRUE(v.ok());
  std::string line = FormatScontrolJob(*v, /*one_liner=*/true);
  EXPECT_EQ(line.substr(0, 60), "JobId=7720001 JobName=job.sh UserId=root(0) GroupId=root(0) ");
  EXPECT_NE(line.find(" WorkDir=/w Comment=c1  StdErr=/w/slurm-7720001.out StdIn=/dev/null "),
            std::string::npos)
      << line;
  EXPECT_EQ(line.substr(line.size() - 31), "Power= TresPerNode=gres:gpu:4 \n");
  EXPECT_EQ(line.find('\n'), line.size() - 1);
}

TEST_F(ScontrolGoldenTest, JobDetailsAddDerivedExitCode) {
  Result<JobView> v = JobViewFromJson(HeldCedarJob(), 1700000100);
  ASSERT_TRUE(v.ok());
  std::string text = FormatScontrolJob(*v, false, /*details=*/true);
  EXPECT_NE(text.find("ExitCode=0:0\n   DerivedExitCode=0:0\n   RunTime="), std::string::npos);
}

json Node() {
  return {{"name", "gpu01"},
          {"state", "MIXED"},
          {"reason", ""},
          {"cpus", 64},
          {"alloc_cpus", 8},
          {"mem_mib", 524288},
          {"alloc_mem_mib", 65536},
          {"gpus", {"a100", "a100", "a100", "a100"}},
          {"alloc_gpus", 2},
          {"gres", json::object()},
          {"features", {"a100", "ib"}},
          {"partitions", {"gpu", "all"}},
          {"jobs", {12}},
          {"weight", 1},
          {"sockets", 2},
          {"cores_per_socket", 32},
          {"threads_per_core", 1},
          {"last_seen", 1700000000},
          {"agent_connected", true}};
}

TEST_F(ScontrolGoldenTest, Node) {
  EXPECT_EQ(FormatScontrolNode(Node(), false),
            "NodeName=gpu01 CoresPerSocket=32 \n"
            "   CPUAlloc=8 CPUEfctv=64 CPUTot=64 CPULoad=N/A\n"
            "   AvailableFeatures=a100,ib\n"
            "   ActiveFeatures=a100,ib\n"
            "   Gres=gpu:a100:4\n"
            "   NodeAddr=gpu01 NodeHostName=gpu01 Version=berth\n"
            "   RealMemory=524288 AllocMem=65536 FreeMem=N/A Sockets=2 Boards=1\n"
            "   State=MIXED ThreadsPerCore=1 TmpDisk=0 Weight=1 Owner=N/A MCS_label=N/A\n"
            "   Partitions=gpu,all\n"
            "   BootTime=None SlurmdStartTime=None\n"
            "   LastBusyTime=2023-11-14T22:13:20\n"
            "   CfgTRES=cpu=64,mem=512G,billing=64,gres/gpu=4\n"
            "   AllocTRES=cpu=8,mem=64G,billing=8,gres/gpu=2\n"
            "   CapWatts=n/a\n"
            "   CurrentWatts=0 AveWatts=0\n"
            "   ExtSensorsJoules=n/s ExtSensorsWatts=0 ExtSensorsTemp=n/s\n\n");
}

TEST_F(ScontrolGoldenTest, NodeNotRespondingAndDrained) {
  json n = Node();
  n["agent_connected"] = false;
  n["state"] = "DOWN";
  n["reason"] = "Not responding";
  n["gpus"] = json::array();
  n["alloc_cpus"] = 0;
  n["alloc_mem_mib"] = 0;
  n["alloc_gpus"] = 0;
  KeyValues f = ScontrolNodeFields(n);
  std::map<std::string, std::string> m(f.begin(), f.end());
  EXPECT_EQ(m["State"], "DOWN*");
  EXPECT_EQ(m["Gres"], "(null)");
  EXPECT_EQ(m["AllocTRES"], "");
  EXPECT_EQ(m["Version"], "(null)");
  EXPECT_EQ(f.back(), (std::pair<std::string, std::string>{"Reason", "Not responding"}));
  n["state"] = "DRAINED";
  n["agent_connected"] = true;
  f = ScontrolNodeFields(n);
  m = std::map<std::string, std::string>(f.begin(), f.end());
  EXPECT_EQ(m["State"], "IDLE+DRAIN");
  n["reservation_state"] = "MAINT";  // in an active maintenance reservation
  f = ScontrolNodeFields(n);
  m = std::map<std::string, std::string>(f.begin(), f.end());
  EXPECT_EQ(m["State"], "IDLE+DRAIN+MAINT");
  n.erase("reservation_state");
  std::string one = FormatScontrolNode(n, true);
  EXPECT_EQ(one.find("NodeName=gpu01 CoresPerSocket=32  CPUAlloc=0 "), 0u) << one;
  EXPECT_EQ(one.back(), '\n');
}

TEST_F(ScontrolGoldenTest, Partition) {
  json p = {{"name", "gpu"},         {"default", true},    {"state", "UP"},
            {"nodes", "gpu[01-04]"}, {"total_nodes", 4},   {"total_cpus", 256},
            {"total_gpus", 16},      {"max_time", 86400},  {"default_time", -1},
            {"max_nodes", 0},        {"priority_tier", 2}, {"total_mem_mib", 2097152}};
  EXPECT_EQ(FormatScontrolPartition(p, false),
            "PartitionName=gpu\n"
            "   AllowGroups=ALL AllowAccounts=ALL AllowQos=ALL\n"
            "   AllocNodes=ALL Default=YES QoS=N/A\n"
            "   DefaultTime=NONE DisableRootJobs=NO ExclusiveUser=NO GraceTime=0 Hidden=NO\n"
            "   MaxNodes=UNLIMITED MaxTime=1-00:00:00 MinNodes=0 LLN=NO "
            "MaxCPUsPerNode=UNLIMITED\n"
            "   Nodes=gpu[01-04]\n"
            "   PriorityJobFactor=1 PriorityTier=2 RootOnly=NO ReqResv=NO OverSubscribe=NO\n"
            "   OverTimeLimit=NONE PreemptMode=OFF\n"
            "   State=UP TotalCPUs=256 TotalNodes=4 SelectTypeParameters=NONE\n"
            "   JobDefaults=(null)\n"
            "   DefMemPerNode=UNLIMITED MaxMemPerNode=UNLIMITED\n"
            "   TRES=cpu=256,mem=2T,node=4,billing=256,gres/gpu=16\n\n");
  p["max_time"] = -1;
  EXPECT_NE(FormatScontrolPartition(p, true).find(" MaxTime=UNLIMITED "), std::string::npos);
}

TEST_F(ScontrolGoldenTest, Config) {
  EXPECT_EQ(FormatScontrolConfig({{"ClusterName", "oracle"}, {"SchedulerType", "sched/backfill"}},
                                 1700000000),
            "Configuration data as of 2023-11-14T22:13:20\n"
            "ClusterName             = oracle\n"
            "SchedulerType           = sched/backfill\n");
}

TEST(ScontrolUpdateTest, JobUpdates) {
  struct Case {
    std::vector<std::string> args;
    Duration current;
    std::string id;
    json body;
  };
  const std::vector<Case> cases = {
      {{"JobId=12", "TimeLimit=1:00:00"}, kInfinite, "12", {{"time_limit", 3600}}},
      {{"jobid=12_3", "timelimit=UNLIMITED"}, kInfinite, "12_3", {{"time_limit", kInfinite}}},
      {{"JobId=12", "TimeLimit=+30"}, 3600, "12", {{"time_limit", 5400}}},
      {{"JobId=12", "TimeLimit=-10"}, 3600, "12", {{"time_limit", 3000}}},
      {{"JobId=12", "Nice=-5", "Partition=a,b", "NumNodes=2-4"},
       kInfinite,
       "12",
       {{"nice", -5}, {"partition", "a,b"}, {"num_nodes", "2-4"}}},
      {{"JobId=12", "TimeMin=10", "Features=a&b", "QOS=high", "Account=x", "Comment=hi there"},
       kInfinite,
       "12",
       {{"time_min", 600},
        {"features", "a&b"},
        {"qos", "high"},
        {"account", "x"},
        {"comment", "hi there"}}},
      {{"JobId=12", "NumTasks=4", "Name=n", "Licenses=a:2", "Dependency=afterok:3"},
       kInfinite,
       "12",
       {{"num_tasks", "4"}, {"name", "n"}, {"licenses", "a:2"}, {"dependency", "afterok:3"}}},
      {{"JobId=12", "Reservation=maint"}, kInfinite, "12", {{"reservation", "maint"}}},
  };
  for (const Case& c : cases) {
    Result<std::pair<std::string, json>> u = ParseJobUpdate(c.args, c.current);
    ASSERT_TRUE(u.ok()) << c.args[1] << ": " << u.status().ToString();
    EXPECT_EQ(u->first, c.id);
    EXPECT_EQ(u->second, c.body) << u->second.dump();
  }
  EXPECT_TRUE(NeedsCurrentTimeLimit({"JobId=1", "TimeLimit=+5"}));
  EXPECT_FALSE(NeedsCurrentTimeLimit({"JobId=1", "TimeLimit=5"}));
}

TEST(ScontrolUpdateTest, JobUpdateErrors) {
  const std::vector<std::pair<std::vector<std::string>, std::string>> cases = {
      {{"TimeLimit=10"}, "No job identification provided"},
      {{"JobId=1"}, "No changes specified"},
      {{"JobId=1", "TimeLimit=1:2:3:4"}, "Invalid TimeLimit value: 1:2:3:4"},
      {{"JobId=1", "Nice=x"}, "Invalid Nice value: x"},
      {{"JobId=1", "StartTime=now"}, "Update of this parameter is not supported: StartTime=now"},
      {{"JobId=1", "bogus"}, "Invalid input: bogus\nRequest aborted"},
      {{"JobId=1", "TimeLimit=+5"}, "Invalid TimeLimit value: +5"},  // no current limit
  };
  for (const auto& [args, message] : cases) {
    Result<std::pair<std::string, json>> u = ParseJobUpdate(args, kInfinite);
    ASSERT_FALSE(u.ok()) << message;
    EXPECT_EQ(u.status().message(), message);
  }
}

TEST(ScontrolUpdateTest, NodeUpdates) {
  Result<NodeUpdate> u = ParseNodeUpdate({"NodeName=n[1-2]", "State=DRAIN", "Reason=disk bad"});
  ASSERT_TRUE(u.ok()) << u.status().ToString();
  EXPECT_EQ(u->nodes, (std::vector<std::string>{"n1", "n2"}));
  EXPECT_EQ(u->action, "drain");
  EXPECT_EQ(u->reason, "disk bad");
  for (const char* state : {"RESUME", "undrain", "IDLE"}) {
    u = ParseNodeUpdate({"nodename=n1", std::string("state=") + state});
    ASSERT_TRUE(u.ok()) << state;
    EXPECT_EQ(u->action, "resume");
  }
  u = ParseNodeUpdate({"NodeName=n1", "State=DOWN", "Reason=x"});
  ASSERT_TRUE(u.ok());
  EXPECT_EQ(u->action, "down");
  const std::vector<std::pair<std::vector<std::string>, std::string>> errors = {
      {{"NodeName=n1", "State=DRAIN"},
       "You must specify a reason when DOWNING or DRAINING a node. Request denied"},
      {{"NodeName=n1", "State=FLY"}, "Invalid node state specified"},
      {{"State=DOWN", "Reason=x"}, "No node name specified"},
      {{"NodeName=n1", "Weight=3"}, "Update of this parameter is not supported: Weight=3"},
  };
  for (const auto& [args, message] : errors) {
    Result<NodeUpdate> e = ParseNodeUpdate(args);
    ASSERT_FALSE(e.ok()) << message;
    EXPECT_EQ(e.status().message(), message);
  }
}

}  // namespace
}  // namespace berth::slurm
