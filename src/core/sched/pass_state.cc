#include "core/sched/pass_state.h"

#include <algorithm>
#include <bit>
#include <map>

namespace berth::core {
namespace {

uint64_t Key(int64_t a, int64_t b) {
  return (static_cast<uint64_t>(a) << 32) | static_cast<uint32_t>(b);
}

RunCounters CountersOf(const Allocation& alloc, int sign) {
  RunCounters rc;
  for (const NodeAllocation& n : alloc.nodes) {
    rc.cpus += n.cpus;
    rc.mem_mib += n.mem_mib;
    rc.gpus += n.gpu_count();
  }
  rc.nodes = static_cast<int64_t>(alloc.nodes.size());
  rc.jobs = 1;
  RunCounters out;
  out.Add(rc, sign);
  return out;
}

void MinInto(NodeFree& acc, const NodeFree& f) {
  acc.cpus = std::min(acc.cpus, f.cpus);
  acc.mem_mib = std::min(acc.mem_mib, f.mem_mib);
  if (!acc.gpu_milli.empty() || !f.gpu_milli.empty()) {
    // A device held whole at either time stays held whole; else the larger shared part.
    size_t n = std::max(acc.gpu_milli.size(), f.gpu_milli.size());
    std::vector<int32_t> m(n, 0);
    for (size_t d = 0; d < n; ++d) {
      int di = static_cast<int>(d);
      bool whole = acc.ShareRoom(di) == 0 && acc.SharedMilli(di) == 0;
      whole = whole || (f.ShareRoom(di) == 0 && f.SharedMilli(di) == 0);
      m[d] = whole ? 0 : std::max(acc.SharedMilli(di), f.SharedMilli(di));
    }
    acc.gpu_milli = std::move(m);
  }
  acc.gpus &= f.gpus;
  for (size_t i = 0; i < acc.gres.size() && i < f.gres.size(); ++i) {
    acc.gres[i] = std::min(acc.gres[i], f.gres[i]);
  }
  if (f.sole_user != acc.sole_user && f.sole_user != -1) {
    acc.sole_user = acc.sole_user == -1 ? f.sole_user : -2;
  }
  acc.user_exclusive = acc.user_exclusive || f.user_exclusive;
}

}  // namespace

uint32_t PassScratch::Begin(size_t nodes) {
  if (slots_.size() != nodes) slots_.resize(nodes);
  if (counts_.size() != nodes) counts_.assign(nodes, 0);
  if (frees_.size() != nodes) frees_.resize(nodes);
  if (++epoch_ == 0) {  // wrapped: no stamp may look current
    for (Slot& s : slots_) s.changed = s.profile = s.starts = s.reservations = 0;
    epoch_ = 1;
  }
  return epoch_;
}

PassState::PassState(const ClusterState& cs, Time now, PassScratch* scratch)
    : cs_(cs),
      now_(now),
      scratch_(scratch != nullptr && !scratch->in_use_ ? scratch : &own_scratch_),
      epoch_(scratch_->Begin(cs.num_nodes())),
      cpu_free_(cs.cpu_free_nodes()),
      gpu_buckets_(cs.gpu_buckets()),
      free_cpus_bound_(cs.usable_free_cpus()),
      reserved_(cs.num_nodes()) {
  scratch_->in_use_ = true;
}

PassState::~PassState() {
  scratch_->in_use_ = false;
}

NodeFree PassState::FreeNow(uint32_t n) const {
  const PassScratch::Slot& s = SlotOf(n);
  if (s.changed == epoch_) return s.free;
  return NodeFree::Of(cs_.node(n));
}

NodeFree& PassState::Mutable(uint32_t n) {
  PassScratch::Slot& s = SlotOf(n);
  if (s.changed != epoch_) {
    s.free = NodeFree::Of(cs_.node(n));
    s.changed = epoch_;
  }
  return s.free;
}

namespace {
// Notes that start or reservation `index` has node n at `pos` of its allocation; a node listed
// twice in one allocation keeps its first entry's place (as a scan would find).
void NoteOn(std::vector<PassScratch::OnNode>& on, int32_t index, size_t pos) {
  int32_t p = static_cast<int32_t>(pos);
  if (!on.empty() && on.back().index == index) p = on.back().pos;
  on.push_back({index, p});
}
}  // namespace

void PassState::AddStartOn(uint32_t n, int32_t index, size_t pos) {
  PassScratch::Slot& slot = SlotOf(n);
  if (slot.starts != epoch_) {
    slot.start_indices.clear();
    slot.starts = epoch_;
  }
  NoteOn(slot.start_indices, index, pos);
}

void PassState::Reindex(uint32_t n) {
  const NodeFree& f = SlotOf(n).free;
  bool usable = cs_.usable_nodes().Test(n);
  cpu_free_.Assign(n, usable && f.cpus > 0);
  int free = std::popcount(f.gpus);
  for (size_t k = 0; k < gpu_buckets_.size(); ++k) {
    gpu_buckets_[k].Assign(n, usable && static_cast<int>(k) == free);
  }
}

void PassState::CountStart(const JobEntry& e, const Allocation& alloc, int sign) {
  RunCounters rc = CountersOf(alloc, sign);
  qos_user_[Key(e.qos, e.user)].Add(rc, +1);
  qos_account_[Key(e.qos, e.account)].Add(rc, +1);
  assoc_[e.assoc].Add(rc, +1);
  for (int32_t a = e.account; a >= 0; a = cs_.accounts()[a].parent) account_[a].Add(rc, +1);
  if (e.job.array_job_id != kNoJob) array_running_[e.job.array_job_id] += sign;
  named_[{e.user, e.job.spec->name}] += sign;
  for (const NamedCount& l : alloc.licenses) licenses_[l.name] += sign * l.count;
}

void PassState::Start(const JobEntry& e, JobId job_id, Time end, const Allocation& alloc) {
  bool excl_user = e.job.spec->exclusive == ExclusiveMode::kUser;
  int32_t index = static_cast<int32_t>(starts_.size());
  // FreeCpusBound's memo reads the reserved nodes only: a start there moves those nodes' parts
  // of each deficit computed so far, which are taken out before and put back after (two
  // FreeDuring per node and deficit: with more than a few deficits computed, as many
  // reservations make, the memo is forgotten and recomputed when next asked instead).
  std::vector<uint32_t>& in_bound = bound_nodes_;
  in_bound.clear();
  if (bound_valid_) {
    for (const NodeAllocation& a : alloc.nodes) {
      if (reserved_.Test(a.node)) in_bound.push_back(a.node);
    }
  }
  if (!in_bound.empty() && std::count_if(bound_deficit_.begin(), bound_deficit_.end(),
                                         [](int64_t d) { return d >= 0; }) > kBoundTermsKept) {
    bound_valid_ = false;
    in_bound.clear();
  }
  std::sort(in_bound.begin(), in_bound.end());
  in_bound.erase(std::unique(in_bound.begin(), in_bound.end()), in_bound.end());
  for (uint32_t n : in_bound) AddBoundTerms(n, -1);
  for (size_t pos = 0; pos < alloc.nodes.size(); ++pos) {
    const NodeAllocation& a = alloc.nodes[pos];
    Mutable(a.node).Take(cs_.node(a.node), a, e.user, excl_user);
    Reindex(a.node);
    SlotOf(a.node).profile = 0;
    AddStartOn(a.node, index, pos);
    // A start that ends by now gives its CPUs back at once to FreeAt(now): keep them counted.
    if (end > now_ && cs_.usable_nodes().Test(a.node)) free_cpus_bound_ -= a.cpus;
  }
  starts_.push_back({job_id, end, alloc, e.user, excl_user});
  for (uint32_t n : in_bound) AddBoundTerms(n, +1);
  CountStart(e, alloc, +1);
}

namespace {

// Adds `b` into `a` (same node).
void AddInto(NodeAllocation& a, const NodeAllocation& b) {
  a.cpus += b.cpus;
  a.mem_mib += b.mem_mib;
  a.gpu_mask |= b.gpu_mask;
  a.gpu_shares.insert(a.gpu_shares.end(), b.gpu_shares.begin(), b.gpu_shares.end());
  for (const NamedCount& g : b.gres) {
    auto it = std::find_if(a.gres.begin(), a.gres.end(),
                           [&](const NamedCount& x) { return x.name == g.name; });
    if (it == a.gres.end()) {
      a.gres.push_back(g);
    } else {
      it->count += g.count;
    }
  }
}

// Moves the part of `want` that `held` covers out of both.
void TakeFrom(NodeAllocation& held, NodeAllocation& want) {
  int32_t cpus = std::min(held.cpus, want.cpus);
  int64_t mem = std::min(held.mem_mib, want.mem_mib);
  uint64_t gpus = held.gpu_mask & want.gpu_mask;
  held.cpus -= cpus;
  held.mem_mib -= mem;
  held.gpu_mask &= ~gpus;
  want.cpus -= cpus;
  want.mem_mib -= mem;
  want.gpu_mask &= ~gpus;
  // A device the victims held whole and the new job shares (or the reverse) changes hands: the
  // victims' part of it is not given back later. The shared part the victims held on a device
  // the new job shares too covers that much of the new share.
  for (GpuShare& w : want.gpu_shares) {
    uint64_t bit = uint64_t{1} << w.device;
    if (held.gpu_mask & bit) {
      held.gpu_mask &= ~bit;
      continue;
    }
    for (GpuShare& h : held.gpu_shares) {
      if (h.device != w.device) continue;
      int32_t c = std::min(h.milli, w.milli);
      h.milli -= c;
      w.milli -= c;
    }
  }
  std::erase_if(held.gpu_shares, [&](const GpuShare& h) {
    return h.milli == 0 || ((want.gpu_mask | gpus) >> h.device & 1);
  });
  std::erase_if(want.gpu_shares, [](const GpuShare& w) { return w.milli == 0; });
  for (NamedCount& g : want.gres) {
    for (NamedCount& h : held.gres) {
      if (h.name != g.name) continue;
      int64_t c = std::min(h.count, g.count);
      h.count -= c;
      g.count -= c;
    }
  }
}

}  // namespace

void PassState::StartAfterPreempting(const JobEntry& e, JobId job_id, Time end,
                                     const Allocation& alloc,
                                     const std::vector<const JobEntry*>& victims) {
  bound_valid_ = false;
  std::map<uint32_t, NodeAllocation> held;  // what the victims hold, per node
  for (const JobEntry* v : victims) {
    preempted_.insert(v->job.id);
    CountStart(*v, v->job.alloc, -1);
    for (const NodeAllocation& a : v->job.alloc.nodes) {
      SlotOf(a.node).profile = 0;
      NodeAllocation& h = held[a.node];
      h.node = a.node;
      AddInto(h, a);
    }
  }
  bool excl_user = e.job.spec->exclusive == ExclusiveMode::kUser;
  int32_t index = static_cast<int32_t>(starts_.size());
  for (size_t pos = 0; pos < alloc.nodes.size(); ++pos) {
    const NodeAllocation& a = alloc.nodes[pos];
    NodeAllocation from_free = a;
    if (auto it = held.find(a.node); it != held.end()) TakeFrom(it->second, from_free);
    Mutable(a.node).Take(cs_.node(a.node), from_free, e.user, excl_user);
    Reindex(a.node);
    SlotOf(a.node).profile = 0;
    AddStartOn(a.node, index, pos);
    if (end > now_ && cs_.usable_nodes().Test(a.node)) free_cpus_bound_ -= from_free.cpus;
  }
  for (auto& [n, rest] : held) {
    if (rest.cpus > 0 || rest.mem_mib > 0 || rest.gpu_mask != 0 || !rest.gpu_shares.empty()) {
      leftovers_[n].push_back(std::move(rest));
    }
  }
  starts_.push_back({job_id, end, alloc, e.user, excl_user});
  CountStart(e, alloc, +1);
  ++freed_generation_;
}

void PassState::Reserve(Reservation r) {
  bound_valid_ = false;
  int32_t index = static_cast<int32_t>(reservations_.size());
  for (size_t pos = 0; pos < r.alloc.nodes.size(); ++pos) {
    const NodeAllocation& a = r.alloc.nodes[pos];
    reserved_.Set(a.node);
    PassScratch::Slot& slot = SlotOf(a.node);
    if (slot.reservations != epoch_) {
      slot.reservation_indices.clear();
      slot.reservations = epoch_;
    }
    NoteOn(slot.reservation_indices, index, pos);
    slot.profile = 0;
  }
  reservations_.push_back(std::move(r));
}

int64_t PassState::FreeCpusBound(Duration d) const {
  if (reservations_.empty()) return free_cpus_bound_;
  if (!bound_valid_) {
    bound_starts_.clear();
    bool active_now = false;
    for (const Reservation& r : reservations_) {
      if (r.start > now_) bound_starts_.push_back(r.start);
      active_now = active_now || (r.start <= now_ && r.end > now_);
    }
    std::sort(bound_starts_.begin(), bound_starts_.end());
    bound_starts_.erase(std::unique(bound_starts_.begin(), bound_starts_.end()),
                        bound_starts_.end());
    bound_deficit_.assign(bound_starts_.size() + 1, -1);
    // A window that no reservation start enters: FreeAt(n, now) has at least FreeNow's CPUs
    // (nothing running ends by now; starts that did give theirs back) unless a reservation
    // holds the node now.
    bound_active_now_ = active_now;
    if (!active_now) bound_deficit_[0] = 0;
    bound_valid_ = true;
  }
  // FreeDuring(n, now, now + d) takes the minimum over now and the reservation starts in
  // (now, now + d): the first k of bound_starts_, the same set as for the window up to the k-th
  // start (inclusive).
  const size_t k =
      static_cast<size_t>(std::lower_bound(bound_starts_.begin(), bound_starts_.end(), now_ + d) -
                          bound_starts_.begin());
  int64_t& deficit = bound_deficit_[k];
  if (deficit < 0) {
    // Each usable node counts in free_cpus_bound_ at least its FreeNow CPUs, which are at least
    // what FreeDuring gives it from now on: taking off the difference keeps a bound (nodes with
    // no CPU free now have nothing to take off).
    deficit = 0;
    reserved_.ForEachAnd(cpu_free_, [&](size_t i) {
      deficit += BoundTerm(static_cast<uint32_t>(i), k);
      return true;
    });
  }
  return free_cpus_bound_ - deficit;
}

int64_t PassState::BoundTerm(uint32_t n, size_t k) const {
  if ((k == 0 && !bound_active_now_) || !cpu_free_.Test(n)) return 0;
  const Time t1 = k == 0 ? now_ + 1 : bound_starts_[k - 1] + 1;
  return std::max(0, FreeNow(n).cpus - FreeDuring(n, now_, t1).cpus);
}

void PassState::AddBoundTerms(uint32_t n, int sign) {
  for (size_t k = 0; k < bound_deficit_.size(); ++k) {
    if (bound_deficit_[k] >= 0) bound_deficit_[k] += sign * BoundTerm(n, k);
  }
}

const std::vector<std::pair<Time, int32_t>>& PassState::StartsByEnd() const {
  const size_t sorted = starts_by_end_.size();
  if (sorted == starts_.size()) return starts_by_end_;
  for (size_t i = sorted; i < starts_.size(); ++i) {
    starts_by_end_.emplace_back(starts_[i].end, static_cast<int32_t>(i));
  }
  auto mid = starts_by_end_.begin() + static_cast<std::ptrdiff_t>(sorted);
  std::sort(mid, starts_by_end_.end());
  std::inplace_merge(starts_by_end_.begin(), mid, starts_by_end_.end());
  return starts_by_end_;
}

Time PassState::EstimatedEnd(const Job& job) const {
  return std::max(now_ + 1, job.start_time + job.time_limit);
}

NodeFree PassState::FreeAt(uint32_t n, Time t) const {
  NodeFree f = FreeNow(n);
  const NodeInfo& node = cs_.node(n);
  // Who holds the node at t, for the --exclusive=user rules.
  int64_t sole = -1;
  bool exclusive = false;
  auto hold = [&](int32_t user, bool excl) {
    sole = sole == -1 ? user : (sole == user ? sole : -2);
    exclusive = exclusive || excl;
  };
  // What running jobs release by t (at their estimated ends: see EstimatedEnd), in any order.
  const bool any_preempted = !preempted_.empty();
  for (const ClusterState::NodeHold& h : cs_.holds_on(n)) {
    if (any_preempted && preempted_.count(h.job)) continue;
    if (std::max(now_ + 1, h.end) <= t) {
      f.Give(node, h.alloc);
    } else {
      hold(h.user, h.exclusive_user);
    }
  }
  if (t > now_ && !leftovers_.empty()) {
    if (auto it = leftovers_.find(n); it != leftovers_.end()) {
      for (const NodeAllocation& a : it->second) f.Give(node, a);
    }
  }
  if (const std::vector<OnNode>* on = StartsOn(n)) {
    for (const OnNode& o : *on) {
      const PassStart& st = starts_[o.index];
      const NodeAllocation* a = &st.alloc.nodes[o.pos];
      if (st.end <= t) {
        f.Give(node, *a);
      } else {
        hold(st.user, st.exclusive_user);
      }
    }
  }
  if (const std::vector<OnNode>* on = ReservationsOn(n)) {
    for (const OnNode& o : *on) {
      const Reservation& r = reservations_[o.index];
      if (r.start > t || r.end <= t) continue;
      f.Subtract(node, r.alloc.nodes[o.pos]);
      hold(r.user, r.exclusive_user);
    }
  }
  f.sole_user = sole;
  f.user_exclusive = exclusive;
  return f;
}

const PassState::Profile& PassState::ProfileOf(uint32_t n) const {
  PassScratch::Slot& slot = SlotOf(n);
  Profile& p = slot.profile_data;
  if (slot.profile == epoch_) return p;
  p.at_now = FreeAt(n, now_);
  p.at_reservation_start.clear();
  if (const std::vector<OnNode>* on = ReservationsOn(n)) {
    for (const OnNode& o : *on) {
      p.at_reservation_start.push_back(FreeAt(n, reservations_[o.index].start));
    }
  }
  slot.profile = epoch_;
  return p;
}

NodeFree PassState::FreeDuring(uint32_t n, Time t0, Time t1) const {
  if (t0 == now_ && !HasReservations(n)) return FreeNow(n);
  const std::vector<OnNode>* on = ReservationsOn(n);
  if (t0 == now_) {
    // The same minimum as below, from the node's cached profile.
    const Profile& p = ProfileOf(n);
    NodeFree acc = p.at_now;
    if (on == nullptr) return acc;
    for (size_t k = 0; k < on->size(); ++k) {
      const Reservation& r = reservations_[(*on)[k].index];
      if (r.start > t0 && r.start < t1) MinInto(acc, p.at_reservation_start[k]);
    }
    return acc;
  }
  NodeFree acc = FreeAt(n, t0);
  if (on == nullptr) return acc;
  for (const OnNode& o : *on) {
    const Reservation& r = reservations_[o.index];
    if (r.start > t0 && r.start < t1) MinInto(acc, FreeAt(n, r.start));
  }
  return acc;
}

RunCounters PassState::QosUser(int16_t qos, int32_t user) const {
  RunCounters rc;
  if (const RunCounters* base = cs_.QosUserCounters(qos, user)) rc = *base;
  if (auto it = qos_user_.find(Key(qos, user)); it != qos_user_.end()) rc.Add(it->second, +1);
  return rc;
}

RunCounters PassState::QosAccount(int16_t qos, int32_t account) const {
  RunCounters rc;
  if (const RunCounters* base = cs_.QosAccountCounters(qos, account)) rc = *base;
  if (auto it = qos_account_.find(Key(qos, account)); it != qos_account_.end()) {
    rc.Add(it->second, +1);
  }
  return rc;
}

RunCounters PassState::Assoc(int32_t assoc) const {
  RunCounters rc = cs_.assocs()[assoc].running;
  if (auto it = assoc_.find(assoc); it != assoc_.end()) rc.Add(it->second, +1);
  return rc;
}

RunCounters PassState::Account(int32_t account) const {
  RunCounters rc = cs_.accounts()[account].running;
  if (auto it = account_.find(account); it != account_.end()) rc.Add(it->second, +1);
  return rc;
}

int32_t PassState::ArrayRunning(JobId array_job_id) const {
  int32_t n = 0;
  if (const ArrayInfo* a = cs_.FindArray(array_job_id)) n = a->running;
  if (auto it = array_running_.find(array_job_id); it != array_running_.end()) n += it->second;
  return n;
}

int32_t PassState::RunningWithName(int32_t user, const std::string& name) const {
  int32_t n = cs_.RunningWithName(user, name);
  if (auto it = named_.find({user, name}); it != named_.end()) n += it->second;
  return n;
}

int64_t PassState::LicenseUsed(const std::string& name) const {
  int64_t n = cs_.license_used(name);
  if (auto it = licenses_.find(name); it != licenses_.end()) n += it->second;
  return n;
}

}  // namespace berth::core
