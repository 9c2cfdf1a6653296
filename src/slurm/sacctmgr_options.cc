// sacctmgr's command line: options, then the words of one command.
#include <getopt.h>

#include <cctype>

#include "common/strings.h"
#include "slurm/sacctmgr.h"

namespace berth::slurm {
namespace {

constexpr const char kShortOptions[] = "hinpPQrsvV";
const struct option kLongOptions[] = {
    {"help", no_argument, nullptr, 'h'},      {"immediate", no_argument, nullptr, 'i'},
    {"noheader", no_argument, nullptr, 'n'},  {"parsable", no_argument, nullptr, 'p'},
    {"parsable2", no_argument, nullptr, 'P'}, {"quiet", no_argument, nullptr, 'Q'},
    {"readonly", no_argument, nullptr, 'r'},  {"associations", no_argument, nullptr, 's'},
    {"verbose", no_argument, nullptr, 'v'},   {"version", no_argument, nullptr, 'V'},
    {"usage", no_argument, nullptr, 'h'},     {nullptr, 0, nullptr, 0},
};

// Slurm matches command words by a prefix of at least `min` letters, any case.
bool Matches(std::string_view word, std::string_view full, size_t min) {
  if (word.size() < min || word.size() > full.size()) return false;
  return EqualsIgnoreCase(word, full.substr(0, word.size()));
}

std::optional<SacctmgrVerb> VerbOf(std::string_view w) {
  if (Matches(w, "show", 3) || Matches(w, "list", 3)) return SacctmgrVerb::kShow;
  if (Matches(w, "add", 3) || Matches(w, "create", 2)) return SacctmgrVerb::kAdd;
  if (Matches(w, "modify", 1) || Matches(w, "update", 1)) return SacctmgrVerb::kModify;
  if (Matches(w, "delete", 3) || Matches(w, "remove", 3)) return SacctmgrVerb::kDelete;
  return std::nullopt;
}

std::optional<config::AcctEntity> EntityOf(std::string_view w) {
  if (Matches(w, "accounts", 3)) return config::AcctEntity::kAccount;
  if (Matches(w, "associations", 3)) return config::AcctEntity::kAssociation;
  if (Matches(w, "users", 1)) return config::AcctEntity::kUser;
  if (Matches(w, "qos", 1)) return config::AcctEntity::kQos;
  return std::nullopt;
}

SacctmgrParse Stop(int code, std::string err, std::string out = "") {
  return StopWith<SacctmgrParse>(code, std::move(err), std::move(out));
}

}  // namespace

std::string SacctmgrUsage() {
  return "sacctmgr [<OPTION>] [<COMMAND>]\n"
         "    Valid <OPTION> values are:\n"
         "     -h or --help: equivalent to \"help\" command\n"
         "     -i or --immediate: commit changes immediately without asking\n"
         "     -n or --noheader: no header will be added to the beginning of output\n"
         "     -p or --parsable: output will be '|' delimited with a '|' at the end\n"
         "     -P or --parsable2: output will be '|' delimited without a '|' at the end\n"
         "     -Q or --quiet: equivalent to \"quiet\" command\n"
         "     -s or --associations: show the associations of accounts and users\n"
         "     -V or --version: equivalent to \"version\" command\n"
         "\n"
         "  <COMMAND> may be (one per invocation in berth):\n"
         "     add|create <ENTITY> <NAMES> [<SPECS>]\n"
         "     list|show <ENTITY> [<NAMES>] [where <SPECS>] [format=<FIELDS>]\n"
         "     modify|update <ENTITY> [<NAMES>] [where <SPECS>] set <SPECS>\n"
         "     delete|remove <ENTITY> <NAMES> | where <SPECS>\n"
         "\n"
         "  <ENTITY> may be account, user, qos or association.\n"
         "\n"
         "  Account specs: Parent=, Fairshare=, GrpTRES=, GrpJobs= (Description= and\n"
         "    Organization= are accepted and not kept).\n"
         "  User specs: Account=, DefaultAccount=, AdminLevel=, Fairshare=, MaxJobs=,\n"
         "    MaxTRES= (MaxTRESPerJob).\n"
         "  QOS specs: Priority=, Preempt= (+=, -=), PreemptMode=, UsageFactor=, MaxTRES=,\n"
         "    MaxTRESPerUser=, MaxTRESPerAccount=, MaxJobsPerUser=, MaxJobsPerAccount=, MaxWall=.\n"
         "  Association specs (where Account= [User=]): Fairshare=, GrpTRES=, GrpJobs=,\n"
         "    MaxJobs=, MaxTRES=.\n"
         "  -1 clears a limit. berth's differences from Slurm: docs/slurm.md.\n";
}

SacctmgrParse ParseSacctmgrArgs(const std::vector<std::string>& args) {
  SacctmgrCommand c;
  std::optional<ParseExit> stop;
  std::optional<std::vector<std::string>> words =
      RunGetopt(args, kShortOptions, kLongOptions, [&](int code, const char*) {
        switch (code) {
          case 'h':
            stop = ExitWith(0, "", SacctmgrUsage());
            return false;
          case 'V':
            stop = ExitWith(0, "", "slurm 22.05.0 (berth)\n");
            return false;
          case 'i':
            c.immediate = true;
            break;
          case 'n':
            c.no_header = true;
            break;
          case 'p':
            c.parsable = 1;
            break;
          case 'P':
            c.parsable = 2;
            break;
          case 'Q':
            c.quiet = true;
            break;
          case 's':
            c.with_assoc = true;
            break;
          default:  // -r, -v: accepted
            break;
        }
        return true;
      });
  if (stop) {
    SacctmgrParse p;
    static_cast<ParseExit&>(p) = *stop;
    return p;
  }
  if (!words) return Stop(1, "Try \"sacctmgr --help\" for more information\n");
  if (words->empty()) {
    return Stop(1, "sacctmgr: no command given (berth runs one command per invocation)\n" +
                       SacctmgrUsage());
  }
  const std::vector<std::string>& w = *words;
  if (Matches(w[0], "help", 2)) return Stop(0, "", SacctmgrUsage());
  if (Matches(w[0], "version", 4)) return Stop(0, "", "slurm 22.05.0 (berth)\n");
  std::optional<SacctmgrVerb> verb = VerbOf(w[0]);
  if (!verb) return Stop(1, "invalid keyword: " + w[0] + "\n");
  c.verb = *verb;
  if (w.size() < 2) {
    return Stop(1, "You need to specify an entity (account, user, qos or association)\n");
  }
  std::optional<config::AcctEntity> entity = EntityOf(w[1]);
  if (!entity) {
    return Stop(1, "No valid entity in " + w[0] +
                       " command\nInput line must include \"account\", "
                       "\"user\", \"qos\" or \"association\"\n");
  }
  c.entity = *entity;
  // Before "set", pairs are conditions (for add: settings); after it, settings.
  bool in_set = false;
  std::string format;
  for (size_t i = 2; i < w.size(); ++i) {
    const std::string& word = w[i];
    if (EqualsIgnoreCase(word, "where")) {
      in_set = false;
      continue;
    }
    if (EqualsIgnoreCase(word, "set")) {
      if (c.verb != SacctmgrVerb::kModify) return Stop(1, "'set' is only for modify\n");
      in_set = true;
      continue;
    }
    if (EqualsIgnoreCase(word, "withassoc") || EqualsIgnoreCase(word, "withassocs")) {
      c.with_assoc = true;
      continue;
    }
    size_t eq = word.find('=');
    if (eq == std::string::npos) {
      c.where.emplace_back("Name", word);
      continue;
    }
    std::string key = word.substr(0, eq), value = word.substr(eq + 1);
    if (key.empty()) return Stop(1, "invalid keyword: " + word + "\n");
    if (EqualsIgnoreCase(key, "format")) {
      if (c.verb != SacctmgrVerb::kShow) return Stop(1, "format= is only for show\n");
      format += (format.empty() ? "" : ",") + value;
      continue;
    }
    bool is_name = EqualsIgnoreCase(key, "name") || EqualsIgnoreCase(key, "names") ||
                   (c.entity == config::AcctEntity::kUser && EqualsIgnoreCase(key, "user")) ||
                   (c.entity == config::AcctEntity::kAccount && EqualsIgnoreCase(key, "account"));
    if (in_set) {
      c.set.emplace_back(key, value);
    } else if (c.verb == SacctmgrVerb::kAdd && !is_name) {
      c.set.emplace_back(key, value);
    } else {
      c.where.emplace_back(is_name ? "Name" : key, value);
    }
  }
  if (c.verb == SacctmgrVerb::kModify && c.set.empty()) {
    return Stop(1, " You didn't give me anything to set\n");
  }
  if (c.verb != SacctmgrVerb::kShow && c.verb != SacctmgrVerb::kModify && c.where.empty() &&
      c.entity != config::AcctEntity::kAssociation) {
    return Stop(1, c.verb == SacctmgrVerb::kAdd ? " Need name of entity to add.\n"
                                                : " No conditions given\n");
  }
  if (c.verb == SacctmgrVerb::kShow) {
    Result<std::vector<SacctmgrField>> fields =
        format.empty()
            ? Result<std::vector<SacctmgrField>>(DefaultSacctmgrFields(c.entity, c.with_assoc))
            : ParseSacctmgrFormat(c.entity, format);
    if (!fields.ok()) return Stop(1, fields.status().message() + "\n");
    c.format = std::move(*fields);
  }
  SacctmgrParse p;
  p.command = std::move(c);
  return p;
}

}  // namespace berth::slurm
