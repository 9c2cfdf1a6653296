// seff's report (Slurm 22.05 contribs/seff/seff) and berth's suggestions.
#include "slurm/efficiency.h"

#include <algorithm>
#include <cmath>
#include <cstdio>

#include "common/slurm_time.h"

namespace berth::slurm {
namespace {

// A suggestion leaves this much room above what was used.
constexpr double kHeadroom = 1.2;
// ... and is made only when the request was at least this many times the suggestion.
constexpr int64_t kWasteFactor = 2;

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

// Memory rounded up to what a user would write: 128M steps below 1G, whole G above.
int64_t RoundUpMem(double mib) {
  int64_t m = static_cast<int64_t>(std::ceil(mib));
  if (m <= 1024) return std::max<int64_t>(128, (m + 127) / 128 * 128);
  return (m + 1023) / 1024 * 1024;
}

std::string MemOption(int64_t mib) {
  return mib % 1024 == 0 ? std::to_string(mib / 1024) + "G" : std::to_string(mib) + "M";
}

// A time limit rounded up: 5 minutes below an hour, 30 minutes below a day, hours above.
Duration RoundUpTime(double seconds) {
  int64_t s = static_cast<int64_t>(std::ceil(seconds));
  int64_t step = s < 3600 ? 300 : (s < 86400 ? 1800 : 3600);
  return std::max<int64_t>(300, (s + step - 1) / step * step);
}

std::string MemorySuggestion(const JobView& v, const SeffContext& c) {
  const int64_t asked = AskedMemMib(v, c);
  if (v.state == core::JobState::kOutOfMemory) {
    const int64_t per_node = asked / Nodes(v);
    if (per_node <= 0) return "";
    return "memory: the job ran out of its " + ShortMemory(per_node) +
           ": try --mem=" + MemOption(RoundUpMem(per_node * 2.0));
  }
  if (v.max_rss_mib <= 0 || asked <= 0) return "";
  if (v.min_memory_cpu_mib > 0) {
    const double peak_per_cpu = static_cast<double>(v.max_rss_mib) / Cpus(v);
    const int64_t suggest = RoundUpMem(peak_per_cpu * kHeadroom);
    if (suggest * kWasteFactor > v.min_memory_cpu_mib) return "";
    return "memory: asked " + ShortMemory(v.min_memory_cpu_mib) + " per CPU, peaked at " +
           ShortMemory(static_cast<int64_t>(std::ceil(peak_per_cpu))) +
           " per CPU: --mem-per-cpu=" + MemOption(suggest) + " would do";
  }
  const int64_t per_node = asked / Nodes(v);
  const int64_t suggest = RoundUpMem(v.max_rss_mib * kHeadroom);
  if (suggest * kWasteFactor > per_node) return "";
  return "memory: asked " + ShortMemory(per_node) + ", peaked at " + ShortMemory(v.max_rss_mib) +
         ": --mem=" + MemOption(suggest) + " would do";
}

std::string TimeSuggestion(const JobView& v) {
  if (v.time_limit >= kInfinite || v.time_limit <= 0) return "";
  if (v.state == core::JobState::kTimeout) {
    return "time: the job reached its limit of " + FormatTimeLimit(v.time_limit) +
           ": ask for more with --time";
  }
  if (v.state != core::JobState::kCompleted || v.run_time <= 0) return "";
  const Duration suggest = RoundUpTime(v.run_time * 1.5);
  if (suggest * kWasteFactor > v.time_limit) return "";
  return "time: asked " + FormatTimeLimit(v.time_limit) + ", ran " + FormatTimeLimit(v.run_time) +
         ": --time=" + FormatTimeLimit(suggest) + " would do";
}

std::string CpuSuggestion(const JobView& v) {
  const int32_t cpus = Cpus(v);
  if (v.state != core::JobState::kCompleted || cpus < 2 || v.run_time < 60) return "";
  const double busy = v.cpu_seconds / static_cast<double>(v.run_time);
  const int64_t suggest = std::max<int64_t>(1, static_cast<int64_t>(std::ceil(busy * 1.25)));
  if (suggest * kWasteFactor > cpus) return "";
  return "CPUs: asked " + std::to_string(cpus) + " cores, " + Printf("%.1f", busy) +
         " busy on average: " + std::to_string(suggest) + (suggest == 1 ? " core" : " cores") +
         " would do";
}

std::string GpuSuggestion(const JobView& v) {
  if (!Ended(v) || v.gpus <= 0 || v.gpu_utilization < 0 || v.gpu_utilization >= 25) return "";
  return "GPUs: " + std::to_string(v.gpus) + (v.gpus == 1 ? " GPU was " : " GPUs were ") +
         Printf("%.0f", v.gpu_utilization) +
         "% busy on average: " + (v.gpus > 1 ? "fewer GPUs would do, or " : "") +
         "the job waits on something else";
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
  for (std::string s :
       {MemorySuggestion(v, c), TimeSuggestion(v), CpuSuggestion(v), GpuSuggestion(v)}) {
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
