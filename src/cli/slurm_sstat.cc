// sstat: what berth measures of running jobs, as Slurm 22.05's sstat prints it
// (src/slurm/sstat_view.h has the rules).
#include <cstdio>
#include <optional>
#include <string>
#include <vector>

#include "cli/client.h"
#include "cli/commands.h"
#include "core/model/job_state.h"
#include "slurm/sstat_view.h"

namespace berth::cli {
namespace {

// A job record whose state is an end state.
bool Ended(const nlohmann::json& record) {
  if (!record.is_object() || !record.contains("state") || !record.at("state").is_string()) {
    return false;
  }
  std::optional<core::JobState> s = core::ParseJobState(record.at("state").get<std::string>());
  return s.has_value() && core::IsTerminal(*s);
}

}  // namespace

int SstatMain(int argc, char** argv) {
  constexpr const char* kProg = "sstat";
  std::vector<std::string> args(argv, argv + argc);
  if (args.empty()) args.emplace_back();
  args[0] = kProg;  // getopt's messages name the program
  slurm::SstatParse parsed = slurm::ParseSstatArgs(args);
  if (parsed.exit.done) return PrintParseExit(parsed.exit);
  Result<std::unique_ptr<Client>> c = Client::Connect();
  if (!c.ok()) return Fail(kProg, c.status());
  // Only the jobs asked for (an id filter also lists ended jobs: they are left out, as the
  // unfiltered list leaves them, so that sstat says it could not get their steps).
  std::string ids;
  for (const slurm::SstatJobId& id : parsed.options.jobs) {
    ids += (ids.empty() ? "" : ",") + std::to_string(id.job);
  }
  Result<nlohmann::json> jobs = (*c)->Call("GET", "/v1/jobs?steps=1&ids=" + ids);
  if (!jobs.ok()) return Fail(kProg, jobs.status());
  if (jobs->contains("jobs") && jobs->at("jobs").is_array()) {
    std::erase_if(jobs->at("jobs").get_ref<nlohmann::json::array_t&>(), Ended);
  }
  Result<nlohmann::json> usage = (*c)->Call("GET", "/v1/usage/jobs");
  if (!usage.ok()) return Fail(kProg, usage.status());
  Result<std::vector<slurm::SstatJob>> data = slurm::SstatJobsFromJson(*jobs, *usage);
  if (!data.ok()) return Fail(kProg, data.status());
  slurm::SstatOutput out = slurm::RenderSstat(parsed.options, *data);
  std::fputs(out.out.c_str(), stdout);
  std::fputs(out.err.c_str(), stderr);
  return 0;
}

}  // namespace berth::cli
