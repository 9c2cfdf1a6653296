// Why a job is pending: Slurm's reason names (what squeue shows in NODELIST(REASON)).
#ifndef BERTH_CORE_MODEL_REASON_H_
#define BERTH_CORE_MODEL_REASON_H_

#include <cstdint>
#include <string_view>

namespace berth::core {

enum class PendingReason : uint8_t {
  kNone,
  kPriority,                  // a higher-priority job is ahead of it for these resources
  kResources,                 // not enough free resources now
  kDependency,                // waiting for a dependency
  kDependencyNeverSatisfied,  // a dependency can no longer be met
  kBeginTime,                 // --begin is in the future
  kJobHeldUser,
  kJobHeldAdmin,
  kPartitionDown,
  kPartitionInactive,
  kPartitionTimeLimit,  // the time limit exceeds the partition's MaxTime
  kPartitionNodeLimit,  // the node count is outside the partition's limits
  kPartitionConfig,     // the request can never be met by the partition's nodes
  kReqNodeNotAvail,     // a required node (or every usable node) is down, drained or reserved
  kBadConstraints,      // no configured node could ever hold the job (features, size)
  kLicenses,
  kJobArrayTaskLimit,  // the %N throttle is reached
  kQosMaxGresPerUser,
  kQosMaxCpuPerUserLimit,
  kQosMaxNodePerUserLimit,
  kQosMaxJobsPerUserLimit,
  kQosMaxGresPerAccount,
  kQosMaxCpuPerAccountLimit,
  kQosMaxJobsPerAccountLimit,
  kQosMaxGresPerJob,
  kQosMaxCpuPerJobLimit,
  kQosMaxWallDurationPerJobLimit,
  kAssocGrpGres,
  kAssocGrpCpuLimit,
  kAssocGrpNodeLimit,
  kAssocGrpJobsLimit,
  kAssocMaxJobsLimit,
  kAssocMaxGresPerJob,
  kAssocMaxCpuPerJobLimit,
  kPowerUp,  // waiting for powered-down nodes to start (autoscaling)
  kInvalidAccount,
  kInvalidQos,
  kAccountNotAllowed,     // the partition does not allow the job's account
  kQosNotAllowed,         // the partition does not allow the job's QoS
  kDeadline,              // cannot finish before its --deadline
  kReservation,           // its --reservation has not begun (or no longer exists)
  kReqNodeNotAvailMaint,  // it fits but for nodes in a MAINT reservation during its window
};
inline constexpr int kNumPendingReasons = 42;

// Slurm's name: "Priority", "QOSMaxGRESPerUser", "AssocGrpGRES", ...
std::string_view PendingReasonName(PendingReason r);

}  // namespace berth::core

#endif  // BERTH_CORE_MODEL_REASON_H_
