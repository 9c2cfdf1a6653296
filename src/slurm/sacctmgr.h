// sacctmgr, as Slurm 22.05's: its command line (options, then VERB ENTITY [names] [where ...]
// [set ...] [format=...]) parsed into a request, the tables of `show` (Slurm's columns, widths,
// -p/-P/-n) and the messages of add, modify and delete. The controller applies the requests
// (config/accounting_change.h); this side only reads and prints.
//
// Thread safety: all functions are pure, except ParseSacctmgrArgs (getopt's process-wide state).
#ifndef BERTH_SLURM_SACCTMGR_H_
#define BERTH_SLURM_SACCTMGR_H_

#include <nlohmann/json.hpp>
#include <string>
#include <utility>
#include <vector>

#include "common/status.h"
#include "config/accounting_change.h"
#include "slurm/view_options.h"

namespace berth::slurm {

enum class SacctmgrVerb { kShow, kAdd, kModify, kDelete };

// A column of `show`: Slurm's header and width (negative: left-justified, as "%-20").
struct SacctmgrField {
  std::string name;  // canonical field name ("MaxJobsPU")
  std::string header;
  int width = 10;
};

struct SacctmgrCommand {
  bool immediate = false;   // -i: no question before committing
  int parsable = 0;         // 1: -p (a '|' after each field), 2: -P (between fields)
  bool no_header = false;   // -n
  bool quiet = false;       // -Q
  bool with_assoc = false;  // -s / WithAssoc: accounts and users with their associations
  SacctmgrVerb verb = SacctmgrVerb::kShow;
  config::AcctEntity entity = config::AcctEntity::kAccount;
  std::vector<std::pair<std::string, std::string>> where;  // bare names as Name=
  std::vector<std::pair<std::string, std::string>> set;
  std::vector<SacctmgrField> format;  // show: format= (empty: Slurm's default columns)
};

struct SacctmgrParse : ParseExit {
  SacctmgrCommand command;
};

// Parses sacctmgr's command line (args[0] is the program name). --help, --version, and errors
// ("Unknown field 'X'", "invalid keyword: X", exit 1) stop with what to print.
SacctmgrParse ParseSacctmgrArgs(const std::vector<std::string>& args);

// The field list of `format=` for `entity` ("Name,Priority%20"). kInvalidArgument "Unknown field
// 'X'" for a name that prefixes no field.
Result<std::vector<SacctmgrField>> ParseSacctmgrFormat(config::AcctEntity entity,
                                                       std::string_view text);
std::vector<SacctmgrField> DefaultSacctmgrFields(config::AcctEntity entity, bool with_assoc);

// What sacctmgr shows: GET /v1/associations, the cluster's name.
struct SacctmgrData {
  std::string cluster = "berth";
  std::vector<core::QosSpec> qos;
  std::vector<core::AccountSpec> accounts;
  std::vector<core::UserSpec> users;
  std::map<std::string, std::string> admin_levels;
};
Result<SacctmgrData> SacctmgrDataFromJson(const nlohmann::json& body);

// `show ENTITY`: the rows that the where conditions select, in Slurm's layout.
std::string RenderSacctmgrShow(const SacctmgrCommand& c, const SacctmgrData& d);

// The lines sacctmgr prints for a change before it commits (" Adding Account(s)", " Modified
// account associations...", " Deleting users..."), from the controller's answer to it.
std::string RenderSacctmgrChange(const SacctmgrCommand& c, const nlohmann::json& answer,
                                 const std::string& cluster);

// A TRES limit list as sacctmgr prints it ("cpu=8,mem=4G,node=2,gres/gpu=4"); "" when none.
std::string SacctmgrTres(const core::TresLimits& l);

std::string SacctmgrUsage();

}  // namespace berth::slurm

#endif  // BERTH_SLURM_SACCTMGR_H_
