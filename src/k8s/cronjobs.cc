// batch/v1 CronJobs (cronjobs.h).
#include "k8s/cronjobs.h"

#include <algorithm>
#include <cstdio>
#include <set>

#include "k8s/codec.h"
#include "k8s/jobs.h"
#include "k8s/manifest_meta.h"
#include "k8s/objects.h"

namespace berth::k8s {

using nlohmann::json;
using namespace fields;

namespace {

constexpr int kMaxMissed = 100;  // Kubernetes' "too many missed start times"

// "2026-12-05T03:00:00+01:00": RFC 3339 at the zone's offset (Go's Format(time.RFC3339)).
std::string Rfc3339In(int64_t t, const TimeZone& zone) {
  const int32_t off = zone.OffsetAt(t);
  std::string s = Rfc3339(t + off);
  if (off == 0) return s;
  s.pop_back();  // the "Z"
  const int32_t a = off < 0 ? -off : off;
  char buf[32];
  std::snprintf(buf, sizeof buf, "%c%02d:%02d", off < 0 ? '-' : '+', a / 3600, a / 60 % 60);
  return s + buf;
}

int64_t TimeAt(const json& j, std::initializer_list<const char*> path) {
  const json& v = At(j, path);
  return v.is_string() ? ParseRfc3339(v.get<std::string>()).value_or(0) : 0;
}

std::optional<FieldProblem> CheckLimit(json& spec, const char* field, int64_t dflt) {
  json& v = spec[field];
  if (v.is_null()) {
    v = dflt;
    return std::nullopt;
  }
  if (!v.is_number_integer() || v.get<int64_t>() < 0) {
    return Invalid(std::string("spec.") + field, Text(v), "must be greater than or equal to 0");
  }
  return std::nullopt;
}

}  // namespace

Result<CronSchedule> ScheduleOf(const json& cronjob) {
  return ParseCronSchedule(Str(cronjob, {"spec", "schedule"}));
}

Result<TimeZone> ZoneOf(const json& cronjob) {
  const json& tz = At(cronjob, {"spec", "timeZone"});
  if (tz.is_null()) return TimeZone();
  if (!tz.is_string()) return Status::InvalidArgument("must be a string");
  return TimeZone::Load(tz.get<std::string>());
}

std::optional<FieldProblem> DefaultCronJob(const json& cronjob, const std::string& ns,
                                           const std::string& uid, int64_t now, json* out,
                                           const PodContext* template_ctx) {
  if (!cronjob.is_object()) return Invalid("", "", "must be an object");
  const std::string name = Str(cronjob, {"metadata", "name"});
  if (name.empty()) return Required("metadata.name", "name or generateName is required");
  if (std::string problem = NamespaceNameProblem(name); !problem.empty()) {
    return Invalid("metadata.name", name, problem);
  }
  // A Job's name is this name, a dash and 11 digits, within the 63 of a label value.
  if (name.size() > 52) return Invalid("metadata.name", name, "must be no more than 52 characters");
  json c = cronjob;
  c["apiVersion"] = "batch/v1";
  c["kind"] = "CronJob";
  json& meta = c["metadata"];
  meta["namespace"] = ns;
  meta["uid"] = uid;
  meta["creationTimestamp"] = Rfc3339(now);
  meta["generation"] = 1;
  if (auto p = CheckMetadataMaps(meta)) return p;
  if (!c.contains("spec") || !c["spec"].is_object()) return Required("spec");
  json& spec = c["spec"];
  const json& schedule = At(spec, {"schedule"});
  if (!schedule.is_string() || schedule.get<std::string>().empty()) {
    return Required("spec.schedule");
  }
  if (Result<CronSchedule> s = ScheduleOf(c); !s.ok()) {
    return Invalid("spec.schedule", schedule.get<std::string>(), s.status().message());
  }
  if (const json& tz = At(spec, {"timeZone"}); !tz.is_null()) {
    if (!tz.is_string()) return Invalid("spec.timeZone", Text(tz), "must be a string");
    if (Result<TimeZone> z = ZoneOf(c); !z.ok()) {
      return Invalid("spec.timeZone", tz.get<std::string>(), z.status().message());
    }
  }
  json& policy = spec["concurrencyPolicy"];
  if (policy.is_null()) policy = "Allow";
  if (policy != "Allow" && policy != "Forbid" && policy != "Replace") {
    return Unsupported("spec.concurrencyPolicy", Text(policy),
                       "supported values: \"Allow\", \"Forbid\", \"Replace\"");
  }
  if (spec["suspend"].is_null()) spec["suspend"] = false;
  if (!spec["suspend"].is_boolean()) {
    return Invalid("spec.suspend", Text(spec["suspend"]), "must be a boolean");
  }
  if (auto p = CheckLimit(spec, "successfulJobsHistoryLimit", 3)) return p;
  if (auto p = CheckLimit(spec, "failedJobsHistoryLimit", 1)) return p;
  if (spec.contains("startingDeadlineSeconds") && !spec["startingDeadlineSeconds"].is_null() &&
      (!spec["startingDeadlineSeconds"].is_number_integer() ||
       spec["startingDeadlineSeconds"].get<int64_t>() < 0)) {
    return Invalid("spec.startingDeadlineSeconds", Text(spec["startingDeadlineSeconds"]),
                   "must be greater than or equal to 0");
  }
  json& tmpl = spec["jobTemplate"];
  if (!tmpl.is_object() || !At(tmpl, {"spec"}).is_object()) return Required("spec.jobTemplate");
  // The template is checked as the Job it makes would be.
  json probe = {
      {"apiVersion", "batch/v1"},
      {"kind", "Job"},
      {"metadata", At(tmpl, {"metadata"}).is_object() ? At(tmpl, {"metadata"}) : json::object()},
      {"spec", tmpl["spec"]}};
  probe["metadata"]["name"] = CronJobJobName(name, now);
  json defaulted;
  if (auto p = DefaultJob(probe, ns, uid, now, &defaulted, template_ctx)) {
    p->field = "spec.jobTemplate." + p->field;
    return p;
  }
  if (!c.contains("status") || !c["status"].is_object()) c["status"] = json::object();
  *out = std::move(c);
  return std::nullopt;
}

json CronJobTableColumns() {
  return json::array(
      {TableColumn("Name", "string", "name", "the cron job's name", 0),
       TableColumn("Schedule", "string", "", "the cron schedule", 0),
       TableColumn("Timezone", "string", "", "the time zone of the schedule", 0),
       TableColumn("Suspend", "boolean", "", "whether scheduling is suspended", 0),
       TableColumn("Active", "integer", "", "the number of running jobs", 0),
       TableColumn("Last Schedule", "string", "", "since the last scheduled time", 0),
       TableColumn("Age", "string", "", "since the cron job was created", 0),
       TableColumn("Containers", "string", "", "the template's containers", 1),
       TableColumn("Images", "string", "", "the template's images", 1),
       TableColumn("Selector", "string", "", "the jobs' label selector", 1)});
}

json CronJobTableCells(const json& cronjob, int64_t now) {
  const json& tz = At(cronjob, {"spec", "timeZone"});
  const json& active = At(cronjob, {"status", "active"});
  const int64_t last = TimeAt(cronjob, {"status", "lastScheduleTime"});
  std::string containers, images;
  const json& cs = At(cronjob, {"spec", "jobTemplate", "spec", "template", "spec", "containers"});
  if (cs.is_array()) {
    for (const json& ct : cs) {
      containers += (containers.empty() ? "" : ",") + Str(ct, {"name"});
      images += (images.empty() ? "" : ",") + Str(ct, {"image"});
    }
  }
  return json::array({Str(cronjob, {"metadata", "name"}), Str(cronjob, {"spec", "schedule"}),
                      tz.is_string() ? tz.get<std::string>() : "<none>",
                      At(cronjob, {"spec", "suspend"}) == true ? "True" : "False",
                      active.is_array() ? active.size() : 0,
                      last ? HumanDuration(std::max<int64_t>(0, now - last)) : "<none>",
                      AgeCell(cronjob, now), containers, images, "<none>"});
}

std::optional<std::string> CronJobField(const json& cronjob, const std::string& field) {
  if (field == "metadata.name") return Str(cronjob, {"metadata", "name"});
  if (field == "metadata.namespace") return Str(cronjob, {"metadata", "namespace"});
  return std::nullopt;
}

std::string CronJobJobName(const std::string& cronjob, int64_t scheduled) {
  return cronjob + "-" + std::to_string(scheduled / 60);
}

json JobForSchedule(const json& cronjob, int64_t scheduled, const TimeZone& zone) {
  const json& tmpl = At(cronjob, {"spec", "jobTemplate"});
  const std::string name = Str(cronjob, {"metadata", "name"});
  json meta = At(tmpl, {"metadata"}).is_object() ? At(tmpl, {"metadata"}) : json::object();
  meta["name"] = CronJobJobName(name, scheduled);
  meta["namespace"] = Str(cronjob, {"metadata", "namespace"});
  if (!meta["annotations"].is_object()) meta["annotations"] = json::object();
  meta["annotations"]["batch.kubernetes.io/cronjob-scheduled-timestamp"] =
      Rfc3339In(scheduled, zone);
  meta["ownerReferences"] = json::array({{{"apiVersion", "batch/v1"},
                                          {"kind", "CronJob"},
                                          {"name", name},
                                          {"uid", Str(cronjob, {"metadata", "uid"})},
                                          {"controller", true},
                                          {"blockOwnerDeletion", true}}});
  return {{"apiVersion", "batch/v1"},
          {"kind", "Job"},
          {"metadata", std::move(meta)},
          {"spec", At(tmpl, {"spec"})}};
}

CronActions ReconcileCronJob(const json& cronjob, const std::vector<CronChild>& children,
                             int64_t now) {
  CronActions act;
  act.status = At(cronjob, {"status"}).is_object() ? cronjob["status"] : json::object();
  const json& spec = At(cronjob, {"spec"});
  const std::string ns = Str(cronjob, {"metadata", "namespace"});
  // The children: which run, the last success, what was seen to end.
  std::set<std::string> was_active;
  if (const json& a = At(act.status, {"active"}); a.is_array()) {
    for (const json& ref : a) was_active.insert(Str(ref, {"name"}));
  }
  json active = json::array();
  int64_t last_success = TimeAt(act.status, {"lastSuccessfulTime"});
  std::vector<const CronChild*> succeeded, failed;
  for (const CronChild& ch : children) {
    if (!ch.finished) {
      active.push_back({{"kind", "Job"},
                        {"namespace", ns},
                        {"name", ch.name},
                        {"uid", ch.uid},
                        {"apiVersion", "batch/v1"},
                        {"resourceVersion", ch.resource_version}});
      continue;
    }
    if (was_active.count(ch.name)) {
      act.events.push_back({"Normal", "SawCompletedJob",
                            "Saw completed job: " + ch.name +
                                ", status: " + (ch.succeeded ? "Complete" : "Failed")});
    }
    (ch.succeeded ? succeeded : failed).push_back(&ch);
    if (ch.succeeded) last_success = std::max(last_success, ch.completion);
  }
  if (active.empty()) {
    act.status.erase("active");
  } else {
    act.status["active"] = active;
  }
  if (last_success) act.status["lastSuccessfulTime"] = Rfc3339(last_success);
  // History limits: the oldest finished Jobs beyond them go.
  auto trim = [&](std::vector<const CronChild*> list, const char* field) {
    const json& limit = At(spec, {field});
    if (!limit.is_number_integer()) return;
    std::sort(list.begin(), list.end(), [](const CronChild* a, const CronChild* b) {
      const int64_t ta = a->start ? a->start : a->created, tb = b->start ? b->start : b->created;
      return ta != tb ? ta < tb : a->name < b->name;
    });
    const size_t keep = static_cast<size_t>(std::max<int64_t>(0, limit.get<int64_t>()));
    for (size_t i = 0; i + keep < list.size(); ++i) {
      act.delete_jobs.push_back(list[i]->name);
      act.events.push_back({"Normal", "SuccessfulDelete", "Deleted job " + list[i]->name});
    }
  };
  trim(succeeded, "successfulJobsHistoryLimit");
  trim(failed, "failedJobsHistoryLimit");
  if (At(cronjob, {"metadata", "deletionTimestamp"}).is_string()) return act;
  if (At(spec, {"suspend"}) == true) return act;
  Result<CronSchedule> schedule = ScheduleOf(cronjob);
  if (!schedule.ok()) {
    act.events.push_back({"Warning", "UnparseableSchedule",
                          "unparseable schedule: \"" + Str(spec, {"schedule"}) +
                              "\" : " + schedule.status().message()});
    return act;
  }
  Result<TimeZone> zone = ZoneOf(cronjob);
  if (!zone.ok()) {
    act.events.push_back({"Warning", "UnknownTimeZone", zone.status().message()});
    return act;
  }
  // The most recent scheduled time not after now, since the last one (or the creation).
  int64_t earliest = TimeAt(act.status, {"lastScheduleTime"});
  if (!earliest) earliest = TimeAt(cronjob, {"metadata", "creationTimestamp"});
  const json& sds = At(spec, {"startingDeadlineSeconds"});
  if (sds.is_number_integer()) earliest = std::max(earliest, now - sds.get<int64_t>());
  std::optional<int64_t> most_recent;
  int missed = 0;
  std::optional<int64_t> t = NextScheduleTime(*schedule, *zone, earliest);
  for (int guard = 0; t && *t <= now && guard < 1'000'000; ++guard) {
    most_recent = t;
    ++missed;
    t = NextScheduleTime(*schedule, *zone, *t);
  }
  act.next = t;
  if (!most_recent) return act;
  const std::string job_name = CronJobJobName(Str(cronjob, {"metadata", "name"}), *most_recent);
  if (missed > kMaxMissed) {
    act.events.push_back({"Warning", "TooManyMissedTimes",
                          "too many missed start times: " + std::to_string(missed) +
                              ". Set or decrease .spec.startingDeadlineSeconds or check clock "
                              "skew"});
  }
  if (sds.is_number_integer() && *most_recent + sds.get<int64_t>() < now) {
    act.events.push_back(
        {"Warning", "MissSchedule",
         "Missed scheduled time to start a job: " + Rfc3339In(*most_recent, *zone)});
    return act;
  }
  for (const CronChild& ch : children) {
    if (ch.name != job_name) continue;
    act.status["lastScheduleTime"] = Rfc3339(*most_recent);  // it was made already
    return act;
  }
  if (!active.empty() && spec.value("concurrencyPolicy", "Allow") == "Forbid") {
    act.events.push_back(
        {"Normal", "JobAlreadyActive",
         "Not starting job because prior execution is running and concurrency policy is Forbid"});
    return act;
  }
  if (!active.empty() && spec.value("concurrencyPolicy", "Allow") == "Replace") {
    for (const json& ref : active) {
      act.delete_jobs.push_back(Str(ref, {"name"}));
      act.events.push_back({"Normal", "SuccessfulDelete", "Deleted job " + Str(ref, {"name"})});
    }
  }
  act.create = most_recent;
  act.status["lastScheduleTime"] = Rfc3339(*most_recent);
  act.events.push_back({"Normal", "SuccessfulCreate", "Created job " + job_name});
  return act;
}

}  // namespace berth::k8s
