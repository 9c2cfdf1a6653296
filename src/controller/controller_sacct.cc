// sacct's side of the controller: GET /v1/accounting/jobs, every record of a time window as
// JSON (berth report, seff, and sacct against an older controller), and POST /v1/views/sacct,
// sacct's report selected and made here from the records, so that a query's cost is its answer
// and the window's rows, not a copy of the whole history sent to the client and parsed there.
#include <algorithm>
#include <ctime>
#include <deque>
#include <set>

#include "common/strings.h"
#include "controller/controller_internal.h"
#include "slurm/sacct_view.h"

namespace berth::controller {

using nlohmann::json;

Status Controller::Impl::ForEachAccountingRecord(Time from, Time to, core::JobId lowest_id,
                                                 const std::function<void(const JobRecord&)>& fn) {
  // Finished jobs from the store, then (with an archive) those that moved to PostgreSQL: a job
  // in both (between the archive's commit and the store's delete) counts once, as the store has
  // it. The rows are decoded without their run specifications (script, environment: none of
  // them is shown), and equal requests are decoded once (the cache's memo).
  std::set<core::JobId> seen;
  ExecCache cache;
  auto decode = [&](const store::JobRow& row) {
    if (row.id < lowest_id) return;
    Result<JobRecord> r = DecodeJobRowWithoutExec(row, &cache);
    if (r.ok()) fn(*r);
  };
  BERTH_RETURN_IF_ERROR(store->ScanFinished(from, to, lowest_id, 0, [&](const store::JobRow& row) {
    seen.insert(row.id);
    decode(row);
  }));
  if (archive != nullptr) {
    BERTH_RETURN_IF_ERROR(archive->ScanFinished(from, to, lowest_id, [&](const store::JobRow& row) {
      if (seen.count(row.id) == 0) decode(row);
    }));
  }
  std::vector<std::shared_ptr<const JobRecord>> active;
  {
    ReaderLock l(view_mu);
    for (auto it = records.lower_bound(lowest_id); it != records.end(); ++it) {
      if (!core::IsTerminal(it->second->job.state)) active.push_back(it->second);
    }
  }
  for (const std::shared_ptr<const JobRecord>& r : active) fn(*r);
  return Status::Ok();
}

net::HttpResponse Controller::Impl::Accounting(const net::HttpRequest& req) {
  auto q = [&](const char* k) { return req.query.count(k) ? req.query.at(k) : std::string(); };
  Time from = 0, to = kInfinite;
  if (!q("start").empty() && !ParseNumber(q("start"), from)) {
    return Error(Status::InvalidArgument("\"start\" must be a Unix time in seconds"));
  }
  if (!q("end").empty() && !ParseNumber(q("end"), to)) {
    return Error(Status::InvalidArgument("\"end\" must be a Unix time in seconds"));
  }
  std::vector<std::string> users = SplitList(q("user"));
  json jobs = json::array();
  Status st = ForEachAccountingRecord(from, to, 0, [&](const JobRecord& r) {
    if (!users.empty() && std::find(users.begin(), users.end(), r.job.spec->user) == users.end()) {
      return;
    }
    jobs.push_back(EncodeJobRecord(r, false));
  });
  if (!st.ok()) return Error(st);
  return JsonResponse(200, {{"jobs", jobs}});
}

net::HttpResponse Controller::Impl::SacctView(const json& body) {
  // {"args": sacct's arguments, "env": {"SACCT_FORMAT": ...}, "uid" and "user": the caller's
  //  (whose jobs sacct shows without -a or -u), "now", "tz": TZ}: the options parsed here as
  //  sacct parses them, the jobs selected from the records the client would have been sent
  //  (GET /v1/accounting/jobs), the report made as the client makes it.
  Result<CommandLine> line = CommandLineOf(body, "sacct");
  if (!line.ok()) return Error(line.status());
  if (!body.contains("uid") || !body.at("uid").is_number_unsigned()) {
    return Error(Status::InvalidArgument("sacct view: \"uid\" (the caller's) is needed"));
  }
  // -S/-E and the times shown are local: a caller in another zone makes its own report.
  if (body.value("tz", std::string()) != OwnTimeZone()) {
    return Error(Status::FailedPrecondition("sacct view: the caller's time zone is not ours"));
  }
  Time now = body.value("now", Time{0});
  if (now <= 0) now = std::time(nullptr);
  auto format = line->env.find("SACCT_FORMAT");
  const slurm::SacctParse parsed = slurm::ParseSacctArgs(
      line->args, now, format == line->env.end() ? std::string() : format->second);
  const slurm::SacctOptions& o = parsed.options;
  if (parsed.done || o.version) {
    return Error(Status::InvalidArgument("sacct view: only sacct's report is made here"));
  }
  slurm::SacctCaller caller;
  caller.uid = body.at("uid").get<uint32_t>();
  caller.user = body.value("user", std::string());
  const Time from = slurm::SacctWindowStart(o, now);
  const Time to = o.end.value_or(now);
  // The jobs kept are only those selected (a deque: the report points at them). A job whose
  // ids or user rule it out is dropped before its view is made, from the fields its view would
  // take them from (slurm::FillJobView), when it names its user.
  std::deque<slurm::SacctJob> kept;
  slurm::JobView who;
  Status st =
      ForEachAccountingRecord(from, kInfinite, slurm::SacctLowestId(o), [&](const JobRecord& r) {
        const core::JobSpec& spec = *r.job.spec;
        if (!spec.user.empty()) {
          const bool task = r.job.array_job_id != core::kNoJob;
          who.job_id = r.job.id;
          who.array_job_id = task ? r.job.array_job_id : spec.array.empty() ? 0 : r.job.id;
          who.array_task_id = task ? r.job.array_task_id : -1;
          who.uid = spec.uid;
          who.user = spec.user;
          if (!slurm::SacctSelectsWho(o, who, caller)) return;
        }
        slurm::SacctJob j = SacctJobOf(r, now);
        if (slurm::SacctSelects(o, j.view, caller, from, to)) kept.push_back(std::move(j));
      });
  if (!st.ok()) return Error(st);
  std::vector<const slurm::SacctJob*> selected;
  selected.reserve(kept.size());
  for (const slurm::SacctJob& j : kept) selected.push_back(&j);
  slurm::SortSacctJobs(&selected);
  const std::string& cluster = opt.config.cluster.name;
  net::HttpResponse out;
  out.status = 200;
  if (o.json) {
    out.content_type = "application/json";
    out.body = slurm::SacctJson(selected, cluster, o.allocations).dump(2) + "\n";
  } else {
    out.content_type = "text/plain; charset=utf-8";
    out.body = slurm::RenderSacct(o, selected, cluster);
  }
  return out;
}

}  // namespace berth::controller
