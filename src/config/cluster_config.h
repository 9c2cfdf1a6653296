// berth's cluster configuration file (docs/formats/cluster-config.md): slurm.conf's line format
// (Key=Value pairs, one record per line, '#' comments, '\' continuation), with Slurm's own
// NodeName/PartitionName/Licenses/scheduler keys, plus records that sacctmgr keeps in Slurm's
// database (QOS=, Account=, User=), so that one file describes a whole cluster.
//
// The controller reads it; `berth sim --cluster FILE` reads it; golden scenario files start
// with it.
#ifndef BERTH_CONFIG_CLUSTER_CONFIG_H_
#define BERTH_CONFIG_CLUSTER_CONFIG_H_

#include <map>
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

// Power saving and autoscaling (docs/autoscaling.md), with slurm.conf's keys and defaults. It is
// on when ResumeProgram is set: nodes with State=CLOUD start powered down, and nodes idle for
// SuspendTime are powered down when SuspendProgram is set too.
struct PowerSaving {
  // Programs run with a hostlist argument ("gpu[005-006]"), as Slurm runs them. The value
  // "local" names berth's built-in provider instead: it starts and stops `berth agent`
  // processes on the controller's machine, each declaring its node's configured size.
  std::string resume_program;
  std::string suspend_program;
  std::string resume_fail_program;  // run with the nodes that did not resume in time
  int64_t suspend_time = -1;        // seconds idle before a node is powered down; -1 never
  int64_t suspend_timeout = 30;     // seconds a node takes to power down (not usable meanwhile)
  int64_t resume_timeout = 60;      // seconds a resumed node has to register, else DOWN
  int32_t resume_rate = 300;        // nodes resumed per minute at most; 0 no limit
  int32_t suspend_rate = 60;        // nodes suspended per minute at most; 0 no limit
  // Never powered down: these nodes, and those of these partitions. With
  // suspend_exc_nodes_keep > 0 ("LIST:N"), only that many of the listed nodes are kept up.
  std::vector<std::string> suspend_exc_nodes;
  int32_t suspend_exc_nodes_keep = 0;
  std::vector<std::string> suspend_exc_parts;

  bool enabled() const { return !resume_program.empty(); }
};

struct ClusterConfig {
  core::ClusterSpec cluster;
  PowerSaving power;
  SlurmAccounting slurm_accounting;
  core::SchedulerConfig scheduler = core::SchedulerConfig::Multifactor();
  // ImageCacheSize: every node's image cache is pruned to this after its container jobs end
  // (docs/containers.md); 0 = no limit. An agent's --image-cache-size wins over it.
  int64_t image_cache_mib = 0;
  // NodeHostname and NodeAddr of the nodes that give them: node name -> value. A node agent
  // started with the configuration takes the name of the node whose NodeHostname (else NodeAddr)
  // is its host, as slurmd does (NodeNameOfHost).
  std::map<std::string, std::string> node_hostnames;
  std::map<std::string, std::string> node_addrs;
  // GraceTime (seconds) of the partitions and QoS that give one: a job picked for preemption is
  // sent SIGCONT and SIGTERM at once and ended only after its grace time (its QoS's if set, else
  // its partition's); without one it ends at once (docs/scheduling.md "Preemption").
  std::map<std::string, Duration> partition_grace_s;
  std::map<std::string, Duration> qos_grace_s;
  // KillWait: seconds between the SIGTERM and the SIGKILL that end a job (cancel, time limit,
  // preemption); -1 = not given (the controller's default, 30 s as Slurm's).
  int32_t kill_wait_s = -1;
  // MinJobAge: seconds a finished job stays in the live view (squeue, dependencies) before the
  // controller forgets it (it stays in sacct); 0 = never forgotten, as in Slurm; -1 = not given
  // (the controller's default, 300 s as Slurm's).
  int64_t min_job_age_s = -1;
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

// The configured node this host is, as slurmd finds its NodeName: the one node whose
// NodeHostname is `hostname` (or its short form; a node without NodeHostname is its own name),
// else the one whose NodeAddr is the host name or one of `addresses`. "" when none is, or when
// several share the value.
std::string NodeNameOfHost(const ClusterConfig& config, const std::string& hostname,
                           const std::vector<std::string>& addresses);

}  // namespace berth::config

#endif  // BERTH_CONFIG_CLUSTER_CONFIG_H_
