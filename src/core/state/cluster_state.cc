// ClusterState: construction, nodes, partitions, accounts and the scheduler's indices.
// Job lifecycle methods are in cluster_state_jobs.cc.
#include "core/state/cluster_state.h"

#include <algorithm>

namespace berth::core {

void RunCounters::Add(const RunCounters& o, int sign) {
  cpus += sign * o.cpus;
  mem_mib += sign * o.mem_mib;
  gpus += sign * o.gpus;
  nodes += sign * o.nodes;
  jobs += sign * o.jobs;
}

NodeState NodeInfo::state() const {
  return DeriveNodeState(health, drain, spec.cpus - free_cpus, spec.cpus,
                         num_gpus - free_gpu_count(), num_gpus);
}

Result<ClusterState> ClusterState::Create(const ClusterSpec& spec) {
  ClusterState s;
  s.spec_ = spec;
  s.gpu_buckets_.resize(1);
  for (const NodeSpec& n : spec.nodes) {
    Result<uint32_t> r = s.AddNodeInternal(n, 0);
    if (!r.ok()) return r.status();
  }
  BERTH_RETURN_IF_ERROR(s.AddAccountTree(spec));
  BERTH_RETURN_IF_ERROR(s.AddPartitions(spec));
  s.spec_.nodes.clear();  // nodes_ is the record from now on
  return s;
}

Status ClusterState::AddAccountTree(const ClusterSpec& spec) {
  // QoS
  std::vector<QosSpec> qos = spec.qos;
  if (std::none_of(qos.begin(), qos.end(),
                   [](const QosSpec& q) { return q.name == kDefaultQos; })) {
    QosSpec normal;
    normal.name = kDefaultQos;
    qos.insert(qos.begin(), normal);
  }
  for (const QosSpec& q : qos) {
    if (FindQos(q.name)) return Status::InvalidArgument("QoS '" + q.name + "' defined twice");
    QosInfo info;
    info.spec = q;
    info.index = static_cast<int16_t>(qos_.size());
    qos_.push_back(std::move(info));
  }
  for (QosInfo& q : qos_) {
    for (const std::string& p : q.spec.preempt) {
      std::optional<int16_t> id = FindQos(p);
      if (!id) {
        return Status::InvalidArgument("QoS '" + q.spec.name + "' preempts unknown QoS '" + p +
                                       "'");
      }
      q.preempt.push_back(*id);
    }
  }
  // Accounts: root first, then in an order where parents precede children.
  AccountInfo root;
  root.spec.name = kRootAccount;
  root.spec.parent.clear();
  accounts_.push_back(root);
  std::vector<AccountSpec> todo;
  for (const AccountSpec& a : spec.accounts) {
    if (a.name == kRootAccount) {
      accounts_[0].spec.grp_tres = a.grp_tres;
      accounts_[0].spec.grp_jobs = a.grp_jobs;
      continue;
    }
    todo.push_back(a);
  }
  while (!todo.empty()) {
    size_t before = todo.size();
    for (auto it = todo.begin(); it != todo.end();) {
      std::optional<int32_t> parent = FindAccount(it->parent.empty() ? kRootAccount : it->parent);
      if (!parent) {
        ++it;
        continue;
      }
      if (FindAccount(it->name)) {
        return Status::InvalidArgument("account '" + it->name + "' defined twice");
      }
      if (it->shares < 0) return Status::InvalidArgument("account '" + it->name + "': shares < 0");
      AccountInfo info;
      info.spec = *it;
      info.index = static_cast<int32_t>(accounts_.size());
      info.parent = *parent;
      accounts_[*parent].children.push_back(info.index);
      accounts_.push_back(std::move(info));
      it = todo.erase(it);
    }
    if (todo.size() == before) {
      return Status::InvalidArgument("account '" + todo.front().name + "' has unknown parent '" +
                                     todo.front().parent + "' (or the parents form a cycle)");
    }
  }
  for (const UserSpec& u : spec.users) {
    std::optional<int32_t> acct = FindAccount(u.account);
    if (!acct) {
      return Status::InvalidArgument("user '" + u.name + "' is in unknown account '" + u.account +
                                     "'");
    }
    int32_t user = InternUser(u.name);
    for (const AssocInfo& a : assocs_) {
      if (a.user == user && a.account == *acct) {
        return Status::InvalidArgument("user '" + u.name + "' is in account '" + u.account +
                                       "' twice");
      }
    }
    AssocInfo info;
    info.spec = u;
    info.index = static_cast<int32_t>(assocs_.size());
    info.account = *acct;
    info.user = user;
    accounts_[*acct].assocs.push_back(info.index);
    if (u.is_default || default_assoc_of_user_[user] < 0) default_assoc_of_user_[user] = info.index;
    assocs_.push_back(std::move(info));
  }
  return Status::Ok();
}

Status ClusterState::AddPartitions(const ClusterSpec& spec) {
  std::vector<PartitionSpec> parts = spec.partitions;
  if (parts.empty()) {
    PartitionSpec p;
    p.name = "main";
    p.is_default = true;
    for (const NodeInfo& n : nodes_) p.nodes.push_back(n.spec.name);
    parts.push_back(p);
  }
  default_partition_ = -1;
  for (const PartitionSpec& ps : parts) {
    if (FindPartition(ps.name)) {
      return Status::InvalidArgument("partition '" + ps.name + "' defined twice");
    }
    PartitionInfo p;
    p.spec = ps;
    p.index = static_cast<int16_t>(partitions_.size());
    p.nodes = Bitset(nodes_.size());
    for (const std::string& name : ps.nodes) {
      std::optional<uint32_t> n = FindNode(name);
      if (!n) {
        return Status::InvalidArgument("partition '" + ps.name + "' lists unknown node '" + name +
                                       "'");
      }
      if (p.nodes.Test(*n)) continue;
      p.nodes.Set(*n);
      nodes_[*n].partitions.push_back(p.index);
      p.total_cpus += nodes_[*n].spec.cpus;
      p.total_gpus += nodes_[*n].num_gpus;
      ++p.total_nodes;
    }
    for (const std::string& a : ps.allow_accounts) {
      std::optional<int32_t> id = FindAccount(a);
      if (!id) {
        return Status::InvalidArgument("partition '" + ps.name + "' allows unknown account '" + a +
                                       "'");
      }
      p.allow_accounts.push_back(static_cast<int16_t>(*id));
    }
    for (const std::string& q : ps.allow_qos) {
      std::optional<int16_t> id = FindQos(q);
      if (!id) {
        return Status::InvalidArgument("partition '" + ps.name + "' allows unknown QoS '" + q +
                                       "'");
      }
      p.allow_qos.push_back(*id);
    }
    if (ps.is_default && default_partition_ < 0) default_partition_ = p.index;
    partitions_.push_back(std::move(p));
  }
  if (default_partition_ < 0) default_partition_ = 0;
  return Status::Ok();
}

Result<uint32_t> ClusterState::AddNodeInternal(const NodeSpec& spec, Time now) {
  if (spec.name.empty()) return Status::InvalidArgument("a node has no name");
  if (FindNode(spec.name)) return Status::InvalidArgument("node '" + spec.name + "' defined twice");
  if (spec.cpus <= 0) return Status::InvalidArgument("node '" + spec.name + "': CPUs must be > 0");
  if (spec.mem_mib < 0) return Status::InvalidArgument("node '" + spec.name + "': memory < 0");
  if (spec.gpus.size() > static_cast<size_t>(kMaxGpusPerNode)) {
    return Status::InvalidArgument("node '" + spec.name + "': more than 64 GPUs");
  }
  NodeInfo n;
  n.spec = spec;
  n.index = static_cast<uint32_t>(nodes_.size());
  n.num_gpus = static_cast<int>(spec.gpus.size());
  for (int i = 0; i < n.num_gpus; ++i) {
    int16_t t = InternGpuType(spec.gpus[i]);
    auto it = std::find_if(n.gpu_types.begin(), n.gpu_types.end(),
                           [t](const auto& p) { return p.first == t; });
    if (it == n.gpu_types.end()) {
      n.gpu_types.emplace_back(t, uint64_t{1} << i);
    } else {
      it->second |= uint64_t{1} << i;
    }
  }
  for (const NamedCount& g : spec.gres) {
    if (g.count < 0) return Status::InvalidArgument("node '" + spec.name + "': gres count < 0");
    n.gres_ids.push_back(InternGres(g.name));
    n.free_gres.push_back(g.count);
  }
  for (const std::string& f : spec.features) n.feature_ids.push_back(InternFeature(f));
  std::sort(n.feature_ids.begin(), n.feature_ids.end());
  n.feature_ids.erase(std::unique(n.feature_ids.begin(), n.feature_ids.end()), n.feature_ids.end());
  n.health = spec.cloud ? NodeHealth::kPoweredDown : NodeHealth::kUp;
  n.state_since = now;
  n.idle_since = now;
  n.free_cpus = spec.cpus;
  n.free_mem_mib = spec.mem_mib;
  n.free_gpus = n.num_gpus == 64 ? ~uint64_t{0} : (uint64_t{1} << n.num_gpus) - 1;
  uint32_t index = n.index;
  ++config_generation_;
  ++node_state_generation_;
  node_by_name_[spec.name] = index;
  nodes_.push_back(std::move(n));
  total_cpus_ += spec.cpus;
  max_node_cpus_ = std::max(max_node_cpus_, spec.cpus);

  // Grow every per-node bitset by one.
  size_t count = nodes_.size();
  usable_.Resize(count);
  asleep_.Resize(count);
  cpu_free_.Resize(count);
  indexed_free_cpus_.resize(count, 0);
  holds_.resize(count);
  while (gpu_buckets_.size() < static_cast<size_t>(nodes_[index].num_gpus) + 1) {
    gpu_buckets_.emplace_back(count);
  }
  for (Bitset& b : gpu_buckets_) b.Resize(count);
  for (PartitionInfo& p : partitions_) p.nodes.Resize(count);
  for (TopoGroup& g : topo_groups_) g.nodes.Resize(count);
  for (NodeClass& c : classes_) c.nodes.Resize(count);
  for (auto& [name, r] : reservations_) r.nodes.Resize(count);
  auto same_class = [&](const NodeClass& c) {
    const NodeInfo& r = nodes_[c.representative];
    const NodeInfo& added = nodes_[index];
    return r.spec.cpus == added.spec.cpus && r.spec.mem_mib == added.spec.mem_mib &&
           r.spec.gpus == added.spec.gpus && r.spec.gres == added.spec.gres &&
           r.feature_ids == added.feature_ids;
  };
  auto cit = std::find_if(classes_.begin(), classes_.end(), same_class);
  if (cit == classes_.end()) {
    classes_.push_back({index, Bitset(count)});
    cit = classes_.end() - 1;
  }
  cit->nodes.Set(index);
  for (auto& [w, b] : weights_) b.Resize(count);
  auto wit = std::find_if(weights_.begin(), weights_.end(),
                          [&](const auto& p) { return p.first == spec.weight; });
  if (wit == weights_.end()) {
    weights_.emplace_back(spec.weight, Bitset(count));
    std::sort(weights_.begin(), weights_.end(),
              [](const auto& a, const auto& b) { return a.first < b.first; });
    wit = std::find_if(weights_.begin(), weights_.end(),
                       [&](const auto& p) { return p.first == spec.weight; });
  }
  wit->second.Set(index);
  // Topology: one group per distinct path prefix.
  std::string path;
  for (size_t level = 0; level < spec.topology.size(); ++level) {
    path += (level ? "/" : "") + spec.topology[level];
    auto git = std::find_if(topo_groups_.begin(), topo_groups_.end(),
                            [&](const TopoGroup& g) { return g.name == path; });
    if (git == topo_groups_.end()) {
      TopoGroup g;
      g.name = path;
      g.level = static_cast<int>(level);
      g.nodes = Bitset(count);
      topo_groups_.push_back(std::move(g));
      git = topo_groups_.end() - 1;
    }
    git->nodes.Set(index);
    nodes_[index].topo_groups.push_back(static_cast<int32_t>(git - topo_groups_.begin()));
  }
  topo_depth_ = std::max(topo_depth_, static_cast<int>(spec.topology.size()));
  UpdateNodeIndex(index);
  return index;
}

Result<uint32_t> ClusterState::AddNode(const NodeSpec& spec,
                                       const std::vector<std::string>& partitions, Time now) {
  std::vector<int16_t> parts;
  for (const std::string& name : partitions) {
    std::optional<int16_t> p = FindPartition(name);
    if (!p) return Status::NotFound("partition '" + name + "' does not exist");
    parts.push_back(*p);
  }
  if (parts.empty() && !partitions_.empty()) parts.push_back(default_partition_);
  BERTH_ASSIGN_OR_RETURN(uint32_t index, AddNodeInternal(spec, now));
  for (int16_t p : parts) {
    PartitionInfo& info = partitions_[p];
    info.nodes.Set(index);
    info.spec.nodes.push_back(spec.name);
    info.total_cpus += spec.cpus;
    info.total_gpus += nodes_[index].num_gpus;
    ++info.total_nodes;
    nodes_[index].partitions.push_back(p);
  }
  return index;
}

bool ClusterState::Schedulable(const NodeInfo& n) const {
  if (n.drain) return false;
  if (n.health == NodeHealth::kUp) return true;
  return power_saving_ &&
         (n.health == NodeHealth::kPoweredDown || n.health == NodeHealth::kPoweringUp);
}

void ClusterState::SetPowerSaving(bool on) {
  if (power_saving_ == on) return;
  power_saving_ = on;
  ++node_state_generation_;
  for (uint32_t i = 0; i < nodes_.size(); ++i) UpdateNodeIndex(i);
}

void ClusterState::UpdateNodeIndex(uint32_t i) {
  NodeInfo& n = nodes_[i];
  bool usable = Schedulable(n);
  usable_.Assign(i, usable);
  asleep_.Assign(i, usable && n.health == NodeHealth::kPoweredDown);
  cpu_free_.Assign(i, usable && n.free_cpus > 0);
  int32_t counted = usable ? n.free_cpus : 0;
  usable_free_cpus_ += counted - indexed_free_cpus_[i];
  indexed_free_cpus_[i] = counted;
  int free = n.free_gpu_count();
  for (size_t k = 0; k < gpu_buckets_.size(); ++k) {
    gpu_buckets_[k].Assign(i, usable && static_cast<int>(k) == free);
  }
}

Status ClusterState::SetNodeHealth(uint32_t node, NodeHealth health, std::string reason, Time now) {
  if (node >= nodes_.size()) return Status::NotFound("no such node");
  NodeInfo& n = nodes_[node];
  if (n.health != health) n.state_since = now;
  ++node_state_generation_;
  n.health = health;
  // Coming back up clears why it was down, but not why an operator drained it.
  if (!reason.empty() || (health == NodeHealth::kUp && !n.drain)) n.reason = std::move(reason);
  UpdateNodeIndex(node);
  return Status::Ok();
}

Status ClusterState::SetNodeDrain(uint32_t node, bool drain, std::string reason, Time now) {
  if (node >= nodes_.size()) return Status::NotFound("no such node");
  NodeInfo& n = nodes_[node];
  if (n.drain != drain) n.state_since = now;
  ++node_state_generation_;
  n.drain = drain;
  n.reason = drain ? std::move(reason) : std::string();
  UpdateNodeIndex(node);
  return Status::Ok();
}

Status ClusterState::SetPartitionState(int16_t partition, PartitionState state) {
  if (partition < 0 || static_cast<size_t>(partition) >= partitions_.size()) {
    return Status::NotFound("no such partition");
  }
  partitions_[partition].spec.state = state;
  return Status::Ok();
}

std::optional<uint32_t> ClusterState::FindNode(std::string_view name) const {
  auto it = node_by_name_.find(std::string(name));
  if (it == node_by_name_.end()) return std::nullopt;
  return it->second;
}

std::optional<int16_t> ClusterState::FindPartition(std::string_view name) const {
  for (const PartitionInfo& p : partitions_) {
    if (p.spec.name == name) return p.index;
  }
  return std::nullopt;
}

std::optional<int16_t> ClusterState::FindQos(std::string_view name) const {
  for (const QosInfo& q : qos_) {
    if (q.spec.name == name && !q.removed) return q.index;
  }
  return std::nullopt;
}

std::optional<int32_t> ClusterState::FindAccount(std::string_view name) const {
  for (const AccountInfo& a : accounts_) {
    if (a.spec.name == name && !a.removed) return a.index;
  }
  return std::nullopt;
}

namespace {
template <typename Id>
std::optional<Id> FindIn(const std::vector<std::string>& names, std::string_view name) {
  for (size_t i = 0; i < names.size(); ++i) {
    if (names[i] == name) return static_cast<Id>(i);
  }
  return std::nullopt;
}
template <typename Id>
Id InternIn(std::vector<std::string>& names, const std::string& name) {
  std::optional<Id> id = FindIn<Id>(names, name);
  if (id) return *id;
  names.push_back(name);
  return static_cast<Id>(names.size() - 1);
}
}  // namespace

std::optional<int32_t> ClusterState::FindFeature(std::string_view name) const {
  return FindIn<int32_t>(feature_names_, name);
}
std::optional<int16_t> ClusterState::FindGpuType(std::string_view name) const {
  return FindIn<int16_t>(gpu_type_names_, name);
}
std::optional<int32_t> ClusterState::FindGres(std::string_view name) const {
  return FindIn<int32_t>(gres_names_, name);
}
int32_t ClusterState::InternFeature(const std::string& name) {
  return InternIn<int32_t>(feature_names_, name);
}
int16_t ClusterState::InternGpuType(const std::string& name) {
  return InternIn<int16_t>(gpu_type_names_, name);
}
int32_t ClusterState::InternGres(const std::string& name) {
  return InternIn<int32_t>(gres_names_, name);
}

int32_t ClusterState::InternUser(const std::string& user) {
  auto it = user_by_name_.find(user);
  if (it != user_by_name_.end()) return it->second;
  int32_t id = static_cast<int32_t>(user_names_.size());
  user_names_.push_back(user);
  user_by_name_[user] = id;
  default_assoc_of_user_.push_back(-1);
  return id;
}

int64_t ClusterState::license_total(std::string_view name) const {
  for (const NamedCount& l : spec_.licenses) {
    if (l.name == name) return l.count;
  }
  return 0;
}

int64_t ClusterState::license_used(std::string_view name) const {
  auto it = license_used_.find(std::string(name));
  return it == license_used_.end() ? 0 : it->second;
}

const RunCounters* ClusterState::QosUserCounters(int16_t qos, int32_t user) const {
  auto it = qos_user_.find((static_cast<uint64_t>(qos) << 32) | static_cast<uint32_t>(user));
  return it == qos_user_.end() ? nullptr : &it->second;
}

const RunCounters* ClusterState::QosAccountCounters(int16_t qos, int32_t account) const {
  auto it = qos_account_.find((static_cast<uint64_t>(qos) << 32) | static_cast<uint32_t>(account));
  return it == qos_account_.end() ? nullptr : &it->second;
}

int32_t ClusterState::RunningWithName(int32_t user, const std::string& name) const {
  auto it = running_names_.find({user, name});
  return it == running_names_.end() ? 0 : it->second;
}

double ClusterState::Billing(const Allocation& alloc) const {
  double cpus = 0, gpus = 0, mem = 0;
  for (const NodeAllocation& n : alloc.nodes) {
    cpus += n.cpus;
    gpus += n.gpu_count();
    mem += static_cast<double>(n.mem_mib) / 1024.0;
  }
  return fairshare_.cpu_weight * cpus + fairshare_.gpu_weight * gpus +
         fairshare_.mem_weight_per_gib * mem;
}

}  // namespace berth::core
