// Test fixtures for the usage review: a builder of finished jobs
// (UsageJobBuilder(101).User("alice").Cpus(4).MemMib(8192).Ran(t0, t1).Obj()) and a guard that
// makes times print in UTC. Tests only.
#ifndef BERTH_SLURM_USAGE_TEST_UTIL_H_
#define BERTH_SLURM_USAGE_TEST_UTIL_H_

#include <stdlib.h>
#include <time.h>

#include <optional>
#include <string>

#include "slurm/usage_job.h"

namespace berth::slurm {

class UsageJobBuilder {
 public:
  // A COMPLETED job of alice's (uid 1000), account "physics", on n1 with 1 CPU and 1024 MiB, a
  // time limit of a day, that has not been given a run yet (call Ran).
  explicit UsageJobBuilder(uint32_t id) {
    JobView& v = j_.view;
    v.job_id = id;
    v.display_id = std::to_string(id);
    v.name = "job" + std::to_string(id);
    v.user = "alice";
    v.uid = 1000;
    v.account = "physics";
    v.node_names = {"n1"};
    v.time_limit = 86400;
    v.max_rss_mib = 0;
    v.gpu_utilization = -1;
    State(core::JobState::kCompleted);
    Cpus(1);
    MemMib(1024);
  }
  UsageJobBuilder& User(const std::string& name, uint32_t uid) {
    j_.view.user = name;
    j_.view.uid = uid;
    return *this;
  }
  UsageJobBuilder& Account(const std::string& a) {
    j_.view.account = a;
    return *this;
  }
  UsageJobBuilder& State(core::JobState s) {
    j_.view.state = s;
    j_.view.state_text = std::string(core::JobStateName(s));
    return *this;
  }
  // One task of n CPUs (-c n).
  UsageJobBuilder& Cpus(int32_t n) {
    j_.view.num_cpus = n;
    j_.view.num_tasks = 1;
    j_.view.cpus_per_task = n;
    return *this;
  }
  // n tasks of one CPU (-n n).
  UsageJobBuilder& Tasks(int32_t n) {
    j_.view.num_cpus = n;
    j_.view.num_tasks = n;
    j_.view.cpus_per_task = 1;
    return *this;
  }
  // --mem (per node, one node).
  UsageJobBuilder& MemMib(int64_t mib) {
    j_.view.req_mem_mib = mib;
    j_.view.min_memory_node_mib = mib;
    j_.view.min_memory_cpu_mib = -1;
    j_.alloc_mem_mib = mib;
    return *this;
  }
  // --mem-per-cpu (call after Cpus).
  UsageJobBuilder& MemPerCpuMib(int64_t mib) {
    j_.view.req_mem_mib = mib * j_.view.num_cpus;
    j_.view.min_memory_node_mib = -1;
    j_.view.min_memory_cpu_mib = mib;
    j_.alloc_mem_mib = j_.view.req_mem_mib;
    return *this;
  }
  UsageJobBuilder& Gpus(int32_t n, double utilization) {
    j_.view.gpus = n;
    j_.alloc_gpus = n;
    j_.view.gpu_utilization = utilization;
    return *this;
  }
  UsageJobBuilder& TimeLimit(Duration d) {
    j_.view.time_limit = d;
    return *this;
  }
  UsageJobBuilder& Ran(Time start, Time end) {
    j_.view.start_time = start;
    j_.view.end_time = end;
    j_.view.run_time = end - start;
    j_.view.cpu_time = j_.view.run_time * j_.view.num_cpus;
    return *this;
  }
  UsageJobBuilder& Running(Time start, Time now) {
    State(core::JobState::kRunning);
    j_.view.start_time = start;
    j_.view.end_time = start + j_.view.time_limit;
    j_.view.run_time = now - start;
    return *this;
  }
  UsageJobBuilder& Used(double cpu_seconds, int64_t max_rss_mib) {
    j_.view.cpu_seconds = cpu_seconds;
    j_.view.max_rss_mib = max_rss_mib;
    return *this;
  }
  UsageJob Obj() const { return j_; }

 private:
  UsageJob j_;
};

// Times print in UTC while it lives.
class UtcZone {
 public:
  UtcZone() {
    const char* tz = getenv("TZ");
    if (tz != nullptr) saved_ = tz;
    setenv("TZ", "UTC", 1);
    tzset();
  }
  ~UtcZone() {
    if (saved_) {
      setenv("TZ", saved_->c_str(), 1);
    } else {
      unsetenv("TZ");
    }
    tzset();
  }
  UtcZone(const UtcZone&) = delete;
  UtcZone& operator=(const UtcZone&) = delete;

 private:
  std::optional<std::string> saved_;
};

}  // namespace berth::slurm

#endif  // BERTH_SLURM_USAGE_TEST_UTIL_H_
