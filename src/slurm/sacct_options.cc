// sacct's command line (Slurm 22.05 src/sacct/options.c) and the times -S/-E take
// (src/common/parse_time.c), in the local time zone.
#include <getopt.h>
#include <time.h>

#include <algorithm>
#include <charconv>
#include <cstdio>

#include "common/hostlist.h"
#include "common/strings.h"
#include "slurm/sacct_internal.h"
#include "slurm/sacct_view.h"

namespace berth::slurm {
namespace {

using sacct_internal::Number;

enum LongOption { kHelp = 0x100, kUsage, kDelimiter, kJson, kName, kYaml, kIgnored, kIgnoredArg };

const struct option kLongOptions[] = {
    {"allusers", no_argument, nullptr, 'a'},
    {"accounts", required_argument, nullptr, 'A'},
    {"allocations", no_argument, nullptr, 'X'},
    {"brief", no_argument, nullptr, 'b'},
    {"completion", no_argument, nullptr, 'c'},
    {"delimiter", required_argument, nullptr, kDelimiter},
    {"duplicates", no_argument, nullptr, 'D'},
    {"helpformat", no_argument, nullptr, 'e'},
    {"help", no_argument, nullptr, kHelp},
    {"endtime", required_argument, nullptr, 'E'},
    {"format", required_argument, nullptr, 'o'},
    {"jobs", required_argument, nullptr, 'j'},
    {"json", no_argument, nullptr, kJson},
    {"long", no_argument, nullptr, 'l'},
    {"name", required_argument, nullptr, kName},
    {"nodelist", required_argument, nullptr, 'N'},
    {"noheader", no_argument, nullptr, 'n'},
    {"parsable", no_argument, nullptr, 'p'},
    {"parsable2", no_argument, nullptr, 'P'},
    {"partition", required_argument, nullptr, 'r'},
    {"starttime", required_argument, nullptr, 'S'},
    {"state", required_argument, nullptr, 's'},
    {"truncate", no_argument, nullptr, 'T'},
    {"units", required_argument, nullptr, kIgnoredArg},
    {"usage", no_argument, nullptr, kUsage},
    {"user", required_argument, nullptr, 'u'},
    {"uid", required_argument, nullptr, 'u'},
    {"verbose", no_argument, nullptr, 'v'},
    {"version", no_argument, nullptr, 'V'},
    {"yaml", no_argument, nullptr, kYaml},
    {"clusters", required_argument, nullptr, 'M'},
    {"allclusters", no_argument, nullptr, 'L'},
    {nullptr, 0, nullptr, 0},
};
constexpr const char* kShortOptions = "aA:bcDeE:hj:lLM:nN:o:pPr:s:S:Tu:vVX";

constexpr const char* kLongFormat =
    "JobID,JobIDRaw,JobName,Partition,MaxVMSize,MaxVMSizeNode,MaxVMSizeTask,AveVMSize,MaxRSS,"
    "MaxRSSNode,MaxRSSTask,AveRSS,MaxPages,MaxPagesNode,MaxPagesTask,AvePages,MinCPU,MinCPUNode,"
    "MinCPUTask,AveCPU,NTasks,AllocCPUS,Elapsed,State,ExitCode,AveCPUFreq,ReqCPUFreqMin,"
    "ReqCPUFreqMax,ReqCPUFreqGov,ReqMem,ConsumedEnergy,MaxDiskRead,MaxDiskReadNode,"
    "MaxDiskReadTask,AveDiskRead,MaxDiskWrite,MaxDiskWriteNode,MaxDiskWriteTask,AveDiskWrite,"
    "ReqTRES,AllocTRES,TRESUsageInAve,TRESUsageInMax,TRESUsageInMaxNode,TRESUsageInMaxTask,"
    "TRESUsageInMin,TRESUsageInMinNode,TRESUsageInMinTask,TRESUsageInTot,TRESUsageOutMax,"
    "TRESUsageOutMaxNode,TRESUsageOutMaxTask,TRESUsageOutAve,TRESUsageOutTot";

SacctParse Finish(int code, std::string err, std::string out = "") {
  return StopWith<SacctParse>(code, std::move(err), std::move(out));
}

// "12", "12_3", "12.batch", "12_3.batch", "12.0".
std::optional<SacctJobId> ParseJobItem(const std::string& item) {
  SacctJobId id;
  std::string_view s = item;
  size_t dot = s.find('.');
  std::string_view step = dot == std::string_view::npos ? "" : s.substr(dot + 1);
  s = s.substr(0, dot);
  size_t underscore = s.find('_');
  std::optional<int64_t> job = Number(s.substr(0, underscore));
  if (!job || *job <= 0 || *job > 0xfffffff0LL) return std::nullopt;
  id.job_id = static_cast<uint32_t>(*job);
  if (underscore != std::string_view::npos) {
    std::optional<int64_t> task = Number(s.substr(underscore + 1));
    if (!task || *task < 0 || *task > 4000000) return std::nullopt;
    id.task = static_cast<int32_t>(*task);
  }
  if (dot != std::string_view::npos) {
    if (step == "batch") {
      id.step = SacctJobId::kBatch;
    } else if (Number(step) && *Number(step) >= 0 && *Number(step) < 0xfffffff0LL) {
      id.step = SacctJobId::kOtherStep;
      id.step_id = static_cast<uint32_t>(*Number(step));
    } else {
      return std::nullopt;
    }
  }
  return id;
}

// Applies one option; returns an error text or "".
std::string ApplyOption(int c, const std::string& value, Time now, SacctOptions& o) {
  switch (c) {
    case 'a':
      o.all_users = true;
      break;
    case 'A':
      for (const std::string& a : SplitList(value)) o.accounts.push_back(a);
      break;
    case 'X':
      o.allocations = true;
      break;
    case 'b': {
      Result<std::vector<SacctField>> f = ParseSacctFormat("jobid,state,exitcode");
      o.fields = *f;
      break;
    }
    case kDelimiter:
      o.delimiter = value;
      break;
    case 'e':
      o.helpformat = true;
      break;
    case 'E':
    case 'S': {
      Result<Time> t = ParseSacctTime(value, now);
      if (!t.ok()) return "Invalid time specification (pos=0): " + value;
      (c == 'S' ? o.start : o.end) = *t;
      break;
    }
    case 'j':
      for (const std::string& item : SplitList(value)) {
        std::optional<SacctJobId> id = ParseJobItem(item);
        if (!id) return "sacct: fatal: Bad job/step specified: " + item;
        o.jobs.push_back(*id);
      }
      break;
    case kJson:
      o.json = true;
      break;
    case 'l':
      o.fields = *ParseSacctFormat(kLongFormat);
      break;
    case kName:
      for (const std::string& n : SplitList(value)) o.names.push_back(n);
      break;
    case 'N': {
      Result<std::vector<std::string>> nodes = hostlist::Expand(value);
      if (!nodes.ok()) return "sacct: fatal: Invalid node list: " + value;
      o.nodelist.insert(o.nodelist.end(), nodes->begin(), nodes->end());
      break;
    }
    case 'n':
      o.noheader = true;
      break;
    case 'o': {
      Result<std::vector<SacctField>> f = ParseSacctFormat(value);
      if (!f.ok()) return "sacct: error: " + f.status().message();
      o.fields.insert(o.fields.end(), f->begin(), f->end());
      break;
    }
    case 'p':
      o.parsable = true;
      break;
    case 'P':
      o.parsable2 = true;
      break;
    case 'r':
      for (const std::string& p : SplitList(value)) o.partitions.push_back(p);
      break;
    case 's':
      for (const std::string& s : SplitList(value)) {
        std::optional<core::JobState> st = core::ParseJobState(s);
        if (!st) return "sacct: fatal: unrecognized job state value '" + s + "'";
        o.states.push_back(*st);
      }
      break;
    case 'u':
      for (const std::string& u : SplitList(value)) o.users.push_back(u);
      break;
    case 'V':
      o.version = true;
      break;
    case kYaml:
      return "sacct: error: --yaml is not supported by berth (use --json)";
    case 'c':
      return "sacct: error: --completion is not supported by berth";
    default:
      break;  // -D, -L, -M, -T, -v, --units: nothing to change here
  }
  return "";
}

// parse_time()'s fixed words: today 00:00, and the named times of day.
std::optional<Time> NamedTime(std::string_view word, const struct tm& today_midnight, Time now) {
  struct tm t = today_midnight;
  auto at = [&](int hour, int day_offset) {
    struct tm x = t;
    x.tm_hour = hour;
    x.tm_mday += day_offset;
    x.tm_isdst = -1;
    return static_cast<Time>(mktime(&x));
  };
  if (word == "now") return now;
  if (word == "today" || word == "midnight") return at(0, 0);
  if (word == "tomorrow") return at(0, 1);
  if (word == "noon") return at(12, 0);
  if (word == "elevenses") return at(11, 0);
  if (word == "fika") return at(15, 0);
  if (word == "teatime") return at(16, 0);
  return std::nullopt;
}

// "+3hours": seconds to add.
std::optional<Duration> Offset(std::string_view s) {
  if (s.empty()) return 0;
  if (s.front() != '+' && s.front() != '-') return std::nullopt;
  const int sign = s.front() == '-' ? -1 : 1;
  s.remove_prefix(1);
  size_t digits = 0;
  while (digits < s.size() && IsDigit(s[digits])) ++digits;
  std::optional<int64_t> n = Number(s.substr(0, digits));
  if (!n) return std::nullopt;
  std::string unit;
  for (char c : s.substr(digits)) unit += ToLowerAscii(c);
  int64_t scale = 0;
  if (unit.empty() || unit.rfind("sec", 0) == 0) scale = 1;
  if (unit.rfind("min", 0) == 0) scale = 60;
  if (unit.rfind("hour", 0) == 0) scale = 3600;
  if (unit.rfind("day", 0) == 0) scale = 86400;
  if (unit.rfind("week", 0) == 0) scale = 7 * 86400;
  if (scale == 0) return std::nullopt;
  return sign * *n * scale;
}

// "HH:MM[:SS]" -> seconds after midnight.
std::optional<Duration> ClockTime(std::string_view s) {
  int h = 0, m = 0, sec = 0;
  if (std::sscanf(std::string(s).c_str(), "%d:%d:%d", &h, &m, &sec) < 2) return std::nullopt;
  size_t colons = std::count(s.begin(), s.end(), ':');
  if (colons < 1 || colons > 2 || h < 0 || h > 23 || m < 0 || m > 59 || sec < 0 || sec > 59) {
    return std::nullopt;
  }
  for (char c : s) {
    if (c != ':' && !IsDigit(c)) return std::nullopt;
  }
  return h * 3600 + m * 60 + sec;
}

Time LocalTime(int year, int month, int day, Duration seconds_of_day) {
  struct tm t = {};
  t.tm_year = year - 1900;
  t.tm_mon = month - 1;
  t.tm_mday = day;
  t.tm_sec = static_cast<int>(seconds_of_day);
  t.tm_isdst = -1;
  return static_cast<Time>(mktime(&t));
}

// Dates: YYYY-MM-DD, MM/DD[/YY], MM.DD[.YY], MMDD[YY]; the year defaults to this one.
std::optional<Time> DatePart(std::string_view s, const struct tm& now_tm, Duration seconds) {
  int y = now_tm.tm_year + 1900, mo = 0, d = 0;
  std::string text(s);
  char sep = 0;
  if (std::count(text.begin(), text.end(), '-') == 2) {
    if (std::sscanf(text.c_str(), "%d-%d-%d", &y, &mo, &d) != 3) return std::nullopt;
  } else if (text.find('/') != std::string::npos || text.find('.') != std::string::npos) {
    sep = text.find('/') != std::string::npos ? '/' : '.';
    int yy = -1;
    std::string fmt = std::string("%d") + sep + "%d" + sep + "%d";
    int got = std::sscanf(text.c_str(), fmt.c_str(), &mo, &d, &yy);
    if (got < 2) return std::nullopt;
    if (got == 3) y = yy < 100 ? 2000 + yy : yy;
  } else if (text.size() == 4 || text.size() == 6) {
    for (char c : text) {
      if (!IsDigit(c)) return std::nullopt;
    }
    mo = static_cast<int>(*Number(text.substr(0, 2)));
    d = static_cast<int>(*Number(text.substr(2, 2)));
    if (text.size() == 6) y = 2000 + static_cast<int>(*Number(text.substr(4, 2)));
  } else {
    return std::nullopt;
  }
  if (mo < 1 || mo > 12 || d < 1 || d > 31 || y < 1970) return std::nullopt;
  return LocalTime(y, mo, d, seconds);
}

}  // namespace

std::string SacctUsage() {
  return "Usage: sacct [options]\n\tUse --help for help\n";
}

std::string SacctHelp() {
  return "sacct [<OPTION>]\n"
         "  -a, --allusers       all users' jobs (the default for root)\n"
         "  -A, --accounts=list  only jobs of these accounts\n"
         "  -b, --brief          JobID, State and ExitCode only\n"
         "      --delimiter=s    the separator of -p and -P (default '|')\n"
         "  -e, --helpformat     list the fields -o takes\n"
         "  -E, --endtime=time   the end of the time window (default now)\n"
         "  -j, --jobs=list      only these jobs (id, id_task, id.batch)\n"
         "      --json           JSON output\n"
         "  -l, --long           the long format\n"
         "      --name=list      only jobs with these names\n"
         "  -N, --nodelist=hosts only jobs that ran on these nodes\n"
         "  -n, --noheader       no header\n"
         "  -o, --format=list    fields to print (name%width; see -e)\n"
         "  -p, --parsable       fields delimited, with a delimiter at the end\n"
         "  -P, --parsable2      fields delimited, no delimiter at the end\n"
         "  -r, --partition=list only jobs of these partitions\n"
         "  -s, --state=list     only jobs in these states during the window\n"
         "  -S, --starttime=time the start of the window (default: midnight today; all time\n"
         "                       with -j; now with -s)\n"
         "  -u, --user=list      only these users' jobs\n"
         "  -X, --allocations    no step rows\n"
         "  -V, --version        --help, --usage\n";
}

SacctParse ParseSacctArgs(const std::vector<std::string>& args, Time now,
                          const std::string& format_env) {
  SacctParse result;
  SacctOptions& o = result.options;
  std::optional<SacctParse> stop;
  std::optional<std::vector<std::string>> operands =
      RunGetopt(args, kShortOptions, kLongOptions, [&](int c, const char* value) {
        if (c == kHelp || c == 'h') {
          stop = Finish(0, "", SacctHelp());
        } else if (c == kUsage) {
          stop = Finish(0, "", SacctUsage());
        } else if (std::string error = ApplyOption(c, value ? value : "", now, o); !error.empty()) {
          stop = Finish(1, error + "\n");
        }
        return !stop;
      });
  if (!operands) return Finish(1, "Try \"sacct --help\" for more information\n");
  if (stop) return *stop;
  if (!operands->empty()) {
    std::string err = "sacct: error: Unknown arguments:\nsacct: error: ";
    for (const std::string& word : *operands) err += " " + word;
    return Finish(1, err + "\n");
  }
  if (o.helpformat) return Finish(0, "", SacctHelpFormat());
  if (o.fields.empty() && !format_env.empty()) {
    Result<std::vector<SacctField>> f = ParseSacctFormat(format_env);
    if (!f.ok()) return Finish(1, "sacct: error: " + f.status().message() + "\n");
    o.fields = *f;
  }
  if (o.fields.empty()) o.fields = DefaultSacctFields();
  return result;
}

Result<Time> ParseSacctTime(std::string_view text, Time now) {
  const Status bad = Status::InvalidArgument("Invalid time specification: " + std::string(text));
  std::string lower = ToLower(text);
  time_t tt = static_cast<time_t>(now);
  struct tm now_tm;
  localtime_r(&tt, &now_tm);
  struct tm midnight = now_tm;
  midnight.tm_hour = midnight.tm_min = midnight.tm_sec = 0;
  // A word with an optional offset: "now-1hour", "today+2days".
  size_t sign = lower.find_first_of("+-");
  if (std::isalpha(static_cast<unsigned char>(lower.empty() ? ' ' : lower[0]))) {
    if (lower.rfind("uts", 0) == 0) {
      std::optional<int64_t> n = Number(lower.substr(3));
      if (n && *n >= 0) return *n;
      return bad;
    }
    std::string word = lower.substr(0, sign);
    std::optional<Time> base = NamedTime(word, midnight, now);
    std::optional<Duration> off = Offset(sign == std::string::npos ? "" : lower.substr(sign));
    if (!base || !off) return bad;
    return *base + *off;
  }
  // "DATE[THH:MM[:SS]]", "HH:MM[:SS]" (today), or a date alone (its midnight).
  std::string date = lower, clock;
  if (size_t t = lower.find('t'); t != std::string::npos) {
    date = lower.substr(0, t);
    clock = lower.substr(t + 1);
  } else if (lower.find(':') != std::string::npos) {
    date.clear();
    clock = lower;
  }
  Duration seconds = 0;
  if (!clock.empty()) {
    std::optional<Duration> c = ClockTime(clock);
    if (!c) return bad;
    seconds = *c;
  }
  if (date.empty()) {
    return LocalTime(now_tm.tm_year + 1900, now_tm.tm_mon + 1, now_tm.tm_mday, seconds);
  }
  std::optional<Time> d = DatePart(date, now_tm, seconds);
  if (!d) return bad;
  return *d;
}

}  // namespace berth::slurm
