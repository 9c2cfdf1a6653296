#include "controller/controller_metrics.h"

#include <nlohmann/json.hpp>
#include <string>
#include <string_view>

#include "controller/controller_internal.h"
#include "core/model/node.h"

namespace berth::controller {

namespace {

using prometheus::Labels;
using prometheus::MetricType;

constexpr int64_t kBytesPerMiB = 1024 * 1024;

// From half a millisecond (a small cluster) to half a minute (far too long: the state thread
// answers no command meanwhile).
std::vector<double> PassBuckets() {
  return {0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30};
}

// Every node state sinfo can show, in the order of core::NodeState, so that each has a series
// (0 included) and new states appear without a change here.
std::vector<std::string> AllNodeStates() {
  std::vector<std::string> out;
  for (int i = 0; i < 64; ++i) {
    std::string_view name = core::NodeStateLongName(static_cast<core::NodeState>(i));
    if (name == "UNKNOWN") break;
    out.emplace_back(name);
  }
  return out;
}

// Where a node's unallocated CPUs, GPUs and memory count: "idle" (jobs can start there now),
// "powered_down" (power saving: powered down, or powering up or down), or "down" (down,
// draining or drained).
std::string_view FreeCategory(const std::string& state) {
  if (state.rfind("IDLE+POWER", 0) == 0) return "powered_down";
  if (state == "DOWN" || state.rfind("DRAIN", 0) == 0) return "down";
  return "idle";
}

// A job's partition label: where it runs or ran; while pending, what it asked for (several as a
// comma list, as squeue shows them) or the default partition.
std::string PartitionLabel(const core::Job& j, const std::string& default_partition) {
  if (j.state != core::JobState::kPending && !j.partition.empty()) return j.partition;
  std::string out;
  for (const std::string& p : j.spec->partitions) out += (out.empty() ? "" : ",") + p;
  return out.empty() ? default_partition : out;
}

// Why a pending job waits, as squeue says: the last pass's word, or its hold since that pass.
core::PendingReason ReasonOf(const JobRecord& r,
                             const std::unordered_map<core::JobId, PendingView>& pending) {
  if (auto it = pending.find(r.job.id); it != pending.end()) return it->second.reason;
  if (r.job.spec->hold == core::HoldKind::kUser) return core::PendingReason::kJobHeldUser;
  if (r.job.spec->hold != core::HoldKind::kNone) return core::PendingReason::kJobHeldAdmin;
  return r.reason;
}

struct Amounts {
  int64_t allocated = 0, idle = 0, down = 0, powered_down = 0;
  void Add(std::string_view category, int64_t total, int64_t alloc) {
    allocated += alloc;
    const int64_t free = total - alloc;
    if (category == "idle") {
      idle += free;
    } else if (category == "down") {
      down += free;
    } else {
      powered_down += free;
    }
  }
};

void WriteAmounts(prometheus::TextEncoder& e, const Amounts& a, double scale) {
  e.Sample({{"state", "allocated"}}, static_cast<double>(a.allocated) * scale);
  e.Sample({{"state", "idle"}}, static_cast<double>(a.idle) * scale);
  e.Sample({{"state", "down"}}, static_cast<double>(a.down) * scale);
  e.Sample({{"state", "powered_down"}}, static_cast<double>(a.powered_down) * scale);
}

void WriteJobs(prometheus::TextEncoder& e, const JobCounts& jobs) {
  e.Family("berth_jobs", MetricType::kGauge,
           "Jobs in the controller's live view (active, and ended within MinJobAge), by "
           "partition and state; a pending array counts once.");
  for (const auto& [partition, states] : jobs.by_state) {
    for (int s = 0; s < core::kNumJobStates; ++s) {
      e.Sample({{"partition", partition},
                {"state", std::string(core::JobStateName(static_cast<core::JobState>(s)))}},
               static_cast<double>(states[static_cast<size_t>(s)]));
    }
  }
  e.Family("berth_jobs_pending", MetricType::kGauge,
           "Pending jobs by partition and the reason squeue gives.");
  for (const auto& [key, count] : jobs.pending) {
    e.Sample({{"partition", key.first}, {"reason", std::string(key.second)}},
             static_cast<double>(count));
  }
}

void WriteCounters(prometheus::TextEncoder& e, const MetricsCounters& c, int64_t passes) {
  auto load = [](const std::atomic<uint64_t>& v) {
    return static_cast<double>(v.load(std::memory_order_relaxed));
  };
  e.Family("berth_job_submissions_total", MetricType::kCounter,
           "Jobs accepted, by the API they came through: slurm (berth's REST API: berth submit, "
           "sbatch, srun) or kubernetes (Pods).");
  e.Sample({{"face", "slurm"}}, load(c.submissions_slurm));
  e.Sample({{"face", "kubernetes"}}, load(c.submissions_kubernetes));
  e.Family("berth_job_ends_total", MetricType::kCounter,
           "Jobs that reached a final state, by that state.");
  for (int s = 0; s < core::kNumJobStates; ++s) {
    const auto state = static_cast<core::JobState>(s);
    if (!core::IsTerminal(state)) continue;
    e.Sample({{"state", std::string(core::JobStateName(state))}},
             load(c.ends[static_cast<size_t>(s)]));
  }
  e.Family("berth_scheduling_passes_total", MetricType::kCounter, "Scheduling passes run.");
  e.Sample(static_cast<double>(passes));
  e.Family("berth_scheduling_pass_duration_seconds", MetricType::kHistogram,
           "How long a scheduling pass took on the state thread (scheduling and applying its "
           "plan, without the store's commit).");
  e.HistogramSample({}, c.pass_seconds.Snapshot());
  e.Family("berth_power_actions_total", MetricType::kCounter,
           "Power-saving actions on nodes: resume (power up), suspend (power down), "
           "resume_timeout (a node that did not come up in time).");
  e.Sample({{"action", "resume"}}, load(c.power_resumes));
  e.Sample({{"action", "suspend"}}, load(c.power_suspends));
  e.Sample({{"action", "resume_timeout"}}, load(c.resume_timeouts));
}

void WriteNodes(prometheus::TextEncoder& e, const std::vector<NodeView>& nodes) {
  std::map<std::string, uint64_t, std::less<>> by_state;
  for (const std::string& s : AllNodeStates()) by_state[s] = 0;
  Amounts cpus, gpus, mem;
  uint64_t connected = 0;
  for (const NodeView& n : nodes) {
    ++by_state[n.state];
    const std::string_view category = FreeCategory(n.state);
    cpus.Add(category, n.spec.cpus, n.alloc_cpus);
    gpus.Add(category, static_cast<int64_t>(n.spec.gpus.size()), n.alloc_gpus);
    mem.Add(category, n.spec.mem_mib, n.alloc_mem_mib);
    if (n.agent_connected) ++connected;
  }
  e.Family("berth_nodes", MetricType::kGauge, "Nodes by state (as scontrol shows it).");
  for (const auto& [state, count] : by_state) {
    e.Sample({{"state", state}}, static_cast<double>(count));
  }
  constexpr const char* kStates =
      " by state: allocated to jobs; idle (free on nodes that can start jobs); down (free on "
      "nodes down, draining or drained); powered_down (free on nodes powered down, or powering "
      "up or down).";
  e.Family("berth_cpus", MetricType::kGauge, std::string("CPUs") + kStates);
  WriteAmounts(e, cpus, 1);
  e.Family("berth_gpus", MetricType::kGauge, std::string("GPUs") + kStates);
  WriteAmounts(e, gpus, 1);
  e.Family("berth_memory_bytes", MetricType::kGauge, std::string("Memory in bytes") + kStates);
  WriteAmounts(e, mem, kBytesPerMiB);
  e.Family("berth_agents_connected", MetricType::kGauge,
           "Nodes whose agent is registered with this controller.");
  e.Sample(static_cast<double>(connected));
}

}  // namespace

PassHistogram::PassHistogram() : h_(PassBuckets()) {}

void PassHistogram::Observe(std::chrono::steady_clock::duration d) {
  const double seconds = std::chrono::duration<double>(d).count();
  MutexLock<Mutex> l(mu_);
  h_.Observe(seconds);
}

prometheus::Histogram PassHistogram::Snapshot() const {
  MutexLock<Mutex> l(mu_);
  return h_;
}

JobCounts CountJobs(const std::map<core::JobId, std::shared_ptr<const JobRecord>>& records,
                    const std::unordered_map<core::JobId, PendingView>& pending,
                    const nlohmann::json& partitions) {
  JobCounts jobs;
  std::string default_partition;
  for (const nlohmann::json& p : partitions) {
    const std::string name = p.value("name", "");
    jobs.by_state.try_emplace(name);  // every partition has its series, 0 included
    if (p.value("default", false)) default_partition = name;
  }
  for (const auto& [id, r] : records) {
    const core::Job& j = r->job;
    const std::string partition = PartitionLabel(j, default_partition);
    auto it = jobs.by_state.find(partition);
    if (it == jobs.by_state.end()) it = jobs.by_state.try_emplace(partition).first;
    ++it->second[static_cast<size_t>(j.state)];
    if (j.state == core::JobState::kPending) {
      ++jobs.pending[{partition, core::PendingReasonName(ReasonOf(*r, pending))}];
    }
  }
  return jobs;
}

net::HttpResponse MetricsResponse(const MetricsSources& s) {
  const JobCounts& jobs = s.jobs;
  const Time last_pass = s.last_pass;
  prometheus::TextEncoder e;
  e.Family("berth_build_info", MetricType::kGauge, "The controller's version (always 1).");
  e.Sample({{"version", BERTH_CONTROLLER_VERSION}}, 1);
  WriteJobs(e, jobs);
  WriteCounters(e, s.counters, s.passes);
  if (last_pass != kNoTime) {
    e.Family("berth_scheduling_last_pass_timestamp_seconds", MetricType::kGauge,
             "When the last scheduling pass ran (Unix time).");
    e.Sample(static_cast<double>(last_pass));
  }
  WriteNodes(e, *s.node_view);
  net::HttpResponse out;
  if (!e.status().ok()) {
    out.status = 500;
    out.content_type = "text/plain; charset=utf-8";
    out.body = "cannot encode the metrics: " + e.status().message() + "\n";
    return out;
  }
  out.content_type = std::string(prometheus::kContentType);
  out.body = e.text();
  return out;
}

}  // namespace berth::controller
