// The Job controller's decisions (job_controller.h); the stored form is in
// job_controller_codec.cc.
#include "k8s/job_controller.h"

#include <algorithm>
#include <cstdlib>

#include "k8s/codec.h"
#include "k8s/pods.h"

namespace berth::k8s {
namespace {

bool HasCondition(const JobStatus& status, const std::string& type) {
  return std::any_of(status.conditions.begin(), status.conditions.end(),
                     [&](const JobCondition& c) { return c.type == type && c.status == "True"; });
}

// Sets condition `type`; its transition time changes only when its status does.
void SetCondition(JobStatus* status, const std::string& type, bool value, const std::string& reason,
                  const std::string& message, int64_t now) {
  const std::string s = value ? "True" : "False";
  const std::string time = k8s::Rfc3339(now);
  for (JobCondition& c : status->conditions) {
    if (c.type != type) continue;
    if (c.status != s) c.last_transition_time = time;
    c.status = s;
    c.reason = reason;
    c.message = message;
    c.last_probe_time = time;
    return;
  }
  status->conditions.push_back({type, s, reason, message, time, time});
}

// The index of the podFailurePolicy rule that matches a failed pod; nullopt for none.
std::optional<size_t> MatchingRule(const std::vector<PodFailureRule>& rules, const JobPod& pod) {
  const int exit_code = pod.exit_code.value_or(1);
  const std::string state = pod.state.value_or("");
  const bool disrupted = state == "NODE_FAIL" || state == "PREEMPTED";
  for (size_t i = 0; i < rules.size(); ++i) {
    const PodFailureRule& r = rules[i];
    bool match = r.on_disruption && disrupted;
    if (r.on_exit_codes) {
      const bool in =
          std::find(r.exit_codes.begin(), r.exit_codes.end(), exit_code) != r.exit_codes.end();
      match = exit_code != 0 && (r.exit_codes_in ? in : !in);
    }
    if (match) return i;
  }
  return std::nullopt;
}

// The pods counted by their states.
struct PodCounts {
  int64_t active = 0, running = 0, succeeded = 0, failed = 0;
  std::set<int> done_indexes, active_indexes;
  std::vector<size_t> active_pods;  // positions in JobRecord::pods
  std::string policy_failure;       // the message of the first pod that matched a FailJob rule
};

// Decides (once) what the pod failure policy does with a failed pod; returns the action.
std::string FailureAction(const JobRecord& job, JobPod* pod) {
  if (!pod->policy && job.spec.pod_failure_policy) {
    const std::optional<size_t> rule = MatchingRule(*job.spec.pod_failure_policy, *pod);
    const std::string action = rule ? (*job.spec.pod_failure_policy)[*rule].action : "Count";
    pod->policy = action;
    if (action == "FailJob") {
      pod->policy_message = "Container for pod " + job.ns + "/" + pod->name +
                            " failed with exit code " + std::to_string(pod->exit_code.value_or(1)) +
                            " matching FailJob rule at index " + std::to_string(*rule);
    }
  }
  return pod->policy.value_or("Count");
}

PodCounts CountPods(JobRecord* job) {
  PodCounts n;
  for (JobPod& p : job->pods) {
    const std::string state = p.state.value_or("PENDING");
    if (state == "COMPLETED") {
      ++n.succeeded;
      if (p.index >= 0) n.done_indexes.insert(p.index);
    } else if (k8s::PodPhase(state) == "Failed") {
      // A pod berth stopped for the Job itself (suspend, deadline) is not a failure; the pod
      // failure policy may ignore it or fail the Job at once.
      if (p.stopped) continue;
      const std::string action = FailureAction(*job, &p);
      if (action == "Ignore") continue;
      ++n.failed;
      if (action == "FailJob" && n.policy_failure.empty()) {
        n.policy_failure = p.policy_message.value_or("");
      }
    } else {
      ++n.active;
      if (state == "RUNNING") ++n.running;
      if (p.index >= 0) n.active_indexes.insert(p.index);
      n.active_pods.push_back(static_cast<size_t>(&p - job->pods.data()));
    }
  }
  return n;
}

// Stops the active pods: the Job is suspended or has ended.
void StopActive(PodCounts* n, JobActions* out) {
  for (size_t i : n->active_pods) {
    out->job.pods[i].stopped = true;
    out->stop.push_back(out->job.pods[i].id);
  }
  n->active = 0;
}

// The successPolicy rule met by the succeeded indexes, as its message; empty for none.
std::string SuccessRuleMet(const JobSpec& spec, const std::set<int>& done) {
  if (!spec.indexed || !spec.success_policy) return "";
  const std::vector<SuccessRule>& rules = *spec.success_policy;
  for (size_t i = 0; i < rules.size(); ++i) {
    const SuccessRule& r = rules[i];
    std::set<int> want;
    const bool all = !r.succeeded_indexes.has_value();
    if (!all) want = ParseIndexRanges(*r.succeeded_indexes).value_or(std::set<int>{});
    int64_t have = 0;
    bool every = true;
    for (int idx : want) {
      if (done.count(idx)) {
        ++have;
      } else {
        every = false;
      }
    }
    if (all) have = static_cast<int64_t>(done.size());
    const bool met =
        r.succeeded_count ? have >= *r.succeeded_count : (!all && every && !want.empty());
    if (met) return "Matched rules at index " + std::to_string(i);
  }
  return "";
}

void Finish(JobActions* out, const std::string& type, bool succeeded, const std::string& reason,
            const std::string& message, int64_t now) {
  JobRecord& j = out->job;
  SetCondition(&j.status, succeeded ? "SuccessCriteriaMet" : "FailureTarget", true, reason, message,
               now);
  SetCondition(&j.status, type, true, reason, message, now);
  if (succeeded) j.status.completion_time = k8s::Rfc3339(now);
  j.finished_at = now;
}

// New pods: up to parallelism at once, never more than the completions still missing.
std::vector<int> PodsToCreate(const JobSpec& spec, const PodCounts& n, int64_t completions) {
  std::vector<int> indexes;
  if (spec.indexed) {
    for (int i = 0;
         i < completions && n.active + static_cast<int64_t>(indexes.size()) < spec.parallelism;
         ++i) {
      if (!n.done_indexes.count(i) && !n.active_indexes.count(i)) indexes.push_back(i);
    }
    return indexes;
  }
  const int64_t want = !spec.completions
                           ? (n.succeeded > 0 ? 0 : spec.parallelism - n.active)
                           : std::min(spec.parallelism, completions - n.succeeded) - n.active;
  for (int64_t i = 0; i < want; ++i) indexes.push_back(-1);
  return indexes;
}

// Why the running Job fails now, as (reason, message); empty reason for none.
std::pair<std::string, std::string> FailureOf(const JobRecord& j, const PodCounts& n, int64_t now) {
  const int64_t started = k8s::ParseRfc3339(j.status.start_time.value_or("")).value_or(now);
  if (!n.policy_failure.empty()) return {"PodFailurePolicy", n.policy_failure};
  if (j.spec.active_deadline_seconds && started + *j.spec.active_deadline_seconds <= now) {
    return {"DeadlineExceeded", "Job was active longer than specified deadline"};
  }
  if (n.failed > j.spec.backoff_limit) {
    return {"BackoffLimitExceeded", "Job has reached the specified backoff limit"};
  }
  return {};
}

void ReconcileRunning(PodCounts* n, JobActions* out, int64_t now) {
  JobRecord& j = out->job;
  if (HasCondition(j.status, "Suspended")) {
    SetCondition(&j.status, "Suspended", false, "JobResumed", "Job resumed", now);
    out->events.push_back({"Normal", "Resumed", "Job resumed"});
  }
  if (!j.status.start_time) j.status.start_time = k8s::Rfc3339(now);
  // completions null: a work queue (done when a pod succeeded and none is left running).
  const int64_t completions =
      j.spec.completions ? *j.spec.completions : std::max<int64_t>(1, n->succeeded);
  // A FailJob rule wins over the success policy, which wins over the deadline and the backoff
  // limit.
  auto [fail_reason, fail_message] = FailureOf(j, *n, now);
  std::string success_rule;
  if (fail_reason != "PodFailurePolicy") success_rule = SuccessRuleMet(j.spec, n->done_indexes);
  if (!success_rule.empty()) fail_reason.clear();
  const bool complete = j.spec.indexed ? static_cast<int64_t>(n->done_indexes.size()) >= completions
                                       : n->succeeded >= completions;
  if (!success_rule.empty()) {
    StopActive(n, out);
    Finish(out, "Complete", true, "SuccessPolicy", success_rule, now);
    out->events.push_back({"Normal", "Completed", "Job completed: " + success_rule});
  } else if (!fail_reason.empty()) {
    StopActive(n, out);
    Finish(out, "Failed", false, fail_reason, fail_message, now);
    out->events.push_back({"Warning", fail_reason, fail_message});
  } else if (complete && n->active == 0) {
    Finish(out, "Complete", true, "CompletionsReached", "Reached expected number of succeeded pods",
           now);
    out->events.push_back({"Normal", "Completed", "Job completed"});
  } else if (!complete) {
    out->create = PodsToCreate(j.spec, *n, completions);
    out->admit_gang = j.gang;
  }
}

}  // namespace

JobActions Reconcile(const JobRecord& job, int64_t now) {
  JobActions out;
  out.job = job;
  JobRecord& j = out.job;
  if (HasCondition(j.status, "Complete") || HasCondition(j.status, "Failed")) {
    const std::optional<int64_t> ttl = j.spec.ttl_seconds_after_finished;
    out.delete_job = ttl && j.finished_at.value_or(now) + *ttl <= now;
    return out;
  }
  PodCounts n = CountPods(&j);
  if (j.spec.suspend) {
    StopActive(&n, &out);
    if (!HasCondition(j.status, "Suspended")) {
      SetCondition(&j.status, "Suspended", true, "JobSuspended", "Job suspended", now);
      out.events.push_back({"Normal", "Suspended", "Job suspended"});
    }
    j.status.start_time.reset();
  } else {
    ReconcileRunning(&n, &out, now);
  }
  j.status.active = n.active;
  j.status.ready = n.running;
  j.status.succeeded = n.succeeded;
  j.status.failed = n.failed;
  if (j.spec.indexed) j.status.completed_indexes = IndexRanges(n.done_indexes);
  return out;
}

std::string JobPodName(const std::string& job_name, int index, const std::string& suffix) {
  return job_name + "-" + (index >= 0 ? std::to_string(index) + "-" : "") + suffix;
}

void AddCreatedPod(core::JobId id, const std::string& name, int index, JobActions* actions) {
  JobPod p;
  p.id = id;
  p.name = name;
  p.index = index;
  p.state = "PENDING";
  actions->job.pods.push_back(std::move(p));
  ++actions->job.status.active;
  actions->events.push_back({"Normal", "SuccessfulCreate", "Created pod: " + name});
}

std::string IndexRanges(const std::set<int>& indexes) {
  std::string out;
  for (auto it = indexes.begin(); it != indexes.end();) {
    int first = *it, last = *it;
    ++it;
    while (it != indexes.end() && *it == last + 1) last = *it++;
    out += (out.empty() ? "" : ",") + std::to_string(first);
    if (last > first) out += "-" + std::to_string(last);
  }
  return out;
}

std::optional<std::set<int>> ParseIndexRanges(const std::string& text) {
  std::set<int> out;
  size_t i = 0;
  while (i < text.size()) {
    size_t comma = std::min(text.find(',', i), text.size());
    const std::string part = text.substr(i, comma - i);
    const size_t dash = part.find('-');
    char* end = nullptr;
    const long a = std::strtol(part.c_str(), &end, 10);
    long b = a;
    if (dash != std::string::npos) b = std::strtol(part.c_str() + dash + 1, &end, 10);
    if (part.empty() || *end != '\0' || a < 0 || b < a || b - a > 100000) return std::nullopt;
    for (long k = a; k <= b; ++k) out.insert(static_cast<int>(k));
    i = comma + 1;
  }
  return out;
}

}  // namespace berth::k8s
