// GET /v1/reports/usage and /v1/reports/advice (docs/api.md): `berth report usage` and `advice`,
// and seff's suggestions for one job, computed by the same code (src/slurm) from the same
// accounting records (GET /v1/accounting/jobs), so that the web console's figures are the CLI's.
#include <cctype>
#include <functional>
#include <sstream>

#include "api/errors.h"
#include "controller/controller_internal.h"
#include "slurm/advice.h"
#include "slurm/efficiency.h"
#include "slurm/usage_report.h"

namespace berth::controller {

namespace {

using nlohmann::json;

constexpr Time kDefaultPeriod = 30 * 24 * 3600;  // as `berth report`: 30 days before the end
constexpr int kDefaultTop = 10;

std::string QueryOf(const net::HttpRequest& req, const std::string& name) {
  auto it = req.query.find(name);
  return it == req.query.end() ? "" : it->second;
}

// A Unix time parameter; `fallback` when absent.
Result<Time> TimeParam(const net::HttpRequest& req, const std::string& name, Time fallback) {
  const std::string text = QueryOf(req, name);
  if (text.empty()) return fallback;
  Time t = 0;
  if (!ParseNumber(text, t) || t < 0) {
    return Status::InvalidArgument("\"" + name + "\" must be a Unix time in seconds");
  }
  return t;
}

Result<int> CountParam(const net::HttpRequest& req, const std::string& name, int fallback) {
  const std::string text = QueryOf(req, name);
  if (text.empty()) return fallback;
  int n = 0;
  if (!ParseNumber(text, n) || n < 0) {
    return Status::InvalidArgument("\"" + name + "\" must be a whole number >= 0");
  }
  return n;
}

std::vector<std::string> ListParam(const net::HttpRequest& req, const std::string& name) {
  std::vector<std::string> out;
  std::stringstream in(QueryOf(req, name));
  for (std::string item; std::getline(in, item, ',');) {
    if (!item.empty()) out.push_back(item);
  }
  return out;
}

bool FlagParam(const net::HttpRequest& req, const std::string& name) {
  const std::string v = QueryOf(req, name);
  return v == "1" || v == "true";
}

// The period [start, end) of a report: end defaults to now, start to 30 days before the end.
Result<std::pair<Time, Time>> Period(const net::HttpRequest& req, Time now) {
  BERTH_ASSIGN_OR_RETURN(Time end, TimeParam(req, "end", now));
  BERTH_ASSIGN_OR_RETURN(Time start,
                         TimeParam(req, "start", std::max<Time>(0, end - kDefaultPeriod)));
  if (start >= end) {
    return Status::InvalidArgument("the period is empty: start " + std::to_string(start) +
                                   " is not before end " + std::to_string(end));
  }
  return std::make_pair(start, end);
}

// The accounting records as `berth report` reads them (GET /v1/accounting/jobs with start, end
// and user), made into the reports' jobs; records they cannot read are left out, as the CLI does.
using AccountingCall = std::function<net::HttpResponse(const net::HttpRequest&)>;

Result<std::vector<slurm::UsageJob>> ReportJobs(const AccountingCall& accounting, Time start,
                                                Time end, const std::string& user, Time now) {
  net::HttpRequest q;
  q.method = "GET";
  q.path = "/v1/accounting/jobs";
  q.query["start"] = std::to_string(start);
  if (end != kNoTime) q.query["end"] = std::to_string(end);
  if (!user.empty()) q.query["user"] = user;
  net::HttpResponse r = accounting(q);
  if (r.status != 200) return api::StatusFromHttp(r.status, r.body);
  const json body = json::parse(r.body);
  std::vector<slurm::UsageJob> jobs;
  if (body.contains("jobs") && body.at("jobs").is_array()) {
    for (const json& record : body.at("jobs")) {
      Result<slurm::UsageJob> j = slurm::UsageJobFromJson(record, now);
      if (j.ok()) jobs.push_back(std::move(*j));
    }
  }
  return jobs;
}

}  // namespace

net::HttpResponse Controller::Impl::UsageReportRoute(const ApiCall& c) {
  const Time now = Now();
  Result<std::pair<Time, Time>> period = Period(c.req, now);
  if (!period.ok()) return Error(period.status());
  Result<int> top = CountParam(c.req, "top", kDefaultTop);
  if (!top.ok()) return Error(top.status());
  const auto [start, end] = *period;
  // As the CLI: every job that ended after the start (one that ended after the period may have
  // run inside it), then the caller's selection.
  Result<std::vector<slurm::UsageJob>> all = ReportJobs(
      [this](const net::HttpRequest& q) { return Accounting(q); }, start, kNoTime, "", now);
  if (!all.ok()) return Error(all.status());
  const slurm::UsageSelection selection{c.who.uid, ListParam(c.req, "users"),
                                        ListParam(c.req, "accounts"), FlagParam(c.req, "all")};
  std::vector<slurm::UsageJob> jobs;
  for (slurm::UsageJob& j : *all) {
    if (slurm::Selected(selection, j.view)) jobs.push_back(std::move(j));
  }
  const slurm::UsageReport report = slurm::ComputeUsage(jobs, start, end, *top);
  const std::string format = QueryOf(c.req, "format");
  if (format == "csv") {
    // The CLI's --format csv itself: the console's "Export CSV".
    net::HttpResponse r;
    r.content_type = "text/csv; charset=utf-8";
    r.body = slurm::RenderUsage(report, slurm::ReportFormat::kCsv, false);
    return r;
  }
  if (!format.empty() && format != "json") {
    return Error(Status::InvalidArgument("unknown format '" + format + "' (json or csv)"));
  }
  return JsonResponse(200, slurm::UsageJson(report));
}

net::HttpResponse Controller::Impl::AdviceReportRoute(const ApiCall& c) {
  const Time now = Now();
  if (const std::string text = QueryOf(c.req, "job"); !text.empty()) {
    // seff's suggestions for one job.
    std::optional<core::JobId> id = ParseId(text);
    if (!id) return Error(Status::InvalidArgument("Invalid job id specified: " + text));
    net::HttpResponse r = GetJob(c.who, *id);
    if (r.status != 200) return r;
    const json record = json::parse(r.body);
    Result<slurm::UsageJob> job = slurm::UsageJobFromJson(record, now);
    if (!job.ok()) return Error(job.status());
    const slurm::SeffContext ctx{"", job->alloc_mem_mib};
    return JsonResponse(
        200, {{"job_id", *id}, {"suggestions", slurm::EfficiencySuggestions(job->view, ctx)}});
  }
  Result<std::pair<Time, Time>> period = Period(c.req, now);
  if (!period.ok()) return Error(period.status());
  Result<int> last = CountParam(c.req, "last", 0);
  if (!last.ok()) return Error(last.status());
  const auto [start, end] = *period;
  std::string user = QueryOf(c.req, "user");
  if (user.empty()) user = c.who.user;
  const bool by_name = !user.empty() && !std::isdigit(static_cast<unsigned char>(user[0]));
  // As the CLI: the window's end included (sacct's -E), the user's jobs by name.
  Result<std::vector<slurm::UsageJob>> jobs =
      ReportJobs([this](const net::HttpRequest& q) { return Accounting(q); }, start, end + 1,
                 by_name ? user : "", now);
  if (!jobs.ok()) return Error(jobs.status());
  return JsonResponse(200,
                      slurm::AdviceJson(slurm::MakeAdviceReport(*jobs, user, start, end, *last)));
}

}  // namespace berth::controller
