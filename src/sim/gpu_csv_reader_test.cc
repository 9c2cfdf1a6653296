// The GPU CSV readers (Philly, ITP, Alibaba pods) through the public API.
#include <gtest/gtest.h>

#include <random>
#include <string>
#include <vector>

#include "sim/trace.h"
#include "sim/trace_testing.h"

namespace berth::sim {
namespace {

ReadOptions Options(std::optional<TraceFormat> format = std::nullopt, bool skip_bad = false) {
  ReadOptions o;
  o.format = format;
  o.skip_bad = skip_bad;
  return o;
}

TEST(PhillyReaderTest, SubmitTimesStartAtTheEarliestStampInTheFile) {
  const std::string text =
      "timestamp,duration,num_gpus,gpu_time,cluster\n"
      "2017-10-09 07:01:55,66.0,1,66.0,11cb48\n"
      "2017-10-09 06:13:03,2951.5,2,5903.0,6214e9\n"  // earlier than the row above
      "2017-10-10 00:00:00,0.0,1,0.0,6214e9\n"        // no duration: dropped
      "2017-10-08 23:59:59,30,0,0,6214e9\n"           // no GPUs: dropped, yet the earliest stamp
      "\n";
  Result<Trace> t = ParseTrace(text, "philly.csv", Options());
  ASSERT_TRUE(t.ok()) << t.status().ToString();
  EXPECT_EQ(t->format, TraceFormat::kPhilly);
  EXPECT_EQ(t->dropped, 2);
  EXPECT_EQ(t->header.unix_start_time, 1507507199);  // 2017-10-08 23:59:59 read as UTC
  ASSERT_EQ(t->jobs.size(), 2u);
  const TraceJob& a = t->jobs[0];
  EXPECT_EQ(a.trace_id, 1u);
  EXPECT_EQ(a.line, 2);
  EXPECT_EQ(a.submit, 1507532515 - 1507507199);
  EXPECT_EQ(a.run_time, 66);
  EXPECT_EQ(a.requested, 66);
  EXPECT_EQ(a.gpus, 1);
  EXPECT_EQ(a.procs, 0);
  EXPECT_EQ(a.user, "");
  EXPECT_EQ(a.account, "11cb48");
  const TraceJob& b = t->jobs[1];
  EXPECT_EQ(b.trace_id, 2u);
  EXPECT_EQ(b.submit, 1507529583 - 1507507199);
  EXPECT_EQ(b.run_time, 2951);  // rounded down
  EXPECT_EQ(b.gpus, 2);
}

TEST(PhillyReaderTest, AcceptsSpacesQuotesAndAnyColumnOrder) {
  const std::string text =
      "\xEF\xBB\xBF\"cluster\", num_gpus , duration, timestamp\r\n"
      "\"ab,c\", 4 , 100, \"2017-10-09 07:01:55\"\r\n";
  Result<Trace> t = ParseTrace(text, "p.csv", Options());
  ASSERT_TRUE(t.ok()) << t.status().ToString();
  EXPECT_EQ(t->format, TraceFormat::kPhilly);
  ASSERT_EQ(t->jobs.size(), 1u);
  EXPECT_EQ(t->jobs[0].account, "ab,c");
  EXPECT_EQ(t->jobs[0].gpus, 4);
  EXPECT_EQ(t->jobs[0].run_time, 100);
  EXPECT_EQ(t->jobs[0].submit, 0);
}

TEST(ItpReaderTest, ReadsRawAndElasticFlowColumns) {
  struct Case {
    std::string text;
  };
  const Case cases[] = {
      {"job_id,submission_time,duration,num_gpu\n"
       "6b2d9ccc-6279-403c-e1a2-cfe7810d5c57,16566,3890,4\n"
       "x,20000,0,1\n"},
      {"job_id,submission_time,num_iteration,model_name,deadline,batch_size,num_gpu,duration\n"
       "6b2d9ccc-6279-403c-e1a2-cfe7810d5c57,16566,40285,bert,21347,64,4,3890\n"
       "x,20000,1,bert,1,1,1,0\n"},
  };
  for (const Case& c : cases) {
    Result<Trace> t = ParseTrace(c.text, "cluster01.csv", Options());
    ASSERT_TRUE(t.ok()) << t.status().ToString();
    EXPECT_EQ(t->format, TraceFormat::kItp);
    ASSERT_EQ(t->jobs.size(), 1u);
    EXPECT_EQ(t->dropped, 1);
    EXPECT_EQ(t->jobs[0].trace_id, 1u);
    EXPECT_EQ(t->jobs[0].submit, 16566);
    EXPECT_EQ(t->jobs[0].run_time, 3890);
    EXPECT_EQ(t->jobs[0].requested, 3890);
    EXPECT_EQ(t->jobs[0].gpus, 4);
  }
}

constexpr char kPodHeader[] =
    "name,cpu_milli,memory_mib,num_gpu,gpu_milli,gpu_spec,qos,pod_phase,creation_time,"
    "deletion_time,scheduled_time\n";

TEST(AlibabaReaderTest, MapsPodsToJobs) {
  const std::string text = std::string(kPodHeader) +
                           "openb-pod-0000,12000,16384,1,460,,LS,Running,0,12537496,100\n"
                           "openb-pod-0001,1500,2048,2,1000,V100M16|V100M32,BE,Failed,50,90,60\n"
                           "openb-pod-0061,11908,47104,1,1000,,BE,Pending,10001278,10001403,\n"
                           "openb-pod-0062,1000,1024,0,0,P100,BE,Running,7,7,7\n"
                           "openb-pod-0063,0,0,0,0,,BE,Running,7,9,7\n"
                           "openb-pod-0064,2000,1024,1,250,,BE,Pending,20,30,\n"
                           "openb-pod-0065,2000,1024,1,300,,LS,Running,40,,45\n";
  Result<Trace> t = ParseTrace(text, "openb_pod_list_default.csv", Options());
  ASSERT_TRUE(t.ok()) << t.status().ToString();
  EXPECT_EQ(t->format, TraceFormat::kAlibabaPods);
  EXPECT_EQ(t->dropped, 1);  // only the pod asking for nothing
  ASSERT_EQ(t->jobs.size(), 6u);
  auto row = [&](uint64_t id) -> const TraceJob& {
    for (const TraceJob& j : t->jobs) {
      if (j.trace_id == id) return j;
    }
    ADD_FAILURE() << "no job from row " << id;
    return t->jobs[0];
  };
  // Never scheduled: it runs for its time in the cluster (deletion - creation).
  EXPECT_EQ(row(3).run_time, 10001403 - 10001278);
  EXPECT_EQ(row(3).gpus, 1);
  EXPECT_EQ(row(4).run_time, 1);  // deleted in the second it was scheduled: one second
  // A fractional pod that never ran is kept with its share.
  EXPECT_EQ(row(6).run_time, 10);
  EXPECT_EQ(row(6).gpu_milli, 250);
  // Still running when the collection ended: the short form's run time.
  EXPECT_EQ(row(7).run_time, kAlibabaShortFormRunTime);
  EXPECT_EQ(row(7).gpu_milli, 300);
  EXPECT_EQ(row(7).submit, 40);
  const TraceJob& a = row(1);
  EXPECT_EQ(a.submit, 0);
  EXPECT_EQ(a.run_time, 12537396);  // deletion - scheduled
  EXPECT_EQ(a.requested, a.run_time);
  EXPECT_EQ(a.procs, 12);
  EXPECT_EQ(a.mem_mib, 16384);
  EXPECT_EQ(a.gpus, 1);
  EXPECT_EQ(a.gpu_milli, 460);
  EXPECT_EQ(a.gpu_type, "");
  EXPECT_EQ(a.exit_code, 0);
  const TraceJob& b = row(2);
  EXPECT_EQ(b.procs, 2);      // ceil(1500 / 1000)
  EXPECT_EQ(b.gpu_milli, 0);  // only meaningful for one GPU
  EXPECT_EQ(b.gpu_type, "V100M16");
  EXPECT_EQ(b.submit, 50);
  EXPECT_EQ(b.run_time, 30);
  EXPECT_EQ(b.exit_code, 1);
  EXPECT_EQ(t->largest_procs, 12);
}

TEST(AlibabaReaderTest, ShortFormSubmitsEveryPodAtZeroForTheDefaultRunTime) {
  const std::string text =
      "name,cpu_milli,memory_mib,num_gpu,gpu_milli\n"
      "openb-pod-0000,12000,16384,1,1000\n"
      "openb-pod-9059,60200,320512,4,1000\n";
  Result<Trace> t = ParseTrace(text, "openb_pod_list_multigpu50.csv", Options());
  ASSERT_TRUE(t.ok()) << t.status().ToString();
  ASSERT_EQ(t->jobs.size(), 2u);
  for (const TraceJob& j : t->jobs) {
    EXPECT_EQ(j.submit, 0);
    EXPECT_EQ(j.run_time, kAlibabaShortFormRunTime);
    EXPECT_EQ(j.requested, kAlibabaShortFormRunTime);
  }
  EXPECT_EQ(t->jobs[1].procs, 61);
  EXPECT_EQ(t->jobs[1].gpus, 4);
  EXPECT_EQ(t->jobs[1].gpu_milli, 0);
}

TEST(GpuCsvReaderTest, HeaderProblemsFailTheWholeFile) {
  struct Case {
    std::string text;
    std::optional<TraceFormat> format;
    std::string message;
  };
  const Case cases[] = {
      {"timestamp,duration,cluster\n", TraceFormat::kPhilly,
       "h.csv:1: the header has no column 'num_gpus' (needed by the philly format)"},
      {"name,cpu_milli,memory_mib,num_gpu,gpu_milli,creation_time\n", std::nullopt,
       "h.csv:1: the header has no column 'deletion_time' (needed by the alibaba format)"},
      {"\n\n", TraceFormat::kItp, "h.csv: no header line"},
      {"sn,cpu_milli,memory_mib,gpu,model\nopenb-node-0000,32000,262144,0,\n", std::nullopt,
       "h.csv: this is a list of nodes or machines, not a job trace"},
      {"machineId, number of GPUs, single GPU mem\nm0,2, 12GB\n", std::nullopt,
       "h.csv: this is a list of nodes or machines, not a job trace"},
      {"a,b,c\n1,2,3\n", std::nullopt,
       "h.csv: cannot tell the trace format from its first line 'a,b,c' (give --format: swf, "
       "philly, itp, alibaba or jsonl)"},
  };
  for (const Case& c : cases) {
    Result<Trace> t = ParseTrace(c.text, "h.csv", Options(c.format, /*skip_bad=*/true));
    ASSERT_FALSE(t.ok()) << c.text;
    EXPECT_EQ(t.status().ToString(), Status::InvalidArgument(c.message).ToString());
  }
}

TEST(GpuCsvReaderTest, MalformedRowsNameFileLineAndProblem) {
  struct Case {
    std::string header;
    std::string row;
    std::string message;
  };
  const std::string philly = "timestamp,duration,num_gpus,gpu_time,cluster";
  const std::string itp = "job_id,submission_time,duration,num_gpu";
  const Case cases[] = {
      {philly, "2017-10-09 07:01:55,66.0,1,66.0", "r.csv:2: expected 5 fields, found 4"},
      {philly, "2017-10-09 07:01:55,66.0,1,66.0,a,", "r.csv:2: expected 5 fields, found 6"},
      {philly, "yesterday,66.0,1,66.0,a",
       "r.csv:2: timestamp is not a date and time like '2017-10-09 07:01:55': 'yesterday'"},
      {philly, "2017-10-09 07:01:55,NaN,1,66.0,a",
       "r.csv:2: duration is not a number in range: 'NaN'"},
      {philly, "2017-10-09 07:01:55,1,,1,a", "r.csv:2: num_gpus is not a number in range: ''"},
      {philly, "2017-10-09 07:01:55,\"1,1,1,a", "r.csv:2: unterminated quote in field 2"},
      {itp, "x,-5,10,1", "r.csv:2: negative submission_time -5"},
      {itp, "x,1e300,10,1", "r.csv:2: submission_time is not a number in range: '1e300'"},
      {std::string(kPodHeader, sizeof(kPodHeader) - 2), "p,-1000,1,1,1,,LS,Running,0,1,0",
       "r.csv:2: negative cpu_milli -1000"},
      {std::string(kPodHeader, sizeof(kPodHeader) - 2), "p,1000,1,1,1,,LS,Running,0,x,0",
       "r.csv:2: deletion_time is not a number in range: 'x'"},
  };
  for (const Case& c : cases) {
    Result<Trace> t = ParseTrace(c.header + "\n" + c.row + "\n", "r.csv", Options());
    ASSERT_FALSE(t.ok()) << c.row;
    EXPECT_EQ(t.status().ToString(), Status::InvalidArgument(c.message).ToString());
    Result<Trace> skipped = ParseTrace(c.header + "\n" + c.row + "\n", "r.csv", Options({}, true));
    ASSERT_TRUE(skipped.ok());
    EXPECT_EQ(skipped->skipped_bad, 1);
    EXPECT_EQ(skipped->bad_lines, std::vector<std::string>{c.message});
  }
}

TEST(GpuCsvReaderTest, RandomGarbageNeverCrashes) {
  const uint64_t seed = std::random_device{}();
  SCOPED_TRACE("seed " + std::to_string(seed));
  std::mt19937_64 rng(seed);
  const std::string headers[] = {"timestamp,duration,num_gpus,gpu_time,cluster\n",
                                 "job_id,submission_time,duration,num_gpu\n", kPodHeader,
                                 "name,cpu_milli,memory_mib,num_gpu,gpu_milli\n"};
  for (int round = 0; round < 200; ++round) {
    std::string text = headers[round % 4];
    for (int i = 0; i < 20; ++i) text += testing::GarbageLine(rng) + "\n";
    Result<Trace> strict = ParseTrace(text, "g.csv", Options());
    if (!strict.ok()) {
      EXPECT_EQ(strict.status().code(), StatusCode::kInvalidArgument);
    }
    Result<Trace> lenient = ParseTrace(text, "g.csv", Options({}, true));
    ASSERT_TRUE(lenient.ok()) << lenient.status().ToString();
  }
}

TEST(GpuCsvReaderTest, ReadsTheBundledPhillyExcerpt) {
  Result<Trace> t = ReadTrace(testing::SourcePath("data/traces/philly.first500.csv"), {});
  ASSERT_TRUE(t.ok()) << t.status().ToString();
  EXPECT_EQ(t->format, TraceFormat::kPhilly);
  EXPECT_EQ(t->jobs.size(), 500u);
  EXPECT_EQ(t->dropped, 0);
  EXPECT_EQ(t->header.unix_start_time, 1506617994);  // 2017-09-28 16:59:54
  EXPECT_EQ(t->jobs[0].submit, 914521);
  EXPECT_EQ(t->jobs[1].submit, 911589);
}

TEST(GpuCsvReaderTest, ReadsEveryRealJobTraceAndRefusesNodeLists) {
  const std::string dir = testing::SharedTestdata("gpu");
  if (dir.empty()) GTEST_SKIP() << "no shared test data on this machine";
  // Counts from an independent reading (Python) of the same rules.
  struct Expected {
    std::string file;
    size_t kept;
    int64_t dropped;
  };
  const Expected expected[] = {
      {"philly_jobs.sia-derived.csv", 82247, 0},   {"openb_pod_list_default.csv", 8152, 0},
      {"openb_pod_list_gpushare100.csv", 8152, 0}, {"openb_pod_list_gpuspec33.csv", 8152, 0},
      {"openb_pod_list_multigpu50.csv", 9061, 0},
  };
  int traces = 0;
  for (const std::string& path : testing::FilesUnder(dir)) {
    Result<Trace> t = ReadTrace(path, {});
    if (!t.ok()) {
      // Not a job trace (node lists, machine specs, summaries): refused with a clear message.
      EXPECT_EQ(t.status().code(), StatusCode::kInvalidArgument) << path;
      EXPECT_NE(t.status().message().find(path), std::string::npos) << t.status().ToString();
      for (const Expected& e : expected) EXPECT_EQ(path.find(e.file), std::string::npos) << path;
      continue;
    }
    ++traces;
    EXPECT_EQ(t->skipped_bad, 0) << path;
    for (const Expected& e : expected) {
      if (t->name != e.file) continue;
      EXPECT_EQ(t->jobs.size(), e.kept) << path;
      EXPECT_EQ(t->dropped, e.dropped) << path;
    }
  }
  EXPECT_GE(traces, 1);
}

TEST(GpuCsvReaderTest, PhillyRealTraceStartsAtItsEarliestStamp) {
  const std::string dir = testing::SharedTestdata("gpu/microsoft-philly");
  if (dir.empty()) GTEST_SKIP() << "no shared test data on this machine";
  Result<Trace> t = ReadTrace(dir + "/philly_jobs.sia-derived.csv", {});
  ASSERT_TRUE(t.ok()) << t.status().ToString();
  EXPECT_EQ(t->header.unix_start_time, 1504521041);  // 2017-09-04 10:30:41
  EXPECT_EQ(t->jobs[0].submit, 3011474);
  Time latest = 0;
  for (const TraceJob& j : t->jobs) {
    EXPECT_GE(j.submit, 0);
    latest = std::max(latest, j.submit);
  }
  EXPECT_EQ(latest, 9408690);
}

}  // namespace
}  // namespace berth::sim
