#include "common/prometheus_text.h"

#include <charconv>
#include <cmath>
#include <cstdlib>

namespace berth::prometheus {

namespace {

bool NameChar(char c, bool first, bool colon) {
  const bool letter = (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || c == '_';
  const bool digit = c >= '0' && c <= '9';
  return letter || (colon && c == ':') || (!first && digit);
}

bool ValidName(std::string_view name, bool colon) {
  if (name.empty()) return false;
  for (size_t i = 0; i < name.size(); ++i) {
    if (!NameChar(name[i], i == 0, colon)) return false;
  }
  return true;
}

std::string_view TypeName(MetricType t) {
  switch (t) {
    case MetricType::kCounter:
      return "counter";
    case MetricType::kGauge:
      return "gauge";
    case MetricType::kHistogram:
      return "histogram";
  }
  return "untyped";
}

}  // namespace

std::string EscapeLabelValue(std::string_view value) {
  std::string out;
  out.reserve(value.size());
  for (char c : value) {
    if (c == '\\') {
      out += "\\\\";
    } else if (c == '"') {
      out += "\\\"";
    } else if (c == '\n') {
      out += "\\n";
    } else {
      out += c;
    }
  }
  return out;
}

std::string EscapeHelp(std::string_view help) {
  std::string out;
  out.reserve(help.size());
  for (char c : help) {
    if (c == '\\') {
      out += "\\\\";
    } else if (c == '\n') {
      out += "\\n";
    } else {
      out += c;
    }
  }
  return out;
}

std::string FormatValue(double value) {
  if (std::isnan(value)) return "NaN";
  if (std::isinf(value)) return value > 0 ? "+Inf" : "-Inf";
  constexpr double kExactIntegers = 9007199254740992.0;  // 2^53
  if (value == std::trunc(value) && std::fabs(value) <= kExactIntegers) {
    return std::to_string(static_cast<int64_t>(value));
  }
  // The shortest digits that read back the same; plain decimals for exponents -4..15 ("0.0005",
  // as Prometheus's own client libraries write bucket bounds), scientific otherwise ("1.5e-07").
  char buf[64];
  auto [end, ec] = std::to_chars(buf, buf + sizeof(buf), value, std::chars_format::scientific);
  if (ec != std::errc()) return "NaN";
  const std::string scientific(buf, end);
  const int exponent = std::atoi(scientific.c_str() + scientific.find('e') + 1);
  if (exponent < -4 || exponent > 15) return scientific;
  auto [fixed_end, fixed_ec] =
      std::to_chars(buf, buf + sizeof(buf), value, std::chars_format::fixed);
  return fixed_ec == std::errc() ? std::string(buf, fixed_end) : scientific;
}

bool ValidMetricName(std::string_view name) {
  return ValidName(name, /*colon=*/true);
}

bool ValidLabelName(std::string_view name) {
  return ValidName(name, /*colon=*/false) && name.substr(0, 2) != "__";
}

Histogram::Histogram(std::vector<double> upper_bounds)
    : upper_bounds_(std::move(upper_bounds)), counts_(upper_bounds_.size() + 1, 0) {}

void Histogram::Observe(double value) {
  size_t i = 0;
  while (i < upper_bounds_.size() && value > upper_bounds_[i]) ++i;
  ++counts_[i];
  sum_ += value;
  ++count_;
}

void TextEncoder::Fail(Status s) {
  if (status_.ok()) status_ = std::move(s);
}

void TextEncoder::Family(std::string_view name, MetricType type, std::string_view help) {
  in_family_ = false;
  if (!ValidMetricName(name)) {
    Fail(Status::InvalidArgument("invalid metric name '" + std::string(name) + "'"));
    return;
  }
  if (!families_.emplace(name).second) {
    Fail(Status::InvalidArgument("metric family '" + std::string(name) + "' written twice"));
    return;
  }
  current_ = name;
  current_type_ = type;
  in_family_ = true;
  text_ += "# HELP ";
  text_ += name;
  text_ += ' ';
  text_ += EscapeHelp(help);
  text_ += "\n# TYPE ";
  text_ += name;
  text_ += ' ';
  text_ += TypeName(type);
  text_ += '\n';
}

bool TextEncoder::CheckLabels(const Labels& labels) {
  for (size_t i = 0; i < labels.size(); ++i) {
    const std::string& name = labels[i].first;
    if (!ValidLabelName(name)) {
      Fail(Status::InvalidArgument("invalid label name '" + name + "' in " + current_));
      return false;
    }
    for (size_t j = 0; j < i; ++j) {
      if (labels[j].first == name) {
        Fail(Status::InvalidArgument("label '" + name + "' given twice in " + current_));
        return false;
      }
    }
  }
  return true;
}

void TextEncoder::AppendSample(std::string_view name, const Labels& labels, const std::string* le,
                               double value) {
  text_ += name;
  if (!labels.empty() || le != nullptr) {
    text_ += '{';
    bool first = true;
    for (const auto& [k, v] : labels) {
      if (!first) text_ += ',';
      first = false;
      text_ += k;
      text_ += "=\"";
      text_ += EscapeLabelValue(v);
      text_ += '"';
    }
    if (le != nullptr) {
      if (!first) text_ += ',';
      text_ += "le=\"";
      text_ += *le;
      text_ += '"';
    }
    text_ += '}';
  }
  text_ += ' ';
  text_ += FormatValue(value);
  text_ += '\n';
}

void TextEncoder::Sample(const Labels& labels, double value) {
  if (!in_family_ || current_type_ == MetricType::kHistogram) {
    Fail(Status::FailedPrecondition(in_family_ ? "a plain sample in histogram " + current_
                                               : "a sample before any family"));
    return;
  }
  if (!CheckLabels(labels)) return;
  AppendSample(current_, labels, nullptr, value);
}

void TextEncoder::HistogramSample(const Labels& labels, const Histogram& h) {
  if (!in_family_ || current_type_ != MetricType::kHistogram) {
    Fail(Status::FailedPrecondition(in_family_ ? "a histogram sample in " + current_
                                               : "a histogram sample before any family"));
    return;
  }
  if (!CheckLabels(labels)) return;
  for (const auto& label : labels) {
    if (label.first == "le") {
      Fail(Status::InvalidArgument("histogram " + current_ + " has a label named 'le'"));
      return;
    }
  }
  const std::string bucket = current_ + "_bucket";
  uint64_t cumulative = 0;
  for (size_t i = 0; i < h.bucket_counts().size(); ++i) {
    cumulative += h.bucket_counts()[i];
    const std::string le =
        i < h.upper_bounds().size() ? FormatValue(h.upper_bounds()[i]) : std::string("+Inf");
    AppendSample(bucket, labels, &le, static_cast<double>(cumulative));
  }
  AppendSample(current_ + "_sum", labels, nullptr, h.sum());
  AppendSample(current_ + "_count", labels, nullptr, static_cast<double>(h.count()));
}

}  // namespace berth::prometheus
