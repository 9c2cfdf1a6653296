#include "slurm/sbatch_values.h"

#include <gtest/gtest.h>

#include "common/slurm_time.h"
#include "common/units.h"
#include "config/job_options.h"
#include "config/slurm_datetime.h"

namespace berth::slurm {
namespace {

constexpr Time kNow = 1796241077;  // Wed 2026-12-02T19:51:17Z

ValueContext Utc() {
  return ValueContext{"sbatch", kNow, [](Time) -> int64_t { return 0; }};
}

// The value as berth takes it, or Slurm's failure text with its exit status.
struct Outcome {
  std::string value;
  std::string error;
  int exit_code = 0;
};

Outcome CheckValue(std::string name, std::optional<std::string> value,
                   const ValueContext& ctx = Utc()) {
  OptionArg o{std::move(name), std::move(value)};
  std::optional<SbatchFailure> f = CheckSbatchValue(o, ctx);
  if (f) return {"", f->text, f->exit_code};
  return {o.value.value_or("<none>"), "", 0};
}

struct Case {
  std::string option;
  std::optional<std::string> value;
  std::string normalized;  // "" when an error is expected
  std::string error = "";
  int exit_code = 0;
};

void CheckAll(const std::vector<Case>& cases) {
  for (const Case& c : cases) {
    Outcome got = CheckValue(c.option, c.value);
    std::string what = "--" + c.option + "=" + c.value.value_or("<none>");
    EXPECT_EQ(got.value, c.normalized) << what;
    EXPECT_EQ(got.error, c.error) << what;
    EXPECT_EQ(got.exit_code, c.exit_code) << what;
  }
}

TEST(SbatchValuesTest, TimeLimitsInEverySlurmFormat) {
  struct TimeCase {
    std::string text;
    Duration seconds;  // -1: refused
  };
  const TimeCase cases[] = {
      {"90", 90 * 60},
      {"5:30", 6 * 60},  // MM:SS, a partial minute rounds up
      {"10:00", 10 * 60},
      {"1:00:00", 3600},
      {"100:00:00", 100 * 3600},
      {"2-12", (2 * 24 + 12) * 3600},
      {"1-0:30", (24 * 60 + 30) * 60},
      {"7-00:00:00", 7 * 86400},
      {"14-00:00:00", 14 * 86400},
      {"0-00:10:00", 600},
      {"UNLIMITED", kInfinite},
      {"INFINITE", kInfinite},
      {"infinite", kInfinite},
      {"-1", kInfinite},
      {"0", kInfinite},
      {"1:xx", -1},
      {"abc", -1},
      {"1:2:3:4", -1},
      {"$time_requested", -1},
      {"", -1},
      {"10m", -1},
  };
  for (const TimeCase& c : cases) {
    for (const char* option : {"time", "time-min"}) {
      Outcome got = CheckValue(option, c.text);
      if (c.seconds < 0) {
        EXPECT_EQ(got.error, std::string("sbatch: error: Invalid --") + option + " specification\n")
            << c.text;
        EXPECT_EQ(got.exit_code, 255);
        continue;
      }
      ASSERT_EQ(got.error, "") << c.text;
      core::JobSpec spec;
      ASSERT_TRUE(config::ApplyJobOption("time", got.value, kNow, spec).ok()) << c.text;
      EXPECT_EQ(spec.time_limit, c.seconds) << c.text;
    }
  }
}

TEST(SbatchValuesTest, MemorySizes) {
  struct MemCase {
    std::string text;
    int64_t mib;  // -1: refused
  };
  const MemCase cases[] = {
      {"4096", 4096}, {"4G", 4096},  {"4g", 4096}, {"500M", 500}, {"1T", 1048576}, {"1024K", 1},
      {"1025K", 2},   {"4GB", 4096}, {"0", 0},     {"+5", 5},     {" 7", 7},       {"1.5G", -1},
      {"-5", -1},     {"x", -1},     {"4X", -1},   {"", -1},      {"4GiB", -1},
  };
  for (const MemCase& c : cases) {
    for (const char* option : {"mem", "mem-per-cpu", "mem-per-gpu", "tmp"}) {
      Outcome got = CheckValue(option, c.text);
      if (c.mib < 0) {
        EXPECT_EQ(got.error, std::string("sbatch: error: Invalid --") + option + " specification\n")
            << c.text;
        EXPECT_EQ(got.exit_code, 255);
        continue;
      }
      ASSERT_EQ(got.error, "") << c.text;
      EXPECT_EQ(ParseMemoryMiB(got.value).value(), c.mib) << option << " " << c.text;
    }
  }
}

TEST(SbatchValuesTest, NumericOptions) {
  std::vector<Case> cases;
  for (const char* option :
       {"ntasks", "cpus-per-task", "ntasks-per-node", "ntasks-per-gpu", "cpus-per-gpu", "mincpus",
        "threads-per-core", "sockets-per-node", "cores-per-socket", "ntasks-per-core",
        "ntasks-per-socket", "ntasks-per-tres", "thread-spec"}) {
    std::string bad = std::string(" for --") + option + ".\n";
    cases.push_back({option, "4", "4"});
    cases.push_back({option, "+4", "4"});
    cases.push_back({option, " 4", "4"});
    cases.push_back({option, "0", "", "sbatch: error: Invalid numeric value \"0\"" + bad, 1});
    cases.push_back({option, "-1", "", "sbatch: error: Invalid numeric value \"-1\"" + bad, 1});
    cases.push_back({option, "x", "", "sbatch: error: Invalid numeric value \"x\"" + bad, 1});
    cases.push_back({option, "4x", "", "sbatch: error: Invalid numeric value \"4x\"" + bad, 1});
    cases.push_back({option, "", "", "sbatch: error: Invalid numeric value \"\"" + bad, 1});
  }
  cases.push_back({"core-spec", "0", "0"});
  cases.push_back(
      {"core-spec", "-1", "", "sbatch: error: Invalid numeric value \"-1\" for --core-spec.\n", 1});
  cases.push_back({"wait-all-nodes", "1", "1"});
  cases.push_back(
      {"wait-all-nodes", "2", "", "sbatch: error: Invalid --wait-all-nodes specification\n", 255});
  cases.push_back({"switches", "2@10", "2@10"});
  cases.push_back(
      {"switches", "x", "", "sbatch: error: Invalid numeric value \"x\" for --switches.\n", 1});
  CheckAll(cases);
}

TEST(SbatchValuesTest, NodeCounts) {
  CheckAll({
      {"nodes", "2", "2"},
      {"nodes", "2-4", "2-4"},
      {"nodes", "1k", "1024"},
      {"nodes", "2 ", "2"},
      {"nodes", "0", "0-0"},  // Slurm takes 0; berth runs it on one node
      {"nodes", "0-0", "0-0"},
      {"nodes", "0-4", "0-4"},  // berth reads a minimum of 0 as 1
      {"nodes", "4-0", "4-0"},  // no maximum
      {"nodes", "x", "", "sbatch: error: \"x\" is not a valid node count\n", 255},
      {"nodes", "$N_nodes", "", "sbatch: error: \"$N_nodes\" is not a valid node count\n", 255},
      {"nodes", "2-x", "", "sbatch: error: \"x\" is not a valid node count\n", 255},
      {"nodes", "2-1", "",
       "sbatch: error: Maximum node count 1 is less than minimum node count 2\n", 255},
  });
}

TEST(SbatchValuesTest, EnumeratedValues) {
  auto invalid = [](const std::string& option) {
    return "sbatch: error: Invalid --" + option + " specification\n";
  };
  CheckAll({
      {"exclusive", std::nullopt, "<none>"},
      {"exclusive", "user", "user"},
      {"exclusive", "mcs", "mcs"},
      {"exclusive", "OverSubscribe", "OverSubscribe"},
      {"exclusive", "bad", "", invalid("exclusive"), 255},
      {"open-mode", "append", "append"},
      {"open-mode", "a", "append"},
      {"open-mode", "Truncate", "truncate"},
      {"open-mode", "x", "", invalid("open-mode"), 255},
      {"kill-on-invalid-dep", "YES", "yes"},
      {"kill-on-invalid-dep", "no", "no"},
      {"kill-on-invalid-dep", "maybe", "", invalid("kill-on-invalid-dep"), 255},
      {"no-kill", std::nullopt, "<none>"},
      {"no-kill", "off", "off"},
      {"no-kill", "x", "", invalid("no-kill"), 255},
      {"get-user-env", std::nullopt, "<none>"},
      {"get-user-env", "10L", "10L"},
      {"get-user-env", "S", "S"},
      {"get-user-env", "x", "", invalid("get-user-env"), 255},
      {"mail-type", "ALL", "ALL"},
      {"mail-type", "begin,end,FAIL", "begin,end,FAIL"},
      {"mail-type", "TIME_LIMIT_80,ARRAY_TASKS", "TIME_LIMIT_80,ARRAY_TASKS"},
      {"mail-type", "BAD", "", invalid("mail-type"), 255},
      {"signal", "USR1@60", "USR1@60"},
      {"signal", "B:SIGUSR2@90", "B:SIGUSR2@90"},
      {"signal", "10", "10"},
      {"signal", "FOO", "", invalid("signal"), 255},
      {"signal", "USR1@x", "", invalid("signal"), 255},
      {"signal", "0", "", invalid("signal"), 255},
      {"gres-flags", "enforce-binding", "enforce-binding"},
      {"gres-flags", "x", "", invalid("gres-flags"), 255},
      {"distribution", "cyclic", "cyclic"},
      {"distribution", "block:cyclic:fcyclic,Pack", "block:cyclic:fcyclic,Pack"},
      {"distribution", "plane=4", "plane=4"},
      {"distribution", "bad", "", invalid("distribution"), 255},
      {"hint", "nomultithread", "nomultithread"},
      {"hint", "bad", "", "sbatch: error: unrecognized --hint argument \"bad\", see --hint=help\n",
       1},
      {"cpu-freq", "high", "high"},
      {"cpu-freq", "2000000-3000000:performance", "2000000-3000000:performance"},
      {"cpu-freq", "bad", "",
       "sbatch: error: unrecognized --cpu-freq argument \"bad\"\nsbatch: error: Invalid --cpu-freq "
       "argument\n",
       255},
      {"gpu-bind", "verbose,single:1", "verbose,single:1"},
      {"gpu-bind", "map_gpu:0,1", "map_gpu:0,1"},
      {"gpu-bind", "closest", "closest"},
      {"gpu-bind", "bad", "", "sbatch: error: Invalid --gpu-bind argument: gpu:bad\n", 255},
      {"gpu-freq", "high,memory=low,verbose", "high,memory=low,verbose"},
      {"gpu-freq", "x", "", "sbatch: error: Invalid --gpu-freq argument: gpu:x\n", 255},
      {"mem-bind", "verbose,local", "verbose,local"},
      {"mem-bind", "x", "", "sbatch: error: unrecognized --mem-bind argument \"x\"\n", 255},
      {"profile", "task,energy", "task,energy"},
      {"profile", "x", "", "sbatch: error: invalid --profile=x option\n", 255},
      {"propagate", std::nullopt, "<none>"},
      {"propagate", "STACK,RLIMIT_CORE", "STACK,RLIMIT_CORE"},
      {"propagate", "x", "",
       "sbatch: error: Bad rlimit name: x\nsbatch: error: --propagate=x is not valid.\n", 1},
      {"acctg-freq", "30", "30"},
      {"acctg-freq", "task=30,energy=60", "task=30,energy=60"},
      {"acctg-freq", "x", "", "sbatch: error: Invalid --acctg-freq specification: x\n", 255},
      {"delay-boot", "10", "10"},
      {"delay-boot", "x", "", invalid("delay-boot"), 255},
      {"extra-node-info", "2:*:1", "2:*:1"},
      {"extra-node-info", "x", "",
       "sbatch: error: Invalid numeric value \"x\" for first arg of -B.\n", 1},
      {"extra-node-info", "2:y", "",
       "sbatch: error: Invalid numeric value \"y\" for second arg of -B.\n", 1},
      {"uid", "0", "0"},
      {"uid", "root", "0"},
      {"uid", "no-such-user-here", "", invalid("uid"), 255},
      {"gid", "root", "0"},
      {"gid", "no-such-group-here", "", invalid("gid"), 255},
  });
}

TEST(SbatchValuesTest, NiceAndPriorityReadLikeStrtol) {
  CheckAll({
      {"nice", std::nullopt, "100"},
      {"nice", "5", "5"},
      {"nice", "-5", "-5"},
      {"nice", "x", "0"},
      {"nice", "10000", "10000"},
      {"nice", "2147483645", "2147483645"},
      {"nice", "-3000000000", "",
       "sbatch: error: Invalid --nice value, out of range (+/- 2147483645)\n", 255},
      {"priority", "TOP", "TOP"},
      {"priority", "x", "0"},
      {"priority", "42", "42"},
      {"priority", "-1", "", "sbatch: error: Priority must be >= 0\n", 255},
      {"priority", "4294967294", "", "sbatch: error: Priority must be < 4294967294\n", 255},
  });
}

TEST(SbatchValuesTest, BeginAndDeadlineInEverySlurmForm) {
  struct BeginCase {
    std::string text;
    Time expected;             // 0: refused
    std::string printed = "";  // Slurm's parse_time line before its error, if any
  };
  // Now is Wed 2026-12-02 19:51:17 UTC; each result was checked against sbatch 22.05.8.
  const BeginCase cases[] = {
      {"16:00", 1796313600},  // passed today: tomorrow
      {"20:00", 1796241600},  // still to come today
      {"4:30pm", 1796315400},
      {"12:00am", 1796256000},
      {"noon tomorrow", 1796299200},
      {"midnight", 1796256000},
      {"teatime", 1796313600},
      {"fika", 1796310000},
      {"today", 1796169600},
      {"tomorrow", 1796256000},
      {"now", kNow},
      {"now+1hour", kNow + 3600},
      {"now+60", kNow + 60},
      {"now+2days", kNow + 2 * 86400},
      {"NOW+1WEEK", kNow + 7 * 86400},
      {"now-1day", kNow - 86400},
      {"now + 2 hours", kNow + 7200},
      {"12/25", 1798156800},
      {"12/25/27", 1829692800},
      {"122527", 1829692800},
      {"12.25.27", 1829692800},
      {"03/01", 1803859200},  // passed this year: next year
      {"2027-01-20", 1800403200},
      {"2027-01-20T12:34", 1800448440},
      {"2027-01-20T12:34:56", 1800448496},
      {"12/25-10:00", 1798192800},
      {"uts1900000000", 1900000000},
      {"elevenses", 0, "Invalid time specification (pos=0): elevenses\n"},  // not in 22.05
      {"25:00", 0, "Invalid time specification (pos=0): 25:00\n"},
      {"12:61", 0, "Invalid time specification (pos=3): 12:61\n"},
      {"13/01", 0, "Invalid time specification (pos=0): 13/01\n"},
      {"2026-13-01", 0, "Invalid time specification (pos=5): 2026-13-01\n"},
      {"now+1hourx", 0, "Invalid time specification (pos=9): now+1hourx\n"},
      {"now+x", 0, "Invalid time specification (pos=3): now+x\n"},
      {"now+", 0, "Invalid time specification (pos=3): now+\n"},
      {"4pm", 0, "Invalid time specification (pos=1): 4pm\n"},
      {"1:2", 0, "Invalid time specification (pos=3): 1:2\n"},
      {"uts12", 0, "Invalid time specification (pos=0): uts12\n"},
      {"noonx", 0, "Invalid time specification (pos=4): noonx\n"},
      {"12/32", 0, "Invalid time specification (pos=3): 12/32\n"},
      {"2027-1-5", 0, "Invalid time specification (pos=0): 2027-1-5\n"},
      {"garbage", 0, "Invalid time specification (pos=0): garbage\n"},
      {"0", 0, "Invalid time specification (pos=-1): 0\n"},
      {"-1", 0, "Invalid time specification (pos=2): -1\n"},
      {"T", 0},  // names no time: only sbatch's own message
  };
  for (const BeginCase& c : cases) {
    for (const char* option : {"begin", "deadline"}) {
      Outcome got = CheckValue(option, c.text);
      if (c.expected == 0) {
        EXPECT_EQ(got.error, c.printed + "sbatch: error: Invalid --" + option + " specification\n")
            << c.text;
        EXPECT_EQ(got.exit_code, 255) << c.text;
        continue;
      }
      EXPECT_EQ(got.error, "") << c.text;
      EXPECT_EQ(got.value, "uts" + std::to_string(c.expected)) << option << " " << c.text;
    }
  }
}

TEST(SbatchValuesTest, LocalFormsUseTheZone) {
  // In UTC+2, 16:00 local is 14:00 UTC; at 19:51 UTC it is 21:51 local, so 16:00 is tomorrow.
  ValueContext plus2{"sbatch", kNow, [](Time) -> int64_t { return 7200; }};
  EXPECT_EQ(CheckValue("begin", "16:00", plus2).value, "uts" + std::to_string(1796313600 - 7200));
  EXPECT_EQ(CheckValue("begin", "2027-01-20T12:34", plus2).value,
            "uts" + std::to_string(1800448440 - 7200));
  EXPECT_EQ(CheckValue("begin", "now+1hour", plus2).value, "uts" + std::to_string(kNow + 3600));
  // 23:00 local (21:00 UTC) is still to come.
  EXPECT_EQ(CheckValue("begin", "23:00", plus2).value, "uts" + std::to_string(1796241600 + 3600));
  int pos = 0;
  Result<Time> t = config::ParseSlurmDateTime("midnight", kNow, plus2.zone, &pos);
  ASSERT_TRUE(t.ok());
  EXPECT_EQ(*t, 1796256000 - 7200);  // local midnight after local 21:51 is 22:00 UTC today
}

TEST(SbatchValuesTest, ControllerMessages) {
  EXPECT_EQ(SlurmSubmitError("array"), "Invalid job array specification");
  EXPECT_EQ(SlurmSubmitError("dependency"), "Job dependency problem");
  EXPECT_EQ(SlurmSubmitError("constraint"), "Invalid feature specification");
  EXPECT_EQ(SlurmSubmitError("nodelist"), "Invalid node name specified");
  EXPECT_EQ(SlurmSubmitError("licenses"), "Invalid license specification");
  EXPECT_EQ(SlurmSubmitError("partition"), "Invalid partition name specified");
  EXPECT_EQ(SlurmSubmitError("job-name"), "");
}

TEST(SbatchValuesTest, SlurmInteger) {
  EXPECT_EQ(SlurmInteger("12", true), 12);
  EXPECT_EQ(SlurmInteger(" +12", true), 12);
  EXPECT_EQ(SlurmInteger("0", false), 0);
  EXPECT_EQ(SlurmInteger("0", true), std::nullopt);
  EXPECT_EQ(SlurmInteger("12 ", true), std::nullopt);
  EXPECT_EQ(SlurmInteger("2147483648", true), std::nullopt);
  EXPECT_EQ(SlurmInteger("", false), std::nullopt);
}

}  // namespace
}  // namespace berth::slurm
