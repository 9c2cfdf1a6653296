#include "slurm/usage_report.h"

#include <gtest/gtest.h>

#include <nlohmann/json.hpp>

#include "slurm/usage_test_util.h"

namespace berth::slurm {
namespace {

using core::JobState;
using nlohmann::json;

constexpr Time kT0 = 1709251200;  // 2024-03-01T00:00:00Z: the period is [kT0, kT0 + 24h)
constexpr Time kH = 3600;
constexpr Time kT1 = kT0 + 24 * kH;

// The known set of finished jobs, with each one's figures inside the period worked out by hand
// (h = hours of its run inside the period; "idle" feeds the over-provisioning score
// idle CPU-h + 0.25 x idle GiB-h + 8 x idle measured GPU-h).
std::vector<UsageJob> KnownJobs() {
  return {
      // 101 alice/physics: 4 CPUs, 8G, 01:00-03:00 (h = 2), one CPU busy (7200 s), peak 2G.
      //   CPU-h 4x2 = 8, used 7200/3600 = 2 (25%); GiB-h 8x2 = 16, peak 2x2 = 4 (25%).
      //   idle: 6 CPU-h, 12 GiB-h -> score 6 + 3 = 9.
      UsageJobBuilder(101).Cpus(4).MemMib(8192).Ran(kT0 + kH, kT0 + 3 * kH).Used(7200, 2048).Obj(),
      // 102 alice/physics: 2 CPUs, 4G, 2 GPUs at 50%, 23:00 the day before to 01:00 (h = 1 of
      //   its 2), 7200 CPU-s over the whole run -> 3600 inside.
      //   CPU-h 2, used 1 (50%); GiB-h 4, peak 1G x 1 = 1 (25%); GPU-h 2, used 2 x 0.5 = 1.
      //   idle: 1 CPU-h, 3 GiB-h, 1 GPU-h -> score 1 + 0.75 + 8 = 9.75.
      UsageJobBuilder(102)
          .Cpus(2)
          .MemMib(4096)
          .Gpus(2, 50)
          .Ran(kT0 - kH, kT0 + kH)
          .Used(7200, 1024)
          .Obj(),
      // 103 bob/physics: 1 CPU, 1G, 1 GPU not measured, 20:00 to 02:00 next day (h = 4 of 6),
      //   21600 CPU-s -> 14400 inside.
      //   CPU-h 4, used 4 (100%); GiB-h 4, peak 0.5 x 4 = 2 (50%); GPU-h 4, unmeasured.
      //   idle: 0 CPU-h, 2 GiB-h, GPUs not counted -> score 0.5.
      UsageJobBuilder(103)
          .User("bob", 1001)
          .Gpus(1, -1)
          .Ran(kT0 + 20 * kH, kT0 + 26 * kH)
          .Used(21600, 512)
          .Obj(),
      // 104 carol/(no account): 8 CPUs, 16G, OUT_OF_MEMORY after half an hour, 3600 CPU-s.
      //   CPU-h 8 x 0.5 = 4, used 1 (25%); GiB-h 16 x 0.5 = 8, peak 8 (100%).
      //   idle: 3 CPU-h -> score 3.
      UsageJobBuilder(104)
          .User("carol", 1002)
          .Account("")
          .State(JobState::kOutOfMemory)
          .Cpus(8)
          .MemMib(16384)
          .Ran(kT0 + 2 * kH, kT0 + 2 * kH + 1800)
          .Used(3600, 16384)
          .Obj(),
      // 105 alice: ran before the period: left out.
      UsageJobBuilder(105).Ran(kT0 - 5 * kH, kT0 - 2 * kH).Used(10800, 1024).Obj(),
      // 106 bob/chem: 2 CPUs, 2G, CANCELLED, 23:00 to 01:00 next day (h = 1 of 2), 3600 CPU-s
      //   -> 1800 inside. CPU-h 2, used 0.5 (25%); GiB-h 2, peak 1 (50%).
      //   idle: 1.5 CPU-h, 1 GiB-h -> score 1.75.
      UsageJobBuilder(106)
          .User("bob", 1001)
          .Account("chem")
          .State(JobState::kCancelled)
          .Cpus(2)
          .MemMib(2048)
          .Ran(kT0 + 23 * kH, kT0 + 25 * kH)
          .Used(3600, 1024)
          .Obj(),
      // 107 alice: still running: left out.
      UsageJobBuilder(107).Running(kT0 + kH, kT0 + 2 * kH).Obj(),
      // 108 dave/physics: FAILED at once (ran zero seconds at 05:00): a job, no hours.
      UsageJobBuilder(108)
          .User("dave", 1003)
          .State(JobState::kFailed)
          .Ran(kT0 + 5 * kH, kT0 + 5 * kH)
          .Obj(),
  };
}

TEST(UsageReportTest, RowsPerAccountAndUser) {
  const UsageReport r = ComputeUsage(KnownJobs(), kT0, kT1, 3);
  // physics = 101 + 102 + 103 + 108: CPU-h 8 + 2 + 4 = 14, used 2 + 1 + 4 = 7 (50%); GiB-h
  // 16 + 4 + 4 = 24, peak 4 + 1 + 2 = 7 (29.2%); GPU-h 2 + 4 = 6 of which 2 measured, used 1
  // (50% of the measured), 4 unmeasured. bob's GPU-hours are all unmeasured: "unknown".
  EXPECT_EQ(RenderReportTable(UsageRowsTable(r, ReportFormat::kCsv), ReportFormat::kCsv, false),
            "Account,User,Jobs,CPUHours,CPUHoursUsed,CPUEff,MemGiBHours,MemPeakGiBHours,MemEff,"
            "GPUHours,GPUHoursUsed,GPUUtil,GPUHoursUnmeasured\n"
            "(none),,1,4.00,1.00,25.0,8.00,8.00,100.0,0.00,0.00,,0.00\n"
            "(none),carol,1,4.00,1.00,25.0,8.00,8.00,100.0,0.00,0.00,,0.00\n"
            "chem,,1,2.00,0.50,25.0,2.00,1.00,50.0,0.00,0.00,,0.00\n"
            "chem,bob,1,2.00,0.50,25.0,2.00,1.00,50.0,0.00,0.00,,0.00\n"
            "physics,,4,14.00,7.00,50.0,24.00,7.00,29.2,6.00,1.00,50.0,4.00\n"
            "physics,alice,2,10.00,3.00,30.0,20.00,5.00,25.0,2.00,1.00,50.0,0.00\n"
            "physics,bob,1,4.00,4.00,100.0,4.00,2.00,50.0,4.00,0.00,unknown,4.00\n"
            "physics,dave,1,0.00,0.00,,0.00,0.00,,0.00,0.00,,0.00\n");
  // All six jobs that ran in the period: CPU-h 8 + 2 + 4 + 4 + 2 = 20, used 2 + 1 + 4 + 1 + 0.5.
  EXPECT_EQ(r.total.jobs, 6);
  EXPECT_DOUBLE_EQ(r.total.cpu_hours, 20);
  EXPECT_DOUBLE_EQ(r.total.cpu_hours_used, 8.5);
  EXPECT_DOUBLE_EQ(r.total.mem_gib_hours, 16 + 4 + 4 + 8 + 2);
  EXPECT_DOUBLE_EQ(r.total.mem_peak_gib_hours, 4 + 1 + 2 + 8 + 1);
}

TEST(UsageReportTest, MostOverProvisionedJobs) {
  const UsageReport r = ComputeUsage(KnownJobs(), kT0, kT1, 3);
  // Scores: 102 9.75, 101 9, 104 3, 106 1.75, 103 0.5; the top three.
  EXPECT_EQ(
      RenderReportTable(TopJobsTable(r, ReportFormat::kParsable), ReportFormat::kParsable, false),
      "JobID|User|Account|JobName|State|Hours|CPUEff|MemEff|GPUUtil|IdleCPUHours|"
      "IdleMemGiBHours|IdleGPUHours|Score\n"
      "102|alice|physics|job102|COMPLETED|1.00|50.0%|25.0%|50.0%|1.00|3.00|1.00|9.75\n"
      "101|alice|physics|job101|COMPLETED|2.00|25.0%|25.0%||6.00|12.00|0.00|9.00\n"
      "104|carol|(none)|job104|OUT_OF_MEMORY|0.50|25.0%|100.0%||3.00|0.00|0.00|3.00\n");
  EXPECT_EQ(ComputeUsage(KnownJobs(), kT0, kT1, 10).top.size(), 5u);
  EXPECT_TRUE(ComputeUsage(KnownJobs(), kT0, kT1, 0).top.empty());
}

TEST(UsageReportTest, Json) {
  const json j = UsageJson(ComputeUsage(KnownJobs(), kT0, kT1, 1));
  EXPECT_EQ(j["start"], kT0);
  EXPECT_EQ(j["end"], kT1);
  ASSERT_EQ(j["rows"].size(), 8u);
  EXPECT_EQ(j["rows"][4], json::parse(R"({
      "account": "physics", "user": "", "jobs": 4, "cpu_hours": 14.0, "cpu_hours_used": 7.0,
      "cpu_efficiency": 50.0, "mem_gib_hours": 24.0, "mem_peak_gib_hours": 7.0,
      "mem_efficiency": 29.1667, "gpu_hours": 6.0, "gpu_hours_used": 1.0,
      "gpu_hours_unmeasured": 4.0, "gpu_utilization": 50.0})"));
  // Unknown utilisation is null, not 0; so are efficiencies of nothing.
  EXPECT_TRUE(j["rows"][6]["gpu_utilization"].is_null());
  EXPECT_EQ(j["rows"][6]["gpu_hours_unmeasured"], 4.0);
  EXPECT_TRUE(j["rows"][7]["cpu_efficiency"].is_null());
  EXPECT_EQ(j["total"]["jobs"], 6);
  ASSERT_EQ(j["top_jobs"].size(), 1u);
  EXPECT_EQ(j["top_jobs"][0]["job_id"], "102");
  EXPECT_EQ(j["top_jobs"][0]["score"], 9.75);
  EXPECT_EQ(j["top_jobs"][0]["idle_gpu_hours"], 1.0);
}

TEST(UsageReportTest, TableLayout) {
  UtcZone utc;
  const UsageReport r = ComputeUsage({KnownJobs()[0]}, kT0, kT1, 1);
  const std::string header =
      "Account  User   Jobs  CPUHours  CPUHoursUsed  CPUEff  MemGiBHours  MemPeakGiBHours  "
      "MemEff  GPUHours  GPUHoursUsed  GPUUtil  GPUHoursUnmeasured\n"
      "-------  -----  ----  --------  ------------  ------  -----------  ---------------  "
      "------  --------  ------------  -------  ------------------\n";
  const std::string figures =
      "     1      8.00          2.00   25.0%        16.00             4.00   25.0%      0.00"
      "          0.00                         0.00\n";
  EXPECT_EQ(RenderUsage(r, ReportFormat::kTable, false),
            "Usage from 2024-03-01T00:00:00 to 2024-03-02T00:00:00 (24.00 hours); each job "
            "counts for the part of its run inside the period\n" +
                header + "physics       " + figures + "physics  alice" + figures +
                "\n"
                "Most over-provisioned jobs (score = idle CPU-hours + 0.25 x idle GiB-hours + "
                "8.00 x idle GPU-hours)\n"
                "JobID  User   Account  JobName  State      Hours  CPUEff  MemEff  GPUUtil  "
                "IdleCPUHours  IdleMemGiBHours  IdleGPUHours  Score\n"
                "-----  -----  -------  -------  ---------  -----  ------  ------  -------  "
                "------------  ---------------  ------------  -----\n"
                "101    alice  physics  job101   COMPLETED   2.00   25.0%   25.0%           "
                "        6.00            12.00          0.00   9.00\n");
  // -n: no titles, no headers; CSV and -P: the two tables one empty line apart.
  EXPECT_EQ(RenderUsage(r, ReportFormat::kTable, true),
            "physics       " + figures + "physics  alice" + figures + "\n" +
                "101    alice  physics  job101   COMPLETED   2.00   25.0%   25.0%           "
                "        6.00            12.00          0.00   9.00\n");
  EXPECT_EQ(RenderUsage(r, ReportFormat::kCsv, true),
            "physics,,1,8.00,2.00,25.0,16.00,4.00,25.0,0.00,0.00,,0.00\n"
            "physics,alice,1,8.00,2.00,25.0,16.00,4.00,25.0,0.00,0.00,,0.00\n"
            "\n"
            "101,alice,physics,job101,COMPLETED,2.00,25.0,25.0,,6.00,12.00,0.00,9.00\n");
}

TEST(UsageReportTest, EmptyPeriod) {
  const UsageReport r = ComputeUsage(KnownJobs(), kT1 + 100 * kH, kT1 + 101 * kH, 10);
  EXPECT_TRUE(r.rows.empty());
  EXPECT_TRUE(r.top.empty());
  EXPECT_EQ(RenderUsage(r, ReportFormat::kParsable, false),
            "Account|User|Jobs|CPUHours|CPUHoursUsed|CPUEff|MemGiBHours|MemPeakGiBHours|MemEff|"
            "GPUHours|GPUHoursUsed|GPUUtil|GPUHoursUnmeasured\n");
}

TEST(UsageReportTest, CsvQuotesFields) {
  ReportTable t;
  t.header = {"a", "b"};
  t.rows = {{"x,y", "say \"hi\""}};
  EXPECT_EQ(RenderReportTable(t, ReportFormat::kCsv, false), "a,b\n\"x,y\",\"say \"\"hi\"\"\"\n");
}

TEST(UsageReportTest, WhoSeesWhat) {
  std::vector<UsageJob> jobs = KnownJobs();
  auto users_seen = [&](const UsageSelection& s) {
    std::vector<std::string> out;
    for (const UsageJob& j : jobs) {
      if (Selected(s, j.view)) out.push_back(std::to_string(j.view.job_id));
    }
    return out;
  };
  using V = std::vector<std::string>;
  // alice (uid 1000) sees her own; root everyone's; -u and -a widen, -A narrows.
  EXPECT_EQ(users_seen({1000, {}, {}, false}), (V{"101", "102", "105", "107"}));
  EXPECT_EQ(users_seen({0, {}, {}, false}).size(), jobs.size());
  EXPECT_EQ(users_seen({1000, {"bob"}, {}, false}), (V{"103", "106"}));
  EXPECT_EQ(users_seen({1000, {"1003"}, {}, false}), (V{"108"}));
  EXPECT_EQ(users_seen({1000, {}, {"chem"}, true}), (V{"106"}));
  EXPECT_EQ(users_seen({1000, {}, {}, true}).size(), jobs.size());
}

TEST(UsageReportTest, UsageJobFromJsonSumsTheAllocation) {
  const json record = {
      {"id", 7},
      {"state", "COMPLETED"},
      {"request",
       {{"name", "x"},
        {"user", "alice"},
        {"uid", 1000},
        {"gid", 1000},
        {"script", "#!/bin/sh\n"},
        {"mem_per_node", 1000},
        {"nodes", 2},
        {"gpus_per_node", 1}}},
      {"submit_time", 100},
      {"start_time", 200},
      {"end_time", 300},
      {"allocation",
       {{"nodes",
         {{{"node", "n1"}, {"cpus", 2}, {"mem_mib", 1000}, {"gpus", {0}}},
          {{"node", "n2"}, {"cpus", 2}, {"mem_mib", 1000}, {"gpus", {1}}}}}}},
      {"usage", {{"cpu_seconds", 50}, {"max_rss_mib", 300}, {"gpu_utilization", 12.5}}}};
  Result<UsageJob> j = UsageJobFromJson(record, 1000);
  ASSERT_TRUE(j.ok()) << j.status().ToString();
  EXPECT_EQ(j->alloc_mem_mib, 2000);
  EXPECT_EQ(j->alloc_gpus, 2);
  EXPECT_EQ(HeldCpus(*j), 4);
  EXPECT_EQ(HeldNodes(*j), 2);
  EXPECT_TRUE(RanAndEnded(*j));
  EXPECT_FALSE(UsageJobFromJson(json{{"id", 1}}, 0).ok());
}

}  // namespace
}  // namespace berth::slurm
