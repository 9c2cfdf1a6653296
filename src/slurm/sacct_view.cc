// sacct's fields, selection and layout (Slurm 22.05: src/sacct/, src/common/print_fields.c).
// Field widths were read off 22.05.8's own header (`sacct -o ALL`).
#include "slurm/sacct_view.h"

#include <time.h>

#include <algorithm>
#include <charconv>
#include <cmath>
#include <cstdio>
#include <functional>
#include <nlohmann/json.hpp>

#include "common/hostlist.h"
#include "common/slurm_time.h"
#include "common/strings.h"
#include "slurm/sacct_internal.h"

namespace berth::slurm {
namespace {

using sacct_internal::ExitJson;
using sacct_internal::FormatElapsed;
using sacct_internal::JobIdText;
using sacct_internal::StepJson;
using sacct_internal::StepRowValue;
using sacct_internal::StepTres;
using sacct_internal::TimeOrUnknown;
using sacct_internal::TresList;

using sacct_internal::Number;

using nlohmann::json;

struct FieldInfo {
  const char* name;
  int width;
  SacctKind kind;
};

constexpr SacctKind T = SacctKind::kText;
constexpr SacctKind N = SacctKind::kNumber;
constexpr SacctKind D = SacctKind::kDate;
constexpr SacctKind E = SacctKind::kTime;  // elapsed-style times

// Slurm 22.05's fields in its order (a prefix picks the first match in this order).
// clang-format off
constexpr FieldInfo kFields[] = {
    {"Account", 10, T}, {"AdminComment", 15, T}, {"AllocCPUS", 10, N}, {"AllocNodes", 10, T},
    {"AllocTRES", 10, T}, {"AssocID", 7, N}, {"AveCPU", 10, T}, {"AveCPUFreq", 10, T},
    {"AveDiskRead", 14, T}, {"AveDiskWrite", 14, T}, {"AvePages", 10, T}, {"AveRSS", 10, T},
    {"AveVMSize", 10, T}, {"BlockID", 16, T}, {"Cluster", 10, T}, {"Comment", 14, T},
    {"Constraints", 19, T}, {"ConsumedEnergy", 14, T}, {"ConsumedEnergyRaw", 17, N},
    {"Container", 19, T}, {"CPUTime", 10, E}, {"CPUTimeRAW", 10, N}, {"DBIndex", -10, N},
    {"DerivedExitCode", 15, T}, {"Elapsed", 10, E}, {"ElapsedRaw", 10, N}, {"Eligible", 19, D},
    {"End", 19, D}, {"ExitCode", 8, T}, {"Flags", 19, T}, {"GID", 6, N}, {"Group", 9, T},
    {"JobID", -12, T}, {"JobIDRaw", -12, T}, {"JobName", 10, T}, {"Layout", 9, T},
    {"MaxDiskRead", 12, T}, {"MaxDiskReadNode", 15, T}, {"MaxDiskReadTask", 15, N},
    {"MaxDiskWrite", 12, T}, {"MaxDiskWriteNode", 16, T}, {"MaxDiskWriteTask", 16, N},
    {"MaxPages", 8, T}, {"MaxPagesNode", 12, T}, {"MaxPagesTask", 14, N}, {"MaxRSS", 10, T},
    {"MaxRSSNode", 10, T}, {"MaxRSSTask", 10, N}, {"MaxVMSize", 10, T}, {"MaxVMSizeNode", 14, T},
    {"MaxVMSizeTask", 14, N}, {"McsLabel", 12, T}, {"MinCPU", 10, T}, {"MinCPUNode", 10, T},
    {"MinCPUTask", 10, N}, {"NCPUS", 10, N}, {"NNodes", 8, N}, {"NodeList", 15, T},
    {"NTasks", 8, N}, {"Partition", 10, T}, {"Priority", 10, N}, {"QOS", 10, T}, {"QOSRAW", 6, N},
    {"Reason", 22, T}, {"ReqCPUFreq", 10, T}, {"ReqCPUFreqGov", 13, T}, {"ReqCPUFreqMax", 13, T},
    {"ReqCPUFreqMin", 13, T}, {"ReqCPUS", 8, N}, {"ReqMem", 10, T}, {"ReqNodes", 8, T},
    {"ReqTRES", 10, T}, {"Reservation", 20, T}, {"ReservationId", 8, N}, {"Reserved", 10, E},
    {"ResvCPU", 10, E}, {"ResvCPURAW", 10, N}, {"Start", 19, D}, {"State", 10, T},
    {"Submit", 19, D}, {"SubmitLine", 20, T}, {"Suspended", 10, E}, {"SystemComment", 15, T},
    {"SystemCPU", 10, T}, {"Timelimit", 10, T}, {"TimelimitRaw", 10, T}, {"TotalCPU", 10, T},
    {"TRESUsageInAve", 14, T}, {"TRESUsageInMax", 14, T}, {"TRESUsageInMaxNode", 18, T},
    {"TRESUsageInMaxTask", 18, T}, {"TRESUsageInMin", 14, T}, {"TRESUsageInMinNode", 18, T},
    {"TRESUsageInMinTask", 18, T}, {"TRESUsageInTot", 14, T}, {"TRESUsageOutAve", 15, T},
    {"TRESUsageOutMax", 15, T}, {"TRESUsageOutMaxNode", 19, T}, {"TRESUsageOutMaxTask", 19, T},
    {"TRESUsageOutMin", 15, T}, {"TRESUsageOutMinNode", 19, T}, {"TRESUsageOutMinTask", 19, T},
    {"TRESUsageOutTot", 15, T}, {"UID", 6, N}, {"User", 9, T}, {"UserCPU", 10, T}, {"WCKey", 10, T},
    {"WCKeyID", 10, N}, {"WorkDir", 20, T},
};
// clang-format on

const FieldInfo* FindField(std::string_view name) {
  for (const FieldInfo& f : kFields) {
    if (f.name == name) return &f;
  }
  return nullptr;
}

// ---- Values

bool Started(const JobView& v) {
  return !v.node_names.empty() || (v.state != core::JobState::kPending && v.start_time != kNoTime);
}

// sacct lists TRES by name ("billing=4,cpu=4,gres/gpu=1,mem=16G,node=1"); scontrol keeps
// slurmctld's order.
std::string SortedTres(const std::string& tres) {
  std::vector<std::string> items = SplitList(tres);
  std::sort(items.begin(), items.end());
  std::string out;
  for (const std::string& i : items) out += (out.empty() ? "" : ",") + i;
  return out;
}

std::string BatchTres(const SacctJob& j) {
  std::string t = "cpu=" + std::to_string(j.batch_cpus);
  if (j.batch_gpus > 0) {
    t += ",gres/gpu=" + std::to_string(j.batch_gpus);
    if (!j.gpu_type.empty()) t += ",gres/gpu:" + j.gpu_type + "=" + std::to_string(j.batch_gpus);
  }
  if (j.batch_mem_mib > 0) t += ",mem=" + SacctMemory(j.batch_mem_mib);
  return SortedTres(t + ",node=1");
}

// The batch step's state: what the script's end looked like (a timed out or preempted job's
// script was cancelled).
std::string BatchState(const JobView& v) {
  switch (v.state) {
    case core::JobState::kRunning:
    case core::JobState::kConfiguring:
    case core::JobState::kSuspended:
      return "RUNNING";
    case core::JobState::kCompleting:
      return "COMPLETED";
    case core::JobState::kTimeout:
    case core::JobState::kPreempted:
    case core::JobState::kDeadline:
      return "CANCELLED";
    default:
      return v.state_text;
  }
}

// The job row's ExitCode: a job that was cancelled or timed out shows 0:0 (the script's signal
// is on the batch row), as Slurm does.
std::string JobExitCode(const JobView& v) {
  switch (v.state) {
    case core::JobState::kCancelled:
    case core::JobState::kTimeout:
    case core::JobState::kPreempted:
    case core::JobState::kDeadline:
    case core::JobState::kNodeFail:
      return "0:0";
    default:
      return ExitCodeText(v);
  }
}

std::string TimelimitRaw(Duration limit) {
  if (limit >= kInfinite) return "UNLIMITED";
  return std::to_string((limit + 59) / 60);
}

// The values of the job row; "" = empty.
std::string JobValue(std::string_view f, const SacctJob& j, const std::string& cluster) {
  const JobView& v = j.view;
  const bool started = Started(v);
  const int32_t cpus = started ? v.num_cpus : 0;
  const Duration elapsed = started ? v.run_time : 0;
  if (f == "Account") return v.account;
  if (f == "AllocCPUS" || f == "NCPUS") return std::to_string(cpus);
  if (f == "AllocNodes") return std::to_string(started ? v.node_names.size() : 0);
  if (f == "AllocTRES") return started ? SortedTres(v.alloc_tres) : "";
  if (f == "Cluster") return cluster;
  if (f == "Comment") return v.comment;
  if (f == "Constraints") return v.features;
  if (f == "CPUTime") return FormatElapsed(elapsed * cpus);
  if (f == "CPUTimeRAW") return std::to_string(elapsed * cpus);
  if (f == "DerivedExitCode") return "0:0";
  if (f == "Elapsed") return FormatElapsed(elapsed);
  if (f == "ElapsedRaw") return std::to_string(elapsed);
  if (f == "Eligible") return TimeOrUnknown(v.eligible_time);
  if (f == "End") return TimeOrUnknown(core::IsTerminal(v.state) ? v.end_time : kNoTime);
  if (f == "ExitCode") return JobExitCode(v);
  if (f == "GID") return std::to_string(v.gid);
  if (f == "Group") return v.group;
  if (f == "JobID") return JobIdText(v);
  if (f == "JobIDRaw") return std::to_string(v.job_id);
  if (f == "JobName") return v.name;
  if (f == "NNodes") return std::to_string(started ? v.node_names.size() : v.min_nodes);
  if (f == "NodeList") return started ? v.nodes : "None assigned";
  if (f == "Partition") return v.partition;
  if (f == "Priority") return std::to_string(v.priority);
  if (f == "QOS") return v.qos;
  if (f == "Reason") return v.reason;
  if (f == "ReqCPUS") return std::to_string(v.num_cpus);
  if (f == "ReqMem") return SacctMemory(v.req_mem_mib);
  if (f == "ReqNodes") return std::to_string(v.min_nodes);
  if (f == "ReqTRES") return SortedTres(v.req_tres);
  if (f == "Reservation") return v.reservation;
  if (f == "Start") return TimeOrUnknown(started ? v.start_time : kNoTime);
  if (f == "State") {
    // As slurmdbd records it: a job a user cancelled says whose uid did ("CANCELLED by 1000").
    if (v.state == core::JobState::kCancelled && v.cancelled_by >= 0) {
      return v.state_text + " by " + std::to_string(v.cancelled_by);
    }
    return v.state_text;
  }
  if (f == "Submit") return TimeOrUnknown(v.submit_time);
  if (f == "Suspended") return "00:00:00";
  if (f == "Timelimit") return FormatTimeLimit(v.time_limit);
  if (f == "TimelimitRaw") return TimelimitRaw(v.time_limit);
  if (f == "TotalCPU") return started ? SacctCpuTime(v.cpu_seconds) : "00:00:00";
  if (f == "UID") return std::to_string(v.uid);
  if (f == "User") return v.user;
  if (f == "WorkDir") return v.work_dir;
  return "";
}

// The values of the ID.batch row.
std::string BatchValue(std::string_view f, const SacctJob& j, const std::string& cluster) {
  const JobView& v = j.view;
  const std::string node = v.node_names.empty() ? "" : v.node_names.front();
  if (f == "Account") return v.account;
  if (f == "AllocCPUS" || f == "NCPUS") return std::to_string(j.batch_cpus);
  if (f == "AllocNodes" || f == "NNodes") return "1";
  if (f == "AllocTRES") return BatchTres(j);
  if (f == "AveCPU" || f == "MinCPU") return SacctCpuTime(v.cpu_seconds);
  if (f == "AveRSS" || f == "MaxRSS") return SacctMemory(v.max_rss_mib);
  if (f == "MaxRSSNode" || f == "MinCPUNode") return node;
  if (f == "MaxRSSTask" || f == "MinCPUTask") return "0";
  if (f == "Cluster") return cluster;
  if (f == "CPUTime") return FormatElapsed(v.run_time * j.batch_cpus);
  if (f == "CPUTimeRAW") return std::to_string(v.run_time * j.batch_cpus);
  if (f == "Elapsed") return FormatElapsed(v.run_time);
  if (f == "ElapsedRaw") return std::to_string(v.run_time);
  if (f == "Eligible" || f == "Start") return TimeOrUnknown(v.start_time);
  if (f == "End") return TimeOrUnknown(core::IsTerminal(v.state) ? v.end_time : kNoTime);
  if (f == "ExitCode") return ExitCodeText(v);
  if (f == "GID") return std::to_string(v.gid);
  if (f == "Group") return v.group;
  if (f == "JobID") return JobIdText(v) + ".batch";
  if (f == "JobIDRaw") return std::to_string(v.job_id) + ".batch";
  if (f == "JobName") return "batch";
  if (f == "Layout") return "Unknown";
  if (f == "NodeList") return node;
  if (f == "NTasks") return "1";
  if (f == "ReqCPUFreq" || f == "ReqCPUFreqMin" || f == "ReqCPUFreqMax" || f == "ReqCPUFreqGov") {
    return "Unknown";
  }
  if (f == "ReqMem") return SacctMemory(v.req_mem_mib);
  if (f == "State") return BatchState(v);
  if (f == "Submit") return TimeOrUnknown(v.start_time);
  if (f == "Suspended") return "00:00:00";
  if (f == "TotalCPU") return SacctCpuTime(v.cpu_seconds);
  if (f == "UID") return std::to_string(v.uid);
  if (f == "User") return v.user;
  if (f == "WorkDir") return v.work_dir;
  return "";
}

// ---- Selection

bool InList(const std::vector<std::string>& list, const std::string& value) {
  return std::find(list.begin(), list.end(), value) != list.end();
}

bool IdMatches(const SacctJobId& id, const JobView& v) {
  if (id.task == SacctJobId::kAnyTask) return v.job_id == id.job_id || v.array_job_id == id.job_id;
  return v.array_job_id == id.job_id && v.array_task_id == id.task;
}

// Was the job in state `s` during [from, to]?
bool InStateDuring(const JobView& v, core::JobState s, Time from, Time to) {
  const Time start = Started(v) ? v.start_time : kNoTime;
  const Time end = core::IsTerminal(v.state) ? v.end_time : kNoTime;
  switch (s) {
    case core::JobState::kPending:
      return v.submit_time <= to && (start == kNoTime || start >= from) &&
             (end == kNoTime || end >= from);
    case core::JobState::kRunning:
      return start != kNoTime && start <= to && (end == kNoTime || end >= from);
    default:
      return v.state == s && end != kNoTime && end >= from && end <= to;
  }
}

bool InWindow(const SacctOptions& opt, const JobView& v, Time from, Time to) {
  if (!opt.states.empty()) {
    return std::any_of(opt.states.begin(), opt.states.end(),
                       [&](core::JobState s) { return InStateDuring(v, s, from, to); });
  }
  const Time end = core::IsTerminal(v.state) ? v.end_time : kNoTime;
  return v.submit_time <= to && (end == kNoTime || end >= from);
}

bool UserSelected(const SacctOptions& opt, const JobView& v, const SacctCaller& caller) {
  if (!opt.users.empty()) {
    return InList(opt.users, v.user) || InList(opt.users, std::to_string(v.uid));
  }
  if (opt.all_users || caller.uid == 0 || !opt.jobs.empty()) return true;
  return v.uid == caller.uid;
}

bool FiltersPass(const SacctOptions& opt, const JobView& v) {
  if (!opt.partitions.empty() && !InList(opt.partitions, v.partition)) return false;
  if (!opt.accounts.empty() && !InList(opt.accounts, v.account)) return false;
  if (!opt.names.empty() && !InList(opt.names, v.name)) return false;
  if (!opt.nodelist.empty()) {
    bool any = false;
    for (const std::string& n : v.node_names) any = any || InList(opt.nodelist, n);
    if (!any) return false;
  }
  return true;
}

// print_fields' value layout.
std::string Pad(const std::string& s, int width) {
  const int abs_width = std::abs(width);
  if (static_cast<int>(s.size()) >= abs_width) return s;
  std::string pad(abs_width - s.size(), ' ');
  return width < 0 ? s + pad : pad + s;
}

SacctKind KindOf(const std::string& name) {
  const FieldInfo* f = FindField(name);
  return f != nullptr ? f->kind : SacctKind::kText;
}

json JobTimes(const JobView& v, Time start, Time end, Duration elapsed) {
  const int64_t cpu_s = static_cast<int64_t>(v.cpu_seconds);
  const int64_t cpu_us = static_cast<int64_t>((v.cpu_seconds - cpu_s) * 1e6);
  return {{"elapsed", elapsed},
          {"eligible", v.eligible_time == kNoTime ? 0 : v.eligible_time},
          {"end", end == kNoTime ? 0 : end},
          {"start", start == kNoTime ? 0 : start},
          {"submission", v.submit_time == kNoTime ? 0 : v.submit_time},
          {"suspended", 0},
          {"system", {{"seconds", 0}, {"microseconds", 0}}},
          {"limit", v.time_limit >= kInfinite ? 0 : v.time_limit / 60},
          {"total", {{"seconds", cpu_s}, {"microseconds", cpu_us}}},
          {"user", {{"seconds", 0}, {"microseconds", 0}}}};
}

json BatchStepJson(const SacctJob& j) {
  const JobView& v = j.view;
  const std::string node = v.node_names.empty() ? "" : v.node_names.front();
  const Time end = core::IsTerminal(v.state) ? v.end_time : kNoTime;
  return {{"time", JobTimes(v, v.start_time, end, v.run_time)},
          {"exit_code", ExitJson(v.exit_code, v.exit_signal)},
          {"nodes", {{"count", 1}, {"range", node}, {"list", {node}}}},
          {"tasks", {{"count", 1}}},
          {"pid", nullptr},
          {"CPU", {{"requested_frequency", {{"min", 0}, {"max", 0}}}, {"governor", json::array()}}},
          {"kill_request_user", nullptr},
          {"state", BatchState(v)},
          {"statistics", {{"CPU", {{"actual_frequency", 0}}}, {"energy", {{"consumed", 0}}}}},
          {"step",
           {{"job_id", v.job_id},
            {"het", {{"component", nullptr}}},
            {"id", std::to_string(v.job_id) + ".batch"},
            {"name", "batch"}}},
          {"task", {{"distribution", "Unknown"}}},
          {"tres", StepTres(TresList("mem=" + std::to_string(v.max_rss_mib) + "M"), json::array(),
                            TresList(BatchTres(j)))}};
}

}  // namespace

// ---- Public

Result<SacctJob> SacctJobFromJson(const json& record, Time now) {
  BERTH_ASSIGN_OR_RETURN(JobView v, JobViewFromJson(record, now));
  SacctJob j;
  j.view = std::move(v);
  if (record.contains("allocation") && record.at("allocation").contains("nodes") &&
      record.at("allocation").at("nodes").is_array() &&
      !record.at("allocation").at("nodes").empty()) {
    const json& first = record.at("allocation").at("nodes").at(0);
    j.batch_cpus = first.value("cpus", 0);
    j.batch_mem_mib = first.value("mem_mib", int64_t{0});
    if (first.contains("gpus") && first.at("gpus").is_array()) {
      j.batch_gpus = static_cast<int32_t>(first.at("gpus").size());
    }
  }
  if (record.contains("request") && record.at("request").is_object()) {
    j.gpu_type = record.at("request").value("gpu_type", std::string());
  }
  j.now = now;
  if (record.contains("steps") && record.at("steps").is_array()) {
    const bool ended = core::IsTerminal(j.view.state);
    for (const json& s : record.at("steps")) {
      Result<api::StepRecord> step = api::DecodeStepRecord(s);
      if (!step.ok()) {
        return Status::InvalidArgument("job " + std::to_string(j.view.job_id) +
                                       ": bad step: " + step.status().message());
      }
      j.steps.push_back(ended ? api::StepAfterJobEnd(*step, j.view.end_time) : *step);
    }
  }
  return j;
}

std::vector<SacctField> DefaultSacctFields() {
  return *ParseSacctFormat("JobID,JobName,Partition,Account,AllocCPUS,State,ExitCode");
}

Result<std::vector<SacctField>> ParseSacctFormat(std::string_view text) {
  std::vector<SacctField> out;
  for (const std::string& item : SplitList(text)) {
    std::string name = item;
    std::optional<int> width;
    if (size_t pct = item.find('%'); pct != std::string::npos) {
      name = item.substr(0, pct);
      std::optional<int64_t> w = Number(item.substr(pct + 1));
      if (w && *w != 0) width = static_cast<int>(std::clamp<int64_t>(*w, -4096, 4096));
    }
    const FieldInfo* found = nullptr;
    for (const FieldInfo& f : kFields) {
      if (StartsWithIgnoreCase(f.name, name)) {
        found = &f;
        break;
      }
    }
    if (found == nullptr || name.empty()) {
      return Status::InvalidArgument("Invalid field requested: \"" + name + "\"");
    }
    out.push_back({found->name, width.value_or(found->width)});
  }
  return out;
}

std::string SacctHelpFormat() {
  std::string out;
  int i = 0;
  for (const FieldInfo& f : kFields) {
    char buf[64];
    std::snprintf(buf, sizeof(buf), "%-19s", f.name);
    out += buf;
    out += (++i % 4 == 0) ? "\n" : " ";
  }
  if (i % 4 != 0) out.back() = '\n';
  return out;
}

Time SacctWindowStart(const SacctOptions& opt, Time now) {
  if (opt.start) return *opt.start;
  if (!opt.jobs.empty()) return 0;
  if (!opt.states.empty()) return opt.end.value_or(now);
  time_t tt = static_cast<time_t>(now);
  struct tm t;
  localtime_r(&tt, &t);
  t.tm_hour = t.tm_min = t.tm_sec = 0;
  t.tm_isdst = -1;
  return static_cast<Time>(mktime(&t));
}

bool SacctSelectsWho(const SacctOptions& opt, const JobView& v, const SacctCaller& caller) {
  if (!opt.jobs.empty() && std::none_of(opt.jobs.begin(), opt.jobs.end(),
                                        [&](const SacctJobId& id) { return IdMatches(id, v); })) {
    return false;
  }
  return UserSelected(opt, v, caller);
}

bool SacctSelects(const SacctOptions& opt, const JobView& v, const SacctCaller& caller, Time from,
                  Time to) {
  if (!SacctSelectsWho(opt, v, caller)) return false;
  const bool windowed = opt.jobs.empty() || opt.start || opt.end || !opt.states.empty();
  if (windowed && !InWindow(opt, v, from, to)) return false;
  return FiltersPass(opt, v);
}

void SortSacctJobs(std::vector<const SacctJob*>* jobs) {
  auto key = [](const SacctJob* j) {
    const JobView& v = j->view;
    uint32_t array = v.array_job_id != 0 ? v.array_job_id : v.job_id;
    return std::make_tuple(array, v.array_task_id, v.job_id);
  };
  std::sort(jobs->begin(), jobs->end(),
            [&](const SacctJob* a, const SacctJob* b) { return key(a) < key(b); });
  jobs->erase(std::unique(jobs->begin(), jobs->end()), jobs->end());
}

uint32_t SacctLowestId(const SacctOptions& opt) {
  uint32_t lowest = 0;
  for (size_t i = 0; i < opt.jobs.size(); ++i) {
    if (i == 0 || opt.jobs[i].job_id < lowest) lowest = opt.jobs[i].job_id;
  }
  return lowest;
}

std::vector<const SacctJob*> SelectSacctJobs(const SacctOptions& opt,
                                             const std::vector<SacctJob>& jobs,
                                             const SacctCaller& caller, Time now) {
  const Time from = SacctWindowStart(opt, now);
  const Time to = opt.end.value_or(now);
  std::vector<const SacctJob*> out;
  for (const SacctJob& j : jobs) {
    if (SacctSelects(opt, j.view, caller, from, to)) out.push_back(&j);
  }
  SortSacctJobs(&out);
  return out;
}

std::string StepValue(const std::string& field, const SacctJob& job, const api::StepRecord& step,
                      const std::string& cluster) {
  return StepRowValue(field, job, step, cluster);
}

std::string SacctValue(const std::string& field, const SacctJob& job, bool batch,
                       const std::string& cluster) {
  return batch ? BatchValue(field, job, cluster) : JobValue(field, job, cluster);
}

std::string FitSacct(const std::string& value, int width, SacctKind kind) {
  const int abs_width = std::abs(width);
  if (kind == SacctKind::kNumber || kind == SacctKind::kTime) {
    return Pad(value.empty() ? " " : value, width);  // never cut
  }
  std::string v = value.empty() ? " " : value;
  if (static_cast<int>(v.size()) > abs_width) {
    v = v.substr(0, abs_width);
    if (kind == SacctKind::kText && abs_width > 0) v.back() = '+';
  }
  return Pad(v, width);
}

std::string RenderSacct(const SacctOptions& opt, const std::vector<const SacctJob*>& jobs,
                        const std::string& cluster) {
  const bool parsable = opt.parsable || opt.parsable2;
  auto line = [&](const std::function<std::string(const SacctField&)>& text,
                  const std::function<std::string(const SacctField&)>& fitted) {
    std::string out;
    for (size_t i = 0; i < opt.fields.size(); ++i) {
      const SacctField& f = opt.fields[i];
      if (!parsable) {
        out += fitted(f) + " ";
      } else {
        out += text(f);
        if (!(opt.parsable2 && i + 1 == opt.fields.size())) out += opt.delimiter;
      }
    }
    return out + "\n";
  };
  std::string out;
  if (!opt.noheader) {
    out += line([](const SacctField& f) { return f.name; },
                [](const SacctField& f) {
                  const int w = std::abs(f.width);
                  return Pad(f.name.substr(0, static_cast<size_t>(w)), f.width);
                });
    if (!parsable) {
      out += line([](const SacctField&) { return std::string(); },
                  [](const SacctField& f) { return std::string(std::abs(f.width), '-'); });
    }
  }
  for (const SacctJob* j : jobs) {
    // A -j item with a step shows that step alone; -X shows no step.
    bool job_row = true, batch_row = !opt.allocations && Started(j->view);
    auto step_row = [&](uint32_t step) {
      if (opt.allocations) return false;
      if (opt.jobs.empty()) return true;
      for (const SacctJobId& id : opt.jobs) {
        if (!IdMatches(id, j->view)) continue;
        if (id.step == SacctJobId::kJob) return true;
        if (id.step == SacctJobId::kOtherStep && id.step_id == step) return true;
      }
      return false;
    };
    if (!opt.jobs.empty()) {
      bool by_job = false, by_batch = false;
      for (const SacctJobId& id : opt.jobs) {
        if (!IdMatches(id, j->view)) continue;
        by_job = by_job || id.step == SacctJobId::kJob;
        by_batch = by_batch || id.step == SacctJobId::kBatch;
      }
      job_row = by_job;
      batch_row = batch_row && (by_job || by_batch);
    }
    auto emit = [&](const std::function<std::string(const SacctField&)>& text) {
      out += line(text,
                  [&](const SacctField& f) { return FitSacct(text(f), f.width, KindOf(f.name)); });
    };
    for (bool batch : {false, true}) {
      if (batch ? !batch_row : !job_row) continue;
      emit([&](const SacctField& f) { return SacctValue(f.name, *j, batch, cluster); });
    }
    for (const api::StepRecord& s : j->steps) {
      if (!step_row(s.id)) continue;
      emit([&](const SacctField& f) { return StepRowValue(f.name, *j, s, cluster); });
    }
  }
  return out;
}

json SacctJson(const std::vector<const SacctJob*>& jobs, const std::string& cluster,
               bool allocations) {
  json list = json::array();
  for (const SacctJob* j : jobs) {
    const JobView& v = j->view;
    const bool started = Started(v);
    const Time end = core::IsTerminal(v.state) ? v.end_time : kNoTime;
    json steps = json::array();
    if (started && !allocations) steps.push_back(BatchStepJson(*j));
    for (const api::StepRecord& s : j->steps) {
      if (!allocations) steps.push_back(StepJson(*j, s));
    }
    list.push_back({
        {"account", v.account},
        {"comment",
         {{"administrator", nullptr},
          {"job", v.comment.empty() ? json(nullptr) : json(v.comment)},
          {"system", nullptr}}},
        {"allocation_nodes", started ? v.node_names.size() : 0},
        {"array",
         {{"job_id", v.array_job_id},
          {"limits", {{"max", {{"running", {{"tasks", v.array_max_running}}}}}}},
          {"task", v.array_pending_tasks.empty() ? json(nullptr) : json(v.array_pending_tasks)},
          {"task_id", v.array_task_id >= 0 ? json(v.array_task_id) : json(nullptr)}}},
        {"association",
         {{"account", v.account}, {"cluster", cluster}, {"partition", nullptr}, {"user", v.user}}},
        {"cluster", cluster},
        {"constraints", v.features},
        {"derived_exit_code", ExitJson(0, 0)},
        {"time", JobTimes(v, started ? v.start_time : kNoTime, end, started ? v.run_time : 0)},
        {"exit_code", ExitJson(v.exit_code, v.exit_signal)},
        {"flags", json::array()},
        {"group", v.group},
        {"het", {{"job_id", 0}, {"job_offset", nullptr}}},
        {"job_id", v.job_id},
        {"name", v.name},
        {"mcs", {{"label", ""}}},
        {"nodes", started ? v.nodes : "None assigned"},
        {"partition", v.partition},
        {"priority", v.priority},
        {"qos", v.qos},
        {"required", {{"CPUs", v.num_cpus}, {"memory", v.req_mem_mib}}},
        {"kill_request_user", nullptr},
        {"reservation", {{"id", 0}, {"name", v.reservation}}},
        {"state", {{"current", v.state_text}, {"reason", v.reason}}},
        {"steps", steps},
        {"tres",
         {{"allocated", started ? TresList(v.alloc_tres) : json::array()},
          {"requested", TresList(v.req_tres)}}},
        {"user", v.user},
        {"wckey", {{"wckey", ""}, {"flags", json::array()}}},
        {"working_directory", v.work_dir},
    });
  }
  return {{"meta",
           {{"plugin", {{"type", "openapi/v0.0.38"}, {"name", "Slurm OpenAPI v0.0.38"}}},
            {"Slurm",
             {{"version", {{"major", 22}, {"micro", 0}, {"minor", 5}}},
              {"release", "22.05 (berth)"}}}}},
          {"errors", json::array()},
          {"jobs", list}};
}

std::string SacctMemory(int64_t mib) {
  if (mib <= 0) return "0";
  static const char kUnits[] = {'M', 'G', 'T', 'P', 'E'};
  int unit = 0;
  while (mib % 1024 == 0 && unit < 4) {
    mib /= 1024;
    ++unit;
  }
  return std::to_string(mib) + kUnits[unit];
}

std::string SacctCpuTime(double seconds) {
  if (seconds < 0) seconds = 0;
  int64_t total_ms = static_cast<int64_t>(std::llround(seconds * 1000));
  int64_t secs = total_ms / 1000, ms = total_ms % 1000;
  int64_t days = secs / 86400, hours = secs / 3600 % 24, minutes = secs / 60 % 60, s = secs % 60;
  char buf[64];
  if (days > 0) {
    std::snprintf(buf, sizeof(buf), "%ld-%02ld:%02ld:%02ld", days, hours, minutes, s);
  } else if (hours > 0) {
    std::snprintf(buf, sizeof(buf), "%02ld:%02ld:%02ld", hours, minutes, s);
  } else {
    std::snprintf(buf, sizeof(buf), "%02ld:%02ld.%03ld", minutes, s, ms);
  }
  return buf;
}

}  // namespace berth::slurm

namespace berth::slurm::sacct_internal {

using nlohmann::json;

std::string TimeOrUnknown(Time t) {
  return SlurmTimeText(t);
}

std::string JobIdText(const JobView& v) {
  return v.display_id;
}

std::string FormatElapsed(Duration secs) {
  return FormatTimeLimit(std::max<Duration>(0, secs));
}

json TresList(const std::string& tres) {
  json out = json::array();
  static const std::pair<const char*, int> kIds[] = {
      {"cpu", 1}, {"mem", 2}, {"energy", 3}, {"node", 4}, {"billing", 5}};
  for (const std::string& item : SplitList(tres)) {
    size_t eq = item.find('=');
    if (eq == std::string::npos) continue;
    std::string type = item.substr(0, eq), name;
    int id = 1001;
    for (const auto& [n, i] : kIds) {
      if (type == n) id = i;
    }
    if (size_t slash = type.find('/'); slash != std::string::npos) {
      name = type.substr(slash + 1);
      type = type.substr(0, slash);
    }
    std::string value = item.substr(eq + 1);
    int64_t count = 0;
    std::sscanf(value.c_str(), "%ld", &count);
    if (type == "mem") {
      if (value.back() == 'G') count *= 1024;
      if (value.back() == 'T') count *= 1024 * 1024;
    }
    out.push_back({{"type", type},
                   {"name", name.empty() ? json(nullptr) : json(name)},
                   {"id", id},
                   {"count", count}});
  }
  return out;
}

json ExitJson(int code, int signal) {
  std::string status = signal != 0 ? "SIGNALED" : (code != 0 ? "FAILED" : "SUCCESS");
  json j = {{"status", status}, {"return_code", code}};
  if (signal != 0) j["signal"] = {{"signal_id", signal}, {"name", ""}};
  return j;
}

// A step's "tres" object as Slurm's REST API gives it: nothing under "requested", its peak (and
// mean) memory under "consumed", what it holds under "allocated".
json StepTres(json consumed_max, json consumed_average, json allocated) {
  auto stats = [](json max, json average) {
    return json{{"max", std::move(max)},
                {"min", json::array()},
                {"average", std::move(average)},
                {"total", json::array()}};
  };
  return {{"requested", stats(json::array(), json::array())},
          {"consumed", stats(std::move(consumed_max), std::move(consumed_average))},
          {"allocated", std::move(allocated)}};
}

std::optional<int64_t> Number(std::string_view s) {
  int64_t v = 0;
  auto [p, ec] = std::from_chars(s.data(), s.data() + s.size(), v);
  if (ec != std::errc() || p != s.data() + s.size()) return std::nullopt;
  return v;
}

}  // namespace berth::slurm::sacct_internal
