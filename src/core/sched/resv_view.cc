#include "core/sched/resv_view.h"

namespace berth::core {

bool ResvOverlaps(const ResvSpec& r, Time t0, Time t1) {
  if (t1 <= t0) return false;
  Duration p = r.Period();
  if (p <= 0 || r.end >= kInfinite) return r.start < t1 && t0 < r.end;
  // The first occurrence k >= 0 that has not ended by t0.
  int64_t k = t0 < r.end ? 0 : (t0 - r.end) / p + 1;
  if (t1 >= kInfinite) return true;
  return r.start + k * p < t1;
}

bool ResvActiveAt(const ResvSpec& r, Time t) {
  return ResvOverlaps(r, t, t + 1);
}

ResvView::ResvView(const ClusterState& cs) {
  for (const auto& [name, r] : cs.reservations()) resv_.push_back(&r);
}

const ResvInfo* ResvView::Own(const JobEntry& e) const {
  const std::string& name = e.job.spec->reservation;
  if (name.empty()) return nullptr;
  for (const ResvInfo* r : resv_) {
    if (r->spec.name == name) return r;
  }
  return nullptr;
}

bool ResvView::MayStartAt(const JobEntry& e, Time t0) const {
  if (e.job.spec->reservation.empty()) return true;
  const ResvInfo* own = Own(e);
  return own != nullptr && ResvActiveAt(own->spec, t0);
}

void ResvView::Blocked(const JobEntry& e, Time t0, Time t1, Bitset* out, bool* maint) const {
  const ResvInfo* own = Own(e);
  if (!e.job.spec->reservation.empty()) {
    bool usable = own != nullptr && ResvActiveAt(own->spec, t0);
    for (size_t n = 0; n < out->size(); ++n) {
      if (!usable || !own->nodes.Test(n)) out->Set(n);
    }
  }
  for (const ResvInfo* r : resv_) {
    if (r == own || !ResvOverlaps(r->spec, t0, t1)) continue;
    *out |= r->nodes;
    if (maint && r->spec.Has(kResvMaint)) *maint = true;
  }
}

bool ResvView::NodeBlocked(const JobEntry& e, uint32_t n, Time t0, Time t1) const {
  const ResvInfo* own = Own(e);
  if (!e.job.spec->reservation.empty()) {
    if (own == nullptr || !own->nodes.Test(n) || !ResvActiveAt(own->spec, t0)) return true;
  }
  for (const ResvInfo* r : resv_) {
    if (r != own && r->nodes.Test(n) && ResvOverlaps(r->spec, t0, t1)) return true;
  }
  return false;
}

void ResvView::Events(const JobEntry& e, Duration d, Time now, const Bitset& cand,
                      std::vector<std::pair<Time, uint32_t>>* out) const {
  const ResvInfo* own = Own(e);
  for (const ResvInfo* r : resv_) {
    // A few occurrences are enough: the sweep stops at its horizon, and a later occurrence
    // repeats what an earlier one did.
    int occurrences = r->spec.Period() > 0 ? 3 : 1;
    for (int k = 0; k < occurrences; ++k) {
      Time s = r->spec.start + k * r->spec.Period();
      Time end = r->spec.end >= kInfinite ? kInfinite : r->spec.end + k * r->spec.Period();
      std::vector<Time> times;
      if (r == own) {
        times = {s, end};  // it may start from s, and no more from the end
      } else {
        times = {s - d + 1, end};  // the window starts to overlap it, and stops
      }
      for (Time t : times) {
        if (t <= now || t >= kInfinite) continue;
        r->nodes.ForEachAnd(cand, [&](size_t n) {
          out->emplace_back(t, static_cast<uint32_t>(n));
          return true;
        });
      }
    }
  }
}

}  // namespace berth::core
