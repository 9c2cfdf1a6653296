// berth's JSON Lines trace format (docs/formats/trace-jsonl.md) through the public API.
#include <gtest/gtest.h>

#include <random>
#include <set>
#include <string>
#include <vector>

#include "sim/trace.h"
#include "sim/trace_testing.h"

namespace berth::sim {
namespace {

ReadOptions Jsonl(bool skip_bad = false) {
  ReadOptions o;
  o.format = TraceFormat::kJsonl;
  o.skip_bad = skip_bad;
  return o;
}

Result<TraceJob> One(const std::string& line) {
  Result<Trace> t = ParseTrace(line + "\n", "t.jsonl", Jsonl());
  if (!t.ok()) return t.status();
  if (t->jobs.size() != 1) return Status::Internal("expected one job");
  return t->jobs[0];
}

TEST(JsonlReaderTest, ReadsTheIssueExample) {
  Result<Trace> t = ParseTrace(
      R"({"id": 5, "submit": 0, "run": 10})"
      "\n"
      R"({"id": 7, "submit": 120, "run": 3600, "time_limit": 7200, "user": "alice", "account": "ml", "partition": "gpu", "qos": "high", "nodes": 2, "gpus_per_node": 8, "gpu_type": "h100", "cpus_per_task": 8, "mem_per_node": 65536, "array": "0-3%2", "dependency": "afterok:5"})"
      "\n",
      "t.jsonl", Jsonl());
  ASSERT_TRUE(t.ok()) << t.status().ToString();
  ASSERT_EQ(t->jobs.size(), 2u);
  const TraceJob& j = t->jobs[1];
  EXPECT_EQ(j.trace_id, 7u);
  EXPECT_EQ(j.line, 2);
  EXPECT_TRUE(j.has_spec);
  EXPECT_EQ(j.submit, 120);
  EXPECT_EQ(j.run_time, 3600);
  EXPECT_EQ(j.requested, 7200);
  EXPECT_EQ(j.user, "alice");
  EXPECT_EQ(j.account, "ml");
  EXPECT_EQ(j.gpu_type, "h100");
  EXPECT_EQ(j.gpus, 16);
  EXPECT_EQ(j.procs, 16);  // one task per node, 8 CPUs each
  EXPECT_EQ(j.mem_mib, 131072);
  const core::JobSpec& s = j.spec;
  EXPECT_EQ(s.submit_time, 120);
  EXPECT_EQ(s.time_limit, 7200);
  EXPECT_EQ(s.user, "alice");
  EXPECT_EQ(s.account, "ml");
  EXPECT_EQ(s.partitions, std::vector<std::string>{"gpu"});
  EXPECT_EQ(s.qos, "high");
  EXPECT_EQ(s.min_nodes, 2);
  EXPECT_EQ(s.max_nodes, 2);
  EXPECT_EQ(s.gpus_per_node, 8);
  EXPECT_EQ(s.gpu_type, "h100");
  EXPECT_EQ(s.cpus_per_task, 8);
  EXPECT_EQ(s.mem_per_node_mib, 65536);
  EXPECT_EQ(s.array.task_ids, (std::vector<int32_t>{0, 1, 2, 3}));
  EXPECT_EQ(s.array.max_running, 2);
  ASSERT_EQ(s.dependency.conditions.size(), 1u);
  EXPECT_EQ(s.dependency.conditions[0].type, core::DependencyType::kAfterOk);
  ASSERT_EQ(s.dependency.conditions[0].targets.size(), 1u);
  EXPECT_EQ(s.dependency.conditions[0].targets[0].job_id, 5u);
}

TEST(JsonlReaderTest, FillsEverySpecField) {
  Result<TraceJob> j = One(
      R"({"submit": 1, "run": 2, "time_limit": "UNLIMITED", "time_min": 60, "exit_code": 3,)"
      R"( "name": "n", "comment": "ignored", "uid": 1001, "gid": 100, "partition": "a, b",)"
      R"( "reservation": "r", "begin": 50, "deadline": 500, "nice": -10, "priority": 7,)"
      R"( "hold": "admin", "requeue": false, "nodes": "2-4", "ntasks": 8, "ntasks_per_node": 4,)"
      R"( "ntasks_per_gpu": 1, "cpus_per_gpu": 3, "mem_per_cpu": 100, "mem_per_gpu": 200,)"
      R"( "gpus": 6, "gpus_per_task": 1, "gres": {"shard": 2}, "licenses": {"matlab": 1},)"
      R"( "exclusive": "user", "oversubscribe": true, "constraint": "a100&ib",)"
      R"( "nodelist": "gpu[01-02],cpu7", "exclude": ["n1", "n[3-4]"],)"
      R"( "kill_on_invalid_dep": true})");
  ASSERT_TRUE(j.ok()) << j.status().ToString();
  const core::JobSpec& s = j->spec;
  EXPECT_EQ(j->trace_id, 1u);  // no id: the ordinal
  EXPECT_EQ(s.time_limit, kInfinite);
  EXPECT_EQ(j->requested, kInfinite);
  EXPECT_EQ(s.time_min, 60);
  EXPECT_EQ(j->exit_code, 3);
  EXPECT_EQ(s.name, "n");
  EXPECT_EQ(s.uid, 1001u);
  EXPECT_EQ(s.gid, 100u);
  EXPECT_EQ(s.partitions, (std::vector<std::string>{"a", "b"}));
  EXPECT_EQ(s.reservation, "r");
  EXPECT_EQ(s.begin_time, 50);
  EXPECT_EQ(s.deadline, 500);
  EXPECT_EQ(s.nice, -10);
  EXPECT_EQ(s.admin_priority, 7);
  EXPECT_EQ(s.hold, core::HoldKind::kAdmin);
  EXPECT_FALSE(s.requeue);
  EXPECT_EQ(s.min_nodes, 2);
  EXPECT_EQ(s.max_nodes, 4);
  EXPECT_EQ(s.ntasks, 8);
  EXPECT_EQ(s.ntasks_per_node, 4);
  EXPECT_EQ(s.ntasks_per_gpu, 1);
  EXPECT_EQ(s.cpus_per_gpu, 3);
  EXPECT_EQ(s.mem_per_cpu_mib, 100);
  EXPECT_EQ(s.mem_per_gpu_mib, 200);
  EXPECT_EQ(s.gpus, 6);
  EXPECT_EQ(s.gpus_per_task, 1);
  EXPECT_EQ(s.gres, (std::vector<core::NamedCount>{{"shard", 2}}));
  EXPECT_EQ(s.licenses, (std::vector<core::NamedCount>{{"matlab", 1}}));
  EXPECT_EQ(s.exclusive, core::ExclusiveMode::kUser);
  EXPECT_TRUE(s.oversubscribe);
  EXPECT_FALSE(s.constraint.empty());
  EXPECT_EQ(s.nodelist, (std::vector<std::string>{"gpu01", "gpu02", "cpu7"}));
  EXPECT_EQ(s.exclude, (std::vector<std::string>{"n1", "n3", "n4"}));
  EXPECT_TRUE(s.kill_on_invalid_dep);
  EXPECT_EQ(j->procs, 18);  // 8 tasks x 1 CPU, but 6 GPUs x 3 CPUs each
  EXPECT_EQ(j->gpus, 6);
  EXPECT_EQ(j->mem_mib, 1800);  // per CPU
}

TEST(JsonlReaderTest, DefaultsAreSlurmsNotGiven) {
  Result<TraceJob> j = One(R"({"submit": 0, "run": 5})");
  ASSERT_TRUE(j.ok());
  EXPECT_EQ(j->requested, 5);
  EXPECT_EQ(j->spec.time_limit, kNoTime);
  EXPECT_EQ(j->spec.min_nodes, 0);
  EXPECT_EQ(j->spec.mem_per_node_mib, -1);
  EXPECT_TRUE(j->spec.array.empty());
  EXPECT_EQ(j->procs, 1);
  EXPECT_EQ(j->gpus, 0);
  EXPECT_EQ(j->mem_mib, 0);
}

TEST(JsonlReaderTest, WholeNumbersMayBeWrittenAsFloats) {
  Result<TraceJob> j =
      One(R"({"submit": 3.0, "run": 1e2, "gres": {"a": 1}, "licenses": {"a": 1}})");
  ASSERT_TRUE(j.ok()) << j.status().ToString();
  EXPECT_EQ(j->submit, 3);
  EXPECT_EQ(j->run_time, 100);
}

TEST(JsonlReaderTest, BadLinesSayWhatIsWrong) {
  struct Case {
    std::string line;
    std::string message;  // after "t.jsonl:1: "
  };
  const Case cases[] = {
      {R"({"submit": 0, "run": 5, "gpu": 1})",
       "unknown key 'gpu' (docs/formats/trace-jsonl.md lists the keys)"},
      {R"({"run": 5})", "missing \"submit\""},
      {R"({"submit": 0})", "missing \"run\""},
      {R"({"submit": 0, "run": 0})", "\"run\": must be from 1 to 1000000000000000, got 0"},
      {R"({"submit": -1, "run": 5})", "\"submit\": must be from 0 to 1000000000000000, got -1"},
      {R"({"submit": 0, "run": 1.5})", "\"run\": expected a whole number, got '1.5'"},
      {R"({"submit": 0, "run": "5"})", "\"run\": expected a whole number, got '\"5\"'"},
      {R"({"submit": 0, "run": 99999999999999999999})",
       "\"run\": must be from 1 to 1000000000000000, got '1e+20'"},
      {R"({"submit": 0, "run": 18446744073709551615})",
       "\"run\": must be from 1 to 1000000000000000, got '18446744073709551615'"},
      {R"({"submit": 0, "run": 5, "nodes": 0})", "\"nodes\": must be from 1 to 2147483647, got 0"},
      {R"({"submit": 0, "run": 5, "nodes": "4-2"})",
       "\"nodes\": expected a count or a range like \"2-4\", got '4-2'"},
      {R"({"submit": 0, "run": 5, "ntasks": 3000000000})",
       "\"ntasks\": must be from 0 to 2147483647, got 3000000000"},
      {R"({"submit": 0, "run": 5, "user": 7})", "\"user\": expected a string, got '7'"},
      {R"({"submit": 0, "run": 5, "hold": "yes"})",
       "\"hold\": expected true, false, \"user\" or \"admin\", got '\"yes\"'"},
      {R"({"submit": 0, "run": 5, "exclusive": 1})",
       "\"exclusive\": expected true, false, \"node\" or \"user\", got '1'"},
      {R"({"submit": 0, "run": 5, "gres": {"shard": -1}})",
       "\"gres.shard\": must be from 0 to 2147483647, got -1"},
      {R"({"submit": 0, "run": 5, "partition": "a,,b"})", "\"partition\": empty name in the list"},
      {R"({"submit": 0, "run": 5, "time_limit": 60, "time_min": 120})",
       "\"time_min\" exceeds \"time_limit\""},
      {R"({"submit": 0, "run": 5, "requested": 60})",
       "\"requested\": write the user's estimate as \"time_limit\""},
      {R"({"submit": 0, "run": 5, "id": 0})", "\"id\": must be from 1 to 4294967295, got 0"},
      {R"([1, 2])", "expected a JSON object {...}"},
      {R"({"submit": 0, "run": 5, "run": 6})", "key 'run' given twice"},
      {R"({"submit": NaN, "run": 5})",
       "not valid JSON at column 12: syntax error while parsing value - invalid literal; last "
       "read: '\"submit\": N'"},
  };
  for (const Case& c : cases) {
    Result<Trace> t = ParseTrace(c.line + "\n", "t.jsonl", Jsonl());
    ASSERT_FALSE(t.ok()) << c.line;
    EXPECT_EQ(t.status().ToString(), Status::InvalidArgument("t.jsonl:1: " + c.message).ToString());
  }
}

TEST(JsonlReaderTest, CoreParsersReportThroughTheirKey) {
  const std::string lines[] = {
      R"({"submit": 0, "run": 5, "array": "5-2"})",
      R"({"submit": 0, "run": 5, "dependency": "aftr:1"})",
      R"({"submit": 0, "run": 5, "constraint": "a&&b"})",
      R"({"submit": 0, "run": 5, "nodelist": "n[1-"})",
  };
  const std::string keys[] = {
      "\"array\": ", "\"dependency\": ", "\"constraint\": ", "\"nodelist\": "};
  for (size_t i = 0; i < std::size(lines); ++i) {
    Result<Trace> t = ParseTrace(lines[i] + "\n", "t.jsonl", Jsonl());
    ASSERT_FALSE(t.ok()) << lines[i];
    EXPECT_EQ(t.status().code(), StatusCode::kInvalidArgument);
    EXPECT_EQ(t.status().message().rfind("t.jsonl:1: " + keys[i], 0), 0u) << t.status().message();
  }
}

TEST(JsonlReaderTest, IdsAreUniqueAndDependenciesNameJobsOfTheTrace) {
  struct Case {
    std::string text;
    std::string message;
  };
  const Case cases[] = {
      {"{\"id\": 3, \"submit\": 0, \"run\": 5}\n{\"id\": 3, \"submit\": 0, \"run\": 5}\n",
       "t.jsonl:2: job id 3 is used already on line 1"},
      {"{\"submit\": 0, \"run\": 5}\n{\"id\": 1, \"submit\": 0, \"run\": 5}\n",
       "t.jsonl:2: job id 1 is used already on line 1"},
      {"{\"id\": 3, \"submit\": 0, \"run\": 5, \"dependency\": \"afterok:4\"}\n",
       "t.jsonl:1: \"dependency\": the trace has no job 4"},
      {"{\"id\": 3, \"submit\": 0, \"run\": 5, \"dependency\": \"afterany:3\"}\n",
       "t.jsonl:1: the job depends on itself"},
  };
  for (const Case& c : cases) {
    Result<Trace> t = ParseTrace(c.text, "t.jsonl", Jsonl());
    ASSERT_FALSE(t.ok()) << c.text;
    EXPECT_EQ(t.status().ToString(), Status::InvalidArgument(c.message).ToString());
  }
  // A forward reference is fine: the driver maps trace ids once all jobs are read.
  Result<Trace> t = ParseTrace(
      "{\"id\": 1, \"submit\": 0, \"run\": 5, \"dependency\": \"afterok:2_1\"}\n"
      "{\"id\": 2, \"submit\": 0, \"run\": 5, \"array\": \"0-1\"}\n",
      "t.jsonl", Jsonl());
  ASSERT_TRUE(t.ok()) << t.status().ToString();
}

TEST(JsonlReaderTest, SkipBadKeepsTheGoodLines) {
  const std::string text =
      "{\"id\": 1, \"submit\": 0, \"run\": 5}\n"
      "\n"
      "{\"id\": 2, \"submit\": 0, \"run\": 5, \"oops\": 1}\n"
      "not json\n"
      "{\"id\": 4, \"submit\": 0, \"run\": 5, \"dependency\": \"afterok:9\"}\n"
      "{\"id\": 5, \"submit\": 9, \"run\": 5, \"dependency\": \"afterok:1\"}\n";
  Result<Trace> t = ParseTrace(text, "t.jsonl", Jsonl(/*skip_bad=*/true));
  ASSERT_TRUE(t.ok());
  EXPECT_EQ(t->skipped_bad, 3);
  ASSERT_EQ(t->jobs.size(), 2u);
  EXPECT_EQ(t->jobs[0].trace_id, 1u);
  EXPECT_EQ(t->jobs[1].trace_id, 5u);
  EXPECT_EQ(t->jobs[1].line, 6);
  ASSERT_EQ(t->bad_lines.size(), 3u);
  EXPECT_EQ(t->bad_lines[0].rfind("t.jsonl:3: unknown key 'oops'", 0), 0u);
  EXPECT_EQ(t->bad_lines[1].rfind("t.jsonl:4: not valid JSON", 0), 0u);
  EXPECT_EQ(t->bad_lines[2], "t.jsonl:5: \"dependency\": the trace has no job 9");
}

TEST(JsonlReaderTest, RandomGarbageNeverCrashes) {
  const uint64_t seed = std::random_device{}();
  SCOPED_TRACE("seed " + std::to_string(seed));
  std::mt19937_64 rng(seed);
  const std::string deep = std::string(100000, '[') + std::string(100000, ']');
  Result<Trace> nested = ParseTrace(deep + "\n", "t.jsonl", Jsonl());
  EXPECT_FALSE(nested.ok());
  for (int round = 0; round < 300; ++round) {
    std::string text = "{\"submit\": 0, \"run\": 5}\n";
    for (int i = 0; i < 10; ++i) text += "{" + testing::GarbageLine(rng) + "}\n";
    text += "{\"submit\": 1e999, \"run\": -0}\n{\"submit\": 0, \"run\": 5, \"gres\": []}\n";
    Result<Trace> strict = ParseTrace(text, "t.jsonl", Jsonl());
    EXPECT_FALSE(strict.ok());
    Result<Trace> lenient = ParseTrace(text, "t.jsonl", Jsonl(true));
    ASSERT_TRUE(lenient.ok());
    EXPECT_GE(lenient->jobs.size(), 1u);
  }
}

TEST(JsonlReaderTest, ReadsTheBundledExample) {
  Result<Trace> t = ReadTrace(testing::SourcePath("data/traces/example.jsonl"), {});
  ASSERT_TRUE(t.ok()) << t.status().ToString();
  EXPECT_EQ(t->format, TraceFormat::kJsonl);
  ASSERT_EQ(t->jobs.size(), 20u);
  std::set<std::string> users;
  bool array = false, dependency = false, gpus = false;
  for (const TraceJob& j : t->jobs) {
    EXPECT_TRUE(j.has_spec);
    users.insert(j.user);
    array |= !j.spec.array.empty();
    dependency |= !j.spec.dependency.empty();
    gpus |= j.gpus > 0;
  }
  EXPECT_GE(users.size(), 2u);
  EXPECT_TRUE(array);
  EXPECT_TRUE(dependency);
  EXPECT_TRUE(gpus);
}

}  // namespace
}  // namespace berth::sim
