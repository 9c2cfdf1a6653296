#include "slurm/sstat_view.h"

#include <gtest/gtest.h>

#include <nlohmann/json.hpp>

namespace berth::slurm {
namespace {

using nlohmann::json;

SstatParse Parse(std::vector<std::string> args) {
  args.insert(args.begin(), "sstat");
  return ParseSstatArgs(args);
}

// Job 7 runs on n01 with srun step 0 running on n[01-02] (step 1 ended); job 8 is pending; job 9
// runs, not yet measured.
std::vector<SstatJob> Jobs() {
  api::StepRecord running;
  running.id = 0;
  running.name = "hostname";
  running.state = "RUNNING";
  running.start = 100;
  running.ntasks = 4;
  running.ncpus = 4;
  running.nodes = "n[01-02]";
  api::StepRecord done = running;
  done.id = 1;
  done.state = "COMPLETED";
  done.end = 120;
  json step = api::EncodeStepRecord(running);
  json ended = api::EncodeStepRecord(done);
  json jobs = {
      {"jobs",
       {{{"id", 7},
         {"state", "RUNNING"},
         {"allocation", {{"nodes", {{{"node", "n01"}}, {{"node", "n02"}}}}}},
         {"steps", {step, ended}}},
        {{"id", 8}, {"state", "PENDING"}},
        {{"id", 9}, {"state", "RUNNING"}, {"allocation", {{"nodes", {{{"node", "n03"}}}}}}}}}};
  json usage = {{"jobs",
                 {{{"job_id", 7},
                   {"node", "n01"},
                   {"cpu_seconds", 65.25},
                   {"memory_bytes", 20 << 20},
                   {"max_memory_bytes", 3000 * 1024}}}}};
  Result<std::vector<SstatJob>> r = SstatJobsFromJson(jobs, usage);
  EXPECT_TRUE(r.ok()) << r.status().ToString();
  return r.ok() ? *r : std::vector<SstatJob>{};
}

SstatOutput Render(const std::vector<std::string>& args) {
  SstatParse p = Parse(args);
  EXPECT_FALSE(p.exit.done) << p.exit.err;
  return RenderSstat(p.options, Jobs());
}

TEST(SstatViewTest, BatchRowFromTheAgentsReadings) {
  SstatOutput o = Render(
      {"-j", "7", "-P", "-o", "JobID,AveCPU,AveRSS,MaxRSS,MaxRSSNode,MaxRSSTask,NTasks,Nodelist"});
  EXPECT_EQ(o.out,
            "JobID|AveCPU|AveRSS|MaxRSS|MaxRSSNode|MaxRSSTask|NTasks|Nodelist\n"
            "7.batch|01:05.250|20M|3000K|n01|0|1|n01\n");
  EXPECT_EQ(o.err, "");
}

TEST(SstatViewTest, AllStepsAddsRunningStepsWithoutUsage) {
  SstatOutput o = Render({"-a", "-j", "7", "-p", "-n", "-o", "JobID,MaxRSS,NTasks,Nodelist"});
  EXPECT_EQ(o.out, "7.batch|3000K|1|n01|\n7.0||4|n[01-02]|\n");
  o = Render({"-j", "7.0", "-P", "-n", "-o", "JobID,NTasks"});
  EXPECT_EQ(o.out, "7.0|4\n");
  o = Render({"-j", "7.batch,7.5", "-P", "-n", "-o", "JobID"});
  EXPECT_EQ(o.out, "7.batch\n");  // step 5 is not running: nothing, as Slurm
}

TEST(SstatViewTest, TableLayoutAndPrefixes) {
  SstatOutput o = Render({"7", "-o", "jobid,avecpu,maxrss%6,ntasks"});
  EXPECT_EQ(o.out,
            "JobID            AveCPU MaxRSS   NTasks \n"
            "------------ ---------- ------ -------- \n"
            "7.batch       01:05.250  3000K        1 \n");
}

TEST(SstatViewTest, JobsItCannotStat) {
  SstatOutput o = Render({"-j", "8,9,10", "-P", "-n", "-o", "JobID,AveCPU,Nodelist"});
  EXPECT_EQ(o.out, "9.batch||n03\n");  // running, not measured yet
  EXPECT_EQ(o.err,
            "sstat: error: no steps running for job 8\n"
            "sstat: error: couldn't get steps for job 10\n");
}

TEST(SstatViewTest, DefaultFieldsAreSlurms) {
  SstatParse p = Parse({"-j", "7"});
  ASSERT_FALSE(p.exit.done);
  ASSERT_EQ(p.options.fields.size(), 47u);
  EXPECT_EQ(p.options.fields[0].name, "JobID");
  EXPECT_EQ(p.options.fields[5].name, "MaxRSS");
  EXPECT_EQ(p.options.fields[33].name, "TRESUsageInMaxNode");
  EXPECT_EQ(p.options.fields.back().name, "TRESUsageOutTot");
}

TEST(SstatViewTest, Errors) {
  SstatParse p = Parse({});
  EXPECT_EQ(p.exit.exit_code, 1);
  EXPECT_EQ(p.exit.err, "sstat: error: You didn't give me any jobs to stat.\n");
  p = Parse({"-j", "7", "-o", "JobID,Nope"});
  EXPECT_EQ(p.exit.err, "sstat: error: Invalid field requested: \"Nope\"\n");
  p = Parse({"-j", "x7"});
  EXPECT_EQ(p.exit.err, "sstat: error: Invalid job id: x7\n");
  p = Parse({"-V"});
  EXPECT_EQ(p.exit.out, "slurm 22.05.8 (berth)\n");
  EXPECT_FALSE(SstatJobsFromJson(json::object(), json{{"jobs", json::array()}}).ok());
  EXPECT_FALSE(
      SstatJobsFromJson(json{{"jobs", {{{"state", "RUNNING"}}}}}, json{{"jobs", json::array()}})
          .ok());
}

TEST(SstatViewTest, Memory) {
  EXPECT_EQ(SstatMemory(0), "0");
  EXPECT_EQ(SstatMemory(1536 * 1024), "1536K");
  EXPECT_EQ(SstatMemory(int64_t{2} << 30), "2G");
}

}  // namespace
}  // namespace berth::slurm
