// sacct's rows and --json entries of srun's steps (JOB.0, JOB.1, ...): sacct_view.h's
// StepValue and the "steps" of SacctJson.
#include <algorithm>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "common/hostlist.h"
#include "common/slurm_time.h"
#include "slurm/sacct_internal.h"
#include "slurm/sacct_view.h"

namespace berth::slurm::sacct_internal {
namespace {

using nlohmann::json;

// A step's peak RSS as sacct prints a usage in KiB: "2081712K" ("0" for none).
std::string KibText(int64_t kib) {
  return kib <= 0 ? "0" : std::to_string(kib) + "K";
}

// The values of a JOB.N row.
}  // namespace

std::string StepRowValue(std::string_view f, const SacctJob& j, const api::StepRecord& s,
                         const std::string& cluster) {
  const JobView& v = j.view;
  const Duration elapsed = (s.ended() ? s.end : std::max(s.start, j.now)) - s.start;
  const std::string id = std::to_string(s.id);
  const double total_cpu = s.user_cpu_seconds + s.system_cpu_seconds;
  size_t nnodes = 0;
  if (!s.nodes.empty()) {
    Result<std::vector<std::string>> names = hostlist::Expand(s.nodes);
    nnodes = names.ok() ? names->size() : 1;
  }
  if (f == "Account") return v.account;
  if (f == "AllocCPUS" || f == "NCPUS") return std::to_string(s.ncpus);
  if (f == "AllocNodes" || f == "NNodes") return std::to_string(nnodes);
  if (f == "AveCPU") return SacctCpuTime(s.ntasks > 0 ? total_cpu / s.ntasks : 0);
  if (f == "AveRSS") return KibText(s.ave_rss_kib);
  if (f == "Cluster") return cluster;
  if (f == "CPUTime") return FormatElapsed(elapsed * s.ncpus);
  if (f == "CPUTimeRAW") return std::to_string(elapsed * s.ncpus);
  if (f == "Elapsed") return FormatElapsed(elapsed);
  if (f == "ElapsedRaw") return std::to_string(elapsed);
  if (f == "Eligible" || f == "Start" || f == "Submit") return TimeOrUnknown(s.start);
  if (f == "End") return TimeOrUnknown(s.ended() ? s.end : kNoTime);
  if (f == "ExitCode") return std::to_string(s.exit_code) + ":" + std::to_string(s.term_signal);
  if (f == "GID") return std::to_string(v.gid);
  if (f == "Group") return v.group;
  if (f == "JobID") return JobIdText(v) + "." + id;
  if (f == "JobIDRaw") return std::to_string(v.job_id) + "." + id;
  if (f == "JobName") return s.name;
  if (f == "Layout") return "Block";
  if (f == "MaxRSS") return KibText(s.max_rss_kib);
  if (f == "MaxRSSNode" || f == "MinCPUNode") return s.max_rss_node;
  if (f == "MaxRSSTask") return s.max_rss_node.empty() ? "" : std::to_string(s.max_rss_task);
  if (f == "MinCPU") return SacctCpuTime(s.min_cpu_seconds);
  if (f == "MinCPUTask") return s.max_rss_node.empty() ? "" : std::to_string(s.min_cpu_task);
  if (f == "NodeList") return s.nodes;
  if (f == "NTasks") return std::to_string(s.ntasks);
  if (f == "ReqCPUFreq" || f == "ReqCPUFreqMin" || f == "ReqCPUFreqMax" || f == "ReqCPUFreqGov") {
    return "Unknown";
  }
  if (f == "ReqMem") return SacctMemory(v.req_mem_mib);
  if (f == "State") {
    // As for jobs: a step ended by scancel JOB.STEP says who.
    if (s.state == "CANCELLED" && s.cancelled_by >= 0) {
      return s.state + " by " + std::to_string(s.cancelled_by);
    }
    return s.state;
  }
  if (f == "Suspended") return "00:00:00";
  if (f == "SystemCPU") return SacctCpuTime(s.system_cpu_seconds);
  if (f == "TotalCPU") return SacctCpuTime(total_cpu);
  if (f == "UID") return std::to_string(v.uid);
  if (f == "User") return v.user;
  if (f == "UserCPU") return SacctCpuTime(s.user_cpu_seconds);
  if (f == "WorkDir") return v.work_dir;
  return "";
}

json StepJson(const SacctJob& j, const api::StepRecord& s) {
  const JobView& v = j.view;
  const Duration elapsed = (s.ended() ? s.end : std::max(s.start, j.now)) - s.start;
  auto seconds = [](double x) {
    const auto whole = static_cast<int64_t>(x);
    return json{{"seconds", whole},
                {"microseconds", static_cast<int64_t>((x - static_cast<double>(whole)) * 1e6)}};
  };
  json time = {{"elapsed", elapsed},
               {"end", s.ended() ? s.end : 0},
               {"start", s.start},
               {"suspended", 0},
               {"system", seconds(s.system_cpu_seconds)},
               {"total", seconds(s.user_cpu_seconds + s.system_cpu_seconds)},
               {"user", seconds(s.user_cpu_seconds)}};
  json nodes = json::array();
  if (Result<std::vector<std::string>> names = hostlist::Expand(s.nodes); names.ok()) {
    nodes = *names;
  }
  return {{"time", time},
          {"exit_code", ExitJson(s.exit_code, s.term_signal)},
          {"nodes", {{"count", nodes.size()}, {"range", s.nodes}, {"list", nodes}}},
          {"tasks", {{"count", s.ntasks}}},
          {"pid", nullptr},
          {"kill_request_user", nullptr},
          {"state", s.state},
          {"step",
           {{"job_id", v.job_id},
            {"het", {{"component", nullptr}}},
            {"id", std::to_string(v.job_id) + "." + std::to_string(s.id)},
            {"name", s.name}}},
          {"task", {{"distribution", "Block"}}},
          {"tres", StepTres(TresList("mem=" + std::to_string(s.max_rss_kib / 1024) + "M"),
                            TresList("mem=" + std::to_string(s.ave_rss_kib / 1024) + "M"),
                            TresList("cpu=" + std::to_string(s.ncpus)))}};
}

}  // namespace berth::slurm::sacct_internal
