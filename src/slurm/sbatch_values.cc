// Slurm 22.05's client-side value checks (src/common/slurm_opt.c arg_set_*, proc_args.c,
// parse_time.c), with the messages and exit statuses sbatch 22.05.8 gives.
#include "slurm/sbatch_values.h"

#include <grp.h>
#include <pwd.h>

#include <cctype>
#include <climits>
#include <cstdlib>
#include <vector>

#include "api/job_json.h"
#include "common/slurm_time.h"
#include "common/strings.h"
#include "common/units.h"
#include "config/value_text.h"

namespace berth::slurm {
namespace {

using Check = std::optional<SbatchFailure> (*)(OptionArg& o, const ValueContext& ctx);

SbatchFailure Error(const ValueContext& ctx, std::string_view message, int exit_code) {
  return {std::string(ctx.prog) + ": error: " + std::string(message) + "\n", exit_code};
}

// "Invalid --time specification" (exit 255), the message of most of Slurm's value checks.
SbatchFailure InvalidSpec(const OptionArg& o, const ValueContext& ctx) {
  return Error(ctx, "Invalid --" + o.name + " specification", 255);
}

const std::string& Value(const OptionArg& o) {
  static const std::string kNone;
  return o.value ? *o.value : kNone;
}

bool OneOf(std::string_view v, std::initializer_list<std::string_view> names) {
  for (std::string_view n : names) {
    if (EqualsIgnoreCase(v, n)) return true;
  }
  return false;
}

// strtol: leading blanks, a sign, digits. nullopt when no digits; `rest` is what follows.
std::optional<long long> StrToLL(std::string_view s, std::string_view* rest) {
  std::string text(s);
  const char* begin = text.c_str();
  char* end = nullptr;
  long long v = std::strtoll(begin, &end, 10);
  if (end == begin) {
    *rest = s;
    return std::nullopt;
  }
  *rest = s.substr(static_cast<size_t>(end - begin));
  return v;
}

std::optional<SbatchFailure> PositiveInt(OptionArg& o, const ValueContext& ctx, bool positive) {
  std::optional<int> n = SlurmInteger(Value(o), positive);
  if (!n) {
    return Error(ctx, "Invalid numeric value \"" + Value(o) + "\" for --" + o.name + ".", 1);
  }
  o.value = std::to_string(*n);
  return std::nullopt;
}

std::optional<SbatchFailure> CheckPositive(OptionArg& o, const ValueContext& ctx) {
  return PositiveInt(o, ctx, true);
}

std::optional<SbatchFailure> CheckNonNegative(OptionArg& o, const ValueContext& ctx) {
  return PositiveInt(o, ctx, false);
}

std::optional<SbatchFailure> CheckWaitAllNodes(OptionArg& o, const ValueContext& ctx) {
  if (auto f = PositiveInt(o, ctx, false)) return f;
  if (*o.value != "0" && *o.value != "1") return InvalidSpec(o, ctx);
  return std::nullopt;
}

// --switches=<count>[@<max-time>]
std::optional<SbatchFailure> CheckSwitches(OptionArg& o, const ValueContext& ctx) {
  std::string v = Value(o);
  size_t at = v.find('@');
  OptionArg count{o.name, v.substr(0, at)};
  if (auto f = PositiveInt(count, ctx, true)) {
    return Error(ctx, "Invalid numeric value \"" + v.substr(0, at) + "\" for --switches.", 1);
  }
  return std::nullopt;
}

// One node count with Slurm's k/m suffixes (_str_to_nodes); trailing blanks allowed.
std::optional<long long> NodeCount(std::string_view s) {
  std::string_view rest;
  std::optional<long long> n = StrToLL(s, &rest);
  if (!n) return std::nullopt;
  if (!rest.empty() && (rest[0] == 'k' || rest[0] == 'K')) {
    *n *= 1024;
    rest.remove_prefix(1);
  } else if (!rest.empty() && (rest[0] == 'm' || rest[0] == 'M')) {
    *n *= 1024 * 1024;
    rest.remove_prefix(1);
  }
  for (char c : rest) {
    if (!IsSpace(c)) return std::nullopt;
  }
  if (*n > INT_MAX) return std::nullopt;
  return n;
}

// -N <min>[-<max>] (verify_node_count).
std::optional<SbatchFailure> CheckNodes(OptionArg& o, const ValueContext& ctx) {
  std::string v = Value(o);
  auto not_count = [&](std::string_view what) {
    return Error(ctx, "\"" + std::string(what) + "\" is not a valid node count", 255);
  };
  size_t dash = v.find('-');
  std::optional<long long> min = NodeCount(v.substr(0, dash));
  if (!min) return not_count(dash == std::string::npos ? v : v.substr(0, dash));
  long long max = *min;
  if (dash == std::string::npos) {
    if (*min < 0) return not_count(v);
  } else {
    if (*min < 0) min = 1;
    std::optional<long long> m = NodeCount(v.substr(dash + 1));
    if (!m) return not_count(v.substr(dash + 1));
    max = *m;
  }
  if (max != 0 && max < *min) {
    return Error(ctx,
                 "Maximum node count " + std::to_string(max) + " is less than minimum node count " +
                     std::to_string(*min),
                 255);
  }
  // berth's -N takes 0 only as a range's bound ("0-0": at least one node, as Slurm runs it).
  o.value = std::to_string(*min) + (max == *min && *min != 0 ? "" : "-" + std::to_string(max));
  return std::nullopt;
}

std::optional<SbatchFailure> CheckTime(OptionArg& o, const ValueContext& ctx) {
  if (!ParseTimeLimit(Value(o)).ok()) return InvalidSpec(o, ctx);
  return std::nullopt;
}

std::optional<SbatchFailure> CheckDelayBoot(OptionArg& o, const ValueContext& ctx) {
  if (!ParseTimeSeconds(Value(o)).ok()) return InvalidSpec(o, ctx);
  return std::nullopt;
}

std::optional<SbatchFailure> CheckMemory(OptionArg& o, const ValueContext& ctx) {
  std::string v = Value(o);
  size_t skip = 0;
  while (skip < v.size() && (v[skip] == ' ' || v[skip] == '\t')) ++skip;
  if (skip < v.size() && v[skip] == '+') ++skip;
  if (!ParseMemoryMiB(std::string_view(v).substr(skip)).ok()) return InvalidSpec(o, ctx);
  o.value = v.substr(skip);
  return std::nullopt;
}

std::optional<SbatchFailure> CheckDateTime(OptionArg& o, const ValueContext& ctx) {
  config::UtcOffset utc = [](Time) -> int64_t { return 0; };
  int pos = 0;
  Result<Time> t = config::ParseSlurmDateTime(Value(o), ctx.now, ctx.zone ? ctx.zone : utc, &pos);
  if (!t.ok() || *t <= 0) {
    SbatchFailure f = InvalidSpec(o, ctx);
    if (!t.ok() && pos != config::kNoTimePosition) f.text = t.status().message() + "\n" + f.text;
    return f;
  }
  o.value = "uts" + std::to_string(std::max<Time>(*t, 1000000));
  return std::nullopt;
}

std::optional<SbatchFailure> CheckExclusive(OptionArg& o, const ValueContext& ctx) {
  if (o.value && !OneOf(*o.value, {"exclusive", "oversubscribe", "user", "mcs"})) {
    return InvalidSpec(o, ctx);
  }
  return std::nullopt;
}

std::optional<SbatchFailure> CheckOpenMode(OptionArg& o, const ValueContext& ctx) {
  std::string v = Value(o);
  char c = v.empty() ? '\0' : ToLowerAscii(v[0]);
  if (c != 'a' && c != 't') return InvalidSpec(o, ctx);
  o.value = c == 'a' ? "append" : "truncate";
  return std::nullopt;
}

std::optional<SbatchFailure> CheckYesNo(OptionArg& o, const ValueContext& ctx) {
  if (!OneOf(Value(o), {"yes", "no"})) return InvalidSpec(o, ctx);
  o.value = ToLower(Value(o));
  return std::nullopt;
}

std::optional<SbatchFailure> CheckNoKill(OptionArg& o, const ValueContext& ctx) {
  if (o.value && !OneOf(*o.value, {"set", "off", "no"})) return InvalidSpec(o, ctx);
  return std::nullopt;
}

// --get-user-env[=timeout][mode]: digits, then S or L.
std::optional<SbatchFailure> CheckGetUserEnv(OptionArg& o, const ValueContext& ctx) {
  std::string v = Value(o);
  size_t i = 0;
  while (i < v.size() && IsDigit(v[i])) ++i;
  std::string mode = v.substr(i);
  if (!mode.empty() && !OneOf(mode, {"s", "l"})) return InvalidSpec(o, ctx);
  return std::nullopt;
}

// A comma list whose every item is one of `names` (any case).
bool ListOf(std::string_view v, std::initializer_list<std::string_view> names) {
  if (v.empty()) return false;
  for (std::string_view item : Split(v, ',')) {
    if (!OneOf(item, names)) return false;
  }
  return true;
}

std::optional<SbatchFailure> CheckMailType(OptionArg& o, const ValueContext& ctx) {
  if (!ListOf(Value(o),
              {"NONE", "BEGIN", "END", "FAIL", "REQUEUE", "ALL", "INVALID_DEPEND", "STAGE_OUT",
               "TIME_LIMIT", "TIME_LIMIT_90", "TIME_LIMIT_80", "TIME_LIMIT_50", "ARRAY_TASKS"})) {
    return InvalidSpec(o, ctx);
  }
  return std::nullopt;
}

std::optional<SbatchFailure> CheckSignal(OptionArg& o, const ValueContext& ctx) {
  core::JobExecSpec scratch;
  if (!api::ParseSignalSpec(Value(o), &scratch).ok()) return InvalidSpec(o, ctx);
  return std::nullopt;
}

std::optional<SbatchFailure> CheckGresFlags(OptionArg& o, const ValueContext& ctx) {
  if (!ListOf(Value(o), {"enforce-binding", "disable-binding"})) return InvalidSpec(o, ctx);
  return std::nullopt;
}

bool IsDistributionLevel(std::string_view v) {
  return OneOf(v, {"*", "block", "cyclic", "fcyclic"});
}

// -m {*|block|cyclic|arbitrary|plane=<n>}[:{*|block|cyclic|fcyclic}[:...]][,{Pack|NoPack}]
std::optional<SbatchFailure> CheckDistribution(OptionArg& o, const ValueContext& ctx) {
  std::string_view v = *o.value;
  size_t comma = v.find(',');
  if (comma != std::string_view::npos) {
    if (!OneOf(v.substr(comma + 1), {"Pack", "NoPack"})) return InvalidSpec(o, ctx);
    v = v.substr(0, comma);
  }
  std::vector<std::string_view> levels = Split(v, ':');
  std::string_view first = levels[0];
  bool ok = levels.size() <= 3 &&
            (OneOf(first, {"*", "block", "cyclic", "arbitrary"}) ||
             (first.substr(0, 6) == "plane=" && SlurmInteger(first.substr(6), true).has_value()));
  for (size_t i = 1; ok && i < levels.size(); ++i) ok = IsDistributionLevel(levels[i]);
  if (!ok) return InvalidSpec(o, ctx);
  return std::nullopt;
}

std::optional<SbatchFailure> CheckHint(OptionArg& o, const ValueContext& ctx) {
  for (std::string_view item : Split(Value(o), ',')) {
    if (!OneOf(item, {"compute_bound", "memory_bound", "multithread", "nomultithread", "help"})) {
      return Error(
          ctx, "unrecognized --hint argument \"" + std::string(item) + "\", see --hint=help", 1);
    }
  }
  return std::nullopt;
}

bool IsFrequency(std::string_view v) {
  return OneOf(v, {"low", "medium", "high", "highm1"}) || SlurmInteger(v, true).has_value();
}

bool IsGovernor(std::string_view v) {
  return OneOf(v,
               {"conservative", "ondemand", "performance", "powersave", "userspace", "schedutil"});
}

// --cpu-freq=<p1>[-p2[:p3]]: a frequency or governor, a range, and a governor.
std::optional<SbatchFailure> CheckCpuFreq(OptionArg& o, const ValueContext& ctx) {
  std::string v = Value(o);
  size_t colon = v.find(':');
  std::string range = v.substr(0, colon);
  bool ok = colon == std::string::npos || IsGovernor(std::string_view(v).substr(colon + 1));
  size_t dash = range.find('-');
  if (dash == std::string::npos) {
    ok = ok && (IsFrequency(range) || IsGovernor(range));
  } else {
    ok = ok && IsFrequency(range.substr(0, dash)) && IsFrequency(range.substr(dash + 1));
  }
  if (ok) return std::nullopt;
  SbatchFailure f = Error(ctx, "unrecognized --cpu-freq argument \"" + v + "\"", 255);
  f.text += Error(ctx, "Invalid --cpu-freq argument", 255).text;
  return f;
}

// --gpu-freq=[<type>=]<value>[,<type>=<value>][,verbose]
std::optional<SbatchFailure> CheckGpuFreq(OptionArg& o, const ValueContext& ctx) {
  for (std::string_view item : Split(Value(o), ',')) {
    if (EqualsIgnoreCase(item, "verbose")) continue;
    std::string_view value = item;
    size_t eq = item.find('=');
    bool ok = true;
    if (eq != std::string_view::npos) {
      ok = OneOf(item.substr(0, eq), {"memory", "graphics"});
      value = item.substr(eq + 1);
    }
    if (!ok || !IsFrequency(value)) {
      return Error(ctx, "Invalid --gpu-freq argument: gpu:" + Value(o), 255);
    }
  }
  return std::nullopt;
}

bool IsIdList(std::string_view v) {
  if (v.empty()) return false;
  for (std::string_view item : Split(v, ',')) {
    if (item.empty()) return false;
    for (char c : item) {
      if (!std::isxdigit(static_cast<unsigned char>(c)) && c != 'x' && c != 'X' && c != '*')
        return false;
    }
  }
  return true;
}

// --gpu-bind=[verbose,]{closest|map_gpu:<list>|mask_gpu:<list>|none|per_task:<n>|single:<n>}
std::optional<SbatchFailure> CheckGpuBind(OptionArg& o, const ValueContext& ctx) {
  std::string_view v = *o.value;
  if (v.substr(0, 8) == "verbose,") v.remove_prefix(8);
  bool ok = OneOf(v, {"closest", "none"}) ||
            (v.substr(0, 8) == "map_gpu:" && IsIdList(v.substr(8))) ||
            (v.substr(0, 9) == "mask_gpu:" && IsIdList(v.substr(9))) ||
            (v.substr(0, 9) == "per_task:" && SlurmInteger(v.substr(9), true)) ||
            (v.substr(0, 7) == "single:" && SlurmInteger(v.substr(7), true));
  if (!ok) return Error(ctx, "Invalid --gpu-bind argument: gpu:" + Value(o), 255);
  return std::nullopt;
}

// --mem-bind=[{quiet|verbose},]{none|rank|local|map_mem:<list>|mask_mem:<list>}[,sort|nosort|
// prefer]
std::optional<SbatchFailure> CheckMemBind(OptionArg& o, const ValueContext& ctx) {
  for (std::string_view item : Split(Value(o), ',')) {
    bool ok = OneOf(item, {"quiet", "verbose", "none", "no", "rank", "local", "sort", "nosort",
                           "prefer", "help"}) ||
              (item.substr(0, 8) == "map_mem:" && IsIdList(item.substr(8))) ||
              (item.substr(0, 9) == "mask_mem:" && IsIdList(item.substr(9)));
    if (!ok) return Error(ctx, "unrecognized --mem-bind argument \"" + Value(o) + "\"", 255);
  }
  return std::nullopt;
}

std::optional<SbatchFailure> CheckProfile(OptionArg& o, const ValueContext& ctx) {
  if (!ListOf(Value(o), {"all", "none", "energy", "task", "lustre", "network"})) {
    return Error(ctx, "invalid --profile=" + Value(o) + " option", 255);
  }
  return std::nullopt;
}

// --propagate[=rlimit[,rlimit...]]
std::optional<SbatchFailure> CheckPropagate(OptionArg& o, const ValueContext& ctx) {
  if (!o.value) return std::nullopt;
  for (std::string_view item : Split(*o.value, ',')) {
    std::string_view name = item;
    if (name.size() > 7 && EqualsIgnoreCase(name.substr(0, 7), "RLIMIT_")) name.remove_prefix(7);
    if (!OneOf(name, {"ALL", "NONE", "AS", "CORE", "CPU", "DATA", "FSIZE", "MEMLOCK", "NOFILE",
                      "NPROC", "RSS", "STACK"})) {
      SbatchFailure f = Error(ctx, "Bad rlimit name: " + std::string(item), 1);
      f.text += Error(ctx, "--propagate=" + *o.value + " is not valid.", 1).text;
      return f;
    }
  }
  return std::nullopt;
}

// --acctg-freq=<seconds> or <type>=<seconds>[,...]
std::optional<SbatchFailure> CheckAcctgFreq(OptionArg& o, const ValueContext& ctx) {
  for (std::string_view item : Split(Value(o), ',')) {
    size_t eq = item.find('=');
    bool ok = eq == std::string_view::npos
                  ? SlurmInteger(item, false).has_value()
                  : OneOf(item.substr(0, eq), {"task", "energy", "network", "filesystem"}) &&
                        SlurmInteger(item.substr(eq + 1), false).has_value();
    if (!ok) return Error(ctx, "Invalid --acctg-freq specification: " + Value(o), 255);
  }
  return std::nullopt;
}

// -B <sockets>[:cores[:threads]], each "*" or a count (or min-max).
std::optional<SbatchFailure> CheckExtraNodeInfo(OptionArg& o, const ValueContext& ctx) {
  static constexpr const char* kNth[] = {"first", "second", "third"};
  std::vector<std::string_view> parts = Split(Value(o), ':');
  for (size_t i = 0; i < parts.size() && i < 3; ++i) {
    std::string_view p = parts[i];
    size_t dash = p.find('-');
    bool ok =
        p == "*" || (SlurmInteger(p.substr(0, dash), false) &&
                     (dash == std::string_view::npos || SlurmInteger(p.substr(dash + 1), false)));
    if (!ok) {
      return Error(
          ctx, "Invalid numeric value \"" + std::string(p) + "\" for " + kNth[i] + " arg of -B.",
          1);
    }
  }
  return std::nullopt;
}

// --uid/--gid: a number or a name in the user or group database.
std::optional<SbatchFailure> CheckId(OptionArg& o, const ValueContext& ctx) {
  std::string v = Value(o);
  if (SlurmInteger(v, false) && v.find_first_not_of("0123456789") == std::string::npos) {
    return std::nullopt;
  }
  std::vector<char> buf(16384);
  if (o.name == "uid") {
    struct passwd pw, *found = nullptr;
    if (getpwnam_r(v.c_str(), &pw, buf.data(), buf.size(), &found) == 0 && found != nullptr) {
      o.value = std::to_string(found->pw_uid);
      return std::nullopt;
    }
  } else {
    struct group gr, *found = nullptr;
    if (getgrnam_r(v.c_str(), &gr, buf.data(), buf.size(), &found) == 0 && found != nullptr) {
      o.value = std::to_string(found->gr_gid);
      return std::nullopt;
    }
  }
  return InvalidSpec(o, ctx);
}

// --nice[=adjustment]: strtol's number ("x" is 0), |n| <= 2147483645; no value is 100.
std::optional<SbatchFailure> CheckNice(OptionArg& o, const ValueContext& ctx) {
  long long n = 100;
  if (o.value) {
    std::string_view rest;
    n = StrToLL(*o.value, &rest).value_or(0);
  }
  if (n > 2147483645LL || n < -2147483645LL) {
    return Error(ctx, "Invalid --nice value, out of range (+/- 2147483645)", 255);
  }
  o.value = std::to_string(n);
  return std::nullopt;
}

// --priority=<value>|TOP: strtoll's number ("x" is 0), from 0 to 4294967294.
std::optional<SbatchFailure> CheckPriority(OptionArg& o, const ValueContext& ctx) {
  if (EqualsIgnoreCase(Value(o), "TOP")) return std::nullopt;
  std::string_view rest;
  long long n = StrToLL(Value(o), &rest).value_or(0);
  if (n < 0) return Error(ctx, "Priority must be >= 0", 255);
  if (n >= 4294967294LL) return Error(ctx, "Priority must be < 4294967294", 255);
  o.value = std::to_string(n);
  return std::nullopt;
}

struct ValueCheck {
  std::string_view option;
  Check check;
};

constexpr ValueCheck kChecks[] = {
    {"acctg-freq", CheckAcctgFreq},
    {"begin", CheckDateTime},
    {"core-spec", CheckNonNegative},
    {"cores-per-socket", CheckPositive},
    {"cpu-freq", CheckCpuFreq},
    {"cpus-per-gpu", CheckPositive},
    {"cpus-per-task", CheckPositive},
    {"deadline", CheckDateTime},
    {"delay-boot", CheckDelayBoot},
    {"distribution", CheckDistribution},
    {"exclusive", CheckExclusive},
    {"extra-node-info", CheckExtraNodeInfo},
    {"get-user-env", CheckGetUserEnv},
    {"gid", CheckId},
    {"gpu-bind", CheckGpuBind},
    {"gpu-freq", CheckGpuFreq},
    {"gres-flags", CheckGresFlags},
    {"hint", CheckHint},
    {"kill-on-invalid-dep", CheckYesNo},
    {"mail-type", CheckMailType},
    {"mem", CheckMemory},
    {"mem-bind", CheckMemBind},
    {"mem-per-cpu", CheckMemory},
    {"mem-per-gpu", CheckMemory},
    {"mincpus", CheckPositive},
    {"nice", CheckNice},
    {"no-kill", CheckNoKill},
    {"nodes", CheckNodes},
    {"ntasks", CheckPositive},
    {"ntasks-per-core", CheckPositive},
    {"ntasks-per-gpu", CheckPositive},
    {"ntasks-per-node", CheckPositive},
    {"ntasks-per-socket", CheckPositive},
    {"ntasks-per-tres", CheckPositive},
    {"open-mode", CheckOpenMode},
    {"priority", CheckPriority},
    {"profile", CheckProfile},
    {"propagate", CheckPropagate},
    {"signal", CheckSignal},
    {"sockets-per-node", CheckPositive},
    {"switches", CheckSwitches},
    {"thread-spec", CheckPositive},
    {"threads-per-core", CheckPositive},
    {"time", CheckTime},
    {"time-min", CheckTime},
    {"tmp", CheckMemory},
    {"uid", CheckId},
    {"wait-all-nodes", CheckWaitAllNodes},
};

struct SubmitError {
  std::string_view option;
  std::string_view message;
};

// slurmctld's error strings (slurm_errno.c) for the values it judges.
constexpr SubmitError kSubmitErrors[] = {
    {"account", "Invalid account or account/partition combination specified"},
    {"array", "Invalid job array specification"},
    {"batch", "Job --batch option is invalid or not a subset of --constraints"},
    {"constraint", "Invalid feature specification"},
    {"dependency", "Job dependency problem"},
    {"exclude", "Invalid node name specified"},
    {"licenses", "Invalid license specification"},
    {"nodelist", "Invalid node name specified"},
    {"partition", "Invalid partition name specified"},
    {"prefer", "Invalid preferred feature specification"},
    {"qos", "Invalid qos specification"},
    {"reservation", "Requested reservation is invalid"},
    {"time-min", "Invalid time-min specification (exceeds job's time or other limits)"},
    {"uid", "Invalid user id"},
};

}  // namespace

std::optional<int> SlurmInteger(std::string_view text, bool positive) {
  std::string_view rest;
  std::optional<long long> n = StrToLL(text, &rest);
  if (!rest.empty() || !n || *n < 0 || (positive && *n == 0) || *n > INT_MAX) return std::nullopt;
  return static_cast<int>(*n);
}

std::optional<SbatchFailure> CheckSbatchValue(OptionArg& option, const ValueContext& ctx) {
  for (const ValueCheck& c : kChecks) {
    if (c.option == option.name) return c.check(option, ctx);
  }
  return std::nullopt;
}

std::string_view SlurmSubmitError(std::string_view option) {
  for (const SubmitError& e : kSubmitErrors) {
    if (e.option == option) return e.message;
  }
  return "";
}

}  // namespace berth::slurm
