// berth report usage|advice: the usage review over GET /v1/accounting/jobs, the endpoint sacct
// reads (the logic and layouts are in src/slurm/usage_report.h and src/slurm/advice.h).
#include <pwd.h>
#include <unistd.h>

#include <cctype>
#include <cstdio>
#include <ctime>
#include <string>
#include <vector>

#include "cli/client.h"
#include "cli/commands.h"
#include "slurm/advice.h"
#include "slurm/report_options.h"
#include "slurm/usage_report.h"

namespace berth::cli {
namespace {

using nlohmann::json;

constexpr const char* kProg = "berth report";

// The caller's user name (the uid as text when the passwd database has none).
std::string CallerName() {
  struct passwd pw, *found = nullptr;
  char buf[4096];
  if (getpwuid_r(getuid(), &pw, buf, sizeof(buf), &found) == 0 && found) return found->pw_name;
  return std::to_string(getuid());
}

std::string QueryValue(const std::string& s) {
  std::string out;
  for (unsigned char c : s) {
    if (std::isalnum(c) || c == '-' || c == '_' || c == '.' || c == ',') {
      out += static_cast<char>(c);
    } else {
      char hex[4];
      std::snprintf(hex, sizeof(hex), "%%%02X", c);
      out += hex;
    }
  }
  return out;
}

// The jobs that ended at or after `start` (and before `end` when given), parsed; records that do
// not parse are skipped, as sacct skips them.
Result<std::vector<slurm::UsageJob>> FetchFinished(Client& client, Time start, Time end,
                                                   const std::string& user, Time now) {
  std::string target = "/v1/accounting/jobs?start=" + std::to_string(start);
  if (end != kNoTime) target += "&end=" + std::to_string(end);
  if (!user.empty()) target += "&user=" + QueryValue(user);
  BERTH_ASSIGN_OR_RETURN(json r, client.Call("GET", target));
  std::vector<slurm::UsageJob> jobs;
  if (r.contains("jobs") && r.at("jobs").is_array()) {
    for (const json& record : r.at("jobs")) {
      Result<slurm::UsageJob> j = slurm::UsageJobFromJson(record, now);
      if (j.ok()) jobs.push_back(std::move(*j));
    }
  }
  return jobs;
}

int Usage(const slurm::ReportOptions& o, Client& client, Time now) {
  // A job that ended after the period may have run inside it: no upper bound on the end.
  Result<std::vector<slurm::UsageJob>> all = FetchFinished(client, o.start, kNoTime, "", now);
  if (!all.ok()) return Fail(kProg, all.status());
  const slurm::UsageSelection who{static_cast<uint32_t>(getuid()), o.users, o.accounts,
                                  o.all_users};
  std::vector<slurm::UsageJob> jobs;
  for (slurm::UsageJob& j : *all) {
    if (slurm::Selected(who, j.view)) jobs.push_back(std::move(j));
  }
  const slurm::UsageReport r = slurm::ComputeUsage(jobs, o.start, o.end, o.top);
  if (o.format == slurm::ReportFormat::kJson) {
    std::printf("%s\n", slurm::UsageJson(r).dump(2).c_str());
  } else {
    std::fputs(slurm::RenderUsage(r, o.format, o.noheader).c_str(), stdout);
  }
  return 0;
}

int Advice(const slurm::ReportOptions& o, Client& client, Time now) {
  const std::string user = o.user.empty() ? CallerName() : o.user;
  // A uid is matched on the client side (the endpoint's filter takes names).
  const bool by_name = !user.empty() && !std::isdigit(static_cast<unsigned char>(user[0]));
  // The endpoint's end is exclusive; the advice's is not.
  Result<std::vector<slurm::UsageJob>> all =
      FetchFinished(client, o.start, o.end + 1, by_name ? user : "", now);
  if (!all.ok()) return Fail(kProg, all.status());
  const slurm::AdviceReport r = slurm::MakeAdviceReport(*all, user, o.start, o.end, o.last);
  if (o.format == slurm::ReportFormat::kJson) {
    std::printf("%s\n", slurm::AdviceJson(r).dump(2).c_str());
  } else {
    std::fputs(slurm::RenderAdvice(r, o.format, o.noheader).c_str(), stdout);
  }
  return 0;
}

}  // namespace

int ReportMain(int argc, char** argv) {
  std::vector<std::string> args(argv, argv + argc);
  if (!args.empty()) args[0] = "report";
  const Time now = std::time(nullptr);
  slurm::ReportParse p = slurm::ParseReportArgs(args, now);
  if (p.exit.done) {
    std::fputs(p.exit.out.c_str(), stdout);
    std::fputs(p.exit.err.c_str(), stderr);
    return p.exit.exit_code;
  }
  Result<std::unique_ptr<Client>> c = Client::Connect();
  if (!c.ok()) return Fail(kProg, c.status());
  return p.options.kind == slurm::ReportKind::kUsage ? Usage(p.options, **c, now)
                                                     : Advice(p.options, **c, now);
}

}  // namespace berth::cli
