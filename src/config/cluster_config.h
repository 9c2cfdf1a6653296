// berth's cluster configuration file (docs/formats/cluster-config.md): slurm.conf's line format
// (Key=Value pairs, one record per line, '#' comments, '\' continuation), with Slurm's own
// NodeName/PartitionName/Licenses/scheduler keys, plus records that sacctmgr keeps in Slurm's
// database (QOS=, Account=, User=), so that one file describes a whole cluster.
//
// The controller reads it; `berth sim --cluster FILE` reads it; golden scenario files start
// with it.
#ifndef BERTH_CONFIG_CLUSTER_CONFIG_H_
#define BERTH_CONFIG_CLUSTER_CONFIG_H_

#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "common/status.h"
#include "core/config.h"
#include "core/model/cluster_spec.h"

namespace berth::config {

// What the parser carries from one line to the next. It is not part of the cluster's
// description: ApplyConfigLine reads and updates it, nothing else needs it.
struct ConfigParseState {
  // The Key=Value pairs of NodeName=DEFAULT / PartitionName=DEFAULT lines, in file order (later
  // pairs win), merged under each following NodeName / PartitionName line as Slurm does.
  std::vector<std::pair<std::string, std::string>> node_defaults;
  std::vector<std::pair<std::string, std::string>> partition_defaults;
  // Partitions that said Nodes=ALL. Slurm's ALL means every node of the file, so these also get
  // each node declared after them.
  std::vector<std::string> all_nodes_partitions;
  // Set by the first scheduler key. SchedulerPolicy= replaces the whole scheduler configuration
  // with a preset, so after another scheduler key it is refused rather than silently undoing it.
  bool scheduler_key_seen = false;
};

// How a Slurm site's slurm.conf keeps accounting, which changes what Slurm's commands show of a
// job (QOS=(null) without accounting; TRES= lists GPUs only when they are a tracked TRES). Read
// from a slurm.conf by ReadSlurmSiteConfig (config/slurm_site.h); berth's own configuration
// files keep the defaults (accounting on, GPUs tracked).
struct SlurmAccounting {
  bool enabled = true;       // false: AccountingStorageType=accounting_storage/none
  bool gpus_in_tres = true;  // AccountingStorageTRES names gres/gpu
};

struct ClusterConfig {
  core::ClusterSpec cluster;
  SlurmAccounting slurm_accounting;
  core::SchedulerConfig scheduler = core::SchedulerConfig::Multifactor();
  // Keys berth read but does not act on (each listed once), for a warning. Top-level keys appear
  // as written in Slurm's documentation ("SlurmctldHost"); keys inside a record or a list carry
  // their context ("NodeName:NodeAddr", "SchedulerParameters:bf_continue", "NodeName:State=DOWN").
  std::vector<std::string> ignored_keys;
  ConfigParseState parse_state;
};

// Parses a whole file's text. `name` is used in messages: "name:line: what is wrong". Besides
// what ApplyConfigLine checks, the whole file must be consistent: partitions list only declared
// nodes and allow only declared accounts and QoS, QoS preempt declared QoS, accounts have
// declared parents (no cycles), users are in declared accounts ("root" and "normal" are implicit).
Result<ClusterConfig> ParseClusterConfig(std::string_view text, std::string_view name);

// Applies one line (already joined across continuations) to `config`. Blank and comment lines
// are accepted and ignored. Exposed so that scenario files can mix config lines with events.
// Errors name the bad key and value but no file or line (ParseClusterConfig adds those). A
// NodeName, PartitionName, QOS, Account or User line that fails changes nothing; on a line of
// several top-level keys, the keys before the bad one stay applied.
Status ApplyConfigLine(std::string_view line, ClusterConfig& config);

// Reads a file in one go and parses it; messages start with `path`. An unreadable file is
// kNotFound (missing) or kInvalidArgument ("path: cannot read: reason").
Result<ClusterConfig> ReadClusterConfig(const std::string& path);

}  // namespace berth::config

#endif  // BERTH_CONFIG_CLUSTER_CONFIG_H_
