#include "cli/sim_report.h"

#include <chrono>
#include <cmath>
#include <cstdio>
#include <fstream>
#include <iterator>
#include <nlohmann/json.hpp>
#include <string>

#include "config/cluster_config.h"
#include "sim/node_list.h"
#include "sim/philly_machines.h"
#include "sim/plot.h"

namespace berth::cli {
namespace {

bool IsGpuFormat(sim::TraceFormat f) {
  return f == sim::TraceFormat::kPhilly || f == sim::TraceFormat::kItp ||
         f == sim::TraceFormat::kAlibabaPods;
}

core::ClusterSpec UniformCluster(int64_t nodes, int64_t cpus, int64_t mem, int64_t gpus,
                                 const std::string& gpu_type) {
  core::ClusterSpec spec;
  spec.name = "sim";
  const size_t width = std::max<size_t>(4, std::to_string(nodes).size());
  for (int64_t i = 1; i <= nodes; ++i) {
    core::NodeSpec n;
    std::string digits = std::to_string(i);
    n.name = "n" + std::string(width - std::min(width, digits.size()), '0') + digits;
    n.cpus = static_cast<int32_t>(cpus);
    n.mem_mib = mem;
    n.gpus.assign(static_cast<size_t>(gpus), gpu_type);
    spec.nodes.push_back(std::move(n));
  }
  return spec;
}

void Progress(const sim::SimProgress& p, std::chrono::steady_clock::time_point start) {
  double secs = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  double frac = p.jobs_total > 0 ? static_cast<double>(p.jobs_done) / p.jobs_total : 0;
  int filled = static_cast<int>(frac * 30);
  std::fprintf(stderr, "\r[%-30s] %3d%% %lld jobs, %.0f jobs/s ", std::string(filled, '=').c_str(),
               static_cast<int>(frac * 100), static_cast<long long>(p.jobs_done),
               secs > 0 ? static_cast<double>(p.jobs_done) / secs : 0.0);
  std::fflush(stderr);
}

nlohmann::json ToJson(const sim::Trace& trace, const SimSetup& setup, const PolicyOutcome& o) {
  const sim::Metrics& m = o.metrics;
  nlohmann::json j = {
      {"trace", trace.name},
      {"format", std::string(sim::TraceFormatName(trace.format))},
      {"policy", o.policy},
      {"cluster", setup.description},
      {"procs", o.result.capacity_procs},
      {"jobs", m.jobs},
      {"dropped", trace.dropped},
      {"skipped_bad", trace.skipped_bad},
      {"rejected", o.result.rejected},
      {"never_started", o.result.never_started},
      {"avg_wait_s", m.avg_wait_s},
      {"median_wait_s", m.median_wait_s},
      {"max_wait_s", m.max_wait_s},
      {"avg_bsld", m.avg_bsld},
      {"utilization", m.utilization},
      {"makespan_s", m.makespan_s},
      {"passes", o.result.passes},
      {"preemptions", o.result.preemptions},
      {"wall_s", o.wall_s},
      {"jobs_per_s", o.wall_s > 0 ? static_cast<double>(m.jobs) / o.wall_s : 0.0},
  };
  if (m.has_gpus) {
    j["gpus"] = o.result.capacity_gpus;
    j["avg_jct_s"] = m.avg_jct_s;
    j["p95_jct_s"] = m.p95_jct_s;
    j["gpu_utilization"] = m.gpu_utilization;
  }
  if (m.has_users) j["fairness_jain"] = m.fairness_jain;
  if (const sim::PowerStats& p = o.result.power; p.enabled) {
    j["p95_wait_s"] = m.p95_wait_s;
    j["power"] = {{"suspend_time_s",
                   p.suspend_time >= 0 ? nlohmann::json(p.suspend_time) : nlohmann::json("never")},
                  {"boot_time_s", p.boot_time},
                  {"node_hours", p.node_hours},
                  {"boots", p.boots},
                  {"suspends", p.suspends},
                  {"window_start", p.window_start},
                  {"window_end", p.window_end}};
  }
  return j;
}

std::string Fixed(double v, int digits) {
  char buf[64];
  std::snprintf(buf, sizeof(buf), "%.*f", digits, v);
  return buf;
}

void PrintTable(const sim::Trace& trace, const SimSetup& setup,
                const std::vector<PolicyOutcome>& outcomes) {
  std::printf("trace    %s (%s; %zu jobs kept, %lld dropped", trace.name.c_str(),
              std::string(sim::TraceFormatName(trace.format)).c_str(), trace.jobs.size(),
              static_cast<long long>(trace.dropped));
  if (trace.skipped_bad > 0)
    std::printf(", %lld bad lines skipped", static_cast<long long>(trace.skipped_bad));
  std::printf(")\ncluster  %s\n\n", setup.description.c_str());
  std::vector<std::pair<std::string, std::vector<std::string>>> rows;
  auto row = [&](const std::string& name, auto value_of) {
    std::vector<std::string> cells;
    for (const PolicyOutcome& o : outcomes) cells.push_back(value_of(o));
    rows.emplace_back(name, std::move(cells));
  };
  row("policy", [](const PolicyOutcome& o) { return o.policy; });
  const bool power = !outcomes.empty() && outcomes[0].result.power.enabled;
  if (power) {
    row("SuspendTime (s)", [](const PolicyOutcome& o) {
      const Duration s = o.result.power.suspend_time;
      return s >= 0 ? std::to_string(s) : std::string("never");
    });
  }
  row("jobs run", [](const PolicyOutcome& o) { return std::to_string(o.metrics.jobs); });
  row("avg wait (s)", [](const PolicyOutcome& o) { return Fixed(o.metrics.avg_wait_s, 1); });
  row("median wait (s)", [](const PolicyOutcome& o) { return Fixed(o.metrics.median_wait_s, 1); });
  row("max wait (s)", [](const PolicyOutcome& o) { return Fixed(o.metrics.max_wait_s, 0); });
  if (power) {
    row("p95 wait (s)", [](const PolicyOutcome& o) { return Fixed(o.metrics.p95_wait_s, 0); });
  }
  row("avg bounded slowdown", [](const PolicyOutcome& o) { return Fixed(o.metrics.avg_bsld, 2); });
  row("utilization",
      [](const PolicyOutcome& o) { return Fixed(100 * o.metrics.utilization, 1) + "%"; });
  row("makespan (s)", [](const PolicyOutcome& o) { return Fixed(o.metrics.makespan_s, 0); });
  if (power) {
    row("node-hours powered",
        [](const PolicyOutcome& o) { return Fixed(o.result.power.node_hours, 1); });
    row("boots / suspends", [](const PolicyOutcome& o) {
      return std::to_string(o.result.power.boots) + " / " + std::to_string(o.result.power.suspends);
    });
  }
  if (!outcomes.empty() && outcomes[0].metrics.has_gpus) {
    row("avg JCT (s)", [](const PolicyOutcome& o) { return Fixed(o.metrics.avg_jct_s, 1); });
    row("p95 JCT (s)", [](const PolicyOutcome& o) { return Fixed(o.metrics.p95_jct_s, 1); });
    row("GPU utilization",
        [](const PolicyOutcome& o) { return Fixed(100 * o.metrics.gpu_utilization, 1) + "%"; });
  }
  if (!outcomes.empty() && outcomes[0].metrics.has_users) {
    row("fairness (Jain)",
        [](const PolicyOutcome& o) { return Fixed(o.metrics.fairness_jain, 3); });
  }
  row("refused / never ran", [](const PolicyOutcome& o) {
    return std::to_string(o.result.rejected) + " / " + std::to_string(o.result.never_started);
  });
  row("simulated in (s)", [](const PolicyOutcome& o) { return Fixed(o.wall_s, 2); });
  for (const auto& [name, cells] : rows) {
    std::printf("%-22s", name.c_str());
    for (const std::string& c : cells) std::printf(" %14s", c.c_str());
    std::printf("\n");
  }
  for (const PolicyOutcome& o : outcomes) {
    for (const std::string& r : o.result.rejections) std::printf("refused: %s\n", r.c_str());
  }
}

bool IsPhillyMachineListFile(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  std::string first;
  while (in && first.find_first_not_of(" \t\r\n") == std::string::npos) std::getline(in, first);
  return sim::IsPhillyMachineList(first);
}

Result<core::ClusterSpec> ReadPhillyMachineListFile(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) return Status::NotFound("cannot open " + path);
  std::string text((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  return sim::ReadPhillyMachineList(text, path);
}

}  // namespace

Result<SimSetup> MakeSimSetup(const sim::Trace& trace, const std::string& cluster_file,
                              const std::string& config_file, int64_t nodes, int64_t cpus_per_node,
                              int64_t mem_per_node, int64_t gpus_per_node,
                              const std::string& gpu_type) {
  SimSetup s;
  bool gpu_trace = IsGpuFormat(trace.format);
  if (!cluster_file.empty() && sim::IsNodeListFile(cluster_file)) {  // an openb node list
    BERTH_ASSIGN_OR_RETURN(sim::NodeList list, sim::ReadNodeList(cluster_file));
    s.cluster = sim::NodeListCluster(list);
    for (const core::NodeSpec& n : s.cluster.nodes) {
      s.shape.gpus_per_node = std::max(s.shape.gpus_per_node, static_cast<int32_t>(n.gpus.size()));
    }
    s.description = std::to_string(s.cluster.nodes.size()) + " nodes from " + cluster_file;
  } else if (!cluster_file.empty() && IsPhillyMachineListFile(cluster_file)) {
    BERTH_ASSIGN_OR_RETURN(s.cluster, ReadPhillyMachineListFile(cluster_file));
    int64_t gpus = 0;
    for (const core::NodeSpec& n : s.cluster.nodes) gpus = std::max<int64_t>(gpus, n.gpus.size());
    s.shape.gpus_per_node = static_cast<int32_t>(gpus);
    s.description =
        std::to_string(s.cluster.nodes.size()) + " Philly machines from " + cluster_file;
  } else if (!cluster_file.empty()) {
    BERTH_ASSIGN_OR_RETURN(config::ClusterConfig cfg, config::ReadClusterConfig(cluster_file));
    s.cluster = std::move(cfg.cluster);
    s.scheduler = std::move(cfg.scheduler);
    s.power = std::move(cfg.power);
    s.has_scheduler_config = true;
    int64_t gpus = 0;
    for (const core::NodeSpec& n : s.cluster.nodes) gpus = std::max<int64_t>(gpus, n.gpus.size());
    s.shape.gpus_per_node = static_cast<int32_t>(gpus);
    s.description = std::to_string(s.cluster.nodes.size()) + " nodes from " + cluster_file;
  } else if (nodes > 0 || gpu_trace) {
    if (nodes <= 0) nodes = 128;
    if (gpus_per_node < 0) gpus_per_node = gpu_trace ? 8 : 0;
    s.cluster = UniformCluster(nodes, cpus_per_node, mem_per_node, gpus_per_node, gpu_type);
    s.shape.gpus_per_node = static_cast<int32_t>(gpus_per_node);
    s.description = std::to_string(nodes) + " nodes x " + std::to_string(cpus_per_node) +
                    " CPUs, " + std::to_string(mem_per_node / 1024) + " GiB, " +
                    std::to_string(gpus_per_node) + " GPUs";
  } else {
    if (trace.pool_procs <= 0) {
      return Status::InvalidArgument("the trace gives no processor count: use --procs or --nodes");
    }
    core::NodeSpec pool;
    pool.name = "pool";
    pool.cpus = static_cast<int32_t>(trace.pool_procs);
    s.cluster.name = "sim";
    s.cluster.nodes.push_back(pool);
    s.shape.single_pool = true;
    s.shape.pool_procs = trace.pool_procs;
    s.description = "1 pool of " + std::to_string(trace.pool_procs) + " processors";
  }
  if (s.shape.gpus_per_node > 0) {
    int64_t cpus = s.cluster.nodes.empty() ? 0 : s.cluster.nodes.front().cpus;
    s.shape.cpus_per_gpu = static_cast<int32_t>(std::max<int64_t>(1, cpus / s.shape.gpus_per_node));
  }
  if (!config_file.empty()) {
    BERTH_ASSIGN_OR_RETURN(config::ClusterConfig cfg, config::ReadClusterConfig(config_file));
    s.scheduler = std::move(cfg.scheduler);
    s.has_scheduler_config = true;
    if (cfg.power.enabled()) s.power = std::move(cfg.power);
  }
  return s;
}

sim::PowerOptions MakePowerOptions(const SimSetup& setup, const PowerFlags& flags) {
  sim::PowerOptions o;
  const config::PowerSaving& p = setup.power;
  o.enabled = p.enabled() || flags.given;
  if (!o.enabled) return o;
  o.all_down = flags.power_all;
  o.boot_time = flags.boot_time;
  o.suspend_time = p.suspend_program.empty() ? -1 : p.suspend_time;
  if (flags.suspend_time) o.suspend_time = *flags.suspend_time;
  o.suspend_timeout = p.suspend_timeout;
  o.resume_rate = p.resume_rate;
  o.suspend_rate = p.suspend_rate;
  o.suspend_exc_nodes = p.suspend_exc_nodes;
  o.suspend_exc_nodes_keep = p.suspend_exc_nodes_keep;
  o.suspend_exc_parts = p.suspend_exc_parts;
  return o;
}

Result<PolicyOutcome> RunPolicy(const sim::Trace& trace, const SimSetup& setup,
                                const std::string& policy, bool policy_given, bool progress,
                                const sim::PowerOptions& power) {
  PolicyOutcome o;
  sim::SimOptions options;
  options.shape = setup.shape;
  options.power = power;
  options.node_lists = setup.node_lists;
  if (setup.has_scheduler_config && !policy_given) {
    options.scheduler = setup.scheduler;
    o.policy = setup.scheduler.name;
  } else {
    BERTH_ASSIGN_OR_RETURN(options.scheduler, core::SchedulerConfig::Preset(policy));
    if (setup.has_scheduler_config) {
      if (setup.scheduler.order == core::QueueOrder::kLas)
        options.scheduler.las = setup.scheduler.las;
      options.scheduler.weights = setup.scheduler.weights;
      options.scheduler.fairshare = setup.scheduler.fairshare;
      options.scheduler.preempt_type = setup.scheduler.preempt_type;
      options.scheduler.preempt_mode = setup.scheduler.preempt_mode;
    }
    o.policy = policy;
  }
  if (setup.restart_delay) options.scheduler.las.restart_delay = *setup.restart_delay;
  auto start = std::chrono::steady_clock::now();
  if (progress) {
    options.progress = [start](const sim::SimProgress& p) { Progress(p, start); };
  }
  BERTH_ASSIGN_OR_RETURN(o.result, sim::Simulate(trace, setup.cluster, options));
  o.wall_s = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  if (progress) std::fprintf(stderr, "\r%60s\r", "");
  o.metrics = sim::ComputeMetrics(o.result.jobs, o.result.capacity_procs, o.result.capacity_gpus);
  return o;
}

Status WriteOutputs(const sim::Trace& trace, const SimSetup& setup,
                    const std::vector<PolicyOutcome>& outcomes, bool json,
                    const std::string& jobs_out, const std::string& plot_dir) {
  if (json) {
    if (outcomes.size() == 1) {
      std::printf("%s\n", ToJson(trace, setup, outcomes[0]).dump(2).c_str());
    } else {
      nlohmann::json all = nlohmann::json::array();
      for (const PolicyOutcome& o : outcomes) all.push_back(ToJson(trace, setup, o));
      std::printf("%s\n", all.dump(2).c_str());
    }
  } else {
    PrintTable(trace, setup, outcomes);
  }
  if (!jobs_out.empty()) {
    std::ofstream out(jobs_out);
    if (!out) return Status::InvalidArgument("cannot write " + jobs_out);
    out << "policy,id,trace_id,user,submit,start,end,procs,gpus,nodes,node_list,state\n";
    for (const PolicyOutcome& o : outcomes) {
      for (const sim::JobResult& r : o.result.jobs) {
        out << o.policy << ',' << r.job_id << ',' << r.trace_id << ',' << r.user << ',' << r.submit
            << ',' << r.start << ',' << r.end << ',' << r.procs << ',' << r.gpus << ',' << r.nodes
            << ",\"" << r.node_list << "\"," << r.state << '\n';
      }
    }
    if (!out) return Status::InvalidArgument("cannot write " + jobs_out);
  }
  if (!plot_dir.empty()) {
    std::vector<sim::PolicyRun> runs;
    for (const PolicyOutcome& o : outcomes) {
      runs.push_back({o.policy, o.result.jobs, o.result.capacity_procs, o.result.capacity_gpus});
    }
    BERTH_RETURN_IF_ERROR(sim::WritePlots(plot_dir, runs));
  }
  return Status::Ok();
}

}  // namespace berth::cli
