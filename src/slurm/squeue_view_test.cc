#include "slurm/squeue_view.h"

#include <gtest/gtest.h>
#include <stdlib.h>
#include <time.h>

#include <algorithm>
#include <atomic>
#include <map>
#include <nlohmann/json.hpp>
#include <thread>

#include "api/step_record.h"

namespace berth::slurm {
namespace {

using nlohmann::json;

constexpr Time kNow = 1800000000;  // 2027-01-15T08:00:00Z

void UseUtc() {
  setenv("TZ", "UTC", 1);
  unsetenv("SLURM_TIME_FORMAT");
  tzset();
}

// A job record as GET /v1/jobs returns it (src/controller/job_record.cc).
json Job(uint32_t id, const std::string& state, json request = json::object()) {
  json req = {{"name", "train"},
              {"user", "alice"},
              {"uid", 1001},
              {"gid", 1001},
              {"partition", "gpu"},
              {"work_dir", "/home/alice"},
              {"script", "#!/bin/sh\ntrue\n"}};
  for (const auto& [k, v] : request.items()) req[k] = v;
  return {{"id", id},
          {"state", state},
          {"request", req},
          {"submit_time", kNow - 600},
          {"eligible_time", kNow - 600},
          {"start_time", -1},
          {"end_time", -1},
          {"time_limit", -1},
          {"partition", ""},
          {"restart_count", 0},
          {"exit_code", 0},
          {"term_signal", 0},
          {"submit_host", "login1"},
          {"priority", 0}};
}

json Running(uint32_t id, std::vector<std::string> nodes, Time started, json request = {}) {
  json j = Job(id, "RUNNING", std::move(request));
  j["start_time"] = started;
  j["partition"] = j["request"]["partition"];
  json alloc = json::array();
  for (const std::string& n : nodes) {
    alloc.push_back({{"node", n}, {"cpus", 4}, {"mem_mib", 1024}, {"tasks", 1}, {"gpus", {0, 1}}});
  }
  j["allocation"] = {{"nodes", alloc}, {"licenses", json::object()}};
  return j;
}

json Pending(uint32_t id, const std::string& reason, int64_t priority, json request = {}) {
  json j = Job(id, "PENDING", std::move(request));
  j["reason"] = reason;
  j["priority"] = priority;
  return j;
}

std::vector<SqueueRow> Rows(const json& jobs, bool one_per_task = false) {
  int skipped = -1;
  std::vector<SqueueRow> rows = SqueueRows(jobs, kNow, one_per_task, &skipped);
  EXPECT_EQ(skipped, 0);
  return rows;
}

std::string Render(std::vector<SqueueRow> rows, const std::string& format = kSqueueFormat,
                   const std::string& sort = kSqueueDefaultSort, bool percent = true) {
  SortRows(rows, ParseSortList(sort, {"cluster"}), kNow);
  OutputFormat f = percent ? ParsePercentFormat(format) : ParseFieldList(format);
  SqueueContext ctx;
  ctx.now = kNow;
  return RenderSqueue(f, percent, rows, false, ctx);
}

std::vector<std::string> Ids(const std::vector<SqueueRow>& rows) {
  std::vector<std::string> ids;
  SqueueContext ctx;
  FormatField f;
  f.key = "i";
  for (const SqueueRow& r : rows) ids.push_back(JobFieldValue(f, true, r, ctx).text);
  return ids;
}

json Queue() {
  return json::array({
      Running(101, {"gpu01", "gpu02"}, kNow - 3725, {{"nodes", 2}}),
      Pending(102, "Resources", 500, {{"name", "averyveryverylongname"}}),
      Pending(103, "Priority", 400),
      Pending(104, "JobHeldUser", 0, {{"hold", "user"}}),
      Running(105, {"cpu1"}, kNow - 59, {{"partition", "cpu"}, {"user", "bob"}, {"uid", 1002}}),
  });
}

TEST(SqueueRender, DefaultLayoutMatchesSlurm) {
  UseUtc();
  EXPECT_EQ(Render(Rows(Queue())),
            "             JOBID PARTITION     NAME     USER ST       TIME  NODES NODELIST(REASON)\n"
            "               105       cpu    train      bob  R       0:59      1 cpu1\n"
            "               102       gpu averyver    alice PD       0:00      1 (Resources)\n"
            "               103       gpu    train    alice PD       0:00      1 (Priority)\n"
            "               104       gpu    train    alice PD       0:00      1 (JobHeldUser)\n"
            "               101       gpu    train    alice  R    1:02:05      2 gpu[01-02]\n");
}

TEST(SqueueRender, LongLayoutMatchesSlurm) {
  UseUtc();
  json q = Queue();
  q[0]["request"]["time_limit"] = 600;
  EXPECT_EQ(
      Render(Rows(q), kSqueueLongFormat),
      "             JOBID PARTITION     NAME     USER    STATE       TIME TIME_LIMI  NODES "
      "NODELIST(REASON)\n"
      "               105       cpu    train      bob  RUNNING       0:59 UNLIMITED      1 cpu1\n"
      "               102       gpu averyver    alice  PENDING       0:00 UNLIMITED      1 "
      "(Resources)\n"
      "               103       gpu    train    alice  PENDING       0:00 UNLIMITED      1 "
      "(Priority)\n"
      "               104       gpu    train    alice  PENDING       0:00 UNLIMITED      1 "
      "(JobHeldUser)\n"
      "               101       gpu    train    alice  RUNNING    1:02:05     10:00      2 "
      "gpu[01-02]\n");
}

TEST(SqueueRender, FieldListLayout) {
  UseUtc();
  json q = json::array({Running(7, {"n1"}, kNow - 10), Pending(8, "Resources", 1)});
  EXPECT_EQ(Render(Rows(q), "JobID,name:5,state:.10,reasonlist,timelimit:.8x", "i", false),
            "JOBID               NAME      STATENODELIST(REASON)    TIME_LIMx\n"
            "7                   train   RUNNINGn1                  UNLIMITEx\n"
            "8                   train   PENDING(Resources)         UNLIMITEx\n");
}

TEST(SqueueRows, ArrayPendingTasksShareALine) {
  UseUtc();
  json master = Pending(200, "JobArrayTaskLimit", 10, {{"array", "0-7%2"}, {"name", "sweep"}});
  json task = Running(201, {"n1"}, kNow - 5, {{"name", "sweep"}});
  task["array_job_id"] = 200;
  task["array_task_id"] = 0;
  json q = json::array({master, task});
  EXPECT_EQ(Ids(Rows(q)), std::vector<std::string>({"200_[0-7%2]", "200_0"}));
  // -r: one line per pending task.
  std::vector<SqueueRow> r = Rows(q, true);
  EXPECT_EQ(Ids(r), std::vector<std::string>({"200_0", "200_1", "200_2", "200_3", "200_4", "200_5",
                                              "200_6", "200_7", "200_0"}));
  SortRows(r, ParseSortList("i"), kNow);
  EXPECT_EQ(Ids(r)[0], "200_0");
}

TEST(SqueueRows, SplitPendingTasksFoldBackIntoTheirArray) {
  json master = Pending(300, "Priority", 10, {{"array", "1-3"}, {"name", "a"}});
  json split = Pending(305, "Dependency", 10, {{"name", "a"}});
  split["array_job_id"] = 300;
  split["array_task_id"] = 5;
  json other = Pending(306, "Priority", 10, {{"name", "renamed"}});
  other["array_job_id"] = 300;
  other["array_task_id"] = 6;
  std::vector<SqueueRow> rows = Rows(json::array({master, split, other}));
  ASSERT_EQ(Ids(rows), std::vector<std::string>({"300_[1-3,5]", "300_6"}));
  FormatField r;
  r.key = "r";
  EXPECT_EQ(JobFieldValue(r, true, rows[0], {}).text, "Priority,Dependency");
}

// squeue's table is built one job at a time (SqueueTableBuilder keeps each line's text and sort
// values, not the views): the same text as the whole rows filtered, sorted and rendered, for
// arrays (combined, split off, one line per task), -P, -j of a task, filters and every sort key.
TEST(SqueueTable, BuiltOneJobAtATimeAsFromAllTheRows) {
  UseUtc();
  json q = Queue();
  json master = Pending(300, "Priority", 10, {{"array", "1-3"}, {"name", "a"}});
  json split = Pending(305, "Dependency", 10, {{"name", "a"}});
  split["array_job_id"] = 300;
  split["array_task_id"] = 5;
  json task = Running(299, {"gpu03"}, kNow - 5, {{"name", "a"}});
  task["array_job_id"] = 300;
  task["array_task_id"] = 0;
  json multi = Pending(400, "Priority", 30, {{"partition", "gpu,cpu"}});
  for (const json& j : {master, split, task, multi}) q.push_back(j);
  const std::map<std::string, int64_t> tiers = {{"cpu", 5}, {"gpu", 1}};
  std::vector<std::vector<std::string>> cases = {{},
                                                 {"-r"},
                                                 {"-P"},
                                                 {"-P", "-r"},
                                                 {"-j", "300_2"},
                                                 {"-j", "300,101"},
                                                 {"-u", "bob"},
                                                 {"-t", "R"},
                                                 {"-n", "a", "-r"},
                                                 {"-o", "%all"},
                                                 {"-O", "JobID,Partition,Reason:40"},
                                                 {"-h", "-S", "-i"}};
  for (char key : std::string("BCDegGijlLmMNpQPStTuUvV")) {
    cases.push_back({"-S", std::string(1, key) + ",-i"});
    cases.push_back({"-S", "-" + std::string(1, key)});
  }
  for (const std::vector<std::string>& c : cases) {
    std::vector<std::string> args = {"squeue"};
    args.insert(args.end(), c.begin(), c.end());
    SqueueParse parsed = ParseSqueueArgs(
        args, [](std::string_view) { return std::nullopt; }, 0);
    ASSERT_FALSE(parsed.exit.done) << args[1];
    const SqueueOptions& o = parsed.options;
    SqueueContext ctx;
    ctx.now = kNow;
    const OutputFormat format = SqueueFormat(o, nullptr);
    // The whole rows, as squeue made its table before.
    std::vector<SqueueRow> rows = Rows(q, o.array_tasks);
    if (o.per_partition) rows = SplitByPartition(std::move(rows), tiers);
    rows = FilterRows(std::move(rows), o.filter);
    SortRows(rows, ParseSortList(o.sort, {"cluster"}), kNow);
    const std::string whole = RenderSqueue(format, o.percent_form, rows, o.no_header, ctx);
    SqueueTableBuilder b(o, format, tiers, ctx);
    for (const json& j : q) b.Add(JobViewFromJson(j, kNow).value());
    const std::string built = b.Finish();
    EXPECT_EQ(built, whole) << testing::PrintToString(c);
    EXPECT_NE(whole.find('\n'), std::string::npos);
    // The same from builders of consecutive slices put together (as the controller fills them
    // on several threads): three slices, an array's master, split task and running task in
    // different ones, and an empty one.
    const std::vector<size_t> cuts = {0, q.size() - 4, q.size() - 2, q.size() - 2, q.size()};
    SqueueTableBuilder first(o, format, tiers, ctx);
    for (size_t k = 0; k + 1 < cuts.size(); ++k) {
      SqueueTableBuilder slice(o, format, tiers, ctx);
      SqueueTableBuilder& to = k == 0 ? first : slice;
      for (size_t i = cuts[k]; i < cuts[k + 1]; ++i) to.Add(JobViewFromJson(q[i], kNow).value());
      if (k > 0) first.Append(std::move(slice));
    }
    EXPECT_EQ(first.Finish(), whole) << "in slices: " << testing::PrintToString(c);
  }
}

// squeue reads the list answer one record at a time: the same lines as from the parsed list,
// a record that is not JSON skipped and counted, a broken list refused.
TEST(SqueueRows, FromTheListTextAsFromItsTree) {
  UseUtc();
  json master = Pending(200, "JobArrayTaskLimit", 10, {{"array", "0-3"}, {"name", "sweep"}});
  json task = Running(201, {"n1"}, kNow - 5, {{"name", "sweep"}});
  task["array_job_id"] = 200;
  task["array_task_id"] = 4;
  json q = json::array({Running(7, {"n1", "n2"}, kNow - 65), master, task,
                        Pending(8, "Resources", 3, {{"name", "x}\"{]"}})});
  const std::string text = json{{"cluster", {{"jobs", json::array({1})}}}, {"jobs", q}}.dump();
  for (bool one_per_task : {false, true}) {
    int skipped = -1;
    Result<std::vector<SqueueRow>> rows = SqueueRowsFromList(text, kNow, one_per_task, &skipped);
    ASSERT_TRUE(rows.ok()) << rows.status().ToString();
    EXPECT_EQ(skipped, 0);
    EXPECT_EQ(Render(*rows), Render(Rows(q, one_per_task)));
    EXPECT_EQ(Ids(*rows), Ids(Rows(q, one_per_task)));
  }
  int skipped = -1;
  Result<std::vector<SqueueRow>> rows = SqueueRowsFromList(
      "{\"jobs\":[" + Pending(9, "Priority", 1).dump() + ",{\"id\":tru}, {\"id\":3}]}", kNow, false,
      &skipped);
  ASSERT_TRUE(rows.ok()) << rows.status().ToString();
  EXPECT_EQ(Ids(*rows), std::vector<std::string>{"9"});
  EXPECT_EQ(skipped, 2);  // not JSON; JSON without a state or request
  EXPECT_FALSE(SqueueRowsFromList("{\"jobs\":[{\"id\":1}", kNow, false).ok());
  Result<std::vector<SqueueRow>> none = SqueueRowsFromList("{}", kNow, false);
  ASSERT_TRUE(none.ok());
  EXPECT_TRUE(none->empty());
}

// SortRows moves rows into their places without a second vector: every permutation of a few
// rows comes out in order, each row whole.
TEST(SqueueRows, SortingMovesEachRowIntoPlace) {
  std::vector<uint32_t> ids = {5, 3, 9, 1, 7, 2};
  std::sort(ids.begin(), ids.end());
  do {
    json q = json::array();
    for (uint32_t id : ids)
      q.push_back(Pending(id, "Priority", 1, {{"name", "n" + std::to_string(id)}}));
    std::vector<SqueueRow> rows = Rows(q);
    SortRows(rows, ParseSortList("i"), kNow);
    ASSERT_EQ(Ids(rows), (std::vector<std::string>{"1", "2", "3", "5", "7", "9"}));
    for (const SqueueRow& r : rows) EXPECT_EQ(r.job.name, "n" + r.job.display_id);
  } while (std::next_permutation(ids.begin(), ids.end()));
}

TEST(SqueueFilter, FiltersCombine) {
  std::vector<SqueueRow> rows = Rows(Queue());
  auto ids = [&](const SqueueFilter& f) { return Ids(FilterRows(rows, f)); };
  SqueueFilter f;
  f.users_given = true;
  f.users = {"bob"};
  EXPECT_EQ(ids(f), std::vector<std::string>({"105"}));
  f = {};
  f.users_given = true;
  f.uids = {1001};
  EXPECT_EQ(ids(f), std::vector<std::string>({"101", "102", "103", "104"}));
  f = {};
  f.states = {core::JobState::kPending};
  f.partitions = {"gpu"};
  EXPECT_EQ(ids(f), std::vector<std::string>({"102", "103", "104"}));
  f = {};
  f.nodes = {"gpu02"};
  EXPECT_EQ(ids(f), std::vector<std::string>({"101"}));
  f = {};
  f.names = {"averyveryverylongname"};
  EXPECT_EQ(ids(f), std::vector<std::string>({"102"}));
  f = {};
  f.users_given = true;  // -u with only unknown users: nothing
  EXPECT_TRUE(ids(f).empty());
}

TEST(SqueueFilter, DefaultStatesHideEndedJobs) {
  json q = json::array({Job(1, "COMPLETED"), Job(2, "FAILED"), Pending(3, "Priority", 1)});
  std::vector<SqueueRow> rows = Rows(q);
  EXPECT_EQ(Ids(FilterRows(rows, {})), std::vector<std::string>({"3"}));
  SqueueFilter all;
  all.states = *ParseJobStateList("all");
  EXPECT_EQ(Ids(FilterRows(rows, all)), std::vector<std::string>({"1", "2", "3"}));
  FormatField r;
  r.key = "R";
  EXPECT_EQ(JobFieldValue(r, true, rows[1], {}).text, "(NonZeroExitCode)");
  EXPECT_EQ(JobFieldValue(r, true, rows[0], {}).text, "");
}

TEST(SqueueFilter, JobIdsAndArrayTasks) {
  json master = Pending(400, "Priority", 1, {{"array", "0-3"}});
  std::vector<SqueueRow> rows = Rows(json::array({master, Pending(401, "Priority", 1)}));
  SqueueFilter f;
  f.jobs = *ParseJobIdList("400_2,400_9");
  EXPECT_EQ(Ids(FilterRows(rows, f)), std::vector<std::string>({"400_2"}));
  f.jobs = *ParseJobIdList("400");
  EXPECT_EQ(Ids(FilterRows(rows, f)), std::vector<std::string>({"400_[0-3]"}));
  f.jobs = *ParseJobIdList("401,400_1");
  EXPECT_EQ(Ids(FilterRows(rows, f)), std::vector<std::string>({"400_1", "401"}));
}

TEST(SqueueParse, JobIdsAndStates) {
  EXPECT_EQ(*ParseJobIdList("12,13_4"), std::vector<JobIdFilter>({{12, -1}, {13, 4}}));
  EXPECT_EQ(ParseJobIdList("abc").status().message(), "Invalid job id: abc");
  EXPECT_EQ(ParseJobIdList("0").status().message(), "Invalid job id: 0");
  EXPECT_EQ(*ParseJobStateList("pd,R,completing"),
            std::vector<core::JobState>(
                {core::JobState::kPending, core::JobState::kRunning, core::JobState::kCompleting}));
  Result<std::vector<core::JobState>> bad = ParseJobStateList("foo");
  EXPECT_EQ(bad.status().message().rfind("Invalid job state specified: foo\nValid job states", 0),
            0u);
}

TEST(SqueueSort, KeysAndDirections) {
  std::vector<SqueueRow> rows = Rows(Queue());
  struct Case {
    const char* sort;
    std::vector<std::string> ids;
  };
  const Case cases[] = {
      {"i", {"101", "102", "103", "104", "105"}},    {"-i", {"105", "104", "103", "102", "101"}},
      {"-p", {"102", "103", "101", "104", "105"}},  // held jobs have priority 0
      {"u,-i", {"104", "103", "102", "101", "105"}}, {"M", {"102", "103", "104", "105", "101"}},
      {"N", {"105", "101", "102", "103", "104"}},  // jobs without nodes last
      {"t,i", {"102", "103", "104", "101", "105"}},
  };
  for (const Case& c : cases) {
    std::vector<SqueueRow> r = rows;
    SortRows(r, ParseSortList(c.sort), kNow);
    EXPECT_EQ(Ids(r), c.ids) << c.sort;
  }
  EXPECT_TRUE(CheckSortKeys(ParseSortList("P,t,-p")).ok());
  EXPECT_TRUE(CheckSortKeys(ParseSortList("-cluster,i", {"cluster"})).ok());
  EXPECT_EQ(CheckSortKeys(ParseSortList("Z")).message(), "Invalid sort specification: Z");
}

TEST(SqueueFields, EveryLetterHasSlurmsHeader) {
  const std::map<char, std::string> headers = {{'a', "ACCOUNT"},
                                               {'A', "JOBID"},
                                               {'b', "TRES_PER_NODE"},
                                               {'B', "EXEC_HOST"},
                                               {'c', "MIN_CPUS"},
                                               {'C', "CPUS"},
                                               {'d', "MIN_TMP_DISK"},
                                               {'D', "NODES"},
                                               {'e', "END_TIME"},
                                               {'E', "DEPENDENCY"},
                                               {'f', "FEATURES"},
                                               {'F', "ARRAY_JOB_ID"},
                                               {'g', "GROUP"},
                                               {'G', "GROUP"},
                                               {'h', "OVER_SUBSCRIBE"},
                                               {'H', "SOCKETS_PER_NODE"},
                                               {'i', "JOBID"},
                                               {'I', "CORES_PER_SOCKET"},
                                               {'j', "NAME"},
                                               {'J', "THREADS_PER_CORE"},
                                               {'k', "COMMENT"},
                                               {'K', "ARRAY_TASK_ID"},
                                               {'l', "TIME_LIMIT"},
                                               {'L', "TIME_LEFT"},
                                               {'m', "MIN_MEMORY"},
                                               {'M', "TIME"},
                                               {'n', "REQ_NODES"},
                                               {'N', "NODELIST"},
                                               {'o', "COMMAND"},
                                               {'O', "CONTIGUOUS"},
                                               {'p', "PRIORITY"},
                                               {'P', "PARTITION"},
                                               {'q', "QOS"},
                                               {'Q', "PRIORITY"},
                                               {'r', "REASON"},
                                               {'R', "NODELIST(REASON)"},
                                               {'s', ""},
                                               {'S', "START_TIME"},
                                               {'t', "ST"},
                                               {'T', "STATE"},
                                               {'u', "USER"},
                                               {'U', "UID"},
                                               {'v', "RESERVATION"},
                                               {'V', "SUBMIT_TIME"},
                                               {'w', "WCKEY"},
                                               {'W', "LICENSES"},
                                               {'x', "EXC_NODES"},
                                               {'X', "CORE_SPEC"},
                                               {'y', "NICE"},
                                               {'Y', "SCHEDNODES"},
                                               {'z', "S:C:T"},
                                               {'Z', "WORK_DIR"}};
  for (const auto& [letter, header] : headers) {
    FormatField f;
    f.key = std::string(1, letter);
    EXPECT_TRUE(IsJobLetter(f.key)) << letter;
    EXPECT_EQ(JobFieldHeader(f, true).text, header) << letter;
  }
  EXPECT_FALSE(IsJobLetter("-"));
  EXPECT_FALSE(IsJobLetter(""));
  EXPECT_TRUE(IsJobFieldName("NumTasksXYZ"));  // squeue matches "numtask*"
  EXPECT_TRUE(IsJobFieldName("tres-per-node"));
  EXPECT_FALSE(IsJobFieldName("excnodes"));  // no -O name in 22.05
}

// Values of a pending job as squeue 22.05 prints them (checked with squeue -o "%all").
TEST(SqueueFields, PendingJobValues) {
  UseUtc();
  json j = Pending(19, "JobHeldUser", 0,
                   {{"hold", "user"},
                    {"mem_per_node", 4096},
                    {"cpus_per_task", 2},
                    {"ntasks", 2},
                    {"gpus_per_node", 2},
                    {"time_limit", 93780},
                    {"nice", 5},
                    {"nodelist", "bench[1-2]"},
                    {"exclude", "bench3"},
                    {"comment", "hi"},
                    {"nodes", 2}});
  std::vector<SqueueRow> rows = Rows(json::array({j}));
  ASSERT_EQ(rows.size(), 1u);
  SqueueContext ctx;
  ctx.now = kNow;
  const std::map<std::string, std::string> want = {{"a", "(null)"},
                                                   {"A", "19"},
                                                   {"b", "gres:gpu:2"},
                                                   {"B", "n/a"},
                                                   {"c", "2"},
                                                   {"C", "4"},
                                                   {"d", "0"},
                                                   {"D", "2"},
                                                   {"e", "N/A"},
                                                   {"E", "(null)"},
                                                   {"f", "(null)"},
                                                   {"F", "19"},
                                                   {"h", "OK"},
                                                   {"H", "*"},
                                                   {"i", "19"},
                                                   {"k", "hi"},
                                                   {"K", "N/A"},
                                                   {"l", "1-02:03:00"},
                                                   {"L", "1-02:03:00"},
                                                   {"m", "4G"},
                                                   {"M", "0:00"},
                                                   {"n", "bench[1-2]"},
                                                   {"N", ""},
                                                   {"O", "0"},
                                                   {"p", "0.00000000000000"},
                                                   {"P", "gpu"},
                                                   {"q", "(null)"},
                                                   {"Q", "0"},
                                                   {"r", "JobHeldUser"},
                                                   {"R", "(JobHeldUser)"},
                                                   {"s", ""},
                                                   {"S", "N/A"},
                                                   {"t", "PD"},
                                                   {"T", "PENDING"},
                                                   {"u", "alice"},
                                                   {"U", "1001"},
                                                   {"v", "(null)"},
                                                   {"V", "2027-01-15T07:50:00"},
                                                   {"w", "(null)"},
                                                   {"W", "(null)"},
                                                   {"x", "bench3"},
                                                   {"X", "N/A"},
                                                   {"y", "5"},
                                                   {"Y", "(null)"},
                                                   {"z", "*:*:*"},
                                                   {"Z", "/home/alice"}};
  for (const auto& [key, value] : want) {
    FormatField f;
    f.key = key;
    EXPECT_EQ(JobFieldValue(f, true, rows[0], ctx).text, value) << key;
  }
  FormatField pending_time;
  pending_time.key = "PendingTime";
  EXPECT_EQ(JobFieldValue(pending_time, false, rows[0], ctx).text, "600");
}

TEST(SqueueFields, RunningJobTimes) {
  UseUtc();
  json j = Running(50, {"n1"}, kNow - 100, {{"time_limit", 3600}});
  j["time_limit"] = 3600;
  std::vector<SqueueRow> rows = Rows(json::array({j}));
  SqueueContext ctx;
  ctx.now = kNow;
  auto value = [&](const char* key) {
    FormatField f;
    f.key = key;
    return JobFieldValue(f, true, rows[0], ctx).text;
  };
  EXPECT_EQ(value("S"), "2027-01-15T07:58:20");
  EXPECT_EQ(value("e"), "2027-01-15T08:58:20");
  EXPECT_EQ(value("L"), "58:20");
  EXPECT_EQ(value("B"), "n1");
  ctx.time_format = "%H:%M";  // SLURM_TIME_FORMAT, as squeue read it
  EXPECT_EQ(value("S"), "07:58");
  ctx.time_format = "standard";  // no '%': the default form
  EXPECT_EQ(value("S"), "2027-01-15T07:58:20");
}

TEST(SqueueRender, StartLayout) {
  UseUtc();
  json j = Pending(60, "Resources", 10);
  j["expected_start"] = kNow + 3600;
  j["sched_nodes"] = json::array({"gpu03", "gpu04"});
  json q = json::array({j, Pending(61, "Priority", 5)});
  SqueueFilter f;
  f.states = {core::JobState::kPending};
  EXPECT_EQ(Render(FilterRows(Rows(q), f), kSqueueStartFormat, "S"),
            "             JOBID PARTITION     NAME     USER ST          START_TIME  NODES "
            "SCHEDNODES           NODELIST(REASON)\n"
            "                61       gpu    train    alice PD                 N/A      1 "
            "(null)               (Priority)\n"
            "                60       gpu    train    alice PD 2027-01-15T09:00:00      1 "
            "gpu[03-04]           (Resources)\n");
}

TEST(SqueueJson, MainKeys) {
  std::vector<SqueueRow> rows = Rows(Queue());
  SqueueContext ctx;
  ctx.now = kNow;
  ctx.cluster = "c1";
  json out = SqueueJson(rows, ctx);
  ASSERT_TRUE(out.contains("jobs"));
  EXPECT_EQ(out["meta"]["Slurm"]["release"], "22.05.8");
  EXPECT_TRUE(out["errors"].empty());
  const json& first = out["jobs"][0];
  EXPECT_EQ(first["job_id"], 101);
  EXPECT_EQ(first["job_state"], "RUNNING");
  EXPECT_EQ(first["nodes"], "gpu[01-02]");
  EXPECT_EQ(first["user_name"], "alice");
  EXPECT_EQ(first["cluster"], "c1");
  EXPECT_EQ(first["time_limit"], nullptr);
  EXPECT_EQ(out["jobs"][1]["state_reason"], "Resources");
  EXPECT_EQ(out["jobs"][1]["array_task_id"], nullptr);
}

// ---- Command line

SqueueParse Parse(std::vector<std::string> args, std::map<std::string, std::string> env = {}) {
  args.insert(args.begin(), "squeue");
  return ParseSqueueArgs(
      args,
      [env](std::string_view name) -> std::optional<std::string> {
        auto it = env.find(std::string(name));
        if (it == env.end()) return std::nullopt;
        return it->second;
      },
      4242);
}

TEST(SqueueOptions, Defaults) {
  SqueueParse p = Parse({});
  EXPECT_FALSE(p.exit.done);
  EXPECT_EQ(p.options.format, kSqueueFormat);
  EXPECT_EQ(p.options.sort, "P,t,-p");
  p = Parse({"-l"});
  EXPECT_EQ(p.options.format, kSqueueLongFormat);
  EXPECT_TRUE(p.options.long_list);
  p = Parse({"--start"});
  EXPECT_EQ(p.options.format, kSqueueStartFormat);
  EXPECT_EQ(p.options.sort, "S");
  EXPECT_EQ(p.options.filter.states, std::vector<core::JobState>({core::JobState::kPending}));
  p = Parse({"-O", "jobid,name"});
  EXPECT_FALSE(p.options.percent_form);
  EXPECT_EQ(p.options.format, "jobid,name");
}

TEST(SqueueOptions, Filters) {
  SqueueParse p = Parse({"-u", "root,4243", "-A", "Phys", "-t", "pd,r", "-p", "gpu,cpu", "-wn[1-2]",
                         "-n", "a,b", "--jobs=5,6_1", "-r", "-h", "-S", "-i"});
  ASSERT_FALSE(p.exit.done) << p.exit.err;
  const SqueueFilter& f = p.options.filter;
  EXPECT_TRUE(f.users_given);
  EXPECT_EQ(f.uids, std::vector<uint32_t>({0, 4243}));
  EXPECT_EQ(f.accounts, std::vector<std::string>({"Phys"}));
  EXPECT_EQ(f.partitions, std::vector<std::string>({"gpu", "cpu"}));
  EXPECT_EQ(f.nodes, std::vector<std::string>({"n1", "n2"}));
  EXPECT_EQ(f.jobs, std::vector<JobIdFilter>({{5, -1}, {6, 1}}));
  EXPECT_EQ(f.states.size(), 2u);
  EXPECT_TRUE(p.options.array_tasks);
  EXPECT_TRUE(p.options.no_header);
  EXPECT_EQ(p.options.sort, "-i");
  // --me is the caller's uid; -j without a value takes the operand.
  p = Parse({"--me", "-j", "77"});
  EXPECT_EQ(p.options.filter.uids, std::vector<uint32_t>({4242}));
  EXPECT_EQ(p.options.filter.jobs, std::vector<JobIdFilter>({{77, -1}}));
}

// The controller parses squeue's options on several threads at once (POST /v1/views/squeue),
// and getopt's state is the process's: each parse must still see only its own arguments.
TEST(SqueueOptions, ParsesOnManyThreadsAtOnce) {
  const std::vector<std::vector<std::string>> lines = {
      {"squeue", "-u", "alice", "-t", "PD", "-o", "%i %j"},
      {"squeue", "-r", "-p", "gpu", "-S", "-i", "--noheader"},
      {"squeue", "-A", "ml,cv", "-n", "a,b,c", "-O", "JobID,Name"},
      {"squeue", "--start", "-j", "12,13_4"}};
  auto none = [](std::string_view) { return std::optional<std::string>(); };
  std::vector<SqueueOptions> expected;
  for (const auto& l : lines) expected.push_back(ParseSqueueArgs(l, none, 0).options);
  std::atomic<int> wrong{0};
  std::vector<std::thread> threads;
  for (size_t t = 0; t < 8; ++t) {
    threads.emplace_back([&, t] {
      for (int i = 0; i < 300; ++i) {
        const size_t k = (t + static_cast<size_t>(i)) % lines.size();
        const SqueueOptions o = ParseSqueueArgs(lines[k], none, 0).options;
        const SqueueOptions& e = expected[k];
        if (o.format != e.format || o.sort != e.sort || o.array_tasks != e.array_tasks ||
            o.no_header != e.no_header || o.filter.users != e.filter.users ||
            o.filter.partitions != e.filter.partitions || o.filter.names != e.filter.names ||
            o.filter.accounts != e.filter.accounts || o.filter.jobs != e.filter.jobs ||
            o.filter.states != e.filter.states) {
          ++wrong;
        }
      }
    });
  }
  for (std::thread& th : threads) th.join();
  EXPECT_EQ(wrong.load(), 0);
}

TEST(SqueueOptions, Environment) {
  SqueueParse p = Parse({}, {{"SQUEUE_FORMAT", "%i %j"},
                             {"SQUEUE_SORT", "-i"},
                             {"SQUEUE_STATES", "all"},
                             {"SQUEUE_ARRAY", "1"}});
  EXPECT_EQ(p.options.format, "%i %j");
  EXPECT_EQ(p.options.sort, "-i");
  EXPECT_EQ(p.options.filter.states.size(), static_cast<size_t>(core::kNumJobStates));
  EXPECT_TRUE(p.options.array_tasks);
  // -l and -o override SQUEUE_FORMAT; options override the rest.
  p = Parse({"-l", "-t", "R"}, {{"SQUEUE_FORMAT", "%i"}, {"SQUEUE_STATES", "PD"}});
  EXPECT_EQ(p.options.format, kSqueueLongFormat);
  EXPECT_EQ(p.options.filter.states, std::vector<core::JobState>({core::JobState::kRunning}));
}

TEST(SqueueOptions, Errors) {
  struct Case {
    std::vector<std::string> args;
    std::string err;
  };
  const Case cases[] = {
      {{"-o", "%i", "-l"},
       "squeue: fatal: Options -o(--format) and -l(--long) are mutually exclusive. Please "
       "remove one and retry.\n"},
      {{"-O", "jobid", "-o", "%i"},
       "squeue: error: -o (--format) is incompatible with -O (--Format)\n"},
      {{"-o", "%i", "-O", "jobid"},
       "squeue: error: -O (--Format) is incompatible with -o (--format)\n"},
      {{"-j", "abc"}, "squeue: error: Invalid job id: abc\n"},
      {{"-i", "0"}, "squeue: error: --iterate=0\n\n"},
      {{"--bogus"}, "Try \"squeue --help\" for more information\n"},
  };
  for (const Case& c : cases) {
    SqueueParse p = Parse(c.args);
    EXPECT_TRUE(p.exit.done);
    EXPECT_EQ(p.exit.exit_code, 1);
    EXPECT_EQ(p.exit.err, c.err);
  }
  SqueueParse p = Parse({"-t", "foo"});
  EXPECT_EQ(p.exit.exit_code, 1);
  EXPECT_EQ(p.exit.err.rfind(
                "squeue: error: Invalid job state specified: foo\nsqueue: error: Valid job", 0),
            0u);
  p = Parse({"extra"});
  EXPECT_EQ(p.exit.err, "squeue: error: Unrecognized option: extra\n");
  p = Parse({"-u", "no-such-user-xyz"});
  EXPECT_FALSE(p.exit.done);
  EXPECT_EQ(p.warnings, "squeue: error: Invalid user: no-such-user-xyz\n\n");
  EXPECT_TRUE(p.options.filter.users_given);
  EXPECT_TRUE(p.options.filter.uids.empty());
  p = Parse({"--help"});
  EXPECT_EQ(p.exit.exit_code, 0);
  EXPECT_EQ(p.exit.out.substr(0, 22), "Usage: squeue [OPTIONS");
}

}  // namespace
}  // namespace berth::slurm

namespace berth::slurm {
namespace {

json StepOf(uint32_t id, const std::string& name, const std::string& state, Time start,
            int32_t ntasks, const std::string& nodes) {
  api::StepRecord s;
  s.id = id;
  s.name = name;
  s.state = state;
  s.start = start;
  if (state != "RUNNING") s.end = start + 5;
  s.ntasks = ntasks;
  s.nodes = nodes;
  return api::EncodeStepRecord(s);
}

// squeue -s: each running job's batch step, then its steps that still run (an ended step is
// gone), with Slurm's default step layout.
TEST(SqueueSteps, RunningStepsOfRunningJobs) {
  UseUtc();
  json q = Queue();
  q[0]["steps"] = {StepOf(0, "hostname", "COMPLETED", kNow - 3700, 2, "gpu[01-02]"),
                   StepOf(1, "python3", "RUNNING", kNow - 3600, 8, "gpu[01-02]")};
  SqueueFilter none;
  const std::vector<SqueueStepRow> rows = SqueueStepRows(q, kNow, none, {});
  EXPECT_EQ(RenderSqueueSteps(ParsePercentFormat(kSqueueStepFormat), rows, false, kNow),
            "         STEPID     NAME PARTITION     USER      TIME NODELIST\n"
            "      101.batch    batch       gpu    alice   1:02:05 gpu01\n"
            "          101.1  python3       gpu    alice   1:00:00 gpu[01-02]\n"
            "      105.batch    batch       cpu      bob      0:59 cpu1\n");
  // -s LIST, -u, -o with the other letters and an unknown one (printed as written).
  SqueueFilter bob;
  bob.users_given = true;
  bob.users = {"bob"};
  EXPECT_EQ(SqueueStepRows(q, kNow, bob, {}).size(), 1u);
  const std::vector<SqueueStepRow> one = SqueueStepRows(q, kNow, none, {"101.1"});
  ASSERT_EQ(one.size(), 1u);
  OutputFormat f = ParsePercentFormat("%i|%A|%l|%S|%Z");
  EXPECT_EQ(ReplaceUnknownFields(f, true, [](std::string_view k) { return IsStepLetter(k); }),
            std::vector<std::string>{"Z"});
  EXPECT_EQ(RenderSqueueSteps(f, one, true, kNow), "101.1|8|UNLIMITED|2027-01-15T07:00:00|%Z\n");
}

TEST(SqueueSteps, TheStepsOptionAndItsLayouts) {
  auto parse = [](std::vector<std::string> args) {
    args.insert(args.begin(), "squeue");
    return ParseSqueueArgs(
        args, [](std::string_view) -> std::optional<std::string> { return std::nullopt; }, 0);
  };
  SqueueParse p = parse({"-s"});
  ASSERT_FALSE(p.exit.done) << p.exit.err;
  EXPECT_TRUE(p.options.steps);
  EXPECT_TRUE(p.options.step_ids.empty());
  EXPECT_EQ(p.options.format, kSqueueStepFormat);
  p = parse({"--steps=12.0,13.batch", "-l"});
  ASSERT_FALSE(p.exit.done) << p.exit.err;
  EXPECT_EQ(p.options.step_ids, (std::vector<std::string>{"12.0", "13.batch"}));
  EXPECT_EQ(p.options.format, kSqueueStepLongFormat);
  p = parse({"-s", "-o", "%i %N"});
  EXPECT_EQ(p.options.format, "%i %N");
}

}  // namespace
}  // namespace berth::slurm
