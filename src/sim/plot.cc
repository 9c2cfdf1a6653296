#include "sim/plot.h"

#include <algorithm>
#include <cerrno>
#include <charconv>
#include <cmath>
#include <cstdio>
#include <filesystem>
#include <string_view>
#include <system_error>
#include <utility>

#include "common/markup.h"

namespace berth::sim {
namespace {

// Canvas and plot area, in SVG user units (pixels). The legend sits right of the plot.
constexpr double kWidth = 960;
constexpr double kHeight = 540;
constexpr double kLeft = 80;
constexpr double kTop = 50;
constexpr double kPlotWidth = 660;
constexpr double kPlotHeight = 400;

// Colour-blind-safe (Okabe-Ito), then repeats.
constexpr std::string_view kColors[] = {"#0072B2", "#D55E00", "#009E73", "#CC79A7",
                                        "#E69F00", "#56B4E9", "#F0E442", "#000000"};

std::string Num(double v) {
  char buf[32];
  auto [ptr, ec] = std::to_chars(buf, buf + sizeof(buf), v, std::chars_format::fixed, 1);
  if (ec != std::errc()) return "0";
  return std::string(buf, ptr);
}

// A chart: axes, ticks, title, legend and data lines, each coordinate mapped to the plot area.
class Chart {
 public:
  Chart(std::string_view title, std::string_view x_label, std::string_view y_label) {
    out_ += "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n";
    out_ += "<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"" + Num(kWidth) + "\" height=\"" +
            Num(kHeight) + "\" viewBox=\"0 0 " + Num(kWidth) + " " + Num(kHeight) +
            "\" font-family=\"sans-serif\" font-size=\"12\">\n";
    out_ += "<rect width=\"100%\" height=\"100%\" fill=\"white\"/>\n";
    Text(kLeft + kPlotWidth / 2, 28, title, "middle", 16);
    Text(kLeft + kPlotWidth / 2, kTop + kPlotHeight + 45, x_label, "middle", 12);
    out_ += "<text transform=\"translate(22," + Num(kTop + kPlotHeight / 2) +
            ") rotate(-90)\" text-anchor=\"middle\">" + EscapeMarkup(y_label) + "</text>\n";
    out_ += "<rect x=\"" + Num(kLeft) + "\" y=\"" + Num(kTop) + "\" width=\"" + Num(kPlotWidth) +
            "\" height=\"" + Num(kPlotHeight) + "\" fill=\"none\" stroke=\"#333\"/>\n";
  }

  // fx and fy are fractions of the plot area: (0,0) bottom left, (1,1) top right.
  static double X(double fx) { return kLeft + fx * kPlotWidth; }
  static double Y(double fy) { return kTop + (1 - fy) * kPlotHeight; }

  void XTick(double fx, std::string_view label) {
    Line(X(fx), Y(0), X(fx), Y(1), "#ddd");
    Text(X(fx), Y(0) + 18, label, "middle", 11);
  }
  void YTick(double fy, std::string_view label) {
    Line(X(0), Y(fy), X(1), Y(fy), "#ddd");
    Text(X(0) - 6, Y(fy) + 4, label, "end", 11);
  }

  // A data line through (fx, fy) points, and its legend entry.
  void Series(const std::vector<std::pair<double, double>>& points, std::string_view label) {
    const std::string_view color = kColors[series_ % std::size(kColors)];
    const double ly = kTop + 10 + 20 * static_cast<double>(series_);
    ++series_;
    Line(kLeft + kPlotWidth + 20, ly, kLeft + kPlotWidth + 44, ly, color, 2.5);
    Text(kLeft + kPlotWidth + 50, ly + 4, label, "start", 12);
    if (points.empty()) return;
    out_ += "<polyline fill=\"none\" stroke=\"" + std::string(color) +
            "\" stroke-width=\"1.5\" points=\"";
    for (const auto& [fx, fy] : points) out_ += Num(X(fx)) + "," + Num(Y(fy)) + " ";
    out_.back() = '"';
    out_ += "/>\n";
  }

  void Note(std::string_view text) { Text(X(0.5), Y(0.5), text, "middle", 14); }

  std::string Finish() && {
    out_ += "</svg>\n";
    return std::move(out_);
  }

 private:
  void Line(double x1, double y1, double x2, double y2, std::string_view color, double width = 1) {
    out_ += "<line x1=\"" + Num(x1) + "\" y1=\"" + Num(y1) + "\" x2=\"" + Num(x2) + "\" y2=\"" +
            Num(y2) + "\" stroke=\"" + std::string(color) + "\" stroke-width=\"" + Num(width) +
            "\"/>\n";
  }
  void Text(double x, double y, std::string_view text, std::string_view anchor, int size) {
    out_ += "<text x=\"" + Num(x) + "\" y=\"" + Num(y) + "\" text-anchor=\"" + std::string(anchor) +
            "\" font-size=\"" + std::to_string(size) + "\">" + EscapeMarkup(text) + "</text>\n";
  }

  std::string out_;
  size_t series_ = 0;
};

bool UsesGpus(const std::vector<PolicyRun>& runs) {
  for (const PolicyRun& run : runs) {
    if (run.capacity_gpus <= 0) continue;
    for (const JobResult& j : run.jobs) {
      if (j.gpus > 0) return true;
    }
  }
  return false;
}

// The time axis: a unit that keeps the numbers small, and a 1-2-5 step giving 4 to 10 ticks.
struct TimeAxis {
  double unit = 1;
  std::string_view suffix = "s";
  double step = 1;
};

TimeAxis ChooseTimeAxis(double span_s) {
  TimeAxis axis;
  if (span_s >= 3 * 86400) {
    axis = {86400, "d", 1};
  } else if (span_s >= 3 * 3600) {
    axis = {3600, "h", 1};
  } else if (span_s >= 180) {
    axis = {60, "min", 1};
  }
  const double span = span_s / axis.unit;
  double magnitude = std::pow(10.0, std::floor(std::log10(std::max(span, 1e-9))) - 1);
  for (double m : {1.0, 2.0, 5.0, 10.0, 20.0, 50.0, 100.0}) {
    axis.step = m * magnitude;
    if (span / axis.step <= 8) break;
  }
  return axis;
}

std::string TickLabel(double value, std::string_view suffix) {
  char buf[32];
  auto [ptr, ec] = std::to_chars(buf, buf + sizeof(buf), value);
  if (ec != std::errc()) return std::string(suffix);
  return std::string(buf, ptr) + std::string(suffix);
}

// The average allocation in each of `buckets` equal slices of [t0, t1], by a sweep over the
// jobs' start (+) and end (-) events.
std::vector<double> BucketAverages(const std::vector<JobResult>& jobs, bool gpus, Time t0, Time t1,
                                   int buckets) {
  std::vector<std::pair<Time, int64_t>> events;
  events.reserve(jobs.size() * 2);
  for (const JobResult& j : jobs) {
    const int64_t amount = gpus ? j.gpus : j.procs;
    if (j.end <= j.start || amount <= 0) continue;
    events.emplace_back(j.start, amount);
    events.emplace_back(j.end, -amount);
  }
  std::sort(events.begin(), events.end());
  std::vector<double> averages(static_cast<size_t>(buckets));
  const long double span = static_cast<long double>(t1 - t0);
  long double level = 0;
  long double now = static_cast<long double>(t0);
  size_t e = 0;
  for (int k = 0; k < buckets; ++k) {
    const long double begin = now;
    const long double end = t0 + span * (k + 1) / buckets;
    long double area = 0;
    for (; e < events.size() && events[e].first <= end; ++e) {
      const long double at = std::max(now, static_cast<long double>(events[e].first));
      area += level * (at - now);
      now = at;
      level += static_cast<long double>(events[e].second);
    }
    area += level * (end - now);
    now = end;
    averages[static_cast<size_t>(k)] = end > begin ? static_cast<double>(area / (end - begin)) : 0;
  }
  return averages;
}

void TimeRange(const std::vector<PolicyRun>& runs, Time* t0, Time* t1) {
  bool any = false;
  for (const PolicyRun& run : runs) {
    for (const JobResult& j : run.jobs) {
      *t0 = any ? std::min(*t0, j.submit) : j.submit;
      *t1 = any ? std::max(*t1, j.end) : j.end;
      any = true;
    }
  }
}

// Waits sorted ascending, negative ones (bad input) counted as 0.
std::vector<int64_t> SortedWaits(const std::vector<JobResult>& jobs) {
  std::vector<int64_t> waits;
  waits.reserve(jobs.size());
  for (const JobResult& j : jobs) waits.push_back(std::max<int64_t>(0, j.start - j.submit));
  std::sort(waits.begin(), waits.end());
  return waits;
}

Status WriteFile(const std::filesystem::path& path, const std::string& text) {
  std::FILE* file = std::fopen(path.c_str(), "wb");
  if (file == nullptr) {
    return Status::InvalidArgument("cannot write '" + path.string() +
                                   "': " + std::generic_category().message(errno));
  }
  const bool written = std::fwrite(text.data(), 1, text.size(), file) == text.size();
  const int write_error = errno;
  const bool closed = std::fclose(file) == 0;
  if (!written || !closed) {
    return Status::InvalidArgument("cannot write '" + path.string() +
                                   "': " + std::generic_category().message(write_error));
  }
  return Status::Ok();
}

}  // namespace

std::string UtilizationSvg(const std::vector<PolicyRun>& runs) {
  const bool gpus = UsesGpus(runs);
  const std::string_view what = gpus ? "GPUs" : "CPUs";
  Chart chart(std::string("Allocated ") + std::string(what) + " over time",
              "time since the first submission", std::string(what) + " allocated / capacity");
  Time t0 = 0, t1 = 0;
  TimeRange(runs, &t0, &t1);
  const int buckets = static_cast<int>(std::clamp<Time>(t1 - t0, 1, kMaxPlotBuckets));
  std::vector<std::vector<double>> lines;
  double top = 1;
  for (const PolicyRun& run : runs) {
    const int64_t capacity = gpus ? run.capacity_gpus : run.capacity_procs;
    std::vector<double> fractions;
    if (capacity > 0 && t1 > t0) {
      fractions = BucketAverages(run.jobs, gpus, t0, t1, buckets);
      for (double& f : fractions) f /= static_cast<double>(capacity);
      for (double f : fractions) top = std::max(top, std::ceil(f * 4) / 4);
    }
    lines.push_back(std::move(fractions));
  }
  // Ticks every 25%, thinned to at most ~8 when a run overshoots its capacity (a bug elsewhere
  // that the plot should show, not hide).
  const int64_t quarters = std::lround(top * 4);
  const int64_t stride = std::max<int64_t>(1, (quarters + 7) / 8);
  for (int64_t quarter = 0; quarter <= quarters; quarter += stride) {
    chart.YTick(static_cast<double>(quarter) / 4.0 / top, std::to_string(quarter * 25) + "%");
  }
  const double span = static_cast<double>(std::max<Time>(t1 - t0, 1));
  const TimeAxis axis = ChooseTimeAxis(span);
  for (int i = 0; i * axis.step * axis.unit <= span + 1e-9; ++i) {
    const double t = i * axis.step;
    chart.XTick(t * axis.unit / span, TickLabel(t, axis.suffix));
  }
  for (size_t r = 0; r < runs.size(); ++r) {
    std::vector<std::pair<double, double>> points;
    points.reserve(lines[r].size());
    for (size_t k = 0; k < lines[r].size(); ++k) {
      points.emplace_back((static_cast<double>(k) + 0.5) / buckets, lines[r][k] / top);
    }
    chart.Series(points, runs[r].policy);
  }
  if (t1 <= t0) chart.Note("no jobs");
  return std::move(chart).Finish();
}

std::string WaitCdfSvg(const std::vector<PolicyRun>& runs) {
  struct Tick {
    double seconds;
    std::string_view label;
  };
  static constexpr Tick kTicks[] = {
      {1, "1s"},      {10, "10s"},   {60, "1m"},      {600, "10m"},      {3600, "1h"},
      {36000, "10h"}, {86400, "1d"}, {864000, "10d"}, {8640000, "100d"}, {86400000, "1000d"}};
  Chart chart("Wait time distribution", "wait (log scale; waits under 1 s at the left edge)",
              "fraction of jobs waiting at most this long");
  std::vector<std::vector<int64_t>> waits;
  int64_t longest = 0;
  for (const PolicyRun& run : runs) {
    waits.push_back(SortedWaits(run.jobs));
    if (!waits.back().empty()) longest = std::max(longest, waits.back().back());
  }
  // The axis ends at the first tick at or above the longest wait (at least 10 s).
  double x_max = 10;
  for (const Tick& t : kTicks) {
    x_max = t.seconds;
    if (t.seconds >= static_cast<double>(longest) && t.seconds >= 10) break;
  }
  x_max = std::max(x_max, static_cast<double>(longest));
  const double log_max = std::log10(x_max);
  for (const Tick& t : kTicks) {
    if (t.seconds <= x_max) chart.XTick(std::log10(t.seconds) / log_max, t.label);
  }
  for (int q = 0; q <= 4; ++q) chart.YTick(q / 4.0, std::to_string(q * 25) + "%");
  constexpr int kSamples = kMaxPlotBuckets;
  for (size_t r = 0; r < runs.size(); ++r) {
    const std::vector<int64_t>& w = waits[r];
    std::vector<std::pair<double, double>> points;
    for (int s = 0; s <= kSamples && !w.empty(); ++s) {
      const double fx = static_cast<double>(s) / kSamples;
      const double x = std::pow(10.0, fx * log_max);
      const auto below = std::upper_bound(w.begin(), w.end(), static_cast<int64_t>(std::floor(x)));
      points.emplace_back(fx, static_cast<double>(below - w.begin()) / w.size());
    }
    chart.Series(points, runs[r].policy);
  }
  if (longest == 0 &&
      std::all_of(waits.begin(), waits.end(), [](const auto& w) { return w.empty(); })) {
    chart.Note("no jobs");
  }
  return std::move(chart).Finish();
}

namespace {

// A round axis end at or above `top` and its tick step: 1, 2 or 5 x 10^k, 4 to 10 ticks.
std::pair<double, double> NiceAxis(double top) {
  top = std::max(top, 1e-9);
  const double magnitude = std::pow(10.0, std::floor(std::log10(top)) - 1);
  double step = magnitude;
  for (double m : {1.0, 2.0, 5.0, 10.0, 20.0, 50.0, 100.0}) {
    step = m * magnitude;
    if (top / step <= 10) break;
  }
  return {std::ceil(top / step - 1e-9) * step, step};
}

}  // namespace

std::string LineChartSvg(std::string_view title, std::string_view x_label, std::string_view y_label,
                         const std::vector<LineSeries>& series, double x_min) {
  Chart chart(title, x_label, y_label);
  double x_top = x_min, y_top = 0;
  for (const LineSeries& s : series) {
    for (const auto& [x, y] : s.points) {
      if (x < x_min) continue;
      x_top = std::max(x_top, x);
      y_top = std::max(y_top, y);
    }
  }
  const auto [x_span, x_step] = NiceAxis(x_top - x_min);
  const auto [y_end, y_step] = NiceAxis(y_top);
  for (double x = 0; x <= x_span + x_step / 2; x += x_step) {
    chart.XTick(x / x_span, TickLabel(x_min + x, ""));
  }
  for (double y = 0; y <= y_end + y_step / 2; y += y_step) {
    chart.YTick(y / y_end, TickLabel(y, ""));
  }
  for (const LineSeries& s : series) {
    std::vector<std::pair<double, double>> points;
    points.reserve(s.points.size());
    for (const auto& [x, y] : s.points) {
      if (x >= x_min) points.emplace_back((x - x_min) / x_span, y / y_end);
    }
    chart.Series(points, s.label);
  }
  return std::move(chart).Finish();
}

Status WriteSvg(const std::string& dir, const std::string& file, const std::string& svg) {
  const std::filesystem::path path(dir);
  std::error_code ec;
  std::filesystem::create_directories(path, ec);
  if (ec || !std::filesystem::is_directory(path, ec)) {
    return Status::InvalidArgument("cannot create the plot directory '" + dir +
                                   "': " + (ec ? ec.message() : "not a directory"));
  }
  return WriteFile(path / file, svg);
}

Status WritePlots(const std::string& dir, const std::vector<PolicyRun>& runs) {
  const std::filesystem::path path(dir);
  std::error_code ec;
  std::filesystem::create_directories(path, ec);
  if (ec || !std::filesystem::is_directory(path, ec)) {
    return Status::InvalidArgument("cannot create the plot directory '" + dir +
                                   "': " + (ec ? ec.message() : "not a directory"));
  }
  BERTH_RETURN_IF_ERROR(WriteFile(path / "utilization.svg", UtilizationSvg(runs)));
  BERTH_RETURN_IF_ERROR(WriteFile(path / "wait_cdf.svg", WaitCdfSvg(runs)));
  return Status::Ok();
}

}  // namespace berth::sim
