#include "sim/plot.h"

#include <gtest/gtest.h>

#include <cstdio>
#include <filesystem>
#include <fstream>
#include <map>
#include <sstream>
#include <string>
#include <vector>

namespace berth::sim {
namespace {

// A small well-formedness check: tags nest and close, attribute values are quoted, text holds
// no raw '<' and no '&' outside an entity. Returns "" when well-formed, else the problem, and
// counts each element name in *elements.
std::string CheckXml(const std::string& xml, std::map<std::string, int>* elements) {
  std::vector<std::string> open;
  size_t i = 0;
  if (xml.rfind("<?xml ", 0) == 0) i = xml.find("?>") + 2;
  while (i < xml.size()) {
    if (xml[i] != '<') {
      if (xml[i] == '&') {
        size_t semi = xml.find(';', i);
        const std::string entity = xml.substr(i, semi - i + 1);
        if (entity != "&amp;" && entity != "&lt;" && entity != "&gt;" && entity != "&quot;" &&
            entity != "&apos;") {
          return "bad entity at " + std::to_string(i);
        }
      }
      ++i;
      continue;
    }
    size_t end = xml.find('>', i);
    if (end == std::string::npos) return "unclosed tag at " + std::to_string(i);
    std::string tag = xml.substr(i + 1, end - i - 1);
    i = end + 1;
    if (tag.empty()) return "empty tag";
    if (tag[0] == '/') {
      if (open.empty() || open.back() != tag.substr(1)) return "mismatched </" + tag + ">";
      open.pop_back();
      continue;
    }
    const bool self_closing = tag.back() == '/';
    if (self_closing) tag.pop_back();
    const std::string name = tag.substr(0, tag.find_first_of(" \n"));
    // Attributes: name="value" pairs, values without '<'.
    for (size_t q = tag.find('='); q != std::string::npos; q = tag.find('=', q + 1)) {
      if (q + 1 >= tag.size() || tag[q + 1] != '"') return "unquoted attribute in <" + name;
      size_t close = tag.find('"', q + 2);
      if (close == std::string::npos) return "unterminated attribute in <" + name;
      if (tag.substr(q + 2, close - q - 2).find('<') != std::string::npos) return "'<' in value";
      q = close;
    }
    ++(*elements)[name];
    if (open.empty() && (*elements)[name] > 1 && name == "svg") return "two roots";
    if (!self_closing) open.push_back(name);
  }
  if (!open.empty()) return "unclosed <" + open.back() + ">";
  return "";
}

std::string ReadFile(const std::filesystem::path& path) {
  std::ifstream in(path);
  std::stringstream s;
  s << in.rdbuf();
  return s.str();
}

JobResult Ran(Time submit, Time start, Time end, int64_t procs, int64_t gpus = 0) {
  JobResult j;
  j.submit = submit;
  j.start = start;
  j.end = end;
  j.procs = procs;
  j.gpus = gpus;
  return j;
}

std::filesystem::path FreshDir(const std::string& name) {
  std::filesystem::path dir = std::filesystem::path(::testing::TempDir()) / name;
  std::filesystem::remove_all(dir);
  return dir / "nested";
}

// Removes a FreshDir's folder when the test ends, however it ends.
struct RemovedAtEnd {
  std::filesystem::path dir;
  ~RemovedAtEnd() {
    std::error_code ignored;
    std::filesystem::remove_all(dir.parent_path(), ignored);
  }
};

TEST(PlotTest, WritesTwoWellFormedSvgsWithOneLinePerPolicy) {
  std::vector<PolicyRun> runs(2);
  runs[0].policy = "fcfs";
  runs[1].policy = "easy <backfill> & \"friends\"";
  for (PolicyRun& run : runs) {
    run.capacity_procs = 100;
    for (int i = 0; i < 5000; ++i) {
      const Time submit = Time{i} * 600;
      const Time wait = (Time{i} * 7919) % 86400 * (&run == &runs[0] ? 2 : 1);
      run.jobs.push_back(Ran(submit, submit + wait, submit + wait + 3600, 1 + i % 40));
    }
  }
  const std::filesystem::path dir = FreshDir("berth_plot_test");
  const RemovedAtEnd cleanup{dir};
  ASSERT_TRUE(WritePlots(dir.string(), runs).ok());
  for (const char* file : {"utilization.svg", "wait_cdf.svg"}) {
    const std::string svg = ReadFile(dir / file);
    ASSERT_FALSE(svg.empty()) << file;
    std::map<std::string, int> elements;
    EXPECT_EQ(CheckXml(svg, &elements), "") << file;
    EXPECT_EQ(elements["svg"], 1) << file;
    EXPECT_EQ(elements["polyline"], 2) << file;
    EXPECT_GE(elements["text"], 10) << file;  // title, axis labels, ticks, legend
    EXPECT_NE(svg.find("easy &lt;backfill&gt; &amp; &quot;friends&quot;"), std::string::npos);
    EXPECT_LT(svg.size(), 100'000u) << file;
    // At most kMaxPlotBuckets (+1) points per line.
    size_t points = svg.find("points=\"");
    ASSERT_NE(points, std::string::npos);
    const std::string list = svg.substr(points + 8, svg.find('"', points + 8) - points - 8);
    EXPECT_LE(std::count(list.begin(), list.end(), ','), kMaxPlotBuckets + 1) << file;
  }
  EXPECT_NE(ReadFile(dir / "utilization.svg").find("Allocated CPUs"), std::string::npos);
}

TEST(PlotTest, GpuRunsPlotGpus) {
  PolicyRun run{"gpu", {Ran(0, 0, 100, 4, 2), Ran(0, 50, 150, 4, 2)}, 8, 4};
  const std::string svg = UtilizationSvg({run});
  std::map<std::string, int> elements;
  EXPECT_EQ(CheckXml(svg, &elements), "");
  EXPECT_NE(svg.find("Allocated GPUs"), std::string::npos);
  EXPECT_EQ(elements["polyline"], 1);
}

TEST(PlotTest, UtilizationAveragesEachBucket) {
  // 2 of 4 CPUs for the first half of the span, 4 of 4 for the second: 50% then 100%.
  PolicyRun run{"p", {Ran(0, 0, 100, 2), Ran(0, 100, 200, 4)}, 4, 0};
  const std::string svg = UtilizationSvg({run});
  const size_t points = svg.find("points=\"");
  ASSERT_NE(points, std::string::npos);
  std::istringstream list(svg.substr(points + 8, svg.find('"', points + 8) - points - 8));
  std::string point;
  std::vector<double> ys;
  while (list >> point) ys.push_back(std::stod(point.substr(point.find(',') + 1)));
  ASSERT_EQ(ys.size(), 200u);  // one bucket per second when the span is short
  // The plot area runs from y=450 (0%) to y=50 (100%).
  EXPECT_DOUBLE_EQ(ys.front(), 250);
  EXPECT_DOUBLE_EQ(ys.back(), 50);
}

TEST(PlotTest, OvershootIsShownWithFewTicks) {
  PolicyRun run{"bug", {Ran(0, 0, 100, 1'000'000)}, 1, 0};
  const std::string svg = UtilizationSvg({run});
  std::map<std::string, int> elements;
  EXPECT_EQ(CheckXml(svg, &elements), "");
  EXPECT_NE(svg.find("100000000%"), std::string::npos);
  EXPECT_LT(elements["line"], 40);
}

TEST(PlotTest, EmptyRunsStillMakeValidFiles) {
  for (const std::vector<PolicyRun>& runs :
       {std::vector<PolicyRun>{}, std::vector<PolicyRun>{PolicyRun{"none", {}, 0, 0}}}) {
    for (const std::string& svg : {UtilizationSvg(runs), WaitCdfSvg(runs)}) {
      std::map<std::string, int> elements;
      EXPECT_EQ(CheckXml(svg, &elements), "");
      EXPECT_EQ(elements["polyline"], 0);
      EXPECT_NE(svg.find("no jobs"), std::string::npos);
    }
  }
}

TEST(PlotTest, ErrorsNameThePath) {
  const std::filesystem::path dir = FreshDir("berth_plot_error");
  const RemovedAtEnd cleanup{dir};
  std::filesystem::create_directories(dir.parent_path());
  std::FILE* f = std::fopen(dir.c_str(), "wb");  // a file where the directory should be
  ASSERT_NE(f, nullptr);
  std::fclose(f);
  Status s = WritePlots(dir.string(), {});
  ASSERT_FALSE(s.ok());
  EXPECT_NE(s.message().find(dir.string()), std::string::npos) << s.message();
  Status below = WritePlots((dir / "sub").string(), {});
  ASSERT_FALSE(below.ok());
  EXPECT_NE(below.message().find((dir / "sub").string()), std::string::npos) << below.message();
}

// The fill experiment's chart: x from x_min (points left of it dropped), round axis ends.
TEST(PlotTest, LineChartStartsAtXMin) {
  std::vector<LineSeries> series = {{"a", {{0, 900}, {50, 600}, {60, 450}, {130, 100}}},
                                    {"b & c", {{60, 300}, {130, 50}}}};
  const std::string svg = LineChartSvg("fill", "arrived %", "GPUs", series, 60);
  EXPECT_NE(svg.find(">60</text>"), std::string::npos) << svg;
  EXPECT_NE(svg.find(">130</text>"), std::string::npos);
  EXPECT_NE(svg.find(">450</text>"), std::string::npos);   // y to 450 in steps of 50
  EXPECT_EQ(svg.find(">1000</text>"), std::string::npos);  // 900 at x 0 is not drawn
  EXPECT_NE(svg.find("b &amp; c"), std::string::npos);
  // Two points each: (60, 450) at the top left corner, (130, 100) at the right edge.
  EXPECT_NE(svg.find("points=\"80.0,50.0 740.0,361.1\""), std::string::npos) << svg;
}

}  // namespace
}  // namespace berth::sim
