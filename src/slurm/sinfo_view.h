// sinfo's view of nodes and partitions (Slurm 22.05 src/sinfo): the controller's node and
// partition JSON (GET /v1/nodes, GET /v1/partitions, and GET /v1/jobs for the GPUs in use),
// grouped into sinfo's lines, filtered, sorted, and printed with -o letters or -O names.
//
// Grouping follows sinfo: partition-oriented output has one line per partition and set of nodes
// that agree on every field the format shows that is not a count (state, features, GRES, reason,
// ...); counts (CPUs, memory, ...) are merged and shown as "min+" unless -e asks for exact
// matches. -N gives one line per node and partition.
//
// Node states read as sinfo prints them: "idle", "mix", "alloc", "drng", "drain", "down",
// "idle~" (powered down), "idle#" (powering up), with "*" when the node's agent is not
// responding ("down*", "drain*"), and the long forms for %T ("mixed", "allocated", ...).
//
// Thread safety: all functions are pure, except ParseSinfoArgs (getopt_long's process-wide
// state) and the time stamps, which read the time zone.
#ifndef BERTH_SLURM_SINFO_VIEW_H_
#define BERTH_SLURM_SINFO_VIEW_H_

#include <cstdint>
#include <nlohmann/json_fwd.hpp>
#include <string>
#include <string_view>
#include <vector>

#include "common/status.h"
#include "common/time.h"
#include "slurm/format.h"
#include "slurm/view_options.h"

namespace berth::slurm {

// sinfo's default formats. sinfo 22.05 writes them as -O lists (the man page shows the
// equivalent "%9P %.5a ..." strings, which differ in places: CPUS is left-justified, and the
// summary has one space before NODELIST). With them (not with -o/-O), the partition column is as
// wide as the longest partition name (at least 9) and, with -N, the node column as wide as the
// longest node name (at least 9).
inline constexpr char kSinfoFormat[] =
    "partition:9 ,available:.5 ,time:.10 ,nodes:.6 ,statecompact:.6 ,nodelist:0";
inline constexpr char kSinfoLongFormat[] =
    "partition:9 ,available:.5 ,time:.10 ,size:.10 ,root:.4 ,oversubscribe:.8 ,groups:.10 "
    ",nodes:.6 ,statelong:.11 ,nodelist:0";
inline constexpr char kSinfoSummaryFormat[] =
    "partition:9 ,available:.5 ,time:.10 ,nodeaiot:.16 ,nodelist:0";
inline constexpr char kSinfoNodeFormat[] = "nodelist:0 ,nodes:.6 ,partition:.9 ,statecompact:6";
inline constexpr char kSinfoNodeLongFormat[] =
    "nodelist:0 ,nodes:.6 ,partition:.9 ,statelong:.11 ,cpus:4 ,socketcorethread:.8 ,memory:.6 "
    ",disk:.8 ,weight:.6 ,features:.8 ,reason:20";
inline constexpr char kSinfoReasonFormat[] = "reason:20 ,user:9 ,timestamp:19 ,nodelist:0";
inline constexpr char kSinfoReasonLongFormat[] =
    "reason:20 ,userlong:12 ,timestamp:19 ,statecompact:6 ,nodelist:0";

struct SinfoNode {
  std::string name;
  std::string state;       // the controller's: IDLE, MIXED, ALLOCATED, DRAINING, DRAINED, DOWN,
                           // IDLE+POWERED_DOWN, IDLE+POWERING_UP
  bool responding = true;  // its agent is connected
  std::string resv_state;  // "MAINT" or "RESERVED" while an active reservation holds it
  std::string reason;
  Time reason_time = kNoTime;
  std::string reason_user;  // "" = unknown
  int64_t reason_uid = -1;
  int32_t cpus = 0, alloc_cpus = 0;
  int64_t mem_mib = 0, alloc_mem_mib = 0;
  int32_t sockets = 1, cores = 1, threads = 1, weight = 1;
  std::vector<std::string> gpu_types;                      // one per device, "" when untyped
  std::vector<bool> gpu_used;                              // per device, from the jobs' allocations
  std::vector<std::pair<std::string, int64_t>> gres;       // other GRES: total
  std::vector<std::pair<std::string, int64_t>> gres_used;  // and in use
  std::vector<std::string> features;
  std::vector<std::string> partitions;
};

struct SinfoPartition {
  std::string name;
  bool is_default = false;
  std::string state = "UP";  // UP, DOWN, DRAIN, INACTIVE
  Duration max_time = kInfinite;
  Duration default_time = kNoTime;  // kNoTime: none ("n/a")
  int32_t max_nodes = 0;            // 0: no limit
  int32_t priority_tier = 1;
  std::vector<std::string> nodes;  // names, in node order
};

struct SinfoData {
  std::vector<SinfoNode> nodes;            // in the controller's (configuration) order
  std::vector<SinfoPartition> partitions;  // in configuration order
};

// The states of a job that holds its nodes: only such jobs' allocations count as GPUs and GRES
// in use, and sinfo asks for these only (GET /v1/jobs?state=...).
inline constexpr std::string_view kNodeHoldingStates = "RUNNING,CONFIGURING,SUSPENDED,COMPLETING";

// Reads GET /v1/nodes, GET /v1/partitions and (optionally, null when not fetched) GET /v1/jobs
// bodies. GPUs in use are those the jobs' allocations name; without jobs, the first alloc_gpus
// devices of each node. Errors (kInvalidArgument) when "nodes" or "partitions" is missing.
Result<SinfoData> SinfoDataFromJson(const nlohmann::json& nodes, const nlohmann::json& partitions,
                                    const nlohmann::json& jobs);

// sinfo's state words: the compact one ("mix", "drain*", "idle~") and the long one ("mixed",
// "drained*"), lower case as sinfo prints them.
std::string NodeStateCompact(const SinfoNode& n);
std::string NodeStateLong(const SinfoNode& n);
// A Slurm node_state number (base state plus flag bits), for sorting and -t.
uint32_t NodeStateCode(const SinfoNode& n);

// -t: a comma list of state names (prefixes allowed, any case), or "all". Errors as sinfo:
// "Bad state string: \"foo\"".
struct NodeStateFilter {
  std::vector<uint32_t> codes;  // Slurm node_state values (NODE_STATE_DRAIN etc.)
  bool all = false;
};
Result<NodeStateFilter> ParseNodeStateList(std::string_view text);
bool NodeStateMatches(const NodeStateFilter& f, const SinfoNode& n);

// "gpu:a100:8,shard:16" (%G); "(null)" when none.
std::string NodeGres(const SinfoNode& n);
// "gpu:a100:4(IDX:0-3),shard:0" (GresUsed); "(null)" when none.
std::string NodeGresUsed(const SinfoNode& n);

struct SinfoOptions {
  std::string format;                   // -o / -O / SINFO_FORMAT, else the mode's default
  bool percent_form = true;             // false: -O
  std::string sort;                     // -S / SINFO_SORT, else the mode's default
  bool size_partitions = false;         // the default format: %P/%R as wide as the longest name
  bool size_nodes = false;              // -N's default format: %N as wide as the longest node name
  bool node_oriented = false;           // -N
  bool long_list = false;               // -l
  bool exact = false;                   // -e
  bool summarize = false;               // -s
  bool list_reasons = false;            // -R
  bool no_header = false;               // -h
  bool reservations = false;            // -T: the reservations instead of the nodes
  bool dead = false;                    // -d: only nodes not responding
  bool responding = false;              // -r: only responding nodes
  bool json = false;                    // --json
  int iterate = 0;                      // -i SECONDS
  std::vector<std::string> partitions;  // -p
  std::vector<std::string> nodes;       // -n, expanded
  NodeStateFilter states;               // -t (or -R's default: down,fail,drain)
  bool states_given = false;
};

struct SinfoParse {
  SinfoOptions options;
  ParseExit exit;
};

// Parses sinfo's command line (args[0] is the program name) and SINFO_FORMAT, SINFO_PARTITION,
// SINFO_SORT, as sinfo 22.05 does.
SinfoParse ParseSinfoArgs(const std::vector<std::string>& args, const EnvLookup& env);

// Whether sinfo knows a -o letter / a -O name (case-insensitive).
bool IsSinfoLetter(std::string_view key);
bool IsSinfoFieldName(std::string_view name);
// Sort keys sinfo accepts; kInvalidArgument "Invalid sort specification: X" for others.
Status CheckSinfoSortKeys(const std::vector<SortKey>& keys);

// The whole table sinfo prints for these options (header unless -h), one line per record.
// `format` is the parsed -o/-O/default format.
std::string RenderSinfo(const SinfoOptions& options, const OutputFormat& format,
                        const SinfoData& data);

// sinfo --json: {"meta": ..., "errors": [], "nodes": [...]} with the main keys of Slurm 22.05's
// node records (name, state, state_flags, cpus, alloc_cpus, idle_cpus, real_memory,
// alloc_memory, gres, gres_used, features, partitions, reason, ...).
nlohmann::json SinfoJson(const SinfoData& data);

}  // namespace berth::slurm

#endif  // BERTH_SLURM_SINFO_VIEW_H_
