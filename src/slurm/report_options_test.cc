#include "slurm/report_options.h"

#include <gtest/gtest.h>

#include "slurm/usage_test_util.h"

namespace berth::slurm {
namespace {

constexpr Time kNow = 1709287200;  // 2024-03-01T10:00:00Z

ReportParse Parse(std::vector<std::string> args) {
  args.insert(args.begin(), "report");
  return ParseReportArgs(args, kNow);
}

TEST(ReportOptionsTest, Defaults) {
  const ReportParse p = Parse({"usage"});
  ASSERT_FALSE(p.exit.done) << p.exit.err;
  EXPECT_EQ(p.options.kind, ReportKind::kUsage);
  EXPECT_EQ(p.options.end, kNow);
  EXPECT_EQ(p.options.start, kNow - 30 * 86400);
  EXPECT_EQ(p.options.format, ReportFormat::kTable);
  EXPECT_EQ(p.options.top, 10);
  EXPECT_FALSE(p.options.noheader);
  const ReportParse a = Parse({"advice"});
  ASSERT_FALSE(a.exit.done);
  EXPECT_EQ(a.options.kind, ReportKind::kAdvice);
  EXPECT_EQ(a.options.user, "");
  EXPECT_EQ(a.options.last, 0);
}

TEST(ReportOptionsTest, UsageOptions) {
  UtcZone utc;
  const ReportParse p = Parse({"usage", "-S", "2024-02-01", "--endtime=2024-02-02T12:00", "-u",
                               "bob,carol", "-A", "Chem", "--top", "3", "-P", "-n", "-a"});
  ASSERT_FALSE(p.exit.done) << p.exit.err;
  EXPECT_EQ(p.options.start, 1706745600);            // 2024-02-01T00:00:00Z
  EXPECT_EQ(p.options.end, 1706745600 + 36 * 3600);  // 2024-02-02T12:00:00Z
  EXPECT_EQ(p.options.users, (std::vector<std::string>{"bob", "carol"}));
  EXPECT_EQ(p.options.accounts, (std::vector<std::string>{"chem"}));  // as Slurm stores it
  EXPECT_EQ(p.options.top, 3);
  EXPECT_EQ(p.options.format, ReportFormat::kParsable);
  EXPECT_TRUE(p.options.noheader);
  EXPECT_TRUE(p.options.all_users);
  // -E alone: the 30 days before it; --format in any case; -P does not override json.
  const ReportParse e = Parse({"usage", "-E", "now-1day", "--format", "CSV"});
  EXPECT_EQ(e.options.start, kNow - 31 * 86400);
  EXPECT_EQ(e.options.format, ReportFormat::kCsv);
  EXPECT_EQ(Parse({"usage", "--format=json", "-P"}).options.format, ReportFormat::kJson);
}

TEST(ReportOptionsTest, AdviceOptions) {
  const ReportParse p = Parse({"advice", "-S", "now-7days", "bob", "--last=40"});
  ASSERT_FALSE(p.exit.done) << p.exit.err;
  EXPECT_EQ(p.options.user, "bob");
  EXPECT_EQ(p.options.start, kNow - 7 * 86400);
  EXPECT_EQ(p.options.last, 40);
}

TEST(ReportOptionsTest, Errors) {
  struct Case {
    std::vector<std::string> args;
    int code;
    std::string err;
  };
  const Case cases[] = {
      {{"usage", "-S", "yesterdayish"},
       1,
       "berth report: error: invalid time for -S: 'yesterdayish' (try now-7days, 2024-03-01 or "
       "2024-03-01T10:00)\n"},
      {{"advice", "-E", "13/45"},
       1,
       "berth report: error: invalid time for -E: '13/45' (try now-7days, 2024-03-01 or "
       "2024-03-01T10:00)\n"},
      {{"usage", "--format", "xml"},
       1,
       "berth report: error: unknown format 'xml' (table, csv or json)\n"},
      {{"usage", "--top", "-1"},
       1,
       "berth report: error: --top needs a whole number >= 0, not '-1'\n"},
      {{"advice", "--last", "many"},
       1,
       "berth report: error: --last needs a whole number >= 0, not 'many'\n"},
      {{"usage", "-S", "now", "-E", "now-1hour"},
       1,
       "berth report: error: the period is empty: -S 2024-03-01T10:00:00 is not before -E "
       "2024-03-01T09:00:00\n"},
      {{"usage", "alice"}, 2, "berth report: error: unexpected argument 'alice'\n"},
      {{"advice", "alice", "bob"}, 2, "berth report: error: give one USER at most, not 'bob'\n"},
      {{"frobnicate"}, 2, "berth report: error: unknown report 'frobnicate' (usage or advice)\n"},
      // getopt's own message goes to stderr directly; ours follows it.
      {{"usage", "--bogus"}, 2, "Try `berth report usage --help` for the options.\n"},
  };
  UtcZone utc;
  for (const Case& c : cases) {
    const ReportParse p = Parse(c.args);
    EXPECT_TRUE(p.exit.done) << c.args.back();
    EXPECT_EQ(p.exit.exit_code, c.code) << c.args.back();
    EXPECT_EQ(p.exit.err, c.err);
  }
}

TEST(ReportOptionsTest, Help) {
  for (const std::vector<std::string>& args :
       {std::vector<std::string>{"--help"}, {"usage", "--help"}, {"advice", "-h"}}) {
    const ReportParse p = Parse(args);
    EXPECT_TRUE(p.exit.done);
    EXPECT_EQ(p.exit.exit_code, 0);
    EXPECT_EQ(p.exit.out.rfind("Usage: berth report ", 0), 0u) << p.exit.out;
  }
  const ReportParse none = Parse({});
  EXPECT_EQ(none.exit.exit_code, 2);
  EXPECT_EQ(none.exit.err, ReportHelp());
}

}  // namespace
}  // namespace berth::slurm
