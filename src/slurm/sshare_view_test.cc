#include "slurm/sshare_view.h"

#include <gtest/gtest.h>

#include <cmath>
#include <nlohmann/json.hpp>

namespace berth::slurm {
namespace {

using nlohmann::json;

// GET /v1/fairshare as the controller answers (src/controller/controller_queries.cc):
// root -> a {alice, bob}, b {carol} -> b1 (sub-account of b) {dave}.
json Fairshare(const char* algorithm = "fair_tree") {
  auto row = [](int id, const char* account, const char* parent, const char* user, json shares,
                double ns, double ru, double eu, json fs, json lfs) {
    json r = {{"id", id},
              {"depth", 0},
              {"account", account},
              {"parent", parent},
              {"raw_shares", shares},
              {"norm_shares", ns},
              {"raw_usage", ru},
              {"norm_usage", ru / 1000},
              {"effective_usage", eu},
              {"fairshare", fs},
              {"level_fs", lfs}};
    if (*user) r["user"] = user;
    return r;
  };
  return {{"cluster", "berth"},
          {"algorithm", algorithm},
          {"rows",
           {row(1, "root", "", "", nullptr, 0, 1000, 1, nullptr, 0),
            row(2, "a", "root", "", 2, 0.666667, 900, 0.9, nullptr, 0.740741),
            row(3, "a", "a", "alice", 1, 0.5, 800.6, 0.888889, 0.5, 0.5625),
            row(4, "a", "a", "bob", 1, 0.5, 100, 0.111111, 0.75, 4.5),
            row(5, "b", "root", "", 1, 0.333333, 100, 0.1, nullptr, 3.33333),
            row(6, "b", "b", "carol", 1, 0.5, 0, 0, 1.0, "inf"),
            row(7, "b1", "b", "", 1, 0.5, 100, 1, nullptr, 0.5),
            row(8, "b1", "b1", "dave", 1, 1, 100, 1, 0.25, 1)}}};
}

SshareData Data(const char* algorithm = "fair_tree") {
  Result<SshareData> d = SshareDataFromJson(Fairshare(algorithm));
  EXPECT_TRUE(d.ok()) << d.status().ToString();
  return d.ok() ? *d : SshareData{};
}

SshareParse Parse(std::vector<std::string> args, const std::string& caller = "alice") {
  args.insert(args.begin(), "sshare");
  return ParseSshareArgs(args, caller);
}

std::string Render(const std::vector<std::string>& args, const char* algorithm = "fair_tree") {
  SshareParse p = Parse(args);
  EXPECT_FALSE(p.exit.done) << p.exit.err;
  SshareData d = Data(algorithm);
  Result<std::vector<SshareField>> f = SshareFields(p.options, d.fair_tree);
  EXPECT_TRUE(f.ok()) << f.status().ToString();
  return f.ok() ? RenderSshare(p.options, *f, d) : "";
}

// The default: every account, the caller's own user rows; the tree indented one space a level.
TEST(SshareViewTest, DefaultLayout) {
  EXPECT_EQ(Render({}),
            "Account                    User  RawShares  NormShares    RawUsage  EffectvUsage  "
            "FairShare \n"
            "-------------------- ---------- ---------- ----------- ----------- ------------- "
            "---------- \n"
            "root                                          0.000000        1000      1.000000  "
            "          \n"
            " a                                       2    0.666667         900      0.900000  "
            "          \n"
            "  a                       alice          1    0.500000         800      0.888889  "
            " 0.500000 \n"
            " b                                       1    0.333333         100      0.100000  "
            "          \n"
            "  b1                                     1    0.500000         100      1.000000  "
            "          \n");
}

TEST(SshareViewTest, AllUsersInTreeOrder) {
  std::string out = Render({"-a", "-P", "-n", "-o", "Account,User"});
  EXPECT_EQ(out, "root|\n a|\n  a|alice\n  a|bob\n b|\n  b|carol\n  b1|\n   b1|dave\n");
}

TEST(SshareViewTest, ParsableWithAndWithoutTrailingBar) {
  EXPECT_EQ(Render({"-P", "-o", "Account,RawShares,FairShare", "-u", "bob"}),
            "Account|RawShares|FairShare\nroot||\n a|2|\n  a|1|0.750000\n b|1|\n  b1|1|\n");
  EXPECT_EQ(Render({"-p", "-n", "-U", "-u", "bob", "-o", "User,RawUsage"}), "bob|100|\n");
}

TEST(SshareViewTest, LongAddsNormUsageLevelFsAndTres) {
  std::string out = Render({"-l", "-P", "-u", "carol"});
  EXPECT_EQ(out.substr(0, out.find('\n')),
            "Account|User|RawShares|NormShares|RawUsage|NormUsage|EffectvUsage|FairShare|LevelFS|"
            "GrpTRESMins|TRESRunMins");
  EXPECT_NE(out.find("\n  b|carol|1|0.500000|0|0.000000|0.000000|1.000000|inf||\n"),
            std::string::npos)
      << out;
  // Classic: no LevelFS column by default.
  std::string classic = Render({"-l", "-P", "-n", "-U", "-u", "carol"}, "classic");
  EXPECT_EQ(classic, "b|carol|1|0.500000|0|0.000000|0.000000|1.000000||\n");
}

TEST(SshareViewTest, FormatPrefixesWidthsAndAccumulates) {
  // "A" is Account, "Eff" EffectvUsage, "%5" a width (positive: right-justified, as Slurm);
  // -o twice appends.
  EXPECT_EQ(Render({"-n", "-U", "-o", "A%5,Eff", "-o", "ID", "-u", "dave"}),
            "   b1      1.000000      8 \n");
  EXPECT_EQ(Render({"-n", "-U", "-o", "A%-5,User", "-u", "dave"}), "b1          dave \n");
  SshareParse p = Parse({"-o", "Account,Bogus"});
  Result<std::vector<SshareField>> f = SshareFields(p.options, true);
  ASSERT_FALSE(f.ok());
  EXPECT_EQ(f.status().message(), "Invalid field requested: \"Bogus\"");
}

TEST(SshareViewTest, AccountsFilterRestartsTheIndentation) {
  // b's parent (root) is not printed: b starts at column 0, its users one space in.
  EXPECT_EQ(Render({"-a", "-A", "B", "-P", "-n", "-o", "Account,User"}), "b|\n b|carol\n");
  EXPECT_EQ(Render({"-a", "-A", "b,b1", "-P", "-n", "-o", "Account,User"}),
            "b|\n b|carol\n b1|\n  b1|dave\n");
}

TEST(SshareViewTest, TextIsCutWithAPlus) {
  EXPECT_EQ(Render({"-n", "-U", "-u", "alice", "-o", "User%3,Cluster%4"}), "al+ ber+ \n");
}

TEST(SshareViewTest, DoublesTooWideTurnExponential) {
  EXPECT_EQ(SshareDouble(0.5, 10), "  0.500000");
  EXPECT_EQ(SshareDouble(0.5, -10), "0.500000  ");
  EXPECT_EQ(SshareDouble(12345678.123, 11), "1.23457e+07");
  EXPECT_EQ(SshareDouble(HUGE_VAL, 10), "       inf");
}

TEST(SshareViewTest, Options) {
  SshareParse p = Parse({"-u", "-1"});
  EXPECT_TRUE(p.options.all_users);
  EXPECT_TRUE(p.options.users.empty());
  p = Parse({"-u", "x,y,x"});
  EXPECT_EQ(p.options.users, (std::vector<std::string>{"x", "y"}));
  p = Parse({}, "");  // a caller without a name sees everyone
  EXPECT_TRUE(p.options.users.empty());
  p = Parse({"--usage"});
  EXPECT_TRUE(p.exit.done);
  EXPECT_EQ(p.exit.exit_code, 0);
  EXPECT_NE(p.exit.out.find("-U or --Users"), std::string::npos);
  p = Parse({"-V"});
  EXPECT_EQ(p.exit.out, "slurm 22.05.8 (berth)\n");
  p = Parse({"--bogus"});
  EXPECT_EQ(p.exit.exit_code, 1);
  EXPECT_EQ(p.exit.err, "Try \"sshare --help\" for more information\n");
  p = Parse({"--helpformat"});
  EXPECT_EQ(p.exit.out.substr(0, p.exit.out.find('\n')),
            "Account           Cluster           EffectvUsage      FairShare        ");
}

TEST(SshareViewTest, BadAnswers) {
  EXPECT_FALSE(SshareDataFromJson(json::object()).ok());
  EXPECT_FALSE(SshareDataFromJson(json{{"rows", {1}}}).ok());
  EXPECT_FALSE(SshareDataFromJson(json{{"rows", {{{"account", "x"}}}}}).ok());
}

}  // namespace
}  // namespace berth::slurm
