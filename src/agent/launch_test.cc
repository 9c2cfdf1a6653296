#include "agent/launch.h"

#include <gtest/gtest.h>

namespace berth::agent {
namespace {

LaunchSpec FullSpec() {
  LaunchSpec s;
  s.job_id = 4000000000u;
  s.attempt = 2;
  s.array_job_id = 77;
  s.array_task_id = 3;
  s.array_task_count = 10;
  s.array_task_min = 1;
  s.array_task_max = 19;
  s.array_task_step = 2;
  s.name = "train \"big\"";
  s.user = "alice";
  s.uid = 1001;
  s.gid = 1002;
  s.account = "ml";
  s.partition = "gpu";
  s.qos = "high";
  s.cluster_name = "c1";
  s.script = "#!/bin/bash\necho héllo\n";
  s.argv = {"a", "b c"};
  s.script_args = {"--x", "1"};
  s.work_dir = "/home/alice";
  s.stdout_pattern = "out-%j.txt";
  s.stderr_pattern = "err-%j.txt";
  s.stdin_path = "in.txt";
  s.open_append = true;
  s.open_stdin = true;
  s.stdin_once = true;
  s.tty = true;
  s.environment = {{"ZED", "1"}, {"ALPHA", "x=y"}};
  s.node_names = {"n1", "n2"};
  s.cpus_per_node = {4, 2};
  s.node_index = 1;
  s.cpus = 2;
  s.mem_mib = 1LL << 40;
  s.gpu_indices = {0, 3};
  s.tasks = 2;
  s.ntasks = 6;
  s.cpus_per_task = 1;
  s.mem_per_cpu_mib = 512;
  s.mem_per_node_mib = 0;
  s.tasks_per_node = {4, 2};
  s.pids_max = 100;
  s.cpu_quota_millis = 1500;
  s.time_limit = 3600;
  s.kill_wait = 5;
  s.signal_number = 10;
  s.signal_before = 60;
  s.signal_batch_only = true;
  s.submit_dir = "/home/alice/x";
  s.submit_host = "login1";
  s.submit_time = 1700000000;
  s.start_time = 1700000100;
  return s;
}

TEST(LaunchTest, SpecRoundTrip) {
  LaunchSpec in = FullSpec();
  Result<LaunchSpec> out = DecodeLaunchSpec(EncodeLaunchSpec(in));
  ASSERT_TRUE(out.ok()) << out.status().ToString();
  EXPECT_EQ(EncodeLaunchSpec(*out), EncodeLaunchSpec(in));
  EXPECT_EQ(out->job_id, 4000000000u);
  EXPECT_EQ(out->mem_mib, 1LL << 40);
  EXPECT_EQ(out->cpu_quota_millis, 1500);
  // The environment keeps its order (it is an object on the wire).
  ASSERT_EQ(out->environment.size(), 2u);
  EXPECT_EQ(out->environment[0].first, "ZED");
  EXPECT_EQ(out->environment[1].second, "x=y");
  EXPECT_EQ(out->script, in.script);
  EXPECT_EQ(out->gpu_indices, (std::vector<int32_t>{0, 3}));
  EXPECT_TRUE(out->open_stdin && out->stdin_once && out->tty);
}

TEST(LaunchTest, DefaultsForMissingKeysAndUnknownKeysIgnored) {
  Result<LaunchSpec> out = DecodeLaunchSpec(R"({"job_id": 5, "future_field": [1, 2], "x": {}})");
  ASSERT_TRUE(out.ok()) << out.status().ToString();
  EXPECT_EQ(out->job_id, 5u);
  EXPECT_EQ(out->kill_wait, 30);
  EXPECT_EQ(out->array_task_id, -1);
  EXPECT_EQ(out->cpus, 1);
}

TEST(LaunchTest, BadTypesAreErrors) {
  const char* cases[] = {
      R"({"job_id": "5"})",            // string for a number
      R"({"job_id": -1})",             // negative for unsigned
      R"({"job_id": 4294967296})",     // too large for uint32
      R"({"attempt": 2147483648})",    // too large for int32
      R"({"cpus": 1.5})",              // fraction for an integer
      R"({"name": 7})",                // number for a string
      R"({"open_append": 1})",         // number for a boolean
      R"({"argv": "ls"})",             // string for an array
      R"({"argv": ["ls", 1]})",        // array element of the wrong type
      R"({"environment": ["A=1"]})",   // array for an object
      R"({"environment": {"A": 1}})",  // object value not a string
      R"({"gpu_indices": [0, "1"]})",
      R"({"name": null})",
      R"([1, 2])",        // not an object
      R"({"job_id": 1)",  // not JSON
  };
  for (const char* c : cases) {
    Result<LaunchSpec> out = DecodeLaunchSpec(c);
    EXPECT_FALSE(out.ok()) << c;
    if (!out.ok()) {
      EXPECT_EQ(out.status().code(), StatusCode::kInvalidArgument) << c;
    }
  }
  Result<LaunchSpec> named = DecodeLaunchSpec(R"({"cpus": "two"})");
  ASSERT_FALSE(named.ok());
  EXPECT_NE(named.status().message().find("cpus"), std::string::npos);
}

TEST(LaunchTest, ResultRoundTrip) {
  JobResult in;
  in.job_id = 9;
  in.attempt = 1;
  in.state = "OUT_OF_MEMORY";
  in.exit_code = 0;
  in.term_signal = 9;
  in.start_time = 100;
  in.end_time = 160;
  in.cpu_seconds = 12.25;
  in.max_rss_mib = 2048;
  in.gpu_utilization = 87.5;
  in.message = "1 process(es) killed";
  Result<JobResult> out = DecodeJobResult(EncodeJobResult(in));
  ASSERT_TRUE(out.ok()) << out.status().ToString();
  EXPECT_EQ(out->state, "OUT_OF_MEMORY");
  EXPECT_EQ(out->term_signal, 9);
  EXPECT_DOUBLE_EQ(out->cpu_seconds, 12.25);
  EXPECT_DOUBLE_EQ(out->gpu_utilization, 87.5);
  EXPECT_EQ(out->message, in.message);
  EXPECT_FALSE(DecodeJobResult(R"({"state": 1})").ok());
  EXPECT_FALSE(DecodeJobResult(R"({"cpu_seconds": "1"})").ok());
  Result<JobResult> integral = DecodeJobResult(R"({"cpu_seconds": 3, "gpu_utilization": -1})");
  ASSERT_TRUE(integral.ok());
  EXPECT_DOUBLE_EQ(integral->cpu_seconds, 3);
}

}  // namespace
}  // namespace berth::agent
