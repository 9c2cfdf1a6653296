#include "controller/job_record.h"

#include <gtest/gtest.h>

#include <nlohmann/json.hpp>

namespace berth::controller {
namespace {

JobRecord SampleRecord() {
  JobRecord r;
  r.job.id = 42;
  r.job.state = core::JobState::kPending;
  r.job.spec.name = "train";
  r.job.spec.user = "alice";
  r.job.spec.uid = 1000;
  r.job.spec.submit_time = 1700000000;
  auto exec = std::make_shared<core::JobExecSpec>();
  exec->script = "#!/bin/sh\necho \"hi\"\n";
  exec->work_dir = "/home/alice";
  exec->stdout_pattern = "out-%j.txt";
  exec->environment = {{"PATH", "/usr/bin"}, {"QUOTE", "a\"b"}};
  exec->comment = "c";
  r.job.exec = exec;
  r.reason = core::PendingReason::kPriority;
  r.reason_detail = "waits";
  r.priority = 7;
  return r;
}

TEST(JobRecordTest, TheStoreFormKeepsTheRunSpecificationBesideTheRequest) {
  JobRecord r = SampleRecord();
  const std::string exec_text = ExecJsonText(*r.job.exec);
  nlohmann::json exec = nlohmann::json::parse(exec_text);
  EXPECT_EQ(exec.at("script"), r.job.exec->script);
  EXPECT_FALSE(exec.contains("name"));  // a request key, not a run specification key
  const std::string text = StoredRecordText(EncodeJobRecord(r, false), exec_text);
  nlohmann::json stored = nlohmann::json::parse(text);
  EXPECT_EQ(stored.at("exec"), exec);
  EXPECT_FALSE(stored.at("request").contains("script"));

  Result<JobRecord> back = DecodeJobRecord(text);
  ASSERT_TRUE(back.ok()) << back.status().message();
  EXPECT_EQ(*back->job.exec, *r.job.exec);
  EXPECT_EQ(back->job.spec.name, "train");
  EXPECT_EQ(back->priority, 7);
  EXPECT_EQ(back->job.spec.submit_time, 1700000000);
  // The older form (the run specification inside "request") still reads.
  Result<JobRecord> old = DecodeJobRecord(EncodeJobRecord(r, true).dump());
  ASSERT_TRUE(old.ok());
  EXPECT_EQ(*old->job.exec, *r.job.exec);
}

TEST(JobRecordTest, AJobWithoutRunSpecificationStoresNoExecKey) {
  JobRecord r = SampleRecord();
  r.job.exec = nullptr;
  nlohmann::json stored = nlohmann::json::parse(StoredRecordText(EncodeJobRecord(r, false), ""));
  EXPECT_FALSE(stored.contains("exec"));
}

TEST(JobRecordTest, TheListTextIsTheListFormWithoutThePassFieldsAndComesFresh) {
  JobRecord r = SampleRecord();
  nlohmann::json prefix = nlohmann::json::parse(r.ListJsonPrefix() + "}");
  nlohmann::json expected = EncodeJobRecord(r, false);
  for (const char* k : {"priority", "reason", "reason_detail", "expected_start"}) expected.erase(k);
  EXPECT_EQ(prefix, expected);
  JobRecord copy = r;  // a copy is made to be changed: it encodes afresh
  copy.job.spec.name = "other";
  EXPECT_EQ(nlohmann::json::parse(copy.ListJsonPrefix() + "}").at("request").at("name"), "other");
  EXPECT_EQ(nlohmann::json::parse(r.ListJsonPrefix() + "}").at("request").at("name"), "train");
  copy = r;
  EXPECT_EQ(nlohmann::json::parse(copy.ListJsonPrefix() + "}").at("request").at("name"), "train");
}

}  // namespace
}  // namespace berth::controller
