#include "slurm/batch_script.h"

#include <gtest/gtest.h>

namespace berth::slurm {
namespace {

using Words = std::vector<std::string>;

// Each case's words and behaviour were checked against sbatch 22.05.8.
TEST(BatchScriptTest, DirectiveWords) {
  struct Case {
    std::string script;
    Words words;
  };
  const Case cases[] = {
      {"#!/bin/sh\n#SBATCH -N 2\n#SBATCH --time=10\necho\n", {"-N", "2", "--time=10"}},
      // Several per line; tabs; no space after the magic word.
      {"#!/bin/sh\n#SBATCH --nodes 2 --ntasks 4\n#SBATCH\t-p\tshort\n#SBATCH--mem=1\n",
       {"--nodes", "2", "--ntasks", "4", "-p", "short", "--mem=1"}},
      // Read until the first line that is neither blank nor a comment.
      {"#!/bin/sh\n\n# comment\n  #SBATCH -J indented\n#sbatch -J lower\n#SBATCH -p a\nhostname\n"
       "#SBATCH -p b\n",
       {"-p", "a"}},
      {"#!/bin/sh\n   \t\n#SBATCH -J x\n  echo\n#SBATCH -J y\n", {"-J", "x"}},
      // Comments after an unquoted '#', even inside a word; a backslash escapes one character.
      {"#!/bin/sh\n#SBATCH -J x # -p short\n#SBATCH --output=foo#bar\n",
       {"-J", "x", "--output=foo"}},
      {"#!/bin/sh\n#SBATCH -J \\#hash\n", {"-J", "#hash"}},
      {"#!/bin/sh\n#SBATCH -N 1 ##nodes\n", {"-N", "1"}},
      // Quotes group and disappear; adjacent quoted parts join.
      {"#!/bin/sh\n#SBATCH -J \"a b\" # comment\n", {"-J", "a b"}},
      {"#!/bin/sh\n#SBATCH --comment=\"hello world\"\n", {"--comment=hello world"}},
      {"#!/bin/sh\n#SBATCH -J 'it''s'\n", {"-J", "its"}},
      {"#!/bin/sh\n#SBATCH -p \"short\"  \"#notcomment\"\n", {"-p", "short", "#notcomment"}},
      // A backslash does not keep a blank inside a word.
      {"#!/bin/sh\n#SBATCH --job-name=x\\ y\n", {"--job-name=x", "y"}},
      // An empty word ends the line's words.
      {"#!/bin/sh\n#SBATCH -J \"\" -p short\n#SBATCH -t 5\n", {"-J", "-t", "5"}},
      // A value may come from the next directive.
      {"#!/bin/sh\n#SBATCH -t\n#SBATCH 10\n", {"-t", "10"}},
      {"#!/bin/sh\n#SBATCH\n#SBATCH -J a -J b\n", {"-J", "a", "-J", "b"}},
      {"#!/bin/sh\n#SBATCH -J x\r\n", {"-J", "x"}},
      {"#!/bin/sh\n#SBATCH --job-name=myhetjob\n", {"--job-name=myhetjob"}},
  };
  for (const Case& c : cases) {
    auto [d, fail] = ReadDirectives(c.script, "job.sh", "sbatch");
    EXPECT_FALSE(fail.has_value()) << c.script;
    EXPECT_EQ(d.words, c.words) << c.script;
    EXPECT_TRUE(d.warnings.empty()) << c.script;
    EXPECT_FALSE(d.heterogeneous) << c.script;
  }
}

TEST(BatchScriptTest, LegacySlurmDirectivesWarnOnce) {
  auto [d, fail] = ReadDirectives("#!/bin/sh\n#SLURM -J a\n#SLURM -p b\n", "job.sh", "sbatch");
  EXPECT_FALSE(fail.has_value());
  EXPECT_EQ(d.words, (Words{"-J", "a", "-p", "b"}));
  EXPECT_EQ(d.warnings, Words{"sbatch: error: Change from #SLURM to #SBATCH in your script and "
                              "verify the options are valid in sbatch\n"});
}

TEST(BatchScriptTest, HeterogeneousSeparator) {
  auto [d, fail] =
      ReadDirectives("#!/bin/sh\n#SBATCH -J a\n#SBATCH hetjob\n#SBATCH -J b\n", "job.sh", "sbatch");
  EXPECT_FALSE(fail.has_value());
  EXPECT_TRUE(d.heterogeneous);
  EXPECT_EQ(d.words, (Words{"-J", "a"}));
  EXPECT_TRUE(ReadDirectives("#!/bin/sh\n#SBATCH  PackJob\n", "j", "sbatch").first.heterogeneous);
}

TEST(BatchScriptTest, FatalDirectives) {
  struct Case {
    std::string script, file, text;
  };
  const Case cases[] = {
      {"#!/bin/sh\n#SBATCH: -N 2\n", "a3.sh",
       "sbatch: fatal: a3.sh: line 2: Unexpected `:` in [: -N 2]\n"},
      {"#!/bin/sh\n\n#SBATCH -N 2 :x\n", "d/j.sh",
       "sbatch: fatal: d/j.sh: line 3: Unexpected `:` in [ :x]\n"},
      {"#!/bin/sh\n#SBATCH -J \"unterminated\n", "b3.sh",
       "sbatch: fatal: b3.sh: line 2: Unmatched `\"` in [ \"unterminated]\n"},
      {"#!/bin/sh\n#SBATCH -J 'x\n", "j", "sbatch: fatal: j: line 2: Unmatched `'` in [ 'x]\n"},
  };
  for (const Case& c : cases) {
    auto [d, fail] = ReadDirectives(c.script, c.file, "sbatch");
    ASSERT_TRUE(fail.has_value()) << c.script;
    EXPECT_EQ(fail->text, c.text);
    EXPECT_EQ(fail->exit_code, 1);
  }
}

TEST(BatchScriptTest, ScriptChecksInSlurmsOrder) {
  const std::string shebang =
      "sbatch: error: This does not look like a batch script.  The first\n"
      "sbatch: error: line must start with #! followed by the path to an interpreter.\n"
      "sbatch: error: For instance: #!/bin/sh\n";
  const std::string nul =
      "sbatch: error: The Slurm controller does not allow scripts that\n"
      "sbatch: error: contain a NULL character '\\0'.\n";
  const std::string dos =
      "sbatch: error: Batch script contains DOS line breaks (\\r\\n)\n"
      "sbatch: error: instead of expected UNIX line breaks (\\n).\n";
  struct Case {
    std::string script, text;
  };
  const Case cases[] = {
      {"", "sbatch: error: Batch script is empty!\n"},
      {"   \n\n", "sbatch: error: Batch script contains only whitespace!\n"},
      {"echo hi\n#!/bin/sh\n", shebang},
      {"\n#!/bin/sh\necho\n", shebang},
      {std::string("echo\0x\r\n", 9), shebang},
      {std::string("#!/bin/sh\r\necho\0x\n", 19), nul},
      {"#!/bin/sh\r\necho\r\n", dos},
      {"#!/bin/sh\necho\n", ""},
      {"#!\necho hi\n", ""},
  };
  for (const Case& c : cases) {
    std::optional<SbatchFailure> f = CheckBatchScript(c.script, "sbatch");
    EXPECT_EQ(f ? f->text : "", c.text) << c.script;
    if (f) {
      EXPECT_EQ(f->exit_code, 1);
    }
  }
}

TEST(BatchScriptTest, WrapScript) {
  EXPECT_EQ(WrapScript("echo hi; exit 3"),
            "#!/bin/sh\n# This script was created by sbatch --wrap.\n\necho hi; exit 3\n");
}

TEST(BatchScriptTest, InputEnvironmentVariables) {
  EnvironmentList env = {
      {"SBATCH_TIMELIMIT", "10"},
      {"SBATCH_MEM_PER_NODE", "4G"},
      {"SBATCH_NO_REQUEUE", "yes"},
      {"SBATCH_REQUEUE", "0"},
      {"SBATCH_WAIT", "maybe"},
      {"SBATCH_EXCLUSIVE", ""},
      {"SBATCH_GET_USER_ENV", "10L"},
      {"SBATCH_ARRAY_INX", "1-3"},
      {"SLURM_HINT", "nomultithread"},
      {"SBATCH_DEBUG", "1"},
      {"OTHER", "x"},
      {"SBATCH_NO_KILL", "off"},
  };
  std::vector<OptionArg> got = OptionsFromEnvironment(env);
  std::vector<OptionArg> want = {
      {"array", "1-3"},        {"verbose", std::nullopt},    {"exclusive", std::nullopt},
      {"get-user-env", "10L"}, {"hint", "nomultithread"},    {"mem", "4G"},
      {"no-kill", "off"},      {"no-requeue", std::nullopt}, {"time", "10"},
  };
  EXPECT_EQ(got, want);
  EXPECT_EQ(EnvironmentVariableOf("time"), "SBATCH_TIMELIMIT");
  EXPECT_EQ(EnvironmentVariableOf("mem"), "SBATCH_MEM_PER_NODE");
  EXPECT_EQ(EnvironmentVariableOf("hold"), "");
  // The last definition of a variable is the one that counts.
  got = OptionsFromEnvironment({{"SBATCH_QOS", "a"}, {"SBATCH_QOS", "b"}});
  EXPECT_EQ(got, (std::vector<OptionArg>{{"qos", "b"}}));
}

}  // namespace
}  // namespace berth::slurm
