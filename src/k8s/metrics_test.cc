// metrics.k8s.io objects: rates from two readings, quantities and windows as metrics-server
// writes them.
#include "k8s/metrics.h"

#include <gtest/gtest.h>

namespace berth::k8s {
namespace {

TEST(MetricsTest, UsageIsTheCpuRateOverTheWindowAndTheLastMemory) {
  std::optional<MeasuredUsage> u =
      UsageBetween({1'000'000, 10.0, 100}, {1'005'000, 12.5, 4096});  // 2.5 CPU-s in 5 s
  ASSERT_TRUE(u);
  EXPECT_EQ(u->cpu_nanocores, 500'000'000);
  EXPECT_EQ(u->window_ms, 5000);
  EXPECT_EQ(u->timestamp_ms, 1'005'000);
  EXPECT_EQ(u->memory_bytes, 4096);
}

TEST(MetricsTest, NoUsageFromReadingsOutOfOrderOrARestartedCounter) {
  EXPECT_FALSE(UsageBetween({2000, 1, 0}, {2000, 2, 0}));
  EXPECT_FALSE(UsageBetween({3000, 1, 0}, {2000, 2, 0}));
  EXPECT_FALSE(UsageBetween({1000, 5, 0}, {2000, 1, 0}));
}

TEST(MetricsTest, QuantitiesInCanonicalForm) {
  EXPECT_EQ(CpuQuantityOf(0), "0");
  EXPECT_EQ(CpuQuantityOf(123'456'789), "123456789n");
  EXPECT_EQ(CpuQuantityOf(250'000'000), "250m");
  EXPECT_EQ(CpuQuantityOf(2'000'000'000), "2");
  EXPECT_EQ(CpuQuantityOf(1'500'000), "1500u");
  EXPECT_EQ(BytesQuantityOf(0), "0");
  EXPECT_EQ(BytesQuantityOf(1500), "1500");
  EXPECT_EQ(BytesQuantityOf(2048), "2Ki");
  EXPECT_EQ(BytesQuantityOf(64 << 20), "64Mi");
  EXPECT_EQ(BytesQuantityOf((64 << 20) + 4096), "65540Ki");
}

TEST(MetricsTest, WindowsAsGoPrintsDurations) {
  EXPECT_EQ(GoDuration(0), "0s");
  EXPECT_EQ(GoDuration(500), "500ms");
  EXPECT_EQ(GoDuration(10'000), "10s");
  EXPECT_EQ(GoDuration(10'062), "10.062s");
  EXPECT_EQ(GoDuration(10'500), "10.5s");
  EXPECT_EQ(GoDuration(65'000), "1m5s");
  EXPECT_EQ(GoDuration(3'600'000), "1h0m0s");
}

TEST(MetricsTest, PodMetricsCarryThePodsNameNamespaceLabelsAndContainer) {
  nlohmann::json pod = {
      {"metadata", {{"name", "p"}, {"namespace", "ml"}, {"labels", {{"app", "x"}}}}},
      {"spec", {{"containers", {{{"name", "trainer"}}}}}}};
  MeasuredUsage u{1'700'000'000'500, 10'062, 250'000'000, 3 << 20};
  nlohmann::json m = EncodePodMetrics(pod, u, 1'700'000'001);
  EXPECT_EQ(m["kind"], "PodMetrics");
  EXPECT_EQ(m["apiVersion"], "metrics.k8s.io/v1beta1");
  EXPECT_EQ(m["metadata"]["namespace"], "ml");
  EXPECT_EQ(m["metadata"]["labels"]["app"], "x");
  EXPECT_EQ(m["timestamp"], "2023-11-14T22:13:20Z");
  EXPECT_EQ(m["window"], "10.062s");
  EXPECT_EQ(m["containers"][0]["name"], "trainer");
  EXPECT_EQ(m["containers"][0]["usage"]["cpu"], "250m");
  EXPECT_EQ(m["containers"][0]["usage"]["memory"], "3Mi");
  EXPECT_EQ(PodMetricsTableCells(m, 0), nlohmann::json::array({"p", "250m", "3Mi", "10.062s"}));
  nlohmann::json n = EncodeNodeMetrics({{"metadata", {{"name", "node1"}}}}, u, 0);
  EXPECT_EQ(n["kind"], "NodeMetrics");
  EXPECT_FALSE(n["metadata"].contains("namespace"));
  EXPECT_EQ(n["usage"]["cpu"], "250m");
}

}  // namespace
}  // namespace berth::k8s
