// sshare's command line (Slurm 22.05 src/sshare/sshare.c).
#include <pwd.h>

#include <cctype>
#include <cstdlib>

#include "common/strings.h"
#include "slurm/sshare_view.h"

namespace berth::slurm {
namespace {

constexpr int kHelp = 0x100;
constexpr int kUsage = 0x101;

const struct option kLongOptions[] = {
    {"accounts", required_argument, nullptr, 'A'}, {"all", no_argument, nullptr, 'a'},
    {"helpformat", no_argument, nullptr, 'e'},     {"long", no_argument, nullptr, 'l'},
    {"partition", no_argument, nullptr, 'm'},      {"cluster", required_argument, nullptr, 'M'},
    {"clusters", required_argument, nullptr, 'M'}, {"noheader", no_argument, nullptr, 'n'},
    {"format", required_argument, nullptr, 'o'},   {"parsable", no_argument, nullptr, 'p'},
    {"parsable2", no_argument, nullptr, 'P'},      {"users", required_argument, nullptr, 'u'},
    {"Users", no_argument, nullptr, 'U'},          {"verbose", no_argument, nullptr, 'v'},
    {"version", no_argument, nullptr, 'V'},        {"help", no_argument, nullptr, kHelp},
    {"usage", no_argument, nullptr, kUsage},       {nullptr, 0, nullptr, 0},
};
constexpr const char* kShortOptions = "aA:ehlM:no:pPqUu:vVm";

// Slurm pads each line of its usage to the same width.
constexpr const char* kUsageText =
    "Usage:  sshare [OPTION]                                                    \n"
    "  Valid OPTIONs are:                                                       \n"
    "    -a or --all            list all users                                  \n"
    "    -A or --accounts=      display specific accounts (comma separated list)\n"
    "    -e or --helpformat     Print a list of fields that can be specified    \n"
    "                           with the '--format' option                      \n"
    "    -l or --long           include normalized usage in output              \n"
    "    -m or --partition      print the partition part of the association     \n"
    "    -M or --cluster=names  clusters to issue commands to.                  \n"
    "                           NOTE: SlurmDBD must be up.                      \n"
    "    -n or --noheader       omit header from output                         \n"
    "    -o or --format=        Comma separated list of fields (use             \n"
    "                           \"--helpformat\" for a list of available fields).\n"
    "    -p or --parsable       '|' delimited output with a trailing '|'        \n"
    "    -P or --parsable2      '|' delimited output without a trailing '|'     \n"
    "    -u or --users=         display specific users (comma separated list)   \n"
    "    -U or --Users          display only user information                   \n"
    "    -v or --verbose        display more information                        \n"
    "    -V or --version        display tool version number                     \n"
    "          --help           display this usage description                  \n"
    "          --usage          display this usage description                  \n"
    "                                                                           \n\n";

// slurm_addto_char_list: comma-separated, without repeats (any case).
void AddNames(std::vector<std::string>& list, const std::string& text) {
  for (const std::string& n : SplitNonEmpty(text)) {
    bool seen = false;
    for (const std::string& have : list) seen = seen || ToLower(have) == ToLower(n);
    if (!seen) list.push_back(n);
  }
}

struct Parser {
  SshareParse result;
  SshareOptions& o = result.options;
  std::optional<ParseExit> stop;
  std::string format;

  // A name starting with a digit is a uid (Slurm: "Invalid user id: N" when it has no name).
  bool Users(const std::string& text) {
    std::vector<std::string> names;
    for (const std::string& u : SplitNonEmpty(text)) {
      if (std::isdigit(static_cast<unsigned char>(u[0])) == 0) {
        names.push_back(u);
        continue;
      }
      const uint32_t uid = static_cast<uint32_t>(std::strtoul(u.c_str(), nullptr, 10));
      struct passwd pw, *found = nullptr;
      char buf[4096];
      if (getpwuid_r(uid, &pw, buf, sizeof(buf), &found) != 0 || found == nullptr) {
        stop = ExitWith(1, "Invalid user id: " + std::to_string(uid) + "\n");
        return false;
      }
      names.emplace_back(found->pw_name);
    }
    for (const std::string& n : names) AddNames(o.users, n);
    return true;
  }

  bool Option(int c, const char* arg) {
    const std::string value = arg != nullptr ? arg : "";
    switch (c) {
      case 'a':
        o.all_users = true;
        break;
      case 'A':
        AddNames(o.accounts, value);
        break;
      case 'e':
        stop = ExitWith(0, "", SshareHelpFormat());
        return false;
      case 'h':
      case 'n':
        o.no_header = true;
        break;
      case 'l':
        o.long_list = true;
        break;
      case 'm':
        o.partitions = true;
        break;
      case 'o':
        format += value + ",";
        break;
      case 'p':
        o.parsable = 1;
        break;
      case 'P':
        o.parsable = 2;
        break;
      case 'u':
        if (value == "-1") {
          o.all_users = true;
          break;
        }
        o.all_users = false;
        return Users(value);
      case 'U':
        o.users_only = true;
        break;
      case 'V':
        stop = ExitWith(0, "", "slurm 22.05.8 (berth)\n");
        return false;
      case kHelp:
      case kUsage:
        stop = ExitWith(0, "", kUsageText);
        return false;
      default:  // -M (one cluster), -q, -v
        break;
    }
    return true;
  }
};

}  // namespace

SshareParse ParseSshareArgs(const std::vector<std::string>& args, const std::string& caller) {
  Parser p;
  std::optional<std::vector<std::string>> operands = RunGetopt(
      args, kShortOptions, kLongOptions, [&](int c, const char* v) { return p.Option(c, v); });
  if (!operands) p.stop = ExitWith(1, "Try \"sshare --help\" for more information\n");
  if (p.stop) {
    p.result.exit = *p.stop;
    return p.result;
  }
  // Operands are ignored, as Slurm's sshare ignores them.
  SshareOptions& o = p.result.options;
  AddNames(o.fields, p.format);
  if (o.all_users) {
    o.users.clear();
  } else if (o.users.empty() && !caller.empty()) {
    o.users.push_back(caller);
  }
  return p.result;
}

}  // namespace berth::slurm
