// `berth report usage|advice`: the command line (docs/report.md).
//
//   berth report usage  [-S TIME] [-E TIME] [-u USERS] [-A ACCOUNTS] [-a] [--top N]
//                       [--format table|csv|json] [-P] [-n]
//   berth report advice [USER] [-S TIME] [-E TIME] [--last N] [--format ...] [-P] [-n]
//
// Times as sacct reads them (ParseSacctTime: "now-7days", "2024-03-01", "10:30", ...). The
// period is [start, end) for usage, and advice takes the jobs that ended in [start, end]; by
// default the 30 days up to now; -S alone ends now, -E alone starts 30 days before it.
//
// Exit codes: usage errors (an unknown subcommand or option, a missing value) 2; bad values (a
// time, a format, a count, an empty period) 1, with a message naming the value.
//
// Thread safety: ParseReportArgs uses getopt_long (process-wide state).
#ifndef BERTH_SLURM_REPORT_OPTIONS_H_
#define BERTH_SLURM_REPORT_OPTIONS_H_

#include <string>
#include <vector>

#include "common/time.h"
#include "slurm/report_format.h"
#include "slurm/usage_report.h"
#include "slurm/view_options.h"

namespace berth::slurm {

inline constexpr Duration kDefaultReportPeriod = 30 * 86400;

enum class ReportKind { kUsage, kAdvice };

struct ReportOptions {
  ReportKind kind = ReportKind::kUsage;
  Time start = 0, end = 0;
  std::vector<std::string> users;     // usage: -u (names or uids)
  std::vector<std::string> accounts;  // usage: -A (lower case, as Slurm stores accounts)
  bool all_users = false;             // usage: -a
  int top = kDefaultTopJobs;          // usage: --top
  std::string user;                   // advice: the USER operand ("" = the caller)
  int last = 0;                       // advice: --last (0 = every job of the period)
  ReportFormat format = ReportFormat::kTable;
  bool noheader = false;
};

struct ReportParse {
  ReportOptions options;
  ParseExit exit;  // done: print and exit (help, errors)
};

// args[0] is the command's name ("report"), args[1] the subcommand. `now` resolves the times.
ReportParse ParseReportArgs(const std::vector<std::string>& args, Time now);

std::string ReportHelp();
std::string ReportUsageHelp();
std::string ReportAdviceHelp();

}  // namespace berth::slurm

#endif  // BERTH_SLURM_REPORT_OPTIONS_H_
