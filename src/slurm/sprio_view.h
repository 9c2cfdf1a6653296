// sprio's view of pending jobs' priorities (Slurm 22.05 src/sprio), from the controller's
// GET /v1/priorities: the default columns chosen by the configured weights, the weighted factors
// as whole numbers ("%.0f"), the normalized ones with -n ("%.7f"), -w's line of weights, filters
// and sort keys.
//
// Thread safety: all functions are pure, except ParseSprioArgs (getopt_long's process-wide
// state).
#ifndef BERTH_SLURM_SPRIO_VIEW_H_
#define BERTH_SLURM_SPRIO_VIEW_H_

#include <cstdint>
#include <map>
#include <nlohmann/json_fwd.hpp>
#include <string>
#include <string_view>
#include <vector>

#include "common/status.h"
#include "slurm/format.h"
#include "slurm/view_options.h"

namespace berth::slurm {

inline constexpr char kSprioLongFormat[] =
    "%.15i %9r %.8u %.10Y %.10S %.10A %.10B %.10F %.10J %.10P %.10Q %.11N %.20T";
inline constexpr char kSprioNormLongFormat[] =
    "%.15i %9r %.8u %10y %10a %10b %10f %10j %10p %10q %20t";

// The factor names of the controller's JSON: "age", "assoc", "fairshare", "jobsize",
// "partition", "qos", "site".
struct SprioJob {
  uint32_t id = 0;
  std::string user, account, partition, qos;
  int64_t priority = 0;
  int32_t nice = 0;
  bool admin_set = false;  // --priority fixed it: factors show as 0 (Slurm's direct_prio)
  std::map<std::string, double> weighted;
  std::map<std::string, double> normalized;
  // Per-TRES weighted contributions ("cpu" -> 12.5); a bare number from the controller is
  // kept under "" (its total).
  std::map<std::string, double> tres;
};

struct SprioData {
  bool multifactor = true;  // false: sprio refuses, as with priority/basic
  std::string priority_type = "priority/multifactor";
  std::map<std::string, int64_t> weights;       // by factor name
  std::map<std::string, int64_t> tres_weights;  // "cpu" -> 1000
  std::vector<SprioJob> jobs;
};

// Reads GET /v1/priorities. Errors (kInvalidArgument) when "jobs" is missing.
Result<SprioData> SprioDataFromJson(const nlohmann::json& body);

struct SprioOptions {
  std::string format;       // -o / SPRIO_FORMAT; "" = chosen from the weights
  std::string sort = "i";   // -S
  bool long_list = false;   // -l
  bool normalized = false;  // -n
  bool weights = false;     // -w
  bool no_header = false;   // -h
  bool jobs_given = false;  // -j: "Unable to find jobs ..." when none matches
  std::vector<uint32_t> jobs;
  bool users_given = false;  // -u
  std::vector<std::string> users;
  std::vector<uint32_t> uids;
  std::vector<std::string> partitions;  // -p
};

struct SprioParse {
  SprioOptions options;
  ParseExit exit;
};

// Parses sprio's command line (args[0] is the program name) and SPRIO_FORMAT.
SprioParse ParseSprioArgs(const std::vector<std::string>& args, const EnvLookup& env);

// sprio's default format for these options and weights: JOBID PARTITION [USER] PRIORITY SITE,
// then a column for each factor whose weight is not zero (AGE ASSOC FAIRSHARE JOBSIZE PARTITION
// QOS TRES); -n uses the normalized columns; -l shows every column and NICE.
std::string SprioDefaultFormat(const SprioOptions& o, const SprioData& d);

bool IsSprioLetter(std::string_view key);
Status CheckSprioSortKeys(const std::vector<SortKey>& keys);

// What sprio prints: the header (unless -h), then either -w's "Weights" line or one line per
// job that passes the filters, sorted. With -j and no job left, sprio's message instead of
// lines.
std::string RenderSprio(const SprioOptions& o, const OutputFormat& format, const SprioData& d);

}  // namespace berth::slurm

#endif  // BERTH_SLURM_SPRIO_VIEW_H_
