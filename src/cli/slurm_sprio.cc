// sprio: pending jobs' priorities and their factors, as Slurm 22.05's sprio prints them
// (src/slurm/sprio_view.h has the rules).
#include <cctype>
#include <cstdio>

#include "cli/client.h"
#include "cli/commands.h"
#include "slurm/sprio_view.h"

namespace berth::cli {

int SprioMain(int argc, char** argv) {
  constexpr const char* kProg = "sprio";
  std::vector<std::string> args(argv, argv + argc);
  if (args.empty()) args.emplace_back();
  args[0] = kProg;  // getopt's messages name the program
  slurm::SprioParse parsed = slurm::ParseSprioArgs(args, slurm::ProcessEnv());
  if (parsed.exit.done) return PrintParseExit(parsed.exit);
  const slurm::SprioOptions& o = parsed.options;
  Status sort_ok = slurm::CheckSprioSortKeys(slurm::ParseSortList(o.sort));
  if (!sort_ok.ok()) return Fail(kProg, sort_ok);
  Result<std::unique_ptr<Client>> c = Client::Connect();
  if (!c.ok()) return Fail(kProg, c.status());
  Result<nlohmann::json> body = (*c)->Call("GET", "/v1/priorities");
  if (!body.ok()) return Fail(kProg, body.status());
  Result<slurm::SprioData> data = slurm::SprioDataFromJson(*body);
  if (!data.ok()) return Fail(kProg, data.status());
  if (!data->multifactor) {
    std::fprintf(stderr,
                 "You are not running a supported priority plugin\n(%s).\nOnly "
                 "'priority/multifactor' is supported.\n",
                 data->priority_type.c_str());
    return 1;
  }
  std::string text = o.format.empty() ? slurm::SprioDefaultFormat(o, *data) : o.format;
  slurm::OutputFormat format = slurm::ParsePercentFormat(text);
  for (const std::string& bad : slurm::ReplaceUnknownFields(
           format, true, [](std::string_view k) { return slurm::IsSprioLetter(k); })) {
    std::fprintf(stderr, "sprio: error: Invalid job format specification: %s\n", bad.c_str());
  }
  std::fputs(slurm::RenderSprio(o, format, *data).c_str(), stdout);
  return 0;
}

}  // namespace berth::cli
