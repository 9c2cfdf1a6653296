// sinfo: nodes and partitions as Slurm 22.05's sinfo prints them (src/slurm/sinfo_view.h has
// the rules).
#include <cctype>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <ctime>
#include <thread>

#include "cli/client.h"
#include "cli/commands.h"
#include "common/strings.h"
#include "slurm/reservation.h"
#include "slurm/sinfo_view.h"
#include "slurm/view_options.h"

namespace berth::cli {
namespace {

using nlohmann::json;

constexpr const char* kProg = "sinfo";

slurm::OutputFormat BuildFormat(const slurm::SinfoOptions& o) {
  if (!o.percent_form) {
    slurm::OutputFormat f = slurm::ParseFieldList(o.format, 20);
    for (const std::string& bad : slurm::ReplaceUnknownFields(
             f, false, [](std::string_view k) { return slurm::IsSinfoFieldName(k); })) {
      std::fprintf(stderr, "sinfo: error: Invalid node format specification: %s\n", bad.c_str());
    }
    return f;
  }
  const bool all = ToLower(o.format) == "%all";
  slurm::OutputFormat f = slurm::ParsePercentFormat(all ? slurm::AllLettersFormat(true) : o.format);
  std::vector<std::string> bad = slurm::ReplaceUnknownFields(
      f, true, [](std::string_view k) { return slurm::IsSinfoLetter(k); });
  if (!all) {
    for (const std::string& b : bad) {
      std::fprintf(stderr, "Invalid node format specification: %s\n", b.c_str());
    }
  }
  return f;
}

// The jobs are needed only to say which GPUs are in use.
bool NeedsJobs(const slurm::SinfoOptions& o) {
  return o.json || (!o.percent_form && ToLower(o.format).find("gresused") != std::string::npos);
}

int Report(Client& c, const slurm::SinfoOptions& o, const slurm::OutputFormat& format) {
  Result<json> nodes = c.Call("GET", "/v1/nodes");
  if (!nodes.ok()) return Fail(kProg, nodes.status());
  Result<json> parts = c.Call("GET", "/v1/partitions");
  if (!parts.ok()) return Fail(kProg, parts.status());
  json jobs = nullptr;
  if (NeedsJobs(o)) {
    // Only jobs holding their nodes count (slurm::SinfoDataFromJson): not the pending ones.
    Result<json> j = c.Call("GET", "/v1/jobs?state=" + std::string(slurm::kNodeHoldingStates));
    if (!j.ok()) return Fail(kProg, j.status());
    jobs = std::move(j).value();
  }
  Result<slurm::SinfoData> data = slurm::SinfoDataFromJson(*nodes, *parts, jobs);
  if (!data.ok()) return Fail(kProg, data.status());
  if (o.json) {
    std::printf("%s\n", slurm::SinfoJson(*data).dump(2).c_str());
    return 0;
  }
  std::fputs(slurm::RenderSinfo(o, format, *data).c_str(), stdout);
  return 0;
}

}  // namespace

int SinfoMain(int argc, char** argv) {
  std::vector<std::string> args(argv, argv + argc);
  if (args.empty()) args.emplace_back();
  args[0] = kProg;  // getopt's messages name the program
  slurm::SinfoParse parsed = slurm::ParseSinfoArgs(args, slurm::ProcessEnv());
  if (parsed.exit.done) return PrintParseExit(parsed.exit);
  const slurm::SinfoOptions& o = parsed.options;
  Status sort_ok = slurm::CheckSinfoSortKeys(slurm::ParseSortList(o.sort));
  if (!sort_ok.ok()) return Fail(kProg, sort_ok);
  slurm::OutputFormat format = BuildFormat(o);
  Result<std::unique_ptr<Client>> c = Client::Connect();
  if (!c.ok()) return Fail(kProg, c.status());
  if (o.reservations) {
    Result<json> list = (*c)->Call("GET", "/v1/reservations");
    if (!list.ok()) return Fail(kProg, list.status());
    std::fputs(
        slurm::FormatSinfoReservations(list->value("reservations", json::array()), o.no_header)
            .c_str(),
        stdout);
    return 0;
  }
  const int limit = slurm::IterationLimit();
  for (int i = 0;; ++i) {
    if (!o.no_header && !o.json && (o.iterate > 0 || o.long_list)) {
      std::fputs(slurm::DateLine().c_str(), stdout);
    }
    int rc = Report(**c, o, format);
    if (rc != 0 || o.iterate <= 0 || (limit > 0 && i + 1 >= limit)) return rc;
    std::fputs("\n", stdout);
    std::fflush(stdout);
    std::this_thread::sleep_for(std::chrono::seconds(o.iterate));
  }
}

}  // namespace berth::cli
