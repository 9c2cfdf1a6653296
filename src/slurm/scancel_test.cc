#include "slurm/scancel.h"

#include <gtest/gtest.h>

#include <nlohmann/json.hpp>

namespace berth::slurm {
namespace {

using nlohmann::json;

// ---- Job ids

struct IdCase {
  std::string text;
  std::vector<std::string> ids;  // JobText() of each, with ".step" when given; empty = error
};

std::string Show(const ScancelId& id) {
  return id.JobText() + (id.step >= 0 ? "." + std::to_string(id.step) : "");
}

TEST(ScancelIdTest, ParsesSlurmsForms) {
  const IdCase cases[] = {
      {"12", {"12"}},
      {"12_4", {"12_4"}},
      {"12_[1-3]", {"12_1", "12_2", "12_3"}},
      {"12_[1,3-4,7-11:2]", {"12_1", "12_3", "12_4", "12_7", "12_9", "12_11"}},
      {"12_[3,1,3]", {"12_1", "12_3"}},
      {"12_*", {"12_*"}},
      {"12.0", {"12.0"}},
      {"12_4.1", {"12_4.1"}},
      {" 12", {"12"}},  // strtol skips blanks and takes a sign, as in Slurm
      {"+12", {"12"}},
      {"0", {}},
      {"abc", {}},
      {"12x", {}},
      {"12_x", {}},
      {"12_", {}},
      {"12_[1-3", {}},
      {"12_[3-1]", {}},
      {"12_[]", {}},
      {"12_[1,]", {}},
      {"12.batch", {}},
      {"0x1A", {}},
      {"", {}},
  };
  for (const IdCase& c : cases) {
    Result<std::vector<ScancelId>> r = ParseScancelId(c.text);
    if (c.ids.empty()) {
      ASSERT_FALSE(r.ok()) << c.text;
      EXPECT_EQ(r.status().message(), "scancel: error: Invalid job id " + c.text);
      continue;
    }
    ASSERT_TRUE(r.ok()) << c.text << ": " << r.status().ToString();
    std::vector<std::string> got;
    for (const ScancelId& id : *r) got.push_back(Show(id));
    EXPECT_EQ(got, c.ids) << c.text;
  }
}

TEST(ScancelIdTest, RequestTextSendsTheWholeArrayForStar) {
  EXPECT_EQ(ParseScancelId("12_*")->front().RequestText(), "12");
  EXPECT_EQ(ParseScancelId("12_4")->front().RequestText(), "12_4");
}

// ---- Arguments

ScancelParse Parse(std::vector<std::string> args,
                   std::vector<std::pair<std::string, std::string>> env = {}) {
  args.insert(args.begin(), "scancel");
  return ParseScancelArgs(args, env);
}

TEST(ScancelArgsTest, ShortLongAttachedAndPrefixForms) {
  struct Case {
    std::vector<std::string> args;
    std::function<void(const ScancelOptions&)> check;
  };
  const Case cases[] = {
      {{"-uroot", "12"}, [](const ScancelOptions& o) { EXPECT_EQ(o.user, "root"); }},
      {{"-u", "root", "12"}, [](const ScancelOptions& o) { EXPECT_EQ(o.user, "root"); }},
      {{"--user=root", "12"}, [](const ScancelOptions& o) { EXPECT_EQ(o.user, "root"); }},
      {{"--use", "root", "12"}, [](const ScancelOptions& o) { EXPECT_EQ(o.user, "root"); }},
      {{"12", "-n", "x"},  // options after ids (GNU argument permutation)
       [](const ScancelOptions& o) {
         EXPECT_EQ(o.job_name, "x");
         EXPECT_EQ(o.ids.size(), 1u);
       }},
      {{"-sUSR1", "12"},
       [](const ScancelOptions& o) {
         EXPECT_EQ(o.signal, 10);
         EXPECT_EQ(o.signal_name, "USR1");
       }},
      {{"--signal=SIGTERM", "12"}, [](const ScancelOptions& o) { EXPECT_EQ(o.signal, 15); }},
      {{"-s", "9", "12"},
       [](const ScancelOptions& o) {
         EXPECT_EQ(o.signal, 9);
         EXPECT_TRUE(o.IsKill());
       }},
      {{"-bf", "12"},
       [](const ScancelOptions& o) {
         EXPECT_TRUE(o.batch);
         EXPECT_TRUE(o.full);
       }},
      {{"-tPD", "-p", "gpu"},
       [](const ScancelOptions& o) {
         EXPECT_EQ(o.state, core::JobState::kPending);
         EXPECT_EQ(o.partition, "gpu");
       }},
      {{"--state=running", "-A", "acct", "-q", "high", "-w", "n[1-2]", "-R", "r1"},
       [](const ScancelOptions& o) {
         EXPECT_EQ(o.state, core::JobState::kRunning);
         EXPECT_EQ(o.account, "acct");
         EXPECT_EQ(o.qos, "high");
         EXPECT_EQ(o.nodelist, "n[1-2]");
         EXPECT_EQ(o.reservation, "r1");
       }},
      {{"-vv", "12"}, [](const ScancelOptions& o) { EXPECT_EQ(o.verbose, 2); }},
      {{"-Q", "12"}, [](const ScancelOptions& o) { EXPECT_EQ(o.verbose, -1); }},
      {{"--me"}, [](const ScancelOptions& o) { EXPECT_TRUE(o.me); }},
      {{"-i", "12"}, [](const ScancelOptions& o) { EXPECT_TRUE(o.interactive); }},
      {{"-V"}, [](const ScancelOptions& o) { EXPECT_TRUE(o.version); }},
  };
  for (const Case& c : cases) {
    ScancelParse p = Parse(c.args);
    ASSERT_FALSE(p.done) << c.args.front() << ": " << p.err;
    c.check(p.options);
  }
}

TEST(ScancelArgsTest, ErrorsAsSlurmPrintsThem) {
  struct Case {
    std::vector<std::string> args;
    int code;
    std::string err;
  };
  const Case cases[] = {
      {{}, 1, "scancel: error: No job identification provided\n"},
      {{"abc"}, 1, "scancel: error: Invalid job id abc\n"},
      {{"-s", "FOO", "12"}, 1, "Unknown job signal: FOO\n"},
      {{"-t", "FOO", "12"},
       1,
       "Invalid job state specified: FOO\nValid job states are PENDING, RUNNING, and "
       "SUSPENDED\n"},
      {{"--bogus", "12"}, 1, "Try \"scancel --help\" for more information\n"},
      {{"-z", "12"}, 1, "Try \"scancel --help\" for more information\n"},
      {{"-s"}, 1, "Try \"scancel --help\" for more information\n"},
      {{"--us", "x"}, 1, "Try \"scancel --help\" for more information\n"},  // ambiguous
  };
  for (const Case& c : cases) {
    ScancelParse p = Parse(c.args);
    ASSERT_TRUE(p.done) << (c.args.empty() ? "(none)" : c.args.front());
    EXPECT_EQ(p.exit_code, c.code);
    EXPECT_EQ(p.err, c.err);
  }
}

TEST(ScancelArgsTest, HelpAndUsageGoToStdout) {
  ScancelParse usage = Parse({"--usage"});
  EXPECT_TRUE(usage.done);
  EXPECT_EQ(usage.exit_code, 0);
  EXPECT_EQ(usage.out, ScancelUsage());
  ScancelParse help = Parse({"--help"});
  EXPECT_EQ(help.out, ScancelHelp());
}

TEST(ScancelArgsTest, EnvironmentComesBeforeTheCommandLine) {
  ScancelParse p = Parse({"-p", "cmdline", "12"}, {{"SCANCEL_PARTITION", "env"},
                                                   {"SCANCEL_NAME", "envname"},
                                                   {"SCANCEL_BATCH", "TRUE"},
                                                   {"SCANCEL_VERBOSE", "false"}});
  ASSERT_FALSE(p.done);
  EXPECT_EQ(p.options.partition, "cmdline");
  EXPECT_EQ(p.options.job_name, "envname");
  EXPECT_TRUE(p.options.batch);
  EXPECT_EQ(p.options.verbose, 0);
  ScancelParse bad = Parse({"12"}, {{"SCANCEL_STATE", "nope"}});
  EXPECT_TRUE(bad.done);
  EXPECT_EQ(bad.err, "Unrecognized SCANCEL_STATE value: nope\n");
}

TEST(ScancelArgsTest, IdsOnlyIsSlurmsDefaultPath) {
  struct Case {
    std::vector<std::string> args;
    bool ids_only;
  };
  const Case cases[] = {
      {{"12", "13_4"}, true},     {{"-v", "12"}, true},          {{"-f", "12"}, true},
      {{"-b", "12"}, false},      {{"-s", "USR1", "12"}, false}, {{"-i", "12"}, false},
      {{"-u", "x", "12"}, false}, {{"--me", "12"}, false},       {{"12.0"}, false},
  };
  for (const Case& c : cases) {
    ScancelParse p = Parse(c.args);
    ASSERT_FALSE(p.done);
    EXPECT_EQ(p.options.IdsOnly(), c.ids_only) << c.args.front();
  }
}

// ---- Selection

json Record(uint32_t id, const std::string& state, json request, json extra = json::object()) {
  request["uid"] = request.value("uid", 1000);
  request["user"] = request.value("user", "alice");
  request["script"] = "#!/bin/sh\ntrue\n";
  if (!request.contains("partition")) request["partition"] = "batch";
  json r = {{"id", id},         {"state", state}, {"request", request},   {"submit_time", 100},
            {"start_time", -1}, {"end_time", -1}, {"partition", "batch"}, {"exit_code", 0},
            {"term_signal", 0}};
  for (auto& [k, v] : extra.items()) r[k] = v;
  return r;
}

json Running(uint32_t id, json request, const std::string& node) {
  return Record(
      id, "RUNNING", request,
      {{"start_time", 200},
       {"allocation",
        {{"nodes", {{{"node", node}, {"cpus", 1}, {"mem_mib", 0}, {"gpus", json::array()}}}}}}});
}

std::vector<JobView> Views(const std::vector<json>& records) {
  std::vector<JobView> out;
  for (const json& r : records) {
    Result<JobView> v = JobViewFromJson(r, 1000);
    EXPECT_TRUE(v.ok()) << v.status().ToString();
    if (v.ok()) out.push_back(*v);
  }
  return out;
}

std::vector<std::string> Requests(const ScancelSelection& s) {
  std::vector<std::string> out;
  for (const ScancelTarget& t : s.targets) {
    for (const std::string& id : t.request_ids) out.push_back(id);
  }
  return out;
}

ScancelOptions Options(std::vector<std::string> args) {
  ScancelParse p = Parse(std::move(args));
  EXPECT_FALSE(p.done) << p.err;
  return p.options;
}

class ScancelSelectTest : public ::testing::Test {
 protected:
  // 10 running on n1 (alice, "train"), 11 pending (bob, "train", partition gpu), 12 completed,
  // array 20: task 20_1 running on n2 (record 21), tasks 2-4 pending in the master 20.
  std::vector<JobView> jobs_ = Views({
      Running(10, {{"name", "train"}}, "n1"),
      Record(11, "PENDING",
             {{"name", "train"}, {"user", "bob"}, {"uid", 1001}, {"partition", "gpu"}}),
      Record(12, "COMPLETED", {{"name", "done"}}),
      Record(20, "PENDING", {{"name", "arr"}, {"array", "2-4"}}, {{"array_job_id", 20}}),
      Running(21, {{"name", "arr"}}, "n2"),
  });

  void SetUp() override {
    // Record 21 is task 1 of array 20.
    json r = Running(21, {{"name", "arr"}}, "n2");
    r["array_job_id"] = 20;
    r["array_task_id"] = 1;
    jobs_[4] = *JobViewFromJson(r, 1000);
  }
};

TEST_F(ScancelSelectTest, UnknownAndEndedIdsAreInvalidWithExitCodeOne) {
  ScancelSelection s =
      SelectScancelTargets(Options({"-s", "USR1", "10", "12", "99", "20_7"}), jobs_);
  EXPECT_EQ(s.exit_code, 1);
  EXPECT_EQ(s.errors, (std::vector<std::string>{
                          "scancel: error: Kill job error on job id 12: Invalid job id specified",
                          "scancel: error: Kill job error on job id 99: Invalid job id specified",
                          "scancel: error: Kill job error on job id 20_7: Invalid job id "
                          "specified"}));
  EXPECT_EQ(Requests(s), std::vector<std::string>{"10"});
}

TEST_F(ScancelSelectTest, AStepOfAnActiveJobIsATargetOfItsOwn) {
  // The controller checks the step itself (srun reported it); the job must be active here.
  ScancelSelection s = SelectScancelTargets(Options({"10.0", "10.3", "99.1"}), jobs_);
  EXPECT_EQ(s.exit_code, 1);
  EXPECT_EQ(s.errors, std::vector<std::string>{"scancel: error: Kill job error on job step id "
                                               "99.1: Invalid job id specified"});
  EXPECT_EQ(Requests(s), (std::vector<std::string>{"10.0", "10.3"}));
  ASSERT_EQ(s.targets.size(), 2u);
  EXPECT_EQ(s.targets[0].display_id, "10.0");
  EXPECT_EQ(ConfirmPrompt(s.targets[0]).substr(0, 20), "Cancel step_id=10.0 ");
  // The job and one of its steps: both.
  s = SelectScancelTargets(Options({"10", "10.2"}), jobs_);
  EXPECT_EQ(Requests(s), (std::vector<std::string>{"10.2", "10"}));
}

TEST(ScancelStepTest, VerboseLinesAndFailuresNameTheStep) {
  EXPECT_EQ(VerboseLine(Options({"12.0"}), "12.0"), "scancel: Terminating step 12.0");
  EXPECT_EQ(VerboseLine(Options({"-s", "USR1", "12.0"}), "12.0"),
            "scancel: Signal 10 to step 12.0");
  // An ended step: silent and exit 0 for a KILL, an error for another signal.
  FailureReport r = ReportFailure(Options({"12.0"}), "12.0",
                                  {409, "Job/step already completing or completed: 12.0"});
  EXPECT_EQ(r.line, "");
  EXPECT_EQ(r.exit_code, 0);
  r = ReportFailure(Options({"-s", "USR1", "12.0"}), "12.0",
                    {409, "Job/step already completing or completed: 12.0"});
  EXPECT_EQ(r.exit_code, 2021);  // ESLURM_ALREADY_DONE (exits 229)
  // An unknown step is said, whatever the signal.
  r = ReportFailure(Options({"12.7"}), "12.7", {404, "Invalid job id specified: 12.7"});
  EXPECT_EQ(r.line, "scancel: error: Kill job error on job step id 12.7: Invalid job id specified");
  EXPECT_EQ(r.exit_code, 2017);  // ESLURM_INVALID_JOB_ID, cut to 8 bits at exit
}

TEST_F(ScancelSelectTest, QuietDropsTheMessagesNotTheExitCode) {
  ScancelSelection s = SelectScancelTargets(Options({"-Q", "-s", "USR1", "99"}), jobs_);
  EXPECT_EQ(s.exit_code, 1);
  EXPECT_TRUE(s.errors.empty());
}

TEST_F(ScancelSelectTest, FiltersCombineWithAndAndPendingGoFirst) {
  struct Case {
    std::vector<std::string> args;
    std::vector<std::string> requests;
  };
  const Case cases[] = {
      {{"-n", "train"}, {"11", "10"}},  // pending first
      {{"-n", "train", "-t", "RUNNING"}, {"10"}},
      {{"-n", "train", "-u", "bob"}, {"11"}},  // -u is resolved to a uid by the command
      {{"-p", "gpu"}, {"11"}},
      {{"-w", "n[1-2]"}, {"10", "20_1"}},
      {{"-w", "n2", "-n", "train"}, {}},
      {{"-n", "arr"}, {"20_2", "20_3", "20_4", "20_1"}},
      {{"-n", "arr", "-t", "PD"}, {"20_2", "20_3", "20_4"}},
      {{"-n", "done"}, {}},  // ended jobs are never selected
      {{"-A", "nothing"}, {}},
  };
  for (const Case& c : cases) {
    ScancelOptions o = Options(c.args);
    if (o.user == "bob") o.uid = 1001;
    ScancelSelection s = SelectScancelTargets(o, jobs_);
    EXPECT_EQ(Requests(s), c.requests) << c.args[0] << " " << c.args[1];
    EXPECT_EQ(s.exit_code, 0);
  }
}

TEST_F(ScancelSelectTest, UidFilter) {
  ScancelOptions o = Options({"-u", "bob"});
  o.uid = 1001;
  EXPECT_EQ(Requests(SelectScancelTargets(o, jobs_)), std::vector<std::string>{"11"});
}

TEST_F(ScancelSelectTest, IdsRestrictFilters) {
  EXPECT_EQ(Requests(SelectScancelTargets(Options({"-n", "train", "10", "20"}), jobs_)),
            std::vector<std::string>{"10"});
  EXPECT_EQ(Requests(SelectScancelTargets(Options({"-t", "PD", "20"}), jobs_)),
            (std::vector<std::string>{"20_2", "20_3", "20_4"}));
}

TEST_F(ScancelSelectTest, ArrayIdsReachTasksAndPendingTasks) {
  struct Case {
    std::vector<std::string> args;
    std::vector<std::string> requests;
    std::vector<std::string> displays;
  };
  const Case cases[] = {
      {{"-i", "20"}, {"20_2", "20_3", "20_4", "20_1"}, {"20_[2-4]", "20_1"}},
      {{"-i", "20_3"}, {"20_3"}, {"20_3"}},
      {{"-i", "20_1"}, {"20_1"}, {"20_1"}},
      {{"-i", "20_*"}, {"20_2", "20_3", "20_4", "20_1"}, {"20_[2-4]", "20_1"}},
      {{"-i", "20_[1-2]"}, {"20_2", "20_1"}, {"20_2", "20_1"}},
      {{"-i", "20_[2-3]"}, {"20_2", "20_3"}, {"20_[2-3]"}},
      {{"-i", "21"}, {"20_1"}, {"20_1"}},  // a task by its own job id
  };
  for (const Case& c : cases) {
    ScancelSelection s = SelectScancelTargets(Options(c.args), jobs_);
    EXPECT_EQ(Requests(s), c.requests) << c.args[1];
    std::vector<std::string> displays;
    for (const ScancelTarget& t : s.targets) displays.push_back(t.display_id);
    EXPECT_EQ(displays, c.displays) << c.args[1];
    EXPECT_EQ(s.exit_code, 0) << c.args[1];
  }
}

TEST_F(ScancelSelectTest, VerboseSaysWhenNoJobMatchesTheFilters) {
  ScancelSelection s = SelectScancelTargets(Options({"-v", "-n", "none", "-p", "p1"}), jobs_);
  EXPECT_EQ(s.errors, std::vector<std::string>{"scancel: error: No active jobs match ALL job "
                                               "filters, including: job_name=none partition=p1 "});
  EXPECT_TRUE(SelectScancelTargets(Options({"-n", "none"}), jobs_).errors.empty());
}

TEST_F(ScancelSelectTest, AJobAtATimeSelectsWhatTheVectorSelects) {
  // The controller's form: each job's view made in one scratch view that the next job's
  // overwrites, so that a target may keep nothing of it.
  const std::vector<std::vector<std::string>> cases = {{"-n", "train"},
                                                       {"-n", "arr", "-t", "PD"},
                                                       {"-w", "n[1-2]"},
                                                       {"-v", "-n", "none", "-p", "p1"},
                                                       {"-t", "PD", "20"},
                                                       {"-n", "train", "10", "20"},
                                                       {"-i", "20_[2-3]"},
                                                       {"-s", "USR1", "10", "12", "99", "20_7"},
                                                       {"-n", "arr", "20.0", "10.2"}};
  for (const std::vector<std::string>& args : cases) {
    const ScancelOptions o = Options(args);
    int walks = 0;
    ScancelSelection streamed =
        SelectScancelTargets(o, [&](const std::function<void(const JobView&)>& visit) {
          ++walks;
          JobView scratch;
          for (const JobView& j : jobs_) {
            scratch = j;
            visit(scratch);
            scratch = JobView();
          }
        });
    ScancelSelection whole = SelectScancelTargets(o, jobs_);
    const std::string name = args[0] + " " + args[1];
    EXPECT_EQ(walks, o.ids.empty() ? 1 : 2) << name;
    EXPECT_EQ(streamed.errors, whole.errors) << name;
    EXPECT_EQ(streamed.exit_code, whole.exit_code) << name;
    ASSERT_EQ(streamed.targets.size(), whole.targets.size()) << name;
    for (size_t k = 0; k < whole.targets.size(); ++k) {
      const ScancelTarget& a = streamed.targets[k];
      const ScancelTarget& b = whole.targets[k];
      EXPECT_EQ(a.request_ids, b.request_ids) << name;
      EXPECT_EQ(a.display_id, b.display_id) << name;
      EXPECT_EQ(a.job_id, b.job_id) << name;
      EXPECT_EQ(a.job, nullptr) << name;
      ASSERT_NE(b.job, nullptr) << name;
      EXPECT_EQ(b.job->job_id, b.job_id) << name;
    }
  }
}

TEST(ScancelTest, RequestSignalMakesAWholeJobKillACancel) {
  EXPECT_EQ(RequestSignal(Options({"-u", "x"})), 0);
  EXPECT_EQ(RequestSignal(Options({"-s", "KILL", "12"})), 0);
  EXPECT_EQ(RequestSignal(Options({"-s", "9", "12"})), 0);
  EXPECT_EQ(RequestSignal(Options({"-b", "-s", "KILL", "12"})), 9);
  EXPECT_EQ(RequestSignal(Options({"-f", "-s", "KILL", "12"})), 9);
  EXPECT_EQ(RequestSignal(Options({"-s", "USR1", "12"})), 10);
}

TEST(ScancelTest, IdTargetsSendIdsAsGiven) {
  std::vector<ScancelTarget> t = IdTargets(Options({"12", "13_[1-2]", "14_*"}));
  ASSERT_EQ(t.size(), 4u);
  EXPECT_EQ(t[0].request_ids, std::vector<std::string>{"12"});
  EXPECT_EQ(t[1].request_ids, std::vector<std::string>{"13_1"});
  EXPECT_EQ(t[3].request_ids, std::vector<std::string>{"14"});
  EXPECT_EQ(t[3].display_id, "14_*");
}

TEST(ScancelTest, VerboseLines) {
  EXPECT_EQ(VerboseLine(Options({"12"}), "12"), "scancel: Terminating job 12");
  EXPECT_EQ(VerboseLine(Options({"-b", "12"}), "12"), "scancel: Terminating batch job 12");
  EXPECT_EQ(VerboseLine(Options({"-s", "USR1", "12"}), "12_3"), "scancel: Signal 10 to job 12_3");
  EXPECT_EQ(VerboseLine(Options({"-f", "-s", "TERM", "12"}), "12"),
            "scancel: Signal 15 to full job 12");
}

TEST(ScancelTest, ConfirmPromptAsSlurm) {
  JobView v;
  v.name = "train";
  v.partition = "gpu";
  ScancelTarget t{{"12"}, "12_[1-3]", &v};
  EXPECT_EQ(ConfirmPrompt(t), "Cancel job_id=12_[1-3] name=train partition=gpu [y/n]? ");
}

// ---- Failures: what Slurm 22.05 printed and returned on a real cluster.

TEST(ScancelTest, FailuresAsSlurmReportsThem) {
  struct Case {
    std::vector<std::string> args;
    CancelFailure failure;
    std::string line;
    int status;  // the exit status
  };
  const Case cases[] = {
      // A plain cancel of an unknown or ended job: silent, exit 0 ...
      {{"99"}, {404, "Invalid job id specified: 99"}, "", 0},
      {{"12"}, {409, "Job has already finished: 12"}, "", 0},
      // ... said with -v, still exit 0.
      {{"-v", "99"},
       {404, "Invalid job id specified: 99"},
       "scancel: error: Kill job error on job id 99: Invalid job id specified",
       0},
      {{"-v", "12"},
       {409, "Job has already finished: 12"},
       "scancel: error: Kill job error on job id 12: Job/step already completing or completed",
       0},
      // A signal to an ended job is an error (ESLURM_ALREADY_DONE = 2021), silent without -v.
      {{"-s", "USR1", "12"}, {409, "Job has already finished: 12"}, "", 229},
      {{"12"},
       {403, "Access/permission denied: job 12 belongs to another user"},
       "scancel: error: Kill job error on job id 12: Access/permission denied",
       210},
      {{"-s", "USR1", "12"},
       {409, "job 12 is pending"},
       "scancel: error: Kill job error on job id 12: Job can not be altered now, try again later",
       228},
      {{"12"},
       {500, "the store failed"},
       "scancel: error: Kill job error on job id 12: the store failed",
       1},
  };
  for (const Case& c : cases) {
    FailureReport r =
        ReportFailure(Options(c.args), "12" == c.args.back() ? "12" : "99", c.failure);
    EXPECT_EQ(r.line, c.line) << c.failure.message;
    EXPECT_EQ(ExitStatusOf(r.exit_code), c.status) << c.failure.message;
  }
}

}  // namespace
}  // namespace berth::slurm
