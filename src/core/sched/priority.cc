#include "core/sched/priority.h"

#include <algorithm>
#include <cmath>
#include <limits>

namespace berth::core {
namespace {

// A node of the share tree: an account or an association (a user in an account).
struct ShareChild {
  bool is_assoc = false;
  int32_t id = 0;
  double shares = 0;
  double usage = 0;
  const std::string* name = nullptr;
};

std::vector<ShareChild> ChildrenOf(const ClusterState& cs, const AccountInfo& a,
                                   const FairshareTable& t) {
  std::vector<ShareChild> out;
  for (int32_t c : a.children) {
    const AccountInfo& child = cs.accounts()[c];
    out.push_back(
        {false, c, static_cast<double>(child.spec.shares), t.account_usage[c], &child.spec.name});
  }
  for (int32_t as : a.assocs) {
    const AssocInfo& assoc = cs.assocs()[as];
    out.push_back(
        {true, as, static_cast<double>(assoc.spec.shares), t.usage[as], &cs.users()[assoc.user]});
  }
  return out;
}

ShareLevel& LevelOf(const ShareChild& k, FairshareTable& t) {
  return k.is_assoc ? t.assoc_level[k.id] : t.account_level[k.id];
}

// Fair Tree: siblings ordered by level fair-share S/U (higher first), depth first; users get
// ranks in the order visited, and factor = rank / number of users.
void FairTreeVisit(const ClusterState& cs, int32_t account, FairshareTable& t,
                   std::vector<int32_t>& order) {
  std::vector<ShareChild> kids = ChildrenOf(cs, cs.accounts()[account], t);
  double share_sum = 0, usage_sum = 0;
  for (const ShareChild& k : kids) {
    share_sum += k.shares;
    usage_sum += k.usage;
  }
  for (const ShareChild& k : kids) {
    ShareLevel& l = LevelOf(k, t);
    l.norm_shares = share_sum > 0 ? k.shares / share_sum : 0;
    l.effective_usage = usage_sum > 0 ? k.usage / usage_sum : 0;
    if (l.effective_usage <= 0) {
      l.level_fs = l.norm_shares > 0 ? std::numeric_limits<double>::infinity() : 0.0;
    } else {
      l.level_fs = l.norm_shares / l.effective_usage;
    }
  }
  std::stable_sort(kids.begin(), kids.end(), [&](const ShareChild& a, const ShareChild& b) {
    double fa = LevelOf(a, t).level_fs, fb = LevelOf(b, t).level_fs;
    if (fa != fb) return fa > fb;
    return *a.name < *b.name;
  });
  for (const ShareChild& k : kids) {
    if (k.is_assoc) {
      order.push_back(k.id);
    } else {
      FairTreeVisit(cs, k.id, t, order);
    }
  }
}

// Classic: F = 2^(-Ueff / Snorm), with effective usage propagated from the parent.
void ClassicVisit(const ClusterState& cs, int32_t account, double parent_share, double parent_ueff,
                  double total_usage, FairshareTable& t) {
  std::vector<ShareChild> kids = ChildrenOf(cs, cs.accounts()[account], t);
  double share_sum = 0;
  for (const ShareChild& k : kids) share_sum += k.shares;
  for (const ShareChild& k : kids) {
    double frac = share_sum > 0 ? k.shares / share_sum : 0;
    double s_norm = parent_share * frac;
    double u_raw = total_usage > 0 ? k.usage / total_usage : 0;
    double u_eff = u_raw + (parent_ueff - u_raw) * frac;
    LevelOf(k, t) = {s_norm, u_eff, 0};
    if (k.is_assoc) {
      t.factor[k.id] = ClassicFairshareFactor(u_eff, s_norm);
    } else {
      ClassicVisit(cs, k.id, s_norm, u_eff, total_usage, t);
    }
  }
}

}  // namespace

double ClassicFairshareFactor(double effective_usage, double norm_shares) {
  return norm_shares > 0 ? std::exp2(-effective_usage / norm_shares) : 0;
}

FairshareTable ComputeFairshare(const ClusterState& cs, Time now, const FairshareConfig& cfg) {
  FairshareTable t;
  const auto& assocs = cs.assocs();
  const auto& accounts = cs.accounts();
  t.factor.assign(assocs.size(), 0);
  t.usage.assign(assocs.size(), 0);
  t.account_usage.assign(accounts.size(), 0);
  t.assoc_level.assign(assocs.size(), {});
  t.account_level.assign(accounts.size(), {});
  for (const AssocInfo& a : assocs) t.usage[a.index] = a.usage.At(now, cfg.half_life);
  for (JobId id : cs.running_ids()) {
    const JobEntry* e = cs.FindEntry(id);
    double u = DecayedRunUsage(cs.Billing(e->job.alloc), e->job.start_time, now, cfg.half_life);
    t.usage[e->assoc] += u * cs.qos()[e->qos].spec.usage_factor;
  }
  for (const AssocInfo& a : assocs) {
    for (int32_t acct = a.account; acct >= 0; acct = accounts[acct].parent) {
      t.account_usage[acct] += t.usage[a.index];
    }
  }
  if (cfg.algorithm == FairshareAlgorithm::kFairTree) {
    std::vector<int32_t> order;
    FairTreeVisit(cs, 0, t, order);
    double n = static_cast<double>(order.size());
    for (size_t i = 0; i < order.size(); ++i) t.factor[order[i]] = (n - static_cast<double>(i)) / n;
  } else {
    // The root's normalised usage is 1 when anything was used, else 0 (everyone gets F = 1).
    double root_ueff = t.account_usage[0] > 0 ? 1.0 : 0.0;
    ClassicVisit(cs, 0, 1.0, root_ueff, t.account_usage[0], t);
  }
  return t;
}

PriorityContext MakePriorityContext(const ClusterState& cs, Time now, const SchedulerConfig& cfg) {
  PriorityContext ctx;
  if (cfg.weights.fairshare != 0) ctx.fairshare = ComputeFairshare(cs, now, cfg.fairshare);
  for (const PartitionInfo& p : cs.partitions()) {
    ctx.max_partition_factor = std::max(ctx.max_partition_factor, p.spec.priority_job_factor);
  }
  for (const QosInfo& q : cs.qos())
    ctx.max_qos_priority = std::max(ctx.max_qos_priority, q.spec.priority);
  return ctx;
}

PriorityBreakdown ComputePriority(const ClusterState& cs, const JobEntry& e, Time now,
                                  const SchedulerConfig& cfg, const PriorityContext& ctx) {
  const FairshareTable& fs = ctx.fairshare;
  const PriorityWeights& w = cfg.weights;
  const Job& job = e.job;
  PriorityBreakdown b;
  b.job = job.id;
  b.nice = job.spec->nice;
  if (job.spec->admin_priority >= 0) {
    b.admin_set = true;
    b.total = job.spec->admin_priority;
    return b;
  }
  double age = w.max_age > 0 ? std::clamp(static_cast<double>(now - job.eligible_time) /
                                              static_cast<double>(w.max_age),
                                          0.0, 1.0)
                             : 1.0;
  b.age = age * static_cast<double>(w.age);
  if (static_cast<size_t>(e.assoc) < fs.factor.size()) {
    b.fairshare = fs.factor[e.assoc] * static_cast<double>(w.fairshare);
  }
  ShapeTotals tot = MinimumTotals(cs.shape(e, 0));
  double size = std::max(
      cs.total_nodes() > 0 ? static_cast<double>(tot.nodes) / cs.total_nodes() : 0.0,
      cs.total_cpus() > 0 ? static_cast<double>(tot.cpus) / static_cast<double>(cs.total_cpus())
                          : 0.0);
  size = std::min(size, 1.0);
  b.job_size = (w.favor_small ? 1.0 - size : size) * static_cast<double>(w.job_size);
  const int32_t max_pf = ctx.max_partition_factor;
  int32_t pf = 0;
  for (int16_t p : e.partitions) pf = std::max(pf, cs.partitions()[p].spec.priority_job_factor);
  b.partition = static_cast<double>(pf) / max_pf * static_cast<double>(w.partition);
  const int32_t max_q = ctx.max_qos_priority;
  if (max_q > 0) {
    b.qos = static_cast<double>(cs.qos()[e.qos].spec.priority) / max_q * static_cast<double>(w.qos);
  }
  const PartitionInfo& part = cs.partitions()[e.partitions.front()];
  for (const NamedCount& tw : w.tres) {
    double frac = 0;
    if (tw.name == "cpu" && part.total_cpus > 0) {
      frac = static_cast<double>(tot.cpus) / static_cast<double>(part.total_cpus);
    } else if (tw.name == "node" && part.total_nodes > 0) {
      frac = static_cast<double>(tot.nodes) / part.total_nodes;
    } else if (tw.name == "gres/gpu" && part.total_gpus > 0) {
      frac = static_cast<double>(tot.gpus) / static_cast<double>(part.total_gpus);
    }
    b.tres += std::min(frac, 1.0) * static_cast<double>(tw.count);
  }
  double sum = b.age + b.fairshare + b.job_size + b.partition + b.qos + b.tres;
  b.total = static_cast<int64_t>(std::llround(sum)) - job.spec->nice;
  return b;
}

}  // namespace berth::core
