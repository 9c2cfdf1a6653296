// The canonical text of a Plan (for byte-for-byte comparisons of two runs) and independent
// checks of the scheduler's invariants, which recompute everything from the jobs instead of
// trusting the state's counters (header-only, test code only). The random clusters and jobs they
// judge are made by random_cluster.h, which includes this.
#ifndef BERTH_CORE_TESTING_PLAN_CHECKS_H_
#define BERTH_CORE_TESTING_PLAN_CHECKS_H_

#include <algorithm>
#include <bit>
#include <cinttypes>
#include <cstdint>
#include <cstdio>
#include <map>
#include <optional>
#include <set>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "core/model/cluster_spec.h"
#include "core/model/constraint.h"
#include "core/model/job.h"
#include "core/model/job_state.h"
#include "core/model/node.h"
#include "core/model/partition.h"
#include "core/model/reason.h"
#include "core/plan.h"
#include "core/sched/scheduler.h"
#include "core/state/cluster_state.h"

namespace berth::core::testing {

// ---- The canonical text of a Plan (for byte-for-byte comparisons)

inline std::string HexMask(uint64_t m) {
  char buf[32];
  std::snprintf(buf, sizeof(buf), "0x%" PRIx64, m);
  return buf;
}

inline std::string DumpAllocation(const Allocation& a) {
  std::string out = "[";
  for (const NodeAllocation& n : a.nodes) {
    out += " node=" + std::to_string(n.node) + " cpus=" + std::to_string(n.cpus) +
           " mem=" + std::to_string(n.mem_mib) + " gpus=" + HexMask(n.gpu_mask) +
           " tasks=" + std::to_string(n.tasks);
    for (const GpuShare& g : n.gpu_shares) {
      out += " share=" + std::to_string(g.device) + ":" + std::to_string(g.milli);
    }
    for (const NamedCount& g : n.gres) out += " gres:" + g.name + "=" + std::to_string(g.count);
    out += ";";
  }
  for (const NamedCount& l : a.licenses) out += " lic:" + l.name + "=" + std::to_string(l.count);
  return out + " ]";
}

// Every field of the plan, one decision per line, in the plan's own order.
inline std::string DumpPlan(const Plan& p) {
  std::string out =
      "plan now=" + std::to_string(p.now) + " wake_at=" + std::to_string(p.wake_at) + "\n";
  for (const PlannedStart& s : p.starts) {
    out += "start job=" + std::to_string(s.job) + " task=" + std::to_string(s.array_task) +
           " partition=" + s.partition + " limit=" + std::to_string(s.time_limit) + " after=";
    for (JobId v : s.after_preempting) out += std::to_string(v) + ",";
    out += " alloc=" + DumpAllocation(s.alloc) + "\n";
  }
  for (const PlannedPreemption& pr : p.preemptions) {
    out += "preempt victim=" + std::to_string(pr.victim) + " for=" + std::to_string(pr.for_job) +
           " mode=" + std::string(PreemptModeName(pr.mode)) + "\n";
  }
  for (const PlannedCancel& c : p.cancels) {
    out += "cancel job=" + std::to_string(c.job) + " state=" + std::string(JobStateName(c.state)) +
           " why=" + c.why + "\n";
  }
  for (const PendingInfo& i : p.pending) {
    out += "pending job=" + std::to_string(i.job) +
           " reason=" + std::string(PendingReasonName(i.reason)) +
           " expected=" + std::to_string(i.expected_start) +
           " priority=" + std::to_string(i.priority) + " detail=" + i.detail + "\n";
  }
  const PassStats& st = p.stats;
  out += "stats considered=" + std::to_string(st.pending_considered) +
         " started=" + std::to_string(st.started) +
         " reservations=" + std::to_string(st.reservations) +
         " preempted=" + std::to_string(st.preempted) +
         " cache_hits=" + std::to_string(st.shape_cache_hits) + "\n";
  return out;
}

// ---- Independent checks. Each returns the violations found, as sentences (empty = fine).

// How many jobs a record stands for: an array master still holding tasks counts each of them.
inline int64_t JobCount(const Job& job) {
  return job.is_array_master() ? static_cast<int64_t>(job.spec->array.task_ids.size()) : 1;
}

// What every node holds, summed from the jobs holding resources (not from the node's counters).
struct NodeUse {
  int64_t cpus = 0;
  int64_t mem_mib = 0;
  uint64_t gpus = 0;
  std::map<int32_t, int64_t> shares;  // device -> thousandths held by shares
  std::vector<JobId> jobs;

  uint64_t shared_mask() const {
    uint64_t m = 0;
    for (const auto& [d, milli] : shares) m |= uint64_t{1} << d;
    return m;
  }
};

inline uint64_t AllDevices(int n) {
  return n >= 64 ? ~uint64_t{0} : (uint64_t{1} << n) - 1;
}

// Never oversubscribed: on every node the running jobs' CPUs and memory fit its capacity, no GPU
// device is held twice, and the node's free counters (and job list) equal what the jobs imply.
inline std::vector<std::string> CheckNodeAccounting(const ClusterState& cs) {
  std::vector<std::string> bad;
  std::vector<NodeUse> use(cs.num_nodes());
  std::set<JobId> holding;
  for (const auto& [id, e] : cs.jobs()) {
    if (!HoldsResources(e.job.state)) continue;
    holding.insert(id);
    if (e.job.alloc.nodes.empty()) bad.push_back("job " + std::to_string(id) + " holds nothing");
    std::set<uint32_t> seen;
    for (const NodeAllocation& a : e.job.alloc.nodes) {
      if (a.node >= cs.num_nodes()) {
        bad.push_back("job " + std::to_string(id) + " on a node that does not exist");
        continue;
      }
      if (!seen.insert(a.node).second) {
        bad.push_back("job " + std::to_string(id) + " lists node " + std::to_string(a.node) +
                      " twice");
      }
      NodeUse& u = use[a.node];
      if ((u.gpus & a.gpu_mask) != 0) {
        bad.push_back("node " + std::to_string(a.node) + ": GPU devices " +
                      HexMask(u.gpus & a.gpu_mask) + " held twice (job " + std::to_string(id) +
                      ")");
      }
      u.cpus += a.cpus;
      u.mem_mib += a.mem_mib;
      u.gpus |= a.gpu_mask;
      for (const GpuShare& g : a.gpu_shares) u.shares[g.device] += g.milli;
      u.jobs.push_back(id);
    }
  }
  for (uint32_t n = 0; n < cs.num_nodes(); ++n) {
    const NodeInfo& node = cs.node(n);
    const NodeUse& u = use[n];
    const std::string name = "node " + node.spec.name + ": ";
    if (u.cpus > node.spec.cpus) {
      bad.push_back(name + std::to_string(u.cpus) + " CPUs allocated of " +
                    std::to_string(node.spec.cpus));
    }
    if (u.mem_mib > node.spec.mem_mib) {
      bad.push_back(name + std::to_string(u.mem_mib) + " MiB allocated of " +
                    std::to_string(node.spec.mem_mib));
    }
    if ((u.gpus & ~AllDevices(node.num_gpus)) != 0) {
      bad.push_back(name + "a GPU index beyond the node's devices is allocated");
    }
    if (node.free_cpus != node.spec.cpus - u.cpus) {
      bad.push_back(name + "free_cpus " + std::to_string(node.free_cpus) + ", expected " +
                    std::to_string(node.spec.cpus - u.cpus));
    }
    if (node.free_mem_mib != node.spec.mem_mib - u.mem_mib) {
      bad.push_back(name + "free_mem " + std::to_string(node.free_mem_mib) + ", expected " +
                    std::to_string(node.spec.mem_mib - u.mem_mib));
    }
    const uint64_t shared = u.shared_mask();
    if (node.free_gpus != (AllDevices(node.num_gpus) & ~u.gpus & ~shared)) {
      bad.push_back(name + "free_gpus " + HexMask(node.free_gpus) + ", expected " +
                    HexMask(AllDevices(node.num_gpus) & ~u.gpus & ~shared));
    }
    // GPU shares: within one device's capacity, never on a device held whole, and the node's
    // per-device counters equal the shares' sums.
    if ((shared & u.gpus) != 0) {
      bad.push_back(name + "devices " + HexMask(shared & u.gpus) + " held whole and shared");
    }
    if ((shared & ~AllDevices(node.num_gpus)) != 0) {
      bad.push_back(name + "a share of a GPU index beyond the node's devices");
    }
    for (int d = 0; d < node.num_gpus; ++d) {
      auto it = u.shares.find(d);
      const int64_t want = it == u.shares.end() ? 0 : it->second;
      const int64_t have = static_cast<size_t>(d) < node.gpu_share_milli.size()
                               ? node.gpu_share_milli[static_cast<size_t>(d)]
                               : 0;
      if (want > kGpuMilliPerDevice) {
        bad.push_back(name + "device " + std::to_string(d) + " shared " + std::to_string(want) +
                      "/1000");
      }
      if (have != want) {
        bad.push_back(name + "device " + std::to_string(d) + " counts " + std::to_string(have) +
                      " shared, the jobs hold " + std::to_string(want));
      }
    }
    std::vector<JobId> jobs = u.jobs;
    std::sort(jobs.begin(), jobs.end());
    if (node.jobs != jobs) bad.push_back(name + "its job list differs from the jobs' allocations");
  }
  if (std::set<JobId>(cs.running_ids().begin(), cs.running_ids().end()) != holding) {
    bad.push_back("running_ids() differs from the jobs holding resources");
  }
  for (JobId id : holding) {
    const Job* job = cs.FindJob(id);
    if (!cs.releases().count({job->start_time + job->time_limit, id})) {
      bad.push_back("job " + std::to_string(id) + " is missing from releases()");
    }
  }
  if (cs.releases().size() != holding.size()) bad.push_back("releases() has stale entries");
  return bad;
}

// Does the node have every feature the constraint needs (matching OR counts as OR here)?
inline bool NodeMatches(const NodeSpec& node, const Constraint& c) {
  return c.empty() || c.Matches([&](std::string_view f) {
    return std::find(node.features.begin(), node.features.end(), f) != node.features.end();
  });
}

// Does one start's allocation give the job what its shape asks, on nodes it may use?
// `before` is the state the plan was computed from.
inline std::vector<std::string> CheckStartMatchesRequest(const ClusterState& before,
                                                         const PlannedStart& s) {
  std::vector<std::string> bad;
  const std::string who = "start of job " + std::to_string(s.job) + ": ";
  const JobEntry* e = before.FindEntry(s.job);
  if (e == nullptr) return {who + "no such job"};
  std::optional<int16_t> part = before.FindPartition(s.partition);
  size_t slot = e->partitions.size();
  for (size_t i = 0; part && i < e->partitions.size(); ++i) {
    if (e->partitions[i] == *part) slot = i;
  }
  if (slot == e->partitions.size()) return {who + "partition " + s.partition + " not requested"};
  const JobShape& shape = before.shape(*e, slot);
  const PartitionInfo& p = before.partitions()[*part];
  int64_t tasks = 0;
  std::set<uint32_t> nodes;
  for (const NodeAllocation& a : s.alloc.nodes) {
    if (a.node >= before.num_nodes()) return {who + "bad node index"};
    const NodeInfo& n = before.node(a.node);
    const std::string where = who + "node " + n.spec.name + ": ";
    nodes.insert(a.node);
    tasks += a.tasks;
    if (!p.nodes.Test(a.node)) bad.push_back(where + "not in partition " + s.partition);
    if (!NodeMatches(n.spec, e->job.spec->constraint)) bad.push_back(where + "lacks features");
    if (std::find(e->exclude.begin(), e->exclude.end(), a.node) != e->exclude.end()) {
      bad.push_back(where + "excluded");
    }
    int gpus = std::popcount(a.gpu_mask);
    uint64_t typed = 0;
    for (int g = 0; g < n.num_gpus; ++g) {
      if (e->job.spec->gpu_type.empty() || n.spec.gpus[g] == e->job.spec->gpu_type) {
        typed |= uint64_t{1} << g;
      }
    }
    if (shape.whole_node) {
      if (a.cpus != n.spec.cpus || a.mem_mib != n.spec.mem_mib) {
        bad.push_back(where + "an exclusive job does not hold the whole node");
      }
      continue;
    }
    if ((a.gpu_mask & ~typed) != 0) bad.push_back(where + "GPUs of the wrong type");
    const int64_t units = shape.task_mode ? a.tasks : 1;
    if (a.cpus != units * shape.cpus) {
      bad.push_back(where + std::to_string(a.cpus) + " CPUs for " + std::to_string(units) + " x " +
                    std::to_string(shape.cpus));
    }
    if (shape.gpu_milli > 0) {
      if (a.gpu_shares.size() != 1 || a.gpu_shares[0].milli != shape.gpu_milli) {
        bad.push_back(where + "not one share of " + std::to_string(shape.gpu_milli));
      } else if (((typed >> a.gpu_shares[0].device) & 1) == 0) {
        bad.push_back(where + "a share of a GPU of the wrong type");
      }
    } else if (!a.gpu_shares.empty()) {
      bad.push_back(where + "a GPU share the job did not ask for");
    }
    if (gpus != units * shape.gpus) {
      bad.push_back(where + std::to_string(gpus) + " GPUs for " + std::to_string(units) + " x " +
                    std::to_string(shape.gpus));
    }
    if (!shape.task_mode && a.tasks != shape.tasks) bad.push_back(where + "wrong task count");
    // Memory: all of it (--mem=0), --mem per node used (task mode), the asked amount per unit,
    // or the default per CPU (the node's share unless the partition or cluster sets one).
    const int64_t per_cpu =
        shape.def_mem_per_cpu_mib > 0 ? shape.def_mem_per_cpu_mib : n.mem_per_cpu_share();
    const int64_t want_mem = shape.whole_mem ? n.spec.mem_mib
                             : (shape.task_mode && shape.mem_per_node_mib > 0)
                                 ? shape.mem_per_node_mib
                                 : units * (shape.mem_given ? shape.mem_mib : per_cpu * shape.cpus);
    if (a.mem_mib != want_mem) {
      bad.push_back(where + std::to_string(a.mem_mib) + " MiB, want " + std::to_string(want_mem));
    }
  }
  if (nodes.size() != s.alloc.nodes.size()) bad.push_back(who + "a node is listed twice");
  for (uint32_t n : e->nodelist) {
    if (!nodes.count(n)) bad.push_back(who + "required node " + std::to_string(n) + " missing");
  }
  const int64_t count = static_cast<int64_t>(nodes.size());
  if (shape.task_mode) {
    if (tasks != shape.tasks) bad.push_back(who + "places " + std::to_string(tasks) + " tasks");
    if (count > shape.max_nodes) bad.push_back(who + "uses more nodes than allowed");
  } else if (count < shape.min_nodes || count > shape.max_nodes) {
    bad.push_back(who + std::to_string(count) + " nodes, outside [" +
                  std::to_string(shape.min_nodes) + ", " + std::to_string(shape.max_nodes) + "]");
  }
  // Matching OR ("[a|b]"): every node has the same alternative.
  const auto& alts = e->job.spec->constraint.MatchingAlternatives();
  if (!alts.empty()) {
    bool one = std::any_of(alts.begin(), alts.end(), [&](const std::string& alt) {
      return std::all_of(nodes.begin(), nodes.end(), [&](uint32_t n) {
        const auto& f = before.node(n).spec.features;
        return std::find(f.begin(), f.end(), alt) != f.end();
      });
    });
    if (!one) bad.push_back(who + "nodes differ in the matching-OR feature");
  }
  return bad;
}

// One plan against the state it was computed from: starts only pending jobs (each task once),
// on usable nodes, within what is free (what victims hold counts for starts that wait for
// them), with no GPU device given to two starts, and each allocation matching its request.
inline std::vector<std::string> CheckPlanAgainstState(const ClusterState& before,
                                                      const Plan& plan) {
  std::vector<std::string> bad;
  std::set<std::pair<JobId, int32_t>> seen;
  std::map<uint32_t, NodeUse> now_use, all_use;  // starts without / with preemption
  std::map<uint32_t, NodeUse> victims;
  for (const PlannedPreemption& p : plan.preemptions) {
    const Job* v = before.FindJob(p.victim);
    if (v == nullptr || !HoldsResources(v->state)) {
      bad.push_back("preempts job " + std::to_string(p.victim) + ", which is not running");
      continue;
    }
    for (const NodeAllocation& a : v->alloc.nodes) {
      victims[a.node].cpus += a.cpus;
      victims[a.node].mem_mib += a.mem_mib;
      victims[a.node].gpus |= a.gpu_mask;
      for (const GpuShare& g : a.gpu_shares) victims[a.node].shares[g.device] += g.milli;
    }
  }
  for (const PlannedStart& s : plan.starts) {
    const std::string who = "start of job " + std::to_string(s.job) + ": ";
    const Job* job = before.FindJob(s.job);
    if (job == nullptr || job->state != JobState::kPending) {
      bad.push_back(who + "not pending");
      continue;
    }
    if (job->is_array_master()) {
      const auto& ids = job->spec->array.task_ids;
      if (std::find(ids.begin(), ids.end(), s.array_task) == ids.end()) {
        bad.push_back(who + "task " + std::to_string(s.array_task) + " is not pending");
      }
    }
    if (!seen.insert({s.job, s.array_task}).second) bad.push_back(who + "started twice");
    if (s.time_limit <= 0) bad.push_back(who + "no time limit");
    if (s.alloc.nodes.empty()) bad.push_back(who + "empty allocation");
    for (const NodeAllocation& a : s.alloc.nodes) {
      if (a.node >= before.num_nodes()) continue;
      const NodeInfo& n = before.node(a.node);
      if (!before.Schedulable(n)) {
        bad.push_back(who + "node " + n.spec.name + " is " + std::string(NodeStateName(n.state())));
      }
      NodeUse& all = all_use[a.node];
      if ((all.gpus & a.gpu_mask) != 0) {
        bad.push_back(who + "node " + n.spec.name + ": GPU devices " +
                      HexMask(all.gpus & a.gpu_mask) + " given to two starts");
      }
      all.cpus += a.cpus;
      all.mem_mib += a.mem_mib;
      all.gpus |= a.gpu_mask;
      for (const GpuShare& g : a.gpu_shares) all.shares[g.device] += g.milli;
      if (s.after_preempting.empty()) {
        NodeUse& u = now_use[a.node];
        u.cpus += a.cpus;
        u.mem_mib += a.mem_mib;
        u.gpus |= a.gpu_mask;
        for (const GpuShare& g : a.gpu_shares) u.shares[g.device] += g.milli;
      }
    }
    for (std::string& m : CheckStartMatchesRequest(before, s)) bad.push_back(std::move(m));
  }
  for (const auto& [n, u] : now_use) {
    const NodeInfo& node = before.node(n);
    if (u.cpus > node.free_cpus || u.mem_mib > node.free_mem_mib || (u.gpus & ~node.free_gpus)) {
      bad.push_back("node " + node.spec.name + ": the plan's starts exceed what is free");
    }
    if ((u.gpus & u.shared_mask()) != 0) {
      bad.push_back("node " + node.spec.name + ": the plan gives a device whole and in shares");
    }
    for (const auto& [d, milli] : u.shares) {
      const bool free = (node.free_gpus >> d) & 1;
      const int64_t used = static_cast<size_t>(d) < node.gpu_share_milli.size()
                               ? node.gpu_share_milli[static_cast<size_t>(d)]
                               : 0;
      if (!free && (used == 0 || used + milli > kGpuMilliPerDevice)) {
        bad.push_back("node " + node.spec.name + ": the plan's shares of device " +
                      std::to_string(d) + " exceed its room");
      }
    }
  }
  for (const auto& [n, u] : all_use) {
    const NodeInfo& node = before.node(n);
    const NodeUse& v = victims[n];
    // Devices the victims free completely: held whole by one, or shared by victims only.
    uint64_t freed = v.gpus;
    for (const auto& [d, milli] : v.shares) {
      if (static_cast<size_t>(d) < node.gpu_share_milli.size() &&
          node.gpu_share_milli[static_cast<size_t>(d)] == milli) {
        freed |= uint64_t{1} << d;
      }
    }
    if (u.cpus > node.free_cpus + v.cpus || u.mem_mib > node.free_mem_mib + v.mem_mib ||
        (u.gpus & ~(node.free_gpus | freed))) {
      bad.push_back("node " + node.spec.name +
                    ": the plan's starts exceed what is free plus what its victims hold");
    }
    for (const auto& [d, milli] : u.shares) {
      const bool free = ((node.free_gpus | v.gpus) >> d) & 1;
      auto vs = v.shares.find(d);
      const int64_t used = (static_cast<size_t>(d) < node.gpu_share_milli.size()
                                ? node.gpu_share_milli[static_cast<size_t>(d)]
                                : 0) -
                           (vs == v.shares.end() ? 0 : vs->second);
      const bool shared = static_cast<size_t>(d) < node.gpu_share_milli.size() &&
                          node.gpu_share_milli[static_cast<size_t>(d)] > 0;
      if (!free && !shared) {
        bad.push_back("node " + node.spec.name + ": a share of device " + std::to_string(d) +
                      ", which is held whole");
      } else if (!free && used + milli > kGpuMilliPerDevice) {
        bad.push_back("node " + node.spec.name + ": the plan's shares of device " +
                      std::to_string(d) + " exceed its room plus what its victims hold");
      }
    }
  }
  return bad;
}

// Every pending job has a reason: each job pending before the pass that does not start (all of
// its tasks, for an array) and is not cancelled appears exactly once in plan.pending, with a
// reason; no job that started completely appears there; plan.pending lists only pending jobs.
inline std::vector<std::string> CheckPendingReasons(const ClusterState& before, const Plan& plan) {
  std::vector<std::string> bad;
  std::map<JobId, int64_t> starts;  // job -> how many starts (tasks) the plan gives it
  for (const PlannedStart& s : plan.starts) ++starts[s.job];
  std::set<JobId> cancelled;
  for (const PlannedCancel& c : plan.cancels) cancelled.insert(c.job);
  std::map<JobId, int> listed;
  for (const PendingInfo& i : plan.pending) {
    ++listed[i.job];
    if (i.reason == PendingReason::kNone) {
      bad.push_back("job " + std::to_string(i.job) + " is pending without a reason");
    }
    if (!before.pending_ids().count(i.job)) {
      bad.push_back("job " + std::to_string(i.job) + " is listed pending but was not pending");
    }
    if (i.expected_start != kNoTime && i.expected_start <= plan.now) {
      bad.push_back("job " + std::to_string(i.job) + " expected to start at " +
                    std::to_string(i.expected_start) + " <= now, but did not start now");
    }
  }
  for (JobId id : before.pending_ids()) {
    const Job* job = before.FindJob(id);
    const int64_t started = starts.count(id) ? starts[id] : 0;
    const bool all_started = started > 0 && started >= JobCount(*job);
    const int times = listed.count(id) ? listed[id] : 0;
    const std::string who = "job " + std::to_string(id) + ": ";
    if (all_started || cancelled.count(id)) {
      if (times != 0) bad.push_back(who + "started or cancelled, yet listed as pending");
    } else if (times != 1) {
      bad.push_back(who + "listed " + std::to_string(times) + " times as pending (want 1)");
    }
  }
  return bad;
}

// Conservation: submitted = finished + pending + running, array tasks counted one by one; and
// every record the state keeps is either pending or holding resources.
inline std::vector<std::string> CheckConservation(const ClusterState& cs, int64_t submitted,
                                                  int64_t finished) {
  int64_t pending = 0;
  for (JobId id : cs.pending_ids()) pending += JobCount(*cs.FindJob(id));
  const int64_t running = static_cast<int64_t>(cs.running_ids().size());
  std::vector<std::string> bad;
  if (finished + pending + running != submitted) {
    bad.push_back("submitted " + std::to_string(submitted) + " != finished " +
                  std::to_string(finished) + " + pending " + std::to_string(pending) +
                  " + running " + std::to_string(running));
  }
  if (cs.jobs().size() != cs.pending_ids().size() + cs.running_ids().size()) {
    bad.push_back("a job record is neither pending nor running");
  }
  return bad;
}

}  // namespace berth::core::testing

#endif  // BERTH_CORE_TESTING_PLAN_CHECKS_H_
