// sshare's view of the fair-share tree (Slurm 22.05 src/sshare), from the controller's
// GET /v1/fairshare: the rows an invocation selects (-a, -A, -u, -U), the fields by name (-o,
// prefixes as Slurm matches them, "Name%width"), and print_fields' layout (a header and a dashed
// line, each value in its field's width and one space after it; -p/-P '|'-delimited).
//
// The Account column indents each row one space deeper than its parent when the parent is
// printed too (Slurm's slurmdb_tree_name_get); a user row shows its account's name there.
//
// Thread safety: all functions are pure, except ParseSshareArgs (getopt_long's process-wide
// state).
#ifndef BERTH_SLURM_SSHARE_VIEW_H_
#define BERTH_SLURM_SSHARE_VIEW_H_

#include <cstdint>
#include <nlohmann/json_fwd.hpp>
#include <optional>
#include <string>
#include <vector>

#include "common/status.h"
#include "slurm/view_options.h"

namespace berth::slurm {

// One account or association, as GET /v1/fairshare gives it.
struct SshareRow {
  int32_t id = 0;
  std::string account, parent, user;  // user "" for an account row
  std::optional<int64_t> raw_shares;  // none for the root
  double norm_shares = 0, raw_usage = 0, norm_usage = 0, effective_usage = 0;
  std::optional<double> fairshare;  // none for accounts under Fair Tree
  double level_fs = 0;              // may be +inf
};

struct SshareData {
  std::string cluster;
  bool fair_tree = true;
  std::vector<SshareRow> rows;  // in tree order
};

// Reads GET /v1/fairshare. Errors (kInvalidArgument) when "rows" is missing or malformed.
Result<SshareData> SshareDataFromJson(const nlohmann::json& body);

struct SshareOptions {
  bool all_users = false;             // -a (or -u -1)
  std::vector<std::string> accounts;  // -A
  std::vector<std::string> users;     // -u, or the caller when neither -a nor -u
  bool users_only = false;            // -U
  bool long_list = false;             // -l
  bool partitions = false;            // -m
  std::vector<std::string> fields;    // -o (accumulated); empty = the default list
  int parsable = 0;                   // 1: -p (trailing '|'), 2: -P (none)
  bool no_header = false;             // -n / -h
};

struct SshareParse {
  SshareOptions options;
  ParseExit exit;
};

// Parses sshare's command line (args[0] is the program name). `caller` is the calling user's
// name ("" when unknown: then every user is shown, as Slurm does when the uid has no name).
SshareParse ParseSshareArgs(const std::vector<std::string>& args, const std::string& caller);

// A field to print: Slurm's name and width (negative: left-justified).
struct SshareField {
  std::string name;
  int width = 0;
};

// The fields for these options: -o's, else Slurm's default list (Fair Tree adds LevelFS to -l;
// -m adds Partition). Errors (kInvalidArgument, "Invalid field requested: \"X\"") on a name
// that prefixes no field.
Result<std::vector<SshareField>> SshareFields(const SshareOptions& o, bool fair_tree);

// `sshare --helpformat`: the field names, four to a line.
std::string SshareHelpFormat();

// The rows the options select, in tree order.
std::vector<const SshareRow*> SelectSshareRows(const SshareOptions& o, const SshareData& d);

// What sshare prints: the header (unless -n), then one line per selected row.
std::string RenderSshare(const SshareOptions& o, const std::vector<SshareField>& fields,
                         const SshareData& d);

// print_fields_double's text for `v` in a field `width` wide (justified, no trailing space).
std::string SshareDouble(double v, int width);

}  // namespace berth::slurm

#endif  // BERTH_SLURM_SSHARE_VIEW_H_
