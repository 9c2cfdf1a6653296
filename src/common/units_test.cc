#include "common/units.h"

#include <gtest/gtest.h>

namespace berth {
namespace {

struct ParseCase {
  std::string text;
  int64_t mib;
};

TEST(UnitsTest, ParseMemoryMiB) {
  const ParseCase cases[] = {
      {"0", 0},
      {"100", 100},
      {"24000", 24000},
      {"4096", 4096},
      {"500M", 500},
      {"500m", 500},
      {"5MB", 5},
      {"50mb", 50},
      {"2600M", 2600},
      {"4G", 4096},
      {"4g", 4096},
      {"4GB", 4096},
      {"4Gb", 4096},
      {"125G", 128000},
      {"1T", 1048576},
      {"2tb", 2097152},
      {"1K", 1},
      {"1kB", 1},
      {"1024K", 1},
      {"1025K", 2},
      {"0K", 0},
      {"2048k", 2},
      {"0G", 0},
      {"0007", 7},
      {"4398046511104T", INT64_C(1) << 62},  // kMaxMemoryMiB
  };
  for (const ParseCase& c : cases) {
    Result<int64_t> got = ParseMemoryMiB(c.text);
    ASSERT_TRUE(got.ok()) << c.text << ": " << got.status().ToString();
    EXPECT_EQ(*got, c.mib) << c.text;
  }
}

TEST(UnitsTest, ParseMemoryMiBErrors) {
  const char* bad[] = {"",
                       "G",
                       "-1",
                       "-4G",
                       "4 G",
                       " 4G",
                       "+4G",
                       "4B",
                       "4b",
                       "4P",
                       "4GiB",
                       "4GBB",
                       "1.5G",
                       "4G ",
                       "abc",
                       "4x",
                       "4KK",
                       "M4",
                       "${memory}G",
                       "4398046511105T",
                       "99999999999999999999999"};
  for (const char* text : bad) {
    Result<int64_t> got = ParseMemoryMiB(text);
    ASSERT_FALSE(got.ok()) << text;
    EXPECT_EQ(got.status().code(), StatusCode::kInvalidArgument);
    EXPECT_NE(got.status().message().find("'" + std::string(text) + "'"), std::string::npos)
        << got.status().message();
  }
}

struct FormatCase {
  int64_t mib;
  std::string want;
};

TEST(UnitsTest, FormatMemoryMiB) {
  const FormatCase cases[] = {
      {0, "0"},
      {1, "1M"},
      {5, "5M"},
      {500, "500M"},
      {512, "512M"},
      {1023, "1023M"},
      {1024, "1G"},
      {1536, "1.50G"},  // a half unit counts as exact
      {2560, "2.50G"},
      {2600, "2600M"},
      {3840, "3840M"},
      {4096, "4G"},
      {6000, "6000M"},
      {16000, "16000M"},
      {16384, "16G"},
      {83200, "83200M"},
      {128000, "125G"},
      {204800, "200G"},
      {1048576, "1T"},
      {1572864, "1.50T"},
      {INT64_C(1) << 30, "1P"},
      {INT64_C(1) << 39, "512P"},
      {INT64_C(1) << 40, "1?"},  // past P Slurm prints '?'
      {INT64_C(1) << 50, "1?"},
      {16777217, "16T"},  // rounded through a float, as scontrol does
      {-5, "-5M"},
  };
  for (const FormatCase& c : cases) EXPECT_EQ(FormatMemoryMiB(c.mib), c.want) << c.mib;
}

// What the real Slurm 22.05 printed as MinMemoryNode=/MinMemoryCPU= for the oracle scripts.
TEST(UnitsTest, OracleMemory) {
  const std::pair<const char*, const char*> cases[] = {
      {"125G", "125G"},  {"4G", "4G"},        {"100G", "100G"},  {"60G", "60G"},
      {"16G", "16G"},    {"5MB", "5M"},       {"50MB", "50M"},   {"2600M", "2600M"},
      {"200G", "200G"},  {"3G", "3G"},        {"1g", "1G"},      {"512M", "512M"},
      {"6000", "6000M"}, {"16000", "16000M"}, {"3800", "3800M"}, {"24000", "24000M"},
      {"0", "0"},
  };
  for (const auto& [text, want] : cases) {
    Result<int64_t> mib = ParseMemoryMiB(text);
    ASSERT_TRUE(mib.ok()) << text;
    EXPECT_EQ(FormatMemoryMiB(*mib), want) << text;
  }
}

}  // namespace
}  // namespace berth
