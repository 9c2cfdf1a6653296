// `berth sim`: replay a trace (or run a scenario) through the production scheduler core.
#include <getopt.h>
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

Replays a workload trace through berth's scheduler (the same core the controller runs) in
virtual time and reports waits, slowdowns and utilisation.

Trace formats (detected from the file, or --format): swf (Parallel Workloads Archive),
philly, itp, alibaba (GPU cluster CSVs), jsonl (berth's own job format; docs/formats/).

Options:
  --format F          swf | philly | itp | alibaba | jsonl
  --policy P          fcfs | easy | conservative | multifactor (default: easy; multifactor is
                      berth's full default configuration)
  --compare P1,P2,..  run several policies on the trace and print them side by side
  --config FILE       scheduler settings in berth's configuration format (SchedulerPolicy=,
                      BackfillDepth=, PriorityWeight*=, ...; docs/formats/cluster-config.md)
  --cluster FILE      the cluster, in the same format the controller reads
  --nodes N           a cluster of N identical nodes, with:
  --cpus-per-node C   (default 64)    --mem-per-node M   (default 512G)
  --gpus-per-node G   (default 0; 8 for GPU traces)      --gpu-type T
  --procs P           SWF: the pool size P (default: the header's MaxProcs, MaxNodes, or the
                      largest job); without --nodes/--cluster, SWF runs on one pool of P
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

// Returns 0 to go on, or the exit code to stop with.
int ParseArgs(int argc, char** argv, SimArgs& a) {
  enum {
    kFormat = 1000,
    kPolicy,
    kCompare,
    kConfig,
    kCluster,
    kNodes,
    kCpus,
    kMem,
    kGpus,
    kGpuType,
    kProcs,
    kSkipBad,
    kJson,
    kJobsOut,
    kPlot,
    kNoProgress,
    kScenario,
    kBootTime,
    kSuspendTime,
    kSuspendTimes,
    kPowerAll
  };
  static const option kOptions[] = {{"format", required_argument, nullptr, kFormat},
                                    {"policy", required_argument, nullptr, kPolicy},
                                    {"compare", required_argument, nullptr, kCompare},
                                    {"config", required_argument, nullptr, kConfig},
                                    {"cluster", required_argument, nullptr, kCluster},
                                    {"nodes", required_argument, nullptr, kNodes},
                                    {"cpus-per-node", required_argument, nullptr, kCpus},
                                    {"mem-per-node", required_argument, nullptr, kMem},
                                    {"gpus-per-node", required_argument, nullptr, kGpus},
                                    {"gpu-type", required_argument, nullptr, kGpuType},
                                    {"procs", required_argument, nullptr, kProcs},
                                    {"skip-bad", no_argument, nullptr, kSkipBad},
                                    {"json", no_argument, nullptr, kJson},
                                    {"jobs-out", required_argument, nullptr, kJobsOut},
                                    {"plot", required_argument, nullptr, kPlot},
                                    {"no-progress", no_argument, nullptr, kNoProgress},
                                    {"scenario", required_argument, nullptr, kScenario},
                                    {"boot-time", required_argument, nullptr, kBootTime},
                                    {"suspend-time", required_argument, nullptr, kSuspendTime},
                                    {"suspend-times", required_argument, nullptr, kSuspendTimes},
                                    {"power-all", no_argument, nullptr, kPowerAll},
                                    {"help", no_argument, nullptr, 'h'},
                                    {nullptr, 0, nullptr, 0}};
  optind = 1;
  opterr = 0;
  int c;
  auto fail = [](const Status& st) {
    std::fprintf(stderr, "berth sim: %s\n", st.message().c_str());
    return 2;
  };
  while ((c = getopt_long(argc, argv, "h", kOptions, nullptr)) != -1) {
    Result<int64_t> n = int64_t{0};
    switch (c) {
      case 'h':
        std::fputs(kUsage, stdout);
        return -1;
      case kFormat: {
        Result<sim::TraceFormat> f = sim::ParseTraceFormat(optarg);
        if (!f.ok()) return fail(f.status());
        a.format = *f;
        break;
      }
      case kPolicy:
        a.policies = {optarg};
        a.policy_given = true;
        break;
      case kCompare:
        a.policies = SplitNonEmpty(optarg);
        a.policy_given = true;
        break;
      case kConfig:
        a.config_file = optarg;
        break;
      case kCluster:
        a.cluster_file = optarg;
        break;
      case kNodes:
        n = ParsePositive("nodes", optarg);
        if (!n.ok()) return fail(n.status());
        a.nodes = *n;
        break;
      case kCpus:
        n = ParsePositive("cpus-per-node", optarg);
        if (!n.ok()) return fail(n.status());
        a.cpus_per_node = *n;
        break;
      case kMem:
        n = ParseMemoryMiB(optarg);
        if (!n.ok()) return fail(n.status().WithContext("--mem-per-node"));
        a.mem_per_node = *n;
        break;
      case kGpus: {
        char* end = nullptr;
        long long g = std::strtoll(optarg, &end, 10);
        if (end == optarg || *end || g < 0 || g > 64)
          return fail(Status::InvalidArgument("invalid --gpus-per-node value (0-64)"));
        a.gpus_per_node = g;
        break;
      }
      case kGpuType:
        a.gpu_type = optarg;
        break;
      case kProcs:
        n = ParsePositive("procs", optarg);
        if (!n.ok()) return fail(n.status());
        a.procs = *n;
        break;
      case kSkipBad:
        a.skip_bad = true;
        break;
      case kJson:
        a.json = true;
        break;
      case kJobsOut:
        a.jobs_out = optarg;
        break;
      case kPlot:
        a.plot_dir = optarg;
        break;
      case kNoProgress:
        a.progress = false;
        break;
      case kScenario:
        a.scenario = optarg;
        break;
      case kBootTime:
        n = ParsePositive("boot-time", optarg);
        if (!n.ok()) return fail(n.status());
        a.power.boot_time = *n;
        a.power.given = true;
        break;
      case kSuspendTime: {
        Result<Duration> d = ParseSuspendTime(optarg);
        if (!d.ok()) return fail(d.status().WithContext("--suspend-time"));
        a.power.suspend_time = *d;
        a.power.given = true;
        break;
      }
      case kSuspendTimes:
        a.suspend_times.clear();
        for (const std::string& item : SplitNonEmpty(optarg)) {
          Result<Duration> d = ParseSuspendTime(item.c_str());
          if (!d.ok()) return fail(d.status().WithContext("--suspend-times"));
          a.suspend_times.push_back(*d);
        }
        if (a.suspend_times.empty())
          return fail(Status::InvalidArgument("--suspend-times needs at least one value"));
        a.power.given = true;
        break;
      case kPowerAll:
        a.power.power_all = true;
        a.power.given = true;
        break;
      default:
        std::fprintf(stderr, "berth sim: unrecognized option '%s'\n%s", argv[optind - 1], kUsage);
        return 2;
    }
  }
  if (a.scenario.empty()) {
    if (optind != argc - 1) {
      std::fprintf(stderr, "berth sim: expected one trace file\n%s", kUsage);
      return 2;
    }
    a.trace = argv[optind];
  }
  if (a.policies.empty())
    return fail(Status::InvalidArgument("--compare needs at least one policy"));
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

  sim::ReadOptions ro;
  ro.format = args.format;
  ro.skip_bad = args.skip_bad;
  ro.procs = args.procs;
  Result<sim::Trace> trace = sim::ReadTrace(args.trace, ro);
  if (!trace.ok()) {
    std::fprintf(stderr, "berth sim: %s\n", trace.status().message().c_str());
    return 1;
  }
  Result<SimSetup> setup =
      MakeSimSetup(*trace, args.cluster_file, args.config_file, args.nodes, args.cpus_per_node,
                   args.mem_per_node, args.gpus_per_node, args.gpu_type);
  if (!setup.ok()) {
    std::fprintf(stderr, "berth sim: %s\n", setup.status().message().c_str());
    return 1;
  }
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
