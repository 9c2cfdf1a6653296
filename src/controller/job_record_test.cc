#include "controller/job_record.h"

#include <gtest/gtest.h>

#include <cctype>
#include <nlohmann/json.hpp>

#include "api/job_json.h"
#include "common/strings.h"
#include "core/model/array_spec.h"
#include "core/model/constraint.h"
#include "core/model/dependency.h"
#include "core/testing/random_cluster.h"
#include "slurm/squeue_view.h"

namespace berth::controller {
namespace {

JobRecord SampleRecord() {
  JobRecord r;
  r.job.id = 42;
  r.job.state = core::JobState::kPending;
  r.job.spec.Mut().name = "train";
  r.job.spec.Mut().user = "alice";
  r.job.spec.Mut().uid = 1000;
  r.job.spec.Mut().submit_time = 1700000000;
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

// The whole entry the store keeps for the record (store::JoinedRecord of the row the controller
// writes), with the run specification inside as its first key.
std::string StoredText(const JobRecord& r) {
  store::JobRow row;
  WriteJobRecordText(r, &row.record);
  if (r.job.exec) row.exec = std::make_shared<const std::string>(ExecJsonText(*r.job.exec));
  return store::JoinedRecord(row);
}

TEST(JobRecordTest, TheStoreFormKeepsTheRunSpecificationBesideTheRequest) {
  JobRecord r = SampleRecord();
  const std::string exec_text = ExecJsonText(*r.job.exec);
  nlohmann::json exec = nlohmann::json::parse(exec_text);
  EXPECT_EQ(exec.at("script"), r.job.exec->script);
  EXPECT_FALSE(exec.contains("name"));  // a request key, not a run specification key
  const std::string text = StoredText(r);
  nlohmann::json stored = nlohmann::json::parse(text);
  EXPECT_EQ(stored.at("exec"), exec);
  EXPECT_FALSE(stored.at("request").contains("script"));

  Result<JobRecord> back = DecodeJobRecord(text);
  ASSERT_TRUE(back.ok()) << back.status().message();
  EXPECT_EQ(*back->job.exec, *r.job.exec);
  EXPECT_EQ(back->job.spec->name, "train");
  EXPECT_EQ(back->priority, 7);
  EXPECT_EQ(back->job.spec->submit_time, 1700000000);
  // The older form (the run specification inside "request") still reads.
  Result<JobRecord> old = DecodeJobRecord(EncodeJobRecord(r, true).dump());
  ASSERT_TRUE(old.ok());
  EXPECT_EQ(*old->job.exec, *r.job.exec);
}

TEST(JobRecordTest, AJobEventIsTheDumpOfItsObject) {
  JobRecord r = SampleRecord();
  r.run.Mut().message = "quote \" and \\ and \n and \u00e9";
  nlohmann::json view = EncodeJobRecord(r, false);
  view.erase("request");
  const std::string text = JobRecordEventText(r);
  EXPECT_EQ(text, (nlohmann::json{{"type", "job"}, {"job", view}}.dump()));
  EXPECT_EQ(nlohmann::json::parse(text).at("job"), view);
}

TEST(JobRecordTest, RecordsSharingARunSpecificationDecodeItOnce) {
  JobRecord a = SampleRecord();
  JobRecord b = SampleRecord();
  b.job.id = 43;
  b.job.spec.Mut().name = "eval";
  JobRecord c = SampleRecord();
  c.job.id = 44;
  auto other = std::make_shared<core::JobExecSpec>(*c.job.exec);
  other->script = "#!/bin/sh\necho '{[\"}'\n";  // brackets and quotes inside a string
  c.job.exec = other;
  auto stored = [](const JobRecord& r) { return StoredText(r); };
  ExecCache cache;
  Result<JobRecord> ra = DecodeJobRecord(stored(a), &cache);
  Result<JobRecord> rb = DecodeJobRecord(stored(b), &cache);
  Result<JobRecord> rc = DecodeJobRecord(stored(c), &cache);
  ASSERT_TRUE(ra.ok() && rb.ok() && rc.ok());
  EXPECT_EQ(ra->job.exec.get(), rb->job.exec.get());  // one copy
  EXPECT_EQ(rb->job.spec->name, "eval");
  EXPECT_EQ(rb->job.id, 43u);
  EXPECT_NE(rc->job.exec.get(), ra->job.exec.get());
  EXPECT_EQ(*rc->job.exec, *other);
  EXPECT_EQ(cache.by_text.size(), 2u);
  // A record cut short is an error with or without the cache, never a crash.
  std::string cut = stored(a).substr(0, 30);
  EXPECT_FALSE(DecodeJobRecord(cut, &cache).ok());
  EXPECT_FALSE(DecodeJobRecord(stored(a).substr(0, 200), &cache).ok());
}

// The store's row keeps the run specification apart (store::JobRow::exec): it decodes as its
// whole entry does, and rows sharing the text (one object, or equal ones) share one copy.
TEST(JobRecordTest, AStoreRowWithItsRunSpecificationApartDecodesAsItsWholeEntry) {
  const JobRecord a = SampleRecord();
  auto text = std::make_shared<const std::string>(ExecJsonText(*a.job.exec));
  auto row = [&](core::JobId id, std::shared_ptr<const std::string> exec) {
    JobRecord r = a;
    r.job.id = id;
    return store::JobRow{id, true, kNoTime, EncodeJobRecord(r, false).dump(), std::move(exec)};
  };
  ExecCache cache;
  Result<JobRecord> first = DecodeJobRow(row(42, text), &cache);
  Result<JobRecord> second = DecodeJobRow(row(43, text), &cache);
  Result<JobRecord> equal =
      DecodeJobRow(row(44, std::make_shared<const std::string>(*text)), &cache);
  Result<JobRecord> whole = DecodeJobRecord(store::JoinedRecord(row(42, text)));
  Result<JobRecord> alone = DecodeJobRow(row(42, text));
  ASSERT_TRUE(first.ok() && second.ok() && equal.ok() && whole.ok() && alone.ok())
      << first.status().message();
  EXPECT_EQ(EncodeJobRecord(*first, true), EncodeJobRecord(*whole, true));
  EXPECT_EQ(EncodeJobRecord(*alone, true), EncodeJobRecord(*whole, true));
  EXPECT_EQ(*first->job.exec, *a.job.exec);
  EXPECT_EQ(second->job.id, 43u);
  EXPECT_EQ(second->job.exec.get(), first->job.exec.get());
  EXPECT_EQ(equal->job.exec.get(), first->job.exec.get());
  // A row without one is its record.
  store::JobRow bare = row(45, nullptr);
  EXPECT_EQ(EncodeJobRecord(*DecodeJobRow(bare, &cache), true),
            EncodeJobRecord(*DecodeJobRecord(bare.record), true));
}

// sacct's reader leaves the run specification out, whether the row keeps it apart (SQLite) or
// as the joined entry's first key (etcd): the record is the same without it.
TEST(JobRecordTest, AStoreRowDecodesWithoutItsRunSpecification) {
  const JobRecord a = SampleRecord();
  auto text = std::make_shared<const std::string>(ExecJsonText(*a.job.exec));
  const store::JobRow apart{42, false, 100, EncodeJobRecord(a, false).dump(), text};
  const store::JobRow joined{42, false, 100, store::JoinedRecord(apart), nullptr};
  const nlohmann::json expected = EncodeJobRecord(*DecodeJobRow(apart), false);
  ExecCache cache;
  for (const store::JobRow& row : {apart, joined, apart}) {
    Result<JobRecord> r = DecodeJobRowWithoutExec(row, &cache);
    ASSERT_TRUE(r.ok()) << r.status().message();
    ASSERT_NE(r->job.exec, nullptr);
    EXPECT_EQ(*r->job.exec, core::JobExecSpec{});
    EXPECT_EQ(EncodeJobRecord(*r, false), expected);
    EXPECT_EQ(r->job.spec->name, a.job.spec->name);
  }
  // A joined entry cut inside its specification is an error, never a crash.
  store::JobRow cut = joined;
  cut.record = cut.record.substr(0, 40);
  EXPECT_FALSE(DecodeJobRowWithoutExec(cut, &cache).ok());
}

// Records of every shape: each state, allocations with GPU shares and repeated GRES names,
// steps, a Pod, texts that need escapes, numbers of every print form.
JobRecord RandomRecord(core::testing::Rng& rng) {
  const std::vector<std::string> texts = {"",
                                          "plain",
                                          "quote \" back \\ slash",
                                          "ctl \x01\x1f\b\f\n\r\t del \x7f",
                                          "caf\u00e9 \u65e5\u672c \U0001F680",
                                          "/"};
  const std::vector<double> doubles = {0,     -1,   0.1,    1.5,  123456.789,        1e21,
                                       1e-7,  3600, 2.5e15, -0.0, 999999999999999.0, 1e15,
                                       -1e14, 0.5};
  auto text = [&] { return texts[core::testing::Uniform(rng, 0, texts.size() - 1)]; };
  auto real = [&] { return doubles[core::testing::Uniform(rng, 0, doubles.size() - 1)]; };
  const core::JobState states[] = {core::JobState::kPending, core::JobState::kRunning,
                                   core::JobState::kCompleted, core::JobState::kCancelled,
                                   core::JobState::kConfiguring};
  JobRecord r = SampleRecord();
  r.job.id = static_cast<core::JobId>(core::testing::Uniform(rng, 1, 4000000000));
  r.job.state = states[core::testing::Uniform(rng, 0, 4)];
  r.job.spec.Mut().name = text();
  // Every key of the request, each at its default or not (the request's text is written
  // without a tree: it must be EncodeJob's dump).
  core::JobSpec& s = r.job.spec.Mut();
  auto pick = [&](auto off, auto on) { return core::testing::Chance(rng, 50) ? on : off; };
  auto size = [&] { return static_cast<int32_t>(core::testing::Uniform(rng, 0, 8)); };
  s.user = text();
  s.uid = static_cast<uint32_t>(core::testing::Uniform(rng, 0, 70000));
  s.gid = static_cast<uint32_t>(core::testing::Uniform(rng, 0, 70000));
  s.account = text();
  s.partitions = pick(std::vector<std::string>{}, std::vector<std::string>{"gpu", "cpu"});
  s.qos = text();
  s.reservation = text();
  s.begin_time = pick(kNoTime, Time{1700000100});
  s.deadline = pick(kNoTime, Time{1800000000});
  s.time_limit = core::testing::Chance(rng, 30) ? kInfinite : pick(kNoTime, Duration{7200});
  s.time_min = pick(kNoTime, Duration{60});
  s.nice = static_cast<int32_t>(core::testing::Uniform(rng, -100, 100));
  s.admin_priority = pick(int64_t{-1}, int64_t{500});
  const core::HoldKind holds[] = {core::HoldKind::kNone, core::HoldKind::kUser,
                                  core::HoldKind::kAdmin};
  s.hold = holds[core::testing::Uniform(rng, 0, 2)];
  s.requeue = core::testing::Chance(rng, 50);
  s.min_nodes = pick(0, 1 + size());
  s.max_nodes = s.min_nodes == 0 ? 0 : pick(s.min_nodes, s.min_nodes + 3);
  s.ntasks = size();
  s.ntasks_per_node = size();
  s.ntasks_per_gpu = size();
  s.ntasks_per_socket = size();
  s.ntasks_per_core = size();
  s.cpus_per_task = size();
  s.cpus_per_gpu = size();
  s.mem_per_node_mib = pick(int64_t{-1}, int64_t{4096});
  s.mem_per_cpu_mib = pick(int64_t{-1}, int64_t{0});
  s.mem_per_gpu_mib = pick(int64_t{-1}, int64_t{80000});
  s.gpus = size();
  s.gpus_per_node = size();
  s.gpus_per_task = size();
  s.gpu_type = text();
  s.gpu_milli = pick(0, 250);
  s.gpu_mps = core::testing::Chance(rng, 50);
  s.gres = pick(std::vector<core::NamedCount>{},
                std::vector<core::NamedCount>{{"nic", 2}, {"fpga", 1}, {"nic", 3}});
  s.licenses = pick(std::vector<core::NamedCount>{}, std::vector<core::NamedCount>{{"matlab", 2}});
  const core::ExclusiveMode modes[] = {core::ExclusiveMode::kNo, core::ExclusiveMode::kUser,
                                       core::ExclusiveMode::kNode};
  s.exclusive = modes[core::testing::Uniform(rng, 0, 2)];
  s.oversubscribe = core::testing::Chance(rng, 50);
  s.overcommit = core::testing::Chance(rng, 50);
  s.constraint = core::testing::Chance(rng, 50) ? core::Constraint()
                                                : *core::Constraint::Parse("ib&(a100|h100)");
  s.nodelist = pick(std::vector<std::string>{}, std::vector<std::string>{"n1", "n2", "n4"});
  s.exclude = pick(std::vector<std::string>{}, std::vector<std::string>{"n3"});
  s.dependency = core::testing::Chance(rng, 50) ? core::Dependency()
                                                : *core::ParseDependency("afterok:12:13,after:9");
  s.kill_on_invalid_dep = core::testing::Chance(rng, 50);
  s.wait_if_infeasible = core::testing::Chance(rng, 50);
  s.array = core::testing::Chance(rng, 50) ? core::ArraySpec() : *core::ParseArraySpec("1-5%2");
  r.job.partition = text();
  r.submit_host = text();
  r.run.Mut().message = text();
  r.reason =
      core::testing::Chance(rng, 50) ? core::PendingReason::kNone : core::PendingReason::kResources;
  r.reason_detail = text();
  r.expected_start =
      core::testing::Chance(rng, 50) ? kNoTime : core::testing::Uniform(rng, 0, 1 << 30);
  r.priority = core::testing::Uniform(rng, -5, 1 << 20);
  r.job.start_time =
      core::testing::Chance(rng, 50) ? kNoTime : core::testing::Uniform(rng, 0, 1 << 30);
  r.job.end_time =
      core::testing::Chance(rng, 50) ? kNoTime : core::testing::Uniform(rng, 0, 1 << 30);
  r.job.attained_service = real();
  r.run.Mut().cpu_seconds = real();
  r.run.Mut().gpu_utilization = real();
  r.run.Mut().max_rss_mib = core::testing::Uniform(rng, 0, 1 << 20);
  r.cancel_requested = core::testing::Chance(rng, 50);
  r.run.Mut().cancelled_by = core::testing::Uniform(rng, -1, 2);
  r.run.Mut().preempt_end = core::testing::Chance(rng, 50) ? kNoTime : 99;
  r.job.outcome.exit_code = core::testing::Uniform(rng, -1, 255);
  r.job.outcome.term_signal = core::testing::Uniform(rng, 0, 15);
  r.job.restart_count = core::testing::Uniform(rng, 0, 3);
  if (core::testing::Chance(rng, 30)) {
    r.job.array_job_id = 7;
    r.job.array_task_id = core::testing::Uniform(rng, 0, 100);
  }
  const int nodes = core::testing::Uniform(rng, 0, 3);
  for (int n = 0; n < nodes; ++n) {
    core::NodeAllocation a;
    a.cpus = core::testing::Uniform(rng, 1, 64);
    a.mem_mib = core::testing::Uniform(rng, 1, 1 << 20);
    a.tasks = core::testing::Uniform(rng, 1, 8);
    a.gpu_mask = core::testing::Chance(rng, 50) ? 0 : (uint64_t{1} << 63 | 0b1011);
    if (core::testing::Chance(rng, 30)) a.gpu_shares = {{0, 250}, {3, 500}};
    if (core::testing::Chance(rng, 30)) a.gres = {{"nic", 2}, {"fpga", 1}, {"nic", 3}};
    r.job.alloc.nodes.push_back(a);
    if (core::testing::Chance(rng, 90)) r.node_names.push_back("n" + std::to_string(n) + text());
  }
  if (core::testing::Chance(rng, 30)) r.job.alloc.licenses = {{"matlab", 2}, {"ansys", 1}};
  if (core::testing::Chance(rng, 20)) {
    api::StepRecord step;
    step.id = 3;
    step.name = text();
    step.state = "COMPLETED";
    step.start = 100;
    step.end = 200;
    step.ntasks = 2;
    step.ncpus = 2;
    step.nodes = "n1";
    r.run.Mut().steps = {step, step};
    r.run.Mut().steps_dropped = core::testing::Uniform(rng, 0, 2);
  }
  if (core::testing::Chance(rng, 20)) {
    r.k8s = std::make_shared<const nlohmann::json>(
        nlohmann::json{{"metadata", {{"name", text()}}}, {"spec", {{"x", real()}}}});
    r.k8s_deleted = core::testing::Uniform(rng, 0, 2);
  }
  r.slurm.Mut().node_cpus = core::testing::Uniform(rng, 0, 128);
  r.slurm.Mut().accounting = core::testing::Chance(rng, 50);
  r.slurm.Mut().default_time_limit = core::testing::Chance(rng, 50) ? kInfinite : 3600;
  return r;
}

// What the controller writes for each change (WriteJobRecordText, no tree) is, byte for byte,
// the dump of the record's tree and the watch event made from it, for records of every shape.
TEST(JobRecordTest, TheWrittenTextIsTheDumpOfTheTree) {
  core::testing::Rng rng(17);
  for (int round = 0; round < 500; ++round) {
    const JobRecord r = RandomRecord(rng);
    std::string stored;
    const size_t event_size = WriteJobRecordText(r, &stored);
    const std::string event = JobRecordEventText(r);
    ASSERT_EQ(event.size(), event_size) << "round " << round;
    nlohmann::json view = EncodeJobRecord(r, false);
    ASSERT_EQ(stored, view.dump()) << "round " << round;
    view.erase("request");
    ASSERT_EQ(event, (nlohmann::json{{"job", view}, {"type", "job"}}.dump())) << "round " << round;
  }
}

// Two decodings of one record agree on everything the record holds.
void ExpectSameRecord(const JobRecord& a, const JobRecord& b, const std::string& where) {
  EXPECT_EQ(EncodeJobRecord(a, true), EncodeJobRecord(b, true)) << where;
  EXPECT_EQ(a.job.outcome.state, b.job.outcome.state) << where;
  EXPECT_EQ(a.job.outcome.start_time, b.job.outcome.start_time) << where;
  EXPECT_EQ(a.job.outcome.end_time, b.job.outcome.end_time) << where;
  EXPECT_EQ(a.job.outcome.exit_code, b.job.outcome.exit_code) << where;
  ASSERT_TRUE(a.job.exec && b.job.exec) << where;
  EXPECT_EQ(*a.job.exec, *b.job.exec) << where;
}

// Records read in a row with one request (a batch, an array) share one JobSpec when they were
// submitted in the same second, and each has its own submit time otherwise.
TEST(JobRecordTest, RecordsWithOneRequestAndSubmitTimeShareOneSpec) {
  auto with = [](core::JobId id, Time submitted_later, const char* name) {
    JobRecord r = SampleRecord();
    r.job.id = id;
    r.job.spec.Mut().submit_time += submitted_later;
    if (name != nullptr) r.job.spec.Mut().name = name;
    return r;
  };
  const std::vector<JobRecord> records = {with(42, 0, nullptr), with(43, 0, nullptr),
                                          with(44, 0, nullptr), with(45, 1, nullptr),
                                          with(46, 1, "eval")};
  // As a start-up reads them: store rows sharing one run specification's text.
  const auto exec = std::make_shared<const std::string>(ExecJsonText(*records[0].job.exec));
  ExecCache cache;
  std::vector<JobRecord> read;
  for (const JobRecord& r : records) {
    store::JobRow row;
    row.id = r.job.id;
    WriteJobRecordText(r, &row.record);
    row.exec = exec;
    Result<JobRecord> got = DecodeJobRow(row, &cache);
    ASSERT_TRUE(got.ok()) << got.status().message();
    // Each reads as it reads alone.
    Result<JobRecord> alone = DecodeJobRecordTree(store::JoinedRecord(row));
    ASSERT_TRUE(alone.ok());
    ExpectSameRecord(*got, *alone, "job " + std::to_string(r.job.id));
    read.push_back(std::move(*got));
  }
  // The first row of a run specification is read whole (no memo yet); from the second on, one
  // request and submit time: one spec.
  EXPECT_TRUE(read[1].job.spec.SharesWith(read[2].job.spec));
  EXPECT_FALSE(read[2].job.spec.SharesWith(read[3].job.spec));  // a second later
  EXPECT_FALSE(read[3].job.spec.SharesWith(read[4].job.spec));  // another name
  EXPECT_EQ(read[3].job.spec->submit_time, records[0].job.spec->submit_time + 1);
  EXPECT_EQ(read[3].job.spec->name, records[0].job.spec->name);
  EXPECT_EQ(read[4].job.spec->name, "eval");
}

// Records read in a row share one object of Slurm facts while their facts are equal, and each
// reads its own values; a job that never ran carries no run facts of its own (the shared empty
// value, as a fresh record), one that ran carries its own.
TEST(JobRecordTest, RecordsReadInARowShareEqualFactsAndOnlyThose) {
  auto with = [](core::JobId id, int64_t node_cpus, bool ran) {
    JobRecord r = SampleRecord();
    r.job.id = id;
    r.slurm.Mut().node_cpus = node_cpus;
    if (ran) {
      r.job.state = core::JobState::kCompleted;
      r.job.start_time = r.job.spec->submit_time + 5;
      r.job.end_time = r.job.start_time + 60;
      r.run.Mut().cpu_seconds = 30;
      r.run.Mut().message = "from the node";
    }
    return r;
  };
  const std::vector<JobRecord> records = {with(42, 64, false), with(43, 64, false),
                                          with(44, 128, true), with(45, 128, false)};
  ExecCache cache;
  std::vector<JobRecord> read;
  for (const JobRecord& r : records) {
    std::string stored;
    WriteJobRecordText(r, &stored);
    Result<JobRecord> got = DecodeJobRecord(stored, &cache);
    ASSERT_TRUE(got.ok()) << got.status().message();
    Result<JobRecord> alone = DecodeJobRecordTree(stored);
    ASSERT_TRUE(alone.ok());
    ExpectSameRecord(*got, *alone, "job " + std::to_string(r.job.id));
    EXPECT_EQ(*got->slurm, *r.slurm);
    EXPECT_EQ(*got->run, *r.run);
    read.push_back(std::move(*got));
  }
  EXPECT_TRUE(read[0].slurm.SharesWith(read[1].slurm));
  EXPECT_FALSE(read[1].slurm.SharesWith(read[2].slurm));  // other facts
  EXPECT_TRUE(read[2].slurm.SharesWith(read[3].slurm));
  EXPECT_EQ(read[2].slurm->node_cpus, 128);
  const JobRecord fresh;
  EXPECT_TRUE(read[0].run.SharesWith(fresh.run));
  EXPECT_TRUE(read[3].run.SharesWith(fresh.run));
  EXPECT_FALSE(read[2].run.SharesWith(fresh.run));
  EXPECT_EQ(read[2].run->message, "from the node");
  // The tree's decode gives a record that never ran the shared empty value too.
  std::string stored;
  WriteJobRecordText(records[1], &stored);
  EXPECT_TRUE(DecodeJobRecordTree(stored)->run.SharesWith(fresh.run));
}

// DecodeJobRecord reads the records the controller writes without a tree of the whole; what it
// gives is what the tree gives, for records of every shape, whole entries (with the run
// specification inside) and texts the tree reads or refuses in its own way.
TEST(JobRecordTest, TheFastDecodeIsTheTreeDecode) {
  core::testing::Rng rng(29);
  ExecCache cache;  // its memo of the last request: records in a row often share one
  for (int round = 0; round < 500; ++round) {
    const JobRecord r = RandomRecord(rng);
    std::string stored;
    WriteJobRecordText(r, &stored);
    Result<JobRecord> fast = DecodeJobRecord(stored);
    Result<JobRecord> tree = DecodeJobRecordTree(stored);
    ASSERT_TRUE(fast.ok() && tree.ok()) << fast.status().message() << tree.status().message();
    ExpectSameRecord(*fast, *tree, "round " + std::to_string(round));
    Result<JobRecord> memo = DecodeJobRecord(stored, &cache);
    ASSERT_TRUE(memo.ok()) << memo.status().message();
    ExpectSameRecord(*memo, *tree, "with the memo, round " + std::to_string(round));
    store::JobRow row{r.job.id, true, kNoTime, stored,
                      std::make_shared<const std::string>(ExecJsonText(*r.job.exec))};
    Result<JobRecord> whole = DecodeJobRecord(store::JoinedRecord(row));
    ASSERT_TRUE(whole.ok()) << whole.status().message();
    ExpectSameRecord(*whole, *DecodeJobRecordTree(store::JoinedRecord(row)), "whole");
  }
  // Texts of other shapes: each decodes (or fails) as the tree does.
  std::string base;
  WriteJobRecordText(SampleRecord(), &base);
  auto with = [&](const std::string& from, const std::string& to) {
    std::string t = base;
    const size_t at = t.find(from);
    EXPECT_NE(at, std::string::npos) << from;
    if (at != std::string::npos) t.replace(at, from.size(), to);
    return t;
  };
  std::vector<std::string> cases = {
      with("\"end_time\":-1", "\"end_time\":\"-1\""),  // another type
      with("\"end_time\":-1", "\"end_time\":-1.0"),    // a whole number as a float
      with("\"end_time\":-1", "\"end_time\":-1e0"),
      with("\"end_time\":-1", "\"end_time\":-01"),  // not JSON
      with("\"end_time\":-1", "\"end_time\":null"),
      with("\"id\":42", "\"id\":42,\"id\":43"),  // a key twice
      with("\"id\":42", "\"id\":4294967296"),    // out of range
      with("\"id\":42,", ""),                    // a required key missing
      with("\"state\":\"PENDING\"", "\"state\":\"NOPE\""),
      with("\"partition\":\"\"", "\"partition\":\"p\\u00e9\\n\""),  // escapes
      with("\"attained_service\":0.0", "\"attained_service\":1E5"),
      with("\"attained_service\":0.0", "\"attained_service\":.5"),
      with("\"attained_service\":0.0", "\"attained_service\":7"),
      with("\"slurm\":{", "\"slurm\":{\"node_cpus\":true,"),
      with("\"slurm\":{", "\"slurm\":{\"other\":[1,{}],"),  // an unknown key
      with("\"request\":{", "\"request\":{\"nice\":\"x\","),
      with("\"request\":{", "\"exec\":{\"script\":\"s\"},\"request\":{"),
      with("\"priority\":7", "\"priority\":7,\"usage\":{\"cpu_seconds\":2}"),
      with("\"priority\":7", "\"priority\":7,\"usage\":[]"),
      with("\"priority\":7", "\"priority\":7,\"steps\":{}"),
      with("\"priority\":7", "\"priority\":7,\"steps\":[{}]"),
      with("\"priority\":7", "\"priority\":7,\"k8s\":5"),
      base + " ",
      base + "x",
      base.substr(0, base.size() - 1),
  };
  // A record whose submit time comes before its request, after one with the same request:
  // the memo's copy of the request does not undo the submit time.
  ASSERT_TRUE(DecodeJobRecord(base, &cache).ok());
  cases.push_back(with("\"submit_time\":1700000000,", "").replace(0, 1, "{\"submit_time\":5,"));
  EXPECT_EQ(DecodeJobRecord(cases.back(), &cache)->job.spec->submit_time, 5);
  for (const std::string& text : cases) {
    Result<JobRecord> fast = DecodeJobRecord(text);
    Result<JobRecord> tree = DecodeJobRecordTree(text);
    ASSERT_EQ(fast.ok(), tree.ok()) << text;
    if (fast.ok()) {
      ExpectSameRecord(*fast, *tree, text);
    } else {
      EXPECT_EQ(fast.status().message(), tree.status().message()) << text;
    }
  }
}

TEST(JobRecordTest, AJobWithoutRunSpecificationStoresNoExecKey) {
  JobRecord r = SampleRecord();
  r.job.exec = nullptr;
  nlohmann::json stored = nlohmann::json::parse(StoredText(r));
  EXPECT_FALSE(stored.contains("exec"));
}

// A GPU share (and the request for it) survives the store exactly: a restarted controller
// restores the device and thousandths the job holds.
TEST(JobRecordTest, GpuSharesRoundTrip) {
  JobRecord r = SampleRecord();
  r.job.state = core::JobState::kRunning;
  r.job.spec.Mut().gpu_milli = 500;
  r.job.spec.Mut().gpu_mps = true;
  core::NodeAllocation a;
  a.cpus = 1;
  a.mem_mib = 100;
  a.tasks = 1;
  a.gpu_mask = 0b1;
  a.gpu_shares = {{3, 500}};
  r.job.alloc.nodes = {a};
  r.node_names = {"g01"};
  Result<JobRecord> back = DecodeJobRecord(StoredText(r));
  ASSERT_TRUE(back.ok()) << back.status().message();
  EXPECT_EQ(back->job.alloc, r.job.alloc);
  EXPECT_EQ(back->job.spec->gpu_milli, 500);
  EXPECT_TRUE(back->job.spec->gpu_mps);
  EXPECT_EQ(AllocTresText(r), "cpu=1,mem=100M,node=1,billing=1,gres/gpu=1,gres/mps=50");
}

// Records of every kind a view shows differently.
// A step srun recorded as started and still running.
api::StepRecord RunningStep(uint32_t id, const std::string& name, Time start, int32_t ntasks,
                            const std::string& nodes) {
  api::StepRecord s;
  s.id = id;
  s.name = name;
  s.state = "RUNNING";
  s.start = start;
  s.ntasks = ntasks;
  s.nodes = nodes;
  return s;
}

std::vector<JobRecord> VariedRecords() {
  std::vector<JobRecord> cases;
  {
    JobRecord r = SampleRecord();  // pending, with a reason and a dependency
    Result<core::Dependency> after = core::ParseDependency("afterok:7,afterany:9");
    if (after.ok()) r.job.spec.Mut().dependency = *after;
    cases.push_back(std::move(r));
  }
  {
    JobRecord r = SampleRecord();  // held, array master, no reason of its own
    r.reason = core::PendingReason::kNone;
    r.reason_detail.clear();
    r.job.spec.Mut().hold = core::HoldKind::kUser;
    r.job.spec.Mut().array.task_ids = {1, 2, 3, 7};
    r.job.spec.Mut().array.max_running = 2;
    r.job.spec.Mut().partitions = {"a", "b"};
    r.slurm.Mut().account_given = false;
    r.slurm.Mut().default_time_limit = 3600;
    cases.push_back(std::move(r));
  }
  {
    JobRecord r = SampleRecord();  // running on two nodes with GPUs, preempted with a grace
    r.job.state = core::JobState::kRunning;
    r.job.array_job_id = 40;
    r.job.array_task_id = 2;
    r.job.partition = "gpu";
    r.job.start_time = 1700000100;
    r.job.eligible_time = 1700000001;
    r.job.time_limit = 7200;
    r.run.Mut().preempt_end = 1700000400;
    r.job.spec.Mut().gpus_per_node = 2;
    r.job.spec.Mut().gpu_type = "a100";
    r.job.spec.Mut().min_nodes = 2;
    r.job.spec.Mut().mem_per_cpu_mib = 1024;
    r.submit_host = "login1";
    core::NodeAllocation a;
    a.cpus = 4;
    a.mem_mib = 4096;
    a.tasks = 1;
    a.gpu_mask = 0b101;
    r.job.alloc.nodes = {a, a};
    r.node_names = {"g01", "g02"};
    r.run.Mut().cpu_seconds = 12.5;
    r.run.Mut().max_rss_mib = 300;
    r.run.Mut().gpu_utilization = 40;
    cases.push_back(std::move(r));
  }
  {
    JobRecord r = SampleRecord();  // ended: cancelled by someone, a direct argv
    r.job.state = core::JobState::kCancelled;
    r.reason = core::PendingReason::kNone;
    r.job.start_time = 1700000100;
    r.job.end_time = 1700000200;
    r.job.outcome.exit_code = 3;
    r.job.outcome.term_signal = 9;
    r.run.Mut().cancelled_by = 0;
    r.run.Mut().message = "from the node";
    r.job.restart_count = 1;
    auto exec = std::make_shared<core::JobExecSpec>(*r.job.exec);
    exec->script.clear();
    exec->argv = {"/bin/sleep", "10"};
    r.job.exec = exec;
    cases.push_back(std::move(r));
  }
  {
    JobRecord r = SampleRecord();  // a GPU share, no run specification
    r.job.spec.Mut().gpu_milli = 250;
    r.job.exec = nullptr;
    r.expected_start = 1700009000;
    cases.push_back(std::move(r));
  }
  return cases;
}

// squeue's lines are made from records in memory (POST /v1/views/squeue) and from their JSON
// (GET /v1/jobs): both must give the same view of every kind of record.
TEST(JobRecordTest, TheSlurmViewOfARecordIsTheViewOfItsJson) {
  const std::vector<JobRecord> cases = VariedRecords();
  constexpr Time kNow = 1700000500;
  for (size_t i = 0; i < cases.size(); ++i) {
    const JobRecord& r = cases[i];
    Result<slurm::JobView> from_json = slurm::JobViewFromJson(EncodeJobRecord(r, true), kNow);
    ASSERT_TRUE(from_json.ok()) << from_json.status().message();
    const slurm::JobView direct =
        slurm::JobViewOf(SlurmFactsOf(r), r.job.spec, r.job.exec.get(), kNow);
    EXPECT_TRUE(direct == *from_json) << "case " << i;
    EXPECT_EQ(direct.display_id, from_json->display_id) << "case " << i;
    EXPECT_EQ(direct.std_out, from_json->std_out) << "case " << i;
    EXPECT_EQ(direct.alloc_tres, from_json->alloc_tres) << "case " << i;
    // A list's record has no run specification: nor has the view made without one.
    Result<slurm::JobView> listed = slurm::JobViewFromJson(EncodeJobRecord(r, false), kNow);
    ASSERT_TRUE(listed.ok()) << listed.status().message();
    EXPECT_TRUE(slurm::JobViewOf(SlurmFactsOf(r), r.job.spec, nullptr, kNow) == *listed)
        << "case " << i;
  }
  // The cases are what they claim: each kind shows.
  const slurm::JobView running =
      slurm::JobViewOf(SlurmFactsOf(cases[2]), cases[2].job.spec, cases[2].job.exec.get(), kNow);
  EXPECT_EQ(running.nodes, "g[01-02]");
  EXPECT_EQ(running.end_time, 1700000400);
  EXPECT_EQ(running.display_id, "40_2");
  const slurm::JobView held =
      slurm::JobViewOf(SlurmFactsOf(cases[1]), cases[1].job.spec, cases[1].job.exec.get(), kNow);
  EXPECT_EQ(held.reason, "JobHeldUser");
  EXPECT_EQ(held.display_id, "42_[1-3,7%2]");
}

// sacct's report is made from records (POST /v1/views/sacct) and from their JSON (GET
// /v1/accounting/jobs): every field of 22.05's list, on the job's row, its batch row and its
// steps' rows, and --json, read the same from both for every kind of record.
TEST(JobRecordTest, SacctShowsARecordAsItShowsItsJson) {
  std::vector<JobRecord> cases = VariedRecords();
  {
    JobRecord r = SampleRecord();  // ended, with a step that was running when it ended
    r.job.state = core::JobState::kCompleted;
    r.job.start_time = 1700000100;
    r.job.end_time = 1700000300;
    api::StepRecord step = RunningStep(0, "python", 1700000150, 2, "g01");
    step.ncpus = 2;
    r.run.Mut().steps = {step};
    cases.push_back(std::move(r));
  }
  constexpr Time kNow = 1700000500;
  std::string every;
  const std::string names = slurm::SacctHelpFormat();
  for (std::string_view line : Split(names, '\n')) {
    for (std::string_view name : Split(line, ' ')) {
      if (!name.empty()) every += (every.empty() ? "" : ",") + std::string(name);
    }
  }
  slurm::SacctOptions opt;
  opt.fields = *slurm::ParseSacctFormat(every);
  opt.parsable2 = true;
  for (size_t i = 0; i < cases.size(); ++i) {
    const JobRecord& r = cases[i];
    Result<slurm::SacctJob> from_json = slurm::SacctJobFromJson(EncodeJobRecord(r, false), kNow);
    ASSERT_TRUE(from_json.ok()) << from_json.status().message();
    const slurm::SacctJob direct = SacctJobOf(r, kNow);
    EXPECT_EQ(slurm::RenderSacct(opt, {&direct}, "c"), slurm::RenderSacct(opt, {&*from_json}, "c"))
        << "case " << i;
    EXPECT_EQ(slurm::SacctJson({&direct}, "c", false), slurm::SacctJson({&*from_json}, "c", false))
        << "case " << i;
  }
  // The cases are what they claim: the last one has a step row.
  const slurm::SacctJob last = SacctJobOf(cases.back(), kNow);
  ASSERT_EQ(last.steps.size(), 1u);
  EXPECT_EQ(last.steps[0].state, "CANCELLED");  // ended with its job
}

// The controller's squeue leaves out of each view the parts its format does not show: every
// field, by letter (-o) and by name (-O), reads the same from such a view as from a whole one.
TEST(JobRecordTest, EverySqueueFieldShowsTheSameFromAViewWithOnlyThePartsItNeeds) {
  constexpr Time kNow = 1700000500;
  const slurm::SqueueContext ctx{kNow, "berth", ""};
  auto check = [&](const std::string& format_text, bool percent_form) {
    const slurm::OutputFormat format = percent_form ? slurm::ParsePercentFormat(format_text)
                                                    : slurm::ParseFieldList(format_text, 20);
    const uint32_t parts = slurm::SqueueViewParts(format, percent_form);
    for (const JobRecord& r : VariedRecords()) {
      slurm::SqueueRow whole, light;
      whole.job = slurm::JobViewOf(SlurmFactsOf(r), r.job.spec, r.job.exec.get(), kNow);
      light.job = slurm::JobViewOf(SlurmFactsOf(r), r.job.spec, r.job.exec.get(), kNow, parts);
      EXPECT_EQ(slurm::RenderSqueueLine(format, percent_form, light, ctx),
                slurm::RenderSqueueLine(format, percent_form, whole, ctx))
          << format_text << " of job " << r.job.id;
    }
  };
  for (char c = 'A'; c <= 'z'; ++c) {
    if (std::isalpha(static_cast<unsigned char>(c)) && slurm::IsJobLetter(std::string(1, c))) {
      check(std::string("%") + c, true);
    }
  }
  for (const char* name :
       {"account",      "command",       "dependency",      "gres",          "stderr",
        "stdin",        "stdout",        "workdir",         "tres",          "tres-alloc",
        "tres-per-job", "tres-per-node", "tres-per-socket", "tres-per-task", "jobid",
        "name",         "state",         "reason",          "nodelist",      "timeused",
        "comment",      "mailtype",      "mailuser",        "features",      "licenses",
        "reqnodes",     "excnodes",      "minmemory",       "numcpus"}) {
    if (slurm::IsJobFieldName(name)) check(name, false);
  }
  // squeue's default lines need none of the parts, and the parts are what the fields show.
  EXPECT_EQ(slurm::SqueueViewParts(slurm::ParsePercentFormat(slurm::kSqueueFormat), true), 0u);
  EXPECT_EQ(slurm::SqueueViewParts(slurm::ParsePercentFormat("%i %o %E %Z %b"), true),
            uint32_t{slurm::kViewAllParts});
  EXPECT_EQ(slurm::SqueueViewParts(slurm::ParseFieldList("stdout,tres-per-task", 20), false),
            uint32_t{slurm::kViewPaths | slurm::kViewTres});
}

TEST(JobRecordTest, TheListTextIsTheListFormWithoutThePassFieldsAndComesFresh) {
  JobRecord r = SampleRecord();
  nlohmann::json prefix = nlohmann::json::parse(r.ListJsonPrefix() + "}");
  nlohmann::json expected = EncodeJobRecord(r, false);
  for (const char* k : {"priority", "reason", "reason_detail", "expected_start", "steps"}) {
    expected.erase(k);
  }
  EXPECT_EQ(prefix, expected);
  JobRecord copy = r;  // a copy is made to be changed: it encodes afresh
  copy.job.spec.Mut().name = "other";
  EXPECT_EQ(nlohmann::json::parse(copy.ListJsonPrefix() + "}").at("request").at("name"), "other");
  EXPECT_EQ(nlohmann::json::parse(r.ListJsonPrefix() + "}").at("request").at("name"), "train");
  copy = r;
  EXPECT_EQ(nlohmann::json::parse(copy.ListJsonPrefix() + "}").at("request").at("name"), "train");
}

TEST(JobRecordTest, StepsRoundTripAndStayOutOfTheListText) {
  JobRecord r = SampleRecord();
  r.run.Mut().steps = {RunningStep(2, "python3", 1700000100, 2, "n1")};
  r.run.Mut().steps_dropped = 3;
  const nlohmann::json j = EncodeJobRecord(r, false);
  ASSERT_EQ(j.at("steps").size(), 1u);
  EXPECT_EQ(j.at("steps_dropped"), 3);
  Result<JobRecord> back = DecodeJobRecord(StoredText(r));
  ASSERT_TRUE(back.ok()) << back.status().message();
  EXPECT_EQ(back->run->steps, r.run->steps);
  EXPECT_EQ(back->run->steps_dropped, 3);
  EXPECT_FALSE(nlohmann::json::parse(r.ListJsonPrefix() + "}").contains("steps"));
  // A stored record with a bad step is refused, naming it, not half read.
  nlohmann::json bad = j;
  bad["steps"][0]["state"] = "DONE";
  Result<JobRecord> refused = DecodeJobRecord(bad.dump());
  ASSERT_FALSE(refused.ok());
  EXPECT_NE(refused.status().message().find("bad step: \"state\""), std::string::npos);
}

}  // namespace
}  // namespace berth::controller
