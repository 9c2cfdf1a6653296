// Format names, format detection and file reading (ReadTrace / ParseTrace).
#include "sim/trace.h"

#include <gtest/gtest.h>

#include <cstdio>
#include <filesystem>
#include <string>

#include "sim/trace_testing.h"

namespace berth::sim {
namespace {

TEST(TraceFormatTest, NamesRoundTrip) {
  for (TraceFormat f : {TraceFormat::kSwf, TraceFormat::kPhilly, TraceFormat::kItp,
                        TraceFormat::kAlibabaPods, TraceFormat::kJsonl}) {
    Result<TraceFormat> parsed = ParseTraceFormat(TraceFormatName(f));
    ASSERT_TRUE(parsed.ok());
    EXPECT_EQ(*parsed, f);
  }
  EXPECT_EQ(TraceFormatName(TraceFormat::kAlibabaPods), "alibaba");
  Result<TraceFormat> upper = ParseTraceFormat("SWF");
  ASSERT_TRUE(upper.ok());
  EXPECT_EQ(*upper, TraceFormat::kSwf);
  EXPECT_EQ(ParseTraceFormat("csv").status().ToString(),
            "INVALID_ARGUMENT: unknown trace format 'csv' (expected swf, philly, itp, alibaba or "
            "jsonl)");
}

TEST(TraceFormatTest, DetectsTheFormatFromTheFirstLineOrTheName) {
  const std::string swf_job = "1 0 -1 10 4 -1 -1 4 20 -1 1 1 1 -1 -1 -1 -1 -1\n";
  struct Case {
    std::string name;
    std::string text;
    TraceFormat format;
  };
  const Case cases[] = {
      {"a.txt", "; Version: 2.2\n" + swf_job, TraceFormat::kSwf},
      {"a.txt", "\n  \n" + swf_job, TraceFormat::kSwf},  // no header
      {"a.txt", "1 0 -1 10 4 -1 -1 4 20 -1 1 1 1 -1 -1 -1 -1 -1 {1,1} q 1:ppn=4\n",
       TraceFormat::kSwf},
      {"a.swf", "", TraceFormat::kSwf},
      {"a.txt", "  {\"submit\": 0, \"run\": 1}\n", TraceFormat::kJsonl},
      {"a.JSONL", "", TraceFormat::kJsonl},
      {"a.ndjson", "", TraceFormat::kJsonl},
      {"a.csv", "timestamp,duration,num_gpus,gpu_time,cluster\n", TraceFormat::kPhilly},
      {"a.csv", "job_id,submission_time,duration,num_gpu\n", TraceFormat::kItp},
      {"a.csv", "name,cpu_milli,memory_mib,num_gpu,gpu_milli\n", TraceFormat::kAlibabaPods},
  };
  for (const Case& c : cases) {
    Result<Trace> t = ParseTrace(c.text, c.name, {});
    ASSERT_TRUE(t.ok()) << c.text << ": " << t.status().ToString();
    EXPECT_EQ(t->format, c.format) << c.text;
  }
}

TEST(TraceFormatTest, UndetectableInputsSaySo) {
  struct Case {
    std::string name;
    std::string text;
    std::string message;
  };
  const Case cases[] = {
      {"a.csv", "", "a.csv: the file is empty; cannot tell its format (give --format)"},
      {"a.gz", std::string("\x1f\x8b\x08\x00", 4),
       "a.gz: the file is gzip-compressed; decompress it first"},
      {"a.txt", "1 2 3\n",
       "a.txt: cannot tell the trace format from its first line '1 2 3' (give --format: swf, "
       "philly, itp, alibaba or jsonl)"},
  };
  for (const Case& c : cases) {
    Result<Trace> t = ParseTrace(c.text, c.name, {});
    ASSERT_FALSE(t.ok());
    EXPECT_EQ(t.status().ToString(), Status::InvalidArgument(c.message).ToString());
  }
}

TEST(TraceFormatTest, AnExplicitFormatWins) {
  ReadOptions o;
  o.format = TraceFormat::kJsonl;
  Result<Trace> t = ParseTrace("; MaxProcs: 4\n", "a.swf", o);
  ASSERT_FALSE(t.ok());
  EXPECT_EQ(t.status().message().rfind("a.swf:1: not valid JSON", 0), 0u);
}

TEST(ReadTraceTest, FileErrorsNameThePath) {
  Result<Trace> missing = ReadTrace("/nonexistent/dir/t.swf", {});
  EXPECT_EQ(missing.status().ToString(),
            "NOT_FOUND: cannot open trace '/nonexistent/dir/t.swf': No such file or directory");
  const std::string dir = ::testing::TempDir();
  Result<Trace> directory = ReadTrace(dir, {});
  ASSERT_FALSE(directory.ok());
  EXPECT_NE(directory.status().message().find(dir), std::string::npos);
}

TEST(ReadTraceTest, ReadsFromDiskWithTheFileNameAsTheTraceName) {
  const std::filesystem::path path =
      std::filesystem::path(::testing::TempDir()) / "berth_trace_test.jsonl";
  std::FILE* f = std::fopen(path.c_str(), "wb");
  ASSERT_NE(f, nullptr);
  std::fputs("{\"submit\": 0, \"run\": 5}\n{\"submit\": x}\n", f);
  std::fclose(f);
  Result<Trace> t = ReadTrace(path.string(), {});
  ASSERT_FALSE(t.ok());
  EXPECT_EQ(t.status().message().rfind(path.string() + ":2: not valid JSON", 0), 0u);
  ReadOptions skip;
  skip.skip_bad = true;
  t = ReadTrace(path.string(), skip);
  ASSERT_TRUE(t.ok());
  EXPECT_EQ(t->name, "berth_trace_test.jsonl");
  EXPECT_EQ(t->jobs.size(), 1u);
  EXPECT_EQ(t->skipped_bad, 1);
  std::filesystem::remove(path);
}

}  // namespace
}  // namespace berth::sim
