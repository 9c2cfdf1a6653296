#include "slurm/sbatch_options.h"

#include <gtest/gtest.h>

#include <set>

#include "slurm/pyxis.h"

namespace berth::slurm {
namespace {

using Opts = std::vector<OptionArg>;

OptionArg O(std::string name) {
  return {std::move(name), std::nullopt};
}
OptionArg O(std::string name, std::string value) {
  return {std::move(name), std::move(value)};
}

TEST(SbatchOptionTableTest, EveryOptionOfSlurm2205) {
  // 106 long names: man sbatch's options plus the hidden --cluster and --tasks-per-node; then
  // pyxis's, each of them once and in pyxis's order.
  ASSERT_EQ(SbatchOptions().size(), 106u + PyxisOptions().size());
  for (size_t i = 0; i < PyxisOptions().size(); ++i) {
    const SbatchOption& o = SbatchOptions()[106 + i];
    EXPECT_EQ(o.name, PyxisOptions()[i].name);
    EXPECT_EQ(o.arg, PyxisOptions()[i].arg_info.empty() ? ArgKind::kNone : ArgKind::kRequired);
  }
  std::set<std::string_view> names;
  for (const SbatchOption& o : SbatchOptions()) {
    EXPECT_TRUE(names.insert(o.name).second) << o.name;
    EXPECT_NE(FindSbatchOption(o.canonical), nullptr) << o.canonical;
  }
  for (std::string_view n : {"account",
                             "array",
                             "begin",
                             "chdir",
                             "clusters",
                             "comment",
                             "constraint",
                             "cpus-per-gpu",
                             "cpus-per-task",
                             "deadline",
                             "dependency",
                             "error",
                             "exclude",
                             "exclusive",
                             "export",
                             "export-file",
                             "get-user-env",
                             "gpu-bind",
                             "gpus",
                             "gpus-per-node",
                             "gpus-per-task",
                             "gres",
                             "hold",
                             "input",
                             "job-name",
                             "kill-on-invalid-dep",
                             "licenses",
                             "mail-type",
                             "mail-user",
                             "mem",
                             "mem-per-cpu",
                             "mem-per-gpu",
                             "nice",
                             "no-requeue",
                             "nodelist",
                             "nodes",
                             "ntasks",
                             "ntasks-per-gpu",
                             "ntasks-per-node",
                             "open-mode",
                             "output",
                             "oversubscribe",
                             "parsable",
                             "partition",
                             "priority",
                             "qos",
                             "requeue",
                             "reservation",
                             "signal",
                             "test-only",
                             "time",
                             "time-min",
                             "wait",
                             "wrap"}) {
    EXPECT_NE(FindSbatchOption(n), nullptr) << n;
  }
  EXPECT_EQ(FindSbatchOption("cpu-bind"), nullptr);  // srun's, not sbatch's
  EXPECT_EQ(FindSbatchOption("tres-per-task"), nullptr);
}

TEST(SbatchOptionTableTest, ShortLettersAndArgumentKinds) {
  struct Case {
    char letter;
    std::string_view canonical;
    ArgKind arg;
  };
  const Case cases[] = {
      {'a', "array", ArgKind::kRequired},
      {'b', "begin", ArgKind::kRequired},
      {'c', "cpus-per-task", ArgKind::kRequired},
      {'d', "dependency", ArgKind::kRequired},
      {'e', "error", ArgKind::kRequired},
      {'h', "help", ArgKind::kNone},
      {'i', "input", ArgKind::kRequired},
      {'k', "no-kill", ArgKind::kOptional},
      {'m', "distribution", ArgKind::kRequired},
      {'n', "ntasks", ArgKind::kRequired},
      {'o', "output", ArgKind::kRequired},
      {'p', "partition", ArgKind::kRequired},
      {'q', "qos", ArgKind::kRequired},
      {'s', "oversubscribe", ArgKind::kNone},
      {'t', "time", ArgKind::kRequired},
      {'v', "verbose", ArgKind::kNone},
      {'w', "nodelist", ArgKind::kRequired},
      {'x', "exclude", ArgKind::kRequired},
      {'A', "account", ArgKind::kRequired},
      {'B', "extra-node-info", ArgKind::kRequired},
      {'C', "constraint", ArgKind::kRequired},
      {'D', "chdir", ArgKind::kRequired},
      {'F', "nodefile", ArgKind::kRequired},
      {'G', "gpus", ArgKind::kRequired},
      {'H', "hold", ArgKind::kNone},
      {'J', "job-name", ArgKind::kRequired},
      {'L', "licenses", ArgKind::kRequired},
      {'M', "clusters", ArgKind::kRequired},
      {'N', "nodes", ArgKind::kRequired},
      {'O', "overcommit", ArgKind::kNone},
      {'Q', "quiet", ArgKind::kNone},
      {'S', "core-spec", ArgKind::kRequired},
      {'V', "version", ArgKind::kNone},
      {'W', "wait", ArgKind::kNone},
  };
  int with_letter = 0;
  for (const SbatchOption& o : SbatchOptions()) with_letter += o.short_name != '\0';
  EXPECT_EQ(with_letter, static_cast<int>(std::size(cases)));
  for (const Case& c : cases) {
    const SbatchOption* o = FindShortOption(c.letter);
    ASSERT_NE(o, nullptr) << c.letter;
    EXPECT_EQ(o->canonical, c.canonical) << c.letter;
    EXPECT_EQ(o->arg, c.arg) << c.letter;
  }
  for (char c : std::string_view("fgjlruyzEIKPRTUXYZ0"))
    EXPECT_EQ(FindShortOption(c), nullptr) << c;
}

struct GetoptCase {
  std::vector<std::string> words;
  Opts options;
  size_t next;
  std::string error;
};

void Check(const GetoptCase& c) {
  GetoptResult r = GetoptSbatch(c.words, "sbatch");
  std::string where;
  for (const std::string& w : c.words) where += " " + w;
  EXPECT_EQ(r.options, c.options) << where;
  EXPECT_EQ(r.next, c.next) << where;
  EXPECT_EQ(r.error, c.error) << where;
}

TEST(SbatchGetoptTest, ShortOptions) {
  const GetoptCase cases[] = {
      {{"-N2", "job.sh"}, {O("nodes", "2")}, 1, ""},
      {{"-N", "2", "job.sh"}, {O("nodes", "2")}, 2, ""},
      {{"-t1:00:00"}, {O("time", "1:00:00")}, 1, ""},
      {{"-wnode1", "-x", "node2"}, {O("nodelist", "node1"), O("exclude", "node2")}, 3, ""},
      // Bundled flags, and a flag bundled before an option that takes the rest of the word.
      {{"-Hv"}, {O("hold"), O("verbose")}, 1, ""},
      {{"-HvJname"}, {O("hold"), O("verbose"), O("job-name", "name")}, 1, ""},
      {{"-HJ", "name"}, {O("hold"), O("job-name", "name")}, 2, ""},
      // A required value is the next word even when it looks like an option.
      {{"-J", "-x"}, {O("job-name", "-x")}, 2, ""},
      // -k's value is optional: only attached.
      {{"-koff", "-k", "off"}, {O("no-kill", "off"), O("no-kill")}, 2, ""},
      {{"-f"}, {}, 1, "sbatch: invalid option -- 'f'"},
      {{"-Hf"}, {O("hold")}, 1, "sbatch: invalid option -- 'f'"},
      {{"-J"}, {}, 1, "sbatch: option requires an argument -- 'J'"},
  };
  for (const GetoptCase& c : cases) Check(c);
}

TEST(SbatchGetoptTest, LongOptions) {
  const GetoptCase cases[] = {
      {{"--nodes=2"}, {O("nodes", "2")}, 1, ""},
      {{"--nodes", "2", "job.sh", "arg"}, {O("nodes", "2")}, 2, ""},
      {{"--time=1-00:00:00", "--hold"}, {O("time", "1-00:00:00"), O("hold")}, 2, ""},
      {{"--comment="}, {O("comment", "")}, 1, ""},
      {{"--job-name=a=b"}, {O("job-name", "a=b")}, 1, ""},
      // Optional values only with '='.
      {{"--nice", "5"}, {O("nice")}, 1, ""},
      {{"--nice=5"}, {O("nice", "5")}, 1, ""},
      {{"--exclusive", "--exclusive=user"}, {O("exclusive"), O("exclusive", "user")}, 2, ""},
      // Aliases give the canonical name.
      {{"--tasks-per-node=4", "--cluster=c"},
       {O("ntasks-per-node", "4"), O("clusters", "c")},
       2,
       ""},
      {{"--parsable=1"}, {}, 1, "sbatch: option '--parsable' doesn't allow an argument"},
      {{"--mem"}, {}, 1, "sbatch: option '--mem' requires an argument"},
      {{"--image=x"}, {}, 1, "sbatch: unrecognized option '--image=x'"},
      {{"--cpu-bind=cores"}, {}, 1, "sbatch: unrecognized option '--cpu-bind=cores'"},
      {{"--hetjob"}, {}, 1, "sbatch: unrecognized option '--hetjob'"},
  };
  for (const GetoptCase& c : cases) Check(c);
}

TEST(SbatchGetoptTest, PrefixesOfLongOptions) {
  const GetoptCase cases[] = {
      {{"--part=gpu"}, {O("partition", "gpu")}, 1, ""},
      {{"--tasks=1"}, {O("ntasks-per-node", "1")}, 1, ""},
      {{"--j=x"}, {O("job-name", "x")}, 1, ""},
      {{"--dep", "afterok:1"}, {O("dependency", "afterok:1")}, 2, ""},
      {{"--test"}, {O("test-only")}, 1, ""},
      {{"--parsa"}, {O("parsable")}, 1, ""},
      // The full name in messages about the value.
      {{"--job"}, {}, 1, "sbatch: option '--job-name' requires an argument"},
      {{"--hol=1"}, {}, 1, "sbatch: option '--hold' doesn't allow an argument"},
      // Ambiguous prefixes list the candidates in the table's order, as glibc does.
      {{"--n=1"},
       {},
       1,
       "sbatch: option '--n=1' is ambiguous; possibilities: '--network' '--nice' '--no-kill' "
       "'--no-requeue' '--nodefile' '--nodelist' '--nodes' '--ntasks' '--ntasks-per-core' "
       "'--ntasks-per-gpu' '--ntasks-per-node' '--ntasks-per-socket' '--ntasks-per-tres' "
       "'--no-container-mount-home' '--no-container-remap-root' '--no-container-entrypoint'"},
      {{"--mem-per"},
       {},
       1,
       "sbatch: option '--mem-per' is ambiguous; possibilities: '--mem-per-cpu' '--mem-per-gpu'"},
      {{"--a=1"},
       {},
       1,
       "sbatch: option '--a=1' is ambiguous; possibilities: '--account' '--acctg-freq' "
       "'--array'"},
      {{"--c=1"},
       {},
       1,
       "sbatch: option '--c=1' is ambiguous; possibilities: '--cluster-constraint' '--chdir' "
       "'--cluster' '--clusters' '--comment' '--container' '--context' '--contiguous' "
       "'--constraint' '--core-spec' '--cores-per-socket' '--cpu-freq' '--cpus-per-gpu' "
       "'--cpus-per-task' '--container-image' '--container-mounts' '--container-workdir' "
       "'--container-name' '--container-save' '--container-mount-home' '--container-remap-root' "
       "'--container-entrypoint' '--container-entrypoint-log' '--container-writable' "
       "'--container-readonly' '--container-env'"},
      // pyxis's options come after Slurm's, as a plugin's do: "--container" is still Slurm's
      // own (an exact name), and a prefix shared with pyxis's is ambiguous.
      {{"--container=/b"}, {O("container", "/b")}, 1, ""},
      {{"--container-i=x"}, {O("container-image", "x")}, 1, ""},
      {{"--container-m=/a"},
       {},
       1,
       "sbatch: option '--container-m=/a' is ambiguous; possibilities: '--container-mounts' "
       "'--container-mount-home'"},
      {{"--t=1"},
       {},
       1,
       "sbatch: option '--t=1' is ambiguous; possibilities: '--tasks-per-node' '--test-only' "
       "'--thread-spec' '--threads-per-core' '--time' '--time-min' '--tmp'"},
      {{"--f=1"}, {}, 1, "sbatch: unrecognized option '--f=1'"},
  };
  for (const GetoptCase& c : cases) Check(c);
}

TEST(SbatchGetoptTest, OperandsEndTheOptions) {
  const GetoptCase cases[] = {
      // REQUIRE_ORDER: the script's own options are not sbatch's.
      {{"-N2", "job.sh", "-N3", "--bogus"}, {O("nodes", "2")}, 1, ""},
      {{"--hold", "--", "job.sh"}, {O("hold")}, 2, ""},
      {{"--", "-J"}, {}, 1, ""},
      {{"-", "x"}, {}, 0, ""},  // "-" is an operand (the script on stdin)
      {{}, {}, 0, ""},
      // Options before an error are kept; those after are not parsed.
      {{"-t", "10", "--bogus", "-H"},
       {O("time", "10")},
       3,
       "sbatch: unrecognized option '--bogus'"},
  };
  for (const GetoptCase& c : cases) Check(c);
}

}  // namespace
}  // namespace berth::slurm
