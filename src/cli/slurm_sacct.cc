// sacct: Slurm's accounting report, made by the controller (POST /v1/views/sacct) or, from an
// older controller or one in another time zone, here over GET /v1/accounting/jobs (the logic
// and layout are in src/slurm/sacct_view.h).
#include <pwd.h>
#include <unistd.h>

#include <cstdio>
#include <cstdlib>
#include <ctime>
#include <string>
#include <vector>

#include "cli/client.h"
#include "cli/commands.h"
#include "slurm/sacct_view.h"

namespace berth::cli {
namespace {

using nlohmann::json;

slurm::SacctCaller Caller() {
  slurm::SacctCaller c;
  c.uid = getuid();
  struct passwd pw, *found = nullptr;
  char buf[4096];
  if (getpwuid_r(c.uid, &pw, buf, sizeof(buf), &found) == 0 && found) c.user = found->pw_name;
  return c;
}

}  // namespace

int SacctMain(int argc, char** argv) {
  std::vector<std::string> args(argv, argv + argc);
  if (!args.empty()) args[0] = "sacct";  // getopt's messages name the program
  const Time now = std::time(nullptr);
  const char* format_env = std::getenv("SACCT_FORMAT");
  slurm::SacctParse parsed = slurm::ParseSacctArgs(args, now, format_env ? format_env : "");
  if (parsed.done) return PrintParseExit(parsed);
  const slurm::SacctOptions& opt = parsed.options;
  if (opt.version) {
    std::printf("slurm 22.05 (berth %s)\n", BERTH_VERSION);
    return 0;
  }
  Result<std::unique_ptr<Client>> c = Client::Connect();
  if (!c.ok()) return Fail("sacct", c.status());
  const slurm::SacctCaller caller = Caller();
  {
    // The report made by the controller from its records (only the window's rows read there,
    // only the report sent).
    const char* tz = std::getenv("TZ");
    json env = json::object();
    if (format_env != nullptr) env["SACCT_FORMAT"] = format_env;
    json view = {{"args", json(std::vector<std::string>(args.begin() + 1, args.end()))},
                 {"env", std::move(env)},
                 {"uid", caller.uid},
                 {"user", caller.user},
                 {"now", now},
                 {"tz", tz == nullptr ? "" : tz}};
    Result<std::string> text = (*c)->CallText("POST", "/v1/views/sacct", view);
    if (text.ok()) {
      std::fwrite(text->data(), 1, text->size(), stdout);
      return 0;
    }
    // A controller without the view, or in another time zone: the report is made here.
    const StatusCode code = text.status().code();
    if (code != StatusCode::kNotFound && code != StatusCode::kFailedPrecondition) {
      return Fail("sacct", text.status());
    }
  }
  const Time from = slurm::SacctWindowStart(opt, now);
  Result<json> r = (*c)->Call("GET", "/v1/accounting/jobs?start=" + std::to_string(from));
  if (!r.ok()) return Fail("sacct", r.status());
  std::vector<slurm::SacctJob> jobs;
  if (r->contains("jobs") && r->at("jobs").is_array()) {
    for (const json& record : r->at("jobs")) {
      Result<slurm::SacctJob> j = slurm::SacctJobFromJson(record, now);
      if (j.ok()) jobs.push_back(std::move(*j));
    }
  }
  const std::string cluster = ClusterName(**c);
  std::vector<const slurm::SacctJob*> selected = slurm::SelectSacctJobs(opt, jobs, caller, now);
  if (opt.json) {
    std::printf("%s\n", slurm::SacctJson(selected, cluster, opt.allocations).dump(2).c_str());
  } else {
    std::fputs(slurm::RenderSacct(opt, selected, cluster).c_str(), stdout);
  }
  return 0;
}

}  // namespace berth::cli
