// `berth report usage`: what users and accounts asked for and what they used over a period
// [start, end), in the manner of sreport's AccountUtilizationByUser, and the jobs that left the
// most of their allocation idle. docs/report.md gives the formulas; in short:
//
//  * Only the part of a job's run inside the period counts (sreport's rule): `h` = hours of
//    [start_time, end_time) inside [start, end). Jobs that ended are counted; running ones are
//    not (their usage is not final).
//  * CPU-hours = allocated CPUs x h; used = the job's CPU time x (h / its whole run).
//  * Memory: GiB-hours = allocated memory x h; peak GiB-hours = the job's memory high-water mark
//    x h (an upper bound of what it used: the peak held all along).
//  * GPU-hours = allocated GPUs x h; used = GPU-hours x mean utilisation, summed over the jobs
//    whose utilisation was measured; GPU-hours of jobs without a measurement are counted apart,
//    and a row with none measured has an unknown utilisation, not 0.
//  * Over-provisioned jobs rank by idle resource-hours in CPU-hour equivalents:
//    idle CPU-hours + kIdleGibHourWeight x idle GiB-hours + kIdleGpuHourWeight x idle GPU-hours
//    (unmeasured GPUs count as busy: no accusation without evidence).
//
// Thread safety: all functions are pure (times print in the local time zone).
#ifndef BERTH_SLURM_USAGE_REPORT_H_
#define BERTH_SLURM_USAGE_REPORT_H_

#include <cstdint>
#include <nlohmann/json_fwd.hpp>
#include <optional>
#include <string>
#include <vector>

#include "common/time.h"
#include "slurm/report_format.h"
#include "slurm/usage_job.h"

namespace berth::slurm {

// The weights of the over-provisioning score: a GiB-hour weighs as Slurm's usual billing weight
// for memory (Mem=0.25G: 4 GiB per CPU), a GPU-hour as 8 CPU-hours (a GPU node's CPUs per GPU).
inline constexpr double kIdleGibHourWeight = 0.25;
inline constexpr double kIdleGpuHourWeight = 8.0;
inline constexpr int kDefaultTopJobs = 10;

struct UsageFigures {
  int64_t jobs = 0;
  double cpu_hours = 0;           // allocated
  double cpu_hours_used = 0;      // CPU time inside the period
  double mem_gib_hours = 0;       // allocated
  double mem_peak_gib_hours = 0;  // memory peak x hours
  double gpu_hours = 0;           // allocated
  double gpu_hours_measured = 0;  // the part of gpu_hours whose utilisation is known
  double gpu_hours_used = 0;      // measured GPU-hours x utilisation

  void Add(const UsageFigures& o);
};

// used / allocated; nullopt when nothing was allocated (or, for GPUs, nothing measured).
std::optional<double> CpuEfficiency(const UsageFigures& f);
std::optional<double> MemEfficiency(const UsageFigures& f);
std::optional<double> GpuUtilisation(const UsageFigures& f);

struct UsageRow {
  std::string account;  // "" = the job named none
  std::string user;     // "" = the account's total
  UsageFigures figures;
};

struct WastedJob {
  std::string job_id;  // "123", "123_4"
  std::string user, account, name, state;
  double hours = 0;  // of its run inside the period
  UsageFigures figures;
  double idle_cpu_hours = 0, idle_mem_gib_hours = 0, idle_gpu_hours = 0;
  double score = 0;  // CPU-hour equivalents, see the file comment
};

struct UsageReport {
  Time start = 0, end = 0;
  std::vector<UsageRow> rows;  // by account, the account's total first, then its users by name
  UsageFigures total;
  std::vector<WastedJob> top;  // highest score first (ties: by job id); only scores > 0
};

// REQUIRES: start < end. Jobs that did not run, or ran outside the period, are left out. `top`:
// how many over-provisioned jobs to list (0: none).
UsageReport ComputeUsage(const std::vector<UsageJob>& jobs, Time start, Time end, int top);

// The two tables, their cells formatted for `format` (see report_format.h).
ReportTable UsageRowsTable(const UsageReport& r, ReportFormat format);
ReportTable TopJobsTable(const UsageReport& r, ReportFormat format);

// The whole report in a text format: kTable has a title line above each table; kCsv and
// kParsable print the rows, then (when there are top jobs) an empty line and the jobs' table.
// `noheader` drops titles and header lines.
std::string RenderUsage(const UsageReport& r, ReportFormat format, bool noheader);

// {"start", "end", "rows": [...], "total": {...}, "top_jobs": [...]} (docs/report.md).
nlohmann::json UsageJson(const UsageReport& r);

}  // namespace berth::slurm

#endif  // BERTH_SLURM_USAGE_REPORT_H_
