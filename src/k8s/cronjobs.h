// batch/v1 CronJobs as berth serves them (docs/kubernetes.md "CronJobs"): the defaults and checks
// of a CronJob, its Table columns, the Job it makes for a scheduled time, and its controller as a
// pure Reconcile over the CronJob and its Jobs, following Kubernetes' CronJob controller (v2).
// Pure functions of their arguments (TimeZone::Load reads the tz database).
#ifndef BERTH_K8S_CRONJOBS_H_
#define BERTH_K8S_CRONJOBS_H_

#include <cstdint>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <vector>

#include "k8s/cron_schedule.h"
#include "k8s/fields.h"
#include "k8s/pods.h"

namespace berth::k8s {

// A CronJob manifest checked and defaulted (concurrencyPolicy Allow, suspend false, history
// limits 3 and 1, the job template checked as a Job's), its uid and creation time set; nullopt
// when fine. `template_ctx` (optional): how the template's pod is checked.
std::optional<FieldProblem> DefaultCronJob(const nlohmann::json& cronjob, const std::string& ns,
                                           const std::string& uid, int64_t now, nlohmann::json* out,
                                           const PodContext* template_ctx = nullptr);
// A CronJob's schedule and zone (checked by DefaultCronJob; INVALID_ARGUMENT otherwise).
Result<CronSchedule> ScheduleOf(const nlohmann::json& cronjob);
Result<TimeZone> ZoneOf(const nlohmann::json& cronjob);

nlohmann::json CronJobTableColumns();
nlohmann::json CronJobTableCells(const nlohmann::json& cronjob, int64_t now);
std::optional<std::string> CronJobField(const nlohmann::json& cronjob, const std::string& field);

// The name of the Job for `scheduled` (Unix seconds): "<cronjob>-<minutes since the epoch>".
std::string CronJobJobName(const std::string& cronjob, int64_t scheduled);
// The Job manifest the CronJob makes for `scheduled`: the template's metadata and spec, owned by
// the CronJob, with the annotation batch.kubernetes.io/cronjob-scheduled-timestamp (RFC 3339 in
// the CronJob's zone).
nlohmann::json JobForSchedule(const nlohmann::json& cronjob, int64_t scheduled,
                              const TimeZone& zone);

// What the controller knows of one of the CronJob's Jobs.
struct CronChild {
  std::string name, uid, resource_version;
  int64_t created = 0;
  int64_t start = 0;      // status.startTime (0: none)
  bool finished = false;  // Complete or Failed
  bool succeeded = false;
  int64_t completion = 0;  // when it finished (status.completionTime, else the condition's time)
};

struct CronEvent {
  std::string type, reason, message;
};

struct CronActions {
  nlohmann::json status;                 // the CronJob's status after this step
  std::optional<int64_t> create;         // a Job to make for this scheduled time
  std::vector<std::string> delete_jobs;  // Jobs to delete (Replace, history limits)
  std::vector<CronEvent> events;
  std::optional<int64_t> next;  // the next scheduled time (nullopt: none, or suspended)
};

// One step of the CronJob controller at `now`: the children's states into status.active and
// lastSuccessfulTime, the history limits, then (unless suspended) the most recent missed time
// since lastScheduleTime (or the creation, or now - startingDeadlineSeconds): a Warning
// TooManyMissedTimes when more than 100 were missed, MissSchedule when it is past its starting
// deadline, a Job unless one exists for it or concurrencyPolicy Forbid finds one active (Replace
// deletes those first).
CronActions ReconcileCronJob(const nlohmann::json& cronjob, const std::vector<CronChild>& children,
                             int64_t now);

}  // namespace berth::k8s

#endif  // BERTH_K8S_CRONJOBS_H_
