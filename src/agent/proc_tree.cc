#include "agent/proc_tree.h"

#include <dirent.h>

#include <cstdlib>
#include <map>
#include <string>

#include "agent/file_util.h"

namespace berth::agent {

pid_t ParentFromStat(std::string_view stat, char* state) {
  // "PID (COMM) S PPID ...": COMM ends at the last ')'.
  size_t close = stat.rfind(')');
  if (close == std::string_view::npos || close + 4 >= stat.size()) return -1;
  std::string rest(stat.substr(close + 2));
  if (state != nullptr) *state = rest[0];
  char* end = nullptr;
  long ppid = std::strtol(rest.c_str() + 1, &end, 10);
  if (end == rest.c_str() + 1) return -1;
  return static_cast<pid_t>(ppid);
}

std::vector<pid_t> DescendantsOf(pid_t root) {
  std::multimap<pid_t, pid_t> children;  // parent -> child
  DIR* d = opendir("/proc");
  if (d == nullptr) return {};
  while (dirent* e = readdir(d)) {
    char* end = nullptr;
    long pid = std::strtol(e->d_name, &end, 10);
    if (end == e->d_name || *end != '\0') continue;
    Result<std::string> stat = ReadFile("/proc/" + std::string(e->d_name) + "/stat");
    if (!stat.ok()) continue;  // exited meanwhile
    char state = 0;
    pid_t ppid = ParentFromStat(*stat, &state);
    if (ppid > 0 && state != 'Z' && state != 'X') children.emplace(ppid, static_cast<pid_t>(pid));
  }
  closedir(d);
  std::vector<pid_t> out;
  std::vector<pid_t> frontier{root};
  while (!frontier.empty()) {
    std::vector<pid_t> next;
    for (pid_t p : frontier) {
      auto [lo, hi] = children.equal_range(p);
      for (auto it = lo; it != hi; ++it) {
        out.push_back(it->second);
        next.push_back(it->second);
      }
    }
    frontier = std::move(next);
  }
  return out;
}

}  // namespace berth::agent
