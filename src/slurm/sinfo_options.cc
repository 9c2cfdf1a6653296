// sinfo's command line (Slurm 22.05 src/sinfo/opts.c): options, environment variables, the
// default format of each mode, and the messages of bad input.
#include <charconv>

#include "common/hostlist.h"
#include "common/strings.h"
#include "slurm/sinfo_view.h"

namespace berth::slurm {
namespace {

constexpr int kHelp = 0x100;
constexpr int kUsage = 0x101;
constexpr int kHide = 0x102;
constexpr int kLocal = 0x103;
constexpr int kNoConvert = 0x104;
constexpr int kFederation = 0x105;
constexpr int kJson = 0x106;
constexpr int kYaml = 0x107;

const struct option kLongOptions[] = {
    {"all", no_argument, nullptr, 'a'},
    {"dead", no_argument, nullptr, 'd'},
    {"exact", no_argument, nullptr, 'e'},
    {"federation", no_argument, nullptr, kFederation},
    {"help", no_argument, nullptr, kHelp},
    {"hide", no_argument, nullptr, kHide},
    {"iterate", required_argument, nullptr, 'i'},
    {"json", no_argument, nullptr, kJson},
    {"local", no_argument, nullptr, kLocal},
    {"long", no_argument, nullptr, 'l'},
    {"cluster", required_argument, nullptr, 'M'},
    {"clusters", required_argument, nullptr, 'M'},
    {"nodes", required_argument, nullptr, 'n'},
    {"noconvert", no_argument, nullptr, kNoConvert},
    {"noheader", no_argument, nullptr, 'h'},
    {"Node", no_argument, nullptr, 'N'},
    {"format", required_argument, nullptr, 'o'},
    {"Format", required_argument, nullptr, 'O'},
    {"partition", required_argument, nullptr, 'p'},
    {"responding", no_argument, nullptr, 'r'},
    {"list-reasons", no_argument, nullptr, 'R'},
    {"summarize", no_argument, nullptr, 's'},
    {"sort", required_argument, nullptr, 'S'},
    {"states", required_argument, nullptr, 't'},
    {"reservation", no_argument, nullptr, 'T'},
    {"usage", no_argument, nullptr, kUsage},
    {"verbose", no_argument, nullptr, 'v'},
    {"version", no_argument, nullptr, 'V'},
    {"yaml", no_argument, nullptr, kYaml},
    {nullptr, 0, nullptr, 0},
};
constexpr const char* kShortOptions = "adehi:lM:n:No:O:p:rRsS:t:TvV";

constexpr const char* kUsageText =
    "Usage: sinfo [-adelNRrsTv] [-i seconds] [-t states] [-p partition] [-n nodes]\n"
    "             [-S fields] [-o format] [-O Format] [--federation] [--local]\n";

constexpr const char* kHelpText =
    "Usage: sinfo [OPTIONS]\n"
    "  -a, --all                  show all partitions (including hidden and those\n"
    "                             not accessible)\n"
    "  -d, --dead                 show only non-responding nodes\n"
    "  -e, --exact                group nodes only on exact match of configuration\n"
    "  -h, --noheader             no headers on output\n"
    "  --hide                     do not show hidden or non-accessible partitions\n"
    "  -i, --iterate=seconds      specify an iteration period\n"
    "      --json                 Produce JSON output\n"
    "  -l, --long                 long output - displays more information\n"
    "  -n, --nodes=NODES          report on specific node(s)\n"
    "  -N, --Node                 Node-centric format\n"
    "  -o, --format=format        format specification\n"
    "  -O, --Format=format        long format specification\n"
    "  -p, --partition=PARTITION  report on specific partition\n"
    "  -r, --responding           report only responding nodes\n"
    "  -R, --list-reasons         list reason nodes are down or drained\n"
    "  -s, --summarize            report state summary only\n"
    "  -S, --sort=fields          comma separated list of fields to sort on\n"
    "  -t, --states=node_state    specify the what states of nodes to view\n"
    "  -T, --reservation          show only reservation information\n"
    "  -v, --verbose              verbosity level\n"
    "  -V, --version              output version information and exit\n"
    "\nHelp options:\n"
    "  --help                     show this help message\n"
    "  --usage                    display brief usage message\n";

constexpr const char* kTryHelp = "Try \"sinfo --help\" for more information\n";

std::string Error(const std::string& m) {
  return "sinfo: error: " + m + "\n";
}

struct Parser {
  SinfoParse result;
  SinfoOptions& o = result.options;
  std::string format, states;
  bool long_form = false, all = false, partition_given = false;
  std::optional<ParseExit> stop;

  bool Fail(std::string err) {
    stop = ExitWith(1, std::move(err));
    return false;
  }

  bool Option(int c, const char* arg) {
    const std::string value = arg != nullptr ? arg : "";
    switch (c) {
      case 'a':
        all = true;
        o.partitions.clear();
        break;
      case 'd':
        o.dead = true;
        break;
      case 'e':
        o.exact = true;
        break;
      case 'h':
        o.no_header = true;
        break;
      case 'i': {
        int n = 0;
        auto [p, ec] = std::from_chars(value.data(), value.data() + value.size(), n);
        (void)p;
        if (ec != std::errc() || n <= 0) {
          return Fail(Error("Error: invalid entry for --iterate=" + value));
        }
        o.iterate = n;
        break;
      }
      case 'l':
        o.long_list = true;
        break;
      case 'M':
        break;  // one cluster
      case 'n': {
        Result<std::vector<std::string>> nodes = hostlist::Expand(value);
        if (!nodes.ok() || nodes->empty()) {
          return Fail(Error("'" + value + "' invalid entry for --nodes"));
        }
        o.nodes = std::move(nodes).value();
        break;
      }
      case 'N':
        o.node_oriented = true;
        break;
      case 'o':
        format = value;
        long_form = false;
        break;
      case 'O':
        format = value;
        long_form = true;
        break;
      case 'p':
        partition_given = true;
        o.partitions = SplitNonEmpty(value);
        break;
      case 'r':
        o.responding = true;
        break;
      case 'R':
        o.list_reasons = true;
        break;
      case 's':
        o.summarize = true;
        break;
      case 'S':
        o.sort = value;
        break;
      case 't':
        states = value;
        break;
      case 'T':
        o.reservations = true;
        break;
      case 'v':
        break;
      case 'V':
        stop = ExitWith(0, "", "slurm 22.05.8 (berth)\n");
        return false;
      case kHelp:
        stop = ExitWith(0, "", kHelpText);
        return false;
      case kUsage:
        stop = ExitWith(0, "", kUsageText);
        return false;
      case kJson:
        o.json = true;
        break;
      case kYaml:
        return Fail(Error("--yaml is not supported by berth; use --json"));
      default:
        break;  // --hide, --local, --federation, --noconvert
    }
    return true;
  }

  // sinfo's choice of format when -o/-O is not given.
  void DefaultFormat(const EnvLookup& env) {
    if (!format.empty()) {
      o.format = format;
      o.percent_form = !long_form;
      return;
    }
    o.percent_form = false;
    if (o.summarize) {
      o.size_partitions = true;
      o.format = kSinfoSummaryFormat;
    } else if (o.node_oriented) {
      o.size_nodes = o.size_partitions = true;
      o.format = o.long_list ? kSinfoNodeLongFormat : kSinfoNodeFormat;
    } else if (o.list_reasons) {
      o.format = o.long_list ? kSinfoReasonLongFormat : kSinfoReasonFormat;
    } else if (auto v = env("SINFO_FORMAT")) {
      o.format = *v;
      o.percent_form = true;
    } else {
      o.size_partitions = true;
      o.format = o.long_list ? kSinfoLongFormat : kSinfoFormat;
    }
  }

  bool Finish(const std::vector<std::string>& operands, const EnvLookup& env) {
    if (!operands.empty()) {
      stop = ExitWith(1, Error("Unrecognized option: " + operands.front()), kUsageText);
      return false;
    }
    if (all && partition_given) {
      return Fail(
          Error("Conflicting options, -a and -p, specified. Please choose one or the other."));
    }
    if (!partition_given && !all) {
      if (auto v = env("SINFO_PARTITION")) o.partitions = SplitNonEmpty(*v);
    }
    if (o.sort.empty()) {
      if (auto v = env("SINFO_SORT")) o.sort = *v;
    }
    if (o.sort.empty()) o.sort = o.node_oriented ? "N" : "#P,-t";
    DefaultFormat(env);
    if (states.empty() && o.list_reasons) states = "down,fail,drain";
    if (!states.empty()) {
      Result<NodeStateFilter> f = ParseNodeStateList(states);
      if (!f.ok()) {
        return Fail(Error(f.status().message()) +
                    Error("valid states: unknown,down,idle,allocated,error,mixed,future,drain,"
                          "drained,draining,no_respond,reserved,perfctrs,completing,"
                          "powering_down,powered_down,power_down,powering_up,fail,maint,"
                          "reboot_requested,reboot_issued,cloud,planned"));
      }
      o.states = std::move(f).value();
      o.states_given = true;
    }
    return true;
  }
};

}  // namespace

SinfoParse ParseSinfoArgs(const std::vector<std::string>& args, const EnvLookup& env) {
  Parser p;
  std::optional<std::vector<std::string>> operands = RunGetopt(
      args, kShortOptions, kLongOptions, [&](int c, const char* v) { return p.Option(c, v); });
  if (!operands) p.stop = ExitWith(1, kTryHelp);
  if (!p.stop) p.Finish(*operands, env);
  if (p.stop) p.result.exit = *p.stop;
  return p.result;
}

}  // namespace berth::slurm
