#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "slurm/scontrol.h"

namespace berth::slurm {
namespace {

ScontrolParse Parse(std::vector<std::string> args) {
  args.insert(args.begin(), "scontrol");
  return ParseScontrolArgs(args);
}

TEST(ScontrolArgsTest, OptionsBeforeTheCommand) {
  ScontrolParse p = Parse({"-o", "-d", "-Q", "show", "job", "12"});
  ASSERT_FALSE(p.done);
  EXPECT_TRUE(p.options.one_liner);
  EXPECT_TRUE(p.options.details);
  EXPECT_TRUE(p.options.quiet);
  EXPECT_EQ(p.words, (std::vector<std::string>{"show", "job", "12"}));
}

TEST(ScontrolArgsTest, LongOptionsAndIgnoredOnes) {
  ScontrolParse p = Parse({"--oneliner", "--details", "--quiet", "-a", "-v", "--all", "show"});
  ASSERT_FALSE(p.done);
  EXPECT_TRUE(p.options.one_liner);
  EXPECT_TRUE(p.options.details);
  EXPECT_TRUE(p.options.quiet);
  EXPECT_EQ(p.words, (std::vector<std::string>{"show"}));
}

TEST(ScontrolArgsTest, OptionsAnywhereAmongTheWords) {
  // As getopt permutes them in Slurm's scontrol; "TimeLimit=-30" is a word, not an option.
  ScontrolParse p = Parse({"update", "JobId=7", "TimeLimit=-30", "-Q"});
  ASSERT_FALSE(p.done);
  EXPECT_TRUE(p.options.quiet);
  EXPECT_EQ(p.words, (std::vector<std::string>{"update", "JobId=7", "TimeLimit=-30"}));
  // What workflow engines run (Snakemake, Nextflow): -dd after the job id's keyword.
  p = Parse({"show", "jobid", "-dd", "12"});
  ASSERT_FALSE(p.done) << p.err;
  EXPECT_TRUE(p.options.details);
  EXPECT_EQ(p.words, (std::vector<std::string>{"show", "jobid", "12"}));
  p = Parse({"show", "job", "12", "--oneliner"});
  EXPECT_TRUE(p.options.one_liner);
  EXPECT_EQ(p.words, (std::vector<std::string>{"show", "job", "12"}));
}

TEST(ScontrolArgsTest, FlagWordsAmongTheCommandWords) {
  ScontrolParse p = Parse({"show", "-o", "job", "details", "--details", "oneliner"});
  ASSERT_FALSE(p.done);
  EXPECT_TRUE(p.options.one_liner);
  EXPECT_TRUE(p.options.details);
  EXPECT_EQ(p.words, (std::vector<std::string>{"show", "job"}));
}

TEST(ScontrolArgsTest, HelpUsageAndVersionPrintToStdout) {
  for (const char* flag : {"-h", "--help", "--usage"}) {
    ScontrolParse p = Parse({flag, "show"});
    EXPECT_TRUE(p.done) << flag;
    EXPECT_EQ(p.exit_code, 0) << flag;
    EXPECT_EQ(p.out, ScontrolUsage()) << flag;
    EXPECT_EQ(p.err, "") << flag;
  }
  EXPECT_EQ(ScontrolUsage().rfind("Usage: scontrol [<OPTION>] [<COMMAND>]\n", 0), 0u);
  for (const char* flag : {"-V", "--version"}) {
    ScontrolParse p = Parse({flag});
    EXPECT_TRUE(p.done) << flag;
    EXPECT_EQ(p.exit_code, 0) << flag;
    EXPECT_EQ(p.out, "slurm 22.05.8 (berth)\n") << flag;
  }
}

TEST(ScontrolArgsTest, UnknownOptionIsScontrolsOwnMessage) {
  ScontrolParse p = Parse({"--bogus", "show"});
  EXPECT_TRUE(p.done);
  EXPECT_EQ(p.exit_code, 1);
  EXPECT_EQ(p.out, "");
  EXPECT_EQ(p.err,
            "scontrol: unrecognized option '--bogus'\n"
            "Try \"scontrol --help\" for more information\n");
  p = Parse({"-dx", "show"});
  EXPECT_EQ(p.err,
            "scontrol: unrecognized option '-dx'\n"
            "Try \"scontrol --help\" for more information\n");
}

TEST(ScontrolArgsTest, NoCommandPrintsTheUsageToStderr) {
  for (std::vector<std::string> args : {std::vector<std::string>{}, {"-o"}, {"details"}}) {
    ScontrolParse p = Parse(args);
    EXPECT_TRUE(p.done);
    EXPECT_EQ(p.exit_code, 1);
    EXPECT_EQ(p.out, "");
    EXPECT_EQ(p.err, ScontrolUsage());
  }
}

}  // namespace
}  // namespace berth::slurm
