// sprio's command line (Slurm 22.05 src/sprio/opts.c).
#include <pwd.h>

#include <charconv>

#include "common/strings.h"
#include "slurm/sprio_view.h"

namespace berth::slurm {
namespace {

constexpr int kHelp = 0x100;
constexpr int kUsage = 0x101;
constexpr int kIgnored = 0x102;  // --local, --sibling, --federation: one cluster

const struct option kLongOptions[] = {
    {"noheader", no_argument, nullptr, 'h'},
    {"jobs", optional_argument, nullptr, 'j'},
    {"long", no_argument, nullptr, 'l'},
    {"cluster", required_argument, nullptr, 'M'},
    {"clusters", required_argument, nullptr, 'M'},
    {"norm", no_argument, nullptr, 'n'},
    {"format", required_argument, nullptr, 'o'},
    {"partition", required_argument, nullptr, 'p'},
    {"sort", required_argument, nullptr, 'S'},
    {"user", required_argument, nullptr, 'u'},
    {"users", required_argument, nullptr, 'u'},
    {"verbose", no_argument, nullptr, 'v'},
    {"version", no_argument, nullptr, 'V'},
    {"weights", no_argument, nullptr, 'w'},
    {"federation", no_argument, nullptr, kIgnored},
    {"local", no_argument, nullptr, kIgnored},
    {"sibling", no_argument, nullptr, kIgnored},
    {"help", no_argument, nullptr, kHelp},
    {"usage", no_argument, nullptr, kUsage},
    {nullptr, 0, nullptr, 0},
};
constexpr const char* kShortOptions = "hj::lM:no:p:S:u:vVw";

constexpr const char* kUsageText =
    "Usage: sprio [-j jid[s]] [-u user_name[s]] [-o format] [-p partitions]\n"
    "     [--federation] [--local] [--sibling] [--usage] [-hlnvVw]\n";

constexpr const char* kHelpText =
    "Usage: sprio [OPTIONS]\n"
    "  -h, --noheader                  no headers on output\n"
    "  -j, --jobs                      comma separated list of jobs\n"
    "                                  to view, default is all\n"
    "  -l, --long                      long report\n"
    "  -n, --norm                      display normalized values\n"
    "  -o, --format=format             format specification\n"
    "  -p, --partition=partition_name  comma separated list of partitions\n"
    "  -S, --sort=sort_list            comma separated list of fields to sort on\n"
    "  -u, --user=user_name            comma separated list of users to view\n"
    "  -v, --verbose                   display more information\n"
    "  -V, --version                   output version information and exit\n"
    "  -w, --weights                   show the weights for each priority factor\n"
    "\nHelp options:\n"
    "  --help                          show this help message\n"
    "  --usage                         display a brief summary of sprio options\n";

std::string Error(const std::string& m) {
  return "sprio: error: " + m + "\n";
}

struct Parser {
  SprioParse result;
  SprioOptions& o = result.options;
  std::string jobs;
  bool job_flag = false;
  std::optional<ParseExit> stop;

  bool Fail(std::string err) {
    stop = ExitWith(1, std::move(err));
    return false;
  }

  void Users(const std::string& text) {
    o.users_given = true;
    for (const std::string& u : SplitNonEmpty(text)) {
      uint32_t uid = 0;
      auto [p, ec] = std::from_chars(u.data(), u.data() + u.size(), uid);
      if (ec == std::errc() && p == u.data() + u.size()) {
        o.uids.push_back(uid);
        struct passwd pw, *found = nullptr;
        char buf[4096];
        if (getpwuid_r(uid, &pw, buf, sizeof(buf), &found) == 0 && found) {
          o.users.push_back(found->pw_name);
        }
      } else {
        o.users.push_back(u);
      }
    }
  }

  bool Option(int c, const char* arg) {
    const std::string value = arg != nullptr ? arg : "";
    switch (c) {
      case 'h':
        o.no_header = true;
        break;
      case 'j':
        job_flag = true;
        if (arg != nullptr) jobs = value;
        break;
      case 'l':
        o.long_list = true;
        break;
      case 'M':
        break;
      case 'n':
        o.normalized = true;
        break;
      case 'o':
        o.format = value;
        break;
      case 'p':
        o.partitions = SplitNonEmpty(value);
        break;
      case 'S':
        o.sort = value;
        break;
      case 'u':
        Users(value);
        break;
      case 'v':
        break;
      case 'V':
        stop = ExitWith(0, "", "slurm 22.05.8 (berth)\n");
        return false;
      case 'w':
        o.weights = true;
        break;
      case kHelp:
        stop = ExitWith(0, "", kHelpText);
        return false;
      case kUsage:
        stop = ExitWith(0, "", kUsageText);
        return false;
      default:
        break;
    }
    return true;
  }

  bool Finish(std::vector<std::string> operands, const EnvLookup& env) {
    if (!operands.empty() && job_flag && jobs.empty()) {
      jobs = operands.front();
      operands.erase(operands.begin());
    }
    if (!operands.empty()) {
      stop = ExitWith(1, Error("Unrecognized option: " + operands.front()), kUsageText);
      return false;
    }
    if (job_flag) o.jobs_given = true;
    for (const std::string& id : SplitNonEmpty(jobs)) {
      uint32_t v = 0;
      auto [p, ec] = std::from_chars(id.data(), id.data() + id.size(), v);
      if (ec != std::errc() || p != id.data() + id.size() || v == 0) {
        return Fail(Error("Invalid job id: " + id));
      }
      o.jobs.push_back(v);
    }
    if (o.format.empty()) {
      if (auto f = env("SPRIO_FORMAT")) o.format = *f;
    }
    return true;
  }
};

}  // namespace

SprioParse ParseSprioArgs(const std::vector<std::string>& args, const EnvLookup& env) {
  Parser p;
  std::optional<std::vector<std::string>> operands = RunGetopt(
      args, kShortOptions, kLongOptions, [&](int c, const char* v) { return p.Option(c, v); });
  if (!operands) p.stop = ExitWith(1, "Try \"sprio --help\" for more information\n");
  if (!p.stop) p.Finish(*operands, env);
  if (p.stop) p.result.exit = *p.stop;
  return p.result;
}

}  // namespace berth::slurm
