// sreport-style usage over a period, and the most over-provisioned jobs (docs/report.md).
#include "slurm/usage_report.h"

#include <algorithm>
#include <map>
#include <nlohmann/json.hpp>
#include <utility>

namespace berth::slurm {
namespace {

using nlohmann::json;

constexpr double kSecondsPerHour = 3600.0;
constexpr double kMibPerGib = 1024.0;

// A job's figures for the part of its run inside [start, end); nullopt when it did not run
// there. A job that ran zero seconds counts when it started in [start, end] (the end included,
// so that a job that failed this second is in a period that ends now).
std::optional<UsageFigures> JobFigures(const UsageJob& j, Time start, Time end) {
  if (!RanAndEnded(j)) return std::nullopt;
  const JobView& v = j.view;
  const Time from = std::max(v.start_time, start);
  const Time to = std::min(v.end_time, end);
  const Duration run = v.end_time - v.start_time;
  const bool inside = to > from || (run == 0 && v.start_time >= start && v.start_time <= end);
  if (!inside) return std::nullopt;
  const Duration overlap = std::max<Duration>(0, to - from);
  const double h = static_cast<double>(overlap) / kSecondsPerHour;
  UsageFigures f;
  f.jobs = 1;
  f.cpu_hours = HeldCpus(j) * h;
  if (run > 0) {
    f.cpu_hours_used =
        v.cpu_seconds * static_cast<double>(overlap) / static_cast<double>(run) / kSecondsPerHour;
  }
  f.mem_gib_hours = static_cast<double>(HeldMemMib(j)) / kMibPerGib * h;
  f.mem_peak_gib_hours = static_cast<double>(std::max<int64_t>(0, v.max_rss_mib)) / kMibPerGib * h;
  f.gpu_hours = HeldGpuDevices(j) * h;
  if (v.gpu_utilization >= 0) {
    f.gpu_hours_measured = f.gpu_hours;
    f.gpu_hours_used = f.gpu_hours * std::min(100.0, v.gpu_utilization) / 100.0;
  }
  return f;
}

std::optional<double> Ratio(double used, double of) {
  if (of <= 0) return std::nullopt;
  return used / of;
}

WastedJob Wasted(const UsageJob& j, const UsageFigures& f) {
  WastedJob w;
  w.job_id = j.view.display_id.empty() ? std::to_string(j.view.job_id) : j.view.display_id;
  w.user = j.view.user;
  w.account = j.view.account;
  w.name = j.view.name;
  w.state = j.view.state_text;
  w.hours = HeldCpus(j) > 0 ? f.cpu_hours / HeldCpus(j) : 0;
  w.figures = f;
  w.idle_cpu_hours = std::max(0.0, f.cpu_hours - f.cpu_hours_used);
  w.idle_mem_gib_hours = std::max(0.0, f.mem_gib_hours - f.mem_peak_gib_hours);
  w.idle_gpu_hours = std::max(0.0, f.gpu_hours_measured - f.gpu_hours_used);
  w.score = w.idle_cpu_hours + kIdleGibHourWeight * w.idle_mem_gib_hours +
            kIdleGpuHourWeight * w.idle_gpu_hours;
  return w;
}

std::string AccountText(const std::string& account) {
  return account.empty() ? "(none)" : account;
}

// Efficiencies as cells: empty when nothing was allocated; GPUs "unknown" when allocated but
// never measured.
std::string EffCell(std::optional<double> eff, ReportFormat format) {
  return eff ? Percent(*eff, format) : "";
}

std::string GpuCell(const UsageFigures& f, ReportFormat format) {
  if (f.gpu_hours <= 0) return "";
  std::optional<double> u = GpuUtilisation(f);
  return u ? Percent(*u, format) : "unknown";
}

json OptJson(std::optional<double> fraction) {
  return fraction ? json(RoundForJson(*fraction * 100.0)) : json(nullptr);
}

json FiguresJson(const UsageFigures& f) {
  return {{"jobs", f.jobs},
          {"cpu_hours", RoundForJson(f.cpu_hours)},
          {"cpu_hours_used", RoundForJson(f.cpu_hours_used)},
          {"cpu_efficiency", OptJson(CpuEfficiency(f))},
          {"mem_gib_hours", RoundForJson(f.mem_gib_hours)},
          {"mem_peak_gib_hours", RoundForJson(f.mem_peak_gib_hours)},
          {"mem_efficiency", OptJson(MemEfficiency(f))},
          {"gpu_hours", RoundForJson(f.gpu_hours)},
          {"gpu_hours_used", RoundForJson(f.gpu_hours_used)},
          {"gpu_hours_unmeasured", RoundForJson(f.gpu_hours - f.gpu_hours_measured)},
          {"gpu_utilization", OptJson(GpuUtilisation(f))}};
}

}  // namespace

void UsageFigures::Add(const UsageFigures& o) {
  jobs += o.jobs;
  cpu_hours += o.cpu_hours;
  cpu_hours_used += o.cpu_hours_used;
  mem_gib_hours += o.mem_gib_hours;
  mem_peak_gib_hours += o.mem_peak_gib_hours;
  gpu_hours += o.gpu_hours;
  gpu_hours_measured += o.gpu_hours_measured;
  gpu_hours_used += o.gpu_hours_used;
}

std::optional<double> CpuEfficiency(const UsageFigures& f) {
  return Ratio(f.cpu_hours_used, f.cpu_hours);
}

std::optional<double> MemEfficiency(const UsageFigures& f) {
  return Ratio(f.mem_peak_gib_hours, f.mem_gib_hours);
}

std::optional<double> GpuUtilisation(const UsageFigures& f) {
  return Ratio(f.gpu_hours_used, f.gpu_hours_measured);
}

UsageReport ComputeUsage(const std::vector<UsageJob>& jobs, Time start, Time end, int top) {
  UsageReport r;
  r.start = start;
  r.end = end;
  std::map<std::pair<std::string, std::string>, UsageFigures> by_user;
  std::map<std::string, UsageFigures> by_account;
  std::vector<WastedJob> wasted;
  for (const UsageJob& j : jobs) {
    std::optional<UsageFigures> f = JobFigures(j, start, end);
    if (!f) continue;
    by_user[{j.view.account, j.view.user}].Add(*f);
    by_account[j.view.account].Add(*f);
    r.total.Add(*f);
    if (top > 0) {
      WastedJob w = Wasted(j, *f);
      if (w.score > 0) wasted.push_back(std::move(w));
    }
  }
  for (const auto& [account, f] : by_account) {
    r.rows.push_back({account, "", f});
    for (auto it = by_user.lower_bound({account, ""}); it != by_user.end(); ++it) {
      if (it->first.first != account) break;
      r.rows.push_back({account, it->first.second, it->second});
    }
  }
  auto numeric_id = [](const WastedJob& w) {
    return std::make_pair(w.job_id.size(), w.job_id);  // "99" before "100"
  };
  std::sort(wasted.begin(), wasted.end(), [&](const WastedJob& a, const WastedJob& b) {
    if (a.score != b.score) return a.score > b.score;
    return numeric_id(a) < numeric_id(b);
  });
  if (static_cast<int>(wasted.size()) > top) wasted.resize(static_cast<size_t>(top));
  r.top = std::move(wasted);
  return r;
}

ReportTable UsageRowsTable(const UsageReport& r, ReportFormat format) {
  ReportTable t;
  t.header = {"Account",
              "User",
              "Jobs",
              "CPUHours",
              "CPUHoursUsed",
              "CPUEff",
              "MemGiBHours",
              "MemPeakGiBHours",
              "MemEff",
              "GPUHours",
              "GPUHoursUsed",
              "GPUUtil",
              "GPUHoursUnmeasured"};
  t.right = {false, false, true, true, true, true, true, true, true, true, true, true, true};
  for (const UsageRow& row : r.rows) {
    const UsageFigures& f = row.figures;
    t.rows.push_back({AccountText(row.account), row.user, std::to_string(f.jobs),
                      FixedTwo(f.cpu_hours), FixedTwo(f.cpu_hours_used),
                      EffCell(CpuEfficiency(f), format), FixedTwo(f.mem_gib_hours),
                      FixedTwo(f.mem_peak_gib_hours), EffCell(MemEfficiency(f), format),
                      FixedTwo(f.gpu_hours), FixedTwo(f.gpu_hours_used), GpuCell(f, format),
                      FixedTwo(f.gpu_hours - f.gpu_hours_measured)});
  }
  return t;
}

ReportTable TopJobsTable(const UsageReport& r, ReportFormat format) {
  ReportTable t;
  t.header = {"JobID",           "User",         "Account", "JobName", "State",
              "Hours",           "CPUEff",       "MemEff",  "GPUUtil", "IdleCPUHours",
              "IdleMemGiBHours", "IdleGPUHours", "Score"};
  t.right = {false, false, false, false, false, true, true, true, true, true, true, true, true};
  for (const WastedJob& w : r.top) {
    const UsageFigures& f = w.figures;
    t.rows.push_back({w.job_id, w.user, AccountText(w.account), w.name, w.state, FixedTwo(w.hours),
                      EffCell(CpuEfficiency(f), format), EffCell(MemEfficiency(f), format),
                      GpuCell(f, format), FixedTwo(w.idle_cpu_hours),
                      FixedTwo(w.idle_mem_gib_hours), FixedTwo(w.idle_gpu_hours),
                      FixedTwo(w.score)});
  }
  return t;
}

std::string RenderUsage(const UsageReport& r, ReportFormat format, bool noheader) {
  std::string out;
  const bool titles = format == ReportFormat::kTable && !noheader;
  if (titles) {
    out += "Usage from " + SlurmTimeText(r.start) + " to " + SlurmTimeText(r.end) + " (" +
           FixedTwo(static_cast<double>(r.end - r.start) / kSecondsPerHour) +
           " hours); each job counts for the part of its run inside the period\n";
  }
  out += RenderReportTable(UsageRowsTable(r, format), format, noheader);
  if (r.top.empty()) return out;
  out += "\n";
  if (titles) {
    out += "Most over-provisioned jobs (score = idle CPU-hours + " + FixedTwo(kIdleGibHourWeight) +
           " x idle GiB-hours + " + FixedTwo(kIdleGpuHourWeight) + " x idle GPU-hours)\n";
  }
  out += RenderReportTable(TopJobsTable(r, format), format, noheader);
  return out;
}

json UsageJson(const UsageReport& r) {
  json rows = json::array();
  for (const UsageRow& row : r.rows) {
    json o = {{"account", row.account}, {"user", row.user}};
    o.update(FiguresJson(row.figures));
    rows.push_back(std::move(o));
  }
  json top = json::array();
  for (const WastedJob& w : r.top) {
    json o = {{"job_id", w.job_id}, {"user", w.user},   {"account", w.account},
              {"name", w.name},     {"state", w.state}, {"hours", RoundForJson(w.hours)}};
    o.update(FiguresJson(w.figures));
    o["idle_cpu_hours"] = RoundForJson(w.idle_cpu_hours);
    o["idle_mem_gib_hours"] = RoundForJson(w.idle_mem_gib_hours);
    o["idle_gpu_hours"] = RoundForJson(w.idle_gpu_hours);
    o["score"] = RoundForJson(w.score);
    top.push_back(std::move(o));
  }
  return {{"start", r.start},
          {"end", r.end},
          {"rows", std::move(rows)},
          {"total", FiguresJson(r.total)},
          {"top_jobs", std::move(top)}};
}

}  // namespace berth::slurm
