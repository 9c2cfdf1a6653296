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

#include "cli/client.h"
#include "cli/commands.h"
#include "common/strings.h"
#include "slurm/squeue_view.h"
#include "slurm/view_options.h"

namespace berth::cli {
namespace {

using nlohmann::json;

constexpr const char* kProg = "squeue";

slurm::OutputFormat BuildFormat(const slurm::SqueueOptions& o) {
  if (o.steps) {  // step fields: -o letters only
    slurm::OutputFormat f =
        o.percent_form ? slurm::ParsePercentFormat(o.format) : slurm::ParseFieldList(o.format, 20);
    for (const std::string& bad : slurm::ReplaceUnknownFields(
             f, o.percent_form, [](std::string_view k) { return slurm::IsStepLetter(k); })) {
      std::fprintf(stderr, "squeue: error: Invalid job step format specification: %s\n",
                   bad.c_str());
    }
    return f;
  }
  if (!o.percent_form) {
    slurm::OutputFormat f = slurm::ParseFieldList(o.format, 20);
    for (const std::string& bad : slurm::ReplaceUnknownFields(
             f, false, [](std::string_view k) { return slurm::IsJobFieldName(k); })) {
      std::fprintf(stderr, "squeue: error: Invalid job format specification: %s\n", bad.c_str());
    }
    return f;
  }
  const bool all = ToLower(o.format) == "%all";
  slurm::OutputFormat f = slurm::ParsePercentFormat(all ? slurm::AllLettersFormat() : o.format);
  std::vector<std::string> bad = slurm::ReplaceUnknownFields(
      f, true, [](std::string_view k) { return slurm::IsJobLetter(k); });
  if (!all) {
    for (const std::string& b : bad) {
      std::fprintf(stderr, "squeue: error: Invalid job format specification: %s\n", b.c_str());
    }
  }
  return f;
}

bool UsesCluster(const slurm::SqueueOptions& o) {
  return o.json || (!o.percent_form && ToLower(o.format).find("cluster") != std::string::npos);
}

std::map<std::string, int64_t> PartitionTiers(Client& c) {
  std::map<std::string, int64_t> tiers;
  Result<json> r = c.Call("GET", "/v1/partitions");
  if (!r.ok() || !r->contains("partitions")) return tiers;
  for (const json& p : r->at("partitions")) {
    if (p.contains("name") && p.at("name").is_string()) {
      tiers[p.at("name").get<std::string>()] = p.value("priority_tier", int64_t{1});
    }
  }
  return tiers;
}

// One report: what squeue prints once (or each -i period).
int Report(Client& c, const slurm::SqueueOptions& o, const slurm::OutputFormat& format,
           const slurm::SqueueContext& ctx) {
  // Without -t squeue shows no ended job: the controller leaves them out (of a list that holds
  // every job ended in the last MinJobAge, and would be parsed only to be dropped).
  const bool ended_too = o.json || !o.filter.states.empty();
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
  // The list is read one record at a time (no tree of the whole answer: most of the time at
  // 10,000 jobs went there).
  Result<std::string> text = c.CallText("GET", ended_too ? "/v1/jobs?all=1" : "/v1/jobs");
  if (!text.ok()) return Fail(kProg, text.status());
  // As squeue 22.05, --json ignores filters and formats and lists every job it knows.
  Result<std::vector<slurm::SqueueRow>> listed =
      slurm::SqueueRowsFromList(*text, ctx.now, !o.json && o.array_tasks);
  if (!listed.ok()) {
    return Fail(kProg, Status::Internal("the controller's job list: " + listed.status().message()));
  }
  std::vector<slurm::SqueueRow> rows = std::move(listed).value();
  text->clear();
  text->shrink_to_fit();
  if (o.json) {
    std::printf("%s\n", slurm::SqueueJson(rows, ctx).dump(2).c_str());
    return 0;
  }
  if (o.per_partition) rows = slurm::SplitByPartition(std::move(rows), PartitionTiers(c));
  rows = slurm::FilterRows(std::move(rows), o.filter);
  slurm::SortRows(rows, slurm::ParseSortList(o.sort, {"cluster"}), ctx.now);
  std::fputs(slurm::RenderSqueue(format, o.percent_form, rows, o.no_header, ctx).c_str(), stdout);
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
  slurm::OutputFormat format = BuildFormat(o);
  Result<std::unique_ptr<Client>> c = Client::Connect();
  if (!c.ok()) return Fail(kProg, c.status());
  slurm::SqueueContext ctx;
  if (UsesCluster(o)) ctx.cluster = ClusterName(**c);
  const int limit = slurm::IterationLimit();
  for (int i = 0;; ++i) {
    if (!o.no_header && !o.json && (o.iterate > 0 || o.long_list)) {
      std::fputs(slurm::DateLine().c_str(), stdout);
    }
    ctx.now = std::time(nullptr);
    int rc = Report(**c, o, format, ctx);
    if (rc != 0 || o.iterate <= 0 || (limit > 0 && i + 1 >= limit)) return rc;
    std::fputs("\n", stdout);
    std::fflush(stdout);
    std::this_thread::sleep_for(std::chrono::seconds(o.iterate));
  }
}

}  // namespace berth::cli
