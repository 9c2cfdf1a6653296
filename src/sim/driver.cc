#include "sim/driver.h"

#include <algorithm>
#include <optional>
#include <unordered_map>

#include "common/hostlist.h"
#include "core/state/cluster_state.h"
#include "sim/virtual_cluster.h"

namespace berth::sim {
namespace {

using core::ClusterState;
using core::JobId;

int64_t CeilDiv(int64_t a, int64_t b) {
  return (a + b - 1) / b;
}

class Driver {
 public:
  Driver(const Trace& trace, VirtualCluster vc, const SimOptions& options)
      : trace_(trace), vc_(std::move(vc)), options_(options) {}

  SimResult Run();

 private:
  void SubmitAt(Time t);
  void Finish(const core::Job& job);
  Status MapDependencies(core::JobSpec& spec) const;

  const Trace& trace_;
  VirtualCluster vc_;
  const SimOptions& options_;
  std::vector<size_t> order_;  // trace indices by submit time (stable)
  size_t next_ = 0;
  std::unordered_map<uint64_t, JobId> berth_of_trace_;
  std::unordered_map<JobId, size_t> trace_of_berth_;
  SimResult result_;
};

SimResult Driver::Run() {
  order_.resize(trace_.jobs.size());
  for (size_t i = 0; i < order_.size(); ++i) order_[i] = i;
  std::stable_sort(order_.begin(), order_.end(), [&](size_t a, size_t b) {
    return trace_.jobs[a].submit < trace_.jobs[b].submit;
  });
  const ClusterState& cs = vc_.state();
  for (uint32_t n = 0; n < cs.num_nodes(); ++n) {
    result_.capacity_procs += cs.node(n).spec.cpus;
    result_.capacity_gpus += cs.node(n).num_gpus;
  }
  VirtualCluster::EndFn on_end = [this](const core::Job& job) { Finish(job); };
  std::optional<PowerModel> power;
  if (options_.power.enabled) {
    vc_.state().SetPowerSaving(true);
    power.emplace(options_.power, vc_.state());
  }
  int64_t steps = 0;
  bool first = true;
  while (true) {
    Time t = vc_.NextEvent();
    if (next_ < order_.size()) t = std::min(t, trace_.jobs[order_[next_]].submit);
    if (power) t = std::min(t, power->NextEvent());
    if (t >= kInfinite) break;
    if (power && first) power->Start(t);
    first = false;
    vc_.EndJobsAt(t, on_end);
    if (power) power->CompleteAt(t, [&](JobId id) { vc_.Started(id, t); });
    SubmitAt(t);
    if (!cs.pending_ids().empty()) result_.passes += vc_.Schedule(t, nullptr, on_end);
    if (power) power->Tick(t);
    if (options_.progress && (++steps & 4095) == 0) {
      options_.progress(
          {static_cast<int64_t>(result_.jobs.size()), static_cast<int64_t>(trace_.jobs.size()), t});
    }
  }
  result_.never_started = static_cast<int64_t>(cs.pending_ids().size());
  result_.preemptions = vc_.preemptions();
  if (power) {
    Time last_end = 0;
    for (const JobResult& r : result_.jobs) last_end = std::max(last_end, r.end);
    result_.power = power->Finish(last_end);
  }
  return std::move(result_);
}

Status Driver::MapDependencies(core::JobSpec& spec) const {
  for (core::DependencyCondition& c : spec.dependency.conditions) {
    for (core::DependencyTarget& target : c.targets) {
      auto it = berth_of_trace_.find(target.job_id);
      if (it == berth_of_trace_.end()) {
        return Status::InvalidArgument("dependency on job " + std::to_string(target.job_id) +
                                       ", which was not submitted before it");
      }
      target.job_id = it->second;
    }
  }
  return Status::Ok();
}

void Driver::SubmitAt(Time t) {
  while (next_ < order_.size() && trace_.jobs[order_[next_]].submit == t) {
    size_t index = order_[next_++];
    const TraceJob& tj = trace_.jobs[index];
    core::JobSpec spec = ToJobSpec(tj, options_.shape);
    Status st = MapDependencies(spec);
    Result<JobId> id =
        st.ok() ? vc_.state().Submit(std::move(spec), nullptr, t) : Result<JobId>(st);
    if (!id.ok()) {
      ++result_.rejected;
      if (result_.rejections.size() < 10) {
        result_.rejections.push_back("trace job " + std::to_string(tj.trace_id) + ": " +
                                     id.status().message());
      }
      continue;
    }
    berth_of_trace_[tj.trace_id] = *id;
    trace_of_berth_[*id] = index;
    vc_.SetRunTime(*id, tj.run_time, tj.exit_code);
  }
}

void Driver::Finish(const core::Job& job) {
  JobId key = job.array_job_id != core::kNoJob ? job.array_job_id : job.id;
  auto it = trace_of_berth_.find(key);
  if (it == trace_of_berth_.end()) return;
  const TraceJob& tj = trace_.jobs[it->second];
  JobResult r;
  r.trace_id = tj.trace_id;
  r.job_id = job.id;
  r.user = job.spec->user;
  r.submit = job.spec->submit_time;
  r.start = job.start_time;
  r.end = job.end_time;
  r.nodes = static_cast<int32_t>(job.alloc.nodes.size());
  std::vector<std::string> names;
  for (const core::NodeAllocation& a : job.alloc.nodes) {
    r.procs += a.cpus;
    r.gpus += a.gpu_count();
    for (const core::GpuShare& g : a.gpu_shares) r.gpu_milli += g.milli;
    if (options_.node_lists) names.push_back(vc_.state().node(a.node).spec.name);
  }
  if (options_.node_lists) r.node_list = hostlist::Compress(names);
  r.state = std::string(core::JobStateName(job.state));
  result_.jobs.push_back(std::move(r));
}

}  // namespace

core::JobSpec ToJobSpec(const TraceJob& job, const ClusterShape& shape) {
  core::JobSpec spec;
  if (job.has_spec) {
    spec = job.spec;
  } else {
    spec.name = "job" + std::to_string(job.trace_id);
    spec.user = job.user;
    spec.account = job.account;
    int64_t procs = std::max<int64_t>(job.procs, 1);
    if (shape.single_pool) {
      spec.cpus_per_task = static_cast<int32_t>(procs);
    } else if (job.gpus > 0) {
      int64_t per_node = shape.gpus_per_node > 0 ? shape.gpus_per_node : job.gpus;
      int64_t nodes = CeilDiv(job.gpus, per_node);
      spec.min_nodes = static_cast<int32_t>(nodes);
      if (job.gpus == 1 && job.gpu_milli > 0 && job.gpu_milli < core::kGpuMilliPerDevice) {
        // A share of one device (the Alibaba traces' gpu_milli).
        spec.gpu_milli = static_cast<int32_t>(job.gpu_milli);
      } else if (nodes == 1) {
        spec.gpus_per_node = static_cast<int32_t>(job.gpus);
      } else {
        spec.gpus = static_cast<int32_t>(job.gpus);
      }
      spec.gpu_type = job.gpu_type;
      if (job.procs > 0) {
        spec.cpus_per_task = static_cast<int32_t>(CeilDiv(job.procs, nodes));
      } else {
        spec.cpus_per_gpu = std::max(1, shape.cpus_per_gpu);
      }
      if (job.mem_mib > 0) spec.mem_per_node_mib = CeilDiv(job.mem_mib, nodes);
    } else {
      if (procs > 1) spec.ntasks = static_cast<int32_t>(procs);
      if (job.mem_mib > 0) spec.mem_per_cpu_mib = CeilDiv(job.mem_mib, procs);
    }
  }
  Duration limit = job.requested > 0 ? job.requested : job.run_time;
  if (!job.has_spec || spec.time_limit == kNoTime) spec.time_limit = std::max<Duration>(limit, 1);
  return spec;
}

Result<SimResult> Simulate(const Trace& trace, const core::ClusterSpec& cluster,
                           const SimOptions& options) {
  BERTH_ASSIGN_OR_RETURN(VirtualCluster vc, VirtualCluster::Create(cluster, options.scheduler));
  vc.SetExplainDetails(false);  // the results hold no reason texts
  vc.SetPendingReasons(false);  // nor reasons
  Driver driver(trace, std::move(vc), options);
  return driver.Run();
}

}  // namespace berth::sim
