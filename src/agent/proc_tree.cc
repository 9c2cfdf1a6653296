#include "agent/proc_tree.h"

#include <dirent.h>

#include <charconv>
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

namespace {

using ChildMap = std::multimap<pid_t, pid_t>;  // parent -> child, live processes only

ChildMap ReadChildren() {
  ChildMap children;
  DIR* d = opendir("/proc");
  if (d == nullptr) return children;
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
  return children;
}

// Visits root's descendants in `children`, children before grandchildren; `visit(pid)` says
// whether to go on below that process.
template <typename Visit>
void Walk(const ChildMap& children, pid_t root, Visit visit) {
  std::vector<pid_t> frontier{root};
  while (!frontier.empty()) {
    std::vector<pid_t> next;
    for (pid_t p : frontier) {
      auto [lo, hi] = children.equal_range(p);
      for (auto it = lo; it != hi; ++it) {
        if (visit(it->second)) next.push_back(it->second);
      }
    }
    frontier = std::move(next);
  }
}

std::vector<pid_t> Below(const ChildMap& children, pid_t root) {
  std::vector<pid_t> out;
  Walk(children, root, [&](pid_t p) {
    out.push_back(p);
    return true;
  });
  return out;
}

std::vector<std::string> CmdlineOf(pid_t pid) {
  std::vector<std::string> argv;
  Result<std::string> text = ReadFile("/proc/" + std::to_string(pid) + "/cmdline");
  if (!text.ok()) return argv;
  size_t start = 0;
  while (start < text->size()) {
    size_t end = text->find('\0', start);
    if (end == std::string::npos) end = text->size();
    argv.push_back(text->substr(start, end - start));
    start = end + 1;
  }
  return argv;
}

std::string_view BaseName(std::string_view path) {
  size_t slash = path.rfind('/');
  return slash == std::string_view::npos ? path : path.substr(slash + 1);
}

}  // namespace

std::vector<pid_t> DescendantsOf(pid_t root) {
  return Below(ReadChildren(), root);
}

bool IsStepLauncher(const std::vector<std::string>& argv) {
  if (argv.empty()) return false;
  if (BaseName(argv[0]) == "srun") return true;
  // `berth srun ...`, also through the dynamic loader (a step's launcher in a container:
  // "/.berth/lib/ld-linux-x86-64.so.2 --library-path /.berth/lib /.berth/bin/berth srun ...").
  size_t at = argv.size() >= 5 && argv[1] == "--library-path" ? 3 : 0;
  return argv.size() > at + 1 && BaseName(argv[at]) == "berth" && argv[at + 1] == "srun";
}

int32_t StepIdOfEnviron(std::string_view environ) {
  constexpr std::string_view kKey = "SLURM_STEP_ID=";
  size_t start = 0;
  while (start < environ.size()) {
    size_t end = environ.find('\0', start);
    if (end == std::string_view::npos) end = environ.size();
    std::string_view entry = environ.substr(start, end - start);
    if (entry.substr(0, kKey.size()) == kKey) {
      std::string_view value = entry.substr(kKey.size());
      int32_t id = 0;
      auto [p, ec] = std::from_chars(value.data(), value.data() + value.size(), id);
      return ec == std::errc() && p == value.data() + value.size() && id >= 0 ? id : -1;
    }
    start = end + 1;
  }
  return -1;
}

StepProcesses FindStepProcesses(pid_t root, int32_t step) {
  const ChildMap children = ReadChildren();
  StepProcesses out;
  Walk(children, root, [&](pid_t p) {
    if (!IsStepLauncher(CmdlineOf(p))) {
      out.outside.push_back(p);
      return true;
    }
    std::vector<pid_t> tasks;
    auto [lo, hi] = children.equal_range(p);
    for (auto it = lo; it != hi; ++it) tasks.push_back(it->second);
    if (step >= 0) {
      bool ours = false;
      for (pid_t t : tasks) {
        Result<std::string> env = ReadFile("/proc/" + std::to_string(t) + "/environ");
        ours = ours || (env.ok() && StepIdOfEnviron(*env) == step);
      }
      if (!ours) return false;  // another step's launcher: neither it nor its tasks
    }
    out.outside.push_back(p);
    out.launchers.push_back(p);
    out.tasks.insert(out.tasks.end(), tasks.begin(), tasks.end());
    std::vector<pid_t> below = Below(children, p);
    out.below.insert(out.below.end(), below.begin(), below.end());
    return false;  // a launcher below a launcher belongs to its step
  });
  return out;
}

}  // namespace berth::agent
