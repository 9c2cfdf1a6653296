#include "slurm/sprio_view.h"

#include <gtest/gtest.h>

#include <map>
#include <nlohmann/json.hpp>

namespace berth::slurm {
namespace {

using nlohmann::json;

// GET /v1/priorities as the controller answers (src/controller/controller_queries.cc).
json Priorities() {
  auto job = [](int id, const char* user, const char* part, int64_t prio, double age, double fs,
                double js, int nice) {
    return json{{"id", id},
                {"user", user},
                {"account", "default"},
                {"partition", part},
                {"qos", "normal"},
                {"priority", prio},
                {"nice", nice},
                {"admin_set", false},
                {"factors",
                 {{"age", age},
                  {"fairshare", fs},
                  {"jobsize", js},
                  {"partition", 1000.0},
                  {"qos", 0.0},
                  {"assoc", 0},
                  {"site", 0},
                  {"tres", 0.0}}},
                {"normalized",
                 {{"age", age / 1000},
                  {"fairshare", fs / 10000},
                  {"jobsize", js / 1000},
                  {"partition", 1.0},
                  {"qos", 0.0},
                  {"assoc", 0},
                  {"site", 0}}}};
  };
  return {{"weights",
           {{"age", 1000},
            {"fairshare", 10000},
            {"jobsize", 1000},
            {"partition", 1000},
            {"qos", 1000},
            {"assoc", 0},
            {"site", 0},
            {"tres", json::object()}}},
          {"jobs",
           {job(12, "bob", "gpu", 7500, 500.4, 5000, 1000, 0),
            job(3, "alice", "main", 12000, 3.3, 10000, 1000, -10)}}};
}

std::string Sprio(std::vector<std::string> args, const json& body = Priorities()) {
  args.insert(args.begin(), "sprio");
  SprioParse p = ParseSprioArgs(args, [](std::string_view) { return std::nullopt; });
  EXPECT_FALSE(p.exit.done) << p.exit.err;
  Result<SprioData> d = SprioDataFromJson(body);
  EXPECT_TRUE(d.ok());
  std::string format =
      p.options.format.empty() ? SprioDefaultFormat(p.options, *d) : p.options.format;
  return RenderSprio(p.options, ParsePercentFormat(format), *d);
}

TEST(SprioRender, DefaultColumnsFollowTheWeights) {
  EXPECT_EQ(
      Sprio({}),
      "          JOBID PARTITION   PRIORITY       SITE        AGE  FAIRSHARE    JOBSIZE  "
      "PARTITION        QOS\n"
      "              3 main           12000          0          3      10000       1000       "
      "1000          0\n"
      "             12 gpu             7500          0        500       5000       1000       "
      "1000          0\n");
  // No weight for QOS and job size: no such columns.
  json body = Priorities();
  body["weights"]["qos"] = 0;
  body["weights"]["jobsize"] = 0;
  EXPECT_EQ(Sprio({"-h", "-j", "3"}, body),
            "              3 main           12000          0          3      10000       1000\n");
}

TEST(SprioRender, UsersLongNormalizedAndWeights) {
  EXPECT_EQ(Sprio({"-u", "alice"}),
            "          JOBID PARTITION     USER   PRIORITY       SITE        AGE  FAIRSHARE    "
            "JOBSIZE  PARTITION        QOS\n"
            "              3 main         alice      12000          0          3      10000       "
            "1000       1000          0\n");
  EXPECT_EQ(Sprio({"-l", "-j3"}),
            "          JOBID PARTITION     USER   PRIORITY       SITE        AGE      ASSOC  "
            "FAIRSHARE    JOBSIZE  PARTITION        QOS        NICE                 TRES\n"
            "              3 main         alice      12000          0          3          0      "
            "10000       1000       1000          0         -10                     \n");
  EXPECT_EQ(Sprio({"-n", "-j", "12"}),
            "          JOBID PARTITION PRIORITY   AGE        FAIRSHARE  JOBSIZE    PARTITION  QOS  "
            "     \n"
            "             12 gpu       0.00000174 0.5004000  0.5000000  1.0000000  1.0000000  "
            "0.0000000 \n");
  EXPECT_EQ(
      Sprio({"-w"}),
      "          JOBID PARTITION   PRIORITY       SITE        AGE  FAIRSHARE    JOBSIZE  "
      "PARTITION        QOS\n"
      "        Weights                               1       1000      10000       1000       "
      "1000       1000\n");
}

TEST(SprioRender, FiltersSortAndMessages) {
  EXPECT_EQ(Sprio({"-h", "-o", "%i %u %Y", "-S", "y"}), "12 bob 7500\n3 alice 12000\n");
  EXPECT_EQ(Sprio({"-h", "-o", "%i %u %Y", "-S", "-Y"}), "3 alice 12000\n12 bob 7500\n");
  EXPECT_EQ(Sprio({"-h", "-o", "%i", "-p", "gpu"}), "12\n");
  EXPECT_EQ(Sprio({"-j", "99"}), "Unable to find jobs matching user/id(s) specified\n");
  EXPECT_EQ(Sprio({"-h", "-o", "%i|%N|%r", "-u", "nobody-such"}), "");
}

TEST(SprioOptions, ParseAndErrors) {
  auto parse = [](std::vector<std::string> args) {
    args.insert(args.begin(), "sprio");
    return ParseSprioArgs(args, [](std::string_view n) -> std::optional<std::string> {
      if (n == "SPRIO_FORMAT") return std::string("%i");
      return std::nullopt;
    });
  };
  SprioParse p = parse({"--jobs=1,2", "-u", "0"});
  EXPECT_EQ(p.options.jobs, std::vector<uint32_t>({1, 2}));
  EXPECT_EQ(p.options.uids, std::vector<uint32_t>({0}));
  EXPECT_EQ(p.options.format, "%i");
  p = parse({"-j", "x"});
  EXPECT_EQ(p.exit.exit_code, 1);
  EXPECT_EQ(p.exit.err, "sprio: error: Invalid job id: x\n");
  p = parse({"--bogus"});
  EXPECT_EQ(p.exit.exit_code, 1);
  EXPECT_TRUE(CheckSprioSortKeys(ParseSortList("-y,i")).ok());
  EXPECT_EQ(CheckSprioSortKeys(ParseSortList("z")).message(), "Invalid sort specification: z");
}

TEST(SprioData, BasicPriorityIsRefusedAndTresShown) {
  json body = Priorities();
  body["priority_type"] = "priority/basic";
  Result<SprioData> d = SprioDataFromJson(body);
  ASSERT_TRUE(d.ok());
  EXPECT_FALSE(d->multifactor);
  EXPECT_FALSE(SprioDataFromJson(json::object()).ok());
  body = Priorities();
  body["weights"]["tres"] = {{"gres/gpu", 2000}};
  body["jobs"][1]["factors"]["tres"] = 500.0;
  EXPECT_EQ(
      Sprio({"-h", "-j3"}, body),
      "              3 main           12000          0          3      10000       1000       "
      "1000          0         gres/gpu=500\n");
  EXPECT_EQ(Sprio({"-h", "-j3", "-o", "%t"}, body), "gres/gpu=0.25\n");
}

}  // namespace
}  // namespace berth::slurm
