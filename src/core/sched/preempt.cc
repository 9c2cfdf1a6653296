#include "core/sched/preempt.h"

#include <algorithm>
#include <functional>
#include <map>
#include <set>
#include <utility>

#include "core/sched/las.h"

namespace berth::core {
namespace {

// What a preemption policy decides: who may be preempted and how, in which order on a node,
// and what a node's set of victims costs (lower first, after the number of victims).
struct VictimRules {
  std::function<PreemptMode(const JobEntry&)> mode;  // kOff: not a victim
  std::function<bool(const JobEntry*, const JobEntry*)> first;
  std::function<void(const JobEntry&, std::pair<double, double>*)> add_cost;
};

struct NodeOption {
  uint32_t node = 0;
  std::vector<JobId> victims;
  std::pair<double, double> cost;  // VictimRules::add_cost summed over the victims
};

std::vector<const JobEntry*> VictimsOn(const PassState& pass, const VictimRules& rules,
                                       uint32_t n) {
  const ClusterState& cs = pass.cs();
  std::vector<const JobEntry*> out;
  for (JobId id : cs.node(n).jobs) {
    const JobEntry* v = cs.FindEntry(id);
    if (v == nullptr || v->preempt_requested || pass.IsPreempted(id)) continue;
    if (rules.mode(*v) == PreemptMode::kOff) continue;
    out.push_back(v);
  }
  std::sort(out.begin(), out.end(), rules.first);
  return out;
}

const NodeAllocation* OnNode(const Allocation& a, uint32_t n) {
  for (const NodeAllocation& na : a.nodes) {
    if (na.node == n) return &na;
  }
  return nullptr;
}

bool Fits(const JobShape& s, const NodeInfo& n, const NodeFree& f, int32_t user) {
  return s.task_mode ? FitTasks(s, n, f, user, s.tasks, nullptr) == s.tasks
                     : FitNode(s, n, f, user, nullptr);
}

std::optional<PreemptChoice> FindWithRules(const PassState& pass, const VictimRules& rules,
                                           const JobEntry& job, const PlaceRequest& req,
                                           const Bitset& candidates, Duration limit) {
  const ClusterState& cs = pass.cs();
  const JobShape& s = *req.shape;
  const Time now = pass.now();
  // Per node: the cheapest victims that make one share of the job fit there.
  std::vector<NodeOption> options;
  candidates.ForEach([&](size_t i) {
    uint32_t n = static_cast<uint32_t>(i);
    NodeFree f = pass.FreeDuring(n, now, now + limit);
    NodeOption opt;
    opt.node = n;
    if (!Fits(s, cs.node(n), f, req.user)) {
      std::vector<const JobEntry*> vs = VictimsOn(pass, rules, n);
      for (const JobEntry* v : vs) {
        if (const NodeAllocation* a = OnNode(v->job.alloc, n)) f.Give(cs.node(n), *a);
        opt.victims.push_back(v->job.id);
        rules.add_cost(*v, &opt.cost);
        if (Fits(s, cs.node(n), f, req.user)) break;
      }
      if (!Fits(s, cs.node(n), f, req.user)) return true;
    }
    options.push_back(std::move(opt));
    return true;
  });
  // Cheapest first: fewest victims, then the rules' cost.
  std::stable_sort(options.begin(), options.end(), [](const NodeOption& a, const NodeOption& b) {
    if (a.victims.size() != b.victims.size()) return a.victims.size() < b.victims.size();
    return a.cost < b.cost;
  });
  size_t need = s.task_mode ? 1 : static_cast<size_t>(s.min_nodes);
  if (options.size() < need || options.empty()) return std::nullopt;
  std::set<JobId> victims;
  Bitset chosen(cs.num_nodes());
  for (size_t i = 0; i < options.size() && i < need; ++i) {
    victims.insert(options[i].victims.begin(), options[i].victims.end());
    chosen.Set(options[i].node);
  }
  if (victims.empty()) return std::nullopt;  // it fits without anyone leaving: not our case
  // Verify: with exactly these victims gone, the whole job places.
  std::map<uint32_t, std::vector<const NodeAllocation*>> freed;
  for (JobId v : victims) {
    for (const NodeAllocation& a : cs.FindJob(v)->alloc.nodes) freed[a.node].push_back(&a);
  }
  FreeFn free_of = [&](uint32_t n) {
    NodeFree f = pass.FreeDuring(n, now, now + limit);
    if (auto it = freed.find(n); it != freed.end()) {
      for (const NodeAllocation* a : it->second) f.Give(cs.node(n), *a);
    }
    return f;
  };
  PreemptChoice choice;
  if (!Place(cs, req, chosen, NodeIndex{}, free_of, &choice.alloc)) return std::nullopt;
  for (JobId v : victims) {
    const JobEntry* ve = cs.FindEntry(v);
    choice.victims.push_back({v, job.job.id, rules.mode(*ve)});
  }
  return choice;
}

}  // namespace

PreemptMode PreemptModeFor(const ClusterState& cs, const SchedulerConfig& cfg, const JobEntry& job,
                           size_t slot, const JobEntry& victim) {
  if (victim.job.id == job.job.id || !HoldsResources(victim.job.state)) return PreemptMode::kOff;
  PreemptMode mode = PreemptMode::kOff;
  if (cfg.preempt_type == PreemptType::kQos) {
    const std::vector<int16_t>& list = cs.qos()[job.qos].preempt;
    if (std::find(list.begin(), list.end(), victim.qos) == list.end()) return PreemptMode::kOff;
    mode = cs.qos()[victim.qos].spec.preempt_mode;
    if (mode == PreemptMode::kOff) mode = cfg.preempt_mode;
  } else if (cfg.preempt_type == PreemptType::kPartitionPriority) {
    if (victim.partition_index < 0) return PreemptMode::kOff;
    const PartitionInfo& vp = cs.partitions()[victim.partition_index];
    const PartitionInfo& jp = cs.partitions()[job.partitions[slot]];
    if (vp.spec.priority_tier >= jp.spec.priority_tier) return PreemptMode::kOff;
    // A partition that names no mode takes the cluster's (Slurm's PreemptMode inheritance).
    mode = vp.spec.preempt_mode == PreemptMode::kOff ? cfg.preempt_mode : vp.spec.preempt_mode;
  }
  if (mode == PreemptMode::kRequeue && !victim.job.spec->requeue) mode = PreemptMode::kCancel;
  return mode;
}

std::optional<PreemptChoice> FindPreemption(const PassState& pass, const SchedulerConfig& cfg,
                                            const JobEntry& job, size_t slot,
                                            const PlaceRequest& req, const Bitset& candidates,
                                            Duration limit) {
  if (cfg.preempt_type == PreemptType::kNone) return std::nullopt;
  const ClusterState& cs = pass.cs();
  const Time now = pass.now();
  VictimRules rules;
  rules.mode = [&](const JobEntry& v) { return PreemptModeFor(cs, cfg, job, slot, v); };
  // Low QoS priority, recently started (least work lost), high id first.
  rules.first = [&](const JobEntry* a, const JobEntry* b) {
    int32_t qa = cs.qos()[a->qos].spec.priority, qb = cs.qos()[b->qos].spec.priority;
    if (qa != qb) return qa < qb;
    if (a->job.start_time != b->job.start_time) return a->job.start_time > b->job.start_time;
    return a->job.id > b->job.id;
  };
  rules.add_cost = [&](const JobEntry& v, std::pair<double, double>* cost) {
    cost->first += cs.qos()[v.qos].spec.priority;
    cost->second += static_cast<double>(now - v.job.start_time);
  };
  return FindWithRules(pass, rules, job, req, candidates, limit);
}

std::optional<PreemptChoice> FindLasPreemption(const PassState& pass, const SchedulerConfig& cfg,
                                               const JobEntry& job, int queue,
                                               const PlaceRequest& req, const Bitset& candidates,
                                               Duration limit) {
  const Time now = pass.now();
  const LasConfig& las = cfg.las;
  VictimRules rules;
  rules.mode = [&](const JobEntry& v) {
    if (v.job.id == job.job.id) return PreemptMode::kOff;
    return LasMayPreempt(v.job, queue, now, las) ? PreemptMode::kRequeue : PreemptMode::kOff;
  };
  // The lowest queue first, then the least served (the least work to redo should it not
  // checkpoint), then the most recently started, then the highest id.
  rules.first = [&](const JobEntry* a, const JobEntry* b) {
    double sa = AttainedService(a->job, now), sb = AttainedService(b->job, now);
    int qa = LasQueueOf(sa, las.queue_limits), qb = LasQueueOf(sb, las.queue_limits);
    if (qa != qb) return qa > qb;
    if (sa != sb) return sa < sb;
    if (a->job.start_time != b->job.start_time) return a->job.start_time > b->job.start_time;
    return a->job.id > b->job.id;
  };
  // Among nodes with as many victims: those whose victims sit in the lowest queues, then the
  // least service stopped.
  rules.add_cost = [&](const JobEntry& v, std::pair<double, double>* cost) {
    double s = AttainedService(v.job, now);
    cost->first -= LasQueueOf(s, las.queue_limits);
    cost->second += s;
  };
  return FindWithRules(pass, rules, job, req, candidates, limit);
}

}  // namespace berth::core
