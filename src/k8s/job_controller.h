// The Kubernetes Job controller as a pure function (docs/kubernetes.md, "Jobs"): a Job as typed
// records (its spec, its status, berth's private section with its pods and their last known
// states) and the time now go in; what to do comes out (pods to stop, pods to create, the Job's
// new status and conditions, events, whether to delete the Job after its TTL). Also the codec
// between the stored Job object (JSON, with its "berth" section) and those records.
//
// Who uses it: the face's Job controller pass (k8s::Face::OnPass, face_job_controller.cc, on the
// controller's state thread) gathers the inputs, calls Reconcile, and applies the actions
// through the port's StateOps (submits and cancels berth jobs, writes the stored object, records
// the events). Creating a pod can fail, so the applier reports each pod it
// made with AddCreatedPod, which counts it and writes its SuccessfulCreate event.
//
// Thread safety: plain values and pure functions; no shared state.
#ifndef BERTH_K8S_JOB_CONTROLLER_H_
#define BERTH_K8S_JOB_CONTROLLER_H_

#include <cstdint>
#include <nlohmann/json.hpp>
#include <optional>
#include <set>
#include <string>
#include <vector>

#include "common/status.h"
#include "core/model/job.h"

namespace berth::k8s {

// One entry of status.conditions, as stored (times are RFC 3339 text).
struct JobCondition {
  std::string type;    // Complete, Failed, SuccessCriteriaMet, FailureTarget, Suspended
  std::string status;  // "True" or "False"
  std::string reason;
  std::string message;
  std::string last_probe_time;
  std::string last_transition_time;
  bool operator==(const JobCondition&) const = default;
};

// A podFailurePolicy rule. The action is FailJob, Ignore, Count or FailIndex (berth has no
// per-index backoff, so FailIndex counts the failure as Count does).
struct PodFailureRule {
  std::string action = "Count";
  bool on_exit_codes = false;  // else it matches on pod conditions
  bool exit_codes_in = true;   // operator In (else NotIn)
  std::vector<int64_t> exit_codes;
  // An onPodConditions entry DisruptionTarget=True: matches a pod berth stopped for a node
  // failure or a preemption.
  bool on_disruption = false;
};

// A successPolicy rule (Indexed Jobs).
struct SuccessRule {
  std::optional<std::string> succeeded_indexes;  // "0,2-3"
  std::optional<int64_t> succeeded_count;
};

struct JobSpec {
  int64_t parallelism = 1;
  std::optional<int64_t> completions;  // nullopt: a work queue
  bool indexed = false;                // completionMode Indexed
  int64_t backoff_limit = 6;
  std::optional<int64_t> active_deadline_seconds;
  bool suspend = false;
  std::optional<std::vector<PodFailureRule>> pod_failure_policy;
  std::optional<std::vector<SuccessRule>> success_policy;
  std::optional<int64_t> ttl_seconds_after_finished;
};

struct JobStatus {
  std::optional<std::string> start_time;  // nullopt while suspended
  std::optional<std::string> completion_time;
  int64_t active = 0;
  int64_t ready = 0;  // pods running
  int64_t succeeded = 0;
  int64_t failed = 0;
  std::optional<std::string> completed_indexes;  // Indexed Jobs: "0-2,4"
  std::vector<JobCondition> conditions;
};

// One of the Job's pods (a berth job) as berth's private section remembers it. The optional
// fields are absent until known; `state` is a berth job state name ("PENDING", "COMPLETED", ...).
struct JobPod {
  core::JobId id = 0;
  std::string name;
  int index = -1;  // completion index; -1 for a NonIndexed Job
  std::optional<std::string> state;
  std::optional<int> exit_code;               // 128 + signal for a pod killed by a signal
  bool stopped = false;                       // stopped for the Job itself (suspend, deadline, end)
  std::optional<std::string> policy;          // the podFailurePolicy action taken for it
  std::optional<std::string> policy_message;  // why a FailJob rule failed the Job
};

// Who made the Job: its pods run as this user.
struct JobOwner {
  uint32_t uid = 0;
  uint32_t gid = 0;
  std::string user;
  bool admin = false;
};

// A Job as the controller sees it.
struct JobRecord {
  std::string ns;
  std::string name;
  bool gang = false;  // annotation berth.io/gang: "true"
  JobSpec spec;
  JobStatus status;
  JobOwner owner;
  std::vector<JobPod> pods;            // in the stored order (by id text)
  std::optional<int64_t> finished_at;  // when it became Complete or Failed (Unix seconds)
};

struct JobEvent {
  std::string type;  // Normal or Warning
  std::string reason;
  std::string message;
  bool operator==(const JobEvent&) const = default;
};

// What the Job controller wants done for one Job.
struct JobActions {
  JobRecord job;                  // the Job as it should be stored
  std::vector<core::JobId> stop;  // active pods to stop (marked stopped in job.pods)
  std::vector<int> create;        // a pod to create per entry: its index (-1: NonIndexed)
  bool admit_gang = false;        // then release the Job's held pods if all fit at once
  std::vector<JobEvent> events;   // in order; the applier appends its own after these
  bool delete_job = false;        // the TTL after finishing is due: delete it and its pods
};

// The Job controller's decision for `job` at `now` (Unix seconds). The pods' states in `job` must
// be current. A finished Job (Complete or Failed) yields no actions until its TTL is due.
JobActions Reconcile(const JobRecord& job, int64_t now);

// The name of the pod with completion index `index` (-1 for none) of Job `job_name`.
std::string JobPodName(const std::string& job_name, int index, const std::string& suffix);
// Records a pod the applier created for actions->create: it joins the Job's pods and the active
// count, with a SuccessfulCreate event.
void AddCreatedPod(core::JobId id, const std::string& name, int index, JobActions* actions);

// Codec between the stored Job object (with its "berth" section) and JobRecord. DecodeJob fails
// on a field of an unexpected type. EncodeJob writes `job`'s status, conditions (each changed
// one in place), berth section and pods into `stored`, keeping every other field.
Result<JobRecord> DecodeJob(const nlohmann::json& stored);
void EncodeJob(const JobRecord& job, nlohmann::json* stored);
// Whether a stored Job may need work at `now`: false for a finished Job whose TTL is not due
// (the common case, checked without decoding).
bool NeedsReconcile(const nlohmann::json& stored, int64_t now);

// Completion index sets as text: "0-2,4,6-7" from {0,1,2,4,6,7}, and back (nullopt: bad text).
std::string IndexRanges(const std::set<int>& indexes);
std::optional<std::set<int>> ParseIndexRanges(const std::string& text);

}  // namespace berth::k8s

#endif  // BERTH_K8S_JOB_CONTROLLER_H_
