// squeue's command line (Slurm 22.05 src/squeue/opts.c): options, environment variables, the
// defaults of each mode, and the messages of bad input.
#include <pwd.h>

#include <charconv>

#include "common/hostlist.h"
#include "common/strings.h"
#include "slurm/squeue_view.h"

namespace berth::slurm {
namespace {

constexpr int kHelp = 0x100;
constexpr int kUsage = 0x101;
constexpr int kHide = 0x102;
constexpr int kStart = 0x103;
constexpr int kNoConvert = 0x104;
constexpr int kArrayUnique = 0x105;
constexpr int kLocal = 0x106;
constexpr int kSibling = 0x107;
constexpr int kFederation = 0x108;
constexpr int kMe = 0x109;
constexpr int kJson = 0x10a;
constexpr int kYaml = 0x10b;

const struct option kLongOptions[] = {
    {"accounts", required_argument, nullptr, 'A'},
    {"all", no_argument, nullptr, 'a'},
    {"array", no_argument, nullptr, 'r'},
    {"array-unique", no_argument, nullptr, kArrayUnique},
    {"Format", required_argument, nullptr, 'O'},
    {"format", required_argument, nullptr, 'o'},
    {"federation", no_argument, nullptr, kFederation},
    {"help", no_argument, nullptr, kHelp},
    {"hide", no_argument, nullptr, kHide},
    {"iterate", required_argument, nullptr, 'i'},
    {"jobs", optional_argument, nullptr, 'j'},
    {"json", no_argument, nullptr, kJson},
    {"local", no_argument, nullptr, kLocal},
    {"long", no_argument, nullptr, 'l'},
    {"licenses", required_argument, nullptr, 'L'},
    {"cluster", required_argument, nullptr, 'M'},
    {"clusters", required_argument, nullptr, 'M'},
    {"me", no_argument, nullptr, kMe},
    {"name", required_argument, nullptr, 'n'},
    {"noconvert", no_argument, nullptr, kNoConvert},
    {"node", required_argument, nullptr, 'w'},
    {"nodes", required_argument, nullptr, 'w'},
    {"nodelist", required_argument, nullptr, 'w'},
    {"noheader", no_argument, nullptr, 'h'},
    {"partitions", required_argument, nullptr, 'p'},
    {"priority", no_argument, nullptr, 'P'},
    {"qos", required_argument, nullptr, 'q'},
    {"reservation", required_argument, nullptr, 'R'},
    {"sib", no_argument, nullptr, kSibling},
    {"sibling", no_argument, nullptr, kSibling},
    {"sort", required_argument, nullptr, 'S'},
    {"start", no_argument, nullptr, kStart},
    {"steps", optional_argument, nullptr, 's'},
    {"states", required_argument, nullptr, 't'},
    {"usage", no_argument, nullptr, kUsage},
    {"user", required_argument, nullptr, 'u'},
    {"users", required_argument, nullptr, 'u'},
    {"verbose", no_argument, nullptr, 'v'},
    {"version", no_argument, nullptr, 'V'},
    {"yaml", no_argument, nullptr, kYaml},
    {nullptr, 0, nullptr, 0},
};
constexpr const char* kShortOptions = "A:ahi:j::lL:n:M:O:o:p:Pq:R:rs::S:t:u:U:vVw:";

constexpr const char* kUsageText =
    "Usage: squeue [-A account] [--clusters names] [-i seconds] [--job jobid]\n"
    "              [-n name] [-o format] [-p partitions] [--qos qos]\n"
    "              [--reservation reservation] [--sort fields] [--start]\n"
    "              [--step step_id] [-t states] [-u user_name] [--usage]\n"
    "              [-L licenses] [-w nodes] [--federation] [--local] [--sibling]\n"
    "              [-ahjlrsv]\n";

constexpr const char* kHelpText =
    "Usage: squeue [OPTIONS]\n"
    "  -A, --account=account(s)        comma separated list of accounts\n"
    "                                  to view, default is all accounts\n"
    "  -a, --all                       display jobs in hidden partitions\n"
    "  -h, --noheader                  no headers on output\n"
    "      --hide                      do not display jobs in hidden partitions\n"
    "  -i, --iterate=seconds           specify an interation period\n"
    "  -j, --job=job(s)                comma separated list of jobs IDs\n"
    "                                  to view, default is all\n"
    "      --json                      Produce JSON output\n"
    "  -l, --long                      long report\n"
    "  -L, --licenses=(license names)  comma separated list of license names to view\n"
    "      --me                        equivalent to --user=<my username>\n"
    "  -n, --name=job_name(s)          comma separated list of job names to view\n"
    "  -o, --format=format             format specification\n"
    "  -O, --Format=format             format specification\n"
    "  -p, --partition=partition(s)    comma separated list of partitions\n"
    "                                  to view, default is all partitions\n"
    "  -P, --priority                  report jobs by priority\n"
    "  -q, --qos=qos(s)                comma separated list of qos's\n"
    "                                  to view, default is all qos's\n"
    "  -R, --reservation=name          reservation to view, default is all\n"
    "  -r, --array                     display one job array element per line\n"
    "  -S, --sort=fields               comma separated list of fields to sort on\n"
    "      --start                     print expected start times of pending jobs\n"
    "  -t, --states=states             comma separated list of states to view,\n"
    "                                  default is pending and running,\n"
    "                                  '--states=all' reports all states\n"
    "  -u, --user=user_name(s)         comma separated list of users to view\n"
    "  -v, --verbose                   verbosity level\n"
    "  -V, --version                   output version information and exit\n"
    "  -w, --nodelist=hostlist         list of nodes to view, default is\n"
    "                                  all nodes\n"
    "\nHelp options:\n"
    "  --help                          show this help message\n"
    "  --usage                         display a brief summary of squeue options\n";

constexpr const char* kTryHelp = "Try \"squeue --help\" for more information\n";

std::string Error(const std::string& message) {
  return "squeue: error: " + message + "\n";
}

// squeue's _build_user_list: names or uids; unknown names are reported and left out.
void AddUsers(std::string_view text, SqueueFilter& f, std::string& warnings) {
  f.users_given = true;
  f.users.clear();
  f.uids.clear();
  for (const std::string& u : SplitNonEmpty(text)) {
    uint32_t uid = 0;
    auto [p, ec] = std::from_chars(u.data(), u.data() + u.size(), uid);
    if (ec == std::errc() && p == u.data() + u.size()) {
      f.uids.push_back(uid);
      continue;
    }
    struct passwd pw, *found = nullptr;
    char buf[4096];
    if (getpwnam_r(u.c_str(), &pw, buf, sizeof(buf), &found) == 0 && found != nullptr) {
      f.uids.push_back(found->pw_uid);
      f.users.push_back(u);
    } else {
      warnings += Error("Invalid user: " + u + "\n");  // Slurm's message ends in a blank line
    }
  }
}

struct Parser {
  SqueueParse result;
  SqueueOptions& o = result.options;
  std::string jobs, states, users, format, format_long;
  bool job_flag = false, long_form = false, start = false, steps = false;
  bool format_env_off = false;  // -l, -o, -O, -s, --start ignore SQUEUE_FORMAT(2)
  std::optional<ParseExit> stop;

  bool Fail(std::string err) {
    stop = ExitWith(1, std::move(err));
    return false;
  }

  bool Option(int c, const char* arg) {
    const std::string value = arg != nullptr ? arg : "";
    switch (c) {
      case 'A':
      case 'U':
        o.filter.accounts = SplitNonEmpty(value);
        break;
      case 'a':
        break;  // berth has no hidden partitions
      case 'h':
        o.no_header = true;
        break;
      case 'i': {
        int n = 0;
        auto [p, ec] = std::from_chars(value.data(), value.data() + value.size(), n);
        (void)p;
        if (ec != std::errc() || n <= 0) return Fail(Error("--iterate=" + value + "\n"));
        o.iterate = n;
        break;
      }
      case 'j':
        if (arg != nullptr) jobs = value;
        job_flag = true;
        break;
      case 'l':
        o.long_list = true;
        format_env_off = true;
        break;
      case 'L':
        o.filter.licenses = SplitNonEmpty(value);
        break;
      case 'M':
        break;  // one cluster
      case 'n':
        o.filter.names = SplitNonEmpty(value);
        break;
      case 'O':
        if (!format.empty()) return Fail(Error("-O (--Format) is incompatible with -o (--format)"));
        format_long = value;
        format_env_off = true;
        break;
      case 'o':
        if (!format_long.empty()) {
          return Fail(Error("-o (--format) is incompatible with -O (--Format)"));
        }
        format = value;
        format_env_off = true;
        break;
      case 'p':
        o.filter.partitions = SplitNonEmpty(value);
        break;
      case 'P':
        o.per_partition = true;
        break;
      case 'q':
        o.filter.qos = SplitNonEmpty(value);
        break;
      case 'R':
        o.filter.reservation = value;
        break;
      case 'r':
        o.array_tasks = true;
        break;
      case 's':
        steps = true;
        format_env_off = true;
        o.steps = true;
        o.step_ids = SplitNonEmpty(value);
        break;
      case 'S':
        o.sort = value;
        break;
      case 't':
        states = value;
        break;
      case 'u':
        users = value;
        break;
      case 'v':
        break;
      case 'V':
        stop = ExitWith(0, "", "slurm 22.05.8 (berth)\n");
        return false;
      case 'w': {
        Result<std::vector<std::string>> nodes = hostlist::Expand(value);
        if (!nodes.ok()) return Fail(Error("'" + value + "' invalid entry for --nodelist"));
        o.filter.nodes = std::move(nodes).value();
        break;
      }
      case kHelp:
        stop = ExitWith(0, "", kHelpText);
        return false;
      case kUsage:
        stop = ExitWith(0, "", kUsageText);
        return false;
      case kStart:
        start = true;
        format_env_off = true;
        break;
      case kMe:
        users = "\x01me";
        break;
      case kJson:
        o.json = true;
        break;
      case kYaml:
        return Fail(Error("--yaml is not supported by berth; use --json"));
      default:
        break;  // --hide, --local, --sibling, --federation, --noconvert, --array-unique
    }
    return true;
  }

  void ApplyEnv(const EnvLookup& env) {
    auto get = [&](const char* name) { return env(name); };
    if (get("SQUEUE_ARRAY")) o.array_tasks = true;
    if (get("SQUEUE_PRIORITY")) o.per_partition = true;
    if (auto v = get("SQUEUE_SORT")) o.sort = *v;
  }

  // Environment variables that apply only when the option was not given.
  void ApplyEnvDefaults(const EnvLookup& env, uint32_t my_uid) {
    if (!format_env_off) {
      if (auto v = env("SQUEUE_FORMAT")) {
        format = *v;
      } else if (auto v2 = env("SQUEUE_FORMAT2")) {
        format_long = *v2;
      }
    }
    if (o.filter.accounts.empty()) {
      if (auto v = env("SQUEUE_ACCOUNT")) o.filter.accounts = SplitNonEmpty(*v);
    }
    if (o.filter.names.empty()) {
      if (auto v = env("SQUEUE_NAMES")) o.filter.names = SplitNonEmpty(*v);
    }
    if (o.filter.licenses.empty()) {
      if (auto v = env("SQUEUE_LICENSES")) o.filter.licenses = SplitNonEmpty(*v);
    }
    if (o.filter.partitions.empty()) {
      if (auto v = env("SQUEUE_PARTITION")) o.filter.partitions = SplitNonEmpty(*v);
    }
    if (o.filter.qos.empty()) {
      if (auto v = env("SQUEUE_QOS")) o.filter.qos = SplitNonEmpty(*v);
    }
    if (states.empty()) {
      if (auto v = env("SQUEUE_STATES")) states = *v;
    }
    if (users.empty()) {
      if (auto v = env("SQUEUE_USERS")) users = *v;
    }
    if (users == "\x01me") users = std::to_string(my_uid);
  }

  // The mode's defaults: --start, -l, -O or the plain format.
  void ApplyModeDefaults() {
    if (steps) {
      if (format.empty() && format_long.empty()) {
        format = o.long_list ? kSqueueStepLongFormat : kSqueueStepFormat;
      }
    } else if (start) {
      if (format.empty() && format_long.empty()) format = kSqueueStartFormat;
      if (o.sort.empty()) o.sort = "S";
      if (states.empty()) states = "PD";
    }
    if (!format_long.empty()) {
      o.format = format_long;
      o.percent_form = false;
    } else if (!format.empty()) {
      o.format = format;
    } else {
      o.format = o.long_list ? kSqueueLongFormat : kSqueueFormat;
    }
    if (o.sort.empty()) o.sort = kSqueueDefaultSort;
  }

  bool Finish(const std::vector<std::string>& operands) {
    std::vector<std::string> rest = operands;
    if (!rest.empty() && job_flag && jobs.empty()) {
      jobs = rest.front();
      rest.erase(rest.begin());
    }
    if (!rest.empty()) {
      stop = ExitWith(1, Error("Unrecognized option: " + rest.front()), kUsageText);
      return false;
    }
    if (!jobs.empty()) {
      Result<std::vector<JobIdFilter>> ids = ParseJobIdList(jobs);
      if (!ids.ok()) return Fail(Error(ids.status().message()));
      o.filter.jobs = std::move(ids).value();
    }
    if (!states.empty()) {
      Result<std::vector<core::JobState>> st = ParseJobStateList(states);
      if (!st.ok()) {
        std::string msg = st.status().message();
        size_t nl = msg.find('\n');
        return Fail(Error(msg.substr(0, nl)) + Error(msg.substr(nl + 1) + "\n"));
      }
      o.filter.states = std::move(st).value();
    }
    if (!users.empty()) AddUsers(users, o.filter, result.warnings);
    return true;
  }
};

}  // namespace

SqueueParse ParseSqueueArgs(const std::vector<std::string>& args, const EnvLookup& env,
                            uint32_t my_uid) {
  Parser p;
  p.ApplyEnv(env);
  std::optional<std::vector<std::string>> operands = RunGetopt(
      args, kShortOptions, kLongOptions, [&](int c, const char* v) { return p.Option(c, v); });
  if (!operands) p.stop = ExitWith(1, kTryHelp);
  if (!p.stop && p.o.long_list && !p.format.empty()) {
    p.Fail(
        "squeue: fatal: Options -o(--format) and -l(--long) are mutually exclusive. Please "
        "remove one and retry.\n");
  }
  if (!p.stop) {
    p.ApplyEnvDefaults(env, my_uid);
    p.ApplyModeDefaults();
    p.Finish(*operands);
  }
  if (p.stop) p.result.exit = *p.stop;
  return p.result;
}

}  // namespace berth::slurm
