#include "slurm/usage_job.h"

#include <algorithm>
#include <nlohmann/json.hpp>

namespace berth::slurm {
namespace {

using nlohmann::json;

bool InList(const std::vector<std::string>& list, const std::string& s) {
  return std::find(list.begin(), list.end(), s) != list.end();
}

}  // namespace

Result<UsageJob> UsageJobFromJson(const json& record, Time now) {
  BERTH_ASSIGN_OR_RETURN(JobView v, JobViewFromJson(record, now));
  UsageJob j;
  j.view = std::move(v);
  if (record.contains("allocation") && record.at("allocation").is_object() &&
      record.at("allocation").contains("nodes") && record.at("allocation").at("nodes").is_array()) {
    for (const json& n : record.at("allocation").at("nodes")) {
      if (!n.is_object()) continue;
      j.alloc_mem_mib += n.value("mem_mib", int64_t{0});
      if (n.contains("gpus") && n.at("gpus").is_array()) {
        j.alloc_gpus += static_cast<int32_t>(n.at("gpus").size());
      }
      if (n.contains("gpu_shares") && n.at("gpu_shares").is_array()) {
        for (const json& g : n.at("gpu_shares")) {
          if (g.is_object()) j.alloc_gpu_milli += g.value("milli", int64_t{0});
        }
      }
    }
  }
  return j;
}

int64_t HeldMemMib(const UsageJob& j) {
  return j.alloc_mem_mib > 0 ? j.alloc_mem_mib : j.view.req_mem_mib;
}

int32_t HeldGpus(const UsageJob& j) {
  return j.alloc_gpus > 0 ? j.alloc_gpus : j.view.gpus;
}

double HeldGpuDevices(const UsageJob& j) {
  int64_t milli = j.alloc_gpu_milli > 0 ? j.alloc_gpu_milli : j.view.gpu_milli;
  return HeldGpus(j) + static_cast<double>(milli) / 1000.0;
}

int32_t HeldCpus(const UsageJob& j) {
  return std::max(1, j.view.num_cpus);
}

int32_t HeldNodes(const UsageJob& j) {
  return j.view.node_names.empty() ? 1 : static_cast<int32_t>(j.view.node_names.size());
}

bool RanAndEnded(const UsageJob& j) {
  const JobView& v = j.view;
  return core::IsTerminal(v.state) && v.start_time != kNoTime && v.end_time != kNoTime &&
         v.end_time >= v.start_time;
}

bool Selected(const UsageSelection& s, const JobView& v) {
  if (!s.accounts.empty() && !InList(s.accounts, v.account)) return false;
  if (!s.users.empty()) return InList(s.users, v.user) || InList(s.users, std::to_string(v.uid));
  return s.all_users || s.caller_uid == 0 || v.uid == s.caller_uid;
}

}  // namespace berth::slurm
