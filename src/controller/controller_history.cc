// The cluster's history (history.h, GET /v1/history): sampled on the state thread every
// --history-interval seconds, flushed to the store's meta rows with the batch that runs every
// kHistoryFlushSamples-th sample (and when the controller stops), read back at start.
#include <cstdio>

#include "common/strings.h"
#include "controller/controller_internal.h"

namespace berth::controller {

using nlohmann::json;

namespace {

constexpr int kHistoryFlushSamples = 6;

constexpr std::string_view kGpusUsedNote =
    "no node measured its GPUs' use in this range: agents measure it through NVML, so nodes "
    "without NVIDIA's driver (or with declared GPUs only) report none";

}  // namespace

HistorySample Controller::Impl::HistorySampleNow() const {
  HistorySample s{};
  auto add = [&s](std::string_view name, double v) {
    for (size_t i = 0; i < kHistorySeriesCount; ++i) {
      if (kHistorySeries[i] == name) s[i] += v;
    }
  };
  for (uint32_t i = 0; i < cs->num_nodes(); ++i) {
    const core::NodeInfo& n = cs->node(i);
    add("gpus_total", n.num_gpus);
    add("gpus_allocated", n.num_gpus - n.free_gpu_count());
    add("cpus_allocated", n.spec.cpus - n.free_cpus);
    add("nodes_up", n.health == core::NodeHealth::kUp ? 1 : 0);
    add("nodes_powered", n.health == core::NodeHealth::kPoweredDown ? 0 : 1);
  }
  // Measured use: each GPU's utilisation from its agent's last report (NVML), as GPUs' worth.
  const int64_t now_ms = UsageTable::ClockMs();
  for (const auto& [node, readings] : usage.GpuLatest(now_ms)) {
    for (const UsageTable::GpuReading& g : readings) {
      add("gpus_measured", 1);
      add("gpus_used", g.utilization / 100.0);
    }
  }
  ForEachOwnRecord([&add](core::JobId, const JobRecord& r) {
    if (r.job.state == core::JobState::kPending) {
      add("jobs_pending", 1);
    } else if (core::HoldsResources(r.job.state)) {
      add("jobs_running", 1);
    }
  });
  return s;
}

void Controller::Impl::HistoryTick(Txn& t) {
  const Time now = Now();
  if (now < next_history_sample) return;
  history.Add(now, HistorySampleNow());
  next_history_sample = now + history.sample_s();
  PublishHistory();
  if (++history_unflushed < kHistoryFlushSamples) return;
  history_unflushed = 0;
  for (auto& [key, value] : history.TakeWrites(now)) {
    if (value.empty()) {
      t.writes.push_back({store::Write::Kind::kDeleteMeta, {}, key, ""});
    } else {
      t.writes.push_back({store::Write::Kind::kPutMeta, {}, key, std::move(value)});
    }
  }
}

void Controller::Impl::PublishHistory() {
  auto copy = std::make_shared<const History>(history);
  MutexLock<SharedMutex> l(view_mu);
  history_view = std::move(copy);
}

void Controller::Impl::FlushHistory() {
  std::vector<store::Write> writes;
  for (auto& [key, value] : history.TakeWrites(Now())) {
    writes.push_back(
        {value.empty() ? store::Write::Kind::kDeleteMeta : store::Write::Kind::kPutMeta,
         {},
         key,
         std::move(value)});
  }
  if (writes.empty()) return;
  if (Status st = store->Commit(std::move(writes)); !st.ok()) {
    std::fprintf(stderr, "berth controller: the history's last points are not kept: %s\n",
                 st.message().c_str());
  }
}

void Controller::Impl::RecoverHistory() {
  History loaded(opt.history_sample_s);  // filled by the scan's callback, then kept
  std::vector<store::Write> stale;
  Status st = store->ScanMeta(
      std::string(kHistoryMetaPrefix), [&](const std::string& key, const std::string& value) {
        if (!loaded.LoadRow(key, value).ok()) {
          stale.push_back({store::Write::Kind::kDeleteMeta, {}, key, ""});  // another interval's
        }
      });
  if (!st.ok()) {
    std::fprintf(stderr, "berth controller: the history could not be read: %s\n",
                 st.message().c_str());
  }
  history = std::move(loaded);
  if (!stale.empty()) (void)store->Commit(std::move(stale));
  next_history_sample = Now();
  PublishHistory();
}

net::HttpResponse Controller::Impl::HistoryRoute(const ApiCall& c) {
  std::string range = "1h";
  if (auto it = c.req.query.find("range"); it != c.req.query.end()) range = it->second;
  std::vector<std::string> series;
  if (auto it = c.req.query.find("series"); it != c.req.query.end()) {
    series = SplitList(it->second);
  } else {
    for (std::string_view s : kHistorySeries) series.emplace_back(s);
  }
  std::shared_ptr<const History> view;
  {
    ReaderLock l(view_mu);
    view = history_view;
  }
  if (!view) return Error(Status::Unavailable("not ready"));
  Result<json> body = view->Query(range, series, Now());
  if (!body.ok()) return Error(body.status());
  // gpus_used has a point only where some GPU was measured: elsewhere its 0 means "unknown".
  if (json& shown = (*body)["series"]; shown.contains("gpus_used")) {
    Result<json> measured = view->Query(range, {"gpus_measured"}, Now());
    json kept = json::array();
    if (measured.ok()) {
      const json& m = (*measured)["series"]["gpus_measured"];
      for (size_t i = 0; i < shown["gpus_used"].size() && i < m.size(); ++i) {
        if (m[i][1].get<double>() > 0) kept.push_back(shown["gpus_used"][i]);
      }
    }
    if (kept.empty()) (*body)["notes"] = {{"gpus_used", kGpusUsedNote}};
    shown["gpus_used"] = std::move(kept);
  }
  return JsonResponse(200, *body);
}

}  // namespace berth::controller
