// The pieces of the cluster configuration parser, one file per record family:
//   cluster_config.cc      lines, tokens, top-level keys, whole-file checks, ReadClusterConfig
//   cluster_nodes.cc       NodeName= records
//   cluster_partitions.cc  PartitionName= records
//   cluster_accounts.cc    QOS=, Account=, User= records (what sacctmgr keeps in Slurm)
//   cluster_scheduler.cc   scheduler, priority and preemption keys
//   slurm_conf_keys.cc     every other slurm.conf key (accepted, recorded as ignored)
// Not for use outside src/config.
#ifndef BERTH_CONFIG_CLUSTER_CONFIG_INTERNAL_H_
#define BERTH_CONFIG_CLUSTER_CONFIG_INTERNAL_H_

#include <cstddef>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "common/status.h"
#include "common/strings.h"
#include "config/cluster_config.h"
#include "config/value_text.h"
#include "core/model/partition.h"

namespace berth::config::internal {

// One Key=Value pair of a line: the key as written, the value without its quotes.
using Pair = std::pair<std::string, std::string>;
using Pairs = std::vector<Pair>;

// Splits a line (comments and escapes already removed) into pairs, as Slurm's parse_config.c:
// keys are letters, digits, '_' and '.'; blanks may surround '='; a value is a run of non-blank
// characters or a double-quoted string (which may hold blanks). Errors quote the bad text.
Result<Pairs> Tokenize(std::string_view line);

// Adds `key` (or each of `keys`) to config.ignored_keys unless it is there already.
void NoteIgnored(ClusterConfig& config, std::string key);
void NoteIgnored(ClusterConfig& config, const std::vector<std::string>& keys);

// The record handlers. `pairs[0]` is the record's own key (NodeName=..., QOS=...). Each checks
// everything before changing `config`, so that a bad line changes nothing. Errors start with the
// record ("NodeName=gpu[1-4]: invalid CPUs value 'x': ...").
Status ApplyNodeRecord(const Pairs& pairs, ClusterConfig& config);
Status ApplyPartitionRecord(const Pairs& pairs, ClusterConfig& config);
Status ApplyQosRecord(const Pairs& pairs, ClusterConfig& config);
Status ApplyAccountRecord(const Pairs& pairs, ClusterConfig& config);
Status ApplyUserRecord(const Pairs& pairs, ClusterConfig& config);

// Whether `key` (any case) is a scheduler, priority or preemption key, and applying one to
// config.scheduler. REQUIRES: IsSchedulerKey(key) for ApplySchedulerKey.
bool IsSchedulerKey(std::string_view key);
Status ApplySchedulerKey(std::string_view key, std::string_view value, ClusterConfig& config);

// Slurm's PreemptMode values: OFF, CANCEL or REQUEUE, optionally with GANG, WITHIN or PRIORITY
// (comma-separated). Those flags are appended to `ignored` as "<context>=GANG" (context e.g.
// "PartitionName:PreemptMode"). SUSPEND is refused: berth does not suspend jobs.
Result<core::PreemptMode> ParsePreemptMode(std::string_view value, std::string_view context,
                                           std::vector<std::string>& ignored);

// Whether `key` (any case) is one of the power-saving keys (ResumeProgram, SuspendTime, ...), and
// applying one to config.power. REQUIRES: IsPowerKey(key) for ApplyPowerKey.
bool IsPowerKey(std::string_view key);
Status ApplyPowerKey(std::string_view key, std::string_view value, ClusterConfig& config);

// The canonical spelling of a slurm.conf top-level key that berth accepts without acting on it
// ("slurmctldhost" -> "SlurmctldHost"); nullptr when `key` is not one.
const char* FindIgnoredSlurmKey(std::string_view key);

// Stores the value of `r` in `out` (converted), or returns its error: for one-line cases.
template <typename T, typename U>
Status AssignTo(T& out, Result<U> r) {
  if (!r.ok()) return r.status();
  out = static_cast<T>(std::move(r).value());
  return Status::Ok();
}

// A key table entry for record parsing: canonical name and an id (an enum of the record file).
template <typename Id>
struct KeyName {
  const char* name;
  Id id;
};

// Finds `key` (any case) in `table`; nullptr when absent.
template <typename Id, size_t N>
const KeyName<Id>* FindKey(const KeyName<Id> (&table)[N], std::string_view key) {
  for (const KeyName<Id>& k : table) {
    if (EqualsIgnoreCase(k.name, key)) return &k;
  }
  return nullptr;
}

}  // namespace berth::config::internal

#endif  // BERTH_CONFIG_CLUSTER_CONFIG_INTERNAL_H_
