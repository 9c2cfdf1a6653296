// The static description of a cluster: nodes, partitions, QoS, accounts and users, licences.
// The controller reads it from its configuration file (or a slurm.conf); the simulator builds it
// from flags or a cluster file. ClusterState::Create validates it.
#ifndef BERTH_CORE_MODEL_CLUSTER_SPEC_H_
#define BERTH_CORE_MODEL_CLUSTER_SPEC_H_

#include <cstdint>
#include <string>
#include <vector>

#include "core/model/account.h"
#include "core/model/node.h"
#include "core/model/partition.h"
#include "core/model/resources.h"

namespace berth::core {

inline constexpr const char* kDefaultQos = "normal";

struct ClusterSpec {
  std::string name = "berth";
  std::vector<NodeSpec> nodes;
  std::vector<PartitionSpec> partitions;  // none: one default partition "main" over all nodes
  std::vector<QosSpec> qos;               // "normal" (priority 0) is added when missing
  std::vector<AccountSpec> accounts;      // "root" is implicit
  std::vector<UserSpec> users;
  std::vector<NamedCount> licenses;  // cluster-wide licence pools
  // Memory given to a job that asks for none, per allocated CPU. 0 = the node's memory divided
  // evenly among its CPUs (so a job that asks for nothing gets its CPUs' fair share).
  int64_t def_mem_per_cpu_mib = 0;
  // When false, unknown users and accounts are added on first submit (under "root"), as a
  // single-user or trusting cluster wants; when true they are refused (AccountingStorageEnforce).
  bool enforce_associations = false;
  int32_t max_array_size = 1001;  // Slurm's MaxArraySize
  // A QoS name the cluster does not know runs under "normal" instead of being refused: Slurm
  // without an accounting database stores no QoS and accepts any name (--slurm-conf sets it).
  bool accept_unknown_qos = false;

  friend bool operator==(const ClusterSpec&, const ClusterSpec&) = default;
};

}  // namespace berth::core

#endif  // BERTH_CORE_MODEL_CLUSTER_SPEC_H_
