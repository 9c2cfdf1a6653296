// Linux CPU lists ("0-3,8,10-11", the format of cpuset.cpus and /sys/.../online) and the choice
// of CPUs for a job on its node.
//
// Thread safety: all functions are pure.
#ifndef BERTH_AGENT_CPU_LIST_H_
#define BERTH_AGENT_CPU_LIST_H_

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "common/status.h"

namespace berth::agent {

// "0-3,8" -> {0, 1, 2, 3, 8}: sorted, without duplicates. Whitespace around the list (the
// newline of a sysfs file) is ignored; "" is the empty list. kInvalidArgument otherwise.
Result<std::vector<int32_t>> ParseCpuList(std::string_view text);

// {0, 1, 2, 3, 8} -> "0-3,8". The input need not be sorted; duplicates are dropped.
std::string FormatCpuList(std::vector<int32_t> cpus);

// Picks `count` CPUs for a new job from `online`, given the CPUs that other running jobs on the
// node hold (`taken`, one entry per job and CPU, so a CPU shared by two jobs appears twice).
// Free CPUs come first, lowest ids first; when there are not enough free ones (the node is
// oversubscribed, or stale groups remain), the least shared ones fill up the rest, so that a job
// always gets `count` CPUs, or every online CPU when count exceeds them. Returns a sorted list.
// REQUIRES: count >= 1.
std::vector<int32_t> ChooseCpus(const std::vector<int32_t>& online,
                                const std::vector<int32_t>& taken, int32_t count);

}  // namespace berth::agent

#endif  // BERTH_AGENT_CPU_LIST_H_
