// Golden scenario tests: every tests/golden/*.scn is run through the scheduler in virtual time
// (sim::RunScenario) and its decision log is compared with the .expected file beside it.
// After a deliberate change of behaviour, regenerate with BERTH_UPDATE_GOLDEN=1 and review the
// diff like code.
#include <gtest/gtest.h>

#include <algorithm>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <string>
#include <vector>

#include "sim/scenario.h"

namespace berth {
namespace {

namespace fs = std::filesystem;

std::string ReadAll(const fs::path& p) {
  std::ifstream in(p, std::ios::binary);
  return std::string(std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>());
}

std::vector<std::string> Scenarios() {
  std::vector<std::string> out;
  for (const auto& e : fs::directory_iterator(BERTH_GOLDEN_DIR)) {
    if (e.path().extension() == ".scn") out.push_back(e.path().stem().string());
  }
  std::sort(out.begin(), out.end());
  return out;
}

class GoldenTest : public ::testing::TestWithParam<std::string> {};

TEST_P(GoldenTest, DecisionLogMatches) {
  fs::path dir = BERTH_GOLDEN_DIR;
  fs::path scn = dir / (GetParam() + ".scn");
  fs::path expected = dir / (GetParam() + ".expected");
  Result<std::string> log = sim::RunScenario(ReadAll(scn), scn.filename().string());
  ASSERT_TRUE(log.ok()) << log.status().ToString();
  // Same input, byte-identical output.
  Result<std::string> again = sim::RunScenario(ReadAll(scn), scn.filename().string());
  ASSERT_TRUE(again.ok());
  EXPECT_EQ(*log, *again) << "the scenario is not deterministic";
  const char* update = std::getenv("BERTH_UPDATE_GOLDEN");
  if (update && std::string(update) == "1") {
    std::ofstream(expected, std::ios::binary) << *log;
    GTEST_SKIP() << "rewrote " << expected;
  }
  ASSERT_TRUE(fs::exists(expected))
      << "missing " << expected << " (run with BERTH_UPDATE_GOLDEN=1 to create it)";
  EXPECT_EQ(*log, ReadAll(expected)) << "decision log of " << scn << " changed";
}

INSTANTIATE_TEST_SUITE_P(Scenarios, GoldenTest, ::testing::ValuesIn(Scenarios()),
                         [](const ::testing::TestParamInfo<std::string>& param) {
                           std::string name = param.param;
                           std::replace_if(
                               name.begin(), name.end(),
                               [](char c) { return !std::isalnum(static_cast<unsigned char>(c)); },
                               '_');
                           return name;
                         });

TEST(GoldenTest, AtLeastThirtyScenarios) {
  EXPECT_GE(Scenarios().size(), 30u);
}

}  // namespace
}  // namespace berth
