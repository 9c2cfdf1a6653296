// Prometheus's text exposition format, version 0.0.4 (what GET /metrics answers on the controller
// and on agents; docs/metrics.md lists the metrics): `# HELP` and `# TYPE` lines, samples with
// escaped label values, and histograms as cumulative `_bucket{le="..."}` series with `_sum` and
// `_count`.
//
//   prometheus::TextEncoder e;
//   e.Family("berth_jobs", prometheus::MetricType::kGauge, "Jobs in the live view.");
//   e.Sample({{"state", "RUNNING"}}, 3);
//   if (!e.status().ok()) ...;  // a bad name, a family twice, a sample before any family
//   std::string body = e.text();
//
// Thread safety: TextEncoder and Histogram are values with no locking; each function is pure.
#ifndef BERTH_COMMON_PROMETHEUS_TEXT_H_
#define BERTH_COMMON_PROMETHEUS_TEXT_H_

#include <cstdint>
#include <set>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "common/status.h"

namespace berth::prometheus {

// The Content-Type of a body in this format.
inline constexpr std::string_view kContentType = "text/plain; version=0.0.4; charset=utf-8";

enum class MetricType { kCounter, kGauge, kHistogram };

// Label names and values, in the order they are written.
using Labels = std::vector<std::pair<std::string, std::string>>;

// A label value as written between the quotes: backslash, double quote and line feed escaped
// (\\, \", \n); everything else as is (the format is UTF-8).
std::string EscapeLabelValue(std::string_view value);
// HELP text as written after the name: backslash and line feed escaped.
std::string EscapeHelp(std::string_view help);
// A sample value: integral values up to 2^53 in plain digits ("3", "-2"), others with the fewest
// digits that read back the same, as plain decimals for exponents -4 to 15 ("0.25", "0.0005")
// and in scientific notation beyond ("1.5e-07", "1e+20"); and "+Inf", "-Inf", "NaN".
std::string FormatValue(double value);
// Metric names match [a-zA-Z_:][a-zA-Z0-9_:]*; label names [a-zA-Z_][a-zA-Z0-9_]* and do not
// start with "__" (reserved for Prometheus itself).
bool ValidMetricName(std::string_view name);
bool ValidLabelName(std::string_view name);

// A histogram's observations in fixed buckets, as Prometheus's client libraries keep them.
class Histogram {
 public:
  // REQUIRES: `upper_bounds` is strictly increasing and finite (+Inf is always the last bucket).
  explicit Histogram(std::vector<double> upper_bounds);

  // Counts `value` in the first bucket whose upper bound is >= value (+Inf otherwise).
  void Observe(double value);

  const std::vector<double>& upper_bounds() const { return upper_bounds_; }
  // Observations per bucket, not cumulative: upper_bounds().size() + 1 entries, the last for
  // values above every bound.
  const std::vector<uint64_t>& bucket_counts() const { return counts_; }
  double sum() const { return sum_; }
  uint64_t count() const { return count_; }

 private:
  std::vector<double> upper_bounds_;
  std::vector<uint64_t> counts_;
  double sum_ = 0;
  uint64_t count_ = 0;
};

// Builds one exposition. Families are written in the order they are begun; each family's samples
// follow its HELP and TYPE lines. Misuse does not abort: the first error is kept in status()
// (kInvalidArgument for a bad metric or label name, a family begun twice, a histogram label
// named "le"; kFailedPrecondition for a sample outside a family of the matching type) and the
// offending line is left out.
class TextEncoder {
 public:
  // Writes `# HELP name help` and `# TYPE name type`; later samples belong to this family.
  void Family(std::string_view name, MetricType type, std::string_view help);
  // A counter's or gauge's sample: `name{labels} value` (no braces without labels).
  // REQUIRES: the current family is a counter or a gauge.
  void Sample(const Labels& labels, double value);
  void Sample(double value) { Sample({}, value); }
  // A histogram's series for one label set: `name_bucket{labels,le="b"}` for each upper bound and
  // "+Inf" (cumulative counts), then `name_sum{labels}` and `name_count{labels}`.
  // REQUIRES: the current family is a histogram.
  void HistogramSample(const Labels& labels, const Histogram& h);

  const Status& status() const { return status_; }
  const std::string& text() const { return text_; }

 private:
  bool CheckLabels(const Labels& labels);
  void Fail(Status s);
  void AppendSample(std::string_view name, const Labels& labels, const std::string* le,
                    double value);

  std::string text_;
  Status status_;
  std::set<std::string, std::less<>> families_;
  std::string current_;
  MetricType current_type_ = MetricType::kGauge;
  bool in_family_ = false;
};

}  // namespace berth::prometheus

#endif  // BERTH_COMMON_PROMETHEUS_TEXT_H_
