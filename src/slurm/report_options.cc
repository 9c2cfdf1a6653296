#include "slurm/report_options.h"

#include <getopt.h>

#include <optional>

#include "common/strings.h"
#include "slurm/sacct_internal.h"
#include "slurm/sacct_view.h"

namespace berth::slurm {
namespace {

enum LongOnly { kTop = 1000, kLast, kFormat };

constexpr const char* kProg = "berth report";

const struct option kUsageOptions[] = {{"starttime", required_argument, nullptr, 'S'},
                                       {"endtime", required_argument, nullptr, 'E'},
                                       {"users", required_argument, nullptr, 'u'},
                                       {"accounts", required_argument, nullptr, 'A'},
                                       {"allusers", no_argument, nullptr, 'a'},
                                       {"top", required_argument, nullptr, kTop},
                                       {"format", required_argument, nullptr, kFormat},
                                       {"parsable2", no_argument, nullptr, 'P'},
                                       {"noheader", no_argument, nullptr, 'n'},
                                       {"help", no_argument, nullptr, 'h'},
                                       {nullptr, 0, nullptr, 0}};

const struct option kAdviceOptions[] = {{"starttime", required_argument, nullptr, 'S'},
                                        {"endtime", required_argument, nullptr, 'E'},
                                        {"last", required_argument, nullptr, kLast},
                                        {"format", required_argument, nullptr, kFormat},
                                        {"parsable2", no_argument, nullptr, 'P'},
                                        {"noheader", no_argument, nullptr, 'n'},
                                        {"help", no_argument, nullptr, 'h'},
                                        {nullptr, 0, nullptr, 0}};

std::string Error(const std::string& message) {
  return std::string(kProg) + ": error: " + message + "\n";
}

// A count option: a whole number >= 0.
std::optional<int> Count(const char* value) {
  std::optional<int64_t> n = sacct_internal::Number(value);
  if (!n || *n < 0 || *n > 1000000) return std::nullopt;
  return static_cast<int>(*n);
}

// What the options say besides ReportOptions' own fields.
struct ParseState {
  std::optional<Time> start, end;
  bool parsable = false;
  bool help = false;
  std::string error;  // a bad value: stop with exit code 1
};

// Applies one option; false stops parsing (help, or a bad value in st.error).
bool ApplyOption(int c, const char* value, Time now, ReportOptions& o, ParseState& st) {
  switch (c) {
    case 'S':
    case 'E': {
      Result<Time> t = ParseSacctTime(value, now);
      if (!t.ok()) {
        st.error = "invalid time for " + std::string(c == 'S' ? "-S" : "-E") + ": '" + value +
                   "' (try now-7days, 2024-03-01 or 2024-03-01T10:00)";
        return false;
      }
      (c == 'S' ? st.start : st.end) = *t;
      return true;
    }
    case 'u':
      for (const std::string& u : SplitNonEmpty(value)) o.users.push_back(u);
      return true;
    case 'A':
      for (const std::string& a : SplitNonEmpty(value)) o.accounts.push_back(ToLower(a));
      return true;
    case 'a':
      o.all_users = true;
      return true;
    case kTop:
    case kLast: {
      std::optional<int> n = Count(value);
      if (!n) {
        st.error = std::string(c == kTop ? "--top" : "--last") +
                   " needs a whole number >= 0, not '" + value + "'";
        return false;
      }
      (c == kTop ? o.top : o.last) = *n;
      return true;
    }
    case kFormat: {
      std::optional<ReportFormat> f = ParseReportFormat(value);
      if (!f) {
        st.error = "unknown format '" + std::string(value) + "' (table, csv or json)";
        return false;
      }
      o.format = *f;
      return true;
    }
    case 'P':
      st.parsable = true;
      return true;
    case 'n':
      o.noheader = true;
      return true;
    default:  // 'h'
      st.help = true;
      return false;
  }
}

}  // namespace

std::string ReportHelp() {
  return "Usage: berth report usage [options]     requested vs used CPU, memory and GPU hours\n"
         "       berth report advice [USER] [options]  right-sizing advice from recent jobs\n"
         "\n"
         "Run `berth report usage --help` or `berth report advice --help` for the options.\n"
         "The figures and rules: docs/report.md.\n";
}

std::string ReportUsageHelp() {
  return "Usage: berth report usage [options]\n"
         "\n"
         "Per account and user over a period: jobs, CPU-hours allocated and used, memory\n"
         "GiB-hours requested and at the jobs' peaks, GPU-hours allocated and used, and the\n"
         "most over-provisioned jobs. Each job counts for the part of its run inside the period.\n"
         "\n"
         "  -S, --starttime=TIME   start of the period (default: 30 days before the end)\n"
         "  -E, --endtime=TIME     end of the period, not included (default: now)\n"
         "                         TIME as sacct reads it: now-7days, today, 2024-03-01,\n"
         "                         2024-03-01T10:00, 10:30, 03/01, ...\n"
         "  -u, --users=LIST       these users (names or uids); default: your own jobs\n"
         "                         (root: everyone's)\n"
         "  -a, --allusers         every user's jobs\n"
         "  -A, --accounts=LIST    these accounts only\n"
         "      --top=N            list the N most over-provisioned jobs (default 10; 0: none)\n"
         "      --format=FORMAT    table (default), csv or json\n"
         "  -P, --parsable2        fields separated by '|' (as sreport -P)\n"
         "  -n, --noheader         no titles or header lines\n"
         "  -h, --help             this help\n";
}

std::string ReportAdviceHelp() {
  return "Usage: berth report advice [USER] [options]\n"
         "\n"
         "Right-sizing advice for memory, time limit, CPUs and GPUs from USER's jobs that\n"
         "ended in the period (default USER: you), with the evidence: how many jobs, their\n"
         "largest and median use, what they asked.\n"
         "\n"
         "  -S, --starttime=TIME   start of the period (default: 30 days before the end)\n"
         "  -E, --endtime=TIME     end of the period, not included (default: now)\n"
         "      --last=N           only the N jobs that ended last (default: all)\n"
         "      --format=FORMAT    table (default), csv or json\n"
         "  -P, --parsable2        fields separated by '|'\n"
         "  -n, --noheader         no title or header line\n"
         "  -h, --help             this help\n";
}

ReportParse ParseReportArgs(const std::vector<std::string>& args, Time now) {
  ReportParse p;
  ReportOptions& o = p.options;
  if (args.size() < 2) {
    p.exit = ExitWith(2, ReportHelp());
    return p;
  }
  const std::string& sub = args[1];
  if (sub == "-h" || sub == "--help" || sub == "help") {
    p.exit = ExitWith(0, "", ReportHelp());
    return p;
  }
  if (sub != "usage" && sub != "advice") {
    p.exit = ExitWith(2, Error("unknown report '" + sub + "' (usage or advice)"));
    return p;
  }
  o.kind = sub == "usage" ? ReportKind::kUsage : ReportKind::kAdvice;
  const bool usage = o.kind == ReportKind::kUsage;
  const std::string prog = std::string(kProg) + " " + sub;
  std::vector<std::string> rest(args.begin() + 1, args.end());
  rest[0] = prog;  // getopt's messages name it
  ParseState st;
  auto handle = [&](int c, const char* value) { return ApplyOption(c, value, now, o, st); };
  std::optional<std::vector<std::string>> operands =
      usage ? RunGetopt(rest, "S:E:u:A:aPnh", kUsageOptions, handle)
            : RunGetopt(rest, "S:E:Pnh", kAdviceOptions, handle);
  const std::string& help_text = usage ? ReportUsageHelp() : ReportAdviceHelp();
  if (st.help) {
    p.exit = ExitWith(0, "", help_text);
    return p;
  }
  if (!st.error.empty()) {
    p.exit = ExitWith(1, Error(st.error));
    return p;
  }
  if (!operands) {
    p.exit = ExitWith(2, "Try `" + prog + " --help` for the options.\n");
    return p;
  }
  if (usage && !operands->empty()) {
    p.exit = ExitWith(2, Error("unexpected argument '" + operands->front() + "'"));
    return p;
  }
  if (!usage && operands->size() > 1) {
    p.exit = ExitWith(2, Error("give one USER at most, not '" + (*operands)[1] + "'"));
    return p;
  }
  if (!usage && !operands->empty()) o.user = operands->front();
  if (st.parsable && o.format != ReportFormat::kJson) o.format = ReportFormat::kParsable;
  o.end = st.end.value_or(now);
  o.start = st.start.value_or(o.end - kDefaultReportPeriod);
  if (o.start >= o.end) {
    p.exit = ExitWith(1, Error("the period is empty: -S " + SlurmTimeText(o.start) +
                               " is not before -E " + SlurmTimeText(o.end)));
  }
  return p;
}

}  // namespace berth::slurm
