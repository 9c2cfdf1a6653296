// What the agent measures of its node and of each running job for the controller's
// metrics.k8s.io (`kubectl top`; docs/kubernetes.md): cumulative CPU time and the memory working
// set now, read from /proc, sent with every status report as a "usage" event.
//
// A job's processes are its supervisor's descendants (the supervisor is a child subreaper, so
// every process the job starts stays below it until reaped). Its CPU time is what they spent so
// far plus what their reaped children spent (/proc's cutime and cstime: a process that ended
// counts in its parent's, the supervisor's included), so the counter never goes back while the
// attempt runs. Its working set is the resident memory of those processes.
//
// Thread safety: the parser is pure; the samplers read /proc only, from any thread.
#ifndef BERTH_AGENT_JOB_USAGE_H_
#define BERTH_AGENT_JOB_USAGE_H_

#include <sys/types.h>

#include <cstdint>
#include <map>
#include <optional>
#include <string_view>
#include <vector>

namespace berth::agent {

// The fields of /proc/PID/stat the usage needs, CPU times in seconds.
struct ProcStatUsage {
  pid_t ppid = 0;
  double own_cpu_seconds = 0;       // utime + stime
  double children_cpu_seconds = 0;  // cutime + cstime (reaped children)
  int64_t rss_pages = 0;
};
// nullopt when the text is not a stat line (too few fields, or no "(comm)").
std::optional<ProcStatUsage> ParseProcStatUsage(std::string_view stat, double ticks_per_second);

struct TreeUsage {
  double cpu_seconds = 0;
  int64_t memory_bytes = 0;
};
// The usage of the process tree under each root (one /proc scan for all): every descendant's CPU
// time and reaped children's, the root's reaped children's (not its own), and the descendants'
// resident memory. A root that no longer exists is left out.
std::map<pid_t, TreeUsage> ProcessTreeUsage(const std::vector<pid_t>& roots);

// The node: CPU time of every mode but idle and iowait (from /proc/stat), and the memory in use
// (MemTotal - MemAvailable); nullopt when /proc cannot be read.
std::optional<TreeUsage> NodeUsage();

}  // namespace berth::agent

#endif  // BERTH_AGENT_JOB_USAGE_H_
