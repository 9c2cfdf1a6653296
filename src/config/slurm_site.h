// A Slurm site's own configuration as berth's cluster description (`berth up --slurm-conf FILE`,
// `berth controller --slurm-conf FILE`): the slurm.conf itself (read as berth reads its own
// files, which share slurm.conf's format), the gres.conf beside it for the nodes' typed GPUs,
// and how the site keeps accounting (what Slurm's commands then show: QOS=(null) without it,
// GPUs in TRES= only when AccountingStorageTRES names gres/gpu).
//
// gres.conf lines (Slurm's gres.conf(5)): [NodeName=LIST] Name=NAME [Type=TYPE]
// [File=DEVICES | Count=N] [Cores=..] [Links=..] [Flags=..], and AutoDetect=. A line without
// NodeName applies to every node. For Name=gpu the line's devices (File= expanded as a hostlist,
// else Count=) give the listed nodes that many GPUs of the type; where slurm.conf's Gres= already
// types a node's GPUs, slurm.conf wins. Other names add to the node's generic resources when
// slurm.conf gave it none of that name. Cores, Links, Flags, MultipleFiles and AutoDetect (other
// than "off") are recorded as ignored ("gres.conf:Cores").
//
// Thread safety: the functions are pure except ReadSlurmSiteConfig, which reads files.
#ifndef BERTH_CONFIG_SLURM_SITE_H_
#define BERTH_CONFIG_SLURM_SITE_H_

#include <string>
#include <string_view>

#include "common/status.h"
#include "config/cluster_config.h"

namespace berth::config {

// Applies a gres.conf's text to the nodes of `config`. Errors name the file and line
// ("gres.conf:3: ..."): a bad token, an unknown node, a bad File= or Count=.
Status ApplyGresConf(std::string_view text, std::string_view name, ClusterConfig& config);

// Sets config.slurm_accounting from slurm.conf's text: AccountingStorageType (Slurm's default,
// and "accounting_storage/none", mean no accounting) and AccountingStorageTRES.
void ReadSlurmAccounting(std::string_view slurm_conf_text, ClusterConfig& config);

// Reads `path` (a slurm.conf) and, when it exists, the gres.conf in the same folder. Messages
// start with the file's path.
Result<ClusterConfig> ReadSlurmSiteConfig(const std::string& path);

}  // namespace berth::config

#endif  // BERTH_CONFIG_SLURM_SITE_H_
