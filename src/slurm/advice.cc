// Right-sizing advice from finished jobs (docs/report.md).
#include "slurm/advice.h"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <nlohmann/json.hpp>

#include "common/slurm_time.h"
#include "slurm/efficiency.h"

namespace berth::slurm {
namespace {

using nlohmann::json;

// One job's use and request of a resource, in the resource's unit.
struct Sample {
  double used = 0;
  double asked = 0;
  std::string job;
};

std::string JobIdOf(const UsageJob& j) {
  return j.view.display_id.empty() ? std::to_string(j.view.job_id) : j.view.display_id;
}

double Median(std::vector<double> v) {
  if (v.empty()) return 0;
  std::sort(v.begin(), v.end());
  const size_t n = v.size();
  return n % 2 == 1 ? v[n / 2] : (v[n / 2 - 1] + v[n / 2]) / 2.0;
}

// Fills the evidence of `a` from the samples (REQUIRES: every sample asked > 0).
void Summarize(const std::vector<Sample>& samples, ResourceAdvice& a) {
  a.jobs = static_cast<int>(samples.size());
  std::vector<double> used, asked, fraction;
  for (const Sample& s : samples) {
    used.push_back(s.used);
    asked.push_back(s.asked);
    fraction.push_back(s.used / s.asked);
    if (a.max_job.empty() || s.used > a.max_used) {
      a.max_used = s.used;
      a.max_job = s.job;
    }
    a.max_asked = std::max(a.max_asked, s.asked);
    a.max_fraction = std::max(a.max_fraction, s.used / s.asked);
  }
  a.median_used = Median(used);
  a.median_asked = Median(asked);
  a.median_fraction = Median(fraction);
}

// "Ask for less" when the suggestion is at most 1/kWasteFactor of the median request.
bool WorthLess(const ResourceAdvice& a) {
  return a.jobs > 0 && a.suggestion * static_cast<double>(kWasteFactor) <= a.median_asked;
}

ResourceAdvice MemoryAdvice(const std::vector<UsageJob>& jobs) {
  ResourceAdvice a;
  a.resource = AdviceResource::kMemory;
  std::vector<Sample> samples;
  bool all_per_cpu = true;
  for (const UsageJob& j : jobs) {
    if (HeldMemMib(j) > 0 && j.view.max_rss_mib > 0) all_per_cpu &= j.view.min_memory_cpu_mib > 0;
  }
  for (const UsageJob& j : jobs) {
    const int64_t per_node = HeldMemMib(j) / HeldNodes(j);
    if (per_node <= 0) continue;
    if (j.view.state == core::JobState::kOutOfMemory) {
      ++a.ran_out;
      a.ran_out_asked = std::max(a.ran_out_asked, static_cast<double>(per_node));
      continue;
    }
    if (j.view.max_rss_mib <= 0) {
      ++a.unmeasured;
      continue;
    }
    if (all_per_cpu) {
      samples.push_back({static_cast<double>(j.view.max_rss_mib) / HeldCpus(j),
                         static_cast<double>(j.view.min_memory_cpu_mib), JobIdOf(j)});
    } else {
      samples.push_back(
          {static_cast<double>(j.view.max_rss_mib), static_cast<double>(per_node), JobIdOf(j)});
    }
  }
  a.per_cpu = all_per_cpu && !samples.empty();
  Summarize(samples, a);
  if (a.ran_out > 0) {
    a.kind = AdviceKind::kMore;
    a.suggestion = static_cast<double>(RoundUpMemMib(a.ran_out_asked * 2.0));
    a.option = "--mem=" + MemOptionValue(static_cast<int64_t>(a.suggestion));
    return a;
  }
  if (a.jobs == 0) return a;
  a.suggestion = static_cast<double>(RoundUpMemMib(a.max_used * kMemoryHeadroom));
  if (!WorthLess(a)) return a;
  a.kind = AdviceKind::kLess;
  a.option = std::string(a.per_cpu ? "--mem-per-cpu=" : "--mem=") +
             MemOptionValue(static_cast<int64_t>(a.suggestion));
  return a;
}

ResourceAdvice TimeAdvice(const std::vector<UsageJob>& jobs) {
  ResourceAdvice a;
  a.resource = AdviceResource::kTime;
  std::vector<Sample> samples;
  for (const UsageJob& j : jobs) {
    const JobView& v = j.view;
    if (v.time_limit >= kInfinite || v.time_limit <= 0) continue;
    if (v.state == core::JobState::kTimeout) {
      ++a.ran_out;
      a.ran_out_asked = std::max(a.ran_out_asked, static_cast<double>(v.time_limit));
      continue;
    }
    const Duration run = v.end_time - v.start_time;
    if (v.state != core::JobState::kCompleted || run <= 0) continue;
    samples.push_back({static_cast<double>(run), static_cast<double>(v.time_limit), JobIdOf(j)});
  }
  Summarize(samples, a);
  if (a.ran_out > 0) {
    a.kind = AdviceKind::kMore;
    a.option = "--time";
    return a;
  }
  if (a.jobs == 0) return a;
  a.suggestion = static_cast<double>(RoundUpTimeLimit(a.max_used * kTimeHeadroom));
  if (!WorthLess(a)) return a;
  a.kind = AdviceKind::kLess;
  a.option = "--time=" + FormatTimeLimit(static_cast<Duration>(a.suggestion));
  return a;
}

ResourceAdvice CpuAdvice(const std::vector<UsageJob>& jobs) {
  ResourceAdvice a;
  a.resource = AdviceResource::kCpus;
  std::vector<Sample> samples;
  bool one_task = true, one_cpu_per_task = true;
  for (const UsageJob& j : jobs) {
    const JobView& v = j.view;
    const Duration run = v.end_time - v.start_time;
    if (v.state != core::JobState::kCompleted || run < kMinCpuRunSeconds) continue;
    samples.push_back(
        {v.cpu_seconds / static_cast<double>(run), static_cast<double>(HeldCpus(j)), JobIdOf(j)});
    one_task &= v.num_tasks <= 1;
    one_cpu_per_task &= v.cpus_per_task <= 1;
  }
  Summarize(samples, a);
  if (a.jobs == 0) return a;
  a.suggestion = std::max(1.0, std::ceil(a.max_used * kCpuHeadroom));
  if (!WorthLess(a)) return a;
  a.kind = AdviceKind::kLess;
  const std::string n = std::to_string(static_cast<int64_t>(a.suggestion));
  if (one_task) {
    a.option = "--cpus-per-task=" + n;
  } else if (one_cpu_per_task) {
    a.option = "--ntasks=" + n;
  }
  return a;
}

ResourceAdvice GpuAdvice(const std::vector<UsageJob>& jobs) {
  ResourceAdvice a;
  a.resource = AdviceResource::kGpus;
  std::vector<Sample> samples;
  for (const UsageJob& j : jobs) {
    const int32_t gpus = HeldGpus(j);
    if (gpus <= 0) continue;
    if (j.view.gpu_utilization < 0) {
      ++a.unmeasured;
      continue;
    }
    const double busy = std::min(100.0, j.view.gpu_utilization) / 100.0;
    samples.push_back({gpus * busy, static_cast<double>(gpus), JobIdOf(j)});
  }
  Summarize(samples, a);
  if (a.jobs == 0 || a.max_fraction * 100.0 >= kIdleGpuPercent) return a;
  a.kind = AdviceKind::kLess;
  a.suggestion = std::max(1.0, std::ceil(a.max_used * kGpuHeadroom));
  if (a.suggestion < a.median_asked) {
    a.option = "--gpus=" + std::to_string(static_cast<int64_t>(a.suggestion));
  } else {
    a.suggestion = 0;  // fewer GPUs would not do: they wait on something else
  }
  return a;
}

std::string Printf(const char* fmt, double x) {
  char buf[128];
  std::snprintf(buf, sizeof(buf), fmt, x);
  return buf;
}

std::string Pct(double fraction) {
  const double p = fraction * 100.0;
  if (p > 0 && p < 1) return "<1%";
  return Printf("%.0f%%", p);
}

std::string JobsText(int n) {
  return std::to_string(n) + (n == 1 ? " job" : " jobs");
}

// A memory amount of the evidence: "3.1G", "1000M per CPU".
std::string MemText(const ResourceAdvice& a, double mib) {
  return ShortMemory(static_cast<int64_t>(std::ceil(mib))) + (a.per_cpu ? " per CPU" : "");
}

std::string TimeText(double seconds) {
  return FormatTimeLimit(static_cast<Duration>(std::llround(seconds)));
}

std::string Served(const ResourceAdvice& a) {
  return a.jobs == 1 ? " would have served it" : " would have served all of them";
}

std::string MemorySentence(const ResourceAdvice& a) {
  if (a.kind == AdviceKind::kMore) {
    const int total = a.jobs + a.ran_out + a.unmeasured;
    const std::string who = total == 1 ? "1 job ran out of memory (it asked "
                                       : std::to_string(a.ran_out) + " of " + JobsText(total) +
                                             " ran out of memory (asking up to ";
    return "memory: " + who + ShortMemory(static_cast<int64_t>(a.ran_out_asked)) + "): try " +
           a.option;
  }
  const std::string what = a.per_cpu ? "the memory per CPU" : "the memory";
  std::string s = "memory: ";
  if (a.jobs == 1) {
    s += "1 job used " + Pct(a.max_fraction) + " of " + what + " it asked for (peak " +
         MemText(a, a.max_used) + " in job " + a.max_job + "; request " +
         MemText(a, a.median_asked) + ")";
  } else {
    s += JobsText(a.jobs) + " used at most " + Pct(a.max_fraction) + " of " + what +
         " they asked for (peak " + MemText(a, a.max_used) + " in job " + a.max_job +
         ", median peak " + MemText(a, a.median_used) + "; median request " +
         MemText(a, a.median_asked) + ")";
  }
  return s + ": " + a.option + Served(a) + ", and smaller requests start sooner";
}

std::string TimeSentence(const ResourceAdvice& a) {
  if (a.kind == AdviceKind::kMore) {
    const int total = a.jobs + a.ran_out;
    if (total == 1) {
      return "time: 1 job reached its time limit of " + TimeText(a.ran_out_asked) +
             ": ask for more with --time";
    }
    return "time: " + std::to_string(a.ran_out) + " of " + JobsText(total) +
           " reached their time limit (up to " + TimeText(a.ran_out_asked) +
           "): ask for more with --time";
  }
  std::string s = "time: ";
  if (a.jobs == 1) {
    s += "1 job ran " + Pct(a.max_fraction) + " of its time limit (" + TimeText(a.max_used) +
         " of " + TimeText(a.median_asked) + ", job " + a.max_job + ")";
  } else {
    s += JobsText(a.jobs) + " ran at most " + Pct(a.max_fraction) +
         " of their time limit (longest " + TimeText(a.max_used) + " in job " + a.max_job +
         ", median " + TimeText(a.median_used) + "; median limit " + TimeText(a.median_asked) + ")";
  }
  return s + ": " + a.option + Served(a) + ", and shorter limits start sooner (backfill)";
}

std::string CpuSentence(const ResourceAdvice& a) {
  const std::string n = Printf("%.0f", a.suggestion);
  const std::string ask = a.option.empty() ? n + " CPUs" : a.option;
  std::string s = "CPUs: ";
  if (a.jobs == 1) {
    s += "1 job kept " + Pct(a.max_fraction) + " of its " + Printf("%.0f", a.median_asked) +
         " CPUs busy (" + Printf("%.1f", a.max_used) + " on average, job " + a.max_job + ")";
  } else {
    s += JobsText(a.jobs) + " kept at most " + Pct(a.max_fraction) +
         " of their CPUs busy (at most " + Printf("%.1f", a.max_used) + " busy in job " +
         a.max_job + ", median " + Printf("%.1f", a.median_used) + "; median request " +
         Printf("%g", a.median_asked) + ")";
  }
  return s + ": " + ask + Served(a);
}

std::string GpuSentence(const ResourceAdvice& a) {
  std::string s = "GPUs: ";
  if (a.jobs == 1) {
    s += "1 job kept its " + Printf("%g", a.median_asked) +
         (a.median_asked == 1 ? " GPU " : " GPUs ") + Pct(a.max_fraction) + " busy (job " +
         a.max_job + ")";
  } else {
    s += JobsText(a.jobs) + " kept their GPUs at most " + Pct(a.max_fraction) + " busy (median " +
         Pct(a.median_fraction) + ", job " + a.max_job + " the busiest; median request " +
         Printf("%g", a.median_asked) + ")";
  }
  const std::string they = a.jobs == 1 ? "it waits" : "they wait";
  if (!a.option.empty()) {
    s += ": " + a.option + Served(a) + ", or " + they + " on something else (data, CPU work)";
  } else {
    s += ": " + they + " on something else (data, CPU work), or could share a GPU";
  }
  if (a.unmeasured > 0) {
    s += " (" + JobsText(a.unmeasured) + " with GPUs had no utilisation measured)";
  }
  return s;
}

// The evidence cells of one resource, in its unit.
std::string Amount(const ResourceAdvice& a, double x) {
  switch (a.resource) {
    case AdviceResource::kMemory:
      return ShortMemory(static_cast<int64_t>(std::ceil(x))) + (a.per_cpu ? "/CPU" : "");
    case AdviceResource::kTime:
      return TimeText(x);
    case AdviceResource::kCpus:
    case AdviceResource::kGpus:
      return Printf("%.2f", x);
  }
  return "";
}

std::string Verdict(const ResourceAdvice& a) {
  switch (a.kind) {
    case AdviceKind::kLess:
      return "ask less";
    case AdviceKind::kMore:
      return "ask more";
    case AdviceKind::kNone:
      return a.jobs > 0 ? "fits" : "no data";
  }
  return "";
}

std::string Unit(const ResourceAdvice& a) {
  switch (a.resource) {
    case AdviceResource::kMemory:
      return a.per_cpu ? "MiB per CPU" : "MiB per node";
    case AdviceResource::kTime:
      return "seconds";
    case AdviceResource::kCpus:
      return "CPUs";
    case AdviceResource::kGpus:
      return "GPUs";
  }
  return "";
}

std::string KindName(AdviceKind k) {
  return k == AdviceKind::kLess ? "less" : (k == AdviceKind::kMore ? "more" : "none");
}

}  // namespace

std::string AdviceResourceName(AdviceResource r) {
  switch (r) {
    case AdviceResource::kMemory:
      return "memory";
    case AdviceResource::kTime:
      return "time";
    case AdviceResource::kCpus:
      return "CPUs";
    case AdviceResource::kGpus:
      return "GPUs";
  }
  return "";
}

int64_t RoundUpMemMib(double mib) {
  const int64_t m = static_cast<int64_t>(std::ceil(mib));
  if (m <= 1024) return std::max<int64_t>(128, (m + 127) / 128 * 128);
  return (m + 1023) / 1024 * 1024;
}

std::string MemOptionValue(int64_t mib) {
  return mib % 1024 == 0 ? std::to_string(mib / 1024) + "G" : std::to_string(mib) + "M";
}

Duration RoundUpTimeLimit(double seconds) {
  const int64_t s = static_cast<int64_t>(std::ceil(seconds));
  const int64_t step = s < 3600 ? 300 : (s < 86400 ? 1800 : 3600);
  return std::max<int64_t>(300, (s + step - 1) / step * step);
}

std::vector<ResourceAdvice> ComputeAdvice(const std::vector<UsageJob>& jobs) {
  std::vector<UsageJob> ended;
  for (const UsageJob& j : jobs) {
    if (RanAndEnded(j)) ended.push_back(j);
  }
  return {MemoryAdvice(ended), TimeAdvice(ended), CpuAdvice(ended), GpuAdvice(ended)};
}

std::string AdviceSentence(const ResourceAdvice& a) {
  if (a.kind == AdviceKind::kNone) return "";
  switch (a.resource) {
    case AdviceResource::kMemory:
      return MemorySentence(a);
    case AdviceResource::kTime:
      return TimeSentence(a);
    case AdviceResource::kCpus:
      return CpuSentence(a);
    case AdviceResource::kGpus:
      return GpuSentence(a);
  }
  return "";
}

std::string SingleJobSentence(const ResourceAdvice& a, const UsageJob& job) {
  if (a.kind == AdviceKind::kNone) return "";
  const JobView& v = job.view;
  switch (a.resource) {
    case AdviceResource::kMemory:
      if (a.kind == AdviceKind::kMore) {
        return "memory: the job ran out of its " +
               ShortMemory(static_cast<int64_t>(a.ran_out_asked)) + ": try " + a.option;
      }
      if (a.per_cpu) {
        return "memory: asked " + ShortMemory(static_cast<int64_t>(a.median_asked)) +
               " per CPU, peaked at " + ShortMemory(static_cast<int64_t>(std::ceil(a.max_used))) +
               " per CPU: " + a.option + " would do";
      }
      return "memory: asked " + ShortMemory(static_cast<int64_t>(a.median_asked)) + ", peaked at " +
             ShortMemory(static_cast<int64_t>(a.max_used)) + ": " + a.option + " would do";
    case AdviceResource::kTime:
      if (a.kind == AdviceKind::kMore) {
        return "time: the job reached its limit of " + TimeText(a.ran_out_asked) +
               ": ask for more with --time";
      }
      return "time: asked " + TimeText(a.median_asked) + ", ran " + TimeText(a.max_used) + ": " +
             a.option + " would do";
    case AdviceResource::kCpus: {
      const int64_t n = static_cast<int64_t>(a.suggestion);
      return "CPUs: asked " + Printf("%.0f", a.median_asked) + " cores, " +
             Printf("%.1f", a.max_used) + " busy on average: " + std::to_string(n) +
             (n == 1 ? " core" : " cores") + " would do";
    }
    case AdviceResource::kGpus: {
      const int32_t gpus = HeldGpus(job);
      return "GPUs: " + std::to_string(gpus) + (gpus == 1 ? " GPU was " : " GPUs were ") +
             Printf("%.0f", v.gpu_utilization) +
             "% busy on average: " + (gpus > 1 ? "fewer GPUs would do, or " : "") +
             "the job waits on something else";
    }
  }
  return "";
}

std::vector<UsageJob> AdviceJobs(const std::vector<UsageJob>& jobs, const std::string& user,
                                 Time start, Time end, int last) {
  std::vector<UsageJob> out;
  for (const UsageJob& j : jobs) {
    if (j.view.user != user && std::to_string(j.view.uid) != user) continue;
    if (!RanAndEnded(j)) continue;
    if (j.view.end_time < start || j.view.end_time > end) continue;
    out.push_back(j);
  }
  std::stable_sort(out.begin(), out.end(), [](const UsageJob& a, const UsageJob& b) {
    if (a.view.end_time != b.view.end_time) return a.view.end_time > b.view.end_time;
    return a.view.job_id > b.view.job_id;
  });
  if (last > 0 && static_cast<int>(out.size()) > last) out.resize(static_cast<size_t>(last));
  return out;
}

AdviceReport MakeAdviceReport(const std::vector<UsageJob>& jobs, const std::string& user,
                              Time start, Time end, int last) {
  AdviceReport r;
  r.user = user;
  r.start = start;
  r.end = end;
  std::vector<UsageJob> mine = AdviceJobs(jobs, user, start, end, last);
  r.jobs = static_cast<int>(mine.size());
  r.resources = ComputeAdvice(mine);
  return r;
}

ReportTable AdviceTable(const AdviceReport& r, ReportFormat format) {
  ReportTable t;
  t.header = {"Resource",   "Jobs",       "Unmeasured",    "RanOut",  "MedianAsked", "MaxUsed",
              "MedianUsed", "MaxUsedPct", "MedianUsedPct", "Verdict", "Suggestion"};
  t.right = {false, true, true, true, true, true, true, true, true, false, false};
  const bool sentences = format != ReportFormat::kTable;
  if (sentences) {
    t.header.push_back("Advice");
    t.right.push_back(false);
  }
  for (const ResourceAdvice& a : r.resources) {
    const bool any = a.jobs > 0;
    std::vector<std::string> row = {AdviceResourceName(a.resource),
                                    std::to_string(a.jobs),
                                    std::to_string(a.unmeasured),
                                    std::to_string(a.ran_out),
                                    any ? Amount(a, a.median_asked) : "",
                                    any ? Amount(a, a.max_used) : "",
                                    any ? Amount(a, a.median_used) : "",
                                    any ? Percent(a.max_fraction, format) : "",
                                    any ? Percent(a.median_fraction, format) : "",
                                    Verdict(a),
                                    a.option};
    if (sentences) row.push_back(AdviceSentence(a));
    t.rows.push_back(std::move(row));
  }
  return t;
}

std::string RenderAdvice(const AdviceReport& r, ReportFormat format, bool noheader) {
  if (format != ReportFormat::kTable) {
    return RenderReportTable(AdviceTable(r, format), format, noheader);
  }
  std::string out;
  if (!noheader) {
    out += "Advice for " + r.user + " from " + JobsText(r.jobs) + " that ended between " +
           SlurmTimeText(r.start) + " and " + SlurmTimeText(r.end) + "\n";
  }
  if (r.jobs == 0) return out;
  out += RenderReportTable(AdviceTable(r, format), format, noheader);
  std::string advice;
  for (const ResourceAdvice& a : r.resources) {
    if (a.kind != AdviceKind::kNone) advice += "Advice: " + AdviceSentence(a) + "\n";
  }
  if (advice.empty()) advice = "No advice: the requests fit what the jobs used.\n";
  return out + advice;
}

json AdviceJson(const AdviceReport& r) {
  json resources = json::array();
  for (const ResourceAdvice& a : r.resources) {
    const std::string sentence = AdviceSentence(a);
    resources.push_back({{"resource", AdviceResourceName(a.resource)},
                         {"advice", KindName(a.kind)},
                         {"unit", Unit(a)},
                         {"jobs", a.jobs},
                         {"unmeasured", a.unmeasured},
                         {"ran_out", a.ran_out},
                         {"max_used", RoundForJson(a.max_used)},
                         {"median_used", RoundForJson(a.median_used)},
                         {"median_asked", RoundForJson(a.median_asked)},
                         {"max_asked", RoundForJson(a.max_asked)},
                         {"max_used_percent", RoundForJson(a.max_fraction * 100.0)},
                         {"median_used_percent", RoundForJson(a.median_fraction * 100.0)},
                         {"max_job", a.max_job.empty() ? json(nullptr) : json(a.max_job)},
                         {"suggestion", a.suggestion > 0 ? json(a.suggestion) : json(nullptr)},
                         {"option", a.option.empty() ? json(nullptr) : json(a.option)},
                         {"text", sentence.empty() ? json(nullptr) : json(sentence)}});
  }
  return {{"user", r.user},
          {"start", r.start},
          {"end", r.end},
          {"jobs", r.jobs},
          {"resources", std::move(resources)}};
}

}  // namespace berth::slurm
