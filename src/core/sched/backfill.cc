#include "core/sched/backfill.h"

#include <algorithm>
#include <vector>

namespace berth::core {
namespace {

// Tracks which candidate nodes can host (a share of) the job over [T, T + duration).
class FitTracker {
 public:
  FitTracker(const PassState& pass, const PlaceRequest& req, const Bitset& cand, Duration d,
             const ResvView* resv, const JobEntry* job)
      : pass_(pass),
        req_(req),
        cand_(cand),
        d_(d),
        resv_(resv),
        job_(job),
        fit_(cand.size()),
        tasks_(pass.NodeCounts()),
        frees_(pass.NodeFrees()) {}
  ~FitTracker() {
    for (uint32_t n : seen_) tasks_[n] = 0;
  }
  FitTracker(const FitTracker&) = delete;
  FitTracker& operator=(const FitTracker&) = delete;

  void Evaluate(uint32_t n, Time t) {
    if (!cand_.Test(n)) return;
    const JobShape& s = *req_.shape;
    const NodeInfo& node = pass_.cs().node(n);
    int32_t now_fit = 0;
    if (resv_ == nullptr || !resv_->NodeBlocked(*job_, n, t, t + d_)) {
      NodeFree& f = frees_[n];
      f = pass_.FreeDuring(n, t, t + d_);
      now_fit = s.task_mode ? FitTasks(s, node, f, req_.user, s.tasks, nullptr)
                            : (FitNode(s, node, f, req_.user, nullptr) ? 1 : 0);
    }
    int32_t& old = tasks_[n];
    if (old == 0 && now_fit != 0) seen_.push_back(n);
    total_ += now_fit - old;
    old = now_fit;
    fit_.Assign(n, now_fit > 0);
  }

  bool Enough() const {
    const JobShape& s = *req_.shape;
    if (req_.required) {
      for (uint32_t n : *req_.required) {
        if (!fit_.Test(n)) return false;
      }
    }
    return s.task_mode ? total_ >= s.tasks : total_ >= s.min_nodes;
  }
  const Bitset& fit() const { return fit_; }
  // What node n, one of fit(), had free for the window it was last looked at with.
  const NodeFree& FreeOf(uint32_t n) const { return frees_[n]; }

 private:
  const PassState& pass_;
  const PlaceRequest& req_;
  const Bitset& cand_;
  Duration d_;
  const ResvView* resv_;
  const JobEntry* job_;
  Bitset fit_;
  // By node: the shares of the job it can hold now. A flat array, not a hash map: a pass runs
  // FindEarliestStart for every blocked job it may reserve for, and the map's allocations
  // dominated the multifactor replays. The pass's scratch array (PassState::NodeCounts), zero
  // again when the tracker goes: the destructor clears the entries it set, listed in seen_.
  std::vector<int32_t>& tasks_;
  // By node: what FreeDuring gave it when last looked at (PassState::NodeFrees, the pass's
  // scratch; an entry is meaningful while the node is in fit_).
  std::vector<NodeFree>& frees_;
  std::vector<uint32_t> seen_;
  int64_t total_ = 0;
};

}  // namespace

std::optional<EarliestStart> FindEarliestStart(const PassState& pass, const PlaceRequest& req,
                                               const Bitset& candidates, Duration duration,
                                               Time horizon_end, const ResvView* resv,
                                               const JobEntry* job, bool fresh_placement) {
  const ClusterState& cs = pass.cs();
  const Time now = pass.now();
  if (resv != nullptr && (resv->empty() || job == nullptr)) resv = nullptr;
  FitTracker tracker(pass, req, candidates, duration, resv, job);
  Bitset initial = pass.cpu_free();
  // A node with fewer GPUs free now than one share of the job needs cannot hold it at `now`
  // (what is free during a window is at most what is free now): it is looked at only when
  // something on it ends. In a busy GPU cluster most nodes have a free CPU but no free GPU,
  // and this walk ran for each blocked job of every pass.
  const JobShape& shape = *req.shape;
  const std::vector<Bitset>& buckets = pass.gpu_buckets();
  if (!shape.whole_node && shape.gpus > 0 && static_cast<size_t>(shape.gpus) < buckets.size()) {
    Bitset enough(initial.size());
    for (size_t k = static_cast<size_t>(shape.gpus); k < buckets.size(); ++k) enough |= buckets[k];
    initial &= enough;
  } else if (!shape.whole_node && shape.gpus > 0) {
    initial = Bitset(initial.size());  // no node has that many GPUs free
  }
  initial |= pass.reserved_nodes();
  candidates.ForEachAnd(initial, [&](size_t n) {
    tracker.Evaluate(static_cast<uint32_t>(n), now);
    return true;
  });

  // The three sorted streams of times at which something comes free.
  auto rel = cs.releases().begin();
  const std::vector<std::pair<Time, int32_t>>& starts = pass.StartsByEnd();
  std::vector<const Reservation*> res;
  for (const Reservation& r : pass.reservations()) res.push_back(&r);
  std::sort(res.begin(), res.end(),
            [](const Reservation* a, const Reservation* b) { return a->end < b->end; });
  size_t si = 0, ri = 0;
  // A reserved node can stop fitting when a reservation start enters the window
  // [T, T + duration), i.e. from T = start - duration + 1 on: those nodes are looked at again at
  // the first event from then. (Nodes become able to fit only when something ends, which the
  // three streams above cover.)
  std::vector<std::pair<Time, uint32_t>> entering;
  for (const Reservation& r : pass.reservations()) {
    Time when = r.start - duration + 1;
    if (when <= now) continue;
    for (const NodeAllocation& a : r.alloc.nodes) {
      if (candidates.Test(a.node)) entering.emplace_back(when, a.node);
    }
  }
  std::sort(entering.begin(), entering.end());
  size_t ei = 0;
  // Advance reservations: a node becomes usable for the job when one ends (or its own begins)
  // and stops being usable when one starts to overlap the window; both are times to look at.
  // What jobs preempted in this pass hold beyond what their preemptors take comes free at
  // now + 1 (PassState::FreeAt), which no stream above marks: those nodes are looked at then.
  std::vector<std::pair<Time, uint32_t>> node_events;  // (time, node), both kinds
  if (resv != nullptr) resv->Events(*job, duration, now, candidates, &node_events);
  pass.ForEachLeftoverNode([&](uint32_t n) {
    if (candidates.Test(n)) node_events.emplace_back(now + 1, n);
  });
  std::sort(node_events.begin(), node_events.end());
  size_t ni = 0;

  PlaceRequest plan = req;
  plan.gpu_node_choice = false;  // any node that fits: the policy chooses again at the start
  // The placement at t looks only at nodes of the tracker's fit set, each looked at last at a
  // time t' <= t: what it has free for [t', t' + duration) is what it has for [t, t + duration),
  // because every time at which that changes is a time the sweep looks at the node again (a job
  // or start ending there, a reservation ending there or one's start entering the window; as t
  // passes a reservation's start, the reservation's part moves from the window's minimum into
  // FreeAt(t) unchanged; what preempted jobs leave comes free at now + 1, a time the sweep looks
  // at those nodes).
  auto try_place = [&](Time t) -> std::optional<EarliestStart> {
    if (!tracker.Enough()) return std::nullopt;
    EarliestStart out;
    out.start = t;
    FreeFn free_of = [&](uint32_t n) {
      return !fresh_placement && tracker.fit().Test(n) ? tracker.FreeOf(n)
                                                       : pass.FreeDuring(n, t, t + duration);
    };
    if (Place(cs, plan, tracker.fit(), NodeIndex{}, free_of, &out.alloc)) return out;
    return std::nullopt;
  };
  if (auto r = try_place(now)) return r;

  std::vector<uint32_t> touched;
  while (true) {
    Time t = kInfinite;
    // A job past its limit is expected to end any moment: at now + 1 (PassState::EstimatedEnd).
    if (rel != cs.releases().end()) t = std::max(now + 1, rel->first);
    if (si < starts.size()) t = std::min(t, starts[si].first);
    if (ri < res.size()) t = std::min(t, res[ri]->end);
    if (ni < node_events.size()) t = std::min(t, node_events[ni].first);
    if (t >= kInfinite || t > horizon_end) return std::nullopt;
    touched.clear();
    for (; rel != cs.releases().end() && std::max(now + 1, rel->first) == t; ++rel) {
      if (pass.IsPreempted(rel->second)) continue;
      for (const NodeAllocation& a : cs.FindJob(rel->second)->alloc.nodes)
        touched.push_back(a.node);
    }
    for (; si < starts.size() && starts[si].first == t; ++si) {
      for (const NodeAllocation& a : pass.starts()[starts[si].second].alloc.nodes) {
        touched.push_back(a.node);
      }
    }
    for (; ri < res.size() && res[ri]->end == t; ++ri) {
      for (const NodeAllocation& a : res[ri]->alloc.nodes) touched.push_back(a.node);
    }
    for (; ei < entering.size() && entering[ei].first <= t; ++ei) {
      touched.push_back(entering[ei].second);
    }
    for (; ni < node_events.size() && node_events[ni].first <= t; ++ni) {
      touched.push_back(node_events[ni].second);
    }
    std::sort(touched.begin(), touched.end());
    touched.erase(std::unique(touched.begin(), touched.end()), touched.end());
    for (uint32_t n : touched) tracker.Evaluate(n, t);
    if (auto r = try_place(t)) return r;
  }
}

}  // namespace berth::core
