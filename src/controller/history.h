// A durable, bounded history of a few cluster-wide series (GET /v1/history, docs/api.md): GPUs
// total, allocated, used (the sum of the measured GPUs' utilisation: 2 GPUs at 50% are 1) and
// measured (with a utilisation reading), CPUs allocated, jobs running and pending, nodes up and
// powered. The
// controller adds one sample every `sample_s` seconds; History keeps three resolutions of them:
//
//   range "1h": one point per sample_s (10 s by default), the last hour
//   range "1d": one point per minute, the last day
//   range "1w": one point per 10 minutes, the last week
//
// A point is the mean of the samples in its interval (the interval's start is its time). Each
// resolution is held in chunks of kChunkPoints points, and each chunk is one store meta row
// ("history/<range>/<chunk start>"): TakeWrites hands out only the chunks that changed since its
// last call (and deletions of those past their range), so a flush writes a few small rows, not
// the whole week. LoadRow reads them back at start.
//
// Thread safety: none (the controller keeps it on its state thread and publishes copies of the
// query answers). Time is passed in (Unix seconds).
#ifndef BERTH_CONTROLLER_HISTORY_H_
#define BERTH_CONTROLLER_HISTORY_H_

#include <array>
#include <cstddef>
#include <map>
#include <nlohmann/json.hpp>
#include <optional>
#include <set>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "common/status.h"
#include "common/time.h"

namespace berth::controller {

// The series, in the order of a sample's values.
inline constexpr std::array<std::string_view, 9> kHistorySeries = {
    "gpus_total",   "gpus_allocated", "gpus_used", "gpus_measured", "cpus_allocated",
    "jobs_running", "jobs_pending",   "nodes_up",  "nodes_powered"};
inline constexpr size_t kHistorySeriesCount = kHistorySeries.size();
using HistorySample = std::array<double, kHistorySeriesCount>;

// The store meta rows' key prefix.
inline constexpr std::string_view kHistoryMetaPrefix = "history/";

class History {
 public:
  static constexpr size_t kChunkPoints = 60;

  // REQUIRES: 1 <= sample_s <= 60.
  explicit History(Duration sample_s = 10);

  Duration sample_s() const { return tiers_[0].step; }

  // Adds a sample taken at `t`. A sample older than the newest one's interval still counts in its
  // own interval (clocks step back; nothing breaks).
  void Add(Time t, const HistorySample& values);

  // The points of `range` ("1h", "1d", "1w") within that range of `now`, for each of `series`
  // (names from kHistorySeries), as {"series": {name: [[t, v], ...]}, "step_s": N}.
  // InvalidArgument naming an unknown range or series.
  Result<nlohmann::json> Query(std::string_view range, const std::vector<std::string>& series,
                               Time now) const;

  // The store rows that changed since the last call: (key, value), value "" for a row to delete.
  // Drops the points that fell out of their range as of `now` first.
  std::vector<std::pair<std::string, std::string>> TakeWrites(Time now);

  // Reads back a row TakeWrites wrote (key with its prefix). A row of another resolution than
  // this History's (the sample interval changed) or a malformed one is ignored, with the reason.
  Status LoadRow(const std::string& key, const std::string& value);

  // The number of points held in `range` (tests, bounds).
  size_t points(std::string_view range) const;

 private:
  struct Point {
    int count = 0;
    HistorySample mean{};
  };
  struct Tier {
    std::string name;  // "1h", "1d", "1w"
    Duration step = 0;
    Duration span = 0;
    std::map<Time, Point> points;  // interval start -> point
    std::set<Time> dirty_chunks;   // chunk starts changed since TakeWrites
  };
  Time ChunkOf(const Tier& tier, Time t) const { return t - Mod(t, tier.step * kChunkPoints); }
  static Time Mod(Time t, Duration m) { return ((t % m) + m) % m; }
  const Tier* FindTier(std::string_view name) const;
  Tier* FindTier(std::string_view name);
  void Prune(Tier& tier, Time now);

  std::array<Tier, 3> tiers_;
};

}  // namespace berth::controller

#endif  // BERTH_CONTROLLER_HISTORY_H_
