#include "controller/history.h"

#include <algorithm>
#include <charconv>
#include <cmath>

namespace berth::controller {

using nlohmann::json;

namespace {

std::optional<size_t> SeriesIndex(std::string_view name) {
  for (size_t i = 0; i < kHistorySeriesCount; ++i) {
    if (kHistorySeries[i] == name) return i;
  }
  return std::nullopt;
}

// Values are counts and means of counts: three decimals are plenty, and keep rows small.
double Rounded(double v) {
  return std::round(v * 1000) / 1000;
}

}  // namespace

History::History(Duration sample_s) {
  sample_s = std::clamp<Duration>(sample_s, 1, 60);
  tiers_[0] = {"1h", sample_s, 3600, {}, {}};
  tiers_[1] = {"1d", 60, 86400, {}, {}};
  tiers_[2] = {"1w", 600, 7 * 86400, {}, {}};
}

const History::Tier* History::FindTier(std::string_view name) const {
  for (const Tier& t : tiers_) {
    if (t.name == name) return &t;
  }
  return nullptr;
}

History::Tier* History::FindTier(std::string_view name) {
  for (Tier& t : tiers_) {
    if (t.name == name) return &t;
  }
  return nullptr;
}

void History::Add(Time t, const HistorySample& values) {
  for (Tier& tier : tiers_) {
    const Time start = t - Mod(t, tier.step);
    Point& p = tier.points[start];
    ++p.count;
    for (size_t i = 0; i < kHistorySeriesCount; ++i) {
      p.mean[i] += (values[i] - p.mean[i]) / p.count;
    }
    tier.dirty_chunks.insert(ChunkOf(tier, start));
    Prune(tier, t);
  }
}

void History::Prune(Tier& tier, Time now) {
  // Points whose interval started a whole range before `now` are gone; so is the chunk row once
  // it holds none (TakeWrites deletes it).
  const Time oldest = now - tier.span;
  while (!tier.points.empty() && tier.points.begin()->first < oldest) {
    tier.dirty_chunks.insert(ChunkOf(tier, tier.points.begin()->first));
    tier.points.erase(tier.points.begin());
  }
}

Result<json> History::Query(std::string_view range, const std::vector<std::string>& series,
                            Time now) const {
  const Tier* tier = FindTier(range);
  if (tier == nullptr) {
    return Status::InvalidArgument("unknown range '" + std::string(range) +
                                   "': expected 1h, 1d or 1w");
  }
  std::vector<size_t> wanted;
  for (const std::string& name : series) {
    std::optional<size_t> i = SeriesIndex(name);
    if (!i) {
      std::string known;
      for (std::string_view s : kHistorySeries)
        known += (known.empty() ? "" : ", ") + std::string(s);
      return Status::InvalidArgument("unknown series '" + name + "' (known: " + known + ")");
    }
    wanted.push_back(*i);
  }
  json out = json::object();
  for (size_t k = 0; k < wanted.size(); ++k) out[series[k]] = json::array();
  const Time oldest = now - tier->span;
  for (const auto& [t, p] : tier->points) {
    if (t < oldest || t > now) continue;
    for (size_t k = 0; k < wanted.size(); ++k) {
      out[series[k]].push_back(json::array({t, Rounded(p.mean[wanted[k]])}));
    }
  }
  return json{{"series", std::move(out)}, {"step_s", tier->step}};
}

std::vector<std::pair<std::string, std::string>> History::TakeWrites(Time now) {
  std::vector<std::pair<std::string, std::string>> out;
  json names = json::array();
  for (std::string_view s : kHistorySeries) names.push_back(s);
  for (Tier& tier : tiers_) {
    Prune(tier, now);
    for (Time chunk : tier.dirty_chunks) {
      const std::string key = std::string(kHistoryMetaPrefix) + tier.name + "/" +
                              std::to_string(tier.step) + "/" + std::to_string(chunk);
      json points = json::array();
      for (auto it = tier.points.lower_bound(chunk);
           it != tier.points.end() && it->first < chunk + tier.step * Time(kChunkPoints); ++it) {
        json row = json::array({it->first, it->second.count});
        for (double v : it->second.mean) row.push_back(Rounded(v));
        points.push_back(std::move(row));
      }
      if (points.empty()) {
        out.emplace_back(key, "");
      } else {
        out.emplace_back(key, json{{"series", names}, {"points", points}}.dump());
      }
    }
    tier.dirty_chunks.clear();
  }
  return out;
}

Status History::LoadRow(const std::string& key, const std::string& value) {
  // history/<range>/<step>/<chunk start>
  if (!key.starts_with(kHistoryMetaPrefix)) return Status::InvalidArgument("not a history row");
  std::string_view rest = std::string_view(key).substr(kHistoryMetaPrefix.size());
  const size_t a = rest.find('/');
  const size_t b = a == std::string_view::npos ? a : rest.find('/', a + 1);
  if (b == std::string_view::npos) return Status::InvalidArgument("bad history key " + key);
  Tier* tier = FindTier(rest.substr(0, a));
  Duration step = 0;
  std::string_view step_text = rest.substr(a + 1, b - a - 1);
  auto [p, ec] = std::from_chars(step_text.data(), step_text.data() + step_text.size(), step);
  if (tier == nullptr || ec != std::errc() || p != step_text.data() + step_text.size()) {
    return Status::InvalidArgument("bad history key " + key);
  }
  if (step != tier->step) {
    return Status::InvalidArgument("history row " + key + " has another interval than " +
                                   std::to_string(tier->step) + " s");
  }
  try {
    json row = json::parse(value);
    // Columns by name, so that rows written with other series still read.
    std::vector<std::optional<size_t>> columns;
    for (const json& name : row.at("series"))
      columns.push_back(SeriesIndex(name.get<std::string>()));
    for (const json& point : row.at("points")) {
      Point pt;
      pt.count = point.at(1).get<int>();
      for (size_t c = 0; c < columns.size() && c + 2 < point.size(); ++c) {
        if (columns[c]) pt.mean[*columns[c]] = point.at(c + 2).get<double>();
      }
      if (pt.count > 0) tier->points[point.at(0).get<Time>()] = pt;
    }
  } catch (const json::exception& e) {
    return Status::InvalidArgument("bad history row " + key + ": " + e.what());
  }
  return Status::Ok();
}

size_t History::points(std::string_view range) const {
  const Tier* tier = FindTier(range);
  return tier == nullptr ? 0 : tier->points.size();
}

}  // namespace berth::controller
