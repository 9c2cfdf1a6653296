#include "slurm/advice.h"

#include <gtest/gtest.h>

#include <nlohmann/json.hpp>

#include "slurm/usage_test_util.h"

namespace berth::slurm {
namespace {

using core::JobState;
using nlohmann::json;

constexpr Time kT0 = 1709251200;  // 2024-03-01T00:00:00Z
constexpr Time kH = 3600;

// alice's five COMPLETED jobs, each asking one node, 4 CPUs (one task), 8G and 4 hours:
//
//   job  ran     CPU-s  busy  peak  GPUs
//   1    600 s   600    1.0   512M  2 at 10%
//   2    1200 s  1440   1.2   700M  2 at 20%
//   3    1500 s  1500   1.0   900M  1, not measured
//   4    900 s   450    0.5   300M  -
//   5    300 s   300    1.0   880M  -
//
// memory: peaks sorted 300 512 700 880 900: max 900M (job 3), median 700M; 900/8192 = 11%.
//   suggestion 900 x 1.2 = 1080M -> 2G; 2G x 2 <= 8G: ask less.
// time: runs sorted 300 600 900 1200 1500: max 25 min (job 3), median 15 min; 1500/14400 =
//   10.4%. suggestion 1500 x 1.5 = 2250 s -> 40 min; 40 min x 2 <= 4 h: ask less.
// CPUs: busy sorted 0.5 1 1 1 1.2: max 1.2 (job 2), median 1.0; 1.2/4 = 30%. suggestion
//   ceil(1.2 x 1.25) = 2; 2 x 2 <= 4: ask less, -c 2.
// GPUs: measured jobs 1 and 2 use 0.2 and 0.4 GPUs (10%, 20%); max 0.4 (job 2), median 0.3,
//   median fraction 15%; 20% < 25%: ask less; ceil(0.4 x 1.2) = 1 < 2 GPUs: --gpus=1. Job 3 is
//   unmeasured.
std::vector<UsageJob> AliceJobs() {
  struct Row {
    uint32_t id;
    Duration run;
    double cpu_seconds;
    int64_t peak;
    int32_t gpus;
    double util;
  };
  const Row rows[] = {{1, 600, 600, 512, 2, 10},
                      {2, 1200, 1440, 700, 2, 20},
                      {3, 1500, 1500, 900, 1, -1},
                      {4, 900, 450, 300, 0, -1},
                      {5, 300, 300, 880, 0, -1}};
  std::vector<UsageJob> jobs;
  for (const Row& r : rows) {
    const Time start = kT0 + r.id * kH;
    jobs.push_back(UsageJobBuilder(r.id)
                       .Cpus(4)
                       .MemMib(8192)
                       .TimeLimit(4 * kH)
                       .Gpus(r.gpus, r.util)
                       .Ran(start, start + r.run)
                       .Used(r.cpu_seconds, r.peak)
                       .Obj());
  }
  return jobs;
}

std::vector<std::string> Sentences(const std::vector<UsageJob>& jobs) {
  std::vector<std::string> out;
  for (const ResourceAdvice& a : ComputeAdvice(jobs)) out.push_back(AdviceSentence(a));
  return out;
}

TEST(AdviceTest, EvidenceAndSuggestions) {
  const std::vector<ResourceAdvice> a = ComputeAdvice(AliceJobs());
  ASSERT_EQ(a.size(), 4u);
  const ResourceAdvice& mem = a[0];
  EXPECT_EQ(mem.kind, AdviceKind::kLess);
  EXPECT_EQ(mem.jobs, 5);
  EXPECT_DOUBLE_EQ(mem.max_used, 900);
  EXPECT_DOUBLE_EQ(mem.median_used, 700);
  EXPECT_DOUBLE_EQ(mem.median_asked, 8192);
  EXPECT_DOUBLE_EQ(mem.max_fraction, 900.0 / 8192);
  EXPECT_EQ(mem.max_job, "3");
  EXPECT_DOUBLE_EQ(mem.suggestion, 2048);
  EXPECT_EQ(mem.option, "--mem=2G");
  EXPECT_EQ(a[1].option, "--time=00:40:00");
  EXPECT_DOUBLE_EQ(a[1].suggestion, 2400);
  EXPECT_EQ(a[2].option, "--cpus-per-task=2");
  EXPECT_DOUBLE_EQ(a[2].max_used, 1.2);
  EXPECT_EQ(a[2].max_job, "2");
  EXPECT_EQ(a[3].option, "--gpus=1");
  EXPECT_EQ(a[3].jobs, 2);
  EXPECT_EQ(a[3].unmeasured, 1);
  EXPECT_DOUBLE_EQ(a[3].max_fraction, 0.2);
  EXPECT_DOUBLE_EQ(a[3].median_used, 0.3);

  EXPECT_EQ(Sentences(AliceJobs()),
            (std::vector<std::string>{
                "memory: 5 jobs used at most 11% of the memory they asked for (peak 900M in job "
                "3, median peak 700M; median request 8G): --mem=2G would have served all of "
                "them, and smaller requests start sooner",
                "time: 5 jobs ran at most 10% of their time limit (longest 00:25:00 in job 3, "
                "median 00:15:00; median limit 04:00:00): --time=00:40:00 would have served all "
                "of them, and shorter limits start sooner (backfill)",
                "CPUs: 5 jobs kept at most 30% of their CPUs busy (at most 1.2 busy in job 2, "
                "median 1.0; median request 4): --cpus-per-task=2 would have served all of them",
                "GPUs: 2 jobs kept their GPUs at most 20% busy (median 15%, job 2 the busiest; "
                "median request 2): --gpus=1 would have served all of them, or they wait on "
                "something else (data, CPU work) (1 job with GPUs had no utilisation measured)",
            }));
}

TEST(AdviceTest, RunningOutForbidsLessAndAdvisesMore) {
  std::vector<UsageJob> jobs = AliceJobs();
  // 6: OUT_OF_MEMORY with 1G (its peak is at the limit, or low: it does not matter).
  jobs.push_back(UsageJobBuilder(6)
                     .Cpus(4)
                     .MemMib(1024)
                     .TimeLimit(4 * kH)
                     .State(JobState::kOutOfMemory)
                     .Ran(kT0 + 7 * kH, kT0 + 7 * kH + 100)
                     .Used(100, 20)
                     .Obj());
  // 7: TIMEOUT after its 4 hours (a memory peak of 100M counts for memory).
  jobs.push_back(UsageJobBuilder(7)
                     .Cpus(4)
                     .MemMib(8192)
                     .TimeLimit(4 * kH)
                     .State(JobState::kTimeout)
                     .Ran(kT0 + 8 * kH, kT0 + 12 * kH)
                     .Used(14400, 100)
                     .Obj());
  const std::vector<ResourceAdvice> a = ComputeAdvice(jobs);
  EXPECT_EQ(a[0].kind, AdviceKind::kMore);
  EXPECT_EQ(a[0].ran_out, 1);
  EXPECT_EQ(a[1].kind, AdviceKind::kMore);
  EXPECT_EQ(a[2].kind, AdviceKind::kLess);  // CPUs: only COMPLETED jobs count, as before
  EXPECT_EQ(Sentences(jobs)[0],
            "memory: 1 of 7 jobs ran out of memory (asking up to 1G): try "
            "--mem=2G");
  EXPECT_EQ(Sentences(jobs)[1],
            "time: 1 of 6 jobs reached their time limit (up to 04:00:00): ask for more with "
            "--time");
}

TEST(AdviceTest, Thresholds) {
  auto mem_kind = [](int64_t peak) {
    return ComputeAdvice(
               {UsageJobBuilder(1).MemMib(4096).Ran(kT0, kT0 + 100).Used(50, peak).Obj()})[0]
        .kind;
  };
  // 1706M x 1.2 = 2047.2 -> 2G, which is half of 4G: ask less; 1707M -> 3G: it fits.
  EXPECT_EQ(mem_kind(1706), AdviceKind::kLess);
  EXPECT_EQ(mem_kind(1707), AdviceKind::kNone);
  auto time_kind = [](Duration run) {
    return ComputeAdvice({UsageJobBuilder(1).TimeLimit(3600).Ran(kT0, kT0 + run).Obj()})[1].kind;
  };
  // A 1 h limit: 1200 s x 1.5 = 30 min, twice that is the limit: ask less; 1201 s x 1.5 =
  // 1801.5 s -> 35 min, and 70 min > 1 h: it fits.
  EXPECT_EQ(time_kind(1200), AdviceKind::kLess);
  EXPECT_EQ(time_kind(1201), AdviceKind::kNone);
  auto gpu_kind = [](double util) {
    return ComputeAdvice({UsageJobBuilder(1).Gpus(1, util).Ran(kT0, kT0 + 100).Obj()})[3].kind;
  };
  EXPECT_EQ(gpu_kind(24.9), AdviceKind::kLess);
  EXPECT_EQ(gpu_kind(25), AdviceKind::kNone);
  EXPECT_EQ(gpu_kind(-1), AdviceKind::kNone);
  // CPUs: a job shorter than a minute says nothing about its CPUs.
  const UsageJob short_job = UsageJobBuilder(1).Cpus(8).Ran(kT0, kT0 + 59).Used(1, 10).Obj();
  EXPECT_EQ(ComputeAdvice({short_job})[2].jobs, 0);
}

TEST(AdviceTest, FittingRequestsGetNoAdvice) {
  // 6G of 8G, 2 of 3 hours, 3.5 of 4 CPUs, GPUs 80% busy.
  const UsageJob j = UsageJobBuilder(9)
                         .Cpus(4)
                         .MemMib(8192)
                         .TimeLimit(3 * kH)
                         .Gpus(1, 80)
                         .Ran(kT0, kT0 + 2 * kH)
                         .Used(3.5 * 2 * kH, 6144)
                         .Obj();
  for (const ResourceAdvice& a : ComputeAdvice({j})) {
    EXPECT_EQ(a.kind, AdviceKind::kNone) << AdviceResourceName(a.resource);
    EXPECT_EQ(a.jobs, 1);
  }
  UtcZone utc;
  const AdviceReport r = MakeAdviceReport({j}, "alice", kT0, kT0 + 24 * kH, 0);
  const std::string text = RenderAdvice(r, ReportFormat::kTable, false);
  EXPECT_NE(text.find("No advice: the requests fit what the jobs used.\n"), std::string::npos);
  EXPECT_EQ(text.find("Advice:"), std::string::npos);
}

TEST(AdviceTest, OneJobPerCpuMemoryAndTasks) {
  // 4 tasks of one CPU, 4G per CPU, peak 2000M: 500M per CPU (12%) -> 600M -> 640M.
  const UsageJob j =
      UsageJobBuilder(9).Tasks(4).MemPerCpuMib(4096).Ran(kT0, kT0 + 600).Used(600, 2000).Obj();
  const std::vector<ResourceAdvice> a = ComputeAdvice({j});
  EXPECT_TRUE(a[0].per_cpu);
  EXPECT_EQ(a[0].option, "--mem-per-cpu=640M");
  EXPECT_EQ(AdviceSentence(a[0]),
            "memory: 1 job used 12% of the memory per CPU it asked for (peak 500M per CPU in job "
            "9; request 4G per CPU): --mem-per-cpu=640M would have served it, and smaller "
            "requests start sooner");
  EXPECT_EQ(a[2].option, "--ntasks=2");  // 1 CPU busy of 4 -> 2 (1.25 rounded up)
  EXPECT_EQ(AdviceSentence(a[2]),
            "CPUs: 1 job kept 25% of its 4 CPUs busy (1.0 on average, job 9): --ntasks=2 would "
            "have served it");
  // The same advice in seff's words.
  EXPECT_EQ(SingleJobSentence(a[0], j),
            "memory: asked 4G per CPU, peaked at 500M per CPU: --mem-per-cpu=640M would do");
  EXPECT_EQ(SingleJobSentence(a[2], j),
            "CPUs: asked 4 cores, 1.0 busy on average: 2 cores would do");
}

TEST(AdviceTest, IdleSingleGpusCannotShrink) {
  std::vector<UsageJob> jobs;
  for (uint32_t id : {1, 2, 3}) {
    jobs.push_back(UsageJobBuilder(id).Gpus(1, 5.0 * id).Ran(kT0, kT0 + 600).Obj());
  }
  const ResourceAdvice g = ComputeAdvice(jobs)[3];
  EXPECT_EQ(g.kind, AdviceKind::kLess);
  EXPECT_EQ(g.option, "");
  EXPECT_EQ(AdviceSentence(g),
            "GPUs: 3 jobs kept their GPUs at most 15% busy (median 10%, job 3 the busiest; "
            "median request 1): they wait on something else (data, CPU work), or could share a "
            "GPU");
}

TEST(AdviceTest, WhichJobs) {
  std::vector<UsageJob> jobs = AliceJobs();
  jobs.push_back(UsageJobBuilder(20).User("bob", 1001).Ran(kT0, kT0 + 60).Obj());
  jobs.push_back(UsageJobBuilder(21).Running(kT0, kT0 + 60).Obj());
  auto ids = [](const std::vector<UsageJob>& js) {
    std::vector<uint32_t> out;
    for (const UsageJob& j : js) out.push_back(j.view.job_id);
    return out;
  };
  using V = std::vector<uint32_t>;
  // Latest end first: 5 ends at 05:05, 4 at 04:15, 3 at 03:25, 2 at 02:20, 1 at 01:10.
  EXPECT_EQ(ids(AdviceJobs(jobs, "alice", kT0, kT0 + 24 * kH, 0)), (V{5, 4, 3, 2, 1}));
  EXPECT_EQ(ids(AdviceJobs(jobs, "alice", kT0, kT0 + 24 * kH, 2)), (V{5, 4}));
  EXPECT_EQ(ids(AdviceJobs(jobs, "1000", kT0, kT0 + 3 * kH, 0)), (V{2, 1}));  // ends before 03:00
  // Both ends included: job 1 ended at 01:10:00 exactly.
  EXPECT_EQ(ids(AdviceJobs(jobs, "alice", kT0 + kH + 600, kT0 + kH + 600, 0)), (V{1}));
  EXPECT_EQ(ids(AdviceJobs(jobs, "bob", kT0, kT0 + kH, 0)), (V{20}));
}

TEST(AdviceTest, Outputs) {
  UtcZone utc;
  const AdviceReport r = MakeAdviceReport(AliceJobs(), "alice", kT0, kT0 + 24 * kH, 0);
  const std::string text = RenderAdvice(r, ReportFormat::kTable, false);
  EXPECT_EQ(text.substr(0, text.find("Advice: ")),
            "Advice for alice from 5 jobs that ended between 2024-03-01T00:00:00 and "
            "2024-03-02T00:00:00\n"
            "Resource  Jobs  Unmeasured  RanOut  MedianAsked   MaxUsed  MedianUsed  MaxUsedPct  "
            "MedianUsedPct  Verdict   Suggestion\n"
            "--------  ----  ----------  ------  -----------  --------  ----------  ----------  "
            "-------------  --------  -----------------\n"
            "memory       5           0       0           8G      900M        700M       11.0%  "
            "         8.5%  ask less  --mem=2G\n"
            "time         5           0       0     04:00:00  00:25:00    00:15:00       10.4%  "
            "         6.2%  ask less  --time=00:40:00\n"
            "CPUs         5           0       0         4.00      1.20        1.00       30.0%  "
            "        25.0%  ask less  --cpus-per-task=2\n"
            "GPUs         2           1       0         2.00      0.40        0.30       20.0%  "
            "        15.0%  ask less  --gpus=1\n");
  EXPECT_NE(text.find("\nAdvice: memory: 5 jobs used at most 11%"), std::string::npos);
  EXPECT_NE(text.find("\nAdvice: GPUs: 2 jobs"), std::string::npos);
  // CSV: the evidence table with the sentence in its last column (quoted: it holds commas).
  const std::string csv = RenderAdvice(r, ReportFormat::kCsv, false);
  EXPECT_EQ(csv.substr(0, csv.find('\n') + 1),
            "Resource,Jobs,Unmeasured,RanOut,MedianAsked,MaxUsed,MedianUsed,MaxUsedPct,"
            "MedianUsedPct,Verdict,Suggestion,Advice\n");
  EXPECT_NE(csv.find("\nCPUs,5,0,0,4.00,1.20,1.00,30.0,25.0,ask less,--cpus-per-task=2,\"CPUs: "
                     "5 jobs kept at most 30% of their CPUs busy (at most 1.2 busy in job 2, "
                     "median 1.0; median request 4): --cpus-per-task=2 would have served all of "
                     "them\"\n"),
            std::string::npos);
  const json j = AdviceJson(r);
  EXPECT_EQ(j["user"], "alice");
  EXPECT_EQ(j["jobs"], 5);
  EXPECT_EQ(j["resources"][0]["resource"], "memory");
  EXPECT_EQ(j["resources"][0]["advice"], "less");
  EXPECT_EQ(j["resources"][0]["unit"], "MiB per node");
  EXPECT_EQ(j["resources"][0]["max_used"], 900);
  EXPECT_EQ(j["resources"][0]["max_used_percent"], 10.9863);
  EXPECT_EQ(j["resources"][0]["suggestion"], 2048);
  EXPECT_EQ(j["resources"][0]["option"], "--mem=2G");
  EXPECT_EQ(j["resources"][3]["max_job"], "2");
  // No jobs: the title alone.
  const AdviceReport none = MakeAdviceReport(AliceJobs(), "carol", kT0, kT0 + kH, 0);
  EXPECT_EQ(RenderAdvice(none, ReportFormat::kTable, false),
            "Advice for carol from 0 jobs that ended between 2024-03-01T00:00:00 and "
            "2024-03-01T01:00:00\n");
}

TEST(AdviceTest, Rounding) {
  EXPECT_EQ(RoundUpMemMib(1), 128);
  EXPECT_EQ(RoundUpMemMib(129), 256);
  EXPECT_EQ(RoundUpMemMib(1024), 1024);
  EXPECT_EQ(RoundUpMemMib(1025), 2048);
  EXPECT_EQ(MemOptionValue(512), "512M");
  EXPECT_EQ(MemOptionValue(8192), "8G");
  EXPECT_EQ(RoundUpTimeLimit(1), 300);
  EXPECT_EQ(RoundUpTimeLimit(3601), 5400);
  EXPECT_EQ(RoundUpTimeLimit(86401), 90000);
}

}  // namespace
}  // namespace berth::slurm
