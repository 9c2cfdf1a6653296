#include "sim/metrics.h"

#include <algorithm>
#include <cmath>
#include <map>
#include <vector>

namespace berth::sim {
namespace {

// Neumaier's compensated sum over long double: a million terms of very different sizes still
// add up to the last bit that a double result can show.
class Sum {
 public:
  void Add(long double x) {
    long double t = sum_ + x;
    if (std::fabs(sum_) >= std::fabs(x)) {
      compensation_ += (sum_ - t) + x;
    } else {
      compensation_ += (x - t) + sum_;
    }
    sum_ = t;
  }
  long double value() const { return sum_ + compensation_; }

 private:
  long double sum_ = 0;
  long double compensation_ = 0;
};

long double BoundedSlowdown(const JobResult& j) {
  const long double wait = static_cast<long double>(j.start - j.submit);
  const long double actual = static_cast<long double>(j.end - j.start);
  return std::max<long double>(1.0L, (wait + actual) / std::max<long double>(actual, 10.0L));
}

// The median of sorted values: the mean of the two middle ones for an even count.
double Median(const std::vector<int64_t>& sorted) {
  const size_t n = sorted.size();
  if (n % 2 == 1) return static_cast<double>(sorted[n / 2]);
  return static_cast<double>((static_cast<long double>(sorted[n / 2 - 1]) + sorted[n / 2]) / 2);
}

// Nearest rank, in integers so that 95% of 20 is exactly rank 19: the smallest value with at
// least `percent`% of the values at or below it.
double NearestRank(const std::vector<int64_t>& sorted, int64_t percent) {
  const int64_t n = static_cast<int64_t>(sorted.size());
  const int64_t rank = std::clamp<int64_t>((percent * n + 99) / 100, 1, n);
  return static_cast<double>(sorted[static_cast<size_t>(rank - 1)]);
}

double Ratio(long double numerator, long double denominator) {
  return denominator > 0 ? static_cast<double>(numerator / denominator) : 0.0;
}

// Jain's index over users of their mean bounded slowdown; jobs without a user are left out.
void ComputeFairness(const std::vector<JobResult>& jobs, Metrics* m) {
  struct PerUser {
    Sum bsld;
    int64_t jobs = 0;
  };
  std::map<std::string, PerUser> users;  // ordered: the same input gives the same sums
  for (const JobResult& j : jobs) {
    if (j.user.empty()) continue;
    PerUser& u = users[j.user];
    u.bsld.Add(BoundedSlowdown(j));
    ++u.jobs;
  }
  if (users.size() < 2) return;
  Sum x, x2;
  for (const auto& [name, u] : users) {
    const long double mean = u.bsld.value() / static_cast<long double>(u.jobs);
    x.Add(mean);
    x2.Add(mean * mean);
  }
  m->has_users = true;
  m->fairness_jain =
      Ratio(x.value() * x.value(), static_cast<long double>(users.size()) * x2.value());
}

}  // namespace

Metrics ComputeMetrics(const std::vector<JobResult>& jobs, int64_t capacity_procs,
                       int64_t capacity_gpus) {
  Metrics m;
  m.jobs = static_cast<int64_t>(jobs.size());
  if (jobs.empty()) return m;

  std::vector<int64_t> waits, jcts;
  waits.reserve(jobs.size());
  Sum wait_sum, bsld_sum, proc_seconds, gpu_seconds, jct_sum;
  Time first_submit = jobs.front().submit;
  Time last_end = jobs.front().end;
  for (const JobResult& j : jobs) {
    const int64_t actual = j.end - j.start;
    waits.push_back(j.start - j.submit);
    wait_sum.Add(static_cast<long double>(j.start - j.submit));
    bsld_sum.Add(BoundedSlowdown(j));
    proc_seconds.Add(static_cast<long double>(j.procs) * actual);
    gpu_seconds.Add((static_cast<long double>(j.gpus) + j.gpu_milli / 1000.0L) * actual);
    first_submit = std::min(first_submit, j.submit);
    last_end = std::max(last_end, j.end);
    if (j.gpus > 0 || j.gpu_milli > 0) m.has_gpus = true;
  }
  const long double n = static_cast<long double>(jobs.size());
  std::sort(waits.begin(), waits.end());
  m.avg_wait_s = static_cast<double>(wait_sum.value() / n);
  m.median_wait_s = Median(waits);
  m.max_wait_s = static_cast<double>(waits.back());
  m.p95_wait_s = NearestRank(waits, 95);
  m.avg_bsld = static_cast<double>(bsld_sum.value() / n);
  const long double makespan = static_cast<long double>(last_end - first_submit);
  m.makespan_s = static_cast<double>(makespan);
  m.utilization = Ratio(proc_seconds.value(), static_cast<long double>(capacity_procs) * makespan);

  if (m.has_gpus) {
    jcts.reserve(jobs.size());
    for (const JobResult& j : jobs) {
      jcts.push_back(j.end - j.submit);
      jct_sum.Add(static_cast<long double>(j.end - j.submit));
    }
    std::sort(jcts.begin(), jcts.end());
    m.avg_jct_s = static_cast<double>(jct_sum.value() / n);
    m.p95_jct_s = NearestRank(jcts, 95);
    m.gpu_utilization =
        Ratio(gpu_seconds.value(), static_cast<long double>(capacity_gpus) * makespan);
  }
  ComputeFairness(jobs, &m);
  return m;
}

}  // namespace berth::sim
