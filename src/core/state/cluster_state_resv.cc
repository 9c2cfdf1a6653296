// ClusterState: advance reservations (add, update, delete, expire).
#include <algorithm>

#include "core/state/cluster_state.h"

namespace berth::core {
namespace {

// Whether two reservations' occurrences can overlap in time. A repeating one is compared by
// its current occurrence and the next few (enough for a daily against a weekly one).
bool TimesOverlap(const ResvSpec& a, const ResvSpec& b) {
  for (int i = 0; i < 8; ++i) {
    Duration pa = a.Period() * i;
    if (i > 0 && pa == 0) break;
    for (int j = 0; j < 8; ++j) {
      Duration pb = b.Period() * j;
      if (j > 0 && pb == 0) break;
      Time as = a.start + pa, ae = a.end >= kInfinite ? kInfinite : a.end + pa;
      Time bs = b.start + pb, be = b.end >= kInfinite ? kInfinite : b.end + pb;
      if (as < be && bs < ae) return true;
    }
  }
  return false;
}

}  // namespace

Result<ResvInfo> ClusterState::CheckReservation(ResvSpec spec, int32_t node_count, Time now) const {
  // The name is a store key and a URL path segment: printable, without separators.
  bool name_ok = !spec.name.empty() && spec.name.size() <= 128;
  for (char c : spec.name) {
    name_ok = name_ok && c > ' ' && c < 127 && c != '/' && c != ',' && c != '=' && c != '%' &&
              c != '?' && c != '#';
  }
  if (!name_ok) return Status::InvalidArgument("Invalid reservation name: '" + spec.name + "'");
  if (spec.users.empty() && spec.accounts.empty()) {
    return Status::InvalidArgument(
        "Either Users/Groups and/or Accounts must be specified.  No reservation created.");
  }
  if (spec.end != kInfinite && spec.end <= spec.start) {
    return Status::InvalidArgument("Invalid time specified");
  }
  if (spec.end <= now) return Status::InvalidArgument("Invalid time specified");
  if (spec.Period() > 0 && spec.end - spec.start > spec.Period()) {
    return Status::InvalidArgument("Invalid time specified");
  }
  // Without enforced associations any account name is taken (jobs may name any, too).
  for (const std::string& a : spec.accounts) {
    if (spec_.enforce_associations && !FindAccount(a)) {
      return Status::InvalidArgument("Invalid account or account/partition combination specified");
    }
  }
  std::optional<int16_t> partition;
  if (!spec.partition.empty()) {
    partition = FindPartition(spec.partition);
    if (!partition) return Status::InvalidArgument("Invalid partition name specified");
  }
  ResvInfo info;
  info.nodes = Bitset(nodes_.size());
  for (const std::string& name : spec.nodes) {
    std::optional<uint32_t> n = FindNode(name);
    if (!n) return Status::InvalidArgument("Invalid node name specified");
    info.nodes.Set(*n);
  }
  // Nodes another reservation holds at an overlapping time, and nodes a running job still holds
  // at the start.
  Bitset taken(nodes_.size());
  for (const auto& [name, other] : reservations_) {
    if (name == spec.name) continue;
    if (TimesOverlap(spec, other.spec)) taken |= other.nodes;
  }
  if (!spec.Has(kResvIgnoreJobs)) {
    for (JobId id : running_) {
      const Job& job = jobs_.at(id).job;
      Time end = job.time_limit >= kInfinite ? kInfinite : job.start_time + job.time_limit;
      if (end <= spec.start) continue;
      for (const NodeAllocation& a : job.alloc.nodes) taken.Set(a.node);
    }
  }
  if (spec.nodes.empty()) {
    if (node_count <= 0) {
      return Status::InvalidArgument(
          "Nodes, NodeCnt, CoreCnt, TRES or Watts must be specified.  No reservation created.");
    }
    int32_t picked = 0;
    for (uint32_t n = 0; n < nodes_.size() && picked < node_count; ++n) {
      if (partition && !partitions_[*partition].nodes.Test(n)) continue;
      if (!Schedulable(nodes_[n]) || taken.Test(n)) continue;
      info.nodes.Set(n);
      ++picked;
    }
    if (picked < node_count) return Status::FailedPrecondition("Requested nodes are busy");
    info.nodes.ForEach([&](size_t n) {
      spec.nodes.push_back(nodes_[n].spec.name);
      return true;
    });
  } else {
    if (info.nodes.Intersects(taken)) return Status::FailedPrecondition("Requested nodes are busy");
    spec.nodes.clear();
    info.nodes.ForEach([&](size_t n) {
      spec.nodes.push_back(nodes_[n].spec.name);
      return true;
    });
  }
  info.spec = std::move(spec);
  return info;
}

Result<std::string> ClusterState::AddReservation(ResvSpec spec, int32_t node_count, Time now) {
  if (spec.name.empty()) {
    std::string base = !spec.users.empty()     ? spec.users.front()
                       : spec.accounts.empty() ? "resv"
                                               : spec.accounts.front();
    int32_t n = next_resv_number_;
    while (reservations_.count(base + "_" + std::to_string(n))) ++n;
    spec.name = base + "_" + std::to_string(n);
  }
  if (reservations_.count(spec.name)) return Status::AlreadyExists("Duplicate reservation name");
  BERTH_ASSIGN_OR_RETURN(ResvInfo info, CheckReservation(std::move(spec), node_count, now));
  std::string name = info.spec.name;
  reservations_.emplace(name, std::move(info));
  ++next_resv_number_;
  return name;
}

Status ClusterState::UpdateReservation(ResvSpec spec, int32_t node_count, Time now) {
  auto it = reservations_.find(spec.name);
  if (it == reservations_.end()) return Status::NotFound("Requested reservation is invalid");
  BERTH_ASSIGN_OR_RETURN(ResvInfo info, CheckReservation(std::move(spec), node_count, now));
  it->second = std::move(info);
  return Status::Ok();
}

Status ClusterState::DeleteReservation(std::string_view name) {
  auto it = reservations_.find(std::string(name));
  if (it == reservations_.end()) return Status::NotFound("Requested reservation is invalid");
  reservations_.erase(it);
  return Status::Ok();
}

const ResvInfo* ClusterState::FindReservation(std::string_view name) const {
  auto it = reservations_.find(std::string(name));
  return it == reservations_.end() ? nullptr : &it->second;
}

std::vector<std::string> ClusterState::ExpireReservations(Time now) {
  std::vector<std::string> changed;
  for (auto it = reservations_.begin(); it != reservations_.end();) {
    ResvSpec& s = it->second.spec;
    if (s.end > now) {
      ++it;
      continue;
    }
    changed.push_back(it->first);
    if (s.Period() > 0) {
      s = NextOccurrence(std::move(s), now);
      ++it;
    } else {
      it = reservations_.erase(it);
    }
  }
  return changed;
}

Status ClusterState::RestoreReservation(ResvSpec spec) {
  ResvInfo info;
  info.nodes = Bitset(nodes_.size());
  for (const std::string& name : spec.nodes) {
    std::optional<uint32_t> n = FindNode(name);
    if (!n) return Status::InvalidArgument("reservation " + spec.name + ": unknown node " + name);
    info.nodes.Set(*n);
  }
  std::string name = spec.name;
  info.spec = std::move(spec);
  reservations_[name] = std::move(info);
  return Status::Ok();
}

}  // namespace berth::core
