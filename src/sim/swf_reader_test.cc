// SWF reading through the public API (ParseTrace / ReadTrace), with the quirks of real logs.
#include <gtest/gtest.h>

#include <random>
#include <string>
#include <vector>

#include "sim/trace.h"
#include "sim/trace_testing.h"

namespace berth::sim {
namespace {

ReadOptions Swf(int64_t procs = 0, bool skip_bad = false) {
  ReadOptions o;
  o.format = TraceFormat::kSwf;
  o.procs = procs;
  o.skip_bad = skip_bad;
  return o;
}

// An 18-field line: id submit wait run procs cpu mem req_procs req_time req_mem status user
// group exe queue partition preceding think.
std::string Job(const std::string& id, const std::string& submit, const std::string& run,
                const std::string& procs, const std::string& req_procs = "-1",
                const std::string& req_time = "-1", const std::string& status = "1",
                const std::string& user = "-1", const std::string& group = "-1") {
  return id + " " + submit + " -1 " + run + " " + procs + " -1 -1 " + req_procs + " " + req_time +
         " -1 " + status + " " + user + " " + group + " -1 -1 -1 -1 -1\n";
}

TEST(SwfReaderTest, FillsTraceJobsFromTheFields) {
  const std::string text = "; MaxProcs: 64\n" +
                           Job("7", "120.9", "3600", "8", "16", "7200", "0", "12", "3") +
                           Job("8", "200", "60", "-1", "4", "-1", "1", "-1", "0");
  Result<Trace> t = ParseTrace(text, "dir/x.swf", Swf());
  ASSERT_TRUE(t.ok()) << t.status().ToString();
  EXPECT_EQ(t->name, "x.swf");
  EXPECT_EQ(t->format, TraceFormat::kSwf);
  ASSERT_EQ(t->jobs.size(), 2u);
  const TraceJob& a = t->jobs[0];
  EXPECT_EQ(a.trace_id, 7u);
  EXPECT_EQ(a.line, 2);
  EXPECT_EQ(a.submit, 120);  // rounded down
  EXPECT_EQ(a.run_time, 3600);
  EXPECT_EQ(a.requested, 7200);
  EXPECT_EQ(a.procs, 8);  // field 5 wins over field 8
  EXPECT_EQ(a.user, "u12");
  EXPECT_EQ(a.account, "g3");
  EXPECT_EQ(a.exit_code, 1);  // status 0 = failed
  EXPECT_FALSE(a.has_spec);
  const TraceJob& b = t->jobs[1];
  EXPECT_EQ(b.procs, 4);       // field 5 is -1: field 8
  EXPECT_EQ(b.requested, 60);  // no estimate: the run time
  EXPECT_EQ(b.user, "");       // -1: no user
  EXPECT_EQ(b.account, "");    // 0: no group
  EXPECT_EQ(b.exit_code, 0);
}

TEST(SwfReaderTest, PoolSizeComesFromOptionThenHeaderThenLargestJob) {
  struct Case {
    std::string name;
    std::string header;
    int64_t option;
    int64_t pool;
    int64_t kept;  // of jobs with 10, 100 and 300 procs
  };
  const Case cases[] = {
      {"option wins", "; MaxProcs: 100\n; MaxNodes: 50\n", 300, 300, 3},
      {"max procs", "; MaxProcs: 100\n; MaxNodes: 50\n", 0, 100, 2},
      {"max nodes when procs absent", "; MaxNodes: 50\n", 0, 50, 1},
      {"max nodes when procs is -1", "; MaxProcs: -1\n; MaxNodes: 50\n", 0, 50, 1},
      {"largest job without header", "", 0, 300, 3},
      {"unparsable header value", "; MaxProcs: many\n", 0, 300, 3},
  };
  for (const Case& c : cases) {
    const std::string text = c.header + Job("1", "0", "10", "10") + Job("2", "5", "10", "100") +
                             Job("3", "9", "10", "300");
    Result<Trace> t = ParseTrace(text, "p.swf", Swf(c.option));
    ASSERT_TRUE(t.ok()) << c.name;
    EXPECT_EQ(t->pool_procs, c.pool) << c.name;
    EXPECT_EQ(t->largest_procs, 300) << c.name;
    EXPECT_EQ(static_cast<int64_t>(t->jobs.size()), c.kept) << c.name;
    EXPECT_EQ(t->dropped, 3 - c.kept) << c.name;
  }
}

TEST(SwfReaderTest, DropsJobsThatCannotRun) {
  const std::string text = "; MaxProcs: 8\n" + Job("1", "0", "0", "1") +  // run 0
                           Job("2", "0", "-1", "1") +                     // run unknown
                           Job("3", "0", "0.5", "1") +                    // rounds down to 0
                           Job("4", "0", "10", "-1", "-1") +              // no procs at all
                           Job("5", "0", "10", "0", "0") +                // zero procs
                           Job("6", "0", "10", "9") +                     // larger than P
                           Job("7", "0", "10", "8");                      // kept
  Result<Trace> t = ParseTrace(text, "d.swf", Swf());
  ASSERT_TRUE(t.ok());
  EXPECT_EQ(t->dropped, 6);
  ASSERT_EQ(t->jobs.size(), 1u);
  EXPECT_EQ(t->jobs[0].trace_id, 7u);
  EXPECT_EQ(t->largest_procs, 9);  // dropped jobs count here
}

TEST(SwfReaderTest, ToleratesTheQuirksOfRealLogs) {
  const std::string text =
      "; Version: 2.2\r\n"
      "; Computer: Linux cluster (Seth)\r\n"
      "; UnixStartTime: 1027839845\r\n"
      ";\r\n"
      "\r\n"
      "    12   342343      5    553   40 552.21    -1   40  43200    -1  1   4   1  -1 -1  1 -1 "
      "-1\r\n"
      "   \t \r\n"
      "\t13\t342921\t102\t10027\t40\t10027\t-1\t40\t43200\t-1\t1\t4\t1\t-1\t-1\t1\t-1\t-1\n"
      "; a note between jobs\n"
      "14 347226 15 33156 8 33157 -1 8 86400 -1 1 5 1 -1 -1 1 -1 -1 {1241,1241} q_1d "
      "1:ppn=8:x86_64#excl\n"
      " ";
  Result<Trace> t = ParseTrace(text, "quirks.swf", Swf());
  ASSERT_TRUE(t.ok()) << t.status().ToString();
  EXPECT_EQ(t->header.unix_start_time, 1027839845);
  EXPECT_EQ(t->header.max_procs, 0);
  ASSERT_EQ(t->jobs.size(), 3u);
  EXPECT_EQ(t->jobs[0].line, 6);
  EXPECT_EQ(t->jobs[1].trace_id, 13u);
  EXPECT_EQ(t->jobs[2].trace_id, 14u);
  EXPECT_EQ(t->jobs[2].line, 10);
  EXPECT_EQ(t->pool_procs, 40);  // no MaxProcs/MaxNodes: the largest job
}

TEST(SwfReaderTest, MalformedLinesNameFileLineAndProblem) {
  struct Case {
    std::string line;
    std::string message;
  };
  const Case cases[] = {
      {"1 0 -1 10 4", "bad.swf:2: expected 18 fields, found 5"},
      {"1 0 -1 ten 4 -1 -1 -1 -1 -1 1 1 1 -1 -1 -1 -1 -1",
       "bad.swf:2: field 4 (run time) is not a number in range: 'ten'"},
      {"1 0 -1 10 4 -1 -1 -1 -1 -1 1 nan 1 -1 -1 -1 -1 -1",
       "bad.swf:2: field 12 (user id) is not a number in range: 'nan'"},
      {"1 0 -1 1e400 4 -1 -1 -1 -1 -1 1 1 1 -1 -1 -1 -1 -1",
       "bad.swf:2: field 4 (run time) is not a number in range: '1e400'"},
      {"1 99999999999999999999 -1 10 4 -1 -1 -1 -1 -1 1 1 1 -1 -1 -1 -1 -1",
       "bad.swf:2: field 2 (submit time) is not a number in range: '99999999999999999999'"},
      {"1 -5 -1 10 4 -1 -1 -1 -1 -1 1 1 1 -1 -1 -1 -1 -1", "bad.swf:2: negative submit time -5"},
      {"-3 0 -1 10 4 -1 -1 -1 -1 -1 1 1 1 -1 -1 -1 -1 -1", "bad.swf:2: negative job id -3"},
      {"1,0,-1,10,4,-1,-1,-1,-1,-1,1,1,1,-1,-1,-1,-1,-1", "bad.swf:2: expected 18 fields, found 1"},
  };
  for (const Case& c : cases) {
    Result<Trace> t = ParseTrace("; MaxProcs: 8\n" + c.line + "\n", "bad.swf", Swf());
    ASSERT_FALSE(t.ok()) << c.line;
    EXPECT_EQ(t.status().ToString(), Status::InvalidArgument(c.message).ToString());
  }
}

TEST(SwfReaderTest, SkipBadCountsAndKeepsTwentyMessages) {
  std::string text = "; MaxProcs: 8\n";
  for (int i = 0; i < 30; ++i) text += "garbage line " + std::to_string(i) + "\n";
  text += Job("1", "0", "10", "2");
  Result<Trace> t = ParseTrace(text, "s.swf", Swf(0, /*skip_bad=*/true));
  ASSERT_TRUE(t.ok());
  EXPECT_EQ(t->skipped_bad, 30);
  ASSERT_EQ(t->bad_lines.size(), 20u);
  EXPECT_EQ(t->bad_lines[0], "s.swf:2: expected 18 fields, found 3");
  EXPECT_EQ(t->jobs.size(), 1u);
}

TEST(SwfReaderTest, RandomGarbageNeverCrashes) {
  const uint64_t seed = std::random_device{}();
  SCOPED_TRACE("seed " + std::to_string(seed));
  std::mt19937_64 rng(seed);
  for (int round = 0; round < 200; ++round) {
    std::string text;
    for (int i = 0; i < 20; ++i) {
      text += (i % 3 == 0) ? Job(std::to_string(i), "0", "10", "4") : testing::GarbageLine(rng);
      text += "\n";
    }
    Result<Trace> strict = ParseTrace(text, "f.swf", Swf());
    if (!strict.ok()) {
      EXPECT_EQ(strict.status().code(), StatusCode::kInvalidArgument);
    }
    Result<Trace> lenient = ParseTrace(text, "f.swf", Swf(0, true));
    ASSERT_TRUE(lenient.ok());
    EXPECT_GE(lenient->jobs.size() + lenient->dropped, 7u);
  }
}

// Large enough to show a quadratic slip; the 1,000,000-line timing (about 1 s on the 2-core
// build machine, RelWithDebInfo) is measured outside the unit tests.
TEST(SwfReaderTest, ReadsALargeTrace) {
  constexpr int kJobs = 200'000;
  std::string text = "; MaxProcs: 128\n";
  text.reserve(size_t{kJobs} * 90);
  for (int i = 1; i <= kJobs; ++i) {
    text += Job(std::to_string(i), std::to_string(i * 7), std::to_string(1 + i % 5000),
                std::to_string(1 + i % 128), "-1", "86400", "1", std::to_string(i % 300));
  }
  Result<Trace> t = ParseTrace(text, "big.swf", Swf());
  ASSERT_TRUE(t.ok());
  ASSERT_EQ(t->jobs.size(), static_cast<size_t>(kJobs));
  EXPECT_EQ(t->jobs.back().submit, Time{kJobs} * 7);
}

TEST(SwfReaderTest, ReadsTheBundledExcerpt) {
  Result<Trace> t =
      ReadTrace(testing::SourcePath("data/traces/KTH-SP2-1996-2.1-cln.first2000.swf"), {});
  ASSERT_TRUE(t.ok()) << t.status().ToString();
  EXPECT_EQ(t->format, TraceFormat::kSwf);
  EXPECT_EQ(t->header.max_procs, 100);
  EXPECT_EQ(t->header.unix_start_time, 843480031);
  EXPECT_EQ(t->pool_procs, 100);
  EXPECT_EQ(t->jobs.size(), 2000u);
  EXPECT_EQ(t->dropped, 0);
  EXPECT_EQ(t->largest_procs, 84);
  EXPECT_EQ(t->jobs.front().trace_id, 15u);
  EXPECT_EQ(t->jobs.front().submit, 599850);
  EXPECT_EQ(t->jobs.front().requested, 53940);
  EXPECT_EQ(t->jobs.back().trace_id, 2014u);
}

TEST(SwfReaderTest, ReadsEveryRealLog) {
  const std::string dir = testing::SharedTestdata("swf");
  if (dir.empty()) GTEST_SKIP() << "no shared test data on this machine";
  // Counts from an independent reading (Python) of the same rules.
  struct Expected {
    std::string file;
    size_t kept;
    int64_t dropped;
    int64_t pool;
  };
  const Expected expected[] = {
      {"KTH-SP2-1996-2.1-cln.swf", 28467, 9, 100},
      {"HPC2N-2002.alea-excerpt.swf", 3145, 25, 240},
      {"NASA-iPSC-1993-3.1-cln.swf", 18066, 173, 128},
  };
  int read = 0;
  for (const std::string& path : testing::FilesUnder(dir)) {
    if (path.size() < 4 || path.substr(path.size() - 4) != ".swf") continue;
    Result<Trace> t = ReadTrace(path, {});
    ASSERT_TRUE(t.ok()) << t.status().ToString();
    EXPECT_EQ(t->format, TraceFormat::kSwf) << path;
    EXPECT_FALSE(t->jobs.empty()) << path;
    ++read;
    for (const Expected& e : expected) {
      if (t->name != e.file) continue;
      EXPECT_EQ(t->jobs.size(), e.kept) << path;
      EXPECT_EQ(t->dropped, e.dropped) << path;
      EXPECT_EQ(t->pool_procs, e.pool) << path;
    }
  }
  EXPECT_GT(read, 0);
}

}  // namespace
}  // namespace berth::sim
