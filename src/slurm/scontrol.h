// scontrol's text: the Key=Value records of `scontrol show job|node|partition|config` in Slurm
// 22.05's layout, and the parsing of `scontrol update` arguments into the controller's requests.
// src/cli/slurm_scontrol.cc does the talking to the controller and the printing.
//
// Layout (Slurm's slurm_sprint_*_info): a record's fields are grouped in lines. Multi-line
// records put "\n   " between lines and " " between fields of a line, and end in a blank line;
// with -o/--oneliner every separator is " " and the record is one line. Slurm's own spacing is
// kept, trailing blanks included, so that scripts that parse either form work unchanged.
//
// Thread safety: all functions are pure, except ParseScontrolArgs (getopt's process-wide state:
// one thread at a time).
#ifndef BERTH_SLURM_SCONTROL_H_
#define BERTH_SLURM_SCONTROL_H_

#include <nlohmann/json_fwd.hpp>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "common/status.h"
#include "common/time.h"
#include "slurm/job_view.h"
#include "slurm/view_options.h"

namespace berth::slurm {

using KeyValues = std::vector<std::pair<std::string, std::string>>;

// ---- scontrol's command line (scontrol_options.cc)

struct ScontrolOptions {
  bool one_liner = false;  // -o, --oneliner or the word "oneliner"
  bool details = false;    // -d, --details or the word "details"
  bool quiet = false;      // -Q, --quiet
};

// done: print `out` / `err` and exit with `exit_code` (ParseExit: help, version, a bad option, no
// command); otherwise run the command `words` with `options`.
struct ScontrolParse : ParseExit {
  ScontrolOptions options;
  std::vector<std::string> words;  // the command word first, never empty
};

// Parses scontrol's arguments (args[0] is the program name) as scontrol 22.05 does: options may
// stand anywhere among the words, as getopt permutes them ("scontrol show jobid -dd 12"), and so
// may the words "oneliner" and "details"; "update JobId=1 TimeLimit=-30" keeps its value. A bad
// option is "scontrol: unrecognized option '<word>'" and exit 1; no command prints the usage to
// stderr and exits 1.
ScontrolParse ParseScontrolArgs(const std::vector<std::string>& args);

// The usage text (-h, --help, --usage and the "help" command).
std::string ScontrolUsage();
// "slurm 22.05.8 (berth)\n" (-V, --version and the "version" command).
std::string ScontrolVersion();

// `scontrol show job` of one job, record end included.
std::string FormatScontrolJob(const JobView& v, bool one_liner, bool details = false);

// `scontrol show node` of one node of GET /v1/nodes (controller_http.cc ListNodes): fields in
// Slurm's order, then the whole record.
KeyValues ScontrolNodeFields(const nlohmann::json& node);
std::string FormatScontrolNode(const nlohmann::json& node, bool one_liner);

// `scontrol show partition` of one partition of GET /v1/partitions.
KeyValues ScontrolPartitionFields(const nlohmann::json& partition);
std::string FormatScontrolPartition(const nlohmann::json& partition, bool one_liner);

// `scontrol show config`: "Configuration data as of <time>" and one "Key = Value" line per pair
// of GET /v1/config, keys padded to 23 columns as Slurm's slurm_print_key_pairs.
std::string FormatScontrolConfig(const KeyValues& pairs, Time now);

// ---- scontrol update

// `scontrol update JobId=ID Key=Value ...`: the job and the PATCH /v1/jobs/ID body. Keys are
// matched without regard to case, as scontrol does: TimeLimit, TimeMin (Slurm's time formats,
// "+M"/"-M" relative to `current_limit` for TimeLimit), Nice, Partition, NumNodes ("2", "2-4"),
// Features, QOS, Account, Comment, NumTasks, Name, Licenses, Dependency. Errors are scontrol's:
// "Update of this parameter is not supported: Key=Value", "Invalid TimeLimit value: x", "No job
// identification provided". Returns the job id as given ("123", "123_4") and the body.
Result<std::pair<std::string, nlohmann::json>> ParseJobUpdate(const std::vector<std::string>& args,
                                                              Duration current_limit);
// Whether the update arguments change TimeLimit relative to the current one ("+30", "-1:00").
bool NeedsCurrentTimeLimit(const std::vector<std::string>& args);

// `scontrol update NodeName=LIST State=DRAIN|RESUME|DOWN|UNDRAIN|IDLE Reason=...`: the nodes
// (expanded), the action for POST /v1/nodes/NAME/ACTION ("drain", "resume", "down") and the
// reason. DRAIN and DOWN need a reason, as in Slurm ("You must specify a reason when DOWNING or
// DRAINING a node. Request denied").
struct NodeUpdate {
  std::vector<std::string> nodes;
  std::string action;
  std::string reason;
};
Result<NodeUpdate> ParseNodeUpdate(const std::vector<std::string>& args);

}  // namespace berth::slurm

#endif  // BERTH_SLURM_SCONTROL_H_
