// `berth sim`: replay a trace (or run a scenario) through the production scheduler core.
#include <unistd.h>

#include <cstdio>
#include <fstream>
#include <iterator>
#include <optional>
#include <sstream>
#include <string>
#include <string_view>
#include <vector>

#include "cli/commands.h"
#include "cli/option_table.h"
#include "cli/sim_fill.h"
#include "cli/sim_report.h"
#include "common/strings.h"
#include "common/units.h"
#include "sim/driver.h"
#include "sim/scenario.h"
#include "sim/trace.h"

namespace berth::cli {
namespace {

constexpr const char* kUsage = R"(Usage: berth sim TRACE [options]
       berth sim --scenario FILE
       berth sim POD_LIST --cluster NODE_LIST --fill [--placement P1,P2,..] [--seed S]

Replays a workload trace through berth's scheduler (the same core the controller runs) in
virtual time and reports waits, slowdowns and utilisation.

Trace formats (detected from the file, or --format): swf (Parallel Workloads Archive),
philly, itp, alibaba (GPU cluster CSVs), jsonl (berth's own job format; docs/formats/).

Options:
  --format F          swf | philly | itp | alibaba | jsonl
  --policy P          fcfs | easy | conservative | multifactor | las (default: easy;
                      multifactor is berth's full default configuration; las: least attained
                      service with preemption, docs/scheduling.md)
  --compare P1,P2,..  run several policies on the trace and print them side by side
  --config FILE       scheduler settings in berth's configuration format (SchedulerPolicy=,
                      BackfillDepth=, PriorityWeight*=, ...; docs/formats/cluster-config.md)
  --cluster FILE      the cluster, in the same format the controller reads, an openb node
                      list (sn,cpu_milli,memory_mib,gpu,model; needed by --fill) or the
                      Philly machine list (cluster_machine_list.csv, detected by its header)
  --nodes N           a cluster of N identical nodes, with:
  --cpus-per-node C   (default 64)    --mem-per-node M   (default 512G)
  --gpus-per-node G   (default 0; 8 for GPU traces)      --gpu-type T
  --procs P           SWF: the pool size P (default: the header's MaxProcs, MaxNodes, or the
                      largest job); without --nodes/--cluster, SWF runs on one pool of P
  --restart-delay S   a requeued job resumes where it stopped, S seconds later (its restart
                      cost; overrides LasRestartDelay, which the las policy sets to 30)
  --arrival-scale F   submit the trace's jobs F times as fast (every submission time divided
                      by F, run times kept): raises the load of a trace that barely queues
  --skip-bad          count and skip malformed trace lines instead of stopping
  --json              print one JSON object (an array with --compare)
  --jobs-out FILE     write one CSV line per job: id,submit,start,end,procs,gpus,nodes,state
  --plot DIR          write utilization.svg and wait_cdf.svg into DIR
  --boot-time S       power saving: seconds from a node's resume to its being up (default 120)
  --suspend-time S    power saving: seconds idle before a node powers down, or 'never'
                      (overrides the configuration's SuspendTime)
  --suspend-times L   run once per SuspendTime in L (e.g. 300,1800,3600,never) and print the
                      trade-off: waits against node-hours powered and boots
  --power-all         power saving: every node starts powered down (else only CLOUD nodes)
                      Power saving is modelled when the configuration sets ResumeProgram or
                      any of these four is given (docs/sim.md)
  --no-progress       no progress bar (it is shown only when stderr is a terminal anyway)
  --scenario FILE     run a scenario file and print its decision log (docs/formats/scenario.md)
  --fill              the GPU fill experiment: the pods of an openb pod list arrive and never
                      leave; report the GPUs left unallocated at 80-130% arrived GPU demand
                      (docs/sim.md); with --json, --plot DIR (fill_LIST.svg)
  --placement L       --fill: GPU placement policies, of first-fit, best-fit, dot-product,
                      gpu-packing, fgd (default: all five)
  --seed S            --fill: the seed of the draws once the list runs out (default 1)
  -h, --help          this text
)";

struct SimArgs {
  std::string trace;
  std::string scenario;
  std::optional<sim::TraceFormat> format;
  std::vector<std::string> policies = {"easy"};
  bool policy_given = false;
  std::string config_file;
  std::string cluster_file;
  int64_t nodes = 0;
  int64_t cpus_per_node = 64;
  int64_t mem_per_node = 512 * 1024;
  int64_t gpus_per_node = -1;
  std::string gpu_type;
  int64_t procs = 0;
  bool skip_bad = false;
  bool json = false;
  std::string jobs_out;
  std::string plot_dir;
  bool progress = true;
  PowerFlags power;
  std::vector<Duration> suspend_times;  // --suspend-times (-1: never)
  bool fill = false;                    // --fill (sim_fill.h)
  std::string placements;               // --placement
  int64_t seed = 1;                     // --seed
  std::optional<Duration> restart_delay;
  double arrival_scale = 1;
};

// A SuspendTime: seconds >= 0, or "never" / -1.
Result<Duration> ParseSuspendTime(const char* v) {
  if (std::string_view(v) == "never" || std::string_view(v) == "-1") return Duration{-1};
  char* end = nullptr;
  long long n = std::strtoll(v, &end, 10);
  if (end == v || *end != '\0' || n < 0) {
    return Status::InvalidArgument(std::string("invalid SuspendTime '") + v +
                                   "' (seconds, or 'never')");
  }
  return static_cast<Duration>(n);
}

Result<int64_t> ParsePositive(const char* opt, const char* v) {
  char* end = nullptr;
  long long n = std::strtoll(v, &end, 10);
  if (end == v || *end != '\0' || n <= 0) {
    return Status::InvalidArgument(std::string("invalid --") + opt + " value '" + v + "'");
  }
  return static_cast<int64_t>(n);
}

// An option that sets an int64 member to a positive value.
LongOption<SimArgs> PositiveOption(const char* name, int64_t SimArgs::*field) {
  return {name, true, [name, field](SimArgs& a, const char* v) -> Status {
            BERTH_ASSIGN_OR_RETURN(a.*field, ParsePositive(name, v));
            return Status::Ok();
          }};
}

Status ApplyFormat(SimArgs& a, const char* v) {
  BERTH_ASSIGN_OR_RETURN(a.format, sim::ParseTraceFormat(v));
  return Status::Ok();
}

Status ApplyPolicy(SimArgs& a, const char* v) {
  a.policies = {v};
  a.policy_given = true;
  return Status::Ok();
}

Status ApplyCompare(SimArgs& a, const char* v) {
  a.policies = SplitNonEmpty(v);
  a.policy_given = true;
  return Status::Ok();
}

Status ApplyMemPerNode(SimArgs& a, const char* v) {
  Result<int64_t> n = ParseMemoryMiB(v);
  if (!n.ok()) return n.status().WithContext("--mem-per-node");
  a.mem_per_node = *n;
  return Status::Ok();
}

Status ApplyGpusPerNode(SimArgs& a, const char* v) {
  char* end = nullptr;
  long long g = std::strtoll(v, &end, 10);
  if (end == v || *end || g < 0 || g > 64) {
    return Status::InvalidArgument("invalid --gpus-per-node value (0-64)");
  }
  a.gpus_per_node = g;
  return Status::Ok();
}

Status ApplyBootTime(SimArgs& a, const char* v) {
  BERTH_ASSIGN_OR_RETURN(a.power.boot_time, ParsePositive("boot-time", v));
  a.power.given = true;
  return Status::Ok();
}

Status ApplySuspendTime(SimArgs& a, const char* v) {
  Result<Duration> d = ParseSuspendTime(v);
  if (!d.ok()) return d.status().WithContext("--suspend-time");
  a.power.suspend_time = *d;
  a.power.given = true;
  return Status::Ok();
}

Status ApplySuspendTimes(SimArgs& a, const char* v) {
  a.suspend_times.clear();
  for (const std::string& item : SplitNonEmpty(v)) {
    Result<Duration> d = ParseSuspendTime(item.c_str());
    if (!d.ok()) return d.status().WithContext("--suspend-times");
    a.suspend_times.push_back(*d);
  }
  if (a.suspend_times.empty()) {
    return Status::InvalidArgument("--suspend-times needs at least one value");
  }
  a.power.given = true;
  return Status::Ok();
}

Status ApplyRestartDelay(SimArgs& a, const char* v) {
  char* end = nullptr;
  long long n = std::strtoll(v, &end, 10);
  if (end == v || *end != '\0' || n < 0 || n > 365LL * 86400) {
    return Status::InvalidArgument(std::string("invalid --restart-delay value '") + v +
                                   "' (seconds >= 0)");
  }
  a.restart_delay = static_cast<Duration>(n);
  return Status::Ok();
}

Status ApplyArrivalScale(SimArgs& a, const char* v) {
  char* end = nullptr;
  double f = std::strtod(v, &end);
  if (end == v || *end != '\0' || !(f > 0) || f > 1e6) {
    return Status::InvalidArgument(std::string("invalid --arrival-scale value '") + v +
                                   "' (a number > 0)");
  }
  a.arrival_scale = f;
  return Status::Ok();
}

Status ApplyPowerAll(SimArgs& a, const char*) {
  a.power.power_all = true;
  a.power.given = true;
  return Status::Ok();
}

const std::vector<LongOption<SimArgs>>& SimOptions() {
  using A = SimArgs;
  static const std::vector<LongOption<A>> kTable = {
      {"format", true, ApplyFormat},
      {"policy", true, ApplyPolicy},
      {"compare", true, ApplyCompare},
      StringOption("config", &A::config_file),
      StringOption("cluster", &A::cluster_file),
      PositiveOption("nodes", &A::nodes),
      PositiveOption("cpus-per-node", &A::cpus_per_node),
      {"mem-per-node", true, ApplyMemPerNode},
      {"gpus-per-node", true, ApplyGpusPerNode},
      StringOption("gpu-type", &A::gpu_type),
      PositiveOption("procs", &A::procs),
      FlagOption("skip-bad", &A::skip_bad, true),
      FlagOption("json", &A::json, true),
      StringOption("jobs-out", &A::jobs_out),
      StringOption("plot", &A::plot_dir),
      FlagOption("no-progress", &A::progress, false),
      StringOption("scenario", &A::scenario),
      {"boot-time", true, ApplyBootTime},
      {"suspend-time", true, ApplySuspendTime},
      {"suspend-times", true, ApplySuspendTimes},
      {"power-all", false, ApplyPowerAll},
      FlagOption("fill", &A::fill, true),
      StringOption("placement", &A::placements),
      PositiveOption("seed", &A::seed),
      {"restart-delay", true, ApplyRestartDelay},
      {"arrival-scale", true, ApplyArrivalScale},
  };
  return kTable;
}

// Returns 0 to go on, -1 to exit 0 (--help), or the exit code to stop with.
int ParseArgs(int argc, char** argv, SimArgs& a) {
  OptionsOutcome parsed = ParseOptionTable(argc, argv, SimOptions(), a);
  switch (parsed.kind) {
    case OptionsOutcome::Kind::kHelp:
      std::fputs(kUsage, stdout);
      return -1;
    case OptionsOutcome::Kind::kBadValue:
      std::fprintf(stderr, "berth sim: %s\n", parsed.error.message().c_str());
      return 2;
    case OptionsOutcome::Kind::kUnknownOption:
      std::fprintf(stderr, "berth sim: unrecognized option '%s'\n%s", parsed.unknown.c_str(),
                   kUsage);
      return 2;
    case OptionsOutcome::Kind::kOk:
      break;
  }
  if (a.scenario.empty()) {
    if (parsed.operands.size() != 1) {
      std::fprintf(stderr, "berth sim: expected one trace file\n%s", kUsage);
      return 2;
    }
    a.trace = parsed.operands.front();
  }
  if (a.policies.empty()) {
    std::fprintf(stderr, "berth sim: --compare needs at least one policy\n");
    return 2;
  }
  return 0;
}

Result<std::string> ReadFile(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) return Status::NotFound("cannot open " + path);
  return std::string(std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>());
}

int RunScenarioFile(const std::string& path) {
  Result<std::string> text = ReadFile(path);
  if (!text.ok()) {
    std::fprintf(stderr, "berth sim: %s\n", text.status().message().c_str());
    return 1;
  }
  Result<std::string> log = sim::RunScenario(*text, path);
  if (!log.ok()) {
    std::fprintf(stderr, "berth sim: %s\n", log.status().message().c_str());
    return 1;
  }
  std::fputs(log->c_str(), stdout);
  return 0;
}

}  // namespace

int SimMain(int argc, char** argv) {
  SimArgs args;
  if (int rc = ParseArgs(argc, argv, args); rc != 0) return rc < 0 ? 0 : rc;
  if (!args.scenario.empty()) return RunScenarioFile(args.scenario);
  if (args.fill) {
    return RunFillCommand({args.trace, args.cluster_file, args.placements,
                           static_cast<uint64_t>(args.seed), args.json, args.plot_dir});
  }
  if (!args.placements.empty()) {
    std::fprintf(stderr, "berth sim: --placement applies to --fill only\n");
    return 2;
  }

  sim::ReadOptions ro;
  ro.format = args.format;
  ro.skip_bad = args.skip_bad;
  ro.procs = args.procs;
  Result<sim::Trace> trace = sim::ReadTrace(args.trace, ro);
  if (!trace.ok()) {
    std::fprintf(stderr, "berth sim: %s\n", trace.status().message().c_str());
    return 1;
  }
  if (args.arrival_scale != 1) {
    for (sim::TraceJob& j : trace->jobs) {
      j.submit = static_cast<Time>(static_cast<double>(j.submit) / args.arrival_scale);
    }
  }
  Result<SimSetup> setup =
      MakeSimSetup(*trace, args.cluster_file, args.config_file, args.nodes, args.cpus_per_node,
                   args.mem_per_node, args.gpus_per_node, args.gpu_type);
  if (!setup.ok()) {
    std::fprintf(stderr, "berth sim: %s\n", setup.status().message().c_str());
    return 1;
  }
  setup->restart_delay = args.restart_delay;
  setup->node_lists = !args.jobs_out.empty();
  const sim::PowerOptions power = MakePowerOptions(*setup, args.power);
  // One run per policy, or with --suspend-times one per policy and SuspendTime.
  std::vector<std::optional<Duration>> suspend_times = {std::nullopt};
  if (!args.suspend_times.empty())
    suspend_times.assign(args.suspend_times.begin(), args.suspend_times.end());
  std::vector<PolicyOutcome> outcomes;
  for (const std::string& policy : args.policies) {
    for (const std::optional<Duration>& suspend : suspend_times) {
      sim::PowerOptions p = power;
      if (suspend) p.suspend_time = *suspend;
      Result<PolicyOutcome> o = RunPolicy(*trace, *setup, policy, args.policy_given,
                                          args.progress && isatty(STDERR_FILENO), p);
      if (!o.ok()) {
        std::fprintf(stderr, "berth sim: %s\n", o.status().message().c_str());
        return 1;
      }
      outcomes.push_back(std::move(*o));
    }
  }
  Status st = WriteOutputs(*trace, *setup, outcomes, args.json, args.jobs_out, args.plot_dir);
  if (!st.ok()) {
    std::fprintf(stderr, "berth sim: %s\n", st.message().c_str());
    return 1;
  }
  return 0;
}

}  // namespace berth::cli
