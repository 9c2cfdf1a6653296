#include "slurm/step_usage.h"

#include <sys/wait.h>

#include <algorithm>
#include <csignal>

namespace berth::slurm {

bool EndsStep(int sig) {
  return sig == SIGINT || sig == SIGTERM || sig == SIGHUP || sig == SIGQUIT;
}

void FinishStepRecord(const std::vector<TaskUsage>& local, const std::vector<TaskEnd>& ends,
                      bool ending_signal_passed, const std::string& node, Time end,
                      api::StepRecord* s, const std::vector<NodeUsage>& remote) {
  int worst = 0;
  bool failed = false, killed = false;
  for (const TaskEnd& e : ends) {
    worst = std::max(worst, e.wait_status);
    if (WIFSIGNALED(e.wait_status)) killed = true;
    if (!WIFEXITED(e.wait_status) || WEXITSTATUS(e.wait_status) != 0) failed = true;
  }
  s->exit_code = WIFEXITED(worst) ? WEXITSTATUS(worst) : 0;
  s->term_signal = WIFSIGNALED(worst) ? WTERMSIG(worst) : 0;
  if (killed && ending_signal_passed) {
    s->state = "CANCELLED";
  } else {
    s->state = failed ? "FAILED" : "COMPLETED";
  }
  s->end = std::max(end, s->start);
  s->max_rss_kib = 0;
  s->ave_rss_kib = 0;
  s->user_cpu_seconds = 0;
  s->system_cpu_seconds = 0;
  s->min_cpu_seconds = 0;
  s->max_rss_task = 0;
  s->min_cpu_task = 0;
  s->max_rss_node.clear();
  // The other nodes' parts first: the batch node's own tasks win a tie, as they come later.
  bool any = false;
  for (const NodeUsage& u : remote) {
    s->user_cpu_seconds += u.user_seconds;
    s->system_cpu_seconds += u.system_seconds;
    if (!any || u.max_rss_kib > s->max_rss_kib) {
      s->max_rss_kib = u.max_rss_kib;
      s->max_rss_task = u.first_task;
      s->max_rss_node = u.node;
    }
    any = true;
  }
  if (local.empty()) return;
  int64_t rss_sum = 0;
  bool first = true;
  int64_t local_max = -1;
  for (const TaskUsage& t : local) {
    rss_sum += t.max_rss_kib;
    if (t.max_rss_kib > local_max && (!any || t.max_rss_kib >= s->max_rss_kib)) {
      s->max_rss_kib = t.max_rss_kib;
      s->max_rss_task = t.task_id;
      s->max_rss_node = node;
    }
    local_max = std::max(local_max, t.max_rss_kib);
    const double cpu = t.user_seconds + t.system_seconds;
    if (first || cpu < s->min_cpu_seconds) {
      s->min_cpu_seconds = cpu;
      s->min_cpu_task = t.task_id;
    }
    s->user_cpu_seconds += t.user_seconds;
    s->system_cpu_seconds += t.system_seconds;
    first = false;
  }
  s->ave_rss_kib = rss_sum / static_cast<int64_t>(local.size());
}

}  // namespace berth::slurm
