#include "api/job_json.h"

#include <gtest/gtest.h>

#include <nlohmann/json.hpp>

namespace berth::api {
namespace {

using nlohmann::json;

TEST(JobJsonTest, DecodesEveryKindOfKey) {
  json j = json::parse(R"({
    "name": "train", "user": "alice", "account": "ml", "partition": "gpu,debug", "qos": "high",
    "time_limit": 3600, "time_min": 600, "nodes": "2-4", "ntasks_per_node": 8,
    "cpus_per_task": 4, "mem_per_node": 65536, "gpus_per_node": 8, "gpu_type": "h100",
    "gres": {"shard": 2}, "licenses": {"matlab": 1}, "exclusive": "user",
    "constraint": "ib&a100", "nodelist": "gpu[01-02]", "exclude": ["gpu09"],
    "dependency": "afterok:5?afterany:6", "array": "0-7%2", "hold": "admin", "nice": 10,
    "script": "#!/bin/sh\necho hi\n", "work_dir": "/tmp", "stdout": "out-%j.txt",
    "open_mode": "append", "environment": {"A": "1"}, "signal": "B:USR1@90",
    "comment": "note", "command": "/home/alice/train.sh", "script_args": ["a", "b c"],
    "container": {"image": "nvcr.io#nvidia/pytorch:24.05-py3", "mount_home": false},
    "hostname": "train-3", "open_stdin": true, "stdin_once": true, "tty": true})");
  core::JobSpec s;
  core::JobExecSpec e;
  ASSERT_TRUE(DecodeJob(j, &s, &e).ok());
  EXPECT_EQ(s.partitions, (std::vector<std::string>{"gpu", "debug"}));
  EXPECT_EQ(s.min_nodes, 2);
  EXPECT_EQ(s.max_nodes, 4);
  EXPECT_EQ(s.gpu_type, "h100");
  EXPECT_EQ(s.exclusive, core::ExclusiveMode::kUser);
  EXPECT_EQ(s.nodelist, (std::vector<std::string>{"gpu01", "gpu02"}));
  EXPECT_EQ(s.array.max_running, 2);
  EXPECT_EQ(s.hold, core::HoldKind::kAdmin);
  EXPECT_TRUE(s.dependency.any);
  EXPECT_EQ(e.signal_number, 10);
  EXPECT_EQ(e.signal_before, 90);
  EXPECT_TRUE(e.signal_batch_only);
  EXPECT_TRUE(e.open_append);
  ASSERT_EQ(e.environment.size(), 1u);
  EXPECT_EQ(e.command, "/home/alice/train.sh");
  EXPECT_EQ(e.script_args, (std::vector<std::string>{"a", "b c"}));
  EXPECT_EQ(e.hostname, "train-3");
  EXPECT_TRUE(e.open_stdin && e.stdin_once && e.tty);

  // Round trip.
  json again = EncodeJob(s, &e);
  core::JobSpec s2;
  core::JobExecSpec e2;
  ASSERT_TRUE(DecodeJob(again, &s2, &e2).ok()) << again.dump();
  EXPECT_EQ(EncodeJob(s2, &e2), again);
  EXPECT_EQ(s2.constraint.text(), "ib&a100");
  EXPECT_EQ(e2.script, e.script);
  EXPECT_EQ(e2.command, e.command);
  EXPECT_EQ(e2.script_args, e.script_args);
  EXPECT_EQ(e2.hostname, "train-3");
  EXPECT_TRUE(e2.open_stdin && e2.stdin_once && e2.tty);
  EXPECT_EQ(again["container"],
            json::parse(R"({"image": "nvcr.io#nvidia/pytorch:24.05-py3", "mount_home": false})"));
}

TEST(JobJsonTest, ABadContainerNamesItsKey) {
  core::JobSpec s;
  core::JobExecSpec e;
  Status st = DecodeJob(json::parse(R"({"container": {"image": "x", "writable": "yes"}})"), &s, &e);
  EXPECT_EQ(st.message(), "container.writable: must be true or false");
}

TEST(JobJsonTest, AJobsContainerNeedsAnImage) {
  core::JobSpec s;
  core::JobExecSpec e;
  Status st = DecodeJob(json::parse(R"({"container": {"name": "pyt"}})"), &s, &e);
  EXPECT_EQ(st.message(),
            "container.image: required (a name alone names a container of a job step's own job)");
}

// Found by fuzzing (fuzz/corpus/sbatch_script/array-above-1001): sbatch accepted
// --array=100,200,3010 and the API refused it with the default MaxArraySize (1001), also on a
// cluster whose MaxArraySize allows 3010. The decoder takes any id below Slurm's ceiling; the
// cluster's own limit is ClusterState::Submit's to check, as slurmctld does.
TEST(JobJsonTest, ArrayIdsAboveTheDefaultMaxArraySizeDecode) {
  core::JobSpec s;
  core::JobExecSpec e;
  ASSERT_TRUE(DecodeJob(json::parse(R"({"array": "100,200,3010"})"), &s, &e).ok());
  EXPECT_EQ(s.array.task_ids, (std::vector<int32_t>{100, 200, 3010}));
  EXPECT_TRUE(DecodeJob(json::parse(R"({"array": "4000000"})"), &s, &e).ok());
  Status st = DecodeJob(json::parse(R"({"array": "4000001"})"), &s, &e);
  EXPECT_NE(st.message().find("is not below MaxArraySize (4000001)"), std::string::npos)
      << st.message();
}

// Found by fuzzing (fuzz/corpus/sbatch_script/time-min-zero): sbatch takes --time-min=0 as
// unlimited, as Slurm does, and the API refused the job, whose time_min then went out as the
// internal infinity (2^52). time_min is unlimited-able like time_limit now, both ways.
TEST(JobJsonTest, AnUnlimitedTimeMinTravels) {
  core::JobSpec s;
  core::JobExecSpec e;
  s.time_min = kInfinite;
  json j = EncodeJob(s, &e);
  EXPECT_EQ(j.at("time_min"), "UNLIMITED");
  core::JobSpec back;
  core::JobExecSpec back_exec;
  ASSERT_TRUE(DecodeJob(j, &back, &back_exec).ok()) << j.dump();
  EXPECT_EQ(back.time_min, kInfinite);
  ASSERT_TRUE(DecodeJob(json::parse(R"({"time_min": "INFINITE"})"), &back, &back_exec).ok());
  EXPECT_EQ(back.time_min, kInfinite);
  // Unlimited is more than any limit.
  Status st =
      DecodeJob(json::parse(R"({"time_min": "UNLIMITED", "time_limit": 60})"), &back, &back_exec);
  EXPECT_NE(st.message().find("\"time_min\" exceeds \"time_limit\""), std::string::npos)
      << st.message();
}

TEST(JobJsonTest, ErrorsNameTheKey) {
  struct Case {
    const char* json;
    const char* message;
  } cases[] = {
      {R"({"nodes": "x"})", "\"nodes\": expected a count or a range"},
      {R"({"time_limit": -5})", "\"time_limit\""},
      {R"({"bogus": 1})", "unknown key 'bogus'"},
      {R"({"array": "5-2"})", "\"array\""},
      {R"({"dependency": "aftr:1"})", "\"dependency\""},
      {R"({"signal": "NOPE@5"})", "Invalid --signal specification"},
      {R"({"environment": {"A": 1}})", "environment.A"},
      {R"({"hostname": "Bad_Host"})", "\"hostname\": expected a host name"},
      {R"({"hostname": ""})", "\"hostname\""},
      {R"({"tty": "yes"})", "\"tty\""},
      {R"({"time_min": 100, "time_limit": 50})", "\"time_min\" exceeds \"time_limit\""},
      {R"([1, 2])", "a job is a JSON object"},
  };
  for (const Case& c : cases) {
    core::JobSpec s;
    core::JobExecSpec e;
    Status st = DecodeJob(json::parse(c.json), &s, &e);
    ASSERT_FALSE(st.ok()) << c.json;
    EXPECT_NE(st.message().find(c.message), std::string::npos) << st.message();
  }
}

TEST(JobJsonTest, ExecKeysAreUnknownWithoutAnExecSpec) {
  core::JobSpec s;
  EXPECT_EQ(ApplyJobKey("script", json("x"), &s, nullptr).code(), StatusCode::kNotFound);
  EXPECT_TRUE(ApplyJobKey("name", json("x"), &s, nullptr).ok());
}

TEST(JobJsonTest, SignalNames) {
  EXPECT_EQ(SignalNumber("USR1"), 10);
  EXPECT_EQ(SignalNumber("sigterm"), 15);
  EXPECT_EQ(SignalNumber("9"), 9);
  EXPECT_EQ(SignalNumber("NOPE"), 0);
  core::JobExecSpec e;
  ASSERT_TRUE(ParseSignalSpec("TERM", &e).ok());
  EXPECT_EQ(e.signal_before, 60);
  EXPECT_EQ(FormatSignalSpec(e), "TERM@60");
}

}  // namespace
}  // namespace berth::api
