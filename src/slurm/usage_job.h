// UsageJob: one finished job as the usage review sees it (`berth report usage|advice`, and seff's
// suggestions): the Slurm view of the job plus what its allocation held over all its nodes, which
// the view keeps only as text. docs/report.md describes the figures made from it.
//
// Thread safety: all functions are pure.
#ifndef BERTH_SLURM_USAGE_JOB_H_
#define BERTH_SLURM_USAGE_JOB_H_

#include <cstdint>
#include <nlohmann/json_fwd.hpp>
#include <string>
#include <vector>

#include "common/status.h"
#include "common/time.h"
#include "slurm/job_view.h"

namespace berth::slurm {

struct UsageJob {
  JobView view;
  int64_t alloc_mem_mib = 0;    // memory of the allocation over all nodes; 0: the request's
  int32_t alloc_gpus = 0;       // GPUs of the allocation over all nodes; 0: the request's
  int64_t alloc_gpu_milli = 0;  // GPU shares of the allocation (thousandths); 0: the request's
};

// Builds a UsageJob from a record of GET /v1/accounting/jobs (or GET /v1/jobs/ID). Errors as
// JobViewFromJson.
Result<UsageJob> UsageJobFromJson(const nlohmann::json& record, Time now);

// What the job held: the allocation's figures, else the request's (view.num_cpus is already the
// allocation's once the job started).
int64_t HeldMemMib(const UsageJob& j);
int32_t HeldGpus(const UsageJob& j);
// Whole GPUs and shares together, in devices (a 250-thousandths share is 0.25).
double HeldGpuDevices(const UsageJob& j);
int32_t HeldCpus(const UsageJob& j);   // at least 1
int32_t HeldNodes(const UsageJob& j);  // at least 1

// A job ended and ran: a terminal state with a start and an end time.
bool RanAndEnded(const UsageJob& j);

// Who asks, and which jobs they see. As sacct: root sees every user's jobs, others their own,
// unless `users` names users (names or uids) or `all_users` is set (reading accounting is open to
// everyone, docs/api.md). `accounts` narrows further (empty: any).
struct UsageSelection {
  uint32_t caller_uid = 0;
  std::vector<std::string> users;
  std::vector<std::string> accounts;
  bool all_users = false;
};
bool Selected(const UsageSelection& s, const JobView& v);

}  // namespace berth::slurm

#endif  // BERTH_SLURM_USAGE_JOB_H_
