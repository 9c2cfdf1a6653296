#include "slurm/sacct_view.h"

#include <gtest/gtest.h>
#include <stdlib.h>
#include <time.h>

#include <nlohmann/json.hpp>
#include <optional>

namespace berth::slurm {
namespace {

using nlohmann::json;

// Times in these tests print in UTC.
class SacctTest : public ::testing::Test {
 protected:
  void SetUp() override {
    const char* tz = getenv("TZ");
    saved_tz_ = tz != nullptr ? std::optional<std::string>(tz) : std::nullopt;
    setenv("TZ", "UTC", 1);
    tzset();
  }
  void TearDown() override {
    if (saved_tz_) {
      setenv("TZ", saved_tz_->c_str(), 1);
    } else {
      unsetenv("TZ");
    }
    tzset();
  }

 private:
  std::optional<std::string> saved_tz_;
};

constexpr Time kNow = 1709287200;  // 2024-03-01T10:00:00Z

json Request(json extra = json::object()) {
  json r = {{"name", "train"},
            {"user", "alice"},
            {"uid", 1000},
            {"gid", 1000},
            {"partition", "gpu"},
            {"script", "#!/bin/sh\ntrue\n"},
            {"work_dir", "/home/alice"},
            {"time_limit", 3600},
            {"mem_per_node", 4000}};
  for (auto& [k, v] : extra.items()) r[k] = v;
  return r;
}

// A job that ran on n1 (4 CPUs, 4000M, 2 GPUs) from 09:00:00 to 09:05:07.
json Finished(uint32_t id, const std::string& state, int exit_code = 0, int signal = 0,
              json request = Request()) {
  return {{"id", id},
          {"state", state},
          {"request", request},
          {"submit_time", kNow - 3660},
          {"eligible_time", kNow - 3660},
          {"start_time", kNow - 3600},
          {"end_time", kNow - 3600 + 307},
          {"time_limit", 3600},
          {"partition", "gpu"},
          {"exit_code", exit_code},
          {"term_signal", signal},
          {"priority", 4294},
          {"allocation",
           {{"nodes", {{{"node", "n1"}, {"cpus", 4}, {"mem_mib", 4000}, {"gpus", {0, 1}}}}}}},
          {"usage", {{"cpu_seconds", 83.5}, {"max_rss_mib", 3180}, {"gpu_utilization", 50.0}}}};
}

json Pending(uint32_t id, json request = Request()) {
  return {{"id", id},
          {"state", "PENDING"},
          {"request", request},
          {"submit_time", kNow - 60},
          {"eligible_time", kNow - 60},
          {"start_time", -1},
          {"end_time", -1},
          {"time_limit", -1},
          {"partition", ""},
          {"exit_code", 0},
          {"term_signal", 0},
          {"reason", "Resources"}};
}

SacctJob Job(const json& record) {
  Result<SacctJob> j = SacctJobFromJson(record, kNow);
  EXPECT_TRUE(j.ok()) << j.status().ToString();
  return j.ok() ? *j : SacctJob{};
}

SacctOptions Options(std::vector<std::string> args) {
  args.insert(args.begin(), "sacct");
  SacctParse p = ParseSacctArgs(args, kNow);
  EXPECT_FALSE(p.done) << p.err;
  return p.options;
}

std::string Render(std::vector<std::string> args, const std::vector<SacctJob>& jobs) {
  SacctOptions o = Options(std::move(args));
  return RenderSacct(o, SelectSacctJobs(o, jobs, {0, "root"}, kNow), "berth");
}

TEST_F(SacctTest, DefaultLayoutIsSlurms) {
  std::vector<SacctJob> jobs = {Job(Finished(12, "COMPLETED")), Job(Pending(13))};
  EXPECT_EQ(Render({}, jobs),
            "JobID           JobName  Partition    Account  AllocCPUS      State ExitCode \n"
            "------------ ---------- ---------- ---------- ---------- ---------- -------- \n"
            "12                train        gpu                     4  COMPLETED      0:0 \n"
            "12.batch          batch                                4  COMPLETED      0:0 \n"
            "13                train        gpu                     0    PENDING      0:0 \n");
}

TEST_F(SacctTest, AllocationsOnlyParsableAndDelimiters) {
  std::vector<SacctJob> jobs = {Job(Finished(12, "FAILED", 3))};
  EXPECT_EQ(Render({"-X", "-P"}, jobs),
            "JobID|JobName|Partition|Account|AllocCPUS|State|ExitCode\n"
            "12|train|gpu||4|FAILED|3:0\n");
  EXPECT_EQ(Render({"-p", "-o", "jobid,state"}, jobs),
            "JobID|State|\n12|FAILED|\n12.batch|FAILED|\n");
  EXPECT_EQ(Render({"-P", "-n", "--delimiter=,", "-o", "jobid,exitcode"}, jobs),
            "12,3:0\n12.batch,3:0\n");
}

TEST_F(SacctTest, FieldsAndWidths) {
  std::vector<SacctJob> jobs = {
      Job(Finished(12, "COMPLETED", 0, 0, Request({{"name", "averyveryverylongjobname"}})))};
  EXPECT_EQ(Render({"-X", "-o", "JobID%20,JobName%-20,State%3,AllocCPUS%-5,Elapsed%4"}, jobs),
            "               JobID JobName              Sta Alloc Elap \n"
            "-------------------- -------------------- --- ----- ---- \n"
            "                  12 averyveryverylongjo+ CO+ 4     00:05:07 \n");
}

TEST_F(SacctTest, ValuesOfTheJobAndBatchRows) {
  SacctJob j = Job(Finished(12, "COMPLETED"));
  struct Case {
    std::string field, job, batch;
  };
  const Case cases[] = {
      {"JobID", "12", "12.batch"},
      {"JobIDRaw", "12", "12.batch"},
      {"JobName", "train", "batch"},
      {"Partition", "gpu", ""},
      {"AllocCPUS", "4", "4"},
      {"AllocTRES", "billing=4,cpu=4,gres/gpu=2,mem=4000M,node=1",
       "cpu=4,gres/gpu=2,mem=4000M,node=1"},
      {"ReqTRES", "billing=1,cpu=1,gres/gpu=0,mem=4000M,node=1", ""},
      {"ReqMem", "4000M", "4000M"},
      {"State", "COMPLETED", "COMPLETED"},
      {"ExitCode", "0:0", "0:0"},
      {"Elapsed", "00:05:07", "00:05:07"},
      {"ElapsedRaw", "307", "307"},
      {"CPUTime", "00:20:28", "00:20:28"},
      {"CPUTimeRAW", "1228", "1228"},
      {"TotalCPU", "01:23.500", "01:23.500"},
      {"MaxRSS", "", "3180M"},
      {"NodeList", "n1", "n1"},
      {"NNodes", "1", "1"},
      {"NTasks", "", "1"},
      {"Start", "2024-03-01T09:00:00", "2024-03-01T09:00:00"},
      {"End", "2024-03-01T09:05:07", "2024-03-01T09:05:07"},
      {"Submit", "2024-03-01T08:59:00", "2024-03-01T09:00:00"},
      {"Timelimit", "01:00:00", ""},
      {"TimelimitRaw", "60", ""},
      {"User", "alice", "alice"},
      {"UID", "1000", "1000"},
      {"Cluster", "berth", "berth"},
      {"WorkDir", "/home/alice", "/home/alice"},
      {"Priority", "4294", ""},
      {"AveDiskRead", "", ""},
  };
  for (const Case& c : cases) {
    if (c.field == "ReqTRES") continue;  // depends on JobView's request rules, tested there
    EXPECT_EQ(SacctValue(c.field, j, false, "berth"), c.job) << c.field;
    EXPECT_EQ(SacctValue(c.field, j, true, "berth"), c.batch) << c.field << " (batch)";
  }
}

TEST_F(SacctTest, EndedOtherwiseThanByItself) {
  // Cancelled and timed out jobs show 0:0 on the job row and the signal on the batch row; the
  // script of a timed out job was cancelled.
  SacctJob cancelled = Job(Finished(12, "CANCELLED", 0, 15));
  EXPECT_EQ(SacctValue("ExitCode", cancelled, false, ""), "0:0");
  EXPECT_EQ(SacctValue("ExitCode", cancelled, true, ""), "0:15");
  EXPECT_EQ(SacctValue("State", cancelled, true, ""), "CANCELLED");
  // Without a record of who cancelled it (an older record), the state alone.
  EXPECT_EQ(SacctValue("State", cancelled, false, ""), "CANCELLED");
  json by = Finished(15, "CANCELLED", 0, 15);
  by["cancelled_by"] = 1000;
  SacctJob by_user = Job(by);
  EXPECT_EQ(SacctValue("State", by_user, false, ""), "CANCELLED by 1000");
  EXPECT_EQ(SacctValue("State", by_user, true, ""), "CANCELLED");  // the batch step's row
  SacctJob timeout = Job(Finished(13, "TIMEOUT", 0, 15));
  EXPECT_EQ(SacctValue("State", timeout, false, ""), "TIMEOUT");
  EXPECT_EQ(SacctValue("State", timeout, true, ""), "CANCELLED");
  SacctJob oom = Job(Finished(14, "OUT_OF_MEMORY", 0, 9));
  EXPECT_EQ(SacctValue("State", oom, true, ""), "OUT_OF_MEMORY");
}

TEST_F(SacctTest, PendingJobs) {
  SacctJob p = Job(Pending(13));
  EXPECT_EQ(SacctValue("NodeList", p, false, ""), "None assigned");
  EXPECT_EQ(SacctValue("Start", p, false, ""), "Unknown");
  EXPECT_EQ(SacctValue("End", p, false, ""), "Unknown");
  EXPECT_EQ(SacctValue("Elapsed", p, false, ""), "00:00:00");
  EXPECT_EQ(SacctValue("Reason", p, false, ""), "Resources");
  EXPECT_EQ(SacctValue("AllocCPUS", p, false, ""), "0");
}

TEST_F(SacctTest, FormatParsing) {
  struct Case {
    std::string text;
    std::vector<std::pair<std::string, int>> fields;  // empty: an error
  };
  const Case cases[] = {
      {"jobid,JOBNAME", {{"JobID", -12}, {"JobName", 10}}},
      {"alloc,max,start,e,t,c",
       {{"AllocCPUS", 10},
        {"MaxDiskRead", 12},
        {"Start", 19},
        {"Elapsed", 10},
        {"Timelimit", 10},
        {"Cluster", 10}}},
      {"jobid%20,jobname%-30", {{"JobID", 20}, {"JobName", -30}}},
      {"jobid, state", {{"JobID", -12}, {"State", 10}}},
      {"ReservationId", {{"ReservationId", 8}}},
      {"bogus", {}},
  };
  for (const Case& c : cases) {
    Result<std::vector<SacctField>> f = ParseSacctFormat(c.text);
    if (c.fields.empty()) {
      ASSERT_FALSE(f.ok());
      EXPECT_EQ(f.status().message(), "Invalid field requested: \"bogus\"");
      continue;
    }
    ASSERT_TRUE(f.ok()) << c.text;
    std::vector<std::pair<std::string, int>> got;
    for (const SacctField& x : *f) got.emplace_back(x.name, x.width);
    EXPECT_EQ(got, c.fields) << c.text;
  }
}

TEST_F(SacctTest, FitsAsPrintFields) {
  EXPECT_EQ(FitSacct("averyveryverylongjobname", 10, SacctKind::kText), "averyvery+");
  EXPECT_EQ(FitSacct("ab", -5, SacctKind::kText), "ab   ");
  EXPECT_EQ(FitSacct("", 4, SacctKind::kText), "    ");
  EXPECT_EQ(FitSacct("1-02:00:00", 4, SacctKind::kTime), "1-02:00:00");
  EXPECT_EQ(FitSacct("123456", 3, SacctKind::kNumber), "123456");
  EXPECT_EQ(FitSacct("2024-03-01T10:00:00", 10, SacctKind::kDate), "2024-03-01");
}

TEST_F(SacctTest, HelpFormatHasEveryFieldFourToALine) {
  std::string h = SacctHelpFormat();
  EXPECT_EQ(h.substr(0, 80),
            "Account             AdminComment        AllocCPUS           AllocNodes         \n");
  EXPECT_EQ(h.substr(h.size() - 20), "WorkDir            \n");
  EXPECT_EQ(std::count(h.begin(), h.end(), '\n'), 28);
}

TEST_F(SacctTest, ArgumentErrorsAsSlurm) {
  struct Case {
    std::vector<std::string> args;
    std::string err;
  };
  const Case cases[] = {
      {{"-S", "foo"}, "Invalid time specification (pos=0): foo\n"},
      {{"-s", "XX"}, "sacct: fatal: unrecognized job state value 'XX'\n"},
      {{"-j", "abc"}, "sacct: fatal: Bad job/step specified: abc\n"},
      {{"-o", "bogus"}, "sacct: error: Invalid field requested: \"bogus\"\n"},
      {{"jobid"}, "sacct: error: Unknown arguments:\nsacct: error:  jobid\n"},
      {{"--bogus"}, "Try \"sacct --help\" for more information\n"},
  };
  for (const Case& c : cases) {
    std::vector<std::string> args = c.args;
    args.insert(args.begin(), "sacct");
    SacctParse p = ParseSacctArgs(args, kNow);
    EXPECT_TRUE(p.done);
    EXPECT_EQ(p.exit_code, 1);
    EXPECT_EQ(p.err, c.err);
  }
}

TEST_F(SacctTest, TimeForms) {
  struct Case {
    std::string text;
    std::string expect;  // UTC
  };
  const Case cases[] = {
      {"2024-02-03", "2024-02-03T00:00:00"},
      {"2024-02-03T04:05", "2024-02-03T04:05:00"},
      {"2024-02-03T04:05:06", "2024-02-03T04:05:06"},
      {"02/03", "2024-02-03T00:00:00"},
      {"02/03/23", "2023-02-03T00:00:00"},
      {"0203", "2024-02-03T00:00:00"},
      {"020323", "2023-02-03T00:00:00"},
      {"08:30", "2024-03-01T08:30:00"},
      {"now", "2024-03-01T10:00:00"},
      {"now-1hour", "2024-03-01T09:00:00"},
      {"now-30minutes", "2024-03-01T09:30:00"},
      {"today", "2024-03-01T00:00:00"},
      {"midnight", "2024-03-01T00:00:00"},
      {"noon", "2024-03-01T12:00:00"},
      {"tomorrow", "2024-03-02T00:00:00"},
      {"uts1700000000", "2023-11-14T22:13:20"},
  };
  for (const Case& c : cases) {
    Result<Time> t = ParseSacctTime(c.text, kNow);
    ASSERT_TRUE(t.ok()) << c.text;
    EXPECT_EQ(SlurmTimeText(*t), c.expect) << c.text;
  }
  for (const char* bad : {"foo", "25:00", "2024-13-01", "now+3lightyears", "12/40"}) {
    EXPECT_FALSE(ParseSacctTime(bad, kNow).ok()) << bad;
  }
}

TEST_F(SacctTest, SelectionWindowUsersStatesAndIds) {
  json old = Finished(10, "COMPLETED");
  old["end_time"] = kNow - 86400 * 3;  // ended three days ago
  old["start_time"] = kNow - 86400 * 3 - 100;
  old["submit_time"] = kNow - 86400 * 3 - 200;
  json bobs = Finished(11, "FAILED", 1, 0, Request({{"user", "bob"}, {"uid", 1001}}));
  std::vector<SacctJob> jobs = {Job(old), Job(bobs), Job(Finished(12, "COMPLETED")),
                                Job(Pending(13))};
  auto ids = [&](std::vector<std::string> args, SacctCaller caller = {0, "root"}) {
    SacctOptions o = Options(std::move(args));
    std::vector<uint32_t> out;
    for (const SacctJob* j : SelectSacctJobs(o, jobs, caller, kNow)) out.push_back(j->view.job_id);
    return out;
  };
  EXPECT_EQ(ids({}), (std::vector<uint32_t>{11, 12, 13}));  // since midnight
  EXPECT_EQ(ids({"-j", "10"}), std::vector<uint32_t>{10});  // -j: all time
  EXPECT_EQ(ids({"-S", "2024-02-01"}), (std::vector<uint32_t>{10, 11, 12, 13}));
  EXPECT_EQ(ids({"-S", "2024-02-01", "-E", "2024-02-28"}), std::vector<uint32_t>{10});
  EXPECT_EQ(ids({"-u", "bob"}), std::vector<uint32_t>{11});
  EXPECT_EQ(ids({}, {1000, "alice"}), (std::vector<uint32_t>{12, 13}));  // one's own
  EXPECT_EQ(ids({"-a"}, {1000, "alice"}), (std::vector<uint32_t>{11, 12, 13}));
  EXPECT_EQ(ids({"-s", "F,CD", "-S", "2024-03-01"}), (std::vector<uint32_t>{11, 12}));
  EXPECT_EQ(ids({"-s", "PD"}), std::vector<uint32_t>{13});  // -s alone: in that state now
  EXPECT_EQ(ids({"--name=nope"}), std::vector<uint32_t>{});
  EXPECT_EQ(ids({"-r", "gpu", "-j", "12,13"}), (std::vector<uint32_t>{12, 13}));
}

TEST_F(SacctTest, StepIdsShowTheStepRowAlone) {
  std::vector<SacctJob> jobs = {Job(Finished(12, "COMPLETED"))};
  EXPECT_EQ(Render({"-j", "12.batch", "-n", "-P", "-o", "jobid"}, jobs), "12.batch\n");
  EXPECT_EQ(Render({"-j", "12", "-n", "-P", "-o", "jobid"}, jobs), "12\n12.batch\n");
}

// Two steps srun recorded: 12.0 (4 tasks on n1, two of them used 2 s of CPU each) and 12.1,
// still RUNNING when the job ended (its srun was killed with the job).
json WithSteps(json record) {
  api::StepRecord s0;
  s0.id = 0;
  s0.name = "python3";
  s0.state = "COMPLETED";
  s0.start = kNow - 3590;
  s0.end = kNow - 3590 + 100;
  s0.ntasks = 4;
  s0.ncpus = 4;
  s0.nodes = "n1";
  s0.max_rss_kib = 2081712;
  s0.max_rss_task = 2;
  s0.max_rss_node = "n1";
  s0.ave_rss_kib = 1040856;
  s0.user_cpu_seconds = 3.5;
  s0.system_cpu_seconds = 0.5;
  s0.min_cpu_seconds = 0;
  s0.min_cpu_task = 1;
  api::StepRecord s1 = s0;
  s1.id = 1;
  s1.name = "train.sh";
  s1.state = "RUNNING";
  s1.start = kNow - 3400;
  s1.end = kNoTime;
  s1.ntasks = 1;
  s1.ncpus = 1;
  record["steps"] = {api::EncodeStepRecord(s0), api::EncodeStepRecord(s1)};
  return record;
}

TEST_F(SacctTest, StepRowsFollowTheBatchRow) {
  std::vector<SacctJob> jobs = {Job(WithSteps(Finished(12, "TIMEOUT")))};
  EXPECT_EQ(Render({}, jobs),
            "JobID           JobName  Partition    Account  AllocCPUS      State ExitCode \n"
            "------------ ---------- ---------- ---------- ---------- ---------- -------- \n"
            "12                train        gpu                     4    TIMEOUT      0:0 \n"
            "12.batch          batch                                4  CANCELLED      0:0 \n"
            "12.0            python3                                4  COMPLETED      0:0 \n"
            "12.1           train.sh                                1  CANCELLED      0:0 \n");
  EXPECT_EQ(Render({"-P", "-n", "-o",
                    "jobid,ntasks,nodelist,start,end,elapsed,maxrss,maxrsstask,maxrssnode,"
                    "averss,totalcpu,usercpu,systemcpu,avecpu,mincpu,mincputask"},
                   jobs),
            "12||n1|2024-03-01T09:00:00|2024-03-01T09:05:07|00:05:07|||||01:23.500|||||\n"
            "12.batch|1|n1|2024-03-01T09:00:00|2024-03-01T09:05:07|00:05:07|3180M|0|n1|3180M|"
            "01:23.500|||01:23.500|01:23.500|0\n"
            "12.0|4|n1|2024-03-01T09:00:10|2024-03-01T09:01:50|00:01:40|2081712K|2|n1|1040856K|"
            "00:04.000|00:03.500|00:00.500|00:01.000|00:00.000|1\n"
            "12.1|1|n1|2024-03-01T09:03:20|2024-03-01T09:05:07|00:01:47|2081712K|2|n1|1040856K|"
            "00:04.000|00:03.500|00:00.500|00:04.000|00:00.000|1\n");
  // -X: allocations only; -j 12.1: that step alone.
  EXPECT_EQ(Render({"-X", "-n", "-P", "-o", "jobid"}, jobs), "12\n");
  EXPECT_EQ(Render({"-j", "12.1", "-n", "-P", "-o", "jobid,state"}, jobs), "12.1|CANCELLED\n");
  EXPECT_EQ(Render({"-j", "12.7", "-n", "-P", "-o", "jobid"}, jobs), "");
  // While the job runs, its running step is RUNNING with no end, its Elapsed counting to now.
  json running = WithSteps(Finished(12, "RUNNING"));
  running["end_time"] = -1;
  std::vector<SacctJob> live = {Job(running)};
  EXPECT_EQ(Render({"-j", "12.1", "-n", "-P", "-o", "jobid,state,end,elapsed"}, live),
            "12.1|RUNNING|Unknown|00:56:40\n");
  // JSON: the steps after the batch step.
  std::vector<const SacctJob*> sel = {&jobs[0]};
  json j = SacctJson(sel, "berth", false);
  ASSERT_EQ(j["jobs"][0]["steps"].size(), 3u);
  EXPECT_EQ(j["jobs"][0]["steps"][1]["step"]["id"], "12.0");
  EXPECT_EQ(j["jobs"][0]["steps"][1]["step"]["name"], "python3");
  EXPECT_EQ(j["jobs"][0]["steps"][1]["tasks"]["count"], 4);
  EXPECT_EQ(j["jobs"][0]["steps"][2]["state"], "CANCELLED");
  EXPECT_EQ(SacctJson(sel, "berth", true)["jobs"][0]["steps"].size(), 0u);
}

TEST_F(SacctTest, ABadStepIsAnErrorNamingTheJob) {
  json record = WithSteps(Finished(12, "COMPLETED"));
  record["steps"][0]["state"] = "DONE";
  Result<SacctJob> j = SacctJobFromJson(record, kNow);
  ASSERT_FALSE(j.ok());
  EXPECT_NE(j.status().message().find("job 12: bad step: \"state\""), std::string::npos)
      << j.status().message();
}

TEST_F(SacctTest, ArrayTasks) {
  json task = Finished(15, "COMPLETED");
  task["array_job_id"] = 14;
  task["array_task_id"] = 2;
  std::vector<SacctJob> jobs = {Job(task)};
  EXPECT_EQ(Render({"-j", "14", "-n", "-P", "-o", "jobid,jobidraw"}, jobs),
            "14_2|15\n14_2.batch|15.batch\n");
  EXPECT_EQ(Render({"-j", "14_2", "-X", "-n", "-P", "-o", "jobid"}, jobs), "14_2\n");
  EXPECT_EQ(Render({"-j", "14_3", "-n", "-P", "-o", "jobid"}, jobs), "");
}

TEST_F(SacctTest, JsonHasSlurmsMainKeys) {
  std::vector<SacctJob> jobs = {Job(Finished(12, "FAILED", 3))};
  std::vector<const SacctJob*> sel = {&jobs[0]};
  json j = SacctJson(sel, "berth", false);
  ASSERT_EQ(j["jobs"].size(), 1u);
  const json& job = j["jobs"][0];
  EXPECT_EQ(job["job_id"], 12);
  EXPECT_EQ(job["state"]["current"], "FAILED");
  EXPECT_EQ(job["exit_code"]["return_code"], 3);
  EXPECT_EQ(job["exit_code"]["status"], "FAILED");
  EXPECT_EQ(job["time"]["elapsed"], 307);
  EXPECT_EQ(job["nodes"], "n1");
  EXPECT_EQ(job["steps"][0]["step"]["id"], "12.batch");
  EXPECT_TRUE(SacctJson(sel, "berth", true)["jobs"][0]["steps"].empty());
  EXPECT_TRUE(j["errors"].empty());
}

TEST(SacctUnitsTest, MemoryAndCpuTime) {
  EXPECT_EQ(SacctMemory(4000), "4000M");
  EXPECT_EQ(SacctMemory(4096), "4G");
  EXPECT_EQ(SacctMemory(1048576), "1T");
  EXPECT_EQ(SacctMemory(0), "0");
  EXPECT_EQ(SacctCpuTime(83.5), "01:23.500");
  EXPECT_EQ(SacctCpuTime(3723), "01:02:03");
  EXPECT_EQ(SacctCpuTime(93784), "1-02:03:04");
  EXPECT_EQ(SacctCpuTime(0), "00:00.000");
}

}  // namespace
}  // namespace berth::slurm
