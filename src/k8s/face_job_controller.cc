// The Job controller's pass (docs/kubernetes.md), on the controller's state thread after every
// batch of commands and within each command that creates or changes a Job: for every unfinished
// Job, the pure Reconcile (job_controller.h) over its pods' states decides; this file carries its
// actions out through the StateOps: pods made from the template (one berth job each), pods
// stopped, gangs released, Events kept, the Job stored or, after ttlSecondsAfterFinished,
// deleted.
#include <cstdio>
#include <functional>

#include "k8s/face.h"
#include "k8s/job_controller.h"
#include "k8s/jobs.h"

namespace berth::k8s {
namespace {

using nlohmann::json;
using namespace http;

// The user whose pods a Job runs: its owner.
User OwnerOf(const JobOwner& owner) {
  User who;
  who.known = true;
  who.uid = owner.uid;
  who.gid = owner.gid;
  who.name = owner.user;
  who.admin = owner.admin;
  return who;
}

// Makes the pods actions->create asks for, in order, with `submit`; the first that cannot be made
// ends the round with a FailedCreate event.
// Pods made without some of their image pull secrets go into `warned`.
void CreatePods(const json& job, const PodContext& ctx,
                const std::function<Result<uint32_t>(const PodMapping&)>& submit,
                JobActions* actions, std::vector<std::pair<uint32_t, PodMapping>>* warned) {
  for (int index : actions->create) {
    const std::string pod_name = JobPodName(actions->job.name, index, GenerateNameSuffix());
    json manifest = PodFromTemplate(job, index, pod_name);
    PodMapping mapping;
    std::optional<FieldProblem> problem = MapPod(manifest, ctx, &mapping);
    if (actions->job.gang) mapping.request["hold"] = true;  // released together, below
    Result<uint32_t> id =
        problem ? Result<uint32_t>(Status::InvalidArgument(problem->field + ": " + problem->detail))
                : submit(mapping);
    if (!id.ok()) {
      actions->events.push_back(
          {"Warning", "FailedCreate",
           "Error creating: pods \"" + pod_name + "\": " + id.status().message()});
      return;
    }
    AddCreatedPod(*id, pod_name, index, actions);
    if (!mapping.missing_pull_secrets.empty()) warned->emplace_back(*id, std::move(mapping));
  }
}

// The ids of a stored Job's pods.
std::vector<uint32_t> PodIds(const json& stored_pods) {
  std::vector<uint32_t> ids;
  for (const auto& [id_text, pj] : stored_pods.items()) {
    (void)pj;
    ids.push_back(static_cast<uint32_t>(std::stoul(id_text)));
  }
  return ids;
}

}  // namespace

void Face::OnPass(StateOps& ops) {
  CronPass(ops);  // first: the Jobs it makes get their pods in the same pass
  std::vector<std::pair<std::string, std::shared_ptr<const json>>> jobs;
  {
    MutexLock l(mu_);
    for (const auto& [key, j] : jobs_) jobs.emplace_back(key, j);
  }
  const int64_t now = port_.Now();
  for (const auto& [key, stored] : jobs) {
    if (NeedsReconcile(*stored, now)) ReconcileJob(key, stored, now, ops);
  }
}

void Face::AddEvent(const json& object, const std::string& type, const std::string& reason,
                    const std::string& message, int64_t now) {
  events_.push_back(std::make_shared<const json>(
      MakeEvent(object, type, reason, message, now, 1, "job-controller")));
  if (events_.size() > kMaxEvents) events_.pop_front();
}

void Face::ReconcileJob(const std::string& key, const std::shared_ptr<const json>& stored,
                        int64_t now, StateOps& ops) {
  // A Job whose stored form surprises the controller is skipped with a message instead of
  // stopping the state thread.
  Result<JobRecord> job = DecodeJob(*stored);
  if (!job.ok()) {
    std::fprintf(stderr, "berth controller: Kubernetes Job %s skipped: %s\n", key.c_str(),
                 job.status().message().c_str());
    return;
  }
  // The pods' states now (a pod no longer in the live view keeps its last known one).
  for (JobPod& p : job->pods) {
    if (std::optional<PodOutcome> o = ops.Outcome(p.id)) {
      p.state = std::move(o->state);
      p.exit_code = o->exit_code;
    }
  }
  JobActions act = Reconcile(*job, now);
  for (uint32_t id : act.stop) ops.DeletePod(id);
  const User who = OwnerOf(act.job.owner);
  std::vector<std::pair<uint32_t, PodMapping>> warned;
  if (!act.create.empty()) {
    PodContext ctx;
    ctx.ns = act.job.ns;
    ctx.home = HomeOf(who.uid);
    ctx.log_dir = log_dir_;
    ctx.now = now;
    ctx.containers = opt_.containers;
    ctx.uid = who.uid;
    ctx.admin = who.admin;
    ctx.find_config = ConfigLookupFor(act.job.ns, who);
    CreatePods(
        *stored, ctx, [&](const PodMapping& m) { return SubmitPod(who, m, ops); }, &act, &warned);
  }
  json j = *stored;
  EncodeJob(act.job, &j);
  if (act.admit_gang) {
    if (size_t n = ops.ReleaseGang(PodIds(j["berth"]["pods"]))) {
      act.events.push_back({"Normal", "GangAdmitted",
                            "All " + std::to_string(n) + " pods fit at once: released together"});
    }
  }
  MutexLock l(mu_);
  if (act.delete_job) {
    for (const JobPod& p : act.job.pods) ops.DeletePod(p.id);
    DeleteJob(key, ops);
    return;
  }
  for (const JobEvent& e : act.events) AddEvent(*stored, e.type, e.reason, e.message, now);
  for (const auto& [id, m] : warned) AddPullSecretEvent(id, m, now);
  if (j == *stored) return;
  PutJob(key, std::move(j), ops);
}

}  // namespace berth::k8s
