#include "common/prometheus_text.h"

#include <gtest/gtest.h>

#include <cmath>
#include <limits>

namespace berth::prometheus {
namespace {

TEST(PrometheusTextTest, EscapesLabelValues) {
  struct Case {
    std::string in, out;
  };
  const Case cases[] = {
      {"plain", "plain"},
      {"", ""},
      {"a\\b", "a\\\\b"},
      {"say \"hi\"", "say \\\"hi\\\""},
      {"two\nlines", "two\\nlines"},
      {"\\\"\n", "\\\\\\\"\\n"},
      {"tab\tand ü", "tab\tand ü"},  // only the three are escaped
  };
  for (const Case& c : cases) EXPECT_EQ(EscapeLabelValue(c.in), c.out) << c.in;
}

TEST(PrometheusTextTest, EscapesHelpButNotQuotes) {
  EXPECT_EQ(EscapeHelp("a \"b\" c\\d\ne"), "a \"b\" c\\\\d\\ne");
}

TEST(PrometheusTextTest, FormatsValues) {
  struct Case {
    double in;
    std::string out;
  };
  const Case cases[] = {
      {0, "0"},
      {3, "3"},
      {-2, "-2"},
      {0.25, "0.25"},
      {0.1, "0.1"},
      {0.0005, "0.0005"},
      {-0.0025, "-0.0025"},
      {0.00005, "5e-05"},
      {1.5e-7, "1.5e-07"},
      {123456.789, "123456.789"},
      {1234567890123456.5, "1234567890123456.5"},
      {1.5e16, "1.5e+16"},  // past 2^53, where integers are no longer exact
      {9007199254740992.0, "9007199254740992"},
      {1e20, "1e+20"},
      {std::numeric_limits<double>::infinity(), "+Inf"},
      {-std::numeric_limits<double>::infinity(), "-Inf"},
      {std::nan(""), "NaN"},
  };
  for (const Case& c : cases) EXPECT_EQ(FormatValue(c.in), c.out) << c.in;
}

TEST(PrometheusTextTest, Names) {
  EXPECT_TRUE(ValidMetricName("berth_jobs"));
  EXPECT_TRUE(ValidMetricName("a:b_c9"));
  EXPECT_FALSE(ValidMetricName(""));
  EXPECT_FALSE(ValidMetricName("9a"));
  EXPECT_FALSE(ValidMetricName("berth-jobs"));
  EXPECT_TRUE(ValidLabelName("state"));
  EXPECT_TRUE(ValidLabelName("_x"));
  EXPECT_FALSE(ValidLabelName("a:b"));
  EXPECT_FALSE(ValidLabelName("__name__"));
  EXPECT_FALSE(ValidLabelName("1a"));
}

TEST(PrometheusTextTest, CountersAndGauges) {
  TextEncoder e;
  e.Family("berth_job_submissions_total", MetricType::kCounter, "Jobs submitted.");
  e.Sample({{"face", "slurm"}}, 2);
  e.Sample({{"face", "kubernetes"}}, 0);
  e.Family("berth_agents_connected", MetricType::kGauge, "Agents.\nTwo lines \\ here.");
  e.Sample(1);
  e.Family("berth_jobs", MetricType::kGauge, "Jobs.");
  e.Sample({{"partition", "a\"b"}, {"state", "PENDING"}}, 0.5);
  ASSERT_TRUE(e.status().ok()) << e.status().ToString();
  EXPECT_EQ(e.text(),
            "# HELP berth_job_submissions_total Jobs submitted.\n"
            "# TYPE berth_job_submissions_total counter\n"
            "berth_job_submissions_total{face=\"slurm\"} 2\n"
            "berth_job_submissions_total{face=\"kubernetes\"} 0\n"
            "# HELP berth_agents_connected Agents.\\nTwo lines \\\\ here.\n"
            "# TYPE berth_agents_connected gauge\n"
            "berth_agents_connected 1\n"
            "# HELP berth_jobs Jobs.\n"
            "# TYPE berth_jobs gauge\n"
            "berth_jobs{partition=\"a\\\"b\",state=\"PENDING\"} 0.5\n");
}

TEST(PrometheusTextTest, HistogramBucketsAreCumulative) {
  Histogram h({0.01, 0.1, 1});
  EXPECT_EQ(h.bucket_counts().size(), 4u);
  h.Observe(0.005);
  h.Observe(0.01);  // on a bound: counted in that bucket (le is "less or equal")
  h.Observe(0.5);
  h.Observe(7);
  EXPECT_EQ(h.count(), 4u);
  EXPECT_EQ(h.bucket_counts(), (std::vector<uint64_t>{2, 0, 1, 1}));
  TextEncoder e;
  e.Family("berth_scheduling_pass_duration_seconds", MetricType::kHistogram, "Pass time.");
  e.HistogramSample({}, h);
  e.Family("berth_x_seconds", MetricType::kHistogram, "With labels.");
  e.HistogramSample({{"kind", "a"}}, Histogram({2.5}));
  ASSERT_TRUE(e.status().ok()) << e.status().ToString();
  EXPECT_EQ(e.text(),
            "# HELP berth_scheduling_pass_duration_seconds Pass time.\n"
            "# TYPE berth_scheduling_pass_duration_seconds histogram\n"
            "berth_scheduling_pass_duration_seconds_bucket{le=\"0.01\"} 2\n"
            "berth_scheduling_pass_duration_seconds_bucket{le=\"0.1\"} 2\n"
            "berth_scheduling_pass_duration_seconds_bucket{le=\"1\"} 3\n"
            "berth_scheduling_pass_duration_seconds_bucket{le=\"+Inf\"} 4\n"
            "berth_scheduling_pass_duration_seconds_sum 7.515\n"
            "berth_scheduling_pass_duration_seconds_count 4\n"
            "# HELP berth_x_seconds With labels.\n"
            "# TYPE berth_x_seconds histogram\n"
            "berth_x_seconds_bucket{kind=\"a\",le=\"2.5\"} 0\n"
            "berth_x_seconds_bucket{kind=\"a\",le=\"+Inf\"} 0\n"
            "berth_x_seconds_sum{kind=\"a\"} 0\n"
            "berth_x_seconds_count{kind=\"a\"} 0\n");
}

TEST(PrometheusTextTest, MisuseKeepsTheFirstErrorAndLeavesTheLineOut) {
  struct Case {
    const char* what;
    void (*run)(TextEncoder&);
    StatusCode code;
  };
  const Case cases[] = {
      {"sample before a family", [](TextEncoder& e) { e.Sample(1); },
       StatusCode::kFailedPrecondition},
      {"bad metric name", [](TextEncoder& e) { e.Family("berth-jobs", MetricType::kGauge, "x"); },
       StatusCode::kInvalidArgument},
      {"family twice",
       [](TextEncoder& e) {
         e.Family("berth_a", MetricType::kGauge, "x");
         e.Family("berth_a", MetricType::kGauge, "x");
       },
       StatusCode::kInvalidArgument},
      {"bad label name",
       [](TextEncoder& e) {
         e.Family("berth_a", MetricType::kGauge, "x");
         e.Sample({{"a-b", "1"}}, 1);
       },
       StatusCode::kInvalidArgument},
      {"label twice",
       [](TextEncoder& e) {
         e.Family("berth_a", MetricType::kGauge, "x");
         e.Sample({{"a", "1"}, {"a", "2"}}, 1);
       },
       StatusCode::kInvalidArgument},
      {"le on a histogram",
       [](TextEncoder& e) {
         e.Family("berth_a_seconds", MetricType::kHistogram, "x");
         e.HistogramSample({{"le", "1"}}, Histogram({1}));
       },
       StatusCode::kInvalidArgument},
      {"plain sample in a histogram",
       [](TextEncoder& e) {
         e.Family("berth_a_seconds", MetricType::kHistogram, "x");
         e.Sample(1);
       },
       StatusCode::kFailedPrecondition},
      {"histogram sample in a gauge",
       [](TextEncoder& e) {
         e.Family("berth_a", MetricType::kGauge, "x");
         e.HistogramSample({}, Histogram({1}));
       },
       StatusCode::kFailedPrecondition},
  };
  for (const Case& c : cases) {
    TextEncoder e;
    c.run(e);
    EXPECT_EQ(e.status().code(), c.code) << c.what;
    EXPECT_EQ(e.text().find("} 1\n"), std::string::npos) << c.what;
    EXPECT_EQ(e.text().find(" 1\n"), std::string::npos) << c.what;
  }
  // The first error stays; later good lines are still written.
  TextEncoder e;
  e.Family("bad name", MetricType::kGauge, "x");
  e.Family("berth_a", MetricType::kGauge, "x");
  e.Sample({{"x", "y"}}, 2);
  e.Sample({{"__x", "y"}}, 3);
  EXPECT_EQ(e.status().message(), "invalid metric name 'bad name'");
  EXPECT_NE(e.text().find("berth_a{x=\"y\"} 2\n"), std::string::npos);
  EXPECT_EQ(e.text().find(" 3\n"), std::string::npos);
}

}  // namespace
}  // namespace berth::prometheus
