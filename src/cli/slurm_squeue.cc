// squeue: the queue as Slurm 22.05's squeue prints it (src/slurm/squeue_view.h has the rules).
#include <unistd.h>

#include <cctype>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <ctime>
#include <map>
#include <string>
#include <thread>
#include <utility>
#include <vector>

#include "api/json_scan.h"
#include "cli/client.h"
#include "cli/commands.h"
#include "common/strings.h"
#include "slurm/squeue_view.h"
#include "slurm/view_options.h"

namespace berth::cli {
namespace {

using nlohmann::json;

constexpr const char* kProg = "squeue";

bool UsesCluster(const slurm::SqueueOptions& o) {
  return o.json || (!o.percent_form && ToLower(o.format).find("cluster") != std::string::npos);
}

std::map<std::string, int64_t> PartitionTiers(Client& c) {
  Result<json> r = c.Call("GET", "/v1/partitions");
  if (!r.ok() || !r->contains("partitions")) return {};
  return slurm::PartitionTiersOf(r->at("partitions"));
}

// The request that has the controller make squeue's lines where the jobs are (POST
// /v1/views/squeue): the same arguments and SQUEUE_* variables, parsed there the same way.
json ViewRequest(const std::vector<std::string>& args) {
  json env = json::object();
  for (auto& [name, value] : EnvironmentWithPrefix("SQUEUE_")) env[name] = std::move(value);
  const char* tz = std::getenv("TZ");
  const char* time_format = std::getenv("SLURM_TIME_FORMAT");
  return {{"args", json(std::vector<std::string>(args.begin() + 1, args.end()))},
          {"env", std::move(env)},
          {"uid", static_cast<uint32_t>(geteuid())},
          {"tz", tz == nullptr ? "" : tz},
          {"time_format", time_format == nullptr ? "" : time_format}};
}

// One report: what squeue prints once (or each -i period).
int Report(Client& c, const slurm::SqueueOptions& o, const slurm::OutputFormat& format,
           const slurm::SqueueContext& ctx, json& view_request) {
  if (o.steps) {  // -s: the running jobs' steps
    Result<json> r = c.Call("GET", "/v1/jobs?state=RUNNING&steps=1");
    if (!r.ok()) return Fail(kProg, r.status());
    static const json kNoJobs = json::array();
    const json& jobs = r->contains("jobs") ? r->at("jobs") : kNoJobs;
    std::fputs(
        slurm::RenderSqueueSteps(format, slurm::SqueueStepRows(jobs, ctx.now, o.filter, o.step_ids),
                                 o.no_header, ctx.now)
            .c_str(),
        stdout);
    return 0;
  }
  if (!o.json && !view_request.is_null()) {
    // The lines, made by the controller from the jobs it holds (no list of records to read).
    // Printed as it comes: 100,000 lines are 8 MB, never held here whole.
    view_request["now"] = ctx.now;
    const Status printed =
        c.CallTo("POST", "/v1/views/squeue", view_request,
                 [](std::string_view data) { std::fwrite(data.data(), 1, data.size(), stdout); });
    if (printed.ok()) return 0;
    const StatusCode code = printed.code();
    if (code != StatusCode::kNotFound && code != StatusCode::kFailedPrecondition &&
        code != StatusCode::kAlreadyExists) {
      return Fail(kProg, printed);
    }
    // A controller without the view, or in another time zone: the lines are made here.
    view_request = nullptr;
  }
  // Without -t squeue shows no ended job: the controller leaves them out (of a list that holds
  // every job ended in the last MinJobAge, and would be parsed only to be dropped). The records
  // come with their run specifications (work folder, command, output files: %Z, %o, --json).
  const bool ended_too = o.json || !o.filter.states.empty();
  // The list is read one record at a time (no tree of the whole answer).
  Result<std::string> text =
      c.CallText("GET", ended_too ? "/v1/jobs?exec=1&all=1" : "/v1/jobs?exec=1");
  if (!text.ok()) return Fail(kProg, text.status());
  if (o.json) {  // as squeue 22.05, --json ignores filters and formats: every job it knows
    Result<std::vector<slurm::SqueueRow>> listed = slurm::SqueueRowsFromList(*text, ctx.now, false);
    if (!listed.ok()) {
      return Fail(kProg,
                  Status::Internal("the controller's job list: " + listed.status().message()));
    }
    std::printf("%s\n", slurm::SqueueJson(*listed, ctx).dump(2).c_str());
    return 0;
  }
  std::map<std::string, int64_t> tiers;
  if (o.per_partition) tiers = PartitionTiers(c);
  slurm::SqueueTableBuilder table(o, format, std::move(tiers), ctx);
  if (Result<size_t> n = api::CountArrayItems(*text, "jobs"); n.ok()) table.Reserve(*n);
  Status walked = api::ForEachArrayValue(*text, "jobs", [&](const json& record) {
    Result<slurm::JobView> v = slurm::JobViewFromJson(record, ctx.now);
    if (v.ok()) table.Add(std::move(v).value());
  });
  if (!walked.ok()) {
    return Fail(kProg, Status::Internal("the controller's job list: " + walked.message()));
  }
  text->clear();
  text->shrink_to_fit();
  table.FinishTo(
      [](std::string_view piece) { std::fwrite(piece.data(), 1, piece.size(), stdout); });
  return 0;
}

}  // namespace

int SqueueMain(int argc, char** argv) {
  std::vector<std::string> args(argv, argv + argc);
  if (args.empty()) args.emplace_back();
  args[0] = kProg;  // getopt's messages name the program
  slurm::SqueueParse parsed =
      slurm::ParseSqueueArgs(args, slurm::ProcessEnv(), static_cast<uint32_t>(geteuid()));
  std::fputs(parsed.warnings.c_str(), stderr);
  if (parsed.exit.done) return PrintParseExit(parsed.exit);
  const slurm::SqueueOptions& o = parsed.options;
  Status sort_ok = slurm::CheckSortKeys(slurm::ParseSortList(o.sort, {"cluster"}));
  if (!sort_ok.ok()) return Fail(kProg, sort_ok);
  std::string format_errors;
  slurm::OutputFormat format = slurm::SqueueFormat(o, &format_errors);
  std::fputs(format_errors.c_str(), stderr);
  Result<std::unique_ptr<Client>> c = Client::Connect();
  if (!c.ok()) return Fail(kProg, c.status());
  slurm::SqueueContext ctx;
  if (UsesCluster(o)) ctx.cluster = ClusterName(**c);
  if (const char* tf = std::getenv("SLURM_TIME_FORMAT")) ctx.time_format = tf;
  json view_request = ViewRequest(args);
  const int limit = slurm::IterationLimit();
  for (int i = 0;; ++i) {
    if (!o.no_header && !o.json && (o.iterate > 0 || o.long_list)) {
      std::fputs(slurm::DateLine().c_str(), stdout);
    }
    ctx.now = std::time(nullptr);
    int rc = Report(**c, o, format, ctx, view_request);
    if (rc != 0 || o.iterate <= 0 || (limit > 0 && i + 1 >= limit)) return rc;
    std::fputs("\n", stdout);
    std::fflush(stdout);
    std::this_thread::sleep_for(std::chrono::seconds(o.iterate));
  }
}

}  // namespace berth::cli
