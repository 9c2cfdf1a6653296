#include "config/value_text.h"

#include <gtest/gtest.h>

#include "config/gres_text.h"
#include "config/slurm_datetime.h"
#include "config/tres_text.h"

namespace berth::config {
namespace {

TEST(ValueTextTest, ParseInteger) {
  struct Case {
    std::string text;
    int64_t min, max;
    bool ok;
    int64_t want;
  };
  const Case cases[] = {
      {"0", 0, 10, true, 0},
      {"10", 0, 10, true, 10},
      {"11", 0, 10, false, 0},
      {"-1", -1, 10, true, -1},
      {"-1", 0, 10, false, 0},
      {"-2", -1, 10, false, 0},
      {"", 0, 10, false, 0},
      {"+1", 0, 10, false, 0},
      {" 1", 0, 10, false, 0},
      {"1x", 0, 10, false, 0},
      {"0x10", 0, 99, false, 0},
      {"007", 0, 10, true, 7},
      {"99999999999999999999", 0, INT64_MAX, false, 0},
  };
  for (const Case& c : cases) {
    Result<int64_t> got = ParseInteger(c.text, c.min, c.max);
    EXPECT_EQ(got.ok(), c.ok) << c.text;
    if (c.ok && got.ok()) {
      EXPECT_EQ(*got, c.want) << c.text;
    }
  }
  EXPECT_EQ(ParseInteger("x", 1, 5).status().message(), "expected an integer from 1 to 5");
}

TEST(ValueTextTest, ParseDecimal) {
  EXPECT_DOUBLE_EQ(*ParseDecimal("2"), 2.0);
  EXPECT_DOUBLE_EQ(*ParseDecimal("0.25"), 0.25);
  EXPECT_DOUBLE_EQ(*ParseDecimal(".5"), 0.5);
  EXPECT_DOUBLE_EQ(*ParseDecimal("3."), 3.0);
  for (const char* bad : {"", ".", "-1", "1e3", "1.2.3", "abc", "nan", "inf"}) {
    EXPECT_FALSE(ParseDecimal(bad).ok()) << bad;
  }
}

TEST(ValueTextTest, ParseBool) {
  for (const char* yes : {"YES", "yes", "True", "UP", "1"}) EXPECT_TRUE(*ParseBool(yes)) << yes;
  for (const char* no : {"NO", "no", "false", "Down", "0"}) EXPECT_FALSE(*ParseBool(no)) << no;
  for (const char* bad : {"", "y", "2", "maybe"}) EXPECT_FALSE(ParseBool(bad).ok()) << bad;
}

TEST(ValueTextTest, ParseSuffixedCount) {
  EXPECT_EQ(*ParseSuffixedCount("16"), 16);
  EXPECT_EQ(*ParseSuffixedCount("0"), 0);
  EXPECT_EQ(*ParseSuffixedCount("4k"), 4096);
  EXPECT_EQ(*ParseSuffixedCount("4G"), INT64_C(4) << 30);
  EXPECT_EQ(*ParseSuffixedCount("1P"), INT64_C(1) << 50);
  for (const char* bad : {"", "G", "4X", "-1", "4GB", "99999P"}) {
    EXPECT_FALSE(ParseSuffixedCount(bad).ok()) << bad;
  }
}

TEST(ValueTextTest, ParseConfigMinutes) {
  EXPECT_EQ(*ParseConfigMinutes("0"), 0);
  EXPECT_EQ(*ParseConfigMinutes("90"), 5400);
  EXPECT_EQ(*ParseConfigMinutes("0:30"), 60);  // rounded up to a minute, as time_str2mins
  EXPECT_EQ(*ParseConfigMinutes("1-00:00:00"), 86400);
  EXPECT_EQ(*ParseConfigMinutes("14-0"), 14 * 86400);
  EXPECT_EQ(*ParseConfigMinutes("INFINITE"), kInfinite);
  EXPECT_EQ(*ParseConfigMinutes("unlimited"), kInfinite);
  EXPECT_EQ(*ParseConfigMinutes("-1"), kInfinite);
  for (const char* bad : {"", "1:xx", "1h", "-5"})
    EXPECT_FALSE(ParseConfigMinutes(bad).ok()) << bad;
}

TEST(ValueTextTest, ParseLicenses) {
  using NC = core::NamedCount;
  EXPECT_EQ(*ParseLicenses("a:2,b*3,c", 0), (std::vector<NC>{{"a", 2}, {"b", 3}, {"c", 1}}));
  EXPECT_EQ(*ParseLicenses("a:2,a:3", 1), (std::vector<NC>{{"a", 5}}));
  EXPECT_EQ(*ParseLicenses("fluent@db:4", 1), (std::vector<NC>{{"fluent@db", 4}}));
  EXPECT_EQ(*ParseLicenses("a:0", 0), (std::vector<NC>{{"a", 0}}));
  for (const char* bad : {"", "a:x", ":2", "a,,b", "a:", "a:-1"}) {
    EXPECT_FALSE(ParseLicenses(bad, 0).ok()) << bad;
  }
  EXPECT_FALSE(ParseLicenses("a:0", 1).ok());
}

TEST(ValueTextTest, InvalidValueAndReason) {
  Status s = InvalidValue("--time", "1:xx", "bad field");
  EXPECT_EQ(s.message(), "invalid --time value '1:xx': bad field");
  EXPECT_EQ(Reason(Status::InvalidArgument("invalid time limit '1:xx': bad field")), "bad field");
  EXPECT_EQ(Reason(Status::InvalidArgument("something else")), "something else");
}

TEST(GresTextTest, ParseGresList) {
  struct Case {
    std::string text;
    GresSyntax syntax;
    std::vector<GresEntry> want;
  };
  const Case cases[] = {
      {"gpu:h100:8", GresSyntax::kNodeConfig, {{"gpu", "h100", 8}}},
      {"gpu:4", GresSyntax::kNodeConfig, {{"gpu", "", 4}}},
      {"gpu", GresSyntax::kNodeConfig, {{"gpu", "", 1}}},
      {"gpu:a100", GresSyntax::kJobRequest, {{"gpu", "a100", 1}}},
      {"gpu:a100:2,shard:16", GresSyntax::kNodeConfig, {{"gpu", "a100", 2}, {"shard", "", 16}}},
      {"gpu:tesla:no_consume:2", GresSyntax::kNodeConfig, {{"gpu", "tesla", 2}}},
      {"bandwidth:lustre:4G", GresSyntax::kNodeConfig, {{"bandwidth", "lustre", INT64_C(4) << 30}}},
      {"gres/gpu:2", GresSyntax::kJobRequest, {{"gpu", "", 2}}},
      {"gpu:0", GresSyntax::kJobRequest, {{"gpu", "", 0}}},
  };
  for (const Case& c : cases) {
    Result<std::vector<GresEntry>> got = ParseGresList(c.text, c.syntax);
    ASSERT_TRUE(got.ok()) << c.text << ": " << got.status().ToString();
    EXPECT_EQ(*got, c.want) << c.text;
  }
  const std::pair<const char*, GresSyntax> bad[] = {
      {"", GresSyntax::kNodeConfig},
      {"gpu:", GresSyntax::kNodeConfig},
      {":2", GresSyntax::kNodeConfig},
      {"gpu:a:b:2", GresSyntax::kNodeConfig},
      {"gpu,,shard", GresSyntax::kJobRequest},
      {"gpu:2X", GresSyntax::kJobRequest},
      {"gpu:a:no_consume:2", GresSyntax::kJobRequest},
  };
  for (const auto& [text, syntax] : bad) {
    EXPECT_FALSE(ParseGresList(text, syntax).ok()) << text;
  }
  EXPECT_EQ(ParseGresList("gpu:a:b:2", GresSyntax::kNodeConfig).status().message(),
            "bad GRES entry 'gpu:a:b:2': expected name[:type][:count]");
}

TEST(TresTextTest, ParseTresLimits) {
  Result<core::TresLimits> l = ParseTresLimits("cpu=64,gres/gpu=8,node=4,mem=256G");
  ASSERT_TRUE(l.ok()) << l.status().ToString();
  EXPECT_EQ(l->cpus, 64);
  EXPECT_EQ(l->gpus, 8);
  EXPECT_EQ(l->nodes, 4);
  EXPECT_EQ(l->mem_mib, 256 * 1024);
  l = ParseTresLimits("CPU=-1,GRES/gpu=2,Mem=1000");
  ASSERT_TRUE(l.ok());
  EXPECT_EQ(l->cpus, core::kNoLimit);
  EXPECT_EQ(l->gpus, 2);
  EXPECT_EQ(l->mem_mib, 1000);
  for (const char* bad : {"", "cpu", "cpu=", "=4", "cpu=x", "billing=5", "gres/gpu:a100=2",
                          "mem=4X", "cpu=-2", "license/matlab=1"}) {
    EXPECT_FALSE(ParseTresLimits(bad).ok()) << bad;
  }
  EXPECT_EQ(ParseTresLimits("billing=5").status().message(),
            "bad TRES entry 'billing=5': berth limits only cpu, mem, node and gres/gpu");
}

TEST(TresTextTest, ParseTresWeights) {
  using NC = core::NamedCount;
  EXPECT_EQ(*ParseTresWeights("CPU=1000,Mem=2000,GRES/gpu=3000"),
            (std::vector<NC>{{"cpu", 1000}, {"mem", 2000}, {"gres/gpu", 3000}}));
  for (const char* bad : {"", "cpu=1.5", "cpu=-1", "cpu"}) {
    EXPECT_FALSE(ParseTresWeights(bad).ok()) << bad;
  }
}

TEST(TresTextTest, ParseBillingWeights) {
  struct Case {
    std::string text;
    double cpu, gpu, mem_per_gib;
    std::vector<std::string> ignored;
  };
  const Case cases[] = {
      {"CPU=1.0,Mem=0.25G,GRES/gpu=2.0", 1.0, 2.0, 0.25, {}},
      {"GRES/gpu=4", 0.0, 4.0, 0.0, {}},  // only the listed TRES are billed
      {"Mem=1", 0.0, 0.0, 1024.0, {}},    // no unit: per MiB
      {"Mem=2M", 0.0, 0.0, 2048.0, {}},
      {"mem=1024T", 0.0, 0.0, 1.0, {}},
      {"cpu=1,Node=5,license/x=1", 1.0, 0.0, 0.0, {"node", "license/x"}},
  };
  for (const Case& c : cases) {
    core::FairshareConfig fs;
    std::vector<std::string> ignored;
    Status s = ParseBillingWeights(c.text, fs, ignored);
    ASSERT_TRUE(s.ok()) << c.text << ": " << s.ToString();
    EXPECT_DOUBLE_EQ(fs.cpu_weight, c.cpu) << c.text;
    EXPECT_DOUBLE_EQ(fs.gpu_weight, c.gpu) << c.text;
    EXPECT_DOUBLE_EQ(fs.mem_weight_per_gib, c.mem_per_gib) << c.text;
    EXPECT_EQ(ignored, c.ignored) << c.text;
  }
  for (const char* bad : {"", "cpu", "cpu=x", "cpu=2G", "mem=1K", "mem=1X", "cpu=-1"}) {
    core::FairshareConfig fs;
    std::vector<std::string> ignored;
    EXPECT_FALSE(ParseBillingWeights(bad, fs, ignored).ok()) << bad;
    EXPECT_DOUBLE_EQ(fs.cpu_weight, 1.0) << bad;  // unchanged on error
  }
}

TEST(SlurmDateTimeTest, Accepted) {
  const Time now = 1700000000;
  struct Case {
    std::string text;
    Time want;
  };
  const Case cases[] = {
      {"now", now},
      {"NOW", now},
      {"now+60", now + 60},
      {"now-60", now - 60},
      {"now+1hour", now + 3600},
      {"now+2hours", now + 7200},
      {"now+2days", now + 2 * 86400},
      {"now+1day", now + 86400},
      {"now+5minutes", now + 300},
      {"now+1minute", now + 60},
      {"now+30seconds", now + 30},
      {"now+1second", now + 1},
      {"now+2weeks", now + 14 * 86400},
      {"now+1WEEK", now + 7 * 86400},
      {"uts1700000000", 1700000000},
      {"UTS1000000", 1000000},
      {"2024-01-05", 1704412800},
      {"2024-01-5", 1704412800},
      {"2024-01-05T10:30", 1704450600},
      {"2024-01-05T10:30:15", 1704450615},
      {"2024-01-05 10:30", 1704450600},
      {"2024-01-05T9:30", 1704450600 - 3600},
      {"2024-02-31", 1709337600},  // rolls into March, as mktime does
      {"1970-01-01", 0},
      {"2000-02-29T23:59:59", 951868799},
  };
  for (const Case& c : cases) {
    Result<Time> got = ParseSlurmDateTime(c.text, now);
    ASSERT_TRUE(got.ok()) << c.text << ": " << got.status().ToString();
    EXPECT_EQ(*got, c.want) << c.text;
  }
}

TEST(SlurmDateTimeTest, Refused) {
  struct Case {
    std::string text;
    std::string why;  // a part of the message
  };
  const Case cases[] = {
      {"noon", "local time zone"},
      {"tomorrow", "local time zone"},
      {"midnight", "local time zone"},
      {"teatime", "local time zone"},
      {"16:00", "local time zone"},
      {"0105", "local time zone"},
      {"01/05/24", "local time zone"},
      {"now+1h", "unknown unit 'h'"},
      {"now+1min", "unknown unit 'min'"},
      {"now+", "expected a number"},
      {"now*2", "expected '+' or '-'"},
      {"now+9999999999999", "number too large"},
      {"now+99999999999", "too far from now"},
      {"now-100000weeks", "too far from now"},
      {"uts5", "at least 1000000"},
      {"uts", "at least 1000000"},
      {"2024-13-01", "month 01-12"},
      {"2024-00-01", "month 01-12"},
      {"2024-01-32", "day 1-31"},
      {"2024-1-05", "YYYY-MM-DD"},
      {"2024-01-05T25:00", "HH:MM"},
      {"2024-01-05T10:60", "HH:MM"},
      {"2024-01-05T10:30:61", "HH:MM"},
      {"2024-01-05T10", "HH:MM"},
      {"2024-01-05X", "expected 'T'"},
      {"yesterday", "unknown time format"},
      {"", "unknown time format"},
  };
  for (const Case& c : cases) {
    Result<Time> got = ParseSlurmDateTime(c.text, 1700000000);
    ASSERT_FALSE(got.ok()) << c.text;
    EXPECT_NE(got.status().message().find(c.why), std::string::npos)
        << c.text << ": " << got.status().message();
  }
}

}  // namespace
}  // namespace berth::config
