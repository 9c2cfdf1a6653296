// Right-sizing advice (`berth report advice`, and seff's "Suggestion:" lines for one job): for
// memory, time limit, CPUs and GPUs, how much of what they asked a set of finished jobs used, and
// a request that would have served every one of them. docs/report.md gives the rules; in short:
//
//  * The evidence: the largest and the median use, the median request, the highest fraction of
//    its request a job used, and the job with the largest use.
//  * A suggestion covers the largest use with headroom (memory x1.2, time x1.5, CPUs x1.25,
//    GPUs x1.2), rounded up to what a user would type (128M steps below 1G, whole G above; time
//    to 5 minutes below an hour, 30 minutes below a day, hours above).
//  * "Ask for less" only when the suggestion is at most half of the median request
//    (kWasteFactor): for one job, it used less than about 40% of its memory or CPUs, or a third
//    of its time limit. GPUs: when no job kept its GPUs 25% busy (kIdleGpuPercent).
//  * A job that ran OUT_OF_MEMORY (or TIMEOUT) forbids advising less memory (time), and the
//    advice is to ask for more.
//  * Which jobs count: memory, every job that ended with a measured peak; time and CPUs,
//    COMPLETED jobs only (CPUs: those that ran at least a minute); GPUs, jobs with GPUs whose
//    utilisation was measured.
//
// Thread safety: all functions are pure.
#ifndef BERTH_SLURM_ADVICE_H_
#define BERTH_SLURM_ADVICE_H_

#include <cstdint>
#include <nlohmann/json_fwd.hpp>
#include <string>
#include <vector>

#include "common/time.h"
#include "slurm/report_format.h"
#include "slurm/usage_job.h"

namespace berth::slurm {

inline constexpr double kMemoryHeadroom = 1.2;
inline constexpr double kTimeHeadroom = 1.5;
inline constexpr double kCpuHeadroom = 1.25;
inline constexpr double kGpuHeadroom = 1.2;
inline constexpr int64_t kWasteFactor = 2;
inline constexpr double kIdleGpuPercent = 25.0;
inline constexpr Duration kMinCpuRunSeconds = 60;

enum class AdviceResource { kMemory, kTime, kCpus, kGpus };
enum class AdviceKind {
  kNone,  // the requests fit, or there is no evidence
  kLess,  // ask for less: `suggestion` would have served every job
  kMore,  // jobs ran out (OUT_OF_MEMORY, TIMEOUT): ask for more
};

// "memory", "time", "CPUs", "GPUs".
std::string AdviceResourceName(AdviceResource r);

// The evidence and the advice for one resource. Amounts are in the resource's unit: MiB
// (per node, or per CPU when `per_cpu`), seconds, CPUs busy/asked, GPUs busy/asked.
struct ResourceAdvice {
  AdviceResource resource = AdviceResource::kMemory;
  AdviceKind kind = AdviceKind::kNone;
  int jobs = 0;          // jobs whose use is measured and counts (see the file comment)
  int unmeasured = 0;    // jobs that would count but have no measurement (memory, GPUs)
  int ran_out = 0;       // OUT_OF_MEMORY (memory) or TIMEOUT (time) jobs
  bool per_cpu = false;  // memory: every job asked per CPU (--mem-per-cpu)
  double max_used = 0, median_used = 0;
  double median_asked = 0, max_asked = 0;
  double max_fraction = 0;     // the highest used / asked of one job
  double median_fraction = 0;  // the median of used / asked
  std::string max_job;         // the job with the largest use ("123", "123_4")
  double ran_out_asked = 0;    // kMore: the largest request of the jobs that ran out
  double suggestion = 0;       // kLess, kMore (memory): the request to make; 0 = none
  std::string option;          // "--mem=4G", "--mem-per-cpu=2G", "--time=00:20:00",
                               // "--cpus-per-task=2", "--ntasks=2", "--gpus=1", "--time", ""
};

// Advice for each resource, in the order memory, time, CPUs, GPUs, over the jobs that ran and
// ended (others are left out).
std::vector<ResourceAdvice> ComputeAdvice(const std::vector<UsageJob>& jobs);

// The sentence of a piece of advice about a set of jobs, without a trailing period or newline
// ("memory: 40 jobs used at most 11% of the memory they asked for (...): --mem=8G would have
// served all of them"); "" for kNone.
std::string AdviceSentence(const ResourceAdvice& a);

// The same for one job, as seff prints it after "Suggestion: " ("memory: asked 64G, peaked at
// 3.1G: --mem=4G would do"); "" for kNone. `job` is the job the advice was computed from.
std::string SingleJobSentence(const ResourceAdvice& a, const UsageJob& job);

// The jobs the advice is about: those of `user` (a name or a uid) that ran and ended between
// start and end, both included (as sacct's -S/-E: a job that ended this second is in a period
// that ends now), the `last` most recent of them by end time (0: all), latest first.
std::vector<UsageJob> AdviceJobs(const std::vector<UsageJob>& jobs, const std::string& user,
                                 Time start, Time end, int last);

// The advice report: who, the period, how many jobs, and each resource's evidence and advice.
struct AdviceReport {
  std::string user;
  Time start = 0, end = 0;
  int jobs = 0;
  std::vector<ResourceAdvice> resources;
};
AdviceReport MakeAdviceReport(const std::vector<UsageJob>& jobs, const std::string& user,
                              Time start, Time end, int last);

// kTable: a title line, the evidence table (one row per resource), then one "Advice: " line per
// piece of advice (or "No advice: ..."). kCsv/kParsable: the evidence table alone, with the
// advice in its last column. `noheader` drops the title and the header lines.
std::string RenderAdvice(const AdviceReport& r, ReportFormat format, bool noheader);
ReportTable AdviceTable(const AdviceReport& r, ReportFormat format);
nlohmann::json AdviceJson(const AdviceReport& r);

// Sizes as a user types them: memory rounded up to 128M steps below 1G and whole G above (at
// least 128M), "--mem" values ("512M", "8G"); time limits rounded up to 5 minutes below an hour,
// 30 minutes below a day, hours above (at least 5 minutes).
int64_t RoundUpMemMib(double mib);
std::string MemOptionValue(int64_t mib);
Duration RoundUpTimeLimit(double seconds);

}  // namespace berth::slurm

#endif  // BERTH_SLURM_ADVICE_H_
