#include "controller/history.h"

#include <gtest/gtest.h>

#include <map>
#include <string>

namespace berth::controller {
namespace {

HistorySample Sample(double v) {
  HistorySample s{};
  s.fill(v);
  return s;
}

nlohmann::json Points(const History& h, const std::string& range, const std::string& series,
                      Time now) {
  Result<nlohmann::json> r = h.Query(range, {series}, now);
  EXPECT_TRUE(r.ok()) << r.status().message();
  return r.ok() ? (*r)["series"][series] : nlohmann::json();
}

TEST(HistoryTest, SamplesAreAveragedIntoEachResolution) {
  History h(10);
  const Time t0 = 1'000'020;                                   // a multiple of 60 (and of 10)
  for (int i = 0; i < 12; ++i) h.Add(t0 + 10 * i, Sample(i));  // two minutes
  nlohmann::json hour = Points(h, "1h", "gpus_allocated", t0 + 120);
  ASSERT_EQ(hour.size(), 12u);
  EXPECT_EQ(hour[3], nlohmann::json::array({t0 + 30, 3.0}));
  nlohmann::json day = Points(h, "1d", "jobs_pending", t0 + 120);
  ASSERT_EQ(day.size(), 2u);
  EXPECT_EQ(day[0], nlohmann::json::array({t0, 2.5}));  // mean of 0..5
  EXPECT_EQ(day[1], nlohmann::json::array({t0 + 60, 8.5}));
  nlohmann::json week = Points(h, "1w", "nodes_up", t0 + 120);
  ASSERT_EQ(week.size(), 1u);
  EXPECT_EQ(week[0][1], 5.5);
  EXPECT_EQ(h.Query("1d", {}, t0)->at("step_s"), 60);
  EXPECT_EQ(h.Query("1h", {}, t0)->at("step_s"), 10);
}

TEST(HistoryTest, UnknownRangesAndSeriesAreNamed) {
  History h(10);
  Result<nlohmann::json> r = h.Query("2h", {"gpus_total"}, 0);
  EXPECT_EQ(r.status().code(), StatusCode::kInvalidArgument);
  EXPECT_NE(r.status().message().find("'2h'"), std::string::npos);
  r = h.Query("1h", {"gpus_total", "gpus_stolen"}, 0);
  EXPECT_EQ(r.status().code(), StatusCode::kInvalidArgument);
  EXPECT_NE(r.status().message().find("'gpus_stolen'"), std::string::npos);
  r = h.Query("1h", {"gpus_total", "nodes_powered"}, 0);
  ASSERT_TRUE(r.ok());
  EXPECT_EQ((*r)["series"].size(), 2u);
  EXPECT_TRUE((*r)["series"]["gpus_total"].empty());
}

TEST(HistoryTest, EachResolutionIsBoundedByItsRange) {
  History h(10);
  const Time t0 = 6'000'000;
  // Eight days of samples, one a minute (fewer than the controller takes: the bounds are what
  // matters here).
  for (Time t = t0; t < t0 + 8 * 86400; t += 60) h.Add(t, Sample(1));
  EXPECT_LE(h.points("1h"), 361u);
  EXPECT_LE(h.points("1d"), 1441u);
  EXPECT_LE(h.points("1w"), 7u * 144 + 1);
  EXPECT_GE(h.points("1w"), 7u * 144 - 1);
  const Time now = t0 + 8 * 86400;
  for (const auto& p : Points(h, "1w", "gpus_total", now)) {
    EXPECT_GE(p[0].get<Time>(), now - 7 * 86400);
  }
}

TEST(HistoryTest, RowsRoundTripThroughTheStoreAndOnlyChangedChunksAreWritten) {
  History h(10);
  const Time t0 = 2'000'000'400;  // a multiple of 600 (so of every chunk's start too)
  for (int i = 0; i < 30; ++i) h.Add(t0 + 10 * i, Sample(i));
  std::map<std::string, std::string> store;
  for (auto& [k, v] : h.TakeWrites(t0 + 300)) store[k] = v;
  // One chunk per resolution so far.
  ASSERT_EQ(store.size(), 3u);
  EXPECT_TRUE(store.count("history/1h/10/" + std::to_string(t0)));
  EXPECT_TRUE(h.TakeWrites(t0 + 300).empty());  // nothing changed since
  h.Add(t0 + 300, Sample(30));
  std::vector<std::pair<std::string, std::string>> again = h.TakeWrites(t0 + 300);
  EXPECT_EQ(again.size(), 3u);  // the three chunks holding t0 + 300
  for (auto& [k, v] : again) store[k] = v;

  History back(10);
  for (const auto& [k, v] : store) ASSERT_TRUE(back.LoadRow(k, v).ok()) << k;
  for (const char* range : {"1h", "1d", "1w"}) {
    EXPECT_EQ(Points(back, range, "cpus_allocated", t0 + 310),
              Points(h, range, "cpus_allocated", t0 + 310))
        << range;
  }
  // A point half filled before the restart goes on averaging with its count.
  back.Add(t0 + 310, Sample(31));
  h.Add(t0 + 310, Sample(31));
  EXPECT_EQ(Points(back, "1d", "gpus_used", t0 + 320), Points(h, "1d", "gpus_used", t0 + 320));

  // Another sample interval ignores the 1h rows of the old one; bad rows are refused.
  History other(5);
  EXPECT_FALSE(other
                   .LoadRow("history/1h/10/" + std::to_string(t0),
                            store["history/1h/10/" + std::to_string(t0)])
                   .ok());
  EXPECT_FALSE(other.LoadRow("history/1d/60/x", "{").ok());
  EXPECT_FALSE(other.LoadRow("history/9y/60/0", "{}").ok());
  EXPECT_FALSE(other.LoadRow("history/1d/60/0", R"({"series": 3})").ok());
}

TEST(HistoryTest, ChunksPastTheirRangeAreDeleted) {
  History h(10);
  const Time t0 = 3'000'000'000;
  h.Add(t0, Sample(1));
  ASSERT_EQ(h.TakeWrites(t0).size(), 3u);
  h.Add(t0 + 2 * 3600, Sample(2));  // the first hour's point has gone from "1h"
  std::map<std::string, std::string> w;
  for (auto& [k, v] : h.TakeWrites(t0 + 2 * 3600)) w[k] = v;
  EXPECT_EQ(w.at("history/1h/10/" + std::to_string(t0 - t0 % 600)), "");
  EXPECT_EQ(h.points("1h"), 1u);
  EXPECT_EQ(h.points("1d"), 2u);
}

}  // namespace
}  // namespace berth::controller
