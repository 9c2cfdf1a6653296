#include "agent/output_path.h"

#include <gtest/gtest.h>

namespace berth::agent {
namespace {

OutputPatternFields Fields() {
  OutputPatternFields f;
  f.job_id = 128;
  f.job_name = "train";
  f.user = "alice";
  f.node_name = "gpu07";
  f.node_index = 2;
  return f;
}

OutputPatternFields ArrayFields() {
  OutputPatternFields f = Fields();
  f.array_job_id = 120;
  f.array_task_id = 8;
  return f;
}

struct Case {
  const char* pattern;
  bool array;
  const char* want;
};

TEST(OutputPathTest, ExpandsSlurmPatterns) {
  const Case cases[] = {
      {"slurm-%j.out", false, "slurm-128.out"},
      {"slurm-%A_%a.out", true, "slurm-120_8.out"},
      {"%J", false, "128"},
      {"job%4j.out", false, "job0128.out"},
      {"job%2j-%2t.out", false, "job128-00.out"},
      {"%10j", false, "0000000128"},
      {"%15j", false, "0000000128"},  // width capped at 10
      {"%x_%u_%N_%n_%s", false, "train_alice_gpu07_2_batch"},
      {"%5x", false, "train"},  // width ignored on text
      {"%A", false, "128"},     // not an array: the job id
      {"%a", false, "4294967294"},
      {"%3a", true, "008"},
      {"100%%", false, "100%"},
      {"%%j", false, "%j"},
      {"%%%j", false, "%128"},
      {"%q", false, "%q"},
      {"%5q", false, "5q"},
      {"end%", false, "end%"},
      {"end%52", false, "end2"},
      {"a\\%j", false, "a%j"},  // a backslash turns expansion off
      {"a\\\\b%j", false, "a\\b%j"},
      {"", false, ""},
  };
  for (const Case& c : cases) {
    EXPECT_EQ(ExpandOutputPattern(c.pattern, c.array ? ArrayFields() : Fields()), c.want)
        << c.pattern;
  }
}

TEST(OutputPathTest, PathsRelativeToWorkDir) {
  OutputPatternFields f = Fields();
  EXPECT_EQ(OutputPath("", DefaultStdoutPattern(false), f, "/home/alice"),
            "/home/alice/slurm-128.out");
  EXPECT_EQ(OutputPath("", DefaultStdoutPattern(true), ArrayFields(), "/w/"), "/w/slurm-120_8.out");
  EXPECT_EQ(OutputPath("/abs/%j.log", "x", f, "/home/alice"), "/abs/128.log");
  EXPECT_EQ(OutputPath("logs/%x.log", "x", f, "/w"), "/w/logs/train.log");
  // A bare number names one task; the batch step is task 0.
  EXPECT_EQ(OutputPath("3", "x", f, "/w"), "/dev/null");
  EXPECT_EQ(OutputPath("0", "x", f, "/w"), "/w/0");
}

}  // namespace
}  // namespace berth::agent
