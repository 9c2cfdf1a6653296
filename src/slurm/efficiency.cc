// seff's report (Slurm 22.05 contribs/seff/seff) and berth's suggestions (src/slurm/advice.h:
// the same rules as `berth report advice`, over this one job).
#include "slurm/efficiency.h"

#include <algorithm>
#include <cmath>
#include <cstdio>

#include "slurm/advice.h"

namespace berth::slurm {
namespace {

std::string Printf(const char* fmt, double a) {
  char buf[128];
  std::snprintf(buf, sizeof(buf), fmt, a);
  return buf;
}

int32_t Cpus(const JobView& v) {
  return v.num_cpus > 0 ? v.num_cpus : 1;
}

int32_t Nodes(const JobView& v) {
  return v.node_names.empty() ? 1 : static_cast<int32_t>(v.node_names.size());
}

int64_t AskedMemMib(const JobView& v, const SeffContext& c) {
  return c.alloc_mem_mib > 0 ? c.alloc_mem_mib : v.req_mem_mib;
}

bool Ended(const JobView& v) {
  return core::IsTerminal(v.state);
}

}  // namespace

std::string SeffMemory(double kbytes) {
  if (kbytes <= 0) return "0.00 MB";
  static const char* const kPrefixes[] = {"K", "M", "G", "T", "P", "E"};
  int exp = static_cast<int>(std::log(kbytes) / std::log(1024.0));
  exp = std::clamp(exp, 0, 5);
  return Printf("%.2f ", kbytes / std::pow(1024.0, exp)) + kPrefixes[exp] + "B";
}

std::string SeffTime(int64_t seconds) {
  if (seconds < 0) seconds = 0;
  const int64_t days = seconds / 86400;
  char buf[64];
  std::snprintf(buf, sizeof(buf), "%02ld:%02ld:%02ld", static_cast<long>(seconds / 3600 % 24),
                static_cast<long>(seconds / 60 % 60), static_cast<long>(seconds % 60));
  return (days > 0 ? std::to_string(days) + "-" : "") + buf;
}

std::string ShortMemory(int64_t mib) {
  if (mib < 1024) return std::to_string(mib) + "M";
  std::string g = Printf("%.1f", static_cast<double>(mib) / 1024.0);
  if (g.size() > 2 && g.compare(g.size() - 2, 2, ".0") == 0) g.resize(g.size() - 2);
  return g + "G";
}

std::vector<std::string> EfficiencySuggestions(const JobView& v, const SeffContext& c) {
  std::vector<std::string> out;
  if (!Ended(v)) return out;
  const UsageJob job{v, c.alloc_mem_mib, 0};
  for (const ResourceAdvice& a : ComputeAdvice({job})) {
    std::string s = SingleJobSentence(a, job);
    if (!s.empty()) out.push_back(std::move(s));
  }
  return out;
}

std::string SeffReport(const JobView& v, const SeffContext& c) {
  const int32_t cpus = Cpus(v);
  const int32_t nodes = Nodes(v);
  std::string out = "Job ID: " + std::to_string(v.job_id) + "\n";
  if (v.array_job_id != 0 && v.array_task_id >= 0) {
    out += "Array Job ID: " + std::to_string(v.array_job_id) + "_" +
           std::to_string(v.array_task_id) + "\n";
  }
  out += "Cluster: " + c.cluster + "\n";
  out += "User/Group: " + v.user + "/" + v.group + "\n";
  if (v.state == core::JobState::kPending || v.state == core::JobState::kRunning) {
    out += "State: " + v.state_text + "\n";
  } else {
    out += "State: " + v.state_text + " (exit code " + std::to_string(v.exit_code) + ")\n";
  }
  if (cpus == 1) {
    out += "Cores: 1\n";
  } else {
    out += "Nodes: " + std::to_string(nodes) + "\n";
    out += "Cores per node: " + std::to_string(cpus / nodes) + "\n";
  }
  if (v.state == core::JobState::kPending) {
    return out + "Efficiency not available for jobs in the PENDING state.\n";
  }
  const int64_t cput = std::llround(v.cpu_seconds);
  const int64_t corewall = v.run_time * cpus;
  const double cpu_eff = corewall > 0 ? 100.0 * static_cast<double>(cput) / corewall : 0.0;
  out += "CPU Utilized: " + SeffTime(cput) + "\n";
  out +=
      Printf("CPU Efficiency: %.2f%%", cpu_eff) + " of " + SeffTime(corewall) + " core-walltime\n";
  out += "Job Wall-clock time: " + SeffTime(v.run_time) + "\n";
  const double mem_kb = static_cast<double>(v.max_rss_mib) * 1024.0;
  const double asked_kb = static_cast<double>(AskedMemMib(v, c)) * 1024.0;
  out += "Memory Utilized: " + SeffMemory(mem_kb) + "\n";
  const double mem_eff = asked_kb > 0 ? 100.0 * mem_kb / asked_kb : 0.0;
  out += Printf("Memory Efficiency: %.2f%%", mem_eff) + " of " + SeffMemory(asked_kb) + "\n";
  if (v.gpus > 0 && v.gpu_utilization >= 0) {
    out += Printf("GPU Efficiency: %.2f%%", v.gpu_utilization) + " of " + std::to_string(v.gpus) +
           (v.gpus == 1 ? " GPU\n" : " GPUs\n");
  } else if (v.gpu_milli > 0) {
    // A share: its GPU-hours are the share's fraction of the device's (berth's line; seff has
    // none for MPS).
    const double devices = static_cast<double>(v.gpu_milli) / 1000.0;
    out += Printf("GPU Share: %.2f GPU", devices) + " for " + SeffTime(v.run_time) +
           Printf(" = %.2f GPU-hours\n", devices * static_cast<double>(v.run_time) / 3600.0);
  }
  if (v.state == core::JobState::kRunning) {
    out += "WARNING: Efficiency statistics may be misleading for RUNNING jobs.\n";
  }
  for (const std::string& s : EfficiencySuggestions(v, c)) out += "Suggestion: " + s + "\n";
  return out;
}

std::string SeffDebug(const JobView& v, const SeffContext& c) {
  std::string array = v.array_task_id >= 0
                          ? std::to_string(v.array_job_id) + "_" + std::to_string(v.array_task_id)
                          : "";
  return "Slurm data: JobID ArrayJobID User Group State Clustername Ncpus Nnodes Ntasks Reqmem "
         "PerNode Cput Walltime Mem ExitStatus\n"
         "Slurm data: " +
         std::to_string(v.job_id) + " " + array + " " + v.user + " " + v.group + " " +
         v.state_text + " " + c.cluster + " " + std::to_string(Cpus(v)) + " " +
         std::to_string(Nodes(v)) + " " + std::to_string(AskedMemMib(v, c) * 1024) + " " +
         (v.min_memory_cpu_mib > 0 ? "0" : "1") + " " +
         std::to_string(std::llround(v.cpu_seconds)) + " " + std::to_string(v.run_time) + " " +
         std::to_string(v.max_rss_mib * 1024) + " " + std::to_string(v.exit_code) + "\n\n";
}

}  // namespace berth::slurm
