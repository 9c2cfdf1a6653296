// The node's and jobs' usage from /proc (job_usage.h).
#include "agent/job_usage.h"

#include <dirent.h>
#include <unistd.h>

#include <charconv>
#include <set>
#include <string>

#include "agent/file_util.h"
#include "agent/node_metrics.h"

namespace berth::agent {

std::optional<ProcStatUsage> ParseProcStatUsage(std::string_view stat, double ticks_per_second) {
  // "PID (comm) S PPID ...": the command may hold spaces and parentheses; the last ')' ends it.
  const size_t close = stat.rfind(')');
  if (close == std::string_view::npos || stat.find('(') == std::string_view::npos) {
    return std::nullopt;
  }
  std::vector<std::string_view> f;  // f[0] is field 3 (state)
  std::string_view rest = stat.substr(close + 1);
  while (!rest.empty()) {
    const size_t start = rest.find_first_not_of(" \n");
    if (start == std::string_view::npos) break;
    rest.remove_prefix(start);
    const size_t end = std::min(rest.find_first_of(" \n"), rest.size());
    f.push_back(rest.substr(0, end));
    rest.remove_prefix(end);
  }
  if (f.size() < 22) return std::nullopt;
  auto number = [&](size_t field, int64_t* out) {
    std::string_view t = f[field - 3];
    auto [p, ec] = std::from_chars(t.data(), t.data() + t.size(), *out);
    return ec == std::errc() && p == t.data() + t.size();
  };
  int64_t ppid, utime, stime, cutime, cstime, rss;
  if (!number(4, &ppid) || !number(14, &utime) || !number(15, &stime) || !number(16, &cutime) ||
      !number(17, &cstime) || !number(24, &rss) || ticks_per_second <= 0) {
    return std::nullopt;
  }
  ProcStatUsage u;
  u.ppid = static_cast<pid_t>(ppid);
  u.own_cpu_seconds = static_cast<double>(utime + stime) / ticks_per_second;
  u.children_cpu_seconds = static_cast<double>(cutime + cstime) / ticks_per_second;
  u.rss_pages = std::max<int64_t>(0, rss);
  return u;
}

std::map<pid_t, TreeUsage> ProcessTreeUsage(const std::vector<pid_t>& roots) {
  std::map<pid_t, TreeUsage> out;
  if (roots.empty()) return out;
  const double ticks = static_cast<double>(sysconf(_SC_CLK_TCK));
  const int64_t page = sysconf(_SC_PAGESIZE);
  std::map<pid_t, ProcStatUsage> procs;
  std::map<pid_t, std::vector<pid_t>> children;
  if (DIR* d = opendir("/proc")) {
    while (dirent* e = readdir(d)) {
      pid_t pid = 0;
      std::string_view name = e->d_name;
      auto [p, ec] = std::from_chars(name.data(), name.data() + name.size(), pid);
      if (ec != std::errc() || p != name.data() + name.size()) continue;
      Result<std::string> stat = ReadFile("/proc/" + std::string(name) + "/stat");
      if (!stat.ok()) continue;
      if (std::optional<ProcStatUsage> u = ParseProcStatUsage(*stat, ticks)) {
        procs[pid] = *u;
        children[u->ppid].push_back(pid);
      }
    }
    closedir(d);
  }
  for (pid_t root : roots) {
    auto r = procs.find(root);
    if (r == procs.end()) continue;
    TreeUsage& t = out[root];
    t.cpu_seconds = r->second.children_cpu_seconds;
    std::vector<pid_t> stack = children[root];
    std::set<pid_t> seen;
    while (!stack.empty()) {
      pid_t pid = stack.back();
      stack.pop_back();
      if (!seen.insert(pid).second) continue;
      const ProcStatUsage& u = procs[pid];
      t.cpu_seconds += u.own_cpu_seconds + u.children_cpu_seconds;
      t.memory_bytes += u.rss_pages * page;
      for (pid_t c : children[pid]) stack.push_back(c);
    }
  }
  return out;
}

std::optional<TreeUsage> NodeUsage() {
  Result<std::string> stat = ReadFile("/proc/stat");
  Result<std::string> meminfo = ReadFile("/proc/meminfo");
  if (!stat.ok() || !meminfo.ok()) return std::nullopt;
  Result<std::vector<std::pair<std::string, double>>> modes =
      ParseProcStatCpu(*stat, static_cast<double>(sysconf(_SC_CLK_TCK)));
  Result<NodeMemory> memory = ParseMeminfo(*meminfo);
  if (!modes.ok() || !memory.ok()) return std::nullopt;
  TreeUsage u;
  for (const auto& [mode, seconds] : *modes) {
    if (mode != "idle" && mode != "iowait") u.cpu_seconds += seconds;
  }
  u.memory_bytes = memory->total_bytes - memory->available_bytes;
  return u;
}

}  // namespace berth::agent
