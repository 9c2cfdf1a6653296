// sstat: what berth measures of running jobs, as Slurm 22.05's sstat prints it
// (src/slurm/sstat_view.h has the rules).
#include <cstdio>

#include "cli/client.h"
#include "cli/commands.h"
#include "slurm/sstat_view.h"

namespace berth::cli {

int SstatMain(int argc, char** argv) {
  constexpr const char* kProg = "sstat";
  std::vector<std::string> args(argv, argv + argc);
  if (args.empty()) args.emplace_back();
  args[0] = kProg;  // getopt's messages name the program
  slurm::SstatParse parsed = slurm::ParseSstatArgs(args);
  if (parsed.exit.done) return PrintParseExit(parsed.exit);
  Result<std::unique_ptr<Client>> c = Client::Connect();
  if (!c.ok()) return Fail(kProg, c.status());
  Result<nlohmann::json> jobs = (*c)->Call("GET", "/v1/jobs?steps=1");
  if (!jobs.ok()) return Fail(kProg, jobs.status());
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
